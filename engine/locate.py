"""Where things are written in a page's text: frontmatter values, heading text, link anchors.

``Page`` keeps spans for links, headings and inline tags, but not for frontmatter values
(the title, aliases, tags); those are found here in the document text, when the caller has it.
Every function takes text or a parsed page and returns spans in 0-based lines and UTF-16
columns; none raises on odd input (a thing that cannot be found is ``None`` or left out).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .model import Heading, Link, Page, Span, Tag
from .text import index_of_utf16, utf16_col, utf16_len

Texts = Callable[[str], "str | None"]
"""The current text of a page by vault-relative path (an open buffer's, else the disk's), or None."""

_LINE_SPLIT = re.compile(r"\r\n|\r|\n")
_TOP_KEY = re.compile(r"^([A-Za-z_][\w\- ]*?)\s*:(?=\s|$)")
_ITEM = re.compile(r"""#?([^\s,\[\]"'#][^\s,\[\]"']*)""")
_ATX_PREFIX = re.compile(r"^ {0,3}#{1,6}[ \t]+")


def split_lines(text: str) -> list[str]:
    """The document's lines as the parser counts them (``\\r\\n``, ``\\r`` and ``\\n`` end a line)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return _LINE_SPLIT.split(text)


def frontmatter_end(lines: list[str]) -> int:
    """The index of the closing ``---`` line, or 0 when the page has no (closed) frontmatter."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            return i
    return 0


def frontmatter_key_at(lines: list[str], line: int) -> str | None:
    """The top-level frontmatter key whose value covers ``line``, or None outside frontmatter."""
    close = frontmatter_end(lines)
    if not 0 < line < close:
        return None
    for i in range(line, 0, -1):
        text = lines[i]
        m = _TOP_KEY.match(text)
        if m:
            return m.group(1).strip()
        if text.strip() and not text[:1].isspace() and not text.startswith("-"):
            return None
    return None


def _key_lines(lines: list[str], keys: tuple[str, ...]) -> list[tuple[int, int]]:
    """(line, first value column in code points) for each line of the given keys' values."""
    close = frontmatter_end(lines)
    out: list[tuple[int, int]] = []
    inside = False
    for i in range(1, close):
        text = lines[i]
        m = _TOP_KEY.match(text)
        if m:
            inside = m.group(1).strip() in keys
            if inside:
                out.append((i, m.end()))
        elif text.strip() and not text[:1].isspace() and not text.startswith("-"):
            inside = False
        elif inside and text.strip():
            stripped = text.lstrip()
            col = len(text) - len(stripped)
            if stripped.startswith("- ") or stripped == "-":
                col += 1
            out.append((i, col))
    return out


def _items(line: str, start: int) -> list[tuple[int, int]]:
    """(start, end) code-point ranges of the list items written on ``line`` from ``start``."""
    value = line[start:]
    hash_at = re.search(r"(^|\s)#\s", value)  # a YAML comment, not a tag
    if hash_at:
        value = value[: hash_at.start()]
    return [(start + m.start(1), start + m.end(1)) for m in _ITEM.finditer(value)]


def frontmatter_tags(text: str) -> list[Tag]:
    """The tags written in the frontmatter ``tags``/``tag`` key, each with its span (no ``#``)."""
    lines = split_lines(text)
    out = []
    for i, col in _key_lines(lines, ("tags", "tag")):
        line = lines[i]
        for a, b in _items(line, col):
            out.append(Tag(line[a:b].rstrip("/"), Span(i, utf16_col(line, a), i, utf16_col(line, b))))
    return out


def frontmatter_aliases(text: str) -> list[tuple[str, Span]]:
    """The aliases written in the frontmatter ``aliases``/``alias`` key, each with its span."""
    lines = split_lines(text)
    out = []
    for i, col in _key_lines(lines, ("aliases", "alias")):
        line = lines[i]
        value = line[col:].strip()
        if not value:
            continue
        lead = col + (len(line[col:]) - len(line[col:].lstrip()))
        if value.startswith("["):
            parts = [(m.start(), m.group()) for m in re.finditer(r"[^,\[\]]+", line[lead:])]
        else:
            parts = [(0, line[lead:].rstrip())]
        for offset, part in parts:
            name = part.strip().strip("\"'").strip()
            if not name:
                continue
            a = line.find(name, lead + offset)
            if a >= 0:
                out.append((name, Span(i, utf16_col(line, a), i, utf16_col(line, a + len(name)))))
    return out


