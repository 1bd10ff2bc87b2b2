"""``textDocument/definition``: from a link (wiki, embed, Markdown, typed edge) to its page,
at the heading or block the link names."""

from __future__ import annotations

from lsprotocol import types
from pygls.capabilities import get_capability

from vaultlens.engine.navigate import definition as find_definition

from ..convert import to_lsp_range
from ..server import VaultServer
from .changes import document_text, state_and_page, uri_of, wait_indexed


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
        await wait_indexed(state)
        text = document_text(ls, params.text_document.uri)
        jump = find_definition(state.vault, rel, params.position.line, params.position.character, text)
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
