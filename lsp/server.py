"""VaultServer: the pygls language server, its per-vault state, and ``vaultlens lsp``.

One vault per workspace folder; a page belongs to the folder that contains it. With no folder,
the nearest ancestor of the first opened file holding ``.obsidian/`` (else the file's folder).
State lives on the server object, never in module globals.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method

from engine import __version__
from engine.cli import find_vault
from engine.vault import Vault

from .settings import Settings, load_vault_settings, merge

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
        return rel.replace(os.sep, "/")

    def abs(self, rel: str) -> str:
        """The absolute path of a vault-relative path."""
        return os.path.join(self.root, *rel.split("/"))


class VaultProtocol(LanguageServerProtocol):
    """The protocol with positions fixed to UTF-16: engine spans count UTF-16 code units."""

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):  # type: ignore[override]
        if params.capabilities.general is not None:
            params.capabilities.general.position_encodings = [types.PositionEncodingKind.Utf16]
        return (yield from super().lsp_initialize(params))


class VaultServer(LanguageServer):
    """The vaultlens server: vault states keyed by root, plus client-provided settings."""

    def __init__(self) -> None:
        super().__init__("vaultlens", __version__, protocol_cls=VaultProtocol)
        self.vaults: dict[str, VaultState] = {}
        self.init_options: Any = None
        self.client_settings: Any = None
        self.index_tasks: list[asyncio.Task] = []

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
    server = build_server()
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not port.isdigit():
            parser.error("--tcp takes HOST:PORT, for example 127.0.0.1:2087")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
    return 0
