"""``wiki/related``: the pages most related to a page, as ``engine.related`` ranks them.

Params ``{uri, limit?}``; the result is ``{"command": "related", "vault", "page", "hits"}`` where
each hit is the search hit object (``engine.render.hit_to_json``) plus ``reasons``, the same
one-sentence explanation the hover's Related pages table shows.
"""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from vaultlens.engine.related import reasons, related
from vaultlens.engine.render import hit_to_json, vault_name

from ..server import VaultServer
from .search import vault_for_request

WIKI_RELATED = "wiki/related"
DEFAULT_LIMIT = 10


def _args(params: Any) -> tuple[str, int]:
    """``(uri, limit)`` from the params, checked; raises JsonRpcInvalidParams naming the field."""
    if params is not None and not isinstance(params, dict) and hasattr(params, "_asdict"):
        params = dict(params._asdict())
    if not isinstance(params, dict):
        raise JsonRpcInvalidParams("params must be an object")
    uri = params.get("uri")
    if not isinstance(uri, str) or not uri:
        raise JsonRpcInvalidParams('"uri" is required and must be a string')
    limit = params.get("limit", DEFAULT_LIMIT)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise JsonRpcInvalidParams('"limit" must be a whole number of at least 1')
    unknown = sorted(set(params) - {"uri", "limit"})
    if unknown:
        raise JsonRpcInvalidParams("unknown parameter(s): " + ", ".join(unknown))
    return uri, limit


def register(server: VaultServer) -> None:
    """Register ``wiki/related``."""

    @server.feature(WIKI_RELATED)
    async def wiki_related(ls: VaultServer, params: Any) -> dict[str, Any]:
        uri, limit = _args(params)
        state = await vault_for_request(ls, uri)
        found = ls.state_for_uri(uri)
        rel = found[1] if found else None
        hits = related(state.vault, rel, limit) if rel else ()
        return {
            "command": "related",
            "vault": vault_name(state.vault),
            "page": rel,
            "hits": [{**hit_to_json(state.vault, h), "reasons": reasons(h.matched)} for h in hits],
        }
