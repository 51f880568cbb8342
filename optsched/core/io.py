"""Load and save instances as JSON, validated at the boundary against the JSON Schemas in
``optsched/core/schemas/<kind>.schema.json`` (package data)."""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from optsched.core.limits import LIMITS_DOC
from optsched.core.paths import check_path_arg
from optsched.core.registry import get_kind
from optsched.core.schemacheck import compile_schema, items_checker
from optsched.exceptions import InvalidInstanceError, OptschedError, write_error

#: Fields of an instance's dict left out of its content hash: they name or describe it and do
#: not change which schedules are feasible or what they cost.
UNHASHED_FIELDS = ("name", "metadata", "known_optima")

SCHEMA_DIR = Path(__file__).parent / "schemas"
#: How messages cite the schemas: the path inside the repository and inside the installed package.
SCHEMA_REF = "optsched/core/schemas"


def schema_path(name: str) -> Path:
    return SCHEMA_DIR / name


@cache
def _validator(name: str):
    import jsonschema

    with open(schema_path(name), encoding="utf-8") as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


@cache
def _fast_check(name: str):
    """The compiled yes/no check of schema ``name`` (:mod:`optsched.core.schemacheck`), or None."""

    v = _validator(name)
    return compile_schema(v.schema, type(v))


#: Top-level arrays longer than this are cut to their invalid items (at most
#: :data:`MAX_REPORTED_ITEMS`) before jsonschema words the message of an invalid document.
LONG_ARRAY = 64
MAX_REPORTED_ITEMS = 20


def _owner(doc: Any, path: list[Any]) -> str:
    """Words for the object that holds the failing field, e.g. ``job 7 (jobs[3])``, ``the instance``
    or a path such as ``cluster.servers[1]``."""
    if not path:
        return "the instance"
    node = doc
    words: list[str] = []
    for p in path:
        words.append(f"[{p}]" if isinstance(p, int) else (("." if words else "") + str(p)))
        try:
            node = node[p]
        except (KeyError, IndexError, TypeError):
            break
    where = "".join(words)
    if isinstance(node, Mapping) and "id" in node and len(path) >= 2 and isinstance(path[-1], int):
        return f"{path[-2].rstrip('s')} {node['id']!r} ({where})"
    return f"the {where}" if where.isidentifier() else where


def _subject(owner: str) -> str:
    """``owner`` at the start of a sentence: "Job 7 (jobs[3])", "The instance", "The value at x[1]"."""
    if owner.startswith("the ") or " (" in owner:
        return owner[0].upper() + owner[1:]
    return f"The value at {owner}"


def _schema_message(doc: Any, err: Any, schema_name: str, path: list[Any] | None = None) -> str:
    path = list(err.absolute_path) if path is None else path
    v = err.validator
    fix = f"See {SCHEMA_REF}/{schema_name} for the expected format."
    if v == "required":
        missing = err.message.split("'")[1] if "'" in err.message else err.message
        return f"{_subject(_owner(doc, path))} has no '{missing}' field; add it. {fix}"
    if v == "additionalProperties":
        return f"{_subject(_owner(doc, path))} has an unknown field: {err.message}. Remove or rename it. {fix}"
    field = path[-1] if path and isinstance(path[-1], str) else None
    owner = _owner(doc, path[:-1]) if field else _owner(doc, path)
    what = f"The '{field}' field of {owner}" if field else _subject(owner)
    expectation = {
        "type": f"must be of type {err.validator_value}",
        "minimum": f"must be >= {err.validator_value}",
        "exclusiveMinimum": f"must be > {err.validator_value}",
        "maximum": f"must be <= {err.validator_value!r} (the largest value optsched accepts: {LIMITS_DOC})",
        "maxItems": f"must have at most {err.validator_value!r} item(s) ({LIMITS_DOC})",
        "minItems": f"must have at least {err.validator_value} item(s)",
        "const": f"must be {err.validator_value!r}",
        "enum": f"must be one of {err.validator_value}",
    }.get(v, f"is invalid ({err.message})")
    return f"{what} {expectation}; got {err.instance!r}. {fix}"


