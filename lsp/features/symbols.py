"""``workspace/symbol``: pages ranked by the engine as the user types (prefix channel on).

The pages whose names match the query (title, alias, heading, path or tag: ``Query.names_only``),
ranked by what their names earn in ``engine.search``'s ranking (``rank``; no body channel, and
no snippets, which a symbol list does not show). A page matched by its body alone is left out,
as in Obsidian's quick switcher; ``wiki/search`` finds it."""

from __future__ import annotations

from lsprotocol import types

from vaultlens.engine.query import as_you_type
from vaultlens.engine.search import matching_headings, rank

from ..convert import ZERO_RANGE, path_to_uri, to_lsp_range
from ..server import VaultServer


def register(server: VaultServer) -> None:
    """Register ``workspace/symbol``."""

    @server.feature(types.WORKSPACE_SYMBOL)
    async def workspace_symbol(ls: VaultServer, params: types.WorkspaceSymbolParams) -> list[types.WorkspaceSymbol]:
        # on the worker thread: typing goes on meanwhile (lsp/worker.py)
        return await ls.worker.run(lambda: symbols(ls, params))


def symbols(ls: VaultServer, params: types.WorkspaceSymbolParams) -> list[types.WorkspaceSymbol]:
    """The symbols of every vault for ``params.query``."""
    out: list[types.WorkspaceSymbol] = []
    for root in sorted(ls.vaults):
        state = ls.vaults[root]
        vault, limit = state.vault, state.settings.limit
        if params.query.strip():
            hits, _ = rank(vault, as_you_type(params.query, limit), limit, explain=False)
            pages = [h.page for h in hits]
        else:
            pages = [vault.pages[p] for p in vault.sorted_paths()[:limit]]
        for page in pages:
            uri = path_to_uri(state.abs(page.path))
            folder = page.path.rsplit("/", 1)[0] if "/" in page.path else ""
            out.append(
                types.WorkspaceSymbol(
                    name=page.title,
                    kind=types.SymbolKind.File,
                    location=types.Location(uri=uri, range=ZERO_RANGE),
                    container_name=folder or None,
                )
            )
            for heading in matching_headings(page, params.query, vault.fields.get(page.path)):
                out.append(
                    types.WorkspaceSymbol(
                        name=f"{page.title} › {heading.text}",
                        kind=types.SymbolKind.String,
                        location=types.Location(uri=uri, range=to_lsp_range(heading.span)),
                        container_name=page.title,
                    )
                )
    return out

