"""``wiki/NAME``: every engine operation (``engine/ops.py``) as a custom request.

The params are the operation's parameters in camelCase (``engine.operation.Param.key``), plus
``uri``, a document that picks the vault (else the first one). A page parameter also takes a
document URI, and a required page left out is the ``uri`` document itself (``wiki/related``
with just ``{uri}`` gives the pages related to that document). The result is the object
``vaultlens NAME … --json`` prints, built by the same ``Operation.run``; pages are read from
their open buffers first. Bad params and unanswerable requests are JSON-RPC InvalidParams.
The operation runs on the server's worker thread (``lsp/worker.py``): the event loop keeps
serving edits and other requests meanwhile, and ``$/cancelRequest`` answers RequestCancelled.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from vaultlens.engine.operation import DocumentPath, Operation, ParamError, Source, check_object
from vaultlens.engine.ops import OPERATIONS
from vaultlens.engine.scan import read_bytes

from ..convert import path_to_uri
from ..server import VaultServer, VaultState

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


def _as_dict(params: Any) -> dict[str, Any]:
    if params is None:
        return {}
    if isinstance(params, dict):
        return dict(params)
    if hasattr(params, "_asdict"):  # pygls hands a custom request's object over as a namedtuple
        return dict(params._asdict())
    raise JsonRpcInvalidParams("params must be an object")


def source(ls: VaultServer, state: VaultState) -> Source:
    """The vault as the server has it: a page's text is its open buffer, else the file on disk."""

    def text(path: str) -> str | None:
        if path in state.open_docs:
            return ls.workspace.get_text_document(path_to_uri(state.abs(path))).source
        try:
            return read_bytes(state.root, path).decode("utf-8", errors="replace")
        except OSError:
            return None  # gone since it was indexed: answer from the indexed body

    return Source(state.vault, state.root, text, state.vector_arm, state.settings.hints_threshold)


def arguments(op: Operation, params: Any) -> tuple[dict[str, Any], str | None]:
    """``(arguments, uri)`` from a request's params, checked; InvalidParams naming the field."""
    data = _as_dict(params)
    uri = data.get("uri")
    page = op.page_param
    if page is not None and data.get(page.key) is None:
        if not isinstance(uri, str) or not uri:
            raise JsonRpcInvalidParams(f'"{page.key}" or "uri" is required: a page, or the document it is in')
        data[page.key] = uri
    try:
        args = check_object(op, data, spell=lambda p: p.key, also=("uri",))
    except ParamError as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    if uri is not None and not isinstance(uri, str):
        raise JsonRpcInvalidParams('"uri" must be a string')
    return args, uri


def _documents_as_paths(ls: VaultServer, state: VaultState, op: Operation, args: dict[str, Any]) -> None:
    """Page arguments given as document URIs become those documents' paths in ``state``."""
    for param in op.params:
        value = args.get(param.name)
        if not (param.page and isinstance(value, str) and value.startswith("file:")):
            continue
        found = ls.state_for_uri(value)
        inside = found is not None and found[0] is state
        if not inside and param.required:
            raise JsonRpcInvalidParams(f'"{param.key}": {value} is not inside the vault of this request')
        args[param.name] = DocumentPath(found[1]) if inside else None  # type: ignore[index]


def handler(op: Operation) -> Callable[[VaultServer, Any], Awaitable[dict[str, Any]]]:
    """The ``wiki/NAME`` request handler of one operation."""

    async def answer(ls: VaultServer, params: Any) -> dict[str, Any]:
        args, uri = arguments(op, params)
        state = await vault_for_request(ls, uri)
        _documents_as_paths(ls, state, op, args)
        found = source(ls, state)
        try:  # on the worker thread: edits meanwhile stop and rerun it, a cancel ends it (lsp/worker.py)
            return await ls.worker.run(lambda: op.run(found, **args))
        except ValueError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None

    answer.__name__ = f"wiki_{op.name}"
    return answer


def register(server: VaultServer) -> None:
    """Register ``wiki/NAME`` for every operation."""
    for op in OPERATIONS:
        server.feature(f"wiki/{op.name}")(handler(op))
