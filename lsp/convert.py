"""Conversions between LSP and engine terms: URIs and vault paths, spans and ranges.

Must not: rank or filter; everything here is a translation.
"""

from __future__ import annotations

import functools
import os

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from vaultlens.engine.model import Span


def uri_to_path(uri: str) -> str | None:
    """An absolute file-system path for a ``file:`` URI (None for other schemes)."""
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return os.path.abspath(path) if path else None


@functools.lru_cache(maxsize=1 << 15)
def path_to_uri(path: str) -> str:
    """A ``file:`` URI for an absolute path (remembered: quoting a path costs ~15 us, and the
    same pages come back in answer after answer)."""
    return from_fs_path(path) or ("file://" + path)


def to_lsp_range(span: Span) -> types.Range:
    """An engine span (UTF-16 columns already) as an LSP range."""
    return types.Range(
        start=types.Position(line=span.start_line, character=span.start_char),
        end=types.Position(line=span.end_line, character=span.end_char),
    )


ZERO_RANGE = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))