def validate_against_schema(doc: Any, schema_name: str) -> None:
    """Raise :class:`InvalidInstanceError` for the most relevant schema violation of ``doc``.

    A valid document is checked by the compiled schema alone (:mod:`optsched.core.schemacheck`:
    about 2 us per job instead of jsonschema's 180); an invalid one by jsonschema, which words
    the message, with each long top-level array (``jobs``) cut to its first invalid items."""
    import jsonschema

    fast = _fast_check(schema_name)
    if fast is not None and fast(doc):
        return
    validator = _validator(schema_name)
    sub, kept = _offending_part(doc, schema_name) if fast is not None else (doc, {})
    err = jsonschema.exceptions.best_match(validator.iter_errors(sub))
    if err is None and sub is not doc:  # what the cut left out hides the error: the whole document
        sub, kept = doc, {}
        err = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if err is not None:
        path = list(err.absolute_path)
        if len(path) >= 2 and path[0] in kept and isinstance(path[1], int):
            path[1] = kept[path[0]][path[1]]  # the item's index in the whole array
        raise InvalidInstanceError(_schema_message(doc, err, schema_name, path))


def _offending_part(doc: Any, schema_name: str) -> tuple[Any, dict[str, list[int]]]:
    """``doc`` with each top-level array longer than :data:`LONG_ARRAY` cut to its first invalid
    items (or, when none is invalid, to as many valid ones as the schema's ``minItems`` asks),
    and ``{key: original indices of the items kept}``."""

    if not isinstance(doc, dict):
        return doc, {}
    v = _validator(schema_name)
    sub: dict[str, Any] = dict(doc)
    kept: dict[str, list[int]] = {}
    for key, value in doc.items():
        if not isinstance(value, list) or len(value) <= LONG_ARRAY:
            continue
        item_ok = items_checker(v.schema, type(v), key)
        if item_ok is None:
            continue
        bad = [i for i, x in enumerate(value) if not item_ok(x)][:MAX_REPORTED_ITEMS]
        prop = v.schema.get("properties", {}).get(key, {})
        idx = bad or list(range(min(len(value), max(1, int(prop.get("minItems", 0) or 0)))))
        sub[key] = [value[i] for i in idx]
        kept[key] = idx
    return sub, kept


def read_json(path: str | Path, *, what: str = "instance") -> Any:
    check_path_arg(path, what=what, func="read_json")
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark is skipped, as for CSV files
    except FileNotFoundError:
        raise InvalidInstanceError(f"The {what} file {str(path)!r} does not exist; check the path.") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as e:
        raise InvalidInstanceError(f"The {what} file {str(path)!r} cannot be read as UTF-8 text: {e}.") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InvalidInstanceError(
            f"The {what} file {str(path)!r} is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}."
        ) from None
    except RecursionError:
        raise InvalidInstanceError(
            f"The {what} file {str(path)!r} nests lists or objects too deeply to be read (an {what} needs a "
            f"few levels); check that it is the right file."
        ) from None


def instance_from_dict(doc: Any) -> Any:
    """Build an instance of the registered kind named by ``doc["kind"]`` (default ``"rigid"``).

    Examples
    --------
    >>> from optsched.core import instance_from_dict
    >>> doc = {"kind": "rigid", "cluster": {"servers": [{"gpus": 2}]}, "jobs": [{"id": 0, "work": 3, "gpus": 2}]}
    >>> instance_from_dict(doc).n_jobs
    1
    """
    if not isinstance(doc, Mapping):
        raise InvalidInstanceError(f"An instance must be a JSON object; got {type(doc).__name__}.")
    kind = doc.get("kind", "rigid")
    if not isinstance(kind, str):
        raise InvalidInstanceError(f"The 'kind' field of the instance must be a string; got {kind!r}.")
    try:
        spec = get_kind(kind)
    except KeyError as e:
        raise InvalidInstanceError(str(e)) from None
    if spec["schema"]:
        validate_against_schema(doc, spec["schema"])
    return spec["cls"].from_dict(doc)


