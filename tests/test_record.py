"""`record` builds classes that behave as `dataclasses.dataclass` builds them (repr, eq, hash)."""

from __future__ import annotations

import ast
import copy
import dataclasses
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from toolwire import ToolCall, ToolResult, UserMessage
from toolwire._record import empty_dict, empty_list, record, unguarded
from toolwire.models._request import PreparedRequest, prepared_request
from toolwire.models.base import ModelSettings
from toolwire.results import TextPart

OPTIONS: list[dict[str, bool]] = [
    {},
    {"frozen": True},
    {"frozen": True, "eq": False},
    {"frozen": True, "kw_only": True},
    {"eq": False},
]


def _twins(options: dict[str, bool]) -> tuple[type[Any], type[Any]]:
    made: list[type[Any]] = []
    for decorate in (dataclass(slots=True, **options), record(**options)):

        @decorate
        class Point:
            """A point."""

            x: int
            y: list[Any] = field(default_factory=list[Any])
            label: str = field(default="", repr=False, compare=False)
            weight: int = field(default=0, hash=False)

        made.append(Point)
    return made[0], made[1]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_behaves_as_dataclass(options: dict[str, bool]) -> None:
    std, rec = _twins(options)
    assert dataclasses.is_dataclass(rec)
    assert [f.name for f in dataclasses.fields(rec)] == [f.name for f in dataclasses.fields(std)]
    assert [f.type for f in dataclasses.fields(rec)] == [f.type for f in dataclasses.fields(std)]
    assert rec.__annotations__ == std.__annotations__
    assert repr(rec(x=1, y=[2])) == repr(std(x=1, y=[2]))
    assert rec.__repr__.__qualname__ == std.__repr__.__qualname__
    for left, right in [
        ({"x": 1}, {"x": 1}),
        ({"x": 1}, {"x": 2}),
        ({"x": 1, "label": "a"}, {"x": 1, "label": "b"}),
        ({"x": 1, "weight": 1}, {"x": 1, "weight": 2}),
    ]:
        assert (rec(**left) == rec(**right)) == (std(**left) == std(**right))
    assert (rec.__hash__ is None) == (std.__hash__ is None)
    if std.__hash__ is object.__hash__:  # eq=False: identity, as for any object
        assert rec.__hash__ is object.__hash__
    elif std.__hash__ is not None:
        assert hash(rec(x=1, y=(), weight=5)) == hash(std(x=1, y=(), weight=5))
    assert rec(x=1).__eq__(std(x=1)) is NotImplemented
    one = rec(x=1, y=[2])
    assert dataclasses.replace(one, x=3).x == 3
    assert copy.deepcopy(one).y == [2]
    if options.get("frozen"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            one.x = 2


def test_recursive_repr_and_own_methods_kept() -> None:
    std, rec = _twins({})
    loops = [rec(x=1), std(x=1)]
    for item in loops:
        item.y.append(item)
    assert repr(loops[0]) == repr(loops[1]) == "_twins.<locals>.Point(x=1, y=[...], weight=0)"

    @record
    class Own:
        value: int

        def __repr__(self) -> str:
            return "own"

    assert repr(Own(1)) == "own"
    assert Own(1) == Own(1)


def test_public_records_keep_value_semantics() -> None:
    hi = UserMessage.of("hi")
    assert hi == UserMessage.of("hi") != UserMessage.of("ho")
    assert repr(hi) == "UserMessage(content=[TextPart(text='hi', kind='text')], kind='user')"
    assert repr(ToolCall("c1", "f", "{}")) == "ToolCall(id='c1', name='f', arguments='{}')"
    assert ToolCall.__hash__ is None
    assert ToolResult([]) == ToolResult([])


def test_first_line_compiles_no_repr_or_eq() -> None:
    # Each `@dataclass` compiles its `__repr__` and `__eq__` at import (the largest cost of the
    # first import, see toolwire._record); a class added with `@dataclass` shows up here.
    code = (
        "import dataclasses, sys\n"
        "from toolwire import Agent, tool, model\n"
        "for name, module in sorted(sys.modules.items()):\n"
        "    if not name.startswith('toolwire'):\n"
        "        continue\n"
        "    for value in list(vars(module).values()):\n"
        "        if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == name:\n"
        "            for method in ('__repr__', '__eq__'):\n"
        "                made = getattr(value, method)\n"
        "                made = getattr(made, '__wrapped__', None) or made\n"
        "                code = getattr(made, '__code__', None)\n"
        "                if code is not None and code.co_filename == '<string>':\n"
        "                    print(name, value.__qualname__, method)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == ""


def test_empty_factories_give_each_record_its_own() -> None:
    first, second = ToolResult(), ToolResult()
    first.content.append(TextPart("a"))
    assert second.content == [] and first.content is not second.content
    assert empty_list() == [] and empty_list() is not empty_list()
    assert empty_dict() == {} and empty_dict() is not empty_dict()


def test_a_frozen_record_filled_unguarded_is_that_record() -> None:
    @record(frozen=True)
    class Pair:
        left: int
        right: list[int] = field(default_factory=empty_list)

    made: Any = object.__new__(unguarded(Pair))
    made.left, made.right = 1, [2]
    made.__class__ = Pair
    assert type(made) is Pair and made == Pair(1, [2]) and repr(made) == repr(Pair(1, [2]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.left = 3  # type: ignore[misc]


def test_a_prepared_request_built_by_prepare_equals_one_built_by_its_class() -> None:
    # Every field given a value of its own: a field the fast builder forgot would differ (or be
    # missing, and raise here).
    values: list[Any] = [[UserMessage.of("hi")], [], [], "required", ModelSettings(seed=1)]
    values += [["native"], None, None, True]
    names = [f.name for f in dataclasses.fields(PreparedRequest)]
    assert len(values) == len(names)
    fast, plain = prepared_request(*values), PreparedRequest(*values)
    assert type(fast) is PreparedRequest and fast == plain
    assert [getattr(fast, n) for n in names] == [getattr(plain, n) for n in names]
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.stream = False  # type: ignore[misc]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_init_matches_dataclass(options: dict[str, bool]) -> None:
    # `record` builds `__init__` from a shared template: same signature, defaults, factories,
    # `init=False` fields and `__post_init__` as the `__init__` a dataclass compiles.
    import inspect

    made: list[type[Any]] = []
    for decorate in (dataclass(slots=True, **options), record(**options)):

        @decorate
        class Shape:
            name: str
            sides: list[int] = field(default_factory=list[int])
            colour: str = "red"
            seen: list[str] = field(default_factory=list[str], init=False)
            area: float = field(default=0.0, init=False)
            scale: int = field(default=1, kw_only=True)

            def __post_init__(self) -> None:
                self.seen.append(self.name)

        made.append(Shape)
    std, rec = made
    assert str(inspect.signature(rec)) == str(inspect.signature(std))
    assert rec.__init__.__qualname__ == std.__init__.__qualname__
    positional = not options.get("kw_only")
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((), {"name": "sq"}),
        ((), {"name": "tri", "sides": [3], "scale": 2}),
        (("x", [1], "b") if positional else (), {} if positional else {"name": "x", "colour": "b"}),
    ]
    for args, kwargs in calls:
        one, two = rec(*args, **kwargs), std(*args, **kwargs)
        assert repr(one) == repr(two)
        assert (one.seen, one.area, one.scale) == (two.seen, two.area, two.scale)
    assert rec(name="a").sides is not rec(name="a").sides  # each instance gets its own list
    with pytest.raises(TypeError, match=r"missing 1 required .*argument: 'name'"):
        rec()
    copied = copy.copy(rec(name="p"))  # through __reduce_ex__ and the state, as pickle goes
    assert repr(copied) == repr(rec(name="p"))
    if options.get("frozen"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            del copied.name
        assert rec.__dataclass_params__.frozen


def test_init_order_errors_and_docs_as_dataclass() -> None:
    with pytest.raises(TypeError, match="non-default argument 'y' follows default argument"):

        @record
        class Bad:  # pyright: ignore[reportUnusedClass]
            x: int = 0
            y: int  # pyright: ignore[reportGeneralTypeIssues]

    @record
    class Undocumented:
        x: int
        y: str = "a"

    @dataclass
    class Twin:
        x: int
        y: str = "a"

    assert Undocumented.__doc__ == Twin.__doc__.replace("Twin", "Undocumented")  # type: ignore[union-attr]


def test_class_variables_stay_out_of_the_fields() -> None:
    @record(frozen=True)
    class Counted:
        limit: ClassVar[int] = 3
        value: int = 0

    assert [f.name for f in dataclasses.fields(Counted)] == ["value"]
    assert Counted.limit == 3 and Counted(2).value == 2
    assert Counted.__annotations__ == {"limit": "ClassVar[int]", "value": "int"}


SHAPES_FILE = Path(__file__).resolve().parent.parent / "src" / "toolwire" / "_record_shapes.py"
SHAPES_HEAD = '''# type: ignore
# ruff: noqa
# fmt: off
"""`__init__` templates of the record shapes behind `from toolwire import Agent, tool, model`
and the offline models, compiled with this module's byte code rather than by `exec` at every
import (see `toolwire._record`: a class of one of these shapes compiles nothing).

Generated by `python tests/test_record.py --write`; a test fails when a shape is missing. The
names they read (`_rec_set`, `_f0`, ...) are each class's own, given when its `__init__` is made.
"""

from types import FunctionType
'''
_USED_SHAPES = (
    "import toolwire._record as r\n"
    "from toolwire import Agent, tool, model\n"
    "import toolwire.models.testing\n"
    "for source, code in sorted(r._TEMPLATES.items()):\n"
    "    print(repr((source, code.co_filename == '<record>')))\n"
)


def _used_shapes() -> list[tuple[str, bool]]:
    """Each `__init__` template source behind the first line, and whether it was compiled."""
    done = subprocess.run(
        [sys.executable, "-c", _USED_SHAPES], capture_output=True, text=True, check=True
    )
    return [ast.literal_eval(line) for line in done.stdout.splitlines()]


def shapes_module(sources: list[str]) -> str:
    functions = [init_source_as(source, f"t{i}") for i, source in enumerate(sources)]
    table = "".join(f"    {source!r}: t{i},\n" for i, source in enumerate(sources))
    return (
        SHAPES_HEAD
        + "\n\n"
        + "\n\n".join(functions)
        + "\n\nSHAPES: dict[str, FunctionType] = {\n"
        + table
        + "}\n"
    )


def init_source_as(source: str, name: str) -> str:
    return source.replace("def __init__(", f"def {name}(", 1)


def test_shapes_behind_the_first_line_come_compiled() -> None:
    used = _used_shapes()
    compiled = [source for source, at_run_time in used if at_run_time]
    assert not compiled, "run `python tests/test_record.py --write`: shapes compiled at import"


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    SHAPES_FILE.write_text(shapes_module(sorted(source for source, _ in _used_shapes())))
