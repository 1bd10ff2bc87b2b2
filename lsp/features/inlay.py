"""``textDocument/inlayHint``: backlink counts after headings, titles after slug links.

``inlayHints.headingBacklinks`` (default true): "N backlinks" after each heading that other
pages link to (``[[Page#Heading]]``). ``inlayHints.linkTitles`` (``slugs`` by default, ``all``
or ``off``): the resolved title after an unlabelled link written as a file slug
(``[[2023-01-05-xyz]]`` -> Title).

Must not: decide which hints a page gets; ``engine.annotate`` does.
"""

from __future__ import annotations

from lsprotocol import types

from vaultlens.engine.annotate import inlay_hints

from ..server import VaultServer
from .changes import state_and_page, wait_indexed


def register(server: VaultServer) -> None:
    """Register ``textDocument/inlayHint``."""

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
    async def inlay_hint(ls: VaultServer, params: types.InlayHintParams) -> list[types.InlayHint] | None:
        found = state_and_page(ls, params.text_document.uri)
        if found is None:
            return None
        state, rel = found
        settings = state.settings
        if not settings.inlay_heading_backlinks and settings.inlay_link_titles == "off":
            return None
        await wait_indexed(state)
        hints = inlay_hints(
            state.vault, rel, params.range.start.line, params.range.end.line,
            backlinks=settings.inlay_heading_backlinks, titles=settings.inlay_link_titles,
        )
        return [
            types.InlayHint(
                position=types.Position(line=h.line, character=h.char),
                label=h.label,
                tooltip=h.tooltip,
                padding_left=True,
            )
            for h in hints
        ]
