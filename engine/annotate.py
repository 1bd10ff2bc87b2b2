"""What an editor draws over a page's text: semantic tokens and inlay hints.

Semantic tokens mark every ``[[wikilink]]`` and ``![[embed]]`` (with how it resolves), every
inline ``#tag`` and every ``^block-id``, so a theme can colour a broken link without a
diagnostic. Inlay hints put the number of other pages linking to a heading after it, and a
link's resolved title after a link written as a file slug (``[[2023-01-05-xyz]]`` -> Title).

Spans are 0-based lines and UTF-16 columns, as everywhere in the engine. Tokens come sorted
by position and never overlap; the answers depend only on the vault and the page text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .locate import page_line
from .model import Span
from .navigate import find_heading
from .text import utf16_col, utf16_len
from .vault import Vault

TOKEN_TYPES = ("wikilink", "tag", "blockId")
"""The semantic token legend's types, in legend order (an index is the wire value)."""
TOKEN_MODIFIERS = ("unresolved", "aliasOnly", "ambiguous", "embed")
"""The legend's modifiers, in bit order: ``unresolved`` (the link leads to no page),
``aliasOnly`` (it reaches its page only through an alias, which Obsidian does not follow),
``ambiguous`` (several pages fit), ``embed`` (``![[…]]``)."""

LINK_TITLE_MODES = ("off", "slugs", "all")


@dataclass(frozen=True, slots=True)
class Token:
    """One semantic token: a one-line span, its type and its modifiers (names from the legend)."""

    span: Span
    type: str
    modifiers: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Hint:
    """One inlay hint: where it goes (line, UTF-16 column), its label, and what it says in full."""

    line: int
    char: int
    label: str
    tooltip: str
    kind: str  # "backlinks" or "title"


def _block_span(line_text: str, line: int, block: str) -> Span | None:
    m = re.search(r"\^" + re.escape(block) + r"[ \t]*$", line_text)
    if m is None:
        return None
    return Span(line, utf16_col(line_text, m.start()), line, utf16_col(line_text, m.start() + 1 + len(block)))


def semantic_tokens(vault: Vault, path: str, text: str | None = None) -> tuple[Token, ...]:
    """The page's tokens, sorted by position, overlaps dropped (the earlier token wins)."""
    page = vault.get(path)
    if page is None:
        return ()
    found: list[Token] = []
    for link in page.links:
        if link.kind not in ("wiki", "embed") or not link.raw.lstrip("!").startswith("[["):
            continue
        if link.span.start_line != link.span.end_line:
            continue
        res = vault.resolve_link(link, path)
        mods: list[str] = []
        if res.path is None and not res.attachment:
            mods.append("unresolved")
        elif res.via == "alias":
            mods.append("aliasOnly")
        if res.ambiguous:
            mods.append("ambiguous")
        if link.kind == "embed":
            mods.append("embed")
        found.append(Token(link.span, "wikilink", tuple(mods)))
    for tag in page.inline_tags:
        found.append(Token(tag.span, "tag"))
    for block, line in page.blocks:
        line_text = page_line(page, line, text)
        span = _block_span(line_text or "", line, block) if line_text is not None else None
        if span is not None:
            found.append(Token(span, "blockId"))
    found.sort(key=lambda t: (t.span.start_line, t.span.start_char, t.span.end_char))
    out: list[Token] = []
    for token in found:
        if token.span.end_char <= token.span.start_char:
            continue
        last = out[-1].span if out else None
        if last is not None and last.start_line == token.span.start_line and token.span.start_char < last.end_char:
            continue
        out.append(token)
    return tuple(out)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def heading_backlinks(vault: Vault, path: str) -> list[tuple[int, int, tuple[str, ...]]]:
    """For each heading of the page that other pages link to (``[[Page#Heading]]``):
    (heading index, number of links, the linking pages sorted), in heading order."""
    page = vault.get(path)
    if page is None:
        return []
    links: dict[int, int] = {}
    sources: dict[int, set[str]] = {}
    index = {id(h): i for i, h in enumerate(page.headings)}
    for source, link in vault.backlinks(path):
        if source == path or not link.heading:
            continue
        heading = find_heading(page, link.heading)
        if heading is None:
            continue
        i = index[id(heading)]
        links[i] = links.get(i, 0) + 1
        sources.setdefault(i, set()).add(source)
    return [(i, links[i], tuple(sorted(sources[i]))) for i in sorted(links)]


def _looks_like_slug(target: str) -> bool:
    """A target written as a file slug rather than a name: no spaces, and a digit, dash,
    underscore or dot between its characters (``2023-01-05-xyz``, ``dendron.topic``)."""
    name = target.rsplit("/", 1)[-1]
    return " " not in name and any(c.isdigit() or c in "-_." for c in name)


def inlay_hints(
    vault: Vault, path: str, first_line: int = 0, last_line: int | None = None, *,
    backlinks: bool = True, titles: str = "slugs",
) -> tuple[Hint, ...]:
    """The hints of lines ``first_line``..``last_line`` (inclusive; None: to the end), sorted.

    ``backlinks``: the link count after each heading other pages link to. ``titles``:
    ``slugs`` puts the resolved title after an unlabelled link whose target is a file slug
    and differs from the title, ``all`` after every unlabelled link whose target differs
    from the title, ``off`` never.
    """
    page = vault.get(path)
    if page is None:
        return ()

    def wanted(line: int) -> bool:
        return line >= first_line and (last_line is None or line <= last_line)

    out: list[Hint] = []
    if backlinks:
        for i, count, sources in heading_backlinks(vault, path):
            heading = page.headings[i]
            line = heading.span.start_line
            if not wanted(line):
                continue
            label = _plural(count, "backlink")
            shown = ", ".join(sources[:5]) + (" …" if len(sources) > 5 else "")
            tip = f"{label} to “{heading.text}” from {_plural(len(sources), 'page')}: {shown}"
            out.append(Hint(line, heading.span.end_char, label, tip, "backlinks"))
    if titles in ("slugs", "all"):
        for link in page.links:
            if link.kind not in ("wiki", "embed") or link.label or not link.target.strip() or not wanted(link.span.start_line):
                continue
            res = vault.resolve_link(link, path)
            if res.path is None or res.via in ("title", "alias"):
                continue
            target = vault.pages[res.path]
            written = link.target.strip()
            name = written[:-3] if written.lower().endswith(".md") else written
            if name.rsplit("/", 1)[-1].casefold() == target.title.casefold():
                continue
            if titles == "slugs" and not _looks_like_slug(name):
                continue
            out.append(Hint(link.span.end_line, link.span.end_char, target.title, f"{res.path}: “{target.title}”", "title"))
    out.sort(key=lambda h: (h.line, h.char, h.kind))
    return tuple(out)



