"""VaultServer: the pygls language server and its per-vault state (``VaultState``).

One vault per workspace folder; a page belongs to the folder that contains it. With no folder,
the nearest ancestor of the first opened file holding ``.obsidian/`` (else the file's folder).
State lives on the server object, never in module globals. Features import this module;
``lsp/app.py`` builds the server with every feature registered, and runs it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from cattrs.errors import ClassValidationError
from cattrs.v import transform_error
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import default_converter, lsp_method

from vaultlens.engine import __version__
from vaultlens.engine.cli import find_vault
from vaultlens.engine.diagnose import Finding
from vaultlens.engine.model import Page
from vaultlens.engine.vault import Vault

from .convert import uri_to_path
from .documents import VaultWorkspace
from .live import VaultSync
from .pygls_compat import ProtocolBase, check_pygls
from .settings import Settings, load_vault_settings, merge
from .worker import Worker
from .transport import INVALID_REQUEST, PARSE_ERROR, SERVER_NOT_INITIALIZED, Unreadable, run_stdio

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

log = logging.getLogger("vaultlens")


@dataclass(eq=False, kw_only=True)
class VaultState(VaultSync):
    """One workspace folder's vault: its live index (``lsp.live.VaultSync``: the page rules, the
    open buffers, loads), its settings, whether it is indexed, and what the features keep per vault."""

    settings: Settings
    warnings: list[str] = field(default_factory=list)
    indexed: asyncio.Event = field(default_factory=asyncio.Event)
    named: asyncio.Event = field(default_factory=asyncio.Event)  # every page's names are in (``lsp/sync.py``)
    # what the features keep per vault
    published_diagnostics: dict[str, tuple[str, tuple[Finding, ...]]] = field(default_factory=dict)  # rel -> (uri, findings) pushed
    pending_diagnostics: dict[str, Page | None] = field(default_factory=dict)  # rel -> the page before its changes
    diagnostics_timer: asyncio.TimerHandle | None = None  # the debounced re-check of pending_diagnostics
    diagnostics_since: float = 0.0  # when the oldest of pending_diagnostics came (loop time)
    workspace_findings: dict[str, tuple[Finding, ...]] | None = None  # rel -> findings, once the client pulls workspace/diagnostic
    hover_generation: tuple[Any, int] | None = None  # (weakref to the vault, its graph generation) of hover_memo
    hover_memo: dict[Any, tuple[Any, str]] = field(default_factory=dict)  # key -> (what it was made from, text)
    followed_paths: set[str] = field(default_factory=set)  # files an edit touched, watched on disk (sync.follow_disk)

    def __post_init__(self) -> None:
        self.exclude = self.settings.exclude

    def use_settings(self, settings: Settings, warnings: list[str]) -> None:
        """New settings (and their warnings); the page rules follow them."""
        self.settings, self.warnings, self.exclude = settings, warnings, settings.exclude


class VaultProtocol(ProtocolBase):
    """pygls' protocol, made to follow the LSP specification where pygls 2.1 does not
    (``lsp.pygls_compat.ProtocolBase`` holds the overrides of pygls internals: errors refused on
    purpose logged as one line, unserialisable results answered, finished futures forgotten).

    - Positions are UTF-16: engine spans count UTF-16 code units.
    - Buffers are ``lsp.documents.VaultTextDocument`` (LSP line breaks, clamped positions).
    - ``receive`` checks the session's state and the params' types before pygls dispatches a
      message, answering the errors the specification asks for (``lsp.transport`` explains which).
    - ``didChange`` for a document that is not open is ignored with one log line (pygls raised
      KeyError and showed it to the user); versions that do not increase are logged.
    """

    def __init__(self, server, converter) -> None:
        super().__init__(server, converter)
        self.initialize_seen = False
        self.vault_server = server

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):  # type: ignore[override]
        if params.capabilities.general is not None:
            params.capabilities.general.position_encodings = [types.PositionEncodingKind.Utf16]
        result = yield from super().lsp_initialize(params)
        self.replace_workspace(VaultWorkspace.like)  # no document is open yet
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
        self.vault_server.worker.quiesce()  # a search reading the buffers stops first (lsp/worker.py)
        yield from super().lsp_text_document__did_change(params)

    # --- receiving ------------------------------------------------------------------------------

    def receive(self, raw: Any) -> None:
        """Check one decoded message against the session's state and its method's types, answer
        it with an error if it fails, else hand it to pygls (see ``lsp.transport``)."""
        if isinstance(raw, Unreadable):
            msg_id = _plain_id(raw.msg_id)
            log.warning("a message is not JSON (%s); answered ParseError (id %r)", raw.reason[:200], msg_id)
            self.send_error(msg_id, PARSE_ERROR, f"Parse error: {raw.reason[:200]}")
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
        if is_request and _is_notification(method):
            log.warning("%s is a notification but came with id %r; answered InvalidRequest", method, raw["id"])
            self.send_error(raw["id"], INVALID_REQUEST, f"Invalid request: {method} is a notification; send it without an id")
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
            message = self.structure(raw)
        except Exception as exc:  # noqa: BLE001 - any malformed message is answered, never fatal
            detail = _describe(exc)
            if method is None:  # a response to our request that does not fit: fail that request
                log.warning("the response to request %r is malformed: %s", raw.get("id"), detail)
                future = self.forget_request(raw.get("id")) if _plain_id(raw.get("id")) else None
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
        if self.shut_down:
            return INVALID_REQUEST, f"the server is shutting down: {method} after shutdown"
        return None


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


def _is_notification(method: str) -> bool:
    """Whether the LSP specification declares ``method`` a notification (which has no answer)."""
    found = types.METHOD_TO_TYPES.get(method)
    return found is not None and found[1] is None and found[0].__name__.endswith("Notification")


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


# What a person typing sends first, whose converter hooks are made first (``idle.prepare_protocol``)
TYPING = (types.TEXT_DOCUMENT_DID_CHANGE, types.TEXT_DOCUMENT_COMPLETION, types.TEXT_DOCUMENT_HOVER,
          types.WORKSPACE_SYMBOL, types.TEXT_DOCUMENT_DEFINITION, types.TEXT_DOCUMENT_DID_OPEN)
# What the server sends the client (``ProtocolBase.hook_makers``: their classes are written, the
# answers read)
SENT = (types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, types.WINDOW_LOG_MESSAGE, types.PROGRESS,
        types.WINDOW_WORK_DONE_PROGRESS_CREATE, types.CLIENT_REGISTER_CAPABILITY, types.WORKSPACE_CONFIGURATION,
        types.WORKSPACE_APPLY_EDIT, types.WORKSPACE_CODE_LENS_REFRESH, types.WORKSPACE_DIAGNOSTIC_REFRESH)


class VaultServer(LanguageServer):
    """The vaultlens server: vault states keyed by root, plus client-provided settings."""

    def __init__(self) -> None:
        check_pygls()  # before pygls builds anything on its internals: warns, or fails, here
        super().__init__("vaultlens", __version__, protocol_cls=VaultProtocol, converter_factory=strict_converter)
        self.vaults: dict[str, VaultState] = {}
        self.init_options: Any = None
        self.client_settings: Any = None
        self.index_tasks: list[asyncio.Task] = []
        self.collector: asyncio.Future | None = None  # the cyclic collector's idle-time runs (lsp/idle.py)
        self.protocol_prepared: asyncio.Future | None = None  # its message hooks made (idem)
        self.worker = Worker()  # runs the long requests off the event loop (lsp/worker.py)
        # Set by lsp.transport while it dispatches a didChange whose document changes again
        # before the next request: apply the text, skip the re-parse.
        self.change_superseded = False
        self.input_pending: Callable[[], bool] = lambda: False  # set by lsp/transport.py
        self.quiet_for: Callable[[], float] = lambda: float("inf")  # seconds since the last message (idem)

    def start_io(self, stdin=None, stdout=None) -> int:  # type: ignore[override]
        """Serve over stdio with ``lsp.transport``'s loop; the process's exit code."""
        return run_stdio(self, stdin or sys.stdin.buffer, stdout or sys.stdout.buffer)

    def shutdown(self) -> None:  # type: ignore[override]
        self.worker.close()
        super().shutdown()

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
            state = VaultState(root, Vault(root, label_first=label_first), settings=settings, warnings=warnings,
                               before_change=self.worker.quiesce)
            state.vectors.quiet_for = lambda: self.quiet_for()  # requests arriving: embed on one thread
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
