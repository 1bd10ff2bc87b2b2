"""What a cursor inside ``[[…`` is asking for, and the ranked answers: pages, headings, block ids.

Columns are UTF-16 code units, as LSP sends them. The language server turns these answers into
completion items without re-ranking them.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import date

from . import dailynotes
from .edits import Change, EditError, TextEdit
from .model import Hit, Page, Span
from .query import Query, as_you_type
from .render import link_target
from .scoring import link_prior, page_components, score_of, to_matches
from .search import rank, search
from .snippet import make_snippet
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


def _typed_query(typed: str, limit: int) -> Query:
    return as_you_type(typed, limit, operators=False)


def page_choices(vault: Vault, typed: str, limit: int, style: str = "auto", *, snippets: bool = True) -> list[PageChoice]:
    """Pages ranked for the text typed after ``[[`` (as-you-type), each with its insert text:
    those whose names match (``Query.names_only``: a page named by its body alone is not what a
    link is being typed to), ranked by what their names earn (``Plan.body``: no body channel).
    Without ``snippets`` the hits carry none (``page_detail`` gives one hit's, when the client
    asks for it)."""
    if typed.strip():
        query = _typed_query(typed, limit)
        hits = search(vault, query) if snippets else tuple(rank(vault, query, limit)[0])
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


def page_detail(vault: Vault, typed: str, path: str) -> Hit | None:
    """The hit ``page_choices`` gives the page at ``path`` for ``typed``, with its snippet: its
    components, link-prior and score as the ranking gives them to a page among the first
    ``limit`` (completion has no --context and no graph walk). None when the page is gone."""
    page = vault.pages.get(path)
    if page is None:
        return None
    if not typed.strip():
        return Hit(page, (), 0, "")
    found = page_components(page, vault.fields[path], _typed_query(typed, 1), vault)
    if not found:  # no longer a hit for this text (the page changed since)
        return Hit(page, (), 0, "")
    prior = link_prior(vault, page)
    if prior is not None:
        found.append(prior)
    matched = to_matches(found)
    return Hit(page, matched, score_of(c[3] for c in found), make_snippet(page, matched))


def heading_choices(vault: Vault, source: str | None, target: str, typed: str) -> list[tuple[str, int]]:
    """Headings of the page ``target`` resolves to (own page when empty): (text, level), filtered
    by the typed text (case-insensitive substring) and kept in document order."""
    page = _target_page(vault, source, target)
    if page is None:
        return []
    want = typed.casefold().strip()
    return [(h.text, h.level) for h in page.headings if h.text and want in h.text.casefold()]


@dataclass(frozen=True, slots=True)
class BlockChoice:
    """A block of the target page for ``[[Page#^`` completion.

    ``block_id`` is the id to link to; ``text`` the start of the block (its label).
    ``path`` is the page; ``new`` says the block has no id yet: then ``line`` and ``col``
    (0-based, UTF-16, the end of the block's last line) are where `` ^id`` must be added, in
    the same edit as the link.
    """

    block_id: str
    text: str
    path: str
    line: int
    new: bool = False
    col: int = 0


_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_NOT_PROSE = re.compile(r"^\s{0,3}(#{1,6}(\s|$)|>|\||<|(\*\s*){3,}$|(-\s*){3,}$|(_\s*){3,}$|\$\$|%%)")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+")
_HAS_ID = re.compile(r"(?:^|\s)\^[A-Za-z0-9\-]+[ \t]*$")


def _paragraphs(page: Page) -> list[tuple[int, int, str]]:
    """The page's prose blocks without a block id: (first line, last line, text), document order.

    A paragraph (lines up to a blank one) or a list item (each its own block, as in Obsidian);
    not headings, code, tables, quotes, HTML, math or thematic breaks.
    """
    lines = page.body.split("\n")
    out: list[tuple[int, int, str]] = []
    fence: str | None = None
    current: list[int] = []

    def close() -> None:
        if current:
            first, last = current[0], current[-1]
            text = _ITEM.sub("", " ".join(lines[i].strip() for i in current)).strip()
            if not _HAS_ID.search(lines[last]):
                out.append((first + page.body_line, last + page.body_line, text))
            current.clear()

    for i, line in enumerate(lines):
        if fence is not None:
            if line.strip().startswith(fence) and not line.strip().lstrip(fence[0]).strip():
                fence = None
            continue
        m = _FENCE.match(line)
        if m:
            close()
            fence = m.group(1)
            continue
        if not line.strip() or _NOT_PROSE.match(line) or (line.startswith(("    ", "\t")) and not current):
            close()
            continue
        if _ITEM.match(line):
            close()
        current.append(i)
    close()
    return out


def _fresh_id(text: str, taken: set[str]) -> str:
    """A block id made from the block's text (the same text, the same id), not in ``taken``."""
    n = 0
    while True:
        digest = hashlib.sha1(f"{text}\0{n}".encode()).hexdigest()[:6]
        if digest not in taken:
            return digest
        n += 1


def block_choices(
    vault: Vault, source: str | None, target: str, typed: str, cursor_line: int | None = None
) -> list[BlockChoice]:
    """The target page's blocks: those with an id, then its paragraphs and list items without
    one (each with a fresh id, deterministic and unique in the page), in document order, kept
    when the typed text is in the id or the block's text (case-insensitive). In the page being
    written, the block under the cursor (``cursor_line``) is not offered."""
    page = _target_page(vault, source, target)
    if page is None:
        return []
    lines = page.body.split("\n")
    want = typed.casefold()
    out = []
    for block_id, line in page.blocks:
        i = line - page.body_line
        text = lines[i].strip() if 0 <= i < len(lines) else ""
        if want in block_id.casefold() or want in text.casefold():
            label = _ITEM.sub("", _HAS_ID.sub("", text)).strip()
            out.append(BlockChoice(block_id, label or text, page.path, line))
    own = page.path == source
    taken = {b.casefold() for b, _ in page.blocks}
    for first, last, text in _paragraphs(page):
        if own and cursor_line is not None and first <= cursor_line <= last:
            continue
        fresh = _fresh_id(text, taken)
        taken.add(fresh)
        if want and want not in text.casefold():
            continue
        end = lines[last - page.body_line].rstrip()
        out.append(BlockChoice(fresh, text, page.path, last, True, utf16_col(end, len(end))))
    return out


def daily_choices(
    vault: Vault, typed: str, today: date, fmt: str = dailynotes.DEFAULT_FORMAT, folder: str = "", style: str = "auto"
) -> list[tuple[dailynotes.DailyNote, bool]]:
    """The daily notes the typed text names (``tod`` → today, ``next fr`` → next friday), each
    with whether its page exists. An existing note is linked as any page; a missing one by its
    name, or by its path when that name already leads to another page."""
    out = []
    for name, day in dailynotes.relative_days(today):
        if not dailynotes.matches(name, typed):
            continue
        path = dailynotes.note_path(day, fmt, folder)
        noext = path[:-3]
        existing = vault.by_path.get(noext.casefold())
        if existing is not None:
            target = link_target(vault, vault.pages[existing], style)
        else:
            bare = noext.rsplit("/", 1)[-1]
            target = bare if vault.resolve(bare).path is None and style != "path" else noext
        out.append((dailynotes.DailyNote(name, day, existing or path, target), existing is not None))
    return out


CALLOUTS = (
    ("note", ()),
    ("abstract", ("summary", "tldr")),
    ("info", ()),
    ("todo", ()),
    ("tip", ("hint", "important")),
    ("success", ("check", "done")),
    ("question", ("help", "faq")),
    ("warning", ("caution", "attention")),
    ("failure", ("fail", "missing")),
    ("danger", ("error",)),
    ("bug", ()),
    ("example", ()),
    ("quote", ("cite",)),
)
_CALLOUT_OPEN = re.compile(r"^(\s{0,3}(?:>\s*)+)\[!([\w-]*)$")


@dataclass(frozen=True, slots=True)
class CalloutCompletion:
    """Callout types for ``> [!ty``: replace columns [``start``, ``end``) (UTF-16) of the line;
    ``closed`` says ``]`` already follows. ``choices`` are (type, the type it is an alias of)."""

    typed: str
    start: int
    end: int
    closed: bool
    choices: tuple[tuple[str, str], ...]


def callout_completion(line: str, col: int) -> CalloutCompletion | None:
    """The callout types to offer at UTF-16 column ``col`` of ``line``, or None when the cursor
    is not in a ``> [!…`` callout marker. Obsidian's standard types and their aliases, in its order."""
    cursor = index_of_utf16(line, col)
    m = _CALLOUT_OPEN.match(line[:cursor])
    if m is None:
        return None
    typed = m.group(2)
    rest = line[cursor:]
    word = re.match(r"[\w-]*", rest)
    end = cursor + (word.end() if word else 0)
    closed = line[end:end + 1] == "]"
    want = typed.casefold()
    choices = []
    for kind, aliases in CALLOUTS:
        for name in (kind, *aliases):
            if name.startswith(want):
                choices.append((name, kind))
    start = cursor - len(typed)
    return CalloutCompletion(typed, utf16_col(line, start), utf16_col(line, end), closed, tuple(choices))


def _target_page(vault: Vault, source: str | None, target: str) -> Page | None:
    if not target.strip():
        return vault.pages.get(source) if source else None
    res = vault.resolve(target, source)
    return vault.pages.get(res.path) if res.path else None


def block_id_change(text: str | None, path: str, line: int, col: int, block_id: str) -> Change:
    """The change that adds `` ^block_id`` at (``line``, UTF-16 ``col``) of page ``path``, whose
    current text is ``text``: nothing when the block already ends with that id. Raises
    ``EditError`` when the line no longer ends at ``col`` or already has another id (the page
    changed since the completion was offered), so an id never lands mid-sentence."""
    if text is None:
        raise EditError(f"Cannot read {path}; no block id was added.")
    lines = re.split(r"\r\n|\r|\n", text.removeprefix("\ufeff"))
    current = lines[line].rstrip() if 0 <= line < len(lines) else None
    if current is not None and current.endswith(f"^{block_id}"):
        return Change()
    if current is None or utf16_col(current, len(current)) != col or _HAS_ID.search(current):
        raise EditError(f"{path} has changed since the completion was offered; no block id was added.")
    return Change(edits=(TextEdit(path, Span(line, col, line, col), f" ^{block_id}"),))
