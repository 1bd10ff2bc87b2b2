"""``wiki/related``: now registered with every other operation by ``features/wiki.py``; this
module stays only while ``lsp/server.py`` lists it."""

from __future__ import annotations

from ..server import VaultServer


def register(server: VaultServer) -> None:
    """Nothing to register: ``features/wiki.py`` registers every ``wiki/*`` request."""
