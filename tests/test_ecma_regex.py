"""ECMA-262 patterns run by Python's `re` with ECMA-262's meaning, or refused.

The last test generates patterns from ECMA-262 pieces and holds every verdict to Node's own
`RegExp` with the `u` flag (the reading JSON Schema's test suite expects).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

import pytest

from toolwire._ecma_regex import PatternError, compile_pattern

CASES: list[tuple[str, list[str], list[str]]] = [
    (r"^\d+$", ["0123456789"], ["١٢٣", "１", "1\n"]),
    (r"^\D$", ["a", "١"], ["5"]),
    (r"^\w+$", ["a_Z9"], ["é", "ß", "٣"]),
    (r"^\W$", ["é", "-"], ["a", "_"]),
    (r"^\s$", [" ", "\t", "\u00a0", "\u2028", "\ufeff", "\u3000", "\v"], ["a", "\u200b", "\x1c"]),
    (r"^\S$", ["a", "\u200b"], [" ", "\u00a0"]),
    (r"\bcat\b", ["a cat!", "écat"], ["concat", "cat_"]),
    (r"^\B$", [""], []),
    (r"^a.c$", ["abc", "a😀c"], ["a\nc", "a\rc", "a\u2028c", "a\u2029c"]),
    (r"^abc$", ["abc"], ["abc\n", "\nabc"]),
    (r"^\p{Lu}\p{Ll}+$", ["Ólafur"], ["ólafur", "OLA"]),
    (r"^\p{Letter}+$", ["école", "Ωμέγα"], ["a1"]),
    (r"^\P{L}+$", ["123 !"], ["a"]),
    (r"^\p{digit}+$", ["١٢٣", "123"], ["a"]),
    (r"^\p{gc=Nd}$", ["٣"], ["x"]),
    (r"^[\p{L}\d]+$", ["a1é"], ["a-1"]),
    (r"^[^\p{L}]+$", ["12-"], ["1a"]),
    (r"^[\D]$", ["a"], ["1"]),
    (r"^[^\D]$", ["1"], ["a"]),
    (r"^[^\s\d]+$", ["ab"], ["a b", "a1"]),
    (r"^(?<year>\d{4})-\k<year>$", ["2024-2024"], ["2024-2025"]),
    (r"^(a)?\1b$", ["b", "aab"], ["ab"]),
    (r"^\cJ$", ["\n"], ["J"]),
    (r"^\u{1F600}$", ["😀"], ["\\u{1F600}"]),
    (r"^\uD83D\uDE00$", ["😀"], []),
    (r"^\x41\u0042\0$", ["AB\x00"], ["AB0"]),
    (r"^[\b]$", ["\b"], ["b"]),
    (r"^[]$", [], ["", "a"]),
    (r"^[^]$", ["\n", "a"], [""]),
    (r"^a{,2}$", ["a{,2}"], ["aa"]),
    (r"^\-\/\.$", ["-/."], []),
    (r"^[\]\-]+$", ["]-"], ["a"]),
    (r"(?<=\$)\d+", ["$12"], ["12"]),
    (r"^(?:a|b)+?c$", ["abc"], ["c"]),
]


@pytest.mark.parametrize(("pattern", "good", "bad"), CASES)
def test_ecma_meaning(pattern: str, good: list[str], bad: list[str]) -> None:
    rx = compile_pattern(pattern)
    for text in good:
        assert rx.search(text) is not None, (pattern, text)
    for text in bad:
        assert rx.search(text) is None, (pattern, text)


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"\p{Script=Greek}", "scripts"),
        (r"\p{Emoji}", "unknown or unsupported Unicode property"),
        (r"(?P<n>a)", "not ECMA-262 group syntax"),
        (r"(?i)a", "not ECMA-262 group syntax"),
        (r"(?>a)", "not ECMA-262 group syntax"),
        (r"a++", "cannot follow a quantifier"),
        (r"a{2}*", "cannot follow a quantifier"),
        (r"*a", "nothing to repeat"),
        (r"\a", "not an escape"),
        (r"\A", "not an escape"),
        (r"\z", "not an escape"),
        (r"\x4", "hexadecimal"),
        (r"[z-a]", "out of order"),
        (r"[\d-z]", "single characters"),
        (r"[abc", "not closed"),
        ("abc\\", "lone backslash"),
        (r"(?<=a+)b", "cannot be compiled"),
        (r"(a)(?<a>b)(?<a>c)", "used twice"),
    ],
)
def test_what_cannot_be_honoured_is_refused(pattern: str, reason: str) -> None:
    with pytest.raises(PatternError, match=reason):
        compile_pattern(pattern)


ATOMS = [
    "a", "b", r"\d", r"\D", r"\w", r"\W", r"\s", r"\S", ".", "[a-c]", "[^a]", r"[\d_]",
    r"[^\s]", r"\p{L}", r"\p{Lu}", r"\P{L}", r"\p{Nd}", r"\p{Letter}", r"\p{gc=Lu}", "é", "😀",
    r"\u00e9", r"\u{1F600}", r"\uD83D\uDE00", r"\x41", r"\n", r"\r", r"\t", r"\cJ", r"\0",
    r"\/", r"\.", r"\-", "[-a]", r"[\]]", r"[\b]", r"[\D]", r"[^\W]", r"[\p{L}\d]", r"[^\p{Nd}\s]",
    r"[\P{L}a]", "[]", "[^]", r"\\", "$", "^", r"\b", r"\B", r"\1", r"\k<g1>",
]  # fmt: skip
QUANTIFIERS = ["", "", "", "*", "+", "?", "{2}", "{1,}", "{0,2}", "*?", "+?", "??"]
TEXT = ["a", "b", "c", "A", "1", "٣", "_", " ", "\u00a0", "\n", "\r", "\u2028", "é", "É", "😀",
        "-", ".", "/", "\\", "\x00", "\t", "\ufeff", "ß", "\v", "\b", "]"]  # fmt: skip
GROUPS = ["(", "(?:", "(?=", "(?!", "(?<g1>", "(?<g2>", "(?<=", "(?<!"]
# Python cannot run a lookbehind of varying width, nor refer to a group before it is defined.
ALLOWED_REFUSALS = ("fixed-width", "group reference", "open group", "unknown group name",
                    "same lookbehind")  # fmt: skip


def generate(rng: random.Random, depth: int = 0) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(1, 4)):
        roll = rng.random()
        if roll < 0.15 and depth < 2:
            parts.append(rng.choice(GROUPS) + generate(rng, depth + 1) + ")")
        elif roll < 0.2 and depth < 2:
            parts.append(generate(rng, depth + 1) + "|" + generate(rng, depth + 1))
        else:
            atom = rng.choice(ATOMS)
            assertion = atom in ("^", "$", r"\b", r"\B")
            parts.append(atom + ("" if assertion else rng.choice(QUANTIFIERS)))
    return "".join(parts)


NODE = Path(__file__).parents[1] / ".ci" / "node" / "node_modules" / ".bin" / "node"
JUDGE = """
const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(cases.map(([p, texts]) => {
  let re;
  try { re = new RegExp(p, 'u'); } catch (e) { return null; }
  return texts.map((t) => re.test(t));
})));
"""


def test_generated_patterns_agree_with_node_regexp() -> None:
    if not NODE.exists():
        if os.environ.get("CI"):
            pytest.fail("Node is missing: run .ci/mcp-setup.sh before the tests")
        pytest.skip("Node is not installed (run .ci/mcp-setup.sh)")
    rng = random.Random(20261201)
    cases = [
        (generate(rng), ["".join(rng.choices(TEXT, k=rng.randint(0, 6))) for _ in range(8)])
        for _ in range(800)
    ]
    judged = json.loads(
        subprocess.run(
            [str(NODE), "-e", JUDGE],
            input=json.dumps(cases),
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
    )
    compared = 0
    refused: list[str] = []
    for (pattern, texts), verdicts in zip(cases, judged, strict=True):
        if verdicts is None:
            continue  # not ECMA-262 with the u flag: nothing to compare
        try:
            rx = compile_pattern(pattern)
        except PatternError as exc:
            if not any(reason in str(exc) for reason in ALLOWED_REFUSALS):
                refused.append(f"{pattern}: {exc}")
            continue
        compared += 1
        ours = [rx.search(text) is not None for text in texts]
        assert ours == verdicts, (pattern, texts)
    assert refused == []
    assert compared > 350
