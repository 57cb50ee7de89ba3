"""The compiled form of a schema (`Node`), one validation run (`Ctx`) and the checks.

Checks are closures made once per keyword, grouped by the JSON kind of the instance they apply
to, so validating does no keyword lookups. `Ann` records what a node evaluates in place, for
`_validate_annotations` (`unevaluated*`).
"""

from __future__ import annotations

import difflib
import json
import math
import operator
import re
from collections.abc import Callable, Hashable, Mapping
from fractions import Fraction
from typing import Any, NoReturn, cast

from .errors import ArgumentProblem

__all__ = [
    "ALL_KINDS",
    "ARR",
    "BOOL",
    "FALSE_NODE",
    "FLOAT",
    "INT",
    "MAX_PATTERN_INPUT",
    "NULL",
    "NUMBERS",
    "OBJ",
    "OTHER",
    "STR",
    "TYPE_KINDS",
    "Abort",
    "Ann",
    "Check",
    "Ctx",
    "Full",
    "Node",
    "Path",
    "TooDeep",
    "as_list",
    "as_map",
    "bound_check",
    "conditional_check",
    "contains_check",
    "count_of",
    "dependencies_check",
    "descend",
    "describe",
    "describe_received",
    "enum_check",
    "freeze",
    "frozen",
    "items_check",
    "kind_of",
    "multiple_check",
    "names_check",
    "never_check",
    "not_check",
    "passes",
    "pattern_check",
    "plural",
    "properties_check",
    "required_check",
    "short",
    "size_check",
    "some_of",
    "too_deep",
    "type_check",
    "type_ok",
    "unexpected_property",
    "unique_check",
    "values_text",
]

Path = list[str | int]
Check = Callable[[Any, Path, "Ctx"], None]

NULL, BOOL, INT, FLOAT, STR, OBJ, ARR, OTHER = range(8)
ALL_KINDS = tuple(range(8))
NUMBERS = (INT, FLOAT)
_EXACT: dict[type, int] = {
    type(None): NULL, bool: BOOL, int: INT, float: FLOAT, str: STR, dict: OBJ, list: ARR, tuple: ARR,
}  # fmt: skip
_SLOW = ((str, STR), (int, INT), (float, FLOAT), (Mapping, OBJ), ((list, tuple), ARR))
TYPE_KINDS: dict[str, tuple[int, ...]] = {
    "string": (STR,), "integer": (INT,), "number": NUMBERS, "boolean": (BOOL,),
    "object": (OBJ,), "array": (ARR,), "null": (NULL,),
}  # fmt: skip
_KIND_NAMES = ("null", "boolean", "integer", "number", "string", "object", "array")
_COMPARE = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}
MAX_PATTERN_INPUT = 100_000
_MISSING: Any = object()
_TAG = object()  # marks frozen booleans and non-JSON values so they never equal numbers


def kind_of(v: Any) -> int:
    k = _EXACT.get(v.__class__)
    if k is not None:
        return k
    for cls, kind in _SLOW:  # subclasses (str enums, OrderedDict...); bool cannot be subclassed
        if isinstance(v, cls):
            return kind
    return OTHER


def as_list(v: Any) -> list[Any]:
    return cast(list[Any], v) if isinstance(v, list) else []


def as_map(v: Any) -> Mapping[str, Any]:
    return cast(Mapping[str, Any], v) if isinstance(v, Mapping) else {}


def count_of(v: Any) -> int | None:
    """A non-negative integer keyword value, or None when the schema gave something else."""
    k = kind_of(v)
    return int(v) if (k == INT or (k == FLOAT and v.is_integer())) and v >= 0 else None


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {'properties' if word == 'property' else word + 's'}"


class TooDeep(Exception):
    pass


def freeze(v: Any, depth: int) -> Hashable:
    """A hashable form of `v` under JSON equality: 1 == 1.0, but true != 1 and [] != {}."""
    k = kind_of(v)
    if k == BOOL:
        return (_TAG, v)
    if k < OBJ:
        return cast(Hashable, v)
    if depth <= 0:
        raise TooDeep
    if k == ARR:
        return tuple([freeze(x, depth - 1) for x in v])
    if k == OBJ:
        return frozenset([(str(key), freeze(x, depth - 1)) for key, x in v.items()])
    return (_TAG, _TAG, id(v))  # not JSON: equal only to itself


