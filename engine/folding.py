"""Folding ranges of a page: its frontmatter and each heading's section (``navigate.folds``),
code fences and callouts (``> [!type]`` and the quote lines after it).

Lines are 0-based, first and last line of each range. Parsing never fails: odd Markdown gives
fewer ranges.
"""

from __future__ import annotations

import re

from .model import Page
from .navigate import Fold, folds

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CALLOUT = re.compile(r"^ {0,3}>\s*\[![\w-]*\][+-]?")
_QUOTE = re.compile(r"^ {0,3}>")


def folding_ranges(page: Page) -> tuple[Fold, ...]:
    """The page's folds (``navigate.folds``: frontmatter and sections, then code fences and
    callouts), sorted by first line then by last line (outer first)."""
    out = list(folds(page))
    lines = page.body.split("\n")
    base = page.body_line
    fence: tuple[str, int] | None = None
    callout: int | None = None
    for i, line in enumerate(lines):
        if fence is not None:
            stripped = line.strip()
            if stripped.startswith(fence[0]) and not stripped.lstrip(fence[0][0]).strip():
                if i > fence[1]:
                    out.append(Fold(base + fence[1], base + i, "code"))
                fence = None
            continue
        if callout is not None and not _QUOTE.match(line):
            if i - 1 > callout:
                out.append(Fold(base + callout, base + i - 1, "callout"))
            callout = None
        m = _FENCE.match(line)
        if m:
            fence = (m.group(1), i)
            continue
        if _CALLOUT.match(line):
            if callout is not None and i - 1 > callout:
                out.append(Fold(base + callout, base + i - 1, "callout"))
            callout = i
            continue
    last = len(lines) - 1
    while callout is not None and last > callout and not lines[last].strip():
        last -= 1
    if callout is not None and last > callout:
        out.append(Fold(base + callout, base + last, "callout"))
    out.sort(key=lambda f: (f.start_line, -f.end_line))
    return tuple(out)
