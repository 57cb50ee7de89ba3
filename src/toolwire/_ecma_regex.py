"""ECMA-262 regular expressions, as JSON Schema's `pattern` means them, translated for `re`.

JSON Schema patterns are ECMA-262 (with Unicode semantics); Python's `re` reads the same text
differently: `\\d` and `\\w` match any Unicode digit or letter, `\\s` misses some spaces, `$`
matches before a final newline, `.` matches `\\r`, `\\p{...}` and `(?<name>...)` do not exist.
`translate` rewrites a pattern into `re` syntax with the ECMA meaning, and raises `PatternError`
for what it cannot honour (scripts in `\\p{...}`, Python-only syntax, unknown escapes), so a
pattern is never silently read another way.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata

__all__ = ["PatternError", "compile_pattern", "translate"]


class PatternError(ValueError):
    """A pattern that is not ECMA-262, or that `re` cannot run with ECMA-262's meaning."""


# ECMA-262 WhiteSpace and LineTerminator code points: what `\s` matches.
_SPACE_CLASS = r"\t\n\x0b\f\r\x20\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_DIGIT_CLASS = "0-9"
_WORD_CLASS = "a-zA-Z0-9_"
_NOT_LINE_END = r"[^\n\r\u2028\u2029]"
_ANY = r"(?s:.)"

_CATEGORIES = {
    "L": ("Lu", "Ll", "Lt", "Lm", "Lo"), "LC": ("Lu", "Ll", "Lt"),
    "M": ("Mn", "Mc", "Me"), "N": ("Nd", "Nl", "No"),
    "P": ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"), "S": ("Sm", "Sc", "Sk", "So"),
    "Z": ("Zs", "Zl", "Zp"), "C": ("Cc", "Cf", "Cs", "Co", "Cn"),
}  # fmt: skip
_LONG_NAMES = {
    "Letter": "L", "Cased_Letter": "LC", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll",
    "Titlecase_Letter": "Lt", "Modifier_Letter": "Lm", "Other_Letter": "Lo", "Mark": "M",
    "Combining_Mark": "M", "Nonspacing_Mark": "Mn", "Spacing_Mark": "Mc", "Enclosing_Mark": "Me",
    "Number": "N", "Decimal_Number": "Nd", "digit": "Nd", "Letter_Number": "Nl",
    "Other_Number": "No", "Punctuation": "P", "punct": "P", "Connector_Punctuation": "Pc",
    "Dash_Punctuation": "Pd", "Open_Punctuation": "Ps", "Close_Punctuation": "Pe",
    "Initial_Punctuation": "Pi", "Final_Punctuation": "Pf", "Other_Punctuation": "Po",
    "Symbol": "S", "Math_Symbol": "Sm", "Currency_Symbol": "Sc", "Modifier_Symbol": "Sk",
    "Other_Symbol": "So", "Separator": "Z", "Space_Separator": "Zs", "Line_Separator": "Zl",
    "Paragraph_Separator": "Zp", "Other": "C", "Control": "Cc", "cntrl": "Cc", "Format": "Cf",
    "Surrogate": "Cs", "Private_Use": "Co", "Unassigned": "Cn",
}  # fmt: skip
_SIMPLE_ESCAPES = {"t": r"\t", "n": r"\n", "v": r"\x0b", "f": r"\f", "r": r"\r"}


@functools.cache
def _category_runs() -> tuple[list[int], list[str]]:
    """Starts of the runs of code points sharing a general category, and each run's category."""
    starts: list[int] = []
    cats: list[str] = []
    previous = ""
    for cp in range(sys.maxunicode + 1):
        cat = unicodedata.category(chr(cp))
        if cat != previous:
            starts.append(cp)
            cats.append(cat)
            previous = cat
    return starts, cats


def _char(cp: int) -> str:
    """A code point written as an escape `re` reads literally anywhere, class or not."""
    if cp < 0x80 and (chr(cp).isalnum() or chr(cp) == "_"):
        return chr(cp)
    return f"\\x{cp:02x}" if cp < 0x100 else f"\\u{cp:04x}" if cp < 0x10000 else f"\\U{cp:08x}"


@functools.cache
def _property_class(name: str) -> str:
    """The body of a character class for a Unicode property `\\p{name}`."""
    value = name
    for prefix in ("General_Category=", "gc="):
        if name.startswith(prefix):
            value = name[len(prefix) :]
    if "=" in value:
        raise PatternError(
            f"\\p{{{name}}}: Unicode scripts and other valued properties are not supported"
        )
    if value == "Any":
        return r"\x00-\U0010ffff"
    if value == "ASCII":
        return r"\x00-\x7f"
    code = _LONG_NAMES.get(value, value)
    if code == "Assigned":
        wanted = set(_categories_all()) - {"Cn"}
    elif code in _CATEGORIES:
        wanted = set(_CATEGORIES[code])
    elif code in _categories_all():
        wanted = {code}
    else:
        raise PatternError(f"\\p{{{name}}}: unknown or unsupported Unicode property")
    starts, cats = _category_runs()
    parts: list[str] = []
    for i, cat in enumerate(cats):
        if cat in wanted:
            first = starts[i]
            last = (starts[i + 1] if i + 1 < len(starts) else sys.maxunicode + 1) - 1
            parts.append(_char(first) if first == last else f"{_char(first)}-{_char(last)}")
    return "".join(parts)


