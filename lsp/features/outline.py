"""``textDocument/documentSymbol`` (the heading outline, nested) and ``textDocument/foldingRange``
(the frontmatter and every section)."""

from __future__ import annotations

from lsprotocol import types
from pygls.capabilities import get_capability

from vaultlens.engine.folding import folding_ranges
from vaultlens.engine.navigate import Section, outline

from ..convert import to_lsp_range
from ..server import VaultServer
from .changes import state_and_page

_FOLD_KINDS = {
    "frontmatter": types.FoldingRangeKind.Imports,
    "section": types.FoldingRangeKind.Region,
    "code": types.FoldingRangeKind.Region,
    "callout": types.FoldingRangeKind.Region,
}


def _symbol(section: Section) -> types.DocumentSymbol:
    return types.DocumentSymbol(
        name=section.heading.text or "(empty heading)",
        detail="#" * section.heading.level,
        kind=types.SymbolKind.String,
        range=to_lsp_range(section.span),
        selection_range=to_lsp_range(section.heading.span),
        children=[_symbol(child) for child in section.children],
    )


def _flat(uri: str, sections: tuple[Section, ...], container: str | None) -> list[types.SymbolInformation]:
    out = []
    for section in sections:
        name = section.heading.text or "(empty heading)"
        out.append(
            types.SymbolInformation(
                name=name,
                kind=types.SymbolKind.String,
                location=types.Location(uri=uri, range=to_lsp_range(section.span)),
                container_name=container,
            )
        )
        out += _flat(uri, section.children, name)
    return out


def register(server: VaultServer) -> None:
    """Register ``textDocument/documentSymbol`` and ``textDocument/foldingRange``."""

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def document_symbol(
        ls: VaultServer, params: types.DocumentSymbolParams
    ) -> list[types.DocumentSymbol] | list[types.SymbolInformation] | None:
        found = state_and_page(ls, params.text_document.uri)
        if found is None:
            return None
        state, rel = found
        sections = outline(state.vault.pages[rel])
        if get_capability(
            ls.client_capabilities, "text_document.document_symbol.hierarchical_document_symbol_support", False
        ):
            return [_symbol(s) for s in sections]
        return _flat(params.text_document.uri, sections, None)

    @server.feature(types.TEXT_DOCUMENT_FOLDING_RANGE)
    def folding_range(ls: VaultServer, params: types.FoldingRangeParams) -> list[types.FoldingRange] | None:
        found = state_and_page(ls, params.text_document.uri)
        if found is None:
            return None
        state, rel = found
        return [
            types.FoldingRange(start_line=f.start_line, end_line=f.end_line, kind=_FOLD_KINDS[f.kind])
            for f in folding_ranges(state.vault.pages[rel])
        ]
