"""Moving around a vault: what is under the cursor, where a link goes, who links here, outlines.

``target_at`` says what a position in a page stands on (a link, a heading, the page's title,
a tag); ``definition`` and ``references`` answer from the live vault, so links written in
unsaved buffers count. ``outline`` and ``folds`` describe one page's sections. Positions are
0-based lines and UTF-16 columns; paths are vault-relative. Results are sorted by path, then
position, so the same vault always gives the same answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .locate import (
    Texts,
    anchor_span,
    frontmatter_key_at,
    frontmatter_tags,
    frontmatter_value,
    heading_text_span,
    page_line,
    split_lines,
)
from .model import Heading, Link, Page, Span
from .text import collapse, utf16_len
from .vault import Vault

ORIGIN = Span(0, 0, 0, 0)
_HEADING_PUNCT = re.compile(r"[#|^:%\[\]\\]")
_SLUG_DROP = re.compile(r"[^\w\- ]")


@dataclass(frozen=True, slots=True)
class Location:
    """A place in the vault: a page's vault-relative path and a span in it."""

    path: str
    span: Span


@dataclass(frozen=True, slots=True)
class Jump:
    """Where a link leads: ``path`` and ``span`` in it, and ``origin``, the link's own span."""

    origin: Span
    path: str
    span: Span


@dataclass(frozen=True, slots=True)
class Target:
    """What a cursor stands on.

    ``kind`` is ``link``, ``heading``, ``title`` (the page's frontmatter title or its title
    heading) or ``tag``. ``span`` is the range of that thing. For a link, ``anchor`` is True
    when the cursor is on its ``#heading``/``#^block`` part. ``tag`` is the tag name without ``#``.
    """

    kind: str
    span: Span
    link: Link | None = None
    heading: Heading | None = None
    tag: str | None = None
    anchor: bool = False


@dataclass(frozen=True, slots=True)
class Section:
    """One heading of an outline: ``span`` runs from the heading to the end of its section."""

    heading: Heading
    span: Span
    children: tuple[Section, ...] = ()


@dataclass(frozen=True, slots=True)
class Fold:
    """A foldable line range (inclusive); ``kind`` is ``frontmatter``, ``section``, ``code`` or ``callout``."""

    start_line: int
    end_line: int
    kind: str


# --- headings and blocks ----------------------------------------------------------------------


def heading_key(text: str) -> str:
    """How link anchors name a heading: casefolded, link-breaking punctuation as spaces."""
    return collapse(_HEADING_PUNCT.sub(" ", text)).casefold()


def slug(text: str) -> str:
    """The GitHub-style anchor of a heading (``pH and Nutrients`` -> ``ph-and-nutrients``)."""
    return _SLUG_DROP.sub("", text.strip().casefold()).replace(" ", "-")


def find_heading(page: Page, anchor: str) -> Heading | None:
    """The heading a link anchor names: by text (case and punctuation aside), by the last part
    of a nested ``A#B`` anchor, or by its GitHub-style slug; the first such heading wins."""
    want = heading_key(anchor)
    for h in page.headings:
        if heading_key(h.text) == want:
            return h
    if "#" in anchor:
        last = heading_key(anchor.rsplit("#", 1)[-1])
        for h in page.headings:
            if heading_key(h.text) == last:
                return h
    lowered = anchor.strip().casefold()
    for h in page.headings:
        if slug(h.text) == lowered:
            return h
    if "," in anchor or ":" in anchor:  # a Dendron note reference: #heading,1:#*
        return find_heading(page, re.split(r"[,:]", anchor, maxsplit=1)[0])
    return None


def find_block(page: Page, block_id: str) -> int | None:
    """The line of the block ``^block_id`` (case-insensitive), or None."""
    want = block_id.casefold()
    for bid, line in page.blocks:
        if bid.casefold() == want:
            return line
    return None


def title_heading(page: Page) -> Heading | None:
    """The heading that titles the page: its first heading when that is level 1 or reads as
    the title."""
    if not page.headings:
        return None
    first = page.headings[0]
    if first.level == 1 or heading_key(first.text) == heading_key(page.title):
        return first
    return None


def title_span(page: Page, text: str | None = None) -> Span:
    """Where the page's title is written: the frontmatter ``title`` value, else the title
    heading's text, else the start of the page."""
    if text is not None and page.meta.get("title") is not None:
        span = frontmatter_value(text, "title")
        if span is not None:
            return span
    heading = title_heading(page)
    return heading_text_span(page, heading) if heading is not None else ORIGIN


def _line_span(page: Page, line: int) -> Span:
    text = page_line(page, line) or ""
    return Span(line, 0, line, utf16_len(text))


def anchor_location(page: Page, link: Link) -> Span:
    """Where in ``page`` a link lands: its heading or block line when it names one, else the top."""
    if link.block:
        line = find_block(page, link.block)
        if line is not None:
            return _line_span(page, line)
    if link.heading:
        heading = find_heading(page, link.heading)
        if heading is not None:
            return heading.span
    return ORIGIN


