"""JSON Schema validation of tool-call arguments, compiled once per schema.

Covers the keywords of draft 2020-12 and draft-07 that constrain data, plus OpenAPI 3.0 `nullable`.
`__init__` turns the schema into a graph of `_Node`s whose checks are closures grouped by the JSON
kind of the instance, so validating does no keyword lookups. Hostile input is bounded everywhere:
instance depth, schema recursion, problem count and pattern input length; no `RecursionError` escapes.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import math
import operator
import re
from collections.abc import Callable, Hashable, Mapping
from fractions import Fraction
from typing import Any, NoReturn, cast
from urllib.parse import unquote

from .errors import ArgumentProblem, SchemaError

__all__ = ["SchemaValidator", "describe_received"]

_Path = list[str | int]
_Check = Callable[[Any, _Path, "_Ctx"], None]

NULL, BOOL, INT, FLOAT, STR, OBJ, ARR, OTHER = range(8)
_ALL = tuple(range(8))
_NUMS = (INT, FLOAT)
_EXACT: dict[type, int] = {
    type(None): NULL, bool: BOOL, int: INT, float: FLOAT, str: STR, dict: OBJ, list: ARR, tuple: ARR,
}  # fmt: skip
_SLOW = ((str, STR), (int, INT), (float, FLOAT), (Mapping, OBJ), ((list, tuple), ARR))
_TYPE_KINDS: dict[str, tuple[int, ...]] = {
    "string": (STR,), "integer": (INT,), "number": _NUMS, "boolean": (BOOL,),
    "object": (OBJ,), "array": (ARR,), "null": (NULL,),
}  # fmt: skip
_KIND_NAMES = ("null", "boolean", "integer", "number", "string", "object", "array")
_COMPARE = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}
_MAX_PATTERN_INPUT = 100_000
_MISSING: Any = object()
_TAG = object()  # marks frozen booleans and non-JSON values so they never equal numbers


def _kind(v: Any) -> int:
    k = _EXACT.get(v.__class__)
    if k is not None:
        return k
    for cls, kind in _SLOW:  # subclasses (str enums, OrderedDict...); bool cannot be subclassed
        if isinstance(v, cls):
            return kind
    return OTHER


def _list(v: Any) -> list[Any]:
    return cast(list[Any], v) if isinstance(v, list) else []


def _map(v: Any) -> Mapping[str, Any]:
    return cast(Mapping[str, Any], v) if isinstance(v, Mapping) else {}


def _count(v: Any) -> int | None:
    """A non-negative integer keyword value, or None when the schema gave something else."""
    k = _kind(v)
    return int(v) if (k == INT or (k == FLOAT and v.is_integer())) and v >= 0 else None


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {'properties' if word == 'property' else word + 's'}"


class _Deep(Exception):
    pass


def _freeze(v: Any, depth: int) -> Hashable:
    """A hashable form of `v` under JSON equality: 1 == 1.0, but true != 1 and [] != {}."""
    k = _kind(v)
    if k == BOOL:
        return (_TAG, v)
    if k < OBJ:
        return cast(Hashable, v)
    if depth <= 0:
        raise _Deep
    if k == ARR:
        return tuple([_freeze(x, depth - 1) for x in v])
    if k == OBJ:
        return frozenset([(str(key), _freeze(x, depth - 1)) for key, x in v.items()])
    return (_TAG, _TAG, id(v))  # not JSON: equal only to itself


def _short(v: Any, budget: int) -> str:
    """JSON-like text of `v`, cut near `budget` characters; recursion is bounded by the budget."""
    if budget <= 0:
        return "..."
    k = _kind(v)
    if k <= BOOL:
        return "null" if v is None else "true" if v else "false"
    if k == STR:
        s = cast(str, v)
        return json.dumps(s[:budget], ensure_ascii=False) + ("..." if len(s) > budget else "")
    if k == INT:
        # str() refuses integers above ~4300 digits, and nobody needs to read them.
        text = str(v) if v.bit_length() < 10_000 else "<a very large integer>"
        return text if len(text) <= budget else text[:budget] + "..."
    if k == FLOAT:
        return repr(v)
    if k == OTHER:
        return f"<{type(v).__name__}>"
    pairs = v.items() if k == OBJ else ((None, x) for x in v)
    parts: list[str] = []
    used = 2
    for key, item in pairs:
        if used >= budget:
            parts.append("...")
            break
        head = "" if key is None else json.dumps(str(key)[:budget], ensure_ascii=False) + ": "
        parts.append(head + _short(item, budget - used - len(head)))
        used += len(parts[-1]) + 2
    return ("[{}]" if k == ARR else "{{{}}}").format(", ".join(parts))


def describe_received(v: Any) -> str:
    """What came, for a problem's `received`: `"abc" (string)`, `42 (integer)`, `null`."""
    k = _kind(v)
    if k == NULL:
        return "null"
    text = _short(v, 60)
    name = _KIND_NAMES[k] if k != OTHER else f"Python {type(v).__name__}"
    if k == STR and len(v) > 60:
        name += f" of {len(v)} characters"
    elif k in (ARR, OBJ) and "..." in text:
        name += (
            f" of {_plural(len(v), 'item')}" if k == ARR else f" with {_plural(len(v), 'property')}"
        )
    return f"{text} ({name})"


