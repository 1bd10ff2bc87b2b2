"""Conversions between LSP and engine terms: URIs and vault paths, spans and ranges, params.

Must not: rank or filter; everything here is a translation.
"""

from __future__ import annotations

import os
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import from_fs_path, to_fs_path

from engine.model import Span


def uri_to_path(uri: str) -> str | None:
    """An absolute file-system path for a ``file:`` URI (None for other schemes)."""
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return os.path.abspath(path) if path else None


def path_to_uri(path: str) -> str:
    """A ``file:`` URI for an absolute path."""
    return from_fs_path(path) or ("file://" + path)


def to_lsp_range(span: Span) -> types.Range:
    """An engine span (UTF-16 columns already) as an LSP range."""
    return types.Range(
        start=types.Position(line=span.start_line, character=span.start_char),
        end=types.Position(line=span.end_line, character=span.end_char),
    )


ZERO_RANGE = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))


def _get(params: Any, name: str, default: Any = None) -> Any:
    if isinstance(params, dict):
        return params.get(name, default)
    return getattr(params, name, default)


def _as_dict(params: Any) -> dict[str, Any]:
    if params is None:
        return {}
    if isinstance(params, dict):
        return params
    if hasattr(params, "_asdict"):
        return dict(params._asdict())
    raise JsonRpcInvalidParams("params must be an object")


def search_args_from_params(params: Any) -> dict[str, Any]:
    """``wiki/search`` params, checked, as keyword arguments for ``engine.query.parse_query``.

    Raises JsonRpcInvalidParams with a message naming the bad field.
    """
    data = _as_dict(params)
    query = data.get("query")
    if not isinstance(query, str):
        raise JsonRpcInvalidParams('"query" is required and must be a string')
    out: dict[str, Any] = {"text": query}
    for key in ("type", "folder", "tag"):
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise JsonRpcInvalidParams(f'"{key}" must be a string')
        out[key] = value
    graph = data.get("graph", False)
    if not isinstance(graph, bool):
        raise JsonRpcInvalidParams('"graph" must be true or false')
    out["graph"] = graph
    limit = data.get("limit", 10)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise JsonRpcInvalidParams('"limit" must be a whole number of at least 1')
    out["limit"] = limit
    uri = data.get("uri")
    if uri is not None and not isinstance(uri, str):
        raise JsonRpcInvalidParams('"uri" must be a string')
    out["uri"] = uri  # popped by the handler to pick the vault; not a parse_query argument
    unknown = sorted(set(data) - {"query", "type", "folder", "tag", "graph", "limit", "uri"})
    if unknown:
        raise JsonRpcInvalidParams("unknown parameter(s): " + ", ".join(unknown))
    return out