def short(v: Any, budget: int) -> str:
    """JSON-like text of `v`, cut near `budget` characters; recursion is bounded by the budget."""
    if budget <= 0:
        return "..."
    k = kind_of(v)
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
        parts.append(head + short(item, budget - used - len(head)))
        used += len(parts[-1]) + 2
    return ("[{}]" if k == ARR else "{{{}}}").format(", ".join(parts))


def describe_received(v: Any) -> str:
    """What came, for a problem's `received`: `"abc" (string)`, `42 (integer)`, `null`."""
    k = kind_of(v)
    if k == NULL:
        return "null"
    text = short(v, 60)
    name = _KIND_NAMES[k] if k != OTHER else f"Python {type(v).__name__}"
    if k == STR and len(v) > 60:
        name += f" of {len(v)} characters"
    elif k in (ARR, OBJ) and "..." in text:
        name += (
            f" of {plural(len(v), 'item')}" if k == ARR else f" with {plural(len(v), 'property')}"
        )
    return f"{text} ({name})"


def values_text(values: list[Any]) -> str:
    shown = ", ".join(short(v, 40) for v in values[:12])
    return shown + (f", ... ({len(values)} in all)" if len(values) > 12 else "")


class Full(Exception):
    """Stops a run: enough problems were found (or, when probing, any problem)."""


