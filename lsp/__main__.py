"""The ``vaultlens`` console script: ``vaultlens lsp`` starts the server, other commands go to the engine."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch ``vaultlens COMMAND …``; the server's imports load only for ``lsp``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["lsp"]:
        from .server import run

        return run(args[1:])
    from engine.cli import main as engine_main

    return engine_main(args)


if __name__ == "__main__":
    sys.exit(main())