def frontmatter_value(text: str, key: str) -> Span | None:
    """The span of a scalar ``key: value`` in the frontmatter (inside quotes when quoted)."""
    lines = split_lines(text)
    close = frontmatter_end(lines)
    for i in range(1, close):
        line = lines[i]
        m = _TOP_KEY.match(line)
        if not m or m.group(1).strip() != key:
            continue
        a = m.end()
        while a < len(line) and line[a] in " \t":
            a += 1
        b = len(line.rstrip())
        if a < len(line) and line[a] in "\"'":
            quote = line[a]
            end = line.rfind(quote)
            if end > a:
                a, b = a + 1, end
        else:
            comment = re.search(r"\s#", line[a:])
            if comment:
                b = a + comment.start()
        if b < a:
            return None
        return Span(i, utf16_col(line, a), i, utf16_col(line, b))
    return None


def page_line(page: Page, line: int, text: str | None = None) -> str | None:
    """The text of one document line: from the page's body, else from ``text`` when given."""
    if line >= page.body_line:
        lines = page.body.split("\n")
        i = line - page.body_line
        return lines[i] if i < len(lines) else None
    if text is None:
        return None
    lines = split_lines(text)
    return lines[line] if 0 <= line < len(lines) else None


def heading_text_span(page: Page, heading: Heading) -> Span:
    """The span of a heading's text (without ``#`` marks), falling back to its whole line."""
    line = page_line(page, heading.span.start_line) or ""
    m = _ATX_PREFIX.match(line)
    start = m.end() if m else len(line) - len(line.lstrip())
    at = line.find(heading.text, start) if heading.text else -1
    if at < 0:
        return heading.span
    n = heading.span.start_line
    return Span(n, utf16_col(line, at), n, utf16_col(line, at + len(heading.text)))


def anchor_span(link: Link, line: str | None = None) -> Span | None:
    """The span of the anchor after ``#`` in a link (``Heading``, ``A#B`` or ``^block``), or None.

    Body links carry their own text (``raw``); typed frontmatter edges need ``line``, the
    document line they stand on.
    """
    if link.heading is None and link.block is None:
        return None
    ts = link.target_span
    if ts.start_line != ts.end_line:
        return None
    if link.kind in ("wiki", "embed", "md") and link.span.start_line == ts.start_line:
        if link.raw.startswith("[") or link.raw.startswith("!"):
            rest = link.raw[index_of_utf16(link.raw, ts.end_char - link.span.start_char):]
        else:
            return None
    elif line is not None:
        rest = line[index_of_utf16(line, ts.end_char):]
    else:
        return None
    i = 0
    while i < len(rest) and rest[i] in " \t":
        i += 1
    if i >= len(rest) or rest[i] != "#":
        return None
    i += 1
    stops = ")>" if link.kind == "md" or (link.kind == "embed" and not link.raw.startswith("![[")) else "|]\"'"
    j = i
    while j < len(rest) and rest[j] not in stops and not (link.kind == "md" and rest[j].isspace()):
        j += 1
    anchor = rest[i:j].rstrip().rstrip("\\").rstrip()
    lead = len(anchor) - len(anchor.lstrip())
    anchor = anchor.strip()
    if not anchor:
        return None
    start = ts.end_char + utf16_len(rest[: i + lead])
    return Span(ts.start_line, start, ts.start_line, start + utf16_len(anchor))


def text_at(text: str, span: Span) -> str | None:
    """The text a one-line span covers in ``text`` (None when the span is not in the text)."""
    lines = split_lines(text)
    if span.start_line != span.end_line or not 0 <= span.start_line < len(lines):
        return None
    line = lines[span.start_line]
    if span.end_char > utf16_len(line):
        return None
    return line[index_of_utf16(line, span.start_char) : index_of_utf16(line, span.end_char)]
