"""Where vaultlens reaches into pygls: the one module that uses pygls' private names.

pygls 2.1 has no public hook for what the server needs (answer errors its own way, forget the
futures of finished handlers, keep buffers as LSP splits them), so this module overrides pygls'
private methods and reads its private attributes, and gives the rest of ``vaultlens.lsp`` public
names for them: ``ProtocolBase`` (under ``lsp/server.py``'s ``VaultProtocol``), ``TextDocumentBase``
and ``WorkspaceBase`` (under ``lsp/documents.py``). Nothing else in the package names a private
pygls attribute (``tests/reliability/test_wiring.py`` checks).

Written for pygls 2.1 (``TESTED``). ``check_pygls``, run when the server starts, logs a warning
on any other version, and raises when a pygls method overridden here no longer exists (the
override would silently never run); the base classes raise when an attribute they read is gone.

Must not: know about vaults, pages or the LSP features; it only adapts pygls.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import logging
import typing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCNotification, JsonRPCProtocol, JsonRPCRequestMessage, JsonRPCResponseMessage, LanguageServerProtocol
from pygls.workspace import TextDocument, Workspace
from pygls.workspace.position_codec import PositionCodec

log = logging.getLogger("vaultlens")

TESTED = ((2, 1),)  # the pygls (major, minor) versions these overrides were written and tested for
INTERNAL_ERROR = -32603

# The private names used here, by the pygls class that defines them: methods overridden or
# called (checked by check_pygls), attributes read (checked on each new object).
OVERRIDDEN = {
    JsonRPCProtocol: ("_send_data", "_send_response", "_send_handler_result", "_execute_handler",
                      "_handle_cancel_notification", "_serialize_message"),
    TextDocument: ("_apply_incremental_change",),
    Workspace: ("_create_text_document",),
}
PROTOCOL_ATTRIBUTES = ("_shutdown", "_converter", "_result_types", "_request_futures", "_include_headers", "_workspace")
DOCUMENT_ATTRIBUTES = ("_source",)
WORKSPACE_ATTRIBUTES = ("_sync_kind", "_position_encoding", "_position_codec")


def installed_pygls() -> str:
    """The installed pygls version ("unknown" when its metadata is missing)."""
    try:
        return version("pygls")
    except PackageNotFoundError:
        return "unknown"


def check_pygls(found: str | None = None) -> str | None:
    """Check pygls (``found``, else the installed version) against what this module was written
    for: the warning, logged, for an untested version, else None. Raises RuntimeError when a
    method this module overrides or calls is missing from pygls."""
    missing = [f"{cls.__name__}.{name}" for cls, names in OVERRIDDEN.items() for name in names if not hasattr(cls, name)]
    found = found or installed_pygls()
    if missing:
        raise RuntimeError(
            f"pygls {found} lacks {', '.join(missing)}, which vaultlens overrides (lsp/pygls_compat.py); "
            "install the pygls version vaultlens was tested with: pip install 'pygls>=2.1,<2.2'"
        )
    major_minor = tuple(int(p) for p in found.split(".")[:2] if p.isdigit())
    if major_minor in TESTED:
        return None
    tested = ", ".join(f"{a}.{b}" for a, b in TESTED)
    warning = (
        f"pygls {found} is installed; vaultlens' overrides of pygls internals (lsp/pygls_compat.py) were "
        f"tested with pygls {tested} only: if the server misbehaves, install pygls {tested}"
    )
    log.warning("%s", warning)
    return warning


def _require(obj: object, names: tuple[str, ...]) -> None:
    missing = [name for name in names if not hasattr(obj, name)]
    if missing:
        base = next(c for c in type(obj).__mro__ if c.__module__.startswith("pygls."))
        raise RuntimeError(
            f"pygls {installed_pygls()}: {base.__name__} objects have no {', '.join(missing)} "
            "(read by lsp/pygls_compat.py); install pygls 2.1"
        )


# --- the protocol ---------------------------------------------------------------------------


def _classes(roots: Sequence[Any], seen: set[Any], how: str) -> list[type]:
    """The attrs classes ``roots`` hold (themselves, their fields' types, through unions and
    containers), each not in ``seen`` as ``(how, class)`` yet, which it becomes."""
    found: list[type] = []
    stack = [kind for kind in roots if kind is not None]
    while stack:
        kind = stack.pop()
        if (how, kind) in seen:
            continue
        seen.add((how, kind))
        args = typing.get_args(kind)
        if args:
            stack.extend(arg for arg in args if arg is not type(None))
        elif isinstance(kind, type) and attrs.has(kind):
            found.append(kind)
            stack.extend(field.type for field in reversed(attrs.fields(kind)))
    return found


def _try_hook(make: Callable[[Any], object], kind: type) -> None:
    """``make(kind)``; a class the converter has no hook for is left to fail where it is used."""
    try:
        make(kind)
    except Exception:  # noqa: BLE001 - an optimisation: a message class nobody reads or writes
        log.debug("no converter hook for %s", kind.__name__)


class ProtocolBase(LanguageServerProtocol):
    """pygls' protocol with its private state under public names, and four of its private
    methods replaced:

    - ``_send_handler_result``: a request refused on purpose (a ``JsonRpcException`` from a
      handler: InvalidParams, RequestFailed, ...) is logged as one line, not a traceback, which
      stays for the server's own bugs (InternalError).
    - ``_send_data``: a response that cannot be serialised is answered with InternalError;
      pygls logged the failure and the client waited for ever.
    - ``_execute_handler``: a handler's future is forgotten once it is done. pygls keeps the
      future of every generator, coroutine and thread handler in ``_request_futures`` under the
      message's id, and only a request's answer removes it: each ``didOpen``/``didChange``/
      ``didClose`` (built-in generator handlers, filed under a fresh uuid) and each async user
      handler a generator calls stayed there for good, about 1.2 kB a keystroke (3.7 MB after
      3,000 didChange in ``benchmarks/load.py``).
    - ``_handle_cancel_notification``: a cancel for a request already answered (a normal race)
      is a debug line, not a warning.
    """

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        _require(self, PROTOCOL_ATTRIBUTES)

    def hook_makers(self, first: Sequence[str], sent: Sequence[str]
                    ) -> tuple[Iterator[Callable[[], object]], Iterator[Callable[[], object]]]:
        """Calls that each make one message class's converter hook: cattrs makes a class's hook
        when its first message is read or written (measured: 6 ms of a server's first
        completion, ~170 ms for every class of vaultlens' methods), which the first request of
        each kind would otherwise wait for. Two runs, to be used in order (each class comes
        once): the methods ``first``, then the rest by name.

        What is read: the messages of every method the server handles, and the answers to the
        requests it sends (``sent``, which are written); what is written: the answers to the
        methods handled and the ``sent`` messages. A class without a hook (a type lsprotocol
        never reads) is passed over."""
        handled = [*self.fm.builtin_features, *self.fm.features]
        rest = [method for method in sorted(set(handled) | set(sent)) if method not in first]
        seen: set[Any] = set()
        return self._makers(first, sent, seen), self._makers(rest, sent, seen)

    def _makers(self, methods: Sequence[str], sent: Sequence[str], seen: set[Any]
                ) -> Iterator[Callable[[], object]]:
        converter = self._converter
        for method in methods:
            kinds = types.METHOD_TO_TYPES.get(method)
            if kinds is None:
                continue
            message, answer = kinds[0], kinds[1]
            read, written = ((answer,), (message,)) if method in sent else ((message,), (answer,))
            for kind in _classes(read, seen, "read"):
                yield functools.partial(_try_hook, converter.get_structure_hook, kind)
            for kind in _classes(written, seen, "written"):
                yield functools.partial(_try_hook, converter.get_unstructure_hook, kind)

    # --- pygls' state, read ---------------------------------------------------------------

    @property
    def shut_down(self) -> bool:
        """True once ``shutdown`` has been answered."""
        return self._shutdown

    def replace_workspace(self, make: Callable[[Workspace], Workspace]) -> None:
        """Replace the workspace pygls made with ``make(workspace)``."""
        self._workspace = make(self._workspace)

    def forget_request(self, msg_id: Any) -> Future[Any] | None:
        """Stop tracking request ``msg_id`` (ours to the client, or the client's); its future."""
        return self._request_futures.pop(msg_id, None)

    def structure(self, raw: dict[str, Any]) -> Any:
        """The typed message (what pygls' ``structure_message`` makes, without its traceback log)."""
        if "id" in raw and "method" not in raw:
            if "error" in raw:
                return self._converter.structure(raw, types.ResponseErrorMessage)
            kind = self._result_types.pop(raw["id"], None) or JsonRPCResponseMessage
            return self._converter.structure(raw, kind)
        kind = self.get_message_type(raw["method"])
        if kind is None:
            kind = JsonRPCRequestMessage if "id" in raw else JsonRPCNotification
            raw = {"params": None, **raw}  # custom methods may omit params
        return self._converter.structure(raw, kind)

    def send_error(self, msg_id: Any, code: int, message: str) -> None:
        """Answer request ``msg_id`` with a JSON-RPC error (``id: null`` when the id is unknown)."""
        if msg_id is None:  # lsprotocol's ResponseErrorMessage would drop the id; JSON-RPC wants null
            self._send_data({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}})
            return
        self._send_response(msg_id, error=types.ResponseError(code=code, message=message))

    # --- pygls' methods, replaced ---------------------------------------------------------

    def _send_handler_result(self, future, *, msg_id):  # type: ignore[override]
        if not future.cancelled() and isinstance(future.exception(), JsonRpcException):
            self._request_futures.pop(msg_id, None)
            exc = future.exception()
            log.warning("request %r refused (%s): %s", msg_id, exc.code, exc.message)
            self._send_response(msg_id, error=exc.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def _send_data(self, data: Any) -> None:  # type: ignore[override]
        if not data:
            return
        if self.writer is None:
            log.error("cannot send a message: no transport")
            return
        try:
            body = json.dumps(data, default=self._serialize_message)
        except Exception:  # noqa: BLE001 - a bug in a handler's result, not in the session
            log.exception("could not serialise a message to the client")
            msg_id = getattr(data, "id", None)
            if msg_id is None or getattr(data, "method", None) is not None:
                return
            error = {"code": INTERNAL_ERROR, "message": "Internal error: the result could not be serialised"}
            body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": error})
        data = body.encode(self.CHARSET)
        if self._include_headers:
            header = f"Content-Length: {len(data)}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
            data = header.encode(self.CHARSET) + data
        res = self.writer.write(data)
        if inspect.isawaitable(res):
            asyncio.ensure_future(res)

    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):  # type: ignore[override]
        def done(future) -> None:
            if self._request_futures.get(msg_id) is future:
                del self._request_futures[msg_id]
            callback(future)

        super()._execute_handler(msg_id, handler, done, args, kwargs)

    def _handle_cancel_notification(self, msg_id: Any) -> None:  # type: ignore[override]
        future = self._request_futures.pop(msg_id, None)
        if future is None:  # already answered: nothing to cancel (a normal race)
            log.debug("$/cancelRequest for %r, which is already answered", msg_id)
        elif future.cancel():
            log.info("request %r cancelled", msg_id)


# --- buffers --------------------------------------------------------------------------------


class TextDocumentBase(TextDocument):
    """pygls' TextDocument with its stored text and its incremental-edit hook under public names."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _require(self, DOCUMENT_ATTRIBUTES)

    @property
    def stored_text(self) -> str | None:
        """The text pygls holds for the buffer (None for a document it reads from disk)."""
        return self._source

    @stored_text.setter
    def stored_text(self, text: str) -> None:
        self._source = text

    def apply_range_change(self, change: types.TextDocumentContentChangePartial) -> None:
        """Apply one incremental change (a range replaced by a text); pygls' own by default."""
        super()._apply_incremental_change(change)

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        self.apply_range_change(change)


class WorkspaceBase(Workspace):
    """pygls' Workspace making documents of ``document_class`` that share one ``codec_class`` codec."""

    document_class: type[TextDocument] = TextDocument
    codec_class: type[PositionCodec] = PositionCodec

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _require(self, WORKSPACE_ATTRIBUTES)
        self._position_codec = self.codec_class(encoding=self._position_encoding)

    @classmethod
    def like(cls, workspace: Workspace) -> WorkspaceBase:
        """A workspace with the same root, folders, sync kind and position encoding as ``workspace``
        (read from its attribute: pygls 2.1's ``position_encoding`` property returns the codec)."""
        return cls(
            workspace.root_uri,
            workspace._sync_kind,
            list(workspace.folders.values()),
            workspace._position_encoding,
        )

    def _create_text_document(
        self,
        doc_uri: str,
        source: str | None = None,
        version: int | None = None,
        language_id: str | None = None,
    ) -> TextDocument:
        return self.document_class(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self._position_codec,
        )
