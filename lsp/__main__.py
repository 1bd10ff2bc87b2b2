"""The ``vaultlens`` console script: ``vaultlens lsp`` and ``vaultlens mcp`` start the servers, other
commands go to the engine."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from typing import NoReturn


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch ``vaultlens COMMAND …``; each server's imports load only for its own command."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["lsp"]:
        from .app import run

        finish(run(args[1:]))
    if args[:1] == ["mcp"]:
        finish(_run_mcp(args[1:]))
    from vaultlens.engine.cli import main as engine_main

    return engine_main(args)


def finish(code: int) -> NoReturn:
    """End a server process with ``code`` once its output is flushed, skipping interpreter
    shutdown: with the background vector thread (engine/embed.py) inside NumPy or tokenizers,
    that shutdown can crash (SIGSEGV, exit -11, after a quick ``exit``). The servers have
    finished their own work by then (asyncio.run joins the index-writing threads)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    logging.shutdown()
    os._exit(code)


MCP_MISSING = (
    "vaultlens: error: `vaultlens mcp` needs the MCP SDK (mcp>=2.3): pip install 'vaultlens[mcp]'\n"
)


def _run_mcp(argv: list[str]) -> int:
    """``vaultlens mcp``; the SDK is an optional extra, so say how to get it when it is absent."""
    try:
        from .mcp_server import run
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] not in ("mcp", "mcp_types"):
            raise
        sys.stderr.write(MCP_MISSING)
        return 2
    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
