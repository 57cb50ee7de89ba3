"""HTML to readable Markdown or plain text, with the standard library's `html.parser`.

Not a browser: no scripts, no CSS. It keeps what a reader needs (headings, paragraphs, lists,
links, emphasis, code, quotes, simple tables, image alt text) and drops the rest.
"""

from __future__ import annotations

import re
import urllib.parse
from html.parser import HTMLParser

__all__ = ["HtmlDocument", "html_to_markdown", "html_to_text", "strip_tags"]

_SKIP = frozenset(
    {"script", "style", "noscript", "template", "svg", "math", "iframe", "object", "canvas",
     "head", "select", "button", "form", "nav", "footer", "aside"}
)  # fmt: skip
_BLOCK = frozenset(
    {"p", "div", "section", "article", "main", "header", "figure", "figcaption", "address",
     "details", "summary", "dl", "dt", "dd", "table", "tr", "ul", "ol", "hr", "center"}
)  # fmt: skip
_VOID = frozenset(
    {"br", "img", "hr", "meta", "link", "input", "area", "base", "col", "embed", "source",
     "track", "wbr", "param"}
)  # fmt: skip
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}


class HtmlDocument(HTMLParser):
    """Parses a page into Markdown (or plain text) plus its title.

    Args:
        base_url: Resolves relative links.
        markdown: Markdown when true, plain text when false.
    """

    def __init__(self, base_url: str = "", *, markdown: bool = True) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.markdown = markdown
        self.title = ""
        self._out: list[str] = []
        self._skip_depth = 0
        self._in_title = False
        self._pre = 0
        self._lists: list[list[int | str]] = []  # [kind, counter] per open list
        self._links: list[tuple[str, int]] = []  # (href, output index where the text starts)
        self._cell = 0
        self._row_cells: list[int] = []
        self._table_rows = 0

    # --- output helpers -------------------------------------------------------------------

    def _emit(self, text: str) -> None:
        self._out.append(text)

    def _break(self, lines: int = 2) -> None:
        self._out.append("\n" * lines)

    # --- parser callbacks -----------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP and tag != "head":
            if tag not in _VOID:
                self._skip_depth += 1
            return
        if tag == "title":
            self._in_title = True
            return
        if self._skip_depth:
            return
        attributes = {k: v or "" for k, v in attrs}
        md = self.markdown
        if tag in _HEADINGS:
            self._break()
            if md:
                self._emit("#" * _HEADINGS[tag] + " ")
        elif tag == "br":
            self._emit("\n")
        elif tag == "hr":
            self._break()
            self._emit("---" if md else "")
            self._break()
        elif tag in ("ul", "ol"):
            if not self._lists:
                self._break(1)
            self._lists.append([tag, 0])
        elif tag == "li":
            self._break(1)
            indent = "  " * max(0, len(self._lists) - 1)
            if self._lists and self._lists[-1][0] == "ol":
                count = int(self._lists[-1][1]) + 1
                self._lists[-1][1] = count
                self._emit(f"{indent}{count}. ")
            else:
                self._emit(f"{indent}- ")
        elif tag == "pre":
            self._pre += 1
            self._break()
            if md:
                self._emit("```\n")
        elif tag == "code" and not self._pre:
            if md:
                self._emit("`")
        elif tag in ("strong", "b") and md:
            self._emit("**")
        elif tag in ("em", "i") and md:
            self._emit("*")
        elif tag == "blockquote":
            self._break()
            if md:
                self._emit("> ")
        elif tag == "a":
            self._links.append((attributes.get("href", ""), len(self._out)))
        elif tag == "img":
            alt = attributes.get("alt", "").strip()
            if alt:
                self._emit(f"[image: {alt}]")
        elif tag == "tr":
            self._break(1)
            self._row_cells.append(0)
            self._cell = 0
        elif tag in ("td", "th"):
            self._emit("| " if self._cell == 0 else " | ")
            self._cell += 1
        elif tag in _BLOCK:
            self._break()

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP and tag != "head":
            self._skip_depth = max(0, self._skip_depth - 1)
            return
        if tag == "title":
            self._in_title = False
            return
        if self._skip_depth:
            return
        md = self.markdown
        if tag in _HEADINGS:
            self._break()
        elif tag in ("ul", "ol"):
            if self._lists:
                self._lists.pop()
            self._break(1)
        elif tag == "pre":
            self._pre = max(0, self._pre - 1)
            if md:
                self._emit("\n```")
            self._break()
        elif tag == "code" and not self._pre:
            if md:
                self._emit("`")
        elif tag in ("strong", "b") and md:
            self._emit("**")
        elif tag in ("em", "i") and md:
            self._emit("*")
        elif tag == "a" and self._links:
            href, start = self._links.pop()
            self._close_link(href, start)
        elif tag == "tr":
            if self._cell:
                self._emit(" |")
                if md and self._table_rows == 0:
                    self._emit("\n" + "|" + " --- |" * self._cell)
                self._table_rows += 1
            self._cell = 0
        elif tag == "table":
            self._table_rows = 0
            self._break()
        elif tag in _BLOCK or tag == "blockquote":
            self._break()

    def _close_link(self, href: str, start: int) -> None:
        if not self.markdown or not href or href.startswith(("#", "javascript:", "mailto:")):
            return
        text = "".join(self._out[start:]).strip()
        if not text:
            return
        url = urllib.parse.urljoin(self.base_url, href) if self.base_url else href
        del self._out[start:]
        self._emit(f"[{text}]({url})")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
            return
        if self._skip_depth:
            return
        if self._pre:
            self._emit(data)
            return
        text = re.sub(r"\s+", " ", data)
        at_line_start = not self._out or self._out[-1].endswith(("\n", "> ", "- ", ". ", "# "))
        if at_line_start:
            text = text.lstrip()
        if text.strip() or (self._out and not self._out[-1].endswith((" ", "\n"))):
            self._emit(text)

    # --- result ---------------------------------------------------------------------------

    def result(self) -> str:
        """The converted document, with blank lines collapsed."""
        out: list[str] = []
        for line in "".join(self._out).split("\n"):
            line = line.rstrip()
            if line or (out and out[-1]):
                out.append(line)
        return "\n".join(out).strip()


def _convert(html: str, base_url: str, markdown: bool) -> tuple[str, str]:
    parser = HtmlDocument(base_url, markdown=markdown)
    parser.feed(html)
    parser.close()
    return " ".join(parser.title.split()), parser.result()


def html_to_markdown(html: str, base_url: str = "") -> tuple[str, str]:
    """Convert HTML to Markdown; returns `(title, markdown)`."""
    return _convert(html, base_url, True)


def html_to_text(html: str, base_url: str = "") -> tuple[str, str]:
    """Convert HTML to plain text; returns `(title, text)`."""
    return _convert(html, base_url, False)


def strip_tags(html: str) -> str:
    """The text of an HTML fragment (e.g. a search snippet), whitespace collapsed."""
    return " ".join(html_to_text(html)[1].split())
