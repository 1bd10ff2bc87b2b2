"""make_snippet: one line of body text that shows why a page matched."""

from __future__ import annotations

import re

from .model import Match, Page
from .text import collapse

SNIPPET_CHARS = 160
_SKIP_LINE = re.compile(r"^\s*(#{1,6}\s|```|~~~|---\s*$|\|?\s*:?-{3,}|<!--|%%)")


def make_snippet(page: Page, matched: tuple[Match, ...]) -> str:
    """The body line that holds the most of the matched body words (the best one breaking ties,
    then the first such line), windowed around the best word there; else the first paragraph."""
    words = _body_words(matched)
    if words:
        line = _line_with_words(page.body, words)
        if line is not None:
            return line
    return first_paragraph(page)


_BODY_CHANNELS = ("body-term", "synonym-term", "stem-term", "folded-term", "fuzzy-term")


def _body_words(matched: tuple[Match, ...]) -> list[str]:
    """The words the body matched through, best first (``matched`` is ordered by points)."""
    words: list[str] = []
    for channel in _BODY_CHANNELS:
        for m in matched:
            if m.channel == channel and m.field == "body":
                word = m.via or m.term
                if word not in words:
                    words.append(word)
    return words


def _word_pattern(word: str) -> re.Pattern[str]:
    return re.compile(r"(?<![^\W_])" + r"[\W_]+".join(map(re.escape, word.split())) + r"(?![^\W_])", re.I)


def _line_with_words(body: str, words: list[str]) -> str | None:
    patterns = [_word_pattern(w) for w in words]
    best_key, best_raw = None, None
    for raw in body.splitlines():
        hits = [i for i, pattern in enumerate(patterns) if pattern.search(raw)]
        if not hits:
            continue
        key = (len(hits), -hits[0])  # more words, then a better word
        if best_key is None or key > best_key:
            best_key, best_raw = key, raw
            if len(hits) == len(patterns) and hits[0] == 0:
                break  # every word on one line: nothing can beat it
    if best_raw is None:
        return None
    line = collapse(best_raw)
    first = min((m.start() for p in patterns if (m := p.search(line))), default=0)
    return _window(line, first)


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
