"""make_snippet: one line of body text that shows why a page matched."""

from __future__ import annotations

import re

from .model import Match, Page
from .text import collapse

SNIPPET_CHARS = 160
_SKIP_LINE = re.compile(r"^\s*(#{1,6}\s|```|~~~|---\s*$|\|?\s*:?-{3,}|<!--|%%)")


def make_snippet(page: Page, matched: tuple[Match, ...]) -> str:
    """The body line around the first occurrence of the best body match, else the first paragraph."""
    word = _best_body_word(matched)
    if word:
        line = _line_with_word(page.body, word)
        if line is not None:
            return line
    return first_paragraph(page)


def _best_body_word(matched: tuple[Match, ...]) -> str | None:
    # matched is already ordered by points desc: the first body component is the best one.
    for channel in ("body-term", "synonym-term", "stem-term"):
        for m in matched:
            if m.channel == channel and m.field == "body":
                return m.via or m.term
    return None


def _line_with_word(body: str, word: str) -> str | None:
    pattern = re.compile(r"(?<![^\W_])" + r"[\W_]+".join(map(re.escape, word.split())) + r"(?![^\W_])", re.I)
    for raw in body.splitlines():
        found = pattern.search(raw)
        if found is None:
            continue
        line = collapse(raw)
        hit = pattern.search(line)
        start = hit.start() if hit else 0
        return _window(line, start)
    return None


def _window(line: str, at: int) -> str:
    if len(line) <= SNIPPET_CHARS:
        return line
    start = max(0, min(at - SNIPPET_CHARS // 3, len(line) - SNIPPET_CHARS))
    if start > 0:
        space = line.find(" ", start)
        if 0 <= space < at:
            start = space + 1
    piece = line[start : start + SNIPPET_CHARS]
    if start + SNIPPET_CHARS < len(line):
        cut = piece.rfind(" ")
        piece = (piece[:cut] if cut > SNIPPET_CHARS // 2 else piece) + "…"
    return ("…" + piece) if start > 0 else piece


def first_paragraph(page: Page) -> str:
    """The page's first paragraph of prose (headings, code and rules skipped), bounded."""
    lines: list[str] = []
    fence = False
    for raw in page.body.splitlines():
        stripped = raw.strip()
        if stripped.startswith(("```", "~~~")):
            fence = not fence
            continue
        if fence:
            continue
        if not stripped:
            if lines:
                break
            continue
        if _SKIP_LINE.match(raw):
            if lines:
                break
            continue
        lines.append(stripped)
    return _window(collapse(" ".join(lines)), 0)
