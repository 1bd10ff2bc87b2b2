"""``textDocument/codeLens``: "N backlinks" on the first line of every page (``codeLens.enabled``).

The lens runs the server command ``vaultlens.showReferences`` with the arguments of VS Code's
``editor.action.showReferences``: ``[uri, position, locations]``, where the locations are
every link to the page. Executing it on the server returns those locations, so any client
can list them; an editor extension may map the command onto its own references view.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from vaultlens.engine.navigate import backlink_lens

from ..server import VaultServer
from . import mentions
from .changes import open_documents, state_and_page, to_location, wait_indexed

SHOW_REFERENCES = "vaultlens.showReferences"


def register(server: VaultServer) -> None:
    """Register ``textDocument/codeLens`` and the ``vaultlens.showReferences`` command."""

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    async def code_lens(ls: VaultServer, params: types.CodeLensParams) -> list[types.CodeLens] | None:
        found = state_and_page(ls, params.text_document.uri)
        if found is None or not found[0].settings.code_lens_enabled:
            return None
        state, rel = found
        await wait_indexed(state)
        if rel not in state.vault.pages:
            return None
        count, found_links = backlink_lens(state.vault, rel)
        docs = open_documents(ls, state)
        locations = [to_location(state, loc, docs) for loc in found_links]
        top = types.Position(line=0, character=0)
        return [
            types.CodeLens(
                range=types.Range(start=top, end=top),
                command=types.Command(
                    title=f"{count} backlink{'' if count == 1 else 's'}",
                    command=SHOW_REFERENCES,
                    arguments=[params.text_document.uri, top, locations],
                ),
            )
        ] + mentions.code_lenses(ls, state, rel, params.text_document.uri)

    @server.command(SHOW_REFERENCES)
    def show_references(ls: VaultServer, *args: Any) -> Any:
        """Answer with the locations the lens carries (its third argument)."""
        return args[2] if len(args) > 2 else []
