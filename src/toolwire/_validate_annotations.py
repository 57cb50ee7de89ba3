"""Annotations for `unevaluatedProperties`/`unevaluatedItems`, and `$dynamicRef` at run time.

What a schema that passed has evaluated is recomputed on demand from each node's `Ann`: its own
properties, patterns and items, plus those of the in-place subschemas that apply and pass (`allOf`,
`$ref`, the matching `anyOf`/`oneOf` branches, `if` with `then` or `else`, `dependentSchemas`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._validate_checks import (
    MAX_PATTERN_INPUT,
    OBJ,
    Ann,
    Check,
    Ctx,
    Node,
    Path,
    descend,
    kind_of,
    passes,
    too_deep,
    unexpected_property,
)

__all__ = [
    "dynamic_check",
    "dynamic_target",
    "evaluated_items",
    "evaluated_props",
    "unevaluated_items_check",
    "unevaluated_props_check",
]


# `None` stands for "everything".


def _enter(node: Node, ctx: Ctx) -> bool:
    ctx.nest += 1
    ctx.budget[0] -= 1
    if ctx.nest > ctx.max_nest or ctx.budget[0] < 0:
        too_deep([], ctx, instance=False)
    scope = ctx.scope
    if scope is not None and scope[-1:] != [node.resource]:
        scope.append(node.resource)
        return True
    return False


def _leave(ctx: Ctx, pushed: bool) -> None:
    ctx.nest -= 1
    if pushed and ctx.scope is not None:
        ctx.scope.pop()


def _applied(ann: Ann, inst: Any, path: Path, ctx: Ctx) -> list[Node]:
    """The in-place subschemas whose annotations count: those applied and passing."""
    out = [*ann.always, *(resolve(ctx) for resolve in ann.dynamic)]
    out += [b for b in ann.some if passes(b, inst, path, ctx)]
    if ann.cond is not None:
        cond, then, other = ann.cond
        if passes(cond, inst, path, ctx):
            out += [cond] if then is None else [cond, then]
        elif other is not None:
            out.append(other)
    if ann.dependent and kind_of(inst) == OBJ:
        out += [dep for trigger, dep in ann.dependent if trigger in inst]
    return out


def evaluated_props(
    node: Node, inst: Any, path: Path, ctx: Ctx, own: bool = False
) -> set[str] | None:
    ann = node.ann
    if ann is None:
        return set()
    if ann.all_props or (ann.uneval_props and not own):
        return None
    keys = {
        name
        for name in (k if type(k) is str else str(k) for k in inst)
        if name in ann.names
        or (len(name) <= MAX_PATTERN_INPUT and any(rx.search(name) for rx in ann.patterns))
    }
    pushed = _enter(node, ctx)
    for child in _applied(ann, inst, path, ctx):
        more = evaluated_props(child, inst, path, ctx)
        if more is None:
            _leave(ctx, pushed)
            return None
        keys |= more
    _leave(ctx, pushed)
    return keys


def evaluated_items(
    node: Node, inst: Any, path: Path, ctx: Ctx, own: bool = False
) -> set[int] | None:
    ann = node.ann
    if ann is None:
        return set()
    if ann.all_items or (ann.uneval_items and not own):
        return None
    indices = set(range(min(ann.prefix, len(inst))))
    if ann.contains is not None:
        for i, value in enumerate(inst):
            path.append(i)
            if passes(ann.contains, value, path, ctx):
                indices.add(i)
            path.pop()
    pushed = _enter(node, ctx)
    for child in _applied(ann, inst, path, ctx):
        more = evaluated_items(child, inst, path, ctx)
        if more is None:
            _leave(ctx, pushed)
            return None
        indices |= more
    _leave(ctx, pushed)
    return indices


def _known_names(node: Node) -> list[str]:
    """Property names declared in place under a node, for typo hints."""
    names: set[str] = set()
    todo, seen = [node], set[int]()
    while todo and len(seen) < 64:
        n = todo.pop()
        if id(n) in seen or n.ann is None:
            continue
        seen.add(id(n))
        names |= n.ann.names
        todo += [*n.ann.always, *n.ann.some, *(d for _, d in n.ann.dependent)]
        if n.ann.cond is not None:
            todo += [c for c in n.ann.cond if c is not None]
    return sorted(names)


def unevaluated_props_check(owner: Node, sub: Node) -> Check:
    def check(inst: Any, path: Path, ctx: Ctx) -> None:
        seen = evaluated_props(owner, inst, path, ctx, own=True)
        if seen is None or sub.trivial:
            return
        for key, value in inst.items():
            name = key if type(key) is str else str(key)
            if name in seen:
                continue
            if sub.never:
                ctx.fail(path, unexpected_property(name, _known_names(owner)), key=name)
            else:
                descend(sub, value, path, name, ctx)

    return check


def unevaluated_items_check(owner: Node, sub: Node) -> Check:
    def check(inst: Any, path: Path, ctx: Ctx) -> None:
        seen = evaluated_items(owner, inst, path, ctx, own=True)
        if seen is None or sub.trivial:
            return
        for i, value in enumerate(inst):
            if i in seen:
                continue
            if sub.never:
                ctx.fail(path, "unexpected item (not allowed by the schema)", value, key=i)
            else:
                descend(sub, value, path, i, ctx)

    return check


def dynamic_target(
    static: Node, name: str, table: dict[tuple[str, str], Node]
) -> Callable[[Ctx], Node]:
    """The node a `$dynamicRef` lands on: the outermost resource in scope with the anchor."""

    def target(ctx: Ctx) -> Node:
        for uri in ctx.scope or ():
            found = table.get((uri, name))
            if found is not None:
                return found
        return static

    return target


def dynamic_check(resolve: Callable[[Ctx], Node]) -> Check:
    def check(inst: Any, path: Path, ctx: Ctx) -> None:
        resolve(ctx).run(inst, path, ctx)

    return check
