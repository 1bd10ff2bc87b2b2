"""``textDocument/foldingRange``: the frontmatter, heading sections, code fences and callouts of
the open buffer (``engine.folding``).

Must not: decide what folds; the engine does.
"""

from __future__ import annotations

from lsprotocol import types

from vaultlens.engine.folding import folding_ranges

from ..server import VaultServer



def register(server: VaultServer) -> None:
    """Register ``textDocument/foldingRange``."""

    @server.feature(types.TEXT_DOCUMENT_FOLDING_RANGE)
    def folding_range(ls: VaultServer, params: types.FoldingRangeParams) -> list[types.FoldingRange] | None:
        if ls.state_for_uri(params.text_document.uri) is None:
            return None
        doc = ls.workspace.get_text_document(params.text_document.uri)
        return [
            types.FoldingRange(start_line=f.start, end_line=f.end, kind=types.FoldingRangeKind.Region)
            for f in folding_ranges(doc.source)
        ]