# --- what is under the cursor ---------------------------------------------------------------


def _nonempty(span: Span) -> bool:
    return (span.start_line, span.start_char) != (span.end_line, span.end_char)


def target_at(vault: Vault, path: str, line: int, char: int, text: str | None = None) -> Target | None:
    """What the position (line, UTF-16 column) of page ``path`` stands on, or None.

    ``text`` is the page's document text; without it frontmatter values (title, tags) are
    not recognised.
    """
    page = vault.get(path)
    if page is None:
        return None
    for link in (*page.links, *page.edges):
        if not _nonempty(link.span) or not link.span.contains(line, char):
            continue
        source_line = page_line(page, link.span.start_line, text)
        anchor = anchor_span(link, source_line)
        on_anchor = anchor is not None and (
            line > anchor.start_line or (line == anchor.start_line and char >= anchor.start_char - 1)
        )
        return Target("link", link.span, link=link, anchor=on_anchor)
    for heading in page.headings:
        if heading.span.start_line == line:
            if heading is title_heading(page):
                return Target("title", heading_text_span(page, heading), heading=heading)
            return Target("heading", heading_text_span(page, heading), heading=heading)
    for tag in page.inline_tags:
        if tag.span.contains(line, char):
            return Target("tag", tag.span, tag=tag.name)
    if text is not None and line < page.body_line:
        lines = split_lines(text)
        key = frontmatter_key_at(lines, line)
        if key == "title":
            span = frontmatter_value(text, "title")
            if span is not None and span.start_line == line:
                return Target("title", span)
        elif key in ("tags", "tag"):
            for tag in frontmatter_tags(text):
                if tag.span.contains(line, char):
                    return Target("tag", tag.span, tag=tag.name)
    return None


# --- definition -----------------------------------------------------------------------------


def definition(vault: Vault, path: str, line: int, char: int, text: str | None = None) -> Jump | None:
    """Where the link at the position leads: the target page, at its heading or block when the
    link names one. None off a link, or for a link that resolves to no page."""
    target = target_at(vault, path, line, char, text)
    if target is None or target.link is None:
        return None
    res = vault.resolve_link(target.link, path)
    if res.path is None:
        return None
    return Jump(target.link.span, res.path, anchor_location(vault.pages[res.path], target.link))


# --- references -----------------------------------------------------------------------------


def _sorted(locations: list[Location]) -> tuple[Location, ...]:
    seen = dict.fromkeys(locations)
    return tuple(
        sorted(seen, key=lambda loc: (loc.path, loc.span.start_line, loc.span.start_char, loc.span.end_char))
    )


def backlinks(vault: Vault, path: str) -> tuple[Location, ...]:
    """Every link and typed edge to ``path`` across the vault (its own self-links included)."""
    return _sorted([Location(source, link.span) for source, link in vault.backlinks(path)])


def backlink_count(vault: Vault, path: str) -> int:
    """How many other pages link to ``path`` (what hovers and code lenses call backlinks)."""
    return len({source for source, _ in vault.backlinks(path) if source != path})


def backlink_lens(vault: Vault, path: str) -> tuple[int, tuple[Location, ...]]:
    """What a page's "N backlinks" lens shows: how many other pages link to it, and every link."""
    return backlink_count(vault, path), backlinks(vault, path)


def page_references(
    vault: Vault, path: str, *, include_declaration: bool, texts: Texts | None = None
) -> tuple[Location, ...]:
    """The links to a page; with ``include_declaration``, its title first."""
    found = list(backlinks(vault, path))
    if include_declaration and path in vault.pages:
        text = texts(path) if texts is not None else None
        return (Location(path, title_span(vault.pages[path], text)), *found)
    return tuple(found)


def _links_to_heading(vault: Vault, path: str, heading: Heading) -> list[Location]:
    page = vault.pages[path]
    out: list[Location] = []
    candidates = [(source, link) for source, link in vault.backlinks(path)]
    candidates += [(path, link) for link in page.links if not link.target.strip()]  # [[#Heading]]
    for source, link in candidates:
        if link.heading and find_heading(page, link.heading) == heading:
            out.append(Location(source, link.span))
    return out


def heading_references(vault: Vault, path: str, heading: Heading, *, include_declaration: bool) -> tuple[Location, ...]:
    """The links to one heading of a page (``[[Page#Heading]]``, ``[[#Heading]]``, Markdown
    ``Page.md#heading``); with ``include_declaration``, the heading first."""
    found = _sorted(_links_to_heading(vault, path, heading))
    if include_declaration:
        return (Location(path, heading.span), *found)
    return found


def _links_to_block(vault: Vault, path: str, block_id: str) -> list[Location]:
    page = vault.pages[path]
    want = block_id.casefold()
    candidates = [(source, link) for source, link in vault.backlinks(path)]
    candidates += [(path, link) for link in page.links if not link.target.strip()]
    return [Location(s, link.span) for s, link in candidates if link.block and link.block.casefold() == want]