class Abort(Exception):
    def __init__(self, problem: ArgumentProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


class Ctx:
    """One validation run. A limit of 0 marks a probe: it only asks whether a schema matches."""

    __slots__ = ("budget", "found", "limit", "max_depth", "max_nest", "nest", "scope")

    def __init__(
        self,
        limit: int,
        max_depth: int,
        max_nest: int,
        budget: list[int],
        nest: int = 0,
        scope: list[str] | None = None,
    ) -> None:
        self.found: list[ArgumentProblem] = []
        self.limit, self.max_depth, self.max_nest, self.nest = limit, max_depth, max_nest, nest
        # Schema applications left for the whole run, probes included: nested `anyOf`s can make
        # the work grow exponentially with the schema's size, so a hostile schema stops here.
        self.budget = budget
        # The dynamic scope (resources entered, outermost first), kept only for `$dynamicRef`.
        self.scope = scope

    def sub(self, limit: int) -> Ctx:
        return Ctx(limit, self.max_depth, self.max_nest, self.budget, self.nest, self.scope)

    def fail(
        self, path: Path, message: str, value: Any = _MISSING, key: str | int | None = None
    ) -> None:
        if self.limit == 0:
            raise Full
        where = tuple(path) if key is None else (*path, key)
        received = None if value is _MISSING else describe_received(value)
        self.found.append(ArgumentProblem(where, message, received))
        if len(self.found) >= self.limit:
            raise Full


def too_deep(path: Path, ctx: Ctx, *, instance: bool) -> NoReturn:
    if ctx.budget[0] < 0:
        message = "cannot be validated: checking it against this schema takes too much work"
    elif instance:
        message = f"nested too deeply (more than {ctx.max_depth} levels)"
    else:
        message = "cannot be validated: the schema refers to itself without end"
    raise Abort(ArgumentProblem(tuple(path), message))


def frozen(v: Any, path: Path, ctx: Ctx) -> Hashable:
    try:
        return freeze(v, ctx.max_depth - len(path))
    except TooDeep:
        too_deep(path, ctx, instance=True)


class Node:
    """A compiled schema: checks per instance kind, plus what combinators need to explain failures."""

    __slots__ = ("ann", "by_kind", "integral", "kinds", "label", "never", "ref", "ref_name",
                 "required", "resource", "tags", "title", "trivial", "types")  # fmt: skip

    def __init__(self) -> None:
        self.by_kind: tuple[tuple[Check, ...], ...] = ((),) * 8
        self.types: tuple[str, ...] = ()
        self.kinds: frozenset[int] | None = None
        self.integral = self.never = False
        self.trivial = True
        self.ref: Node | None = None
        self.ref_name = self.title = self.label = ""
        self.required: tuple[str, ...] = ()
        self.tags: tuple[tuple[str, Hashable], ...] = ()
        self.ann: Ann | None = None
        self.resource = ""

    def run(self, inst: Any, path: Path, ctx: Ctx) -> None:
        ctx.nest += 1
        budget = ctx.budget
        budget[0] -= 1
        if ctx.nest > ctx.max_nest or len(path) > ctx.max_depth or budget[0] < 0:
            too_deep(path, ctx, instance=len(path) > ctx.max_depth)
        scope = ctx.scope
        if scope is not None and scope[-1:] != [self.resource]:
            scope.append(self.resource)
            for check in self.by_kind[kind_of(inst)]:
                check(inst, path, ctx)
            scope.pop()
        else:
            for check in self.by_kind[kind_of(inst)]:
                check(inst, path, ctx)
        ctx.nest -= 1  # not restored when an exception unwinds: any exception ends the run


class Ann:
    """What a schema evaluates in place, for `unevaluatedProperties` and `unevaluatedItems`."""

    __slots__ = ("all_items", "all_props", "always", "cond", "contains", "dependent", "dynamic",
                 "names", "patterns", "prefix", "some", "uneval_items", "uneval_props")  # fmt: skip

    def __init__(self) -> None:
        self.names: frozenset[str] = frozenset()
        self.patterns: list[re.Pattern[str]] = []
        self.all_props = self.all_items = self.uneval_props = self.uneval_items = False
        self.prefix = 0
        self.contains: Node | None = None
        self.always: list[Node] = []  # allOf, $ref
        self.some: list[Node] = []  # anyOf and oneOf branches: those that pass count
        self.cond: tuple[Node, Node | None, Node | None] | None = None
        self.dependent: list[tuple[str, Node]] = []
        self.dynamic: list[Callable[[Ctx], Node]] = []


def descend(node: Node, value: Any, path: Path, key: str | int, ctx: Ctx) -> None:
    path.append(key)
    node.run(value, path, ctx)
    path.pop()


def passes(node: Node, inst: Any, path: Path, ctx: Ctx) -> bool:
    depth = len(path)
    scoped = len(ctx.scope) if ctx.scope is not None else 0
    try:
        node.run(inst, path, ctx.sub(0))
    except Full:
        del path[depth:]
        if ctx.scope is not None:
            del ctx.scope[scoped:]
        return False
    return True


def type_ok(kinds: frozenset[int], integral: bool, inst: Any) -> bool:
    k = kind_of(inst)
    return k in kinds or (integral and k == FLOAT and inst.is_integer())


def _follow(node: Node) -> list[Node]:
    """The node and the first few nodes its `$ref` chain leads to."""
    chain = [node]
    while chain[-1].ref is not None and len(chain) < 8:
        chain.append(chain[-1].ref)
    return chain


def _admits(node: Node, inst: Any) -> bool:
    """Whether the types declared along the node's `$ref` chain accept the instance's type."""
    return not any(
        n.never or (n.kinds is not None and not type_ok(n.kinds, n.integral, inst))
        for n in _follow(node)
    )


def describe(node: Node) -> str:
    for n in _follow(node):
        if n.ref_name or n.label or n.title:
            return n.ref_name or n.label or n.title
        if n.types:
            text = " or ".join(n.types)
            if n.types == ("object",) and n.required:
                text += " with " + ", ".join(json.dumps(r) for r in n.required)
            return text
    return "nothing" if node.never else "a value matching the schema"


def _pick(branches: list[Node], inst: Any) -> Node | None:
    """The one branch a failed instance was evidently aimed at, if there is one."""
    cands = [b for b in branches if _admits(b, inst)]
    if len(cands) > 1 and kind_of(inst) == OBJ:
        # A discriminator: properties with a `const` that the instance matches.
        def tagged(branch: Node) -> bool:
            tags = next((n.tags for n in _follow(branch) if n.tags), ())
            try:
                return bool(tags) and all(k in inst and freeze(inst[k], 16) == f for k, f in tags)
            except TooDeep:
                return False

        cands = [b for b in cands if tagged(b)]
    return cands[0] if len(cands) == 1 else None


def never_check(inst: Any, path: Path, ctx: Ctx) -> None:
    ctx.fail(path, "not allowed by the schema", inst)


FALSE_NODE = Node()
FALSE_NODE.by_kind, FALSE_NODE.never, FALSE_NODE.trivial = ((never_check,),) * 8, True, False

# Check factories: each returns a closure over values computed once.


def type_check(kinds: frozenset[int], integral: bool, message: str) -> Check:
    def check(inst: Any, path: Path, ctx: Ctx) -> None:
        if not type_ok(kinds, integral, inst):
            ctx.fail(path, message, inst)

    return check


def enum_check(values: list[Any], message: str) -> Check:
    try:
        allowed = {freeze(v, 64) for v in values}
    except TooDeep:
        allowed = set[Hashable]()
    scalars_only = all(kind_of(v) < OBJ for v in values)

    def check(inst: Any, path: Path, ctx: Ctx) -> None:
        if (scalars_only and kind_of(inst) >= OBJ) or frozen(inst, path, ctx) not in allowed:
            ctx.fail(path, message, inst)

    return check


def bound_check(sign: str, limit: Any) -> Check:
    compare, message = _COMPARE[sign], f"expected a number {sign} {short(limit, 40)}"

    def check(inst: Any, path: Path, ctx: Ctx) -> None:
        if not compare(inst, limit):
            ctx.fail(path, message, inst)

    return check


def _exact(v: int | float) -> Fraction:
    # The decimal a JSON float was written as, so 0.3 is a multiple of 0.1 as a person expects.
    return Fraction(v) if isinstance(v, int) else Fraction(repr(v))


def multiple_check(step: int | float) -> Check:
    exact_step, message = _exact(step), f"expected a multiple of {short(step, 40)}"

    def check(inst: Any, path: Path, ctx: Ctx) -> None:
        if kind_of(inst) == INT and isinstance(step, int):
            ok = inst % step == 0
        else:
            ok = math.isfinite(inst) and _exact(inst) % exact_step == 0
        if not ok:
            ctx.fail(path, message, inst)

    return check


def size_check(low: int | None, high: int | None, unit: str) -> Check:
    def check(inst: Any, path: Path, ctx: Ctx) -> None:
        n = len(inst)
        if low is not None and n < low:
            ctx.fail(path, f"expected at least {plural(low, unit)}", inst)
        if high is not None and n > high:
            ctx.fail(path, f"expected at most {plural(high, unit)}", inst)

    return check


def pattern_check(rx: re.Pattern[str], pattern: str) -> Check:
    message = f"expected a string matching the pattern {pattern}"
    too_long = f"{message} (strings over {MAX_PATTERN_INPUT} characters are not checked)"

    def check(inst: Any, path: Path, ctx: Ctx) -> None:
        # Fail closed: a string too long to check is not known to match.
        if len(inst) > MAX_PATTERN_INPUT:
            ctx.fail(path, too_long, inst)
        elif rx.search(inst) is None:
            ctx.fail(path, message, inst)

    return check


def unexpected_property(name: str, names: list[str]) -> str:
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    hint = f"; did you mean {json.dumps(close[0])}?" if close else ""
    return f"unexpected property (not allowed by the schema{hint})"


def properties_check(
    props: dict[str, Node], patterns: list[tuple[re.Pattern[str], Node]], extra: Node | None
) -> Check:
    names = sorted(props)

    def check(inst: Any, path: Path, ctx: Ctx) -> None:
        for key, value in inst.items():
            name = key if type(key) is str else str(key)
            child = props.get(name)
            if child is not None and not child.trivial:
                descend(child, value, path, name, ctx)
            matched = child is not None
            for rx, sub in patterns:
                if len(name) <= MAX_PATTERN_INPUT and rx.search(name) is not None:
                    matched = True
                    descend(sub, value, path, name, ctx)
            if matched or extra is None or extra.trivial:
                continue
            if extra.never:
                ctx.fail(path, unexpected_property(name, names), key=name)
            else:
                descend(extra, value, path, name, ctx)

    return check


def required_check(required: tuple[str, ...]) -> Check:
    def check(inst: Any, path: Path, ctx: Ctx) -> None:
        for name in required:
            if name not in inst:
                ctx.fail(path, "required property is missing", key=name)

    return check


def dependencies_check(if_present: list[tuple[str, tuple[str, ...] | Node]]) -> Check:
    def check(inst: Any, path: Path, ctx: Ctx) -> None:
        for trigger, need in if_present:
            if trigger not in inst:
                continue
            if isinstance(need, Node):
                need.run(inst, path, ctx)
                continue
            for name in need:
                if name not in inst:
                    why = f"required property is missing (required when {json.dumps(trigger)} is present)"
                    ctx.fail(path, why, key=name)

    return check


def names_check(names: Node) -> Check:
    def check(inst: Any, path: Path, ctx: Ctx) -> None:
        for key in inst:
            name = key if type(key) is str else str(key)
            sub = ctx.sub(min(ctx.limit, 1))
            try:
                names.run(name, [*path, name], sub)
            except Full:
                reason = sub.found[0].message if sub.found else "not allowed"
                ctx.fail(path, f"property name is invalid: {reason}", name, key=name)

    return check


def items_check(heads: list[Node], rest: Node | None) -> Check:
    n_heads = len(heads)

    def check(inst: Any, path: Path, ctx: Ctx) -> None:
        for i, (sub, value) in enumerate(zip(heads, inst, strict=False)):
            if not sub.trivial:
                descend(sub, value, path, i, ctx)
        if rest is None or len(inst) <= n_heads or rest.trivial:
            return
        if rest.never:  # one problem, not one per surplus item
            ctx.fail(path, f"expected at most {plural(n_heads, 'item')}", inst)
            return
        for i in range(n_heads, len(inst)):
            descend(rest, inst[i], path, i, ctx)

    return check


def unique_check(inst: Any, path: Path, ctx: Ctx) -> None:
    seen: dict[Hashable, int] = {}
    for i, value in enumerate(inst):
        path.append(i)
        first = seen.setdefault(frozen(value, path, ctx), i)
        path.pop()
        if first != i:
            ctx.fail(path, f"expected unique items (this repeats item {first})", value, key=i)


def contains_check(sub: Node, low: int, high: int | None) -> Check:
    def check(inst: Any, path: Path, ctx: Ctx) -> None:
        count = 0
        for i, value in enumerate(inst):
            path.append(i)
            count += passes(sub, value, path, ctx)
            path.pop()
            if count >= low and high is None:
                return
        what = f"matching {describe(sub)}"
        if count < low:
            ctx.fail(path, f"expected at least {plural(low, 'item')} {what}", inst)
        if high is not None and count > high:
            ctx.fail(path, f"expected at most {plural(high, 'item')} {what}", inst)

    return check


def some_of(branches: list[Node], *, exactly_one: bool) -> Check:
    def check(inst: Any, path: Path, ctx: Ctx) -> None:
        matched: list[int] = []
        for i, branch in enumerate(branches):
            if passes(branch, inst, path, ctx):
                matched.append(i)
                if not exactly_one or len(matched) > 1:
                    break
        if len(matched) == 1:
            return
        if ctx.limit == 0:
            raise Full
        # Described late: branch nodes may still have been empty when this closure was made.
        options = list(dict.fromkeys(describe(b) for b in branches))
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


def not_check(sub: Node) -> Check:
    def check(inst: Any, path: Path, ctx: Ctx) -> None:
        if passes(sub, inst, path, ctx):
            ctx.fail(path, f"expected a value that is not {describe(sub)}", inst)

    return check


def conditional_check(cond: Node, then: Node | None, other: Node | None) -> Check:
    def check(inst: Any, path: Path, ctx: Ctx) -> None:
        branch = then if passes(cond, inst, path, ctx) else other
        if branch is not None:
            branch.run(inst, path, ctx)

    return check
