"""``wiki/search``: the same result object as ``vaultlens search --json`` for the same arguments."""

from __future__ import annotations

import asyncio
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from vaultlens.engine.query import parse_query
from vaultlens.engine.render import search_payload
from vaultlens.engine.scan import file_mtime
from vaultlens.engine.search import search

from ..convert import search_args_from_params
from ..server import VaultServer, VaultState

WIKI_SEARCH = "wiki/search"
INDEX_WAIT_SECONDS = 60


async def vault_for_request(ls: VaultServer, uri: str | None) -> VaultState:
    """The vault a custom request is about (by ``uri`` or the first one), once it is indexed."""
    state = None
    if uri:
        found = ls.state_for_uri(uri)
        if found is None:
            raise JsonRpcInvalidParams(f"{uri} is not inside any open vault")
        state = found[0]
    else:
        state = ls.default_state()
    if state is None:
        raise JsonRpcInvalidParams("no vault is open: open a workspace folder or a page first")
    try:
        await asyncio.wait_for(state.indexed.wait(), INDEX_WAIT_SECONDS)
    except asyncio.TimeoutError:
        pass  # answer from the pages indexed so far
    return state


def register(server: VaultServer) -> None:
    """Register ``wiki/search``."""

    @server.feature(WIKI_SEARCH)
    async def wiki_search(ls: VaultServer, params: Any) -> dict[str, Any]:
        args = search_args_from_params(params)
        state = await vault_for_request(ls, args.pop("uri", None))
        root = state.root
        context_uri = args.pop("context_uri", None)
        if context_uri is not None:
            found = ls.state_for_uri(context_uri)
            args["context"] = found[1] if found and found[0] is state else None
        try:
            query = parse_query(args.pop("text"), **args, mtime_of=lambda rel: file_mtime(root, rel))
        except ValueError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        return search_payload(state.vault, query, search(state.vault, query))
