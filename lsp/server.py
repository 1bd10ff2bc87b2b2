"""VaultServer: the pygls language server, its per-vault state, and ``vaultlens lsp``.

One vault per workspace folder; a page belongs to the folder that contains it. With no folder,
the nearest ancestor of the first opened file holding ``.obsidian/`` (else the file's folder).
State lives on the server object, never in module globals.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import inspect
import json
import logging
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from cattrs.errors import ClassValidationError
from cattrs.v import transform_error
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
    lsp_method,
)

from vaultlens.engine import __version__
from vaultlens.engine.cli import find_vault
from vaultlens.engine.scan import confined_path, single_malloc_arena
from vaultlens.engine.vault import Vault

from .documents import VaultWorkspace
from .settings import Settings, load_vault_settings, merge
from .transport import INVALID_REQUEST, PARSE_ERROR, SERVER_NOT_INITIALIZED, Unreadable, run_stdio

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

log = logging.getLogger("vaultlens")


@dataclass
class VaultState:
    """One workspace folder's vault: its live index, its settings and whether it is indexed."""

    root: str
    vault: Vault
    settings: Settings
    indexed: asyncio.Event = field(default_factory=asyncio.Event)
    open_docs: set[str] = field(default_factory=set)  # vault-relative paths of open buffers
    warnings: list[str] = field(default_factory=list)

    def rel(self, path: str) -> str | None:
        """The vault-relative POSIX path of an absolute path inside this vault, else None."""
        rel = os.path.relpath(path, self.root)
        if rel == "." or rel.startswith(".." + os.sep) or rel == ".." or os.path.isabs(rel):
            return None
        rel = rel.replace(os.sep, "/")
        try:  # through a symbolic link that leads out of the vault: not in it, never read
            confined_path(self.root, rel)
        except OSError:
            return None
        return rel

    def abs(self, rel: str) -> str:
        """The absolute path of a vault-relative path."""
        return os.path.join(self.root, *rel.split("/"))