def _values_text(values: list[Any]) -> str:
    shown = ", ".join(_short(v, 40) for v in values[:12])
    return shown + (f", ... ({len(values)} in all)" if len(values) > 12 else "")


def _regex(pattern: Any) -> re.Pattern[str] | None:
    """Compile an ECMA-262 pattern with `re`, or None when `re` cannot express it."""
    if not isinstance(pattern, str):
        return None
    # ECMA `$` (no m flag) matches only at the very end; Python's also before a final newline.
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        c = step = pattern[i : i + 2] if pattern[i] == "\\" else pattern[i]
        if len(c) == 2:
            pass
        elif in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "$":
            c = r"\Z"
        out.append(c)
        i += len(step)
    try:
        return re.compile("".join(out))
    except (re.error, RecursionError, OverflowError):
        return None


class _Full(Exception):
    """Stops a run: enough problems were found (or, when probing, any problem)."""


class _Abort(Exception):
    def __init__(self, problem: ArgumentProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


class _Ctx:
    """One validation run. A limit of 0 marks a probe: it only asks whether a schema matches."""

    __slots__ = ("found", "limit", "max_depth", "max_nest", "nest")

    def __init__(self, limit: int, max_depth: int, max_nest: int, nest: int = 0) -> None:
        self.found: list[ArgumentProblem] = []
        self.limit, self.max_depth, self.max_nest, self.nest = limit, max_depth, max_nest, nest

    def sub(self, limit: int) -> _Ctx:
        return _Ctx(limit, self.max_depth, self.max_nest, self.nest)

    def fail(
        self, path: _Path, message: str, value: Any = _MISSING, key: str | int | None = None
    ) -> None:
        if self.limit == 0:
            raise _Full
        where = tuple(path) if key is None else (*path, key)
        received = None if value is _MISSING else describe_received(value)
        self.found.append(ArgumentProblem(where, message, received))
        if len(self.found) >= self.limit:
            raise _Full


def _too_deep(path: _Path, ctx: _Ctx, *, instance: bool) -> NoReturn:
    if instance:
        message = f"nested too deeply (more than {ctx.max_depth} levels)"
    else:
        message = "cannot be validated: the schema refers to itself without end"
    raise _Abort(ArgumentProblem(tuple(path), message))


def _frozen(v: Any, path: _Path, ctx: _Ctx) -> Hashable:
    try:
        return _freeze(v, ctx.max_depth - len(path))
    except _Deep:
        _too_deep(path, ctx, instance=True)


class _Node:
    """A compiled schema: checks per instance kind, plus what combinators need to explain failures."""

    __slots__ = ("by_kind", "integral", "kinds", "label", "never", "ref", "ref_name", "required",
                 "tags", "title", "trivial", "types")  # fmt: skip

    def __init__(self) -> None:
        self.by_kind: tuple[tuple[_Check, ...], ...] = ((),) * 8
        self.types: tuple[str, ...] = ()
        self.kinds: frozenset[int] | None = None
        self.integral = self.never = False
        self.trivial = True
        self.ref: _Node | None = None
        self.ref_name = self.title = self.label = ""
        self.required: tuple[str, ...] = ()
        self.tags: tuple[tuple[str, Hashable], ...] = ()

    def run(self, inst: Any, path: _Path, ctx: _Ctx) -> None:
        ctx.nest += 1
        if ctx.nest > ctx.max_nest or len(path) > ctx.max_depth:
            _too_deep(path, ctx, instance=len(path) > ctx.max_depth)
        for check in self.by_kind[_kind(inst)]:
            check(inst, path, ctx)
        ctx.nest -= 1  # not restored when an exception unwinds: any exception ends the run


def _descend(node: _Node, value: Any, path: _Path, key: str | int, ctx: _Ctx) -> None:
    path.append(key)
    node.run(value, path, ctx)
    path.pop()


def _passes(node: _Node, inst: Any, path: _Path, ctx: _Ctx) -> bool:
    depth = len(path)
    try:
        node.run(inst, path, ctx.sub(0))
    except _Full:
        del path[depth:]
        return False
    return True


def _type_ok(kinds: frozenset[int], integral: bool, inst: Any) -> bool:
    k = _kind(inst)
    return k in kinds or (integral and k == FLOAT and inst.is_integer())


def _follow(node: _Node) -> list[_Node]:
    """The node and the first few nodes its `$ref` chain leads to."""
    chain = [node]
    while chain[-1].ref is not None and len(chain) < 8:
        chain.append(chain[-1].ref)
    return chain


def _admits(node: _Node, inst: Any) -> bool:
    """Whether the types declared along the node's `$ref` chain accept the instance's type."""
    return not any(
        n.never or (n.kinds is not None and not _type_ok(n.kinds, n.integral, inst))
        for n in _follow(node)
    )


def _describe(node: _Node) -> str:
    for n in _follow(node):
        if n.ref_name or n.label or n.title:
            return n.ref_name or n.label or n.title
        if n.types:
            text = " or ".join(n.types)
            if n.types == ("object",) and n.required:
                text += " with " + ", ".join(json.dumps(r) for r in n.required)
            return text
    return "nothing" if node.never else "a value matching the schema"


def _pick(branches: list[_Node], inst: Any) -> _Node | None:
    """The one branch a failed instance was evidently aimed at, if there is one."""
    cands = [b for b in branches if _admits(b, inst)]
    if len(cands) > 1 and _kind(inst) == OBJ:
        # A discriminator: properties with a `const` that the instance matches.
        def tagged(branch: _Node) -> bool:
            tags = next((n.tags for n in _follow(branch) if n.tags), ())
            try:
                return bool(tags) and all(k in inst and _freeze(inst[k], 16) == f for k, f in tags)
            except _Deep:
                return False

        cands = [b for b in cands if tagged(b)]
    return cands[0] if len(cands) == 1 else None


def _never(inst: Any, path: _Path, ctx: _Ctx) -> None:
    ctx.fail(path, "not allowed by the schema", inst)


_FALSE = _Node()
_FALSE.by_kind, _FALSE.never, _FALSE.trivial = ((_never,),) * 8, True, False


class _Compiler:
    """Turns a schema into nodes with a work list, so deep or cyclic schemas need no recursion."""

    def __init__(self, root: Mapping[str, Any] | bool) -> None:
        self.root = root
        base = _map(root).get("$id")
        self.base = base.split("#")[0] if isinstance(base, str) else ""
        self.nodes: dict[int, tuple[_Node, object]] = {}  # holds each schema so its id stays unique
        self.todo: list[tuple[_Node, Mapping[str, Any]]] = []
        self.checks: list[list[_Check]] = []

    def compile(self) -> _Node:
        top = self.node(self.root)
        while self.todo:
            node, schema = self.todo.pop()
            self.checks = [[] for _ in range(8)]
            self.fill(node, schema)
            node.by_kind = tuple(tuple(c) for c in self.checks)
            node.trivial = not any(self.checks)
        return top

    def node(self, schema: Any) -> _Node:
        if schema is False:
            return _FALSE
        found = self.nodes.get(id(schema))
        if found is None:
            found = self.nodes[id(schema)] = (_Node(), schema)
            # A non-schema where a schema belongs is a quirk of the source; it constrains nothing.
            if isinstance(schema, Mapping):
                self.todo.append((found[0], cast(Mapping[str, Any], schema)))
        return found[0]

    def add(self, kinds: tuple[int, ...], check: _Check) -> None:
        for k in kinds:
            self.checks[k].append(check)

    def resolve(self, ref: str) -> Any:
        where = ref
        if self.base and ref.startswith(self.base) and ref[len(self.base) :][:1] in ("", "#"):
            where = ref[len(self.base) :] or "#"
        if not where.startswith("#"):
            raise SchemaError(
                f"cannot resolve $ref {ref!r}: only local references (#/...) are supported"
            )
        pointer = unquote(where[1:])
        if pointer and not pointer.startswith("/"):
            raise SchemaError(f"cannot resolve $ref {ref!r}: anchors are not supported")
        target: Any = self.root
        for token in pointer.split("/")[1:] if pointer else ():
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(target, Mapping) and token in target:
                target = _map(target)[token]
            elif token.isdigit() and int(token) < len(_list(target)):
                target = _list(target)[int(token)]
            else:
                raise SchemaError(f"cannot resolve $ref {ref!r}: there is no {token!r}")
        if not isinstance(target, (Mapping, bool)):
            raise SchemaError(f"cannot resolve $ref {ref!r}: it does not point to a schema")
        return cast(Any, target)

    def fill(self, node: _Node, s: Mapping[str, Any]) -> None:
        title, nullable, raw_type = s.get("title"), s.get("nullable") is True, s.get("type")
        node.title = title if isinstance(title, str) else ""
        names = [raw_type] if isinstance(raw_type, str) else _list(raw_type)
        if types := {t for t in names if isinstance(t, str) and t in _TYPE_KINDS}:
            types |= {"null"} if nullable else set()
            node.types = tuple(t for t in _TYPE_KINDS if t in types)
            node.kinds = frozenset(k for t in types for k in _TYPE_KINDS[t])
            node.integral = "integer" in types and "number" not in types
            self.add(
                _ALL, _type_check(node.kinds, node.integral, "expected " + " or ".join(node.types))
            )
        if enum := _list(s.get("enum")):
            values = enum + ([None] if nullable else [])
            node.label = _values_text(values)
            many = "one of " if len(values) > 1 else ""
            self.add(_ALL, _enum_check(values, f"expected {many}{node.label}"))
        if "const" in s:
            node.label = _short(s["const"], 40)
            self.add(_ALL, _enum_check([s["const"]], "expected exactly " + node.label))
        self.fill_scalars(s)
        self.fill_object(node, s)
        self.fill_array(s)
        self.fill_logic(node, s)

    def fill_scalars(self, s: Mapping[str, Any]) -> None:
        for plain, exclusive, sign in (
            ("minimum", "exclusiveMinimum", ">"),
            ("maximum", "exclusiveMaximum", "<"),
        ):
            bound, flag = s.get(plain), s.get(exclusive)
            if _kind(bound) in _NUMS:  # draft-04 spelled exclusivity as a boolean flag
                self.add(_NUMS, _bound_check(sign if flag is True else sign + "=", bound))
            if _kind(flag) in _NUMS:
                self.add(_NUMS, _bound_check(sign, flag))
        step: Any = s.get("multipleOf")
        if _kind(step) in _NUMS and math.isfinite(step) and step > 0:
            self.add(_NUMS, _multiple_check(step))
        self.add_size((STR,), s, "minLength", "maxLength", "character")
        if (rx := _regex(s.get("pattern"))) is not None:
            self.add((STR,), _pattern_check(rx, s["pattern"]))

    def add_size(
        self, kinds: tuple[int, ...], s: Mapping[str, Any], lo: str, hi: str, unit: str
    ) -> None:
        low, high = _count(s.get(lo)), _count(s.get(hi))
        if low is not None or high is not None:
            self.add(kinds, _size_check(low, high, unit))

    def fill_object(self, node: _Node, s: Mapping[str, Any]) -> None:
        props = {str(name): self.node(sub) for name, sub in _map(s.get("properties")).items()}
        tags: list[tuple[str, Hashable]] = []
        for name, sub in _map(s.get("properties")).items():
            if "const" in _map(sub):
                with contextlib.suppress(_Deep):
                    tags.append((str(name), _freeze(_map(sub)["const"], 16)))
        node.tags = tuple(tags)
        patterns = [
            (rx, self.node(sub))
            for key, sub in _map(s.get("patternProperties")).items()
            if (rx := _regex(key)) is not None
        ]
        extra_raw = s.get("additionalProperties")
        extra = self.node(extra_raw) if isinstance(extra_raw, (Mapping, bool)) else None
        if props or patterns or extra is not None:
            self.add((OBJ,), _properties_check(props, patterns, extra))
        if required := tuple(r for r in _list(s.get("required")) if isinstance(r, str)):
            node.required = required
            self.add((OBJ,), _required_check(required))
        self.add_size((OBJ,), s, "minProperties", "maxProperties", "property")
        if_present: list[tuple[str, tuple[str, ...] | _Node]] = []
        for keyword in ("dependentRequired", "dependentSchemas", "dependencies"):
            for key, dep in _map(s.get(keyword)).items():
                if isinstance(dep, list) and keyword != "dependentSchemas":
                    if_present.append((str(key), tuple(str(d) for d in _list(dep))))
                elif isinstance(dep, (Mapping, bool)) and keyword != "dependentRequired":
                    if_present.append((str(key), self.node(dep)))
        if if_present:
            self.add((OBJ,), _dependencies_check(if_present))
        if "propertyNames" in s:
            self.add((OBJ,), _names_check(self.node(s["propertyNames"])))

    def fill_array(self, s: Mapping[str, Any]) -> None:
        items, prefix = s.get("items"), s.get("prefixItems")
        if not isinstance(prefix, list) and isinstance(items, list):
            prefix, items = cast(list[Any], items), s.get("additionalItems")  # draft-07 tuple form
        heads = [self.node(x) for x in _list(prefix)]
        rest = self.node(items) if isinstance(items, (Mapping, bool)) else None
        if heads or rest is not None:
            self.add((ARR,), _items_check(heads, rest))
        self.add_size((ARR,), s, "minItems", "maxItems", "item")
        if s.get("uniqueItems") is True:
            self.add((ARR,), _unique_check)
        if "contains" in s:
            low, high = _count(s.get("minContains")), _count(s.get("maxContains"))
            self.add(
                (ARR,), _contains_check(self.node(s["contains"]), 1 if low is None else low, high)
            )

    def fill_logic(self, node: _Node, s: Mapping[str, Any]) -> None:
        ref = s.get("$ref")
        if isinstance(ref, str):  # siblings of $ref apply as well, as in 2020-12
            node.ref = self.node(self.resolve(ref))
            node.ref_name = "" if ref.endswith("#") else unquote(ref.rsplit("/", 1)[-1])
            self.add(_ALL, node.ref.run)
        for branch in _list(s.get("allOf")):
            self.add(_ALL, self.node(branch).run)
        for keyword in ("anyOf", "oneOf"):
            if branches := [self.node(b) for b in _list(s.get(keyword))]:
                self.add(_ALL, _some_of(branches, exactly_one=keyword == "oneOf"))
        if "not" in s:
            self.add(_ALL, _not_check(self.node(s["not"])))
        if "if" in s and ("then" in s or "else" in s):
            then = self.node(s["then"]) if "then" in s else None
            other = self.node(s["else"]) if "else" in s else None
            self.add(_ALL, _conditional_check(self.node(s["if"]), then, other))


# Check factories: each returns a closure over values computed once.


def _type_check(kinds: frozenset[int], integral: bool, message: str) -> _Check:
    def check(inst: Any, path: _Path, ctx: _Ctx) -> None:
        if not _type_ok(kinds, integral, inst):
            ctx.fail(path, message, inst)

    return check


def _enum_check(values: list[Any], message: str) -> _Check:
    try:
        allowed = {_freeze(v, 64) for v in values}
    except _Deep:
        allowed = set[Hashable]()
    scalars_only = all(_kind(v) < OBJ for v in values)

    def check(inst: Any, path: _Path, ctx: _Ctx) -> None:
        if (scalars_only and _kind(inst) >= OBJ) or _frozen(inst, path, ctx) not in allowed:
            ctx.fail(path, message, inst)

    return check


def _bound_check(sign: str, limit: Any) -> _Check:
    compare, message = _COMPARE[sign], f"expected a number {sign} {_short(limit, 40)}"

    def check(inst: Any, path: _Path, ctx: _Ctx) -> None:
        if not compare(inst, limit):
            ctx.fail(path, message, inst)

    return check


def _exact(v: int | float) -> Fraction:
    # The decimal a JSON float was written as, so 0.3 is a multiple of 0.1 as a person expects.
    return Fraction(v) if isinstance(v, int) else Fraction(repr(v))


def _multiple_check(step: int | float) -> _Check:
    exact_step, message = _exact(step), f"expected a multiple of {_short(step, 40)}"

    def check(inst: Any, path: _Path, ctx: _Ctx) -> None:
        if _kind(inst) == INT and isinstance(step, int):
            ok = inst % step == 0
        else:
            ok = math.isfinite(inst) and _exact(inst) % exact_step == 0
        if not ok:
            ctx.fail(path, message, inst)

    return check


def _size_check(low: int | None, high: int | None, unit: str) -> _Check:
    def check(inst: Any, path: _Path, ctx: _Ctx) -> None:
        n = len(inst)
        if low is not None and n < low:
            ctx.fail(path, f"expected at least {_plural(low, unit)}", inst)
        if high is not None and n > high:
            ctx.fail(path, f"expected at most {_plural(high, unit)}", inst)

    return check


def _pattern_check(rx: re.Pattern[str], pattern: str) -> _Check:
    message = f"expected a string matching the pattern {pattern}"
    too_long = f"{message} (strings over {_MAX_PATTERN_INPUT} characters are not checked)"

    def check(inst: Any, path: _Path, ctx: _Ctx) -> None:
        # Fail closed: a string too long to check is not known to match.
        if len(inst) > _MAX_PATTERN_INPUT:
            ctx.fail(path, too_long, inst)
        elif rx.search(inst) is None:
            ctx.fail(path, message, inst)

    return check


def _properties_check(
    props: dict[str, _Node], patterns: list[tuple[re.Pattern[str], _Node]], extra: _Node | None
) -> _Check:
    names = sorted(props)

    def unexpected(name: str) -> str:
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
        hint = f"; did you mean {json.dumps(close[0])}?" if close else ""
        return f"unexpected property (not allowed by the schema{hint})"

    def check(inst: Any, path: _Path, ctx: _Ctx) -> None:
        for key, value in inst.items():
            name = key if type(key) is str else str(key)
            child = props.get(name)
            if child is not None and not child.trivial:
                _descend(child, value, path, name, ctx)
            matched = child is not None
            for rx, sub in patterns:
                if len(name) <= _MAX_PATTERN_INPUT and rx.search(name) is not None:
                    matched = True
                    _descend(sub, value, path, name, ctx)
            if matched or extra is None or extra.trivial:
                continue
            if extra.never:
                ctx.fail(path, unexpected(name), key=name)
            else:
                _descend(extra, value, path, name, ctx)

    return check


def _required_check(required: tuple[str, ...]) -> _Check:
    def check(inst: Any, path: _Path, ctx: _Ctx) -> None:
        for name in required:
            if name not in inst:
                ctx.fail(path, "required property is missing", key=name)

    return check


def _dependencies_check(if_present: list[tuple[str, tuple[str, ...] | _Node]]) -> _Check:
    def check(inst: Any, path: _Path, ctx: _Ctx) -> None:
        for trigger, need in if_present:
            if trigger not in inst:
                continue
            if isinstance(need, _Node):
                need.run(inst, path, ctx)
                continue
            for name in need:
                if name not in inst:
                    why = f"required property is missing (required when {json.dumps(trigger)} is present)"
                    ctx.fail(path, why, key=name)

    return check


def _names_check(names: _Node) -> _Check:
    def check(inst: Any, path: _Path, ctx: _Ctx) -> None:
        for key in inst:
            name = key if type(key) is str else str(key)
            sub = ctx.sub(min(ctx.limit, 1))
            try:
                names.run(name, [*path, name], sub)
            except _Full:
                reason = sub.found[0].message if sub.found else "not allowed"
                ctx.fail(path, f"property name is invalid: {reason}", name, key=name)

    return check


def _items_check(heads: list[_Node], rest: _Node | None) -> _Check:
    n_heads = len(heads)

    def check(inst: Any, path: _Path, ctx: _Ctx) -> None:
        for i, (sub, value) in enumerate(zip(heads, inst, strict=False)):
            if not sub.trivial:
                _descend(sub, value, path, i, ctx)
        if rest is None or len(inst) <= n_heads or rest.trivial:
            return
        if rest.never:  # one problem, not one per surplus item
            ctx.fail(path, f"expected at most {_plural(n_heads, 'item')}", inst)
            return
        for i in range(n_heads, len(inst)):
            _descend(rest, inst[i], path, i, ctx)

    return check


def _unique_check(inst: Any, path: _Path, ctx: _Ctx) -> None:
    seen: dict[Hashable, int] = {}
    for i, value in enumerate(inst):
        path.append(i)
        first = seen.setdefault(_frozen(value, path, ctx), i)
        path.pop()
        if first != i:
            ctx.fail(path, f"expected unique items (this repeats item {first})", value, key=i)


def _contains_check(sub: _Node, low: int, high: int | None) -> _Check:
    def check(inst: Any, path: _Path, ctx: _Ctx) -> None:
        count = 0
        for i, value in enumerate(inst):
            path.append(i)
            count += _passes(sub, value, path, ctx)
            path.pop()
            if count >= low and high is None:
                return
        what = f"matching {_describe(sub)}"
        if count < low:
            ctx.fail(path, f"expected at least {_plural(low, 'item')} {what}", inst)
        if high is not None and count > high:
            ctx.fail(path, f"expected at most {_plural(high, 'item')} {what}", inst)

    return check


def _some_of(branches: list[_Node], *, exactly_one: bool) -> _Check:
    def check(inst: Any, path: _Path, ctx: _Ctx) -> None:
        matched: list[int] = []
        for i, branch in enumerate(branches):
            if _passes(branch, inst, path, ctx):
                matched.append(i)
                if not exactly_one or len(matched) > 1:
                    break
        if len(matched) == 1:
            return
        if ctx.limit == 0:
            raise _Full
        # Described late: branch nodes may still have been empty when this closure was made.
        options = list(dict.fromkeys(_describe(b) for b in branches))
        if matched:
            which = f"options {matched[0] + 1} and {matched[1] + 1}"
            message = f"expected exactly one of: {', '.join(options)}, but it matches {which}"
            ctx.fail(path, message, inst)
        elif (best := _pick(branches, inst)) is not None:
            best.run(inst, path, ctx)  # the branch the caller aimed at explains itself best
        else:
            listed = options[0] if len(options) == 1 else "one of: " + ", ".join(options)
            ctx.fail(path, "expected " + listed, inst)

    return check


def _not_check(sub: _Node) -> _Check:
    def check(inst: Any, path: _Path, ctx: _Ctx) -> None:
        if _passes(sub, inst, path, ctx):
            ctx.fail(path, f"expected a value that is not {_describe(sub)}", inst)

    return check


def _conditional_check(cond: _Node, then: _Node | None, other: _Node | None) -> _Check:
    def check(inst: Any, path: _Path, ctx: _Ctx) -> None:
        branch = then if _passes(cond, inst, path, ctx) else other
        if branch is not None:
            branch.run(inst, path, ctx)

    return check


class SchemaValidator:
    """Checks values against a JSON Schema compiled once, explaining each problem for a model.

    Args:
        schema: A JSON Schema (draft 2020-12 or draft-07; OpenAPI 3.0 `nullable` is understood).
        max_depth: How deeply an instance may nest before validation reports it as too deep.

    Raises:
        SchemaError: A `$ref` is not local or points nowhere.
    """

    __slots__ = ("_max_depth", "_max_nest", "_root")

    def __init__(self, schema: Mapping[str, Any] | bool, *, max_depth: int = 64) -> None:
        if not isinstance(schema, (Mapping, bool)):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise SchemaError(
                f"a JSON Schema must be an object or a boolean, not {type(schema).__name__}"
            )
        self._root = _Compiler(schema).compile()
        self._max_depth = max_depth
        # A few $ref/allOf hops per level of the instance, yet far below Python's default stack limit.
        self._max_nest = 4 * max_depth + 32

    def problems(self, instance: Any, *, limit: int = 20) -> list[ArgumentProblem]:
        """Everything wrong with `instance`, at most `limit` problems; empty when it is valid."""
        if limit <= 0:
            return []
        ctx = _Ctx(limit, self._max_depth, self._max_nest)
        try:
            self._root.run(instance, [], ctx)
        except _Full:
            pass
        except _Abort as abort:
            ctx.found.append(abort.problem)
        except RecursionError:
            ctx.found.append(ArgumentProblem((), "nested too deeply to validate"))
        return ctx.found[:limit]

    def is_valid(self, instance: Any) -> bool:
        """Whether `instance` satisfies the schema."""
        try:
            self._root.run(instance, [], _Ctx(0, self._max_depth, self._max_nest))
        except (_Full, _Abort, RecursionError):
            return False
        return True
