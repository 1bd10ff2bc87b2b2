"""``textDocument/hover`` on a wikilink (the target, why it relates) or on a ``#tag``.

A hover's text depends only on the vault and the link, so it is remembered: a link to a page
until that page or the link graph changes (``Vault.graph_generation``: typing prose keeps it,
so the related pages of a hub are not counted again after every keystroke); any other hover
until the vault changes (``Vault.generation``). Hovering the same link again costs nothing.
"""

from __future__ import annotations

import weakref

from lsprotocol import types

from vaultlens.engine.query import parse_query
from vaultlens.engine.render import page_hover, tag_hover, unresolved_hover
from vaultlens.engine.search import rank

from ..convert import to_lsp_range
from ..server import VaultServer


def register(server: VaultServer) -> None:
    """Register ``textDocument/hover``."""

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: VaultServer, params: types.HoverParams) -> types.Hover | None:
        found = ls.state_for_uri(params.text_document.uri)
        if found is None:
            return None
        state, rel = found
        if state.partial or not state.named.is_set():
            # Backlinks, the outline and related pages come with the full vault: no answer from
            # a names vault (a cold start's first seconds) or before any (a re-index's start).
            # Not awaited: a coroutine handler waits behind the event loop's idle work, +2 ms a
            # hover (lsp_bench, 10,000 pages). A warm start's vault, the index as stored,
            # answers while the files are checked.
            return None
        page = state.vault.get(rel)
        if page is None:
            return None
        line, char = params.position.line, params.position.character
        for link in (*page.links, *page.edges):
            if not link.span.contains(line, char):
                continue
            res = state.vault.resolve_link(link, rel)
            text = _remembered(state, (res, link.target, state.settings.hover_related))
            return types.Hover(
                contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
                range=to_lsp_range(link.span),
            )
        for tag in page.inline_tags:
            if tag.span.contains(line, char):
                return types.Hover(
                    contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=tag_hover(state.vault, tag.name)),
                    range=to_lsp_range(tag.span),
                )
        return None


MEMO_SIZE = 256


def _remembered(state, key: tuple) -> str:
    """The hover text for ``key`` = (resolution, target, related?), remembered with what it was
    made from: the target page as it was (a link to a page) or the vault generation (any other
    hover). All are dropped when the link graph changes or the vault is another."""
    vault, (res, target, _related) = state.vault, key
    made_for = state.hover_generation  # (a weak reference to the vault, its graph generation)
    stale = made_for is None or made_for[0]() is not vault or made_for[1] != vault.graph_generation
    if stale or len(state.hover_memo) > MEMO_SIZE:
        state.hover_generation, state.hover_memo = (weakref.ref(vault), vault.graph_generation), {}
    page = vault.pages.get(res.path) if res.path is not None else None
    found = state.hover_memo.get(key)
    if found is not None and (found[0] is page if page is not None else found[0] == vault.generation):
        return found[1]
    text = _link_text(state, target, res)
    state.hover_memo[key] = (page if page is not None else vault.generation, text)
    return text


def _link_text(state, target: str, res) -> str:
    vault = state.vault
    if res.path is not None:
        text = page_hover(vault, res.path, related_pages=state.settings.hover_related, via=res.via)
        if res.ambiguous:
            others = ", ".join(f"`{p}`" for p in res.candidates[1:])
            text += f"\n\n_Ambiguous: also matches {others}._"
        return text
    if res.attachment:
        return f"Attachment `{target}` (not a page)."
    candidates, _ = rank(vault, parse_query(target, limit=5), 5)  # no snippets: the table shows none
    return unresolved_hover(vault, target, tuple(candidates))