def tag_references(vault: Vault, tag: str, texts: Texts | None = None) -> tuple[Location, ...]:
    """Every occurrence of ``#tag`` and of the tags below it (``#tag/sub``): inline ones from the
    index, frontmatter ones from each tagged page's text (read only for the pages that carry it)."""
    want = tag.casefold().lstrip("#")

    def matches(name: str) -> bool:
        name = name.casefold()
        return name == want or name.startswith(want + "/")

    holders: set[str] = set()
    for name, paths in vault.tag_pages.items():
        if matches(name):
            holders.update(paths)
    out: list[Location] = []
    for path in sorted(holders):
        page = vault.pages[path]
        inline = [t for t in page.inline_tags if matches(t.name)]
        out += [Location(path, t.span) for t in inline]
        if texts is not None and page.meta.get("tags", page.meta.get("tag")):
            text = texts(path)
            if text is not None:
                out += [Location(path, t.span) for t in frontmatter_tags(text) if matches(t.name)]
    return _sorted(out)


def references(
    vault: Vault,
    path: str,
    line: int,
    char: int,
    *,
    include_declaration: bool,
    texts: Texts | None = None,
) -> tuple[Location, ...]:
    """References of what stands at the position.

    On a link: every link to its page (on its ``#heading`` part: every link to that heading;
    on ``#^block``: every link to that block). On the page's title or title heading: its
    backlinks. On another heading: the links to that heading. On a tag: every occurrence of it
    and of the tags below it. ``include_declaration`` adds the title, heading or (for a tag)
    keeps the occurrence under the cursor.
    """
    text = texts(path) if texts is not None else None
    target = target_at(vault, path, line, char, text)
    if target is None:
        return ()
    if target.kind == "tag" and target.tag is not None:
        found = tag_references(vault, target.tag, texts)
        if not include_declaration:
            found = tuple(loc for loc in found if not (loc.path == path and loc.span == target.span))
        return found
    if target.kind == "title":
        return page_references(vault, path, include_declaration=include_declaration, texts=texts)
    if target.kind == "heading" and target.heading is not None:
        return heading_references(vault, path, target.heading, include_declaration=include_declaration)
    link = target.link
    if link is None:
        return ()
    res = vault.resolve_link(link, path)
    if res.path is None:
        return ()
    page = vault.pages[res.path]
    if target.anchor and link.heading:
        heading = find_heading(page, link.heading)
        if heading is not None:
            return heading_references(vault, res.path, heading, include_declaration=include_declaration)
    if target.anchor and link.block:
        found = _sorted(_links_to_block(vault, res.path, link.block))
        block_line = find_block(page, link.block)
        if include_declaration and block_line is not None:
            return (Location(res.path, _line_span(page, block_line)), *found)
        return found
    return page_references(vault, res.path, include_declaration=include_declaration, texts=texts)


# --- outline and folding --------------------------------------------------------------------


def _last_content_line(lines: list[str], first: int, start: int, stop: int) -> int:
    """The last non-blank document line in [start, stop), at least ``start``."""
    end = stop - 1
    while end > start and not lines[end - first].strip():
        end -= 1
    return max(end, start)


def _section_ends(page: Page) -> list[int]:
    """For each heading, the last non-blank line of its section."""
    lines = page.body.split("\n")
    first = page.body_line
    total = first + len(lines)
    heads = page.headings
    ends = []
    for i, h in enumerate(heads):
        stop = total
        for later in heads[i + 1 :]:
            if later.level <= h.level:
                stop = later.span.start_line
                break
        ends.append(_last_content_line(lines, first, h.span.start_line, stop))
    return ends


def outline(page: Page) -> tuple[Section, ...]:
    """The page's headings as a tree: each section holds the deeper headings that follow it."""
    lines = page.body.split("\n")
    first = page.body_line
    ends = _section_ends(page)
    flat = []
    for h, end in zip(page.headings, ends):
        end_text = lines[end - first] if 0 <= end - first < len(lines) else ""
        flat.append((h, Span(h.span.start_line, 0, end, utf16_len(end_text))))

    def build(i: int, level: int) -> tuple[list[Section], int]:
        out: list[Section] = []
        while i < len(flat) and flat[i][0].level > level:
            heading, span = flat[i]
            children, i = build(i + 1, heading.level)
            out.append(Section(heading, span, tuple(children)))
        return out, i

    result: list[Section] = []
    i = 0
    while i < len(flat):  # a page may start deeper than its later headings
        part, i = build(i, 0)
        result += part
    return tuple(result)


def folds(page: Page) -> tuple[Fold, ...]:
    """Foldable ranges: the frontmatter block, then every section of more than one line."""
    out: list[Fold] = []
    if page.body_line > 1:
        out.append(Fold(0, page.body_line - 1, "frontmatter"))
    for h, end in zip(page.headings, _section_ends(page)):
        if end > h.span.start_line:
            out.append(Fold(h.span.start_line, end, "section"))
    return tuple(out)
