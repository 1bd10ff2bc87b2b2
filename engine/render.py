"""Hits to wire data and text: the JSON object every surface shares, and Markdown for hovers.

``search_payload`` is the one place the search result object is built: the CLI prints it and
the language server returns it, so both are equal by construction.
"""

from __future__ import annotations

import json
import os
from typing import Any

from .model import Hit, Match, Page
from .query import Query
from .vault import Vault


def link_target(vault: Vault, page: Page, style: str = "auto") -> str:
    """The shortest link target that resolves to ``page`` alone, in vaultlens and in Obsidian.

    ``style``: ``title`` (the title when it resolves uniquely), ``filename`` (the file stem),
    ``path`` (vault-relative path without ``.md``), or ``auto`` (the file stem when it is
    unique, else the path).
    """
    noext = page.path[:-3] if page.path.lower().endswith(".md") else page.path
    if style == "path":
        return noext
    if style == "title":
        r = vault.resolve(page.title)
        if r.path == page.path and not r.ambiguous:
            return page.title
    r = vault.resolve(page.stem)
    if r.path == page.path and not r.ambiguous and r.via == "stem":
        return page.stem
    return noext


def wikilink(vault: Vault, page: Page, style: str = "auto", label: str | None = None) -> str:
    """A ``[[…]]`` link to ``page``; shows the title as the label when the target differs from it."""
    target = link_target(vault, page, style)
    if label is None and target.rsplit("/", 1)[-1].casefold() != page.title.casefold():
        label = page.title
    if not label or label == target:
        return f"[[{target}]]"
    return f"[[{label}|{target}]]" if vault.label_first else f"[[{target}|{label}]]"


def hit_to_json(vault: Vault, hit: Hit) -> dict[str, Any]:
    """One hit as the wire object: title, wikilink, file, type, score, snippet, matched."""
    return {
        "title": hit.page.title,
        "wikilink": wikilink(vault, hit.page),
        "file": hit.page.path,
        "type": hit.page.type,
        "score": hit.score,
        "snippet": hit.snippet,
        "matched": [m.to_json() for m in hit.matched],
    }


def vault_name(vault: Vault) -> str:
    """The vault as named in results: its folder's name (the same on every machine)."""
    return os.path.basename(os.path.normpath(vault.root)) if vault.root else ""


def search_payload(vault: Vault, query: Query, hits: tuple[Hit, ...]) -> dict[str, Any]:
    """The search result object that ``vaultlens search --json`` prints and ``wiki/search`` returns."""
    return {
        "command": "search",
        "vault": vault_name(vault),
        "query": query.text,
        "hits": [hit_to_json(vault, h) for h in hits],
    }


def dumps(payload: Any) -> str:
    """Canonical JSON text: UTF-8 characters kept, keys in insertion order, no trailing spaces."""
    return json.dumps(payload, ensure_ascii=False, indent=2)


def hit_line(hit: Hit) -> str:
    """One line of the human output: score, [[Title]], (path)."""
    return f"{_number(hit.score):>6}  [[{hit.page.title}]]  ({hit.page.path})"


def _number(value: int | float) -> str:
    return str(value) if isinstance(value, int) else f"{value:.6f}".rstrip("0").rstrip(".")


def breakdown_table(matched: tuple[Match, ...]) -> str:
    """The components of a score as a compact Markdown table."""
    rows = ["| channel | term | field | hits | points |", "|---|---|---|--:|--:|"]
    for m in matched:
        term = m.term if m.term else "(title)"
        field = m.field + (f" via {m.via}" if m.via else "")
        rows.append(f"| {m.channel} | {_cell(term)} | {_cell(field)} | {m.hits} | {_number(m.points)} |")
    return "\n".join(rows)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
