"""A command whose options are declared as data: read from a plain command line without typer,
or made into the typer command for everything else.

Importing typer and building a command (it makes a pydantic adapter for each option) is a few
percent of a server's start-up, which `toolwire serve` should not pay to read `--port 8000`.
Such a command is a plain function (its parameters give the names, types and defaults) and a
`Declared` entry per parameter (help, option names, environment variable, lower bound).
`quick_options` reads the command lines that need none of typer's conversions or messages: long
options with plain values. Anything else (`--help`, an unknown option, a value to convert or to
refuse) gives `None`, and the caller runs the typer command `typer_command` builds from the same
declarations, so help, errors and every option behave as typer's.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, NamedTuple

__all__ = ["Declared", "quick_options", "typer_command"]


class Declared(NamedTuple):
    """How a command's parameter shows as an option (typer's `Option` settings).

    Attributes:
        help: The option's help line.
        names: Its names; by default `--name` (and `--no-name` for a flag).
        envvar: An environment variable that gives its value when the option is not given.
        min: The smallest value a number may take.
        panel: The help panel it is listed in (typer's `rich_help_panel`).
    """

    help: str
    names: tuple[str, ...] = ()
    envvar: str | None = None
    min: float | None = None
    panel: str | None = None


def typer_command(function: Callable[..., Any], declared: Mapping[str, Declared]) -> Any:
    """`function` with the signature typer builds its command from: each parameter annotated
    with its declared `typer.Option`."""
    import typer  # the cli extra

    signature = inspect.signature(function, eval_str=True)
    if set(signature.parameters) != set(declared):
        raise TypeError(f"{function.__name__}: declare every parameter once, and only those")
    parameters = [
        param.replace(
            annotation=Annotated[
                param.annotation,
                typer.Option(
                    *declared[param.name].names,
                    help=declared[param.name].help,
                    envvar=declared[param.name].envvar,
                    min=declared[param.name].min,
                    rich_help_panel=declared[param.name].panel,
                ),
            ]
        )
        for param in signature.parameters.values()
    ]

    @functools.wraps(function)
    def command(**options: Any) -> Any:
        return function(**options)

    # typer reads the parameters from the signature (`__signature__` is what inspect reports).
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    setattr(command, "__signature__", signature.replace(parameters=parameters))  # noqa: B010
    return command


class _Reader(NamedTuple):
    name: str  # the function's parameter
    convert: Callable[[str], Any] | None  # None for a flag
    many: bool
    envvar: str | None
    low: float | None


_INT = re.compile(r"0|[1-9][0-9]{0,17}")
_FLOAT = re.compile(r"(0|[1-9][0-9]{0,14})(\.[0-9]{1,15})?")


class _Refused:
    """A value left to typer (to convert in its own way, or to refuse with its message)."""


def _int(text: str) -> Any:
    return int(text) if _INT.fullmatch(text) else _Refused


def _float(text: str) -> Any:
    return float(text) if _FLOAT.fullmatch(text) else _Refused


_CONVERTERS: dict[Any, Callable[[str], Any]] = {str: str, Path: Path, int: _int, float: _float}


def _reader(param: inspect.Parameter, entry: Declared) -> tuple[list[str], list[str], _Reader]:
    """The names that give the option (or turn its flag on), those turning a flag off, and how
    to read its value."""
    kind: Any = param.annotation
    optional = typing.get_origin(kind) in (typing.Union, types.UnionType)
    if optional:
        rest = [a for a in typing.get_args(kind) if a is not type(None)]
        if len(rest) != 1:
            raise TypeError(f"option {param.name!r}: one type, or one type or None")
        kind = rest[0]
    many = typing.get_origin(kind) is list
    if many:
        (kind,) = typing.get_args(kind)
    flag = kind is bool and not optional and not many
    if not flag and (kind not in _CONVERTERS or (many and entry.envvar is not None)):
        raise TypeError(f"option {param.name!r}: {param.annotation} is not read here")
    read = _Reader(param.name, None if flag else _CONVERTERS[kind], many, entry.envvar, entry.min)
    dashed = param.name.replace("_", "-")
    if entry.names:
        return list(entry.names), [], read
    return [f"--{dashed}"], [f"--no-{dashed}"] if flag else [], read


def _value(read: _Reader, text: str) -> Any:
    if read.convert is None:  # a flag's variable: typer reads its spellings of yes and no
        return _Refused
    value = read.convert(text)
    if value is not _Refused and read.low is not None and value < read.low:
        return _Refused
    return value


def quick_options(
    function: Callable[..., Any], declared: Mapping[str, Declared], argv: Sequence[str]
) -> dict[str, Any] | None:
    """`function`'s keyword arguments from `argv` (what follows the command's name), as the
    command of `typer_command(function, declared)` would pass them; `None` when typer must
    read `argv` itself.

    Taken here: `--name value`, `--name=value` and flags (`--flag`, and `--no-flag` for one
    declared without names), each value a plain string, path, whole number or decimal (no
    sign, no exponent) at or above the option's lower bound, the last one winning for an option
    that takes one value; an option's environment variable when it is not given.
    """
    # Shell completion (`_TOOLWIRE_COMPLETE=...`) is typer's part.
    if any(key.startswith("_") and key.endswith("_COMPLETE") for key in os.environ):
        return None
    readers: dict[str, _Reader] = {}
    switched_off: dict[str, _Reader] = {}
    found: dict[str, Any] = {}
    for param in inspect.signature(function, eval_str=True).parameters.values():
        names, off, read = _reader(param, declared[param.name])
        readers.update(dict.fromkeys(names, read))
        switched_off.update(dict.fromkeys(off, read))
        found[param.name] = param.default
    given: set[str] = set()
    args = iter(argv)
    for arg in args:
        name, equals, text = arg.partition("=")
        read = readers.get(name)
        if read is None:
            if equals or name not in switched_off:
                return None  # help, an unknown option, an argument, `--`: typer's to judge
            found[switched_off[name].name] = False
            continue
        given.add(read.name)
        if read.convert is None:
            if equals:
                return None
            found[read.name] = True
            continue
        if not equals:
            following = next(args, None)
            if following is None or following.startswith("-"):
                return None
            text = following
        value = _value(read, text)
        if value is _Refused:
            return None
        found[read.name] = [*(found[read.name] or ()), value] if read.many else value
    for read in readers.values():
        if read.envvar is not None and read.name not in given:
            text = os.environ.get(read.envvar)
            if text:  # an empty variable counts as unset, as in typer
                value = _value(read, text)
                if value is _Refused:
                    return None
                found[read.name] = value
    return found
