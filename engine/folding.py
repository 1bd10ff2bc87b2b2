"""Folding ranges of a page: its frontmatter, each heading's section, code fences and callouts.

Lines are 0-based; a range runs from its first line to its last, both kept visible at the first
(as LSP's ``foldingRange`` says). Parsing never fails: odd Markdown gives fewer ranges.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]|$)")
_CALLOUT = re.compile(r"^ {0,3}>\s*\[![\w-]*\][+-]?")
_QUOTE = re.compile(r"^ {0,3}>")


@dataclass(frozen=True, slots=True)
class Fold:
    """A foldable range: first and last line (0-based) and what it is: ``frontmatter``,
    ``heading``, ``code`` or ``callout``."""

    start: int
    end: int
    kind: str


def folding_ranges(text: str) -> list[Fold]:
    """The page's folds, sorted by first line then by last line (outer first)."""
    lines = re.split(r"\r\n|\r|\n", text.removeprefix("\ufeff"))
    out: list[Fold] = []
    first = 0
    if lines and lines[0].rstrip() == "---":
        for i in range(1, len(lines)):
            if lines[i].rstrip() in ("---", "..."):
                out.append(Fold(0, i, "frontmatter"))
                first = i + 1
                break
    headings: list[tuple[int, int]] = []  # (line, level)
    fence: tuple[str, int] | None = None
    callout: int | None = None
    for i in range(first, len(lines)):
        line = lines[i]
        if fence is not None:
            stripped = line.strip()
            if stripped.startswith(fence[0]) and not stripped.lstrip(fence[0][0]).strip():
                if i > fence[1]:
                    out.append(Fold(fence[1], i, "code"))
                fence = None
            continue
        if callout is not None and not _QUOTE.match(line):
            if i - 1 > callout:
                out.append(Fold(callout, i - 1, "callout"))
            callout = None
        m = _FENCE.match(line)
        if m:
            fence = (m.group(1), i)
            continue
        if _CALLOUT.match(line):
            if callout is not None and i - 1 > callout:
                out.append(Fold(callout, i - 1, "callout"))
            callout = i
            continue
        h = _ATX.match(line)
        if h:
            headings.append((i, len(h.group(1))))
    last = len(lines) - 1
    if callout is not None and last > callout:
        out.append(Fold(callout, last, "callout"))
    for n, (line, level) in enumerate(headings):
        end = last
        for later, later_level in headings[n + 1 :]:
            if later_level <= level:
                end = later - 1
                break
        while end > line and not lines[end].strip():
            end -= 1
        if end > line:
            out.append(Fold(line, end, "heading"))
    out.sort(key=lambda f: (f.start, -f.end))
    return out
