"""search(vault, query) -> tuple[Hit, ...]: candidates, filters, scoring, graph walk, order.

Orchestration only: the points come from ``scoring`` and ``weights``, the walk from ``graph``.
Hits sort by score desc, then title casefolded, then path. Zero-score pages are not hits.
"""

from __future__ import annotations

from dataclasses import replace

from .graph import walk_typed_edges
from .model import Hit, Match
from .query import Query, passes_filters
from .scoring import candidates, order_matches, score_page
from .snippet import make_snippet
from .vault import Vault
from .weights import GRAPH_HOP2, POINTS


def _score(matched: tuple[Match, ...]) -> int | float:
    total = 0
    for m in matched:
        total += m.points
    return total


def hit_order(hit: Hit) -> tuple:
    """The ranking order: score desc, title casefolded, path."""
    return (-hit.score, hit.page.title.casefold(), hit.page.path)


def rank(vault: Vault, query: Query) -> tuple[list[Hit], set[str]]:
    """Every hit for the query in ranking order (no limit, no snippets), and the graph-only paths."""
    scored: dict[str, tuple[Match, ...]] = {}
    for path in candidates(vault, query):
        page = vault.pages[path]
        if not passes_filters(page, query):
            continue
        found = score_page(page, vault.fields[path], query, vault)
        if found:
            scored[path] = order_matches(found)

    graph_only: set[str] = set()
    if query.graph and scored:
        allowed = lambda p: passes_filters(vault.pages[p], query)  # noqa: E731
        for reached in walk_typed_edges(vault, scored, allowed):
            points = POINTS["graph-edge"] if reached.hop == 1 else GRAPH_HOP2
            source_title = vault.pages[reached.source].title
            scored[reached.path] = (Match("graph-edge", reached.predicate, reached.hop, points, "", source_title),)
            graph_only.add(reached.path)

    hits = [Hit(vault.pages[path], matched, _score(matched), "") for path, matched in scored.items()]
    hits.sort(key=hit_order)
    return hits, graph_only


def search(vault: Vault, query: Query) -> tuple[Hit, ...]:
    """The top ``query.limit`` hits (all of them when the limit is 0 or less), with snippets."""
    hits, graph_only = rank(vault, query)
    if query.limit > 0:
        hits = hits[: query.limit]
    return tuple(
        hit if hit.page.path in graph_only else replace(hit, snippet=make_snippet(hit.page, hit.matched))
        for hit in hits
    )


def matching_headings(page, text: str) -> list:
    """The page's sub-headings (level 2+) that contain every token of ``text``, in page order.

    Shown under their page in workspace symbols; they never change the page ranking.
    """
    from .text import tokenize

    words = set(tokenize(text))
    if not words:
        return []
    return [h for h in page.headings if h.level > 1 and words <= set(tokenize(h.text))]
