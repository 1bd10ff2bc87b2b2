"""Helpers for engine tests: build a vault from a dict of files, snapshot its state, check hits.

Not a test module (no ``test_`` prefix); ``tests/conftest.py`` puts this folder on ``sys.path``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vaultlens.engine.model import Hit
from vaultlens.engine.page import parse_page
from vaultlens.engine.query import parse_query
from vaultlens.engine.render import dumps, search_payload
from vaultlens.engine.search import search
from vaultlens.engine.vault import Vault
from vaultlens.engine.vocabulary import VOCABULARY_FILE, parse_vocabulary
from vaultlens.engine.weights import CHANNEL_RANK, POINTS

Files = Mapping[str, "str | bytes"]


def build_vault(files: Files, *, label_first: bool = False, order: list[str] | None = None) -> Vault:
    """A Vault of ``files`` (path -> text) parsed in ``order`` (default: as given).

    ``_vocabulary.md`` becomes the vault's vocabulary, as ``scan.open_vault`` does.
    """
    paths = list(files) if order is None else order
    pages = [parse_page(p, files[p], label_first=label_first) for p in paths if p != VOCABULARY_FILE]
    vault = Vault.from_pages(pages, "vault", label_first=label_first)
    if VOCABULARY_FILE in files:
        vault.set_vocabulary(parse_vocabulary(files[VOCABULARY_FILE]))
    return vault


def write_vault(root: Path, files: Files) -> Path:
    """Write ``files`` under ``root`` (folders created); returns ``root``."""
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text, encoding="utf-8")
    return root


def hits_for(vault: Vault, text: str, **options: Any) -> tuple[Hit, ...]:
    """Every hit for a query (no limit unless one is given)."""
    options.setdefault("limit", 0)
    return search(vault, parse_query(text, **options))


def payload_text(vault: Vault, text: str, **options: Any) -> str:
    """The canonical JSON text ``vaultlens search --json`` would print for this query."""
    options.setdefault("limit", 0)
    query = parse_query(text, **options)
    return dumps(search_payload(vault, query, search(vault, query)))


def components(hit: Hit) -> list[tuple]:
    """A hit's matches as (channel, term, hits, points, field, via) tuples, in order."""
    return [(m.channel, m.term, m.hits, m.points, m.field, m.via) for m in hit.matched]


def channel_points(hit: Hit) -> dict[tuple[str, str, str], int | float]:
    """Points per (channel, term, field) of one hit."""
    return {(m.channel, m.term, m.field): m.points for m in hit.matched}


def check_hit_contract(hit: Hit) -> None:
    """The per-hit invariants: score is the sum of points, channels are POINTS keys, order."""
    assert hit.matched, f"{hit.page.path}: a hit without components"
    assert hit.score == sum(m.points for m in hit.matched), hit
    assert hit.score > 0, hit
    for m in hit.matched:
        assert m.channel in POINTS, m
        assert m.points > 0, m
    keys = [(-m.points, CHANNEL_RANK[m.channel], m.term) for m in hit.matched]
    assert keys == sorted(keys), f"{hit.page.path}: components out of order: {hit.matched}"


def check_ranking_contract(hits: tuple[Hit, ...]) -> None:
    """Every hit keeps its contract and hits are in (score desc, title casefold, path) order."""
    for hit in hits:
        check_hit_contract(hit)
    order = [(-h.score, h.page.title.casefold(), h.page.path) for h in hits]
    assert order == sorted(order)
    paths = [h.page.path for h in hits]
    assert len(paths) == len(set(paths)), "a page listed twice"


def check_ranking(files: Files, query: str, expected_paths: list[str], **options: Any) -> tuple[Hit, ...]:
    """Build a vault from ``files``, run ``query`` and assert the exact ranked list of paths."""
    hits = hits_for(build_vault(files), query, **options)
    check_ranking_contract(hits)
    assert [h.page.path for h in hits] == expected_paths
    return hits


def only_hit(vault_or_files: Vault | Files, query: str, path: str, **options: Any) -> Hit:
    """The hit for ``path`` (fails when that page is not a hit)."""
    vault = vault_or_files if isinstance(vault_or_files, Vault) else build_vault(vault_or_files)
    found = [h for h in hits_for(vault, query, **options) if h.page.path == path]
    assert found, f"{path} is not a hit for {query!r}"
    return found[0]


def brute_backlinks(vault: Vault, path: str) -> list[tuple[str, Any]]:
    """Backlinks by resolving every link of every page (what ``Vault.backlinks`` must equal)."""
    out = []
    for source in sorted(vault.pages):
        page = vault.pages[source]
        for link in (*page.edges, *page.links):
            if vault.resolve_link(link, source).path == path:
                out.append((source, link))
    return out


def _sets(index: Mapping[str, set[str]]) -> dict[str, list[str]]:
    return {k: sorted(v) for k, v in sorted(index.items())}


def vault_state(vault: Vault) -> dict[str, Any]:
    """Everything observable about a vault, as plain sorted data (two equal vaults compare equal)."""
    resolutions = {}
    for path in sorted(vault.pages):
        resolutions[path] = [(link.kind, link.target, link.span, res) for link, res in vault.outlinks(path)]
    return {
        "pages": dict(sorted(vault.pages.items())),
        "fields": dict(sorted(vault.fields.items())),
        "postings": _sets(vault.postings),
        "stem_tokens": _sets(vault.stem_tokens),
        "name_postings": _sets(vault.name_postings),
        "tag_postings": _sets(vault.tag_postings),
        "heading_postings": _sets(vault.heading_postings),
        "path_postings": _sets(vault.path_postings),
        "body_twice": _sets(vault.body_twice),
        "body_thrice": _sets(vault.body_thrice),
        "sorted_name_tokens": list(vault.sorted_name_tokens),
        "by_path": dict(sorted(vault.by_path.items())),
        "by_stem": _sets(vault.by_stem),
        "by_title": _sets(vault.by_title),
        "by_alias": _sets(vault.by_alias),
        "linkers": _sets(vault.linkers),
        "tag_pages": _sets(vault.tag_pages),
        "resolutions": resolutions,
        "backlinks": {p: vault.backlinks(p) for p in sorted(vault.pages)},
        "edge_targets": {
            p: [vault.edge_targets(p, k) for k in ("sources", "related", "depends_on")] for p in sorted(vault.pages)
        },
    }
