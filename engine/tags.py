"""Tag completion: is the cursor typing a tag (``#ta`` in the body, or an item of the
frontmatter ``tags`` list), and which tags to offer, ranked by how many pages use them.

Columns are UTF-16 code units, as LSP sends them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .locate import frontmatter_end, frontmatter_key_at
from .text import index_of_utf16, utf16_col
from .vault import Vault

_TAG_CHAR = re.compile(r"[\w/\-]")
_FM_CHAR = re.compile(r"""[^\s,\[\]"'#]""")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


@dataclass(frozen=True, slots=True)
class TagChoice:
    """A tag to offer (casefolded, no ``#``) and how many pages carry it."""

    tag: str
    pages: int


@dataclass(frozen=True, slots=True)
class TagCompletion:
    """Tags for the word being typed: replace columns [``start``, ``end``) of the line with one.

    ``typed`` is the replaced text before the cursor (in the frontmatter it may start with
    ``#``); ``frontmatter`` says the word is a frontmatter list item (inserted without ``#``,
    which YAML would read as a comment).
    """

    typed: str
    start: int
    end: int
    frontmatter: bool
    choices: tuple[TagChoice, ...]


def _in_fence(lines: list[str], first: int, line: int) -> bool:
    fence: str | None = None
    for text in lines[first:line]:
        m = _FENCE.match(text)
        if fence is None:
            if m:
                fence = m.group(1)
        elif text.strip().startswith(fence[0] * len(fence)) and not text.strip().lstrip(fence[0]).strip():
            fence = None
    return fence is not None


def _word_bounds(text: str, cursor: int, pattern: re.Pattern[str]) -> tuple[int, int]:
    start = cursor
    while start > 0 and pattern.match(text[start - 1]):
        start -= 1
    end = cursor
    while end < len(text) and pattern.match(text[end]):
        end += 1
    return start, end


def tag_choices(vault: Vault, typed: str, path: str | None = None, limit: int = 50) -> tuple[TagChoice, ...]:
    """Tags whose name or any ``/`` segment starts with ``typed``, most-used first, then by name.

    The tag being typed in ``path`` itself (carried by no other page) is not offered.
    """
    want = typed.casefold().lstrip("#")
    out = []
    for tag, holders in vault.tag_pages.items():
        if want and not (tag.startswith(want) or f"/{want}" in f"/{tag}"):
            continue
        if tag == want and set(holders) <= {path}:
            continue
        out.append(TagChoice(tag, len(holders)))
    out.sort(key=lambda c: (-c.pages, c.tag))
    return tuple(out[:limit] if limit > 0 else out)


def tag_completion(
    vault: Vault, path: str | None, lines: list[str], line: int, col: int, limit: int = 50
) -> TagCompletion | None:
    """The tags to offer at (line, UTF-16 column) of a page whose text is ``lines``, or None
    when the cursor is not on a tag: after ``#`` in the body (not in code, not a heading's
    ``# ``), or on an item of the frontmatter ``tags`` key."""
    if not 0 <= line < len(lines):
        return None
    text = lines[line].rstrip("\r\n")
    cursor = index_of_utf16(text, col)
    close = frontmatter_end(lines)
    if close and line <= close:
        if frontmatter_key_at(lines, line) not in ("tags", "tag"):
            return None
        colon = text.find(":")
        if not text[:1].isspace() and not text.startswith("-") and (colon < 0 or cursor <= colon):
            return None
        start, end = _word_bounds(text, cursor, _FM_CHAR)
        if start > 0 and text[start - 1] == "#":
            start -= 1  # a '#' typed out of habit is replaced too
        typed = text[start:cursor]
        return TagCompletion(
            typed, utf16_col(text, start), utf16_col(text, end), True, tag_choices(vault, typed, path, limit)
        )
    start, end = _word_bounds(text, cursor, _TAG_CHAR)
    if start == 0 or text[start - 1] != "#":
        return None
    hash_at = start - 1
    if start == end and cursor < len(text) and text[cursor] in " \t":
        return None  # '# ' opens a heading, not a tag
    if hash_at > 0 and not (text[hash_at - 1].isspace() or text[hash_at - 1] in "(,;"):
        return None
    if text[:hash_at].count("`") % 2 == 1 or _in_fence(lines, close + 1 if close else 0, line):
        return None
    typed = text[start:cursor]
    return TagCompletion(typed, utf16_col(text, start), utf16_col(text, end), False, tag_choices(vault, typed, path, limit))