def _categories_all() -> tuple[str, ...]:
    return tuple(c for group in _CATEGORIES.values() for c in group)


class _Reader:
    __slots__ = ("i", "names", "src")

    def __init__(self, src: str) -> None:
        self.src, self.i = src, 0
        self.names: set[str] = set()

    def peek(self, n: int = 1) -> str:
        return self.src[self.i : self.i + n]

    def take(self, n: int = 1) -> str:
        out = self.src[self.i : self.i + n]
        self.i += n
        return out

    def fail(self, why: str) -> PatternError:
        return PatternError(f"{why} (at character {self.i} of {self.src!r})")


def _hex(r: _Reader, n: int, what: str) -> int:
    digits = r.take(n)
    if len(digits) != n or any(c not in "0123456789abcdefABCDEF" for c in digits):
        raise r.fail(f"\\{what} needs {n} hexadecimal digits")
    return int(digits, 16)


def _unicode_escape(r: _Reader) -> int:
    """After `\\u`: `XXXX`, a surrogate pair of two such escapes, or `{X...}`."""
    if r.peek() == "{":
        r.take()
        end = r.src.find("}", r.i)
        body = r.src[r.i : end] if end >= 0 else ""
        if not body or any(c not in "0123456789abcdefABCDEF" for c in body):
            raise r.fail("\\u{...} needs hexadecimal digits")
        r.i = end + 1
        cp = int(body, 16)
        if cp > sys.maxunicode:
            raise r.fail("\\u{...} is beyond the last code point")
        return cp
    cp = _hex(r, 4, "u")
    if 0xD800 <= cp < 0xDC00 and r.peek(2) == "\\u":
        save = r.i
        r.take(2)
        try:
            low = _hex(r, 4, "u")
        except PatternError:
            low = 0
        if 0xDC00 <= low < 0xE000:
            return 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
        r.i = save
    return cp


def _property(r: _Reader) -> str:
    if r.take() != "{":
        raise r.fail("\\p and \\P need a {property}")
    end = r.src.find("}", r.i)
    if end < 0:
        raise r.fail("\\p{ is not closed")
    name = r.src[r.i : end]
    r.i = end + 1
    return _property_class(name)


# A class atom: ("char", code point) or ("set", positive class body) or ("not", negated body).
_Atom = tuple[str, int | str]


def _escape_atom(r: _Reader, in_class: bool) -> _Atom | str:
    """After a backslash: an atom, or (outside classes) ready `re` text for an assertion."""
    c = r.take()
    if not c:
        raise r.fail("the pattern ends with a lone backslash")
    if c in "dws":
        return ("set", {"d": _DIGIT_CLASS, "w": _WORD_CLASS, "s": _SPACE_CLASS}[c])
    if c in "DWS":
        return ("not", {"D": _DIGIT_CLASS, "W": _WORD_CLASS, "S": _SPACE_CLASS}[c])
    if c in "pP":
        body = _property(r)
        return ("set" if c == "p" else "not", body)
    if c in _SIMPLE_ESCAPES:
        return ("char", ord({"t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r"}[c]))
    if c == "c":
        letter = r.take()
        if not letter.isascii() or not letter.isalpha():
            raise r.fail("\\c needs a letter")
        return ("char", ord(letter) % 32)
    if c == "x":
        return ("char", _hex(r, 2, "x"))
    if c == "u":
        return ("char", _unicode_escape(r))
    if c == "0" and not r.peek().isdigit():
        return ("char", 0)
    if c == "b" and in_class:
        return ("char", 8)
    if not in_class:
        if c == "b":
            return "\\b"
        if c == "B":
            return r"(?:\B|\A\Z)"  # Python's \B never matches in an empty string; ECMA's does
        if c.isdigit():
            digits = c
            while r.peek().isdigit():
                digits += r.take()
            # ECMA: a group that took no part in the match is matched by the empty string.
            return f"(?({int(digits)})\\{int(digits)})"
        if c == "k":
            if r.take() != "<":
                raise r.fail("\\k needs a <name>")
            end = r.src.find(">", r.i)
            name = r.src[r.i : end] if end >= 0 else ""
            if not name.isidentifier():
                raise r.fail("\\k<...> needs a group name")
            r.i = end + 1
            return f"(?({name})(?P={name}))"
    if not (c.isalnum() or c == "_"):
        # ECMA-262 with Unicode semantics allows `\-` in classes only, and Annex B anywhere; a
        # punctuation mark escaped means itself in every reading, so it is accepted.
        return ("char", ord(c))
    raise r.fail(f"\\{c} is not an escape ECMA-262 defines")


