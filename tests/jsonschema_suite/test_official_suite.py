"""The official JSON-Schema-Test-Suite (vendored beside this file, see README.md), required tests.

Every case either gets the suite's verdict, or its schema is refused when the validator is built
with a `SchemaError` naming the keyword and where it is. The figures per draft (correct, accepted
invalid, rejected valid, refused) are printed at the end of the run by the conftest hook and
asserted here: nothing invalid is ever accepted, and at least 99% of the cases are correct.
`refRemote` documents are supplied from the suite's `remotes/`, mapped to the URIs it uses.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from toolwire._validate import SchemaValidator
from toolwire.errors import SchemaError

SUITE = Path(__file__).parent
DRAFTS = ("draft2020-12", "draft7")
DIALECT_URIS = {
    "draft2020-12": "https://json-schema.org/draft/2020-12/schema",
    "draft7": "http://json-schema.org/draft-07/schema#",
}


def remotes() -> dict[str, Any]:
    root = SUITE / "remotes"
    return {
        "http://localhost:1234/" + path.relative_to(root).as_posix(): json.loads(path.read_text())
        for path in sorted(root.rglob("*.json"))
    }


REMOTES = remotes()
REFUSAL = re.compile(r"^\$?\w+ at #[^:]*: .+")


@dataclass
class Figures:
    cases: int = 0
    correct: int = 0
    accepted_invalid: list[str] = field(default_factory=list[str])
    rejected_valid: list[str] = field(default_factory=list[str])
    refused: list[str] = field(default_factory=list[str])
    unnamed: list[str] = field(default_factory=list[str])  # refusals not naming keyword and place

    def line(self, draft: str) -> str:
        share = 100 * self.correct / self.cases
        return (
            f"{draft}: {self.correct}/{self.cases} correct ({share:.1f}%), "
            f"{len(self.accepted_invalid)} accepted invalid, "
            f"{len(self.rejected_valid)} rejected valid, {len(self.refused)} refused"
        )


def with_dialect(schema: Any, draft: str) -> Any:
    """The suite's schemas mostly declare their draft; the draft-07 ones rely on the runner."""
    if isinstance(schema, dict) and "$schema" not in schema:
        return {"$schema": DIALECT_URIS[draft], **schema}
    return schema


# Optional tests whose subject toolwire implements; the others check `format` and `content*` as
# assertions, which both drafts leave off by default and toolwire treats as annotations.
OPTIONAL = ("anchor", "bignum", "cross-draft", "dependencies-compatibility", "dynamicRef",
            "ecmascript-regex", "float-overflow", "id", "no-schema", "non-bmp-regex",
            "refOfUnknownKeyword", "unknownKeyword")  # fmt: skip


def run_draft(draft: str, optional: bool = False) -> Figures:
    figures = Figures()
    folder = SUITE / "tests" / draft / ("optional" if optional else "")
    paths = [folder / f"{name}.json" for name in OPTIONAL] if optional else folder.glob("*.json")
    for path in sorted(p for p in paths if p.exists()):
        for group in json.loads(path.read_text()):
            name = f"{path.stem}: {group['description']}"
            try:
                validator = SchemaValidator(with_dialect(group["schema"], draft), documents=REMOTES)
            except SchemaError as exc:
                # A refusal must say which keyword and where: "<keyword> at <pointer>: <why>".
                figures.unnamed += [] if REFUSAL.match(str(exc)) else [str(exc)]
                figures.cases += len(group["tests"])
                figures.refused += [f"{name} / {t['description']}: {exc}" for t in group["tests"]]
                continue
            for test in group["tests"]:
                figures.cases += 1
                verdict = validator.is_valid(test["data"])
                assert verdict == (not validator.problems(test["data"])), (name, test)
                label = f"{name} / {test['description']}"
                if verdict == test["valid"]:
                    figures.correct += 1
                elif verdict:
                    figures.accepted_invalid.append(label)
                else:
                    figures.rejected_valid.append(label)
    return figures


@pytest.mark.parametrize("draft", DRAFTS)
def test_official_suite(draft: str, suite_report: list[str]) -> None:
    figures = run_draft(draft)
    suite_report.append(figures.line(draft))
    assert figures.cases > 900
    assert figures.unnamed == []
    assert figures.accepted_invalid == [], "\n".join(figures.accepted_invalid)
    assert figures.correct >= 0.99 * figures.cases, "\n".join(
        figures.rejected_valid + figures.refused
    )
    # Everything refused is a reference this library will not fetch: a metaschema.
    assert all("metaschema" in label for label in figures.refused), figures.refused


@pytest.mark.parametrize("draft", DRAFTS)
def test_optional_tests_toolwire_implements(draft: str, suite_report: list[str]) -> None:
    figures = run_draft(draft, optional=True)
    suite_report.append(
        figures.line(f"{draft} optional, the {len(OPTIONAL)} files toolwire covers")
    )
    assert figures.cases > 100
    assert figures.correct == figures.cases, "\n".join(
        figures.accepted_invalid + figures.rejected_valid + figures.refused
    )


def test_refusals_name_keyword_and_place() -> None:
    with pytest.raises(SchemaError, match=r"^\$ref at #/properties/a: cannot resolve"):
        SchemaValidator({"properties": {"a": {"$ref": "https://example.com/nowhere.json"}}})
    with pytest.raises(SchemaError, match=r"^pattern at #/properties/b: .*\\p\{Script=Greek\}"):
        SchemaValidator({"properties": {"b": {"pattern": r"\p{Script=Greek}"}}})
