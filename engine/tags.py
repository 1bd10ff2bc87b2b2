"""Tags while writing: is the cursor typing a tag (``#ta`` in the body, or an item of the
frontmatter ``tags`` list), and which tags to offer, ranked by how many pages use them; and
renaming a tag across the vault (its children ``#tag/sub`` with it).

Columns are UTF-16 code units, as LSP sends them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .edits import Change, EditError, TextEdit
from .locate import Texts, frontmatter_end, frontmatter_key_at, text_at
from .navigate import tag_references, target_at
from .model import Span
from .page import parse_page
from .text import index_of_utf16, utf16_col
from .vault import Vault

_TAG_CHAR = re.compile(r"[\w/\-]")
_FM_CHAR = re.compile(r"""[^\s,\[\]"'#]""")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_QUOTE = re.compile(r"^ {0,3}((?:>[ \t]?)+)")  # block quote and callout markers, nested
_TAG_NAME = re.compile(r"[\w\-]+(?:/[\w\-]+)*")


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


def _unquoted(text: str) -> str:
    """The line without its block quote or callout markers (a fence may stand inside them)."""
    q = _QUOTE.match(text)
    return text[q.end():] if q else text


def _in_fence(lines: list[str], first: int, line: int) -> bool:
    fence: str | None = None
    for text in lines[first:line]:
        text = _unquoted(text)
        m = _FENCE.match(text)
        if fence is None:
            if m:
                fence = m.group(1)
        elif text.strip().startswith(fence[0] * len(fence)) and not text.strip().lstrip(fence[0]).strip():
            fence = None
    return fence is not None


def _in_code_span(text: str, at: int) -> bool:
    """Whether index ``at`` of ``text`` lies inside an inline code span (a run of backticks
    closed by the next run of the same length, as CommonMark matches them)."""
    runs = [(m.start(), m.end()) for m in re.finditer(r"`+", text)]
    i = 0
    while i < len(runs):
        start, end = runs[i]
        closer = next((k for k in range(i + 1, len(runs)) if runs[k][1] - runs[k][0] == end - start), None)
        if closer is None:
            i += 1
            continue
        if start <= at < runs[closer][1]:
            return True
        i = closer + 1
    return False


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
    if _in_code_span(text, hash_at) or _in_fence(lines, close + 1 if close else 0, line):
        return None
    typed = text[start:cursor]
    return TagCompletion(typed, utf16_col(text, start), utf16_col(text, end), False, tag_choices(vault, typed, path, limit))


def tag_at(vault: Vault, path: str, line: int, char: int, text: str | None = None) -> tuple[str, Span] | None:
    """The tag at the position (inline ``#tag`` or a frontmatter ``tags`` item): its name, as
    written without ``#``, and its span; None elsewhere."""
    target = target_at(vault, path, line, char, text)
    if target is None or target.kind != "tag" or target.tag is None:
        return None
    return target.tag, target.span


def check_tag_name(name: str) -> str:
    """``name`` without a leading ``#``, or EditError when it cannot be a tag: letters, digits,
    ``_``, ``-`` and ``/`` between parts, not only digits."""
    name = name.strip().lstrip("#")
    if not _TAG_NAME.fullmatch(name) or name.startswith("-") or not re.search(r"[^\W\d_]|[-_]", name.replace("/", "")):
        raise EditError(f"“{name}” cannot be a tag: use letters, digits, _, - and / between parts (not only digits).")
    return name


def rename_tag(vault: Vault, old: str, new: str, texts: Texts) -> Change:
    """Rename tag ``old`` and the tags below it (``old/sub`` becomes ``new/sub``) wherever they
    are written: inline ``#old`` and the frontmatter ``tags`` lists. Each edit is checked
    against the page's current text, and each edited page is parsed again: its links must be
    the same and its tags exactly the renamed ones, or nothing is changed (EditError)."""
    old = old.strip().lstrip("#").casefold()
    new = check_tag_name(new)
    if new.casefold() == old:
        raise EditError(f"The tag is already called “{new}”.")
    if new.casefold().startswith(old + "/"):
        raise EditError(f"“{new}” is below “{old}”: rename it in two steps. Nothing was changed.")

    def renamed(name: str) -> str:
        low = name.casefold()
        if low == old or low.startswith(old + "/"):
            return new + name[len(old):]
        return name

    cache: dict[str, str] = {}
    edits: list[TextEdit] = []
    for loc in tag_references(vault, old, texts):
        if loc.path not in cache:
            text = texts(loc.path)
            if text is None:
                raise EditError(f"Cannot read {loc.path}; nothing was changed.")
            cache[loc.path] = text.removeprefix("\ufeff")
        written = text_at(cache[loc.path], loc.span) or ""
        hashed = written.startswith("#")
        name = written[1:] if hashed else written
        low = name.casefold().rstrip("/")
        if not (low == old or low.startswith(old + "/")):
            raise EditError(
                f"{loc.path} has changed since it was indexed (expected the tag “{old}” at line "
                f"{loc.span.start_line + 1}); save or reload it and try again. Nothing was changed."
            )
        edits.append(TextEdit(loc.path, loc.span, ("#" if hashed else "") + renamed(name)))
    for path in sorted({e.path for e in edits}):
        _check_page(vault, path, cache[path], [e for e in edits if e.path == path], renamed)
    return Change(edits=tuple(sorted(edits, key=lambda e: (e.path, e.span.start_line, e.span.start_char))))


def _apply(text: str, edits: list[TextEdit]) -> str:
    lines = re.split(r"(\r\n|\r|\n)", text)
    body, seps = lines[0::2], lines[1::2]
    for e in sorted(edits, key=lambda e: (e.span.start_line, e.span.start_char), reverse=True):
        row = body[e.span.start_line]
        a, b = index_of_utf16(row, e.span.start_char), index_of_utf16(row, e.span.end_char)
        body[e.span.start_line] = row[:a] + e.new_text + row[b:]
    return "".join(x + (seps[i] if i < len(seps) else "") for i, x in enumerate(body))


def _check_page(vault: Vault, path: str, text: str, edits: list[TextEdit], renamed) -> None:
    """Nothing but the tags changed: the page parsed again has the same links, the renamed tags."""
    before = parse_page(path, text, label_first=vault.label_first)
    after = parse_page(path, _apply(text, edits), label_first=vault.label_first)
    key = [(link.kind, link.target, link.heading, link.block, link.label) for link in (*before.edges, *before.links)]
    if key != [(link.kind, link.target, link.heading, link.block, link.label) for link in (*after.edges, *after.links)]:
        raise EditError(f"Renaming the tag would change a link in {path}; nothing was changed.")
    if tuple(sorted({renamed(t).casefold() for t in before.tags})) != after.tags:
        raise EditError(f"Renaming the tag would change other tags in {path}; nothing was changed.")
