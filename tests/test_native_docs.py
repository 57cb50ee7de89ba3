"""docs/native-tools.md shows the support matrix, the forcing table and the fee table exactly as the
profiles make them (a drift test: edit a profile, regenerate the tables)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolwire.models._matrix import (
    fee_table_markdown,
    forcing_matrix_markdown,
    refusal_reasons_markdown,
    support_matrix_markdown,
)

PAGE = Path(__file__).resolve().parents[1] / "docs" / "native-tools.md"


@pytest.mark.parametrize(
    ("marker", "generate"),
    [
        ("matrix", support_matrix_markdown),
        ("forcing", forcing_matrix_markdown),
        ("fees", fee_table_markdown),
        ("reasons", refusal_reasons_markdown),
    ],
)
def test_docs_table_matches_the_code(marker: str, generate: object) -> None:
    text = PAGE.read_text(encoding="utf-8")
    found = re.search(rf"<!-- {marker}:start -->\n(.*?)<!-- {marker}:end -->", text, re.S)
    assert found, f"docs/native-tools.md lost its {marker} markers"
    assert callable(generate)
    assert found.group(1) == generate(), (
        f"the {marker} table in docs/native-tools.md differs from the code: paste the output of "
        f"toolwire.models._matrix.{generate.__name__}() between the markers"  # pyright: ignore
    )
