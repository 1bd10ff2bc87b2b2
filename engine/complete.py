"""What a cursor inside ``[[…`` is asking for, and the ranked answers: pages, headings, block ids.

Columns are UTF-16 code units, as LSP sends them. The language server turns these answers into
completion items without re-ranking them.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import Hit, Page
from .query import parse_query
from .render import link_target
from .search import search
from .text import index_of_utf16, tokenize, utf16_col
from .vault import Vault


@dataclass(frozen=True, slots=True)
class LinkContext:
    """The link being typed: ``kind`` is ``page``, ``heading`` or ``block``.

    ``typed`` is the text the completion replaces (from ``start`` to the cursor, UTF-16 columns);
    ``target`` is the page part before ``#`` for heading and block completion; ``closed`` says
    this link's ``]]`` already stands after the cursor (before any next ``[[``), and ``tail`` is
    the link text between the cursor and that ``]]`` (empty when not closed).
    """

    kind: str
    typed: str
    target: str
    start: int
    end: int
    closed: bool
    tail: str = ""

    def finish(self, text: str) -> str:
        """``text`` plus the ``]]`` the link still lacks (nothing when it is already closed)."""
        return text if self.closed else text + "]]"

    def page_text(self, choice: PageChoice) -> str:
        """What a page choice inserts here: the bare target when the link already goes on with
        ``|label`` or ``#anchor`` after the cursor (so they are kept, not doubled)."""
        return self.finish(choice.target if self.tail[:1] in ("|", "#") else choice.insert)


def link_context(line: str, col: int) -> LinkContext | None:
    """The link context at UTF-16 column ``col`` of ``line``, or None outside an open ``[[``."""
    cursor = index_of_utf16(line, col)
    before = line[:cursor]
    opening = before.rfind("[[")
    if opening < 0 or "]]" in before[opening:]:
        return None
    inner_start = opening + 2
    inner = before[inner_start:]
    if "|" in inner:
        return None  # typing a label: nothing to complete
    rest = line[cursor:]
    close_at, reopen = rest.find("]]"), rest.find("[[")
    closed = close_at >= 0 and (reopen < 0 or close_at < reopen)
    tail = rest[:close_at] if closed else ""
    end = utf16_col(line, cursor)
    if "#" in inner:
        target, anchor = inner.split("#", 1)
        anchor_start = inner_start + len(target) + 1
        if anchor.startswith("^"):
            return LinkContext("block", anchor[1:], target, utf16_col(line, anchor_start + 1), end, closed, tail)
        return LinkContext("heading", anchor, target, utf16_col(line, anchor_start), end, closed, tail)
    return LinkContext("page", inner, "", utf16_col(line, inner_start), end, closed, tail)


@dataclass(frozen=True, slots=True)
class PageChoice:
    """One ranked page for ``[[`` completion: what to insert and why it ranked.

    ``insert`` is the link text (``target|label`` when a label is shown); ``target`` the bare
    link target.
    """

    hit: Hit
    label: str
    insert: str
    alias: str | None
    target: str = ""


def _alias_matched(hit: Hit) -> str | None:
    """The alias a hit matched through when its title did not match at all."""
    channels = {(m.channel, m.field) for m in hit.matched}
    if any(c in ("title-term",) for c, _ in channels) or ("prefix-term", "title") in channels:
        return None
    for m in hit.matched:
        if m.channel == "title-phrase":
            return m.term or None
    words = {m.term for m in hit.matched if m.channel == "alias-term"}
    words |= {m.via for m in hit.matched if m.channel == "prefix-term" and m.field == "alias"}
    if not words:
        return None
    for alias in hit.page.aliases:
        tokens = tokenize(alias)  # whole tokens: "rag" must not pick the alias "Storage"
        if any(w in tokens for w in words):
            return alias
    return None


def page_choices(vault: Vault, typed: str, limit: int, style: str = "auto") -> list[PageChoice]:
    """Pages ranked for the text typed after ``[[`` (as-you-type), each with its insert text."""
    if typed.strip():
        hits = search(vault, parse_query(typed, prefix=True, limit=limit, operators=False))
    else:
        paths = sorted(vault.pages, key=lambda p: (vault.pages[p].title.casefold(), p))[:limit]
        hits = tuple(Hit(vault.pages[p], (), 0, "") for p in paths)
    out = []
    for hit in hits:
        target = link_target(vault, hit.page, style)
        alias = _alias_matched(hit)
        label = alias or hit.page.title
        shown = alias if alias else (hit.page.title if target.rsplit("/", 1)[-1] != hit.page.title else None)
        if shown and shown != target:
            insert = f"{shown}|{target}" if vault.label_first else f"{target}|{shown}"
        else:
            insert = target
        out.append(PageChoice(hit, label, insert, alias, target))
    return out


def heading_choices(vault: Vault, source: str | None, target: str, typed: str) -> list[tuple[str, int]]:
    """Headings of the page ``target`` resolves to (own page when empty): (text, level), filtered
    by the typed text (case-insensitive substring) and kept in document order."""
    page = _target_page(vault, source, target)
    if page is None:
        return []
    want = typed.casefold().strip()
    return [(h.text, h.level) for h in page.headings if h.text and want in h.text.casefold()]


def block_choices(vault: Vault, source: str | None, target: str, typed: str) -> list[tuple[str, str]]:
    """Block ids of the target page: (id, the line's text), in document order."""
    page = _target_page(vault, source, target)
    if page is None:
        return []
    lines = page.body.split("\n")
    out = []
    for block_id, line in page.blocks:
        if typed.casefold() in block_id.casefold():
            i = line - page.body_line
            text = lines[i].strip() if 0 <= i < len(lines) else ""
            out.append((block_id, text))
    return out


def _target_page(vault: Vault, source: str | None, target: str) -> Page | None:
    if not target.strip():
        return vault.pages.get(source) if source else None
    res = vault.resolve(target, source)
    return vault.pages.get(res.path) if res.path else None
