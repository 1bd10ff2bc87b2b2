"""``textDocument/references``: backlinks of a page (from a link to it or from its own title),
links to a heading or block, occurrences of a tag, across the vault and its open buffers."""

from __future__ import annotations

from lsprotocol import types

from vaultlens.engine.navigate import references as find_references

from ..server import VaultServer
from .changes import open_documents, state_and_page, texts_for, to_location, wait_indexed


def register(server: VaultServer) -> None:
    """Register ``textDocument/references``."""

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    async def references(ls: VaultServer, params: types.ReferenceParams) -> list[types.Location] | None:
        found = state_and_page(ls, params.text_document.uri)
        if found is None:
            return None
        state, rel = found
        await wait_indexed(state)
        locations = find_references(
            state.vault,
            rel,
            params.position.line,
            params.position.character,
            include_declaration=params.context.include_declaration,
            texts=texts_for(ls, state),
        )
        docs = open_documents(ls, state)
        return [to_location(state, loc, docs) for loc in locations]
