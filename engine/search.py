"""search(vault, query) -> tuple[Hit, ...]: candidates, filters, scoring, graph walk, order.

Orchestration only: the points come from ``scoring`` and ``weights``, the pruning from
``topk``, the walk from ``graph``, the fusion of ``--rank hybrid`` from ``hybrid``.
Hits sort by score desc, then title casefolded, then path. Zero-score pages are not hits.
"""

from __future__ import annotations

import heapq
from dataclasses import replace

from .cancel import checkpoint, every
from .fields import PageFields, holds_all
from .graph import walk_typed_edges
from .hybrid import VectorArm, arm_depth, hybrid_search
from .model import Hit, Page
from .query import Query, context_page, passes_filters
from .scoring import candidates, link_prior, make_plan, page_components, score_of, to_matches
from .snippet import make_snippet
from .text import tokenize
from .topk import prior_pages, prunes, top_components
from .vault import Vault
from .weights import GRAPH_HOP2, POINTS


def rank(vault: Vault, query: Query, limit: int = 0, *, explain: bool = True) -> tuple[list[Hit], set[str]]:
    """The hits for the query in ranking order (no snippets): the first ``limit`` of them, or
    all when ``limit`` is 0 or less; and the paths reached only by the graph walk.

    Match objects are made only for the hits returned, and not at all without ``explain``
    (the hits then carry their scores but no components: workspace symbols show none).
    """
    plan = make_plan(vault, query)
    pages = vault.pages
    fields = vault.fields
    found_in = candidates(vault, query, plan)
    checkpoint()  # a caller on a worker thread may stop the search here and between batches
    context = context_page(vault, query)
    near = near_pages(vault, context) if context is not None else set()
    if prunes(query, limit, len(found_in)):
        scored = top_components(vault, query, plan, found_in, limit, near)
    else:
        scored = {}
        for path in every(found_in):
            page = pages[path]
            if not passes_filters(page, query):
                continue
            found = page_components(page, fields[path], query, vault, plan)
            if found:
                scored[path] = found

    # context-edge: the pages one link away, either way, from the page the user is on
    if context is not None and scored:
        title = pages[context].title
        for path in near & scored.keys():
            scored[path].append(("context-edge", "", 1, POINTS["context-edge"], "", title))

    # link-prior depends on the page alone and costs a look at its linkers: added to every page
    # that could reach the first ``limit`` with it (``topk.prior_pages``)
    with_prior = prior_pages(scored, limit)
    for path in with_prior:
        prior = link_prior(vault, pages[path])
        if prior is not None:
            scored[path].append(prior)

    # graph-edge: the filters chose the keyword hits (the seeds); the walk reaches across them
    # unless ``graph_filtered`` keeps it to them too. A seed another seed reaches gets the
    # nearest hop's points once, as a page only the walk finds does.
    graph_only: set[str] = set()
    if query.graph and scored:
        had_prior = set(with_prior)
        allowed = (lambda p: passes_filters(pages[p], query)) if query.graph_filtered else (lambda _p: True)
        for reached in walk_typed_edges(vault, list(scored), allowed, seeds_reached=True):
            points = POINTS["graph-edge"] if reached.hop == 1 else GRAPH_HOP2
            edge = ("graph-edge", reached.predicate, reached.hop, points, "", pages[reached.source].title)
            if reached.seed:
                scored[reached.path].append(edge)
                if reached.path not in had_prior:  # its new points may lift it into the first ``limit``
                    prior = link_prior(vault, pages[reached.path])
                    if prior is not None:
                        scored[reached.path].append(prior)
            else:
                scored[reached.path] = [edge]
                graph_only.add(reached.path)

    order = [
        (-score_of(c[3] for c in found), pages[path].title.casefold(), path) for path, found in scored.items()
    ]
    order = heapq.nsmallest(limit, order) if 0 < limit < len(order) else sorted(order)
    hits = [Hit(pages[path], to_matches(scored[path]) if explain else (), -neg, "") for neg, _title, path in every(order)]
    return hits, graph_only


def near_pages(vault: Vault, context: str) -> set[str]:
    """The pages one link away from ``context``, either way (those ``context-edge`` goes to)."""
    near = {r.path for _link, r in vault.outlinks(context) if r.path}
    near.update(source for source, _link in vault.backlinks(context))
    near.discard(context)
    return near


def search(vault: Vault, query: Query, vectors: VectorArm | None = None) -> tuple[Hit, ...]:
    """The top ``query.limit`` hits (all of them when the limit is 0 or less), with snippets.

    ``query.rank == "hybrid"`` fuses this ranking with more arms (``hybrid.py``); ``vectors``
    (an ``embed.VectorIndex``) adds the vector arm there and is ignored by the default ranking.
    """
    if query.rank == "hybrid":
        default_hits, _graph_only = rank(vault, query, arm_depth(query))
        found = hybrid_search(vault, query, default_hits, vectors)
        return found if query.min_score is None else tuple(h for h in found if h.score >= query.min_score)
    hits, graph_only = rank(vault, query, query.limit)
    if query.min_score is not None:  # hits are in score order: the cut keeps a prefix of them
        hits = [h for h in hits if h.score >= query.min_score]
    return tuple(
        hit if hit.page.path in graph_only else replace(hit, snippet=make_snippet(hit.page, hit.matched))
        for hit in every(hits, 32)
    )


def matching_headings(page: Page, text: str, fields: PageFields | None = None) -> list:
    """The page's sub-headings (level 2+) that contain every token of ``text``, in page order.

    Shown under their page in workspace symbols; they never change the page ranking. With the
    page's ``fields``, a page whose headings lack one of the words is passed over at once.
    """
    words = set(tokenize(text))
    if not words or (fields is not None and not holds_all(fields.heading_set, words)):
        return []
    return [h for h in page.headings if h.level > 1 and words <= set(tokenize(h.text))]