class VaultProtocol(LanguageServerProtocol):
    """pygls' protocol, made to follow the LSP specification where pygls 2.1 does not.

    - Positions are UTF-16: engine spans count UTF-16 code units.
    - Buffers are ``lsp.documents.VaultTextDocument`` (LSP line breaks, clamped positions).
    - ``receive`` checks the session's state and the params' types before pygls dispatches a
      message, answering the errors the specification asks for (``lsp.transport`` explains which).
    - A request refused on purpose (InvalidParams, RequestFailed, ...) is logged as one line, not
      a traceback; tracebacks are kept for the server's own bugs (InternalError).
    - ``didChange`` for a document that is not open is ignored with one log line (pygls raised
      KeyError and showed it to the user); versions that do not increase are logged.
    """

    def __init__(self, server, converter) -> None:
        super().__init__(server, converter)
        self.initialize_seen = False

    @property
    def shut_down(self) -> bool:
        """True once ``shutdown`` has been answered."""
        return self._shutdown

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):  # type: ignore[override]
        if params.capabilities.general is not None:
            params.capabilities.general.position_encodings = [types.PositionEncodingKind.Utf16]
        result = yield from super().lsp_initialize(params)
        self._workspace = VaultWorkspace.like(self._workspace)  # no document is open yet
        return result

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):  # type: ignore[override]
        uri = params.text_document.uri
        doc = self.workspace.text_documents.get(unquote(uri))
        if doc is None:
            log.warning("ignoring didChange for %s: the document is not open", uri)
            return
        version = params.text_document.version
        if doc.version is not None and version <= doc.version:
            # The wire is ordered and each change is a delta on the previous text, so the
            # changes are applied as they come; the version is only a label.
            log.warning("didChange for %s has version %d after version %d; applied in arrival order",
                        uri, version, doc.version)
        yield from super().lsp_text_document__did_change(params)

    # --- errors and cancellation --------------------------------------------------------------

    def send_error(self, msg_id: Any, code: int, message: str) -> None:
        """Answer request ``msg_id`` with a JSON-RPC error (``id: null`` when the id is unknown)."""
        if msg_id is None:  # lsprotocol's ResponseErrorMessage would drop the id; JSON-RPC wants null
            self._send_data({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}})
            return
        self._send_response(msg_id, error=types.ResponseError(code=code, message=message))

    def _send_handler_result(self, future, *, msg_id):  # type: ignore[override]
        if not future.cancelled() and isinstance(future.exception(), JsonRpcException):
            self._request_futures.pop(msg_id, None)
            exc = future.exception()
            log.warning("request %r refused (%s): %s", msg_id, exc.code, exc.message)
            self._send_response(msg_id, error=exc.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def _send_data(self, data: Any) -> None:  # type: ignore[override]
        """pygls' ``_send_data``, except that a response that cannot be serialised is answered
        with InternalError: pygls logged the failure and the client waited for ever."""
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
        """pygls' handler call, with the handler's future forgotten once it is done.

        pygls keeps the future of every generator, coroutine and thread handler in
        ``_request_futures`` under the message's id, and only a request's answer removes it: each
        ``didOpen``/``didChange``/``didClose`` (built-in generator handlers, filed under a fresh
        uuid) and each async user handler a generator calls stayed there for good, about 1.2 kB
        a keystroke (3.7 MB after 3,000 didChange in ``benchmarks/load.py``).
        """

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

    # --- receiving ------------------------------------------------------------------------------

    def receive(self, raw: Any) -> None:
        """Check one decoded message against the session's state and its method's types, answer
        it with an error if it fails, else hand it to pygls (see ``lsp.transport``)."""
        if isinstance(raw, Unreadable):
            log.warning("a message is not JSON (%s); answered ParseError", raw.reason)
            self.send_error(None, PARSE_ERROR, f"Parse error: {raw.reason}")
            return
        if not isinstance(raw, dict) or raw.get("jsonrpc") != "2.0":
            log.warning("a message is not a JSON-RPC 2.0 object; answered InvalidRequest")
            msg_id = raw.get("id") if isinstance(raw, dict) else None
            self.send_error(_plain_id(msg_id), INVALID_REQUEST, 'Invalid request: not a JSON-RPC 2.0 object')
            return
        method = raw.get("method")
        is_request = "id" in raw and method is not None
        if method is not None and not isinstance(method, str) or is_request and _plain_id(raw["id"]) is None:
            log.warning("a message has a bad method or id; answered InvalidRequest")
            self.send_error(_plain_id(raw.get("id")), INVALID_REQUEST, "Invalid request: bad method or id")
            return
        if method is not None:
            refusal = self._refusal(method, is_request)
            if refusal is not None:
                code, message = refusal
                if is_request:
                    log.warning("request %r (%s) refused: %s", raw["id"], method, message)
                    self.send_error(raw["id"], code, message)
                else:
                    log.info("notification %s dropped: %s", method, message)
                return
        try:
            message = self._structure(raw)
        except Exception as exc:  # noqa: BLE001 - any malformed message is answered, never fatal
            detail = _describe(exc)
            if method is None:  # a response to our request that does not fit: fail that request
                log.warning("the response to request %r is malformed: %s", raw.get("id"), detail)
                future = self._request_futures.pop(raw.get("id"), None) if _plain_id(raw.get("id")) else None
                if future is not None and not future.done():
                    future.set_exception(JsonRpcException(f"malformed response: {detail}"))
            elif is_request:
                log.warning("request %r (%s) has invalid params: %s", raw["id"], method, detail)
                self.send_error(raw["id"], INVALID_PARAMS, f"Invalid params for {method}: {detail}")
            else:
                log.warning("%s dropped: invalid params: %s", method or "a message", detail)
            return
        if is_request and method == types.INITIALIZE:
            self.initialize_seen = True
        try:
            self.handle_message(message)
        except Exception:  # noqa: BLE001 - a bug in a handler must not end the session
            log.exception("failed to handle %s", method or "a response")
            if is_request:
                self.send_error(raw["id"], INTERNAL_ERROR, f"Internal error handling {method}")

    def _refusal(self, method: str, is_request: bool) -> tuple[int, str] | None:
        """The error for a message the session's state forbids (LSP 3.17 "Lifecycle Messages")."""
        if method == types.CANCEL_REQUEST or method == types.EXIT:
            return None
        if not self.initialize_seen:
            if method != types.INITIALIZE:
                return SERVER_NOT_INITIALIZED, f"the server is not initialized: send initialize before {method}"
        elif method == types.INITIALIZE:
            return INVALID_REQUEST, "initialize may only be sent once"
        if self._shutdown:
            return INVALID_REQUEST, f"the server is shutting down: {method} after shutdown"
        return None

    def _structure(self, raw: dict[str, Any]) -> Any:
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


def strict_converter():
    """pygls' converter, but a param of the wrong JSON type is an error, not converted.

    cattrs structures a primitive by calling its type, so ``{"query": ["a"]}`` became the query
    ``"['a']"``, ``{"line": "3"}`` the line 3 and ``{"newName": null}`` the name ``"None"``; LSP
    asks for InvalidParams instead.
    """
    converter = default_converter()

    def check(kind: type, accepted: Any, name: str):
        def structure(value: Any, wanted: Any) -> Any:
            if isinstance(value, bool) and kind is not bool or not isinstance(value, accepted):
                raise TypeError(f"expected {name}, got {type(value).__name__}")
            # the hook also serves subclasses: IntEnums (DiagnosticSeverity) and str enums (MarkupKind)
            return value if wanted is kind else wanted(value)

        return structure

    for kind, accepted, name in ((str, str, "a string"), (bool, bool, "true or false"),
                                 (int, int, "an integer"), (float, (int, float), "a number")):
        converter.register_structure_hook(kind, check(kind, accepted, name))
    return converter


def _plain_id(msg_id: Any) -> Any:
    """A request id as JSON-RPC allows it (a string or an integer), else None."""
    return msg_id if isinstance(msg_id, str) or isinstance(msg_id, int) and not isinstance(msg_id, bool) else None


def _describe(exc: Exception) -> str:
    """One line saying which params are wrong, with the field paths in the protocol's camelCase."""
    if isinstance(exc, ClassValidationError):
        found = transform_error(exc)
        text = "; ".join(found[:3]) + (f"; and {len(found) - 3} more" if len(found) > 3 else "")
    else:
        text = f"{type(exc).__name__}: {exc}"

    def camel(path: re.Match[str]) -> str:
        return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), path.group(0))

    return re.sub(r"\$\.[\w.\[\]]+", camel, text.replace("\n", " "))


