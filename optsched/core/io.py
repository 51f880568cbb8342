"""Load and save instances as JSON, validated at the boundary against the JSON Schemas in
``optsched/core/schemas/<kind>.schema.json`` (package data)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from optsched.core.registry import get_kind
from optsched.exceptions import InvalidInstanceError

__all__ = [
    "load_instance",
    "instance_from_dict",
    "save_instance",
    "validate_against_schema",
    "schema_path",
    "atomic_write_text",
    "read_json",
    "JsonMixin",
    "require_fields",
]

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


def _schema_message(doc: Any, err: Any, schema_name: str) -> str:
    path = list(err.absolute_path)
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
        "maximum": f"must be <= {err.validator_value}",
        "minItems": f"must have at least {err.validator_value} item(s)",
        "const": f"must be {err.validator_value!r}",
        "enum": f"must be one of {err.validator_value}",
    }.get(v, f"is invalid ({err.message})")
    return f"{what} {expectation}; got {err.instance!r}. {fix}"


def validate_against_schema(doc: Any, schema_name: str) -> None:
    """Raise :class:`InvalidInstanceError` for the most relevant schema violation of ``doc``."""
    import jsonschema

    validator = _validator(schema_name)
    err = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if err is not None:
        raise InvalidInstanceError(_schema_message(doc, err, schema_name))


def read_json(path: str | Path, *, what: str = "instance") -> Any:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
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


def instance_from_dict(doc: Any) -> Any:
    """Build an instance of the registered kind named by ``doc["kind"]`` (default ``"rigid"``)."""
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
        the field, the value and the fix.
    """
    return instance_from_dict(read_json(path))


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: str | Path, write) -> Path:
    """Call ``write(tmp_path)`` then rename the file to ``path``: never half written.

    The file gets the user's normal permissions (``0o666 & ~umask``), not the 0600 of a
    temporary file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file and rename: never half written."""

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)

    atomic_write(path, write)


def save_instance(instance: Any, path: str | Path) -> None:
    atomic_write_text(path, json.dumps(instance.to_dict(), indent=2) + "\n")


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
