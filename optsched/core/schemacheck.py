"""A fast yes/no check of a document against one of optsched's JSON Schemas.

``jsonschema`` walks a document through generic keyword functions: about 180 us per job of a
rigid instance (71 s for a 59 MB file of 400,000 jobs). :func:`compile_schema` turns a schema
into nested Python closures, one per schema node, with the keywords the shipped schemas use
(``type``, ``minimum``/``maximum`` and their exclusive forms, ``const``/``enum`` of scalars,
``required``, ``properties``, ``additionalProperties``, ``minProperties``/``maxProperties``,
``items``, ``minItems``/``maxItems``, ``oneOf``/``anyOf``/``allOf``, local ``$ref``): a few
microseconds per job. It answers only "valid or not", with jsonschema's own semantics (its type
checker for anything but the plain JSON types, ``x < minimum`` as jsonschema compares, so NaN
passes a bound there as well); the message for an invalid document still comes from jsonschema
(:func:`optsched.core.io.validate_against_schema` runs it on the offending items only).

A schema with any other keyword is not compiled (``None``): jsonschema then checks it all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]

#: Keywords that do not constrain the instance.
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$comment", "$defs", "definitions", "title", "description", "default", "examples"}
)
_KNOWN = _ANNOTATIONS | {
    "type",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "const",
    "enum",
    "required",
    "properties",
    "additionalProperties",
    "minProperties",
    "maxProperties",
    "items",
    "minItems",
    "maxItems",
    "oneOf",
    "anyOf",
    "allOf",
    "$ref",
}
_SCALARS = (str, int, float, bool, type(None))
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
_SCALAR_KEYS = frozenset({"type", *_BOUNDS})
_OBJECT_KEYS = frozenset({"required", "properties", "additionalProperties", "minProperties", "maxProperties"})
_ARRAY_KEYS = frozenset({"items", "minItems", "maxItems"})
#: The JSON type each plain Python type is (``int`` is also a number; a float with an integral
#: value is also an integer, as jsonschema's draft 6+ type checker says).
_PLAIN = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}


class _Unsupported(Exception):
    """A keyword or a ``$ref`` this compiler does not handle."""


def compile_schema(schema: Mapping[str, Any], validator_cls: Any) -> Check | None:
    """A function ``check(doc) -> bool`` equivalent to ``validator_cls(schema).is_valid(doc)``,
    or ``None`` when the schema uses a keyword this module does not compile.

    ``validator_cls``: the jsonschema validator class of the schema (its type checker decides
    the types of values other than plain ``dict``, ``list``, ``str``, ``int``, ``float``,
    ``bool`` and ``None``, e.g. NumPy numbers).

    >>> from jsonschema import Draft202012Validator as V
    >>> check = compile_schema({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}, V)
    >>> check({"n": 2}), check({"n": 0}), check({"n": 2.0}), check({"n": True})
    (True, False, True, False)
    """
    try:
        return _Compiler(schema, validator_cls).node(schema)
    except _Unsupported:
        return None


def items_checker(schema: Mapping[str, Any], validator_cls: Any, key: str) -> Check | None:
    """The check of one item of the top-level array property ``key`` of ``schema`` (``None``
    when that property is not a plain ``{"type": "array", "items": ...}`` or does not compile)."""
    try:
        comp = _Compiler(schema, validator_cls)
        prop = comp.resolve(schema.get("properties", {}).get(key))
        if not isinstance(prop, Mapping) or "items" not in prop or set(prop) - _ANNOTATIONS - {"type", "items"}:
            return None
        return comp.node(prop["items"])
    except _Unsupported:
        return None


class _Compiler:
    def __init__(self, root: Mapping[str, Any], validator_cls: Any) -> None:
        self.root = root
        self.types = validator_cls.TYPE_CHECKER
        self.cls = validator_cls
        self.refs: dict[str, list[Check]] = {}  # "$ref" -> a cell holding its compiled check (recursion-safe)

    def resolve(self, s: Any) -> Any:
        while isinstance(s, Mapping) and set(s) - _ANNOTATIONS == {"$ref"}:
            s = self._target(s["$ref"])
        return s

    def _target(self, ref: Any) -> Any:
        if not isinstance(ref, str) or not ref.startswith("#/"):
            raise _Unsupported(ref)
        node: Any = self.root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or part not in node:
                raise _Unsupported(ref)
            node = node[part]
        return node

    def is_type(self, x: Any, t: str) -> bool:
        plain = _PLAIN.get(type(x))
        if plain is not None:
            return plain == t
        if type(x) is int:
            return t in ("integer", "number")
        if type(x) is float:
            return t == "number" or (t == "integer" and x.is_integer())
        return bool(self.types.is_type(x, t))

    def is_number(self, x: Any) -> bool:
        tx = type(x)
        if tx is int or tx is float:
            return True
        if tx in _PLAIN:
            return False
        return bool(self.types.is_type(x, "number"))

    def node(self, s: Any) -> Check:
        if s is True:
            return _true
        if s is False:
            return _false
        if not isinstance(s, Mapping):
            raise _Unsupported(s)
        keys = set(s) - _ANNOTATIONS
        if keys - _KNOWN:
            raise _Unsupported(keys - _KNOWN)
        if keys <= _SCALAR_KEYS and keys:  # the common leaf: a type and bounds, one closure
            return self._scalar(s)
        checks: list[Check] = []
        obj = keys & _OBJECT_KEYS
        arr = keys & _ARRAY_KEYS
        typed = "type" in s and not ((obj and s["type"] == "object") or (arr and s["type"] == "array"))
        if "$ref" in s:
            checks.append(self._ref(s["$ref"]))
        if typed:
            checks.append(self._type(s["type"]))
        num = {k: s[k] for k in _BOUNDS if k in s}
        if num:
            checks.append(self._numeric(num))
        if "const" in s:
            checks.append(self._enum([s["const"]], {"const": s["const"]}))
        if "enum" in s:
            checks.append(self._enum(list(s["enum"]), {"enum": s["enum"]}))
        if obj:
            checks.append(self._object(s, typed=s.get("type") == "object"))
        if arr:
            checks.append(self._array(s, typed=s.get("type") == "array"))
        for key in ("oneOf", "anyOf", "allOf"):
            if key in s:
                checks.append(self._combine(key, [self.node(x) for x in s[key]]))
        if not checks:
            return _true
        if len(checks) == 1:
            return checks[0]
        if len(checks) == 2:
            a, b = checks
            return lambda x: a(x) and b(x)
        return lambda x: all(c(x) for c in checks)

    def _scalar(self, s: Mapping[str, Any]) -> Check:
        """``type`` (any JSON types) with ``minimum``/``maximum`` bounds in one closure: plain
        Python values decided inline, anything else by the generic checks."""
        names = None if "type" not in s else {s["type"]} if isinstance(s["type"], str) else set(s["type"])
        num = {k: s[k] for k in _BOUNDS if k in s}
        generic = [self._type(s["type"])] if names is not None else []
        if num:
            generic.append(self._numeric(num))
        lo, hi = num.get("minimum"), num.get("maximum")
        xlo, xhi = num.get("exclusiveMinimum"), num.get("exclusiveMaximum")
        any_type = names is None
        number = any_type or "number" in names  # type: ignore[operator]
        integer = number or "integer" in names  # type: ignore[operator]
        plain = {t: any_type or n in names for t, n in _PLAIN.items()}  # type: ignore[operator]

        def check(x: Any) -> bool:
            tx = type(x)
            if tx is int or tx is float:
                if not (number or (integer and (tx is int or x.is_integer()))):
                    return False
                # as jsonschema compares (a NaN passes every bound here too)
                return not (
                    (lo is not None and x < lo)
                    or (hi is not None and x > hi)
                    or (xlo is not None and x <= xlo)
                    or (xhi is not None and x >= xhi)
                )
            ok = plain.get(tx)
            if ok is not None:
                return ok
            return all(c(x) for c in generic)

        return check

    def _ref(self, ref: Any) -> Check:
        cell = self.refs.get(ref)
        if cell is None:
            cell = self.refs[ref] = []
            cell.append(self.node(self._target(ref)))
            return cell[0]
        if cell:
            return cell[0]
        return lambda x: cell[0](x)  # a reference to itself, while it is compiled

    def _type(self, t: Any) -> Check:
        names = [t] if isinstance(t, str) else list(t)
        if not all(isinstance(n, str) for n in names):
            raise _Unsupported(t)
        is_type = self.is_type
        if names == ["number"]:
            return self.is_number
        if len(names) == 1:
            (n,) = names
            return lambda x: is_type(x, n)
        return lambda x: any(is_type(x, n) for n in names)

    def _numeric(self, num: dict[str, Any]) -> Check:
        for v in num.values():
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise _Unsupported(num)
        lo, hi = num.get("minimum"), num.get("maximum")
        xlo, xhi = num.get("exclusiveMinimum"), num.get("exclusiveMaximum")
        is_number = self.is_number

        def check(x: Any) -> bool:
            if not is_number(x):
                return True  # numeric keywords apply to numbers only
            # as jsonschema compares (a NaN passes every bound here too)
            if lo is not None and x < lo:
                return False
            if hi is not None and x > hi:
                return False
            if xlo is not None and x <= xlo:
                return False
            return not (xhi is not None and x >= xhi)

        return check

    def _enum(self, values: list[Any], keyword: dict[str, Any]) -> Check:
        if not all(isinstance(v, _SCALARS) for v in values):
            raise _Unsupported(values)
        slow = self.cls(keyword)  # jsonschema's own equality for anything but plain scalars

        def check(x: Any) -> bool:
            if type(x) not in _SCALARS:
                return bool(slow.is_valid(x))
            return any(_equal(x, v) for v in values)

        return check

    def _object(self, s: Mapping[str, Any], typed: bool = False) -> Check:
        required = list(s.get("required", ()))
        props = {k: self.node(v) for k, v in s.get("properties", {}).items()}
        addl_s = s.get("additionalProperties", True)
        addl: Check | None = None if addl_s is True else self.node(addl_s)
        closed = addl_s is False
        lo, hi = s.get("minProperties"), s.get("maxProperties")

        def check(x: Any) -> bool:
            if not isinstance(x, dict):
                return not typed  # object keywords apply to objects only
            for k in required:
                if k not in x:
                    return False
            if (lo is not None and len(x) < lo) or (hi is not None and len(x) > hi):
                return False
            for k, v in x.items():
                c = props.get(k)
                if c is not None:
                    if not c(v):
                        return False
                elif closed or (addl is not None and not addl(v)):
                    return False
            return True

        return check

    def _array(self, s: Mapping[str, Any], typed: bool = False) -> Check:
        item = self.node(s["items"]) if "items" in s else None
        lo, hi = s.get("minItems"), s.get("maxItems")

        def check(x: Any) -> bool:
            if not isinstance(x, list):
                return not typed  # array keywords apply to arrays only
            if (lo is not None and len(x) < lo) or (hi is not None and len(x) > hi):
                return False
            return item is None or all(map(item, x))

        return check

    @staticmethod
    def _combine(key: str, checks: list[Check]) -> Check:
        if key == "allOf":
            return lambda x: all(c(x) for c in checks)
        if key == "anyOf":
            return lambda x: any(c(x) for c in checks)
        return lambda x: sum(1 for c in checks if c(x)) == 1


def _equal(x: Any, v: Any) -> bool:
    """jsonschema's equality of two plain scalars: a string equals only a string, a bool only a
    bool, and 1 equals 1.0."""
    if isinstance(x, str) or isinstance(v, str):
        return x == v
    if type(x) is bool or type(v) is bool:
        return type(x) is bool and type(v) is bool and x == v
    return x == v


def _true(x: Any) -> bool:
    return True


def _false(x: Any) -> bool:
    return False
