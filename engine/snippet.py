"""make_snippet: one line of body text that shows why a page matched."""

from __future__ import annotations

import bisect
import re
from functools import lru_cache
from itertools import accumulate

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
    """The first of the lines holding the most words, the best word breaking ties.

    A one-word pattern cannot match across a line break, so its matches are found in the whole
    body at once (in C) and mapped to their lines; a pattern of several words (a synonym such as
    "graph rag") could, so it is tried line by line.
    """
    patterns = [_word_pattern(w) for w in words]
    if _OTHER_BREAKS.search(body) is None and all(" " not in w.strip() for w in words):
        return _line_with_words_lf(body, words, patterns)
    lines = body.splitlines()
    starts: list[int] | None = None
    lowered = body.lower() if body.isascii() else None
    found: dict[int, set[int]] = {}  # line number -> the patterns that match in it
    for i, (word, pattern) in enumerate(zip(words, patterns)):
        if " " in word.strip():
            for n, raw in enumerate(lines):
                if pattern.search(raw):
                    found.setdefault(n, set()).add(i)
            continue
        if starts is None:
            starts = [0, *accumulate(map(len, body.splitlines(True)))]
        for at in _word_starts(body, lowered, word):
            found.setdefault(bisect.bisect_right(starts, at) - 1, set()).add(i)
    if not found:
        return None
    # more words, then a better word, then the first such line
    best = min(found, key=lambda n: (-len(found[n]), min(found[n]), n))
    return _shown(lines[best], patterns)


# every line boundary ``str.splitlines`` knows but ``\n``
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def _line_with_words_lf(body: str, words: list[str], patterns: list[re.Pattern[str]]) -> str | None:
    """``_line_with_words`` for a body whose only line breaks are ``\n`` and words of one token
    each: each match placed on its line by the breaks before it, and only the line chosen cut
    out (the same line: ``splitlines`` splits such a body at its ``\n`` only)."""
    lowered = body.lower() if body.isascii() else None
    found: dict[int, set[int]] = {}  # line start offset -> the patterns that match in that line
    rfind = body.rfind
    for i, word in enumerate(words):
        for at in _word_starts(body, lowered, word):
            found.setdefault(rfind("\n", 0, at) + 1, set()).add(i)
    if not found:
        return None
    # more words, then a better word, then the first such line (line order is offset order)
    best = min(found, key=lambda n: (-len(found[n]), min(found[n]), n))
    end = body.find("\n", best)
    return _shown(body[best:] if end < 0 else body[best:end], patterns)


def _shown(raw: str, patterns: list[re.Pattern[str]]) -> str:
    """The line chosen, collapsed and windowed around the first match of a word."""
    line = collapse(raw)
    first = min((m.start() for p in patterns if (m := p.search(line))), default=0)
    return _window(line, first)


def _word_starts(body: str, lowered: str | None, word: str) -> list[int]:
    """Where ``_word_pattern(word)`` matches in ``body`` (one word): the word, case aside, with
    no letter or digit on either side. ``lowered`` is ``body.lower()`` for an ASCII body, where
    a plain ``find`` does it; otherwise the pattern without its look-behind (much faster for the
    regex engine) finds the places and the character before is checked here. Inside a match
    every character is a letter or digit, so no skipped overlap could have matched."""
    out = []
    if lowered is not None and word.isascii():
        w = word.lower()
        n = len(w)
        at = lowered.find(w)
        while at >= 0:
            end = at + n
            if (at == 0 or not lowered[at - 1].isalnum()) and (end == len(lowered) or not lowered[end].isalnum()):
                out.append(at)
            at = lowered.find(w, at + 1)
        return out
    for m in _loose_pattern(word).finditer(body):
        at = m.start()
        if at == 0 or not body[at - 1].isalnum():
            out.append(at)
    return out


@lru_cache(maxsize=1024)
def _loose_pattern(word: str) -> re.Pattern[str]:
    return re.compile(re.escape(word) + r"(?![^\W_])", re.I)


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
