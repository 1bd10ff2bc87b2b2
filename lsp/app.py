"""``vaultlens lsp``: the language server built with every feature, and its command line.

``build_server`` is the one place that knows every feature: each module under ``lsp/features/``
(and ``lsp/sync.py``) has a ``register(server)`` that adds its handlers, and imports only the
server's types (``lsp/server.py``), never this module, so the package has no import cycle.
A new feature is a module with a ``register`` and one line here.
"""

from __future__ import annotations

import argparse
import gc
import logging
import sys
from collections.abc import Sequence

from vaultlens.engine.scan import single_malloc_arena

from . import sync
from .features import (
    actions,
    codelens,
    completion,
    definition,
    diagnostics,
    hover,
    inlay,
    mentions,
    outline,
    references,
    rename,
    semantic,
    symbols,
    wiki,
)
from .server import VaultServer

# In registration order: document sync first, then the custom requests (wiki/*, one per engine
# operation), then navigation and editing.
FEATURES = (sync, wiki, symbols, completion, hover,
            definition, references, outline, codelens, diagnostics, actions, rename, mentions,
            inlay, semantic)


def build_server() -> VaultServer:
    """A server with every feature registered."""
    server = VaultServer()
    for module in FEATURES:
        module.register(server)
    return server


# The cyclic collector's first threshold until the server takes its runs into idle time
# (lsp/idle.py, from `initialized` on): 50,000 objects, not 700. The vault is frozen out of
# its sight once loaded, requests make almost no cycles (a benchmark session at 10,000 pages:
# 674 objects found in 123 collections), and with the default a young collection ran every few
# keystrokes, an older one (~1.5 ms) within one request in twenty-five.
GC_THRESHOLDS = (50_000, 10, 10)

# How long a thread holds the interpreter lock before one that waits for it may take it: 1 ms,
# not 5. The stdin reader, the event loop and the worker thread hand messages to each other, and
# each hand-over behind a busy thread waited for the interval (10,000 pages, lsp_bench warm,
# three sessions each, interleaved: workspace/symbol p50 6.1-7.7 -> 4.4-5.3 ms, completion p50
# 11.3-12.8 -> 8.6-11.2 ms, edit visible p50 4.0-4.2 -> 3.1-4.1 ms).
SWITCH_INTERVAL = 0.001


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
    sys.setswitchinterval(SWITCH_INTERVAL)
    server = build_server()
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not port.isdigit():
            parser.error("--tcp takes HOST:PORT, for example 127.0.0.1:2087")
        server.start_tcp(host or "127.0.0.1", int(port))
        return 0
    return server.start_io()