def load_instance(path: str | Path) -> Any:
    """Read an instance JSON file, validate it against its schema, return the instance object.

    Raises
    ------
    InvalidInstanceError
        Missing file, malformed JSON, schema violation or inconsistent data; the message names
        the field, the value and the fix; also a ``path`` that is not a path (None, a number).

    Examples
    --------
    >>> import optsched
    >>> from optsched.core import load_instance
    >>> load_instance(optsched.toy_path("rigid-2x2-five")).n_jobs
    5
    """
    check_path_arg(path)
    with paused_gc():  # a large file is millions of dicts, lists and jobs, none of them garbage
        return instance_from_dict(read_json(path))


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Python's cyclic garbage collector paused while the block builds many objects that stay
    (an instance's jobs, a schedule's segments, their JSON): each collection otherwise walks
    every object built so far, a third of the CPU time of reading and writing 500,000 jobs.
    Garbage without cycles is freed at once all the same; the collector is restored as it was
    (nested blocks keep it paused to the outermost one's end).

    >>> import gc
    >>> with paused_gc():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: Functions called with each path just before :func:`atomic_write` writes it (the result folders
#: of :mod:`optsched.core.output` record there which files a run wrote).
WRITE_HOOKS: list[Any] = []


def atomic_write(path: str | Path, write) -> Path:
    """Call ``write(tmp_path)`` then rename the file to ``path``: never half written.

    The file gets the user's normal permissions (``0o666 & ~umask``), not the 0600 of a
    temporary file. A full disk, a missing permission or memory running out while writing
    raises :class:`~optsched.exceptions.WriteError` naming the file, the cause and the fix; the
    temporary file is removed and an earlier file at ``path`` stays as it was.
    """

    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for hook in WRITE_HOOKS:
            hook(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise write_error(path, e) from None
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, (OSError, MemoryError)) and not isinstance(e, OptschedError):
            raise write_error(path, e) from None
        raise
    return path


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file and rename: never half written."""

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)

    atomic_write(path, write)


def save_instance(instance: Any, path: str | Path) -> None:
    """Write ``instance`` as JSON to ``path`` (``instance.to_dict()``, replaced atomically), readable
    by :func:`load_instance`.

    Examples
    --------
    >>> import os, tempfile
    >>> import optsched
    >>> from optsched.core import load_instance, save_instance
    >>> inst = optsched.load_instance("toy:rigid-2x2-five")
    >>> path = os.path.join(tempfile.mkdtemp(), "copy.json")
    >>> save_instance(inst, path)
    >>> load_instance(path).n_jobs
    5
    """
    atomic_write_text(path, json.dumps(instance.to_dict(), indent=2) + "\n")


def instance_fingerprint(instance: Any) -> dict[str, Any]:
    """``{"name", "kind", "sha256"}`` of an instance: the hash covers its content (cluster, jobs,
    parameters; not :data:`UNHASHED_FIELDS`) as canonical JSON, so a renamed copy has the same hash
    and any change to the data a new one. ``sha256`` is None for an instance without a JSON form.

    >>> import optsched
    >>> fp = instance_fingerprint(optsched.load_instance("toy:rigid-2x2-five"))
    >>> fp["name"], fp["kind"], len(fp["sha256"])
    ('rigid-2x2-five', 'rigid', 64)
    """

    try:
        d = {k: v for k, v in instance.to_dict().items() if k not in UNHASHED_FIELDS}
        text = json.dumps(d, sort_keys=True, separators=(",", ":"), default=str)
        digest: str | None = hashlib.sha256(text.encode("utf-8")).hexdigest()
    except Exception:  # an instance that cannot be written as JSON (e.g. a custom function in it)
        digest = None
    return {"name": getattr(instance, "name", None), "kind": getattr(instance, "kind", None), "sha256": digest}


def save_schedule(schedule: Any, path: str | Path, instance: Any = None, *, text: str | None = None) -> Path:
    """Write ``schedule`` as JSON (atomically); with ``instance``, the file also records the
    instance's name and content hash under ``"instance"`` (:func:`instance_fingerprint`), so
    ``optsched verify`` can tell when a schedule is checked against another instance. ``text``:
    ``json_one_item_per_line(schedule.to_dict(), "jobs")`` when the caller has it already (the
    schedule is then not encoded again; else ``schedule.json_text()`` gives it when the schedule
    has that method)."""
    if text is None and hasattr(schedule, "json_text"):  # Schedule: its jobs written without a dict each
        text = schedule.json_text()
    if text is not None and instance is not None and text.startswith('{\n  "jobs": ['):  # the head spliced in
        head = f"  {json.dumps('instance')}: {json.dumps(instance_fingerprint(instance), default=str)},\n"
        text = "{\n" + head + text[2:]
    elif text is None or instance is not None:
        d = schedule.to_dict()
        if instance is not None:
            d = {"instance": instance_fingerprint(instance), **d}
        text = json_one_item_per_line(d, "jobs")
    atomic_write_text(path, text)
    return Path(path)


def json_one_item_per_line(d: Mapping[str, Any], key: str) -> str:
    """``d`` as indented JSON with each item of the list ``d[key]`` on one line: as readable as
    ``indent=2`` for a schedule, and written by the C encoder (``indent`` makes ``json`` use its
    pure-Python one: 30 s for a schedule of 500,000 jobs)."""
    if not isinstance(d.get(key), list):
        return json.dumps(d, indent=2, default=str) + "\n"
    head = [f"  {json.dumps(k)}: {json.dumps(v, default=str)}" for k, v in d.items() if k != key]
    encode = json.JSONEncoder(default=str).encode  # one encoder for every item (json.dumps makes one per call)
    items = ",\n".join(["    " + encode(x) for x in d[key]])
    body = f"  {json.dumps(key)}: [\n{items}\n  ]" if d[key] else f"  {json.dumps(key)}: []"
    return "{\n" + ",\n".join([*head, body]) + "\n}\n"


def schedule_origin(path: str | Path) -> dict[str, Any] | None:
    """The ``"instance"`` record of a schedule file written by :func:`save_schedule` (None if it
    has none, e.g. a schedule written by hand or by an older optsched)."""
    doc = read_json(path, what="schedule")
    origin = doc.get("instance") if isinstance(doc, Mapping) else None
    return dict(origin) if isinstance(origin, Mapping) else None


def origin_mismatch(origin: Mapping[str, Any] | None, instance: Any) -> str | None:
    """A sentence saying how the instance a schedule was written for differs from ``instance``,
    or None when they agree (or the schedule records nothing to compare).

    >>> import optsched
    >>> a = optsched.load_instance("toy:rigid-2x2-five")
    >>> origin_mismatch(instance_fingerprint(a), a) is None
    True
    >>> origin_mismatch({"name": "other", "kind": "rigid", "sha256": "0" * 64}, a)[:45]
    "The schedule was written for instance 'other'"
    """
    if not origin:
        return None
    fp = instance_fingerprint(instance)
    same_hash = origin.get("sha256") is not None and origin.get("sha256") == fp["sha256"]
    unhashed = origin.get("sha256") is None or fp["sha256"] is None
    if same_hash or (unhashed and origin.get("name") == fp["name"]):
        return None
    h_old = (origin.get("sha256") or "?")[:12]
    h_new = (fp["sha256"] or "?")[:12]
    if origin.get("name") == fp["name"]:
        return (
            f"The schedule was written for instance {fp['name']!r} with other data (content sha256 {h_old}..., "
            f"now {h_new}...): the instance changed since; violations may come from that change."
        )
    return (
        f"The schedule was written for instance {origin.get('name')!r} (kind {origin.get('kind')!r}, content sha256 "
        f"{h_old}...), not for {fp['name']!r} (sha256 {h_new}...): the violations below may only say that the two "
        f"differ. Give the instance the schedule was made for."
    )


class JsonMixin:
    """``to_json`` and ``save`` for any object with ``to_dict()`` (instances and schedules)."""

    def to_json(self, path: str | Path | None = None, *, indent: int = 2) -> str:
        """The object as JSON text; also written to ``path`` when given (atomically)."""
        text = json.dumps(self.to_dict(), indent=indent)  # type: ignore[attr-defined]
        if path is not None:
            atomic_write_text(path, text + "\n")
        return text

    def save(self, path: str | Path) -> None:
        self.to_json(path)


def require_fields(
    d: Any,
    required: tuple[str, ...],
    *,
    what: str = "instance",
    hint: str = f"see {SCHEMA_REF}/",
    lists: tuple[str, ...] = ("jobs",),
) -> None:
    """Check that ``d`` is a mapping with the ``required`` keys, and that the ``lists`` keys
    present are lists; raise :class:`InvalidInstanceError` naming the field and the fix."""
    if not isinstance(d, Mapping):
        raise InvalidInstanceError(f"An {what} must be a JSON object; got {type(d).__name__}.")
    for key in required:
        if key not in d:
            raise InvalidInstanceError(f"The {what} has no '{key}' field; add it ({hint}).")
    for key in lists:
        v = d.get(key, [])
        if not isinstance(v, (list, tuple)):
            raise InvalidInstanceError(f"The '{key}' field of the {what} must be a list; got {v!r}.")