class VaultServer(LanguageServer):
    """The vaultlens server: vault states keyed by root, plus client-provided settings."""

    def __init__(self) -> None:
        super().__init__("vaultlens", __version__, protocol_cls=VaultProtocol, converter_factory=strict_converter)
        self.vaults: dict[str, VaultState] = {}
        self.init_options: Any = None
        self.client_settings: Any = None
        self.index_tasks: list[asyncio.Task] = []
        # Set by lsp.transport while it dispatches a didChange whose document changes again
        # before the next request: apply the text, skip the re-parse.
        self.change_superseded = False
        self.input_pending: Callable[[], bool] = lambda: False  # set by lsp/transport.py
        self.quiet_for: Callable[[], float] = lambda: float("inf")  # seconds since the last message (idem)

    def start_io(self, stdin=None, stdout=None) -> int:  # type: ignore[override]
        """Serve over stdio with ``lsp.transport``'s loop; the process's exit code."""
        return run_stdio(self, stdin or sys.stdin.buffer, stdout or sys.stdout.buffer)

    # --- settings -------------------------------------------------------------------------

    def settings_for(self, root: str) -> tuple[Settings, list[str]]:
        """Defaults < .vaultlens.toml/.obsidian < initializationOptions < workspace/configuration."""
        settings, warnings = load_vault_settings(root)
        settings, more = merge(settings, self.init_options, "initializationOptions")
        warnings += more
        settings, more = merge(settings, self.client_settings, "workspace/configuration")
        return settings, warnings + more

    # --- vault lookup ---------------------------------------------------------------------

    def add_vault(self, root: str) -> VaultState:
        """Register a vault root (idempotent); indexing is started by the caller."""
        root = os.path.abspath(root)
        state = self.vaults.get(root)
        if state is None:
            settings, warnings = self.settings_for(root)
            label_first = settings.link_order == "label-first"
            state = VaultState(root, Vault(root, label_first=label_first), settings, warnings=warnings)
            self.vaults[root] = state
        return state

    def state_for_path(self, path: str) -> tuple[VaultState, str] | None:
        """The vault holding an absolute path (the deepest root wins) and the path inside it."""
        best: tuple[VaultState, str] | None = None
        for root, state in self.vaults.items():
            rel = state.rel(path)
            if rel is not None and (best is None or len(root) > len(best[0].root)):
                best = (state, rel)
        return best

    def state_for_uri(self, uri: str) -> tuple[VaultState, str] | None:
        """The vault and vault-relative path of a document URI, or None outside every vault."""
        from .convert import uri_to_path

        path = uri_to_path(uri)
        return self.state_for_path(path) if path else None

    def default_state(self) -> VaultState | None:
        """The first vault by root (for requests that name no document)."""
        return self.vaults[sorted(self.vaults)[0]] if self.vaults else None

    @staticmethod
    def root_for_loose_file(path: str) -> str:
        """The vault root for a file opened with no workspace folder."""
        folder = os.path.dirname(path)
        found = find_vault(folder)
        return found if os.path.isdir(os.path.join(found, ".obsidian")) else folder


