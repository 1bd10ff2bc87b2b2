"""``wiki/grep``, ``wiki/glob``, ``wiki/read``, ``wiki/links``: the CLI's retrieval commands over LSP.

Each returns the same object as the matching ``vaultlens … --json`` command, built by
``engine.retrieve``. Bad params and unanswerable requests are JSON-RPC InvalidParams errors.
"""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from vaultlens.engine import retrieve

from ..convert import path_to_uri, retrieval_params
from ..server import VaultServer, VaultState
from .search import vault_for_request


def _full_text(ls: VaultServer, state: VaultState, path: str) -> str | None:
    """The page's whole text: the open buffer when there is one, else the file on disk."""
    from vaultlens.engine.scan import read_bytes

    uri = path_to_uri(state.abs(path))
    if path in state.open_docs:
        return ls.workspace.get_text_document(uri).source
    try:
        return read_bytes(state.root, path).decode("utf-8", errors="replace")
    except OSError:
        return None


def _frontmatter(ls: VaultServer, state: VaultState) -> dict[str, list[str]]:
    """Each page's frontmatter lines, from its open buffer or the file on disk."""
    out: dict[str, list[str]] = {}
    for path in state.vault.sorted_paths():
        text = _full_text(ls, state, path)
        found = retrieve.frontmatter_lines(text) if text else None
        if found is not None:
            out[path] = found
    return out


def register(server: VaultServer) -> None:
    """Register the retrieval requests."""

    async def _call(ls: VaultServer, method: str, params: Any) -> tuple[VaultState, dict[str, Any]]:
        args = retrieval_params(method, params)
        state = await vault_for_request(ls, args.pop("uri", None))
        return state, args

    def _run(fn, *a, **kw):
        try:
            return fn(*a, **kw)
        except retrieve.RetrievalError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None

    @server.feature("wiki/grep")
    async def wiki_grep(ls: VaultServer, params: Any) -> dict[str, Any]:
        state, args = await _call(ls, "wiki/grep", params)
        fm = _frontmatter(ls, state) if args.get("frontmatter") else None
        return _run(
            retrieve.grep, state.vault, args["pattern"], ignore_case=bool(args.get("ignoreCase")),
            folder=args.get("folder"), exclude=tuple(args.get("exclude") or ()), limit=args.get("limit") or 100,
            frontmatter=fm,
        )

    @server.feature("wiki/glob")
    async def wiki_glob(ls: VaultServer, params: Any) -> dict[str, Any]:
        state, args = await _call(ls, "wiki/glob", params)
        return _run(retrieve.glob, state.vault, args["pattern"], args.get("limit") or 0)

    @server.feature("wiki/read")
    async def wiki_read(ls: VaultServer, params: Any) -> dict[str, Any]:
        state, args = await _call(ls, "wiki/read", params)
        level = args.get("level", 1)
        full = None
        if level == 2:
            page = _run(retrieve.find_page, state.vault, args["page"])
            full = _full_text(ls, state, page.path)
        return _run(retrieve.read, state.vault, args["page"], level, full)

    @server.feature("wiki/links")
    async def wiki_links(ls: VaultServer, params: Any) -> dict[str, Any]:
        state, args = await _call(ls, "wiki/links", params)
        return _run(retrieve.links, state.vault, args["page"])
