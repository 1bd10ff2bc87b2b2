"""Agent hints for a search result: is it enough, and what to do next. Deterministic rules.

- ``max_score``: the top score divided by the best score this query could reach (a title-phrase
  match plus every term in the title: ``10 + 5 * terms``), capped at 1, rounded to 3 decimals.
- ``sufficient``: ``max_score >= SUFFICIENT`` (0.6): the top hit matches most of the query by name.
- ``next_action``: no hits -> ``broaden``; sufficient -> ``synthesize``; the top score is weak
  (``max_score < WEAK``, 0.3) and the top hits link to pages that are not hits -> ``expand``
  (read ``related_ids``); else ``refine`` (try ``suggested_queries``).
- ``suggested_queries``: up to 5, from the top hits' tags, then titles, that are not already
  in the query; ``related_ids``: pages the top hits link to that are not hits, up to 10;
  ``gap_keywords``: query terms that no hit matched in any channel.
Match labels for people: a hit is ``strong`` at >= 75 % of the top score, ``good`` at >= 40 %,
else ``weak``.
"""

from __future__ import annotations

from typing import Any

from .model import Hit
from .query import Query
from .vault import Vault
from .weights import POINTS

SUFFICIENT = 0.6
WEAK = 0.3
TOP = 3  # how many top hits feed suggestions and related pages
STRONG_LABEL = 0.75
GOOD_LABEL = 0.4


def best_possible(query: Query) -> int:
    """The score a page would get for a title-phrase match with every term in its title."""
    return POINTS["title-phrase"] + POINTS["title-term"] * len(query.terms) if query.terms else 0


def match_label(score: float, top: float) -> str:
    """``strong`` / ``good`` / ``weak``: a hit's score against the top hit's."""
    if top <= 0:
        return "weak"
    ratio = score / top
    return "strong" if ratio >= STRONG_LABEL else "good" if ratio >= GOOD_LABEL else "weak"


def hints(vault: Vault, query: Query, hits: tuple[Hit, ...]) -> dict[str, Any]:
    """The hints object for one search (see the module docstring for every rule)."""
    best = best_possible(query)
    top_score = hits[0].score if hits else 0
    max_score = round(min(1.0, top_score / best), 3) if best and hits else 0.0
    sufficient = bool(hits) and max_score >= SUFFICIENT
    hit_paths = {h.page.path for h in hits}

    related: list[str] = []
    for hit in hits[:TOP]:
        for _link, res in vault.outlinks(hit.page.path):
            if res.path and res.path not in hit_paths and res.path not in related:
                related.append(res.path)
    related = related[:10]

    words = set(query.terms)
    text = query.text.casefold()
    suggestions: list[str] = []
    for hit in hits[:TOP]:
        for tag in hit.page.tags:
            leaf = tag.rsplit("/", 1)[-1]
            if leaf not in words and leaf not in text and f"#{tag}" not in suggestions:
                suggestions.append(f"#{tag}")
    for hit in hits[:TOP]:
        title = hit.page.title
        if title.casefold() not in text and title not in suggestions:
            suggestions.append(title)
    matched_terms = {m.term for h in hits for m in h.matched}
    gaps = [t for t in query.terms if t not in matched_terms]

    if not hits:
        action = "broaden"
    elif sufficient:
        action = "synthesize"
    elif max_score < WEAK and related:
        action = "expand"
    else:
        action = "refine"
    return {
        "sufficient": sufficient,
        "max_score": max_score,
        "result_count": len(hits),
        "next_action": action,
        "suggested_queries": suggestions[:5],
        "related_ids": related,
        "gap_keywords": gaps,
    }
