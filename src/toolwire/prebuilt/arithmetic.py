"""A calculator tool: arithmetic evaluated by walking a Python AST, never with `eval`.

Everything that is not arithmetic (names other than the constants, attribute access, calls to
functions outside the table, comprehensions, strings...) is refused, and every operation is bounded
so hostile input fails fast instead of burning CPU or memory.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable
from typing import Any

from ..errors import CalculatorError
from ..tools import FunctionTool, ToolAnnotations, tool

__all__ = ["CalculatorError", "calculator", "evaluate", "format_number"]

MAX_EXPRESSION_CHARS = 500
MAX_DEPTH = 60
MAX_INT_BITS = 4_000  # about 1,200 decimal digits
MAX_FACTORIAL = 400
MAX_COMB_ARG = 5_000

Number = int | float


def _check_int(value: int) -> int:
    if value.bit_length() > MAX_INT_BITS:
        raise CalculatorError("The result is too large (more than about 1,200 digits).")
    return value


def _real(value: Number) -> Number:
    if isinstance(value, float):
        if math.isnan(value):
            raise CalculatorError("The result is not a number (NaN).")
        if math.isinf(value):
            raise CalculatorError("The result is too large (overflow).")
        return value
    return _check_int(value)


def _power(base: Number, exponent: Number) -> Number:
    if isinstance(base, int) and isinstance(exponent, int) and exponent >= 0:
        # Estimate the size first: 9**9**9 must not start a multi-minute bignum computation.
        if abs(base) > 1 and exponent * math.log2(abs(base)) > MAX_INT_BITS:
            return _real(math.pow(base, exponent)) if exponent < 2**53 else _overflow()
        return base**exponent
    try:
        return math.pow(base, exponent)
    except ValueError:
        raise CalculatorError(
            f"{format_number(base)} ** {format_number(exponent)} has no real result."
        ) from None


def _overflow() -> float:
    raise CalculatorError("The result is too large (overflow).")


def _factorial(n: Number) -> Number:
    if isinstance(n, float):
        if not n.is_integer():
            raise CalculatorError("factorial() needs a whole number.")
        n = int(n)
    if n < 0:
        raise CalculatorError("factorial() needs a number that is not negative.")
    if n > MAX_FACTORIAL:
        raise CalculatorError(f"factorial() is limited to n <= {MAX_FACTORIAL}.")
    return math.factorial(n)


def _whole(name: str, *args: Number) -> list[int]:
    out: list[int] = []
    for arg in args:
        if isinstance(arg, float):
            if not arg.is_integer():
                raise CalculatorError(f"{name}() needs whole numbers.")
            arg = int(arg)
        if abs(arg) > MAX_COMB_ARG:
            raise CalculatorError(f"{name}() is limited to arguments up to {MAX_COMB_ARG}.")
        out.append(arg)
    return out


def _comb(n: Number, k: Number) -> int:
    a, b = _whole("comb", n, k)
    return math.comb(a, b)


def _perm(n: Number, k: Number) -> int:
    a, b = _whole("perm", n, k)
    return math.perm(a, b)


def _gcd(*args: Number) -> int:
    return math.gcd(*_whole("gcd", *args))


def _lcm(*args: Number) -> int:
    return math.lcm(*_whole("lcm", *args))


def _round(x: Number, digits: Number = 0) -> Number:
    places = _whole("round", digits)[0]
    if places > 15:
        places = 15
    rounded = round(x, places)
    return int(rounded) if places <= 0 else rounded


def _log(x: Number, base: Number | None = None) -> float:
    return math.log(x) if base is None else math.log(x, base)


def _root(x: Number, n: Number) -> float:
    if n == 0:
        raise CalculatorError("root() needs a non-zero degree.")
    if x < 0 and float(n).is_integer() and int(n) % 2 == 1:
        return -math.pow(-x, 1 / n)
    return math.pow(x, 1 / n)


# name -> (function, minimum arguments, maximum arguments or None for "any")
_FUNCTIONS: dict[str, tuple[Callable[..., Any], int, int | None]] = {
    "abs": (abs, 1, 1),
    "sqrt": (math.sqrt, 1, 1),
    "cbrt": (math.cbrt, 1, 1),
    "root": (_root, 2, 2),
    "exp": (math.exp, 1, 1),
    "ln": (math.log, 1, 1),
    "log": (_log, 1, 2),
    "log10": (math.log10, 1, 1),
    "log2": (math.log2, 1, 1),
    "sin": (math.sin, 1, 1),
    "cos": (math.cos, 1, 1),
    "tan": (math.tan, 1, 1),
    "asin": (math.asin, 1, 1),
    "acos": (math.acos, 1, 1),
    "atan": (math.atan, 1, 1),
    "atan2": (math.atan2, 2, 2),
    "sinh": (math.sinh, 1, 1),
    "cosh": (math.cosh, 1, 1),
    "tanh": (math.tanh, 1, 1),
    "degrees": (math.degrees, 1, 1),
    "radians": (math.radians, 1, 1),
    "floor": (math.floor, 1, 1),
    "ceil": (math.ceil, 1, 1),
    "trunc": (math.trunc, 1, 1),
    "round": (_round, 1, 2),
    "factorial": (_factorial, 1, 1),
    "comb": (_comb, 2, 2),
    "perm": (_perm, 2, 2),
    "gcd": (_gcd, 1, None),
    "lcm": (_lcm, 1, None),
    "hypot": (math.hypot, 1, None),
    "min": (min, 1, None),
    "max": (max, 1, None),
}

_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}

_PERCENT_CALL = "__percent__"

# "17% of 2,340" -> (17/100)*2340, and "17%" standing alone or before an operator -> percent.
_PERCENT_OF = re.compile(r"(\d+(?:\.\d+)?|\.\d+)\s*%\s*of\b", re.IGNORECASE)
_PERCENT = re.compile(r"(\d+(?:\.\d+)?|\.\d+)\s*%(?=\s*(?:$|[-+*/)^,%]))")
_GROUPED = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d,])")

_SYMBOLS = {"×": "*", "·": "*", "÷": "/", "−": "-", "–": "-", "π": "pi", "√": "sqrt", "^": "**"}


def _prepare(expression: str) -> str:
    text = expression.strip()
    for symbol, replacement in _SYMBOLS.items():
        text = text.replace(symbol, replacement)
    # Digit grouping ("2,340" or "1,000,000"): a comma followed by exactly three digits.
    text = _GROUPED.sub(lambda m: m.group(0).replace(",", ""), text)
    text = _PERCENT_OF.sub(r"(\1/100)*", text)
    return _PERCENT.sub(rf"{_PERCENT_CALL}(\1)", text)


_BINARY: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
}


def _describe(node: ast.AST) -> str:
    names: dict[type[ast.AST], str] = {
        ast.Attribute: "attribute access",
        ast.Subscript: "indexing",
        ast.Lambda: "lambda",
        ast.ListComp: "comprehensions",
        ast.SetComp: "comprehensions",
        ast.DictComp: "comprehensions",
        ast.GeneratorExp: "comprehensions",
        ast.Compare: "comparisons",
        ast.BoolOp: "boolean operators",
        ast.IfExp: "conditional expressions",
        ast.NamedExpr: "assignment",
        ast.List: "lists",
        ast.Tuple: "tuples",
        ast.Dict: "dicts",
        ast.Set: "sets",
        ast.JoinedStr: "strings",
        ast.Starred: "unpacking",
        ast.Await: "await",
        ast.Yield: "yield",
    }
    return names.get(type(node), type(node).__name__)


class _Evaluator:
    def __init__(self) -> None:
        self.depth = 0

    def eval(self, node: ast.AST) -> Number:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise CalculatorError(f"The expression is nested too deeply (limit {MAX_DEPTH}).")
        try:
            return _real(self._eval(node))
        finally:
            self.depth -= 1

    def _eval(self, node: ast.AST) -> Number:
        if isinstance(node, ast.Constant):
            value: Any = node.value
            if type(value) in (int, float):
                return _real(value)
            if isinstance(value, str):
                raise CalculatorError("Strings are not allowed; use numbers only.")
            raise CalculatorError(f"{value!r} is not a number.")
        if isinstance(node, ast.BinOp):
            return self._binary(node)
        if isinstance(node, ast.UnaryOp):
            operand = self.eval(node.operand)
            if isinstance(node.op, ast.USub):
                return -operand
            if isinstance(node.op, ast.UAdd):
                return operand
            raise CalculatorError("Only the unary operators + and - are allowed.")
        if isinstance(node, ast.Name):
            if node.id in _CONSTANTS:
                return _CONSTANTS[node.id]
            if node.id in _FUNCTIONS:
                raise CalculatorError(f"{node.id} is a function; call it like {node.id}(x).")
            known = ", ".join(_CONSTANTS)
            raise CalculatorError(f"Unknown name {node.id!r}. Known constants: {known}.")
        if isinstance(node, ast.Call):
            return self._call(node)
        raise CalculatorError(
            f"{_describe(node).capitalize()} not allowed: use numbers, + - * / // % ** ^, "
            "parentheses, percentages and the math functions."
        )

    def _binary(self, node: ast.BinOp) -> Number:
        # Walk the left spine without recursion so a long sum like 1+2+...+99 is not "deep".
        chain: list[ast.BinOp] = []
        current: ast.expr = node
        while isinstance(current, ast.BinOp):
            chain.append(current)
            current = current.left
        value = self.eval(current)
        for step in reversed(chain):
            value = _real(self._apply(step, value))
        return value

    def _apply(self, node: ast.BinOp, left: Number) -> Number:
        op = type(node.op)
        if op not in _BINARY:
            raise CalculatorError(f"Operator {type(node.op).__name__} is not allowed.")
        # "200 + 10%" means 200 plus 10 percent of 200, as on a pocket calculator.
        if op in (ast.Add, ast.Sub) and _is_percent(node.right):
            share = self.eval(node.right)
            return left + left * share if op is ast.Add else left - left * share
        right = self.eval(node.right)
        if op is ast.Pow:
            return _power(left, right)
        if op is ast.Add:
            return left + right
        if op is ast.Sub:
            return left - right
        if op is ast.Mult:
            if (
                isinstance(left, int)
                and isinstance(right, int)
                and left.bit_length() + right.bit_length() > MAX_INT_BITS + 1
            ):
                raise CalculatorError("The result is too large (more than about 1,200 digits).")
            return left * right
        if right == 0:
            raise CalculatorError("Division by zero.")
        if op is ast.Div:
            if isinstance(left, int) and isinstance(right, int) and left % right == 0:
                return left // right
            return left / right
        if op is ast.FloorDiv:
            return left // right
        return left % right

    def _call(self, node: ast.Call) -> Number:
        if not isinstance(node.func, ast.Name):
            raise CalculatorError(
                "Only the listed math functions can be called, by their plain name."
            )
        name = node.func.id
        if node.keywords:
            raise CalculatorError(f"{name}() takes no keyword arguments.")
        if name == _PERCENT_CALL and len(node.args) == 1:
            return self.eval(node.args[0]) / 100
        if name not in _FUNCTIONS:
            available = ", ".join(sorted(_FUNCTIONS))
            raise CalculatorError(f"Unknown function {name!r}. Available: {available}.")
        fn, low, high = _FUNCTIONS[name]
        count = len(node.args)
        if count < low or (high is not None and count > high):
            expected = (
                str(low) if low == high else f"{low} or more" if high is None else f"{low}-{high}"
            )
            raise CalculatorError(f"{name}() takes {expected} argument(s), got {count}.")
        if count > 100:
            raise CalculatorError(f"{name}() takes at most 100 arguments.")
        args = [self.eval(arg) for arg in node.args]
        try:
            value: Number = fn(*args)
        except ValueError:
            raise CalculatorError(
                f"{name}() is not defined for {', '.join(format_number(a) for a in args)}."
            ) from None
        return value


def _is_percent(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == _PERCENT_CALL
    )


def evaluate(expression: str) -> Number:
    """Evaluate an arithmetic expression safely.

    Raises:
        CalculatorError: the expression is not arithmetic, is too long or too deep, or its value
            is undefined or too large.
    """
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise CalculatorError(f"The expression is longer than {MAX_EXPRESSION_CHARS} characters.")
    if not expression.strip():
        raise CalculatorError("The expression is empty.")
    text = _prepare(expression)
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        detail = exc.msg if exc.msg else "invalid syntax"
        raise CalculatorError(
            f"Could not parse {expression!r}: {detail}. Write arithmetic such as "
            "'2 * (3 + 4)', '17% of 2340', 'sqrt(2) ^ 3'."
        ) from None
    except (RecursionError, MemoryError, ValueError):
        raise CalculatorError("The expression is too complex to parse.") from None
    try:
        return _Evaluator().eval(tree.body)
    except ZeroDivisionError:
        raise CalculatorError("Division by zero.") from None
    except OverflowError:
        raise CalculatorError("The result is too large (overflow).") from None
    except RecursionError:
        raise CalculatorError("The expression is nested too deeply.") from None
    except (TypeError, ValueError) as exc:
        raise CalculatorError(f"Could not evaluate {expression!r}: {exc}.") from None


def format_number(value: Number) -> str:
    """Render a result: integers exactly, floats with up to 15 significant digits."""
    if isinstance(value, int):
        return str(value)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.15g}"


def _calculator(expression: str) -> str:
    """Evaluate an arithmetic expression and return the result as a number.

    Supports + - * / // % and ** (or ^), parentheses, percentages ("17% of 2,340", "2340 * 17%",
    "200 + 10%" meaning 200 plus 10% of it), digit grouping with commas, the constants pi, e and
    tau, and the functions abs, sqrt, cbrt, root(x, n), exp, ln, log(x[, base]), log10, log2, sin,
    cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh, degrees, radians, floor, ceil, trunc,
    round(x[, digits]), factorial, comb, perm, gcd, lcm, hypot, min and max. Angles are in radians.
    Use it for any arithmetic instead of computing in your head.

    Args:
        expression: The arithmetic to evaluate, e.g. "17% of 2,340" or "sqrt(2) * (3 + 4)^2".
    """
    return format_number(evaluate(expression))


calculator: FunctionTool = tool(
    _calculator,
    name="calculator",
    annotations=ToolAnnotations(
        title="Calculator",
        read_only_hint=True,
        idempotent_hint=True,
        open_world_hint=False,
        destructive_hint=False,
    ),
    timeout=5.0,
)
"""The calculator tool (no configuration needed)."""
