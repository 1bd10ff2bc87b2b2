"""``textDocument/definition``: from a link (wiki, embed, Markdown, typed edge) to its page,
at the heading or block the link names.

During a cold start's names phase (``lsp/sync.py``) a link of an open page that names no
heading or block is answered at once (where a page's name leads is known); one that does
waits for the full vault, which knows the target's headings and blocks. A warm start's vault
(the index as stored) answers at once, while the files are checked."""

from __future__ import annotations

from lsprotocol import types
from pygls.capabilities import get_capability

from vaultlens.engine.navigate import definition as find_definition
from vaultlens.engine.navigate import target_at

from ..convert import to_lsp_range
from ..server import VaultServer
from .changes import document_text, state_and_page, uri_of, wait_indexed, wait_named


def register(server: VaultServer) -> None:
    """Register ``textDocument/definition``."""

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def definition(
        ls: VaultServer, params: types.DefinitionParams
    ) -> types.Location | list[types.LocationLink] | None:
        found = state_and_page(ls, params.text_document.uri)
        if found is None:
            return None
        state, rel = found
        line, char = params.position.line, params.position.character
        if not state.indexed.is_set():
            await wait_named(state)
            target = target_at(state.vault, rel, line, char, document_text(ls, params.text_document.uri))
            link = target.link if target is not None else None
            # a names vault knows where a name leads, not the headings and blocks of the page it
            # names (a names page has no links: only an open page's are known); a warm start's
            # vault, the index as stored, knows both while the files are checked
            if state.partial and (rel not in state.open_docs or link is None or link.heading or link.block):
                await wait_indexed(state)
        text = document_text(ls, params.text_document.uri)
        jump = find_definition(state.vault, rel, line, char, text)
        if jump is None:
            return None
        uri, target = uri_of(state, jump.path), to_lsp_range(jump.span)
        if get_capability(ls.client_capabilities, "text_document.definition.link_support", False):
            return [
                types.LocationLink(
                    target_uri=uri,
                    target_range=target,
                    target_selection_range=target,
                    origin_selection_range=to_lsp_range(jump.origin),
                )
            ]
        return types.Location(uri=uri, range=target)
