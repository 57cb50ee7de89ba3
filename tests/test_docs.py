"""Every ```python block in docs/*.md and README.md runs (```py blocks need a network or keys)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCKS = [
    (page, i, code)
    for page in PAGES
    for i, code in enumerate(
        re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"), re.M | re.S)
    )
]


def test_every_page_has_runnable_snippets() -> None:
    pages_with_code = {page.name for page, _, _ in BLOCKS}
    assert pages_with_code == {page.name for page in PAGES}


@pytest.mark.parametrize(
    ("page", "index", "code"), BLOCKS, ids=[f"{p.stem}-{i}" for p, i, _ in BLOCKS]
)
def test_snippet_runs(page: Path, index: int, code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("OPENWEATHER_API_KEY", "BRAVE_API_KEY", "TAVILY_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    exec(compile(code, f"{page.name}[{index}]", "exec"), {"__name__": "__docs__"})
