"""search(vault, query) -> tuple[Hit, ...]: candidates, filters, scoring, graph walk, order.

Orchestration only: the points come from ``scoring`` and ``weights``, the walk from ``graph``.
Hits sort by score desc, then title casefolded, then path. Zero-score pages are not hits.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import replace

from .graph import walk_typed_edges
from .hybrid import VectorArm, hybrid_search
from .model import Hit
from .query import Query, context_page, passes_filters
from .scoring import candidates, link_prior, make_plan, page_components, to_matches
from .snippet import make_snippet
from .vault import Vault
from .weights import GRAPH_HOP2, POINTS


def score_of(points: Iterable[int | float]) -> int | float:
    """The score of a hit: the sum of its components' points and nothing else.

    Points are whole numbers or exact binary fractions (``weights.FIXED_STEP``), so the sum is
    exact whatever the order of addition: the score equals the sum of the listed points.
    """
    return sum(points)


def hit_order(hit: Hit) -> tuple:
    """The ranking order: score desc, title casefolded, path."""
    return (-hit.score, hit.page.title.casefold(), hit.page.path)


def rank(vault: Vault, query: Query, limit: int = 0) -> tuple[list[Hit], set[str]]:
    """The hits for the query in ranking order (no snippets): the first ``limit`` of them, or
    all when ``limit`` is 0 or less; and the paths reached only by the graph walk.

    Every candidate is scored; Match objects are made only for the hits returned.
    """
    plan = make_plan(vault, query)
    pages = vault.pages
    fields = vault.fields
    scored: dict[str, list] = {}
    for path in candidates(vault, query, plan):
        page = pages[path]
        if not passes_filters(page, query):
            continue
        found = page_components(page, fields[path], query, vault, plan)
        if found:
            scored[path] = found

    # context-edge: the pages one link away, either way, from the page the user is on
    context = context_page(vault, query)
    if context is not None and scored:
        near = {r.path for _link, r in vault.outlinks(context) if r.path}
        near.update(source for source, _link in vault.backlinks(context))
        near.discard(context)
        title = pages[context].title
        for path in near & scored.keys():
            scored[path].append(("context-edge", "", 1, POINTS["context-edge"], "", title))

    # link-prior (at most POINTS["link-prior"]) depends on the page alone and costs a look at its
    # linkers: add it to every page that could reach the first ``limit`` with it, which gives the
    # same first ``limit`` hits, with the same scores, as adding it everywhere.
    with_prior = scored.keys()
    if 0 < limit < len(scored):
        base = {path: score_of(c[3] for c in found) for path, found in scored.items()}
        floor = heapq.nlargest(limit, base.values())[-1] - POINTS["link-prior"]
        with_prior = [path for path, score in base.items() if score >= floor]
    for path in with_prior:
        prior = link_prior(vault, pages[path])
        if prior is not None:
            scored[path].append(prior)

    graph_only: set[str] = set()
    if query.graph and scored:
        allowed = lambda p: passes_filters(pages[p], query)  # noqa: E731
        for reached in walk_typed_edges(vault, scored, allowed):
            points = POINTS["graph-edge"] if reached.hop == 1 else GRAPH_HOP2
            source_title = pages[reached.source].title
            scored[reached.path] = [("graph-edge", reached.predicate, reached.hop, points, "", source_title)]
            graph_only.add(reached.path)

    order = [
        (-score_of(c[3] for c in found), pages[path].title.casefold(), path) for path, found in scored.items()
    ]
    order = heapq.nsmallest(limit, order) if 0 < limit < len(order) else sorted(order)
    hits = [Hit(pages[path], to_matches(scored[path]), -neg, "") for neg, _title, path in order]
    return hits, graph_only


def search(vault: Vault, query: Query, vectors: VectorArm | None = None) -> tuple[Hit, ...]:
    """The top ``query.limit`` hits (all of them when the limit is 0 or less), with snippets.

    ``query.rank == "hybrid"`` fuses this ranking with more arms (``hybrid.py``); ``vectors``
    (an ``embed.VectorIndex``) adds the vector arm there and is ignored by the default ranking.
    """
    if query.rank == "hybrid":
        found = hybrid_search(vault, query, vectors)
        return found if query.min_score is None else tuple(h for h in found if h.score >= query.min_score)
    hits, graph_only = rank(vault, query, query.limit)
    if query.min_score is not None:  # hits are in score order: the cut keeps a prefix of them
        hits = [h for h in hits if h.score >= query.min_score]
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
