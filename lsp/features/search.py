"""``wiki/search`` and the other ``wiki/*`` requests: registered by ``features/wiki.py``, one per
engine operation; ``lsp/server.py`` still registers them through this module."""

from __future__ import annotations

from .wiki import register

__all__ = ["register"]