def build_server() -> VaultServer:
    """A server with every feature registered."""
    from . import sync
    from .features import completion, hover, retrieve, search, symbols

    server = VaultServer()
    for module in (sync, search, symbols, completion, hover, retrieve):
        module.register(server)
    from .features.related import register as register_related  # wiki/related
    register_related(server)
    from .features import actions, codelens, definition, diagnostics, outline, references, rename  # navigate, edit
    for module in (definition, references, outline, codelens, diagnostics, actions, rename):
        module.register(server)
    return server


# The cyclic collector's first threshold: 50,000 objects, not 700. The vault is frozen out of
# its sight once loaded, requests make almost no cycles (a benchmark session at 10,000 pages:
# 674 objects found in 123 collections), and with the default a young collection ran every few
# keystrokes, an older one (~1.5 ms) within one request in twenty-five.
GC_THRESHOLDS = (50_000, 10, 10)


def run(argv: Sequence[str]) -> int:
    """``vaultlens lsp [--tcp HOST:PORT] [--log-file F] [-v]``: serve LSP over stdio (or TCP)."""
    parser = argparse.ArgumentParser(prog="vaultlens lsp", description="Run the vaultlens language server.")
    parser.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    parser.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead (for debugging)")
    parser.add_argument("--log-file", metavar="FILE", help="write the server log to FILE")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    args = parser.parse_args(list(argv))
    level = logging.WARNING - 10 * min(args.verbose, 2)
    handler: logging.Handler = logging.FileHandler(args.log_file) if args.log_file else logging.StreamHandler(sys.stderr)
    logging.basicConfig(level=level, handlers=[handler], format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    single_malloc_arena()  # before any thread: the vault loads in one and is served from another
    gc.set_threshold(*GC_THRESHOLDS)
    server = build_server()
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not port.isdigit():
            parser.error("--tcp takes HOST:PORT, for example 127.0.0.1:2087")
        server.start_tcp(host or "127.0.0.1", int(port))
        return 0
    return server.start_io()
