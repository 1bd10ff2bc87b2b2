"""``textDocument/hover`` on a wikilink (the target, why it relates) or on a ``#tag``."""

from __future__ import annotations

from lsprotocol import types

from engine.query import parse_query
from engine.render import page_hover, tag_hover, unresolved_hover
from engine.search import search

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
        page = state.vault.get(rel)
        if page is None:
            return None
        line, char = params.position.line, params.position.character
        for link in (*page.links, *page.edges):
            if not link.span.contains(line, char):
                continue
            res = state.vault.resolve_link(link, rel)
            if res.path is not None:
                text = page_hover(state.vault, res.path, related_pages=state.settings.hover_related, via=res.via)
                if res.ambiguous:
                    others = ", ".join(f"`{p}`" for p in res.candidates[1:])
                    text += f"\n\n_Ambiguous: also matches {others}._"
            elif res.attachment:
                text = f"Attachment `{link.target}` (not a page)."
            else:
                candidates = search(state.vault, parse_query(link.target, limit=5))
                text = unresolved_hover(state.vault, link.target, candidates)
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