def _class(r: _Reader) -> str:
    """After `[`: the class as `re` text."""
    negated = r.peek() == "^"
    if negated:
        r.take()
    chars: list[str] = []
    sets: list[str] = []
    nots: list[str] = []
    while True:
        c = r.take()
        if not c:
            raise r.fail("a character class is not closed")
        if c == "]":
            break
        atom: _Atom | str = _escape_atom(r, in_class=True) if c == "\\" else ("char", ord(c))
        assert not isinstance(atom, str)
        if r.peek() == "-" and r.peek(2) != "-]" and len(r.peek(2)) == 2:
            r.take()
            nxt = r.take()
            end_atom = _escape_atom(r, in_class=True) if nxt == "\\" else ("char", ord(nxt))
            assert not isinstance(end_atom, str)
            if atom[0] != "char" or end_atom[0] != "char":
                raise r.fail("a range in a character class needs single characters at both ends")
            low, high = int(atom[1]), int(end_atom[1])
            if low > high:
                raise r.fail("a range in a character class is out of order")
            chars.append(f"{_char(low)}-{_char(high)}")
            continue
        kind, value = atom
        if kind == "char":
            chars.append(_char(int(value)))
        elif kind == "set":
            sets.append(str(value))
        else:
            nots.append(str(value))
    body = "".join(chars) + "".join(sets)
    if not nots:
        if negated:
            return f"[^{body}]" if body else _ANY
        return f"[{body}]" if body else "(?!)"
    options = ([f"[{body}]"] if body else []) + [f"[^{n}]" if n else _ANY for n in nots]
    union = "(?:" + "|".join(options) + ")"
    return f"(?:(?!{union}){_ANY})" if negated else union


def _group_open(r: _Reader) -> str:
    """After `(`: the opening of the group as `re` text."""
    if r.peek() != "?":
        return "("
    r.take()
    head = r.peek(2)
    if head[:1] in (":", "=", "!"):
        return "(?" + r.take()
    if head in ("<=", "<!"):
        return "(?" + r.take(2)
    if head[:1] == "<":
        r.take()
        end = r.src.find(">", r.i)
        name = r.src[r.i : end] if end >= 0 else ""
        if not name.isidentifier():
            raise r.fail("a named group needs a name")
        if name in r.names:
            raise r.fail(f"the group name {name!r} is used twice")
        r.names.add(name)
        r.i = end + 1
        return f"(?P<{name}>"
    raise r.fail("(?" + head[:1] + " is not ECMA-262 group syntax")


def translate(pattern: str) -> str:
    """The `re` text (for `re.ASCII`) with the meaning ECMA-262 gives `pattern`.

    Raises:
        PatternError: the pattern is not ECMA-262, or asks for what `re` cannot do.
    """
    r = _Reader(pattern)
    out: list[str] = []
    quantifiable = False
    while r.i < len(r.src):
        c = r.take()
        if c == "\\":
            atom = _escape_atom(r, in_class=False)
            if isinstance(atom, str):
                out.append(atom)
                quantifiable = atom.startswith("(?(")
                continue
            kind, value = atom
            if kind == "char":
                out.append(_char(int(value)))
            elif kind == "set":
                out.append(f"[{value}]")
            else:
                out.append(f"[^{value}]" if value else "(?!)")
            quantifiable = True
        elif c == "[":
            out.append(_class(r))
            quantifiable = True
        elif c == "(":
            out.append(_group_open(r))
            quantifiable = False
        elif c == ")":
            out.append(")")
            quantifiable = True
        elif c == ".":
            out.append(_NOT_LINE_END)
            quantifiable = True
        elif c == "$":
            out.append(r"\Z")
            quantifiable = False
        elif c == "^":
            out.append(r"\A")
            quantifiable = False
        elif c in "*+?" or (c == "{" and re.match(r"\d+(,\d*)?\}", r.src[r.i :])):
            if c == "{":
                end = r.src.index("}", r.i)
                c += r.take(end + 1 - r.i)
            if not quantifiable:
                raise r.fail(f"{c} has nothing to repeat")
            out.append(c)
            if r.peek() == "?":
                out.append(r.take())
            elif r.peek() in ("+", "*") or (r.peek() == "{" and re.match(r"\{\d", r.src[r.i :])):
                raise r.fail("a quantifier cannot follow a quantifier")
            quantifiable = False
        elif c == "|":
            out.append("|")
            quantifiable = False
        else:
            out.append(_char(ord(c)))
            quantifiable = True
    return "".join(out)


@functools.lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """`pattern` compiled with ECMA-262 meaning; use `.search`, as JSON Schema does.

    Raises:
        PatternError: the pattern cannot be honoured.
    """
    text = translate(pattern)
    try:
        return re.compile(text, re.ASCII)
    except (re.error, RecursionError, OverflowError) as exc:
        raise PatternError(f"{pattern!r} cannot be compiled: {exc}") from None
