"""Conversions between LSP and engine terms: URIs and vault paths, spans and ranges, params.

Must not: rank or filter; everything here is a translation.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import from_fs_path, to_fs_path

from vaultlens.engine.model import Span
from vaultlens.engine.query import RANKS


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
    rank = data.get("rank", "default")
    if rank not in RANKS:
        raise JsonRpcInvalidParams('"rank" must be ' + " or ".join(f'"{r}"' for r in RANKS))
    out["rank"] = rank
    for key, name in (("since", "since"), ("until", "until")):
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise JsonRpcInvalidParams(f'"{key}" must be a string (30m, 2h, 7d, 4w or an ISO date/time)')
        out[name] = value
    time_field = data.get("timeField", "updated")
    if time_field not in ("updated", "created"):
        raise JsonRpcInvalidParams('"timeField" must be "updated" or "created"')
    out["time_field"] = time_field
    min_score = data.get("minScore")
    if min_score is not None and (isinstance(min_score, bool) or not isinstance(min_score, (int, float))):
        raise JsonRpcInvalidParams('"minScore" must be a number')
    out["min_score"] = min_score
    where = data.get("filter")
    if where is not None and not isinstance(where, dict):
        if hasattr(where, "_asdict"):
            where = dict(where._asdict())
        else:
            raise JsonRpcInvalidParams('"filter" must be an object of frontmatter KEY: VALUE')
    out["where"] = where
    context = data.get("context")
    if context is not None and not isinstance(context, str):
        raise JsonRpcInvalidParams('"context" must be a page (path, title, alias, [[link]]) or a document URI')
    if isinstance(context, str) and context.startswith("file:"):
        out["context_uri"] = context  # the handler turns a document URI into its vault path
        context = None
    out["context"] = context
    hints = data.get("hints", False)
    if not isinstance(hints, bool):
        raise JsonRpcInvalidParams('"hints" must be true or false')
    out["hints"] = hints
    uri = data.get("uri")
    if uri is not None and not isinstance(uri, str):
        raise JsonRpcInvalidParams('"uri" must be a string')
    out["uri"] = uri  # popped by the handler to pick the vault; not a parse_query argument
    unknown = sorted(set(data) - {"query", "type", "folder", "tag", "graph", "limit", "rank", "uri", "since",
                                  "until", "timeField", "minScore", "filter", "hints", "context"})
    if unknown:
        raise JsonRpcInvalidParams("unknown parameter(s): " + ", ".join(unknown))
    return out


def _check(data: dict[str, Any], allowed: dict[str, tuple[type, ...]], required: tuple[str, ...]) -> dict[str, Any]:
    """Validate a custom request's params: required keys, types, no unknown keys."""
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise JsonRpcInvalidParams("unknown parameter(s): " + ", ".join(unknown))
    for key in required:
        if data.get(key) is None:
            raise JsonRpcInvalidParams(f'"{key}" is required')
    for key, kinds in allowed.items():
        value = data.get(key)
        if value is None:
            continue
        if isinstance(value, bool) and bool not in kinds:
            raise JsonRpcInvalidParams(f'"{key}" has the wrong type')
        if not isinstance(value, kinds):
            names = " or ".join({str: "a string", bool: "true or false", int: "a whole number", list: "a list"}[k]
                                for k in kinds)
            raise JsonRpcInvalidParams(f'"{key}" must be {names}')
    return data


def retrieval_params(method: str, params: Any) -> dict[str, Any]:
    """Checked params of ``wiki/grep``, ``wiki/glob``, ``wiki/read``, ``wiki/links``, ``wiki/related``."""
    data = _as_dict(params)
    spec: dict[str, tuple[dict[str, tuple[type, ...]], tuple[str, ...]]] = {
        "wiki/grep": (
            {"pattern": (str,), "ignoreCase": (bool,), "folder": (str,), "exclude": (list, str), "limit": (int,),
             "frontmatter": (bool,), "uri": (str,)},
            ("pattern",),
        ),
        "wiki/glob": ({"pattern": (str,), "limit": (int,), "uri": (str,)}, ("pattern",)),
        "wiki/read": ({"page": (str,), "level": (int,), "uri": (str,)}, ("page",)),
        "wiki/links": ({"page": (str,), "uri": (str,)}, ("page",)),
        "wiki/related": ({"page": (str,), "limit": (int,), "uri": (str,)}, ()),
    }
    allowed, required = spec[method]
    out = dict(_check(data, allowed, required))
    limit = out.get("limit")
    if limit is not None and limit < 1:
        raise JsonRpcInvalidParams('"limit" must be a whole number of at least 1')
    if isinstance(out.get("exclude"), str):
        out["exclude"] = [out["exclude"]]
    if out.get("exclude") is not None and not all(isinstance(e, str) for e in out["exclude"]):
        raise JsonRpcInvalidParams('"exclude" must be a list of path prefixes')
    return out
