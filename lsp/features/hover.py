"""``textDocument/hover`` on a wikilink (the target, why it relates) or on a ``#tag``.

A hover's text depends only on the vault and the link, so it is remembered until the vault
changes (``Vault.generation``): hovering the same link again, as people do, costs nothing.
"""

from __future__ import annotations

from lsprotocol import types

from vaultlens.engine.query import parse_query
from vaultlens.engine.render import page_hover, tag_hover, unresolved_hover
from vaultlens.engine.search import rank

from ..convert import to_lsp_range
from ..server import VaultServer
from .changes import wait_indexed


def register(server: VaultServer) -> None:
    """Register ``textDocument/hover``."""

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: VaultServer, params: types.HoverParams) -> types.Hover | None:
        found = ls.state_for_uri(params.text_document.uri)
        if found is None:
            return None
        state, rel = found
        if not state.indexed.is_set():  # backlinks, the outline, related pages: the full vault's
            await wait_indexed(state)
        page = state.vault.get(rel)
        if page is None:
            return None
        line, char = params.position.line, params.position.character
        for link in (*page.links, *page.edges):
            if not link.span.contains(line, char):
                continue
            res = state.vault.resolve_link(link, rel)
            memo = _memo(state)
            key = (res, link.target, state.settings.hover_related)
            text = memo.get(key)
            if text is None:
                text = memo[key] = _link_text(state, link.target, res)
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


def _memo(state) -> dict:
    """The hover texts of this vault generation (dropped whole when the vault changes)."""
    generation = state.vault.generation
    if state.hover_generation != generation or len(state.hover_memo) > MEMO_SIZE:
        state.hover_generation = generation
        state.hover_memo = {}
    return state.hover_memo


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
