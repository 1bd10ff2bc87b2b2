"""``--rank hybrid``: reciprocal rank fusion of ranked arms, each hit explained by its arm ranks.

Arms: ``default`` (the explained channel ranking, lexical), ``bm25f`` (BM25F over title,
aliases, headings, tags and body with stemming, lexical; ``bm25.py``) and, when the optional
embeddings extra is installed and the caller passes a vector index, ``vector`` (cosine
similarity of sentence embeddings; ``embed.py``). Each arm contributes its top
``max(RRF_DEPTH, limit)`` pages.

Fusion (Cormack, Clarke & Büttcher 2009, "Reciprocal rank fusion outperforms Condorcet and
individual rank learning methods"): a page earns ``1 / (RRF_K + rank)`` from every arm that
ranks it (rank 0 = top), recorded as one ``rrf`` component per arm: term = the arm, hits =
rank + 1, via = ``lexical`` or ``vector``, points rounded to RRF_DECIMALS. The hit's score is
``round(fsum(points), RRF_DECIMALS)``, so in the JSON the score is the decimal sum of the
listed points; the hit's ``via`` says which kinds of arm found it (``lexical``, ``vector``,
``lexical+vector``). Hits order by (score desc, title casefolded, path), like the default ranking.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .bm25 import bm25f_rank
from .model import Hit, Match
from .query import Query
from .scoring import make_plan, order_matches
from .snippet import first_paragraph, make_snippet
from .vault import Vault
from .weights import POINTS, RRF_DECIMALS, RRF_DEPTH, RRF_K

LEXICAL = "lexical"
VECTOR = "vector"


class VectorArm(Protocol):
    """What the hybrid ranking needs from a vector index (``embed.VectorIndex``)."""

    def rank(self, vault: Vault, query: Query, limit: int) -> list[str]:
        """The top ``limit`` pages for the query by vector similarity (filters applied)."""
        ...


@dataclass(frozen=True, slots=True)
class Arm:
    """One ranked list taking part in the fusion: its name, kind (lexical/vector) and pages."""

    name: str
    kind: str
    paths: Sequence[str]


def rrf_points(rank: int) -> float:
    """``POINTS["rrf"] / (RRF_K + rank)`` for a 0-based rank, rounded to RRF_DECIMALS."""
    return round(POINTS["rrf"] / (RRF_K + rank), RRF_DECIMALS)


def fused_score(points: Sequence[float]) -> float:
    """The score of a fused hit: the exact sum of its rounded points, rounded the same way."""
    return round(math.fsum(points), RRF_DECIMALS)


def hit_via(matched: Sequence[Match]) -> str:
    """``lexical``, ``vector`` or ``lexical+vector``: which kinds of arm found the page."""
    kinds = {m.via for m in matched}
    return "+".join(k for k in (LEXICAL, VECTOR) if k in kinds)


def arm_depth(query: Query) -> int:
    """How many pages each arm contributes: RRF_DEPTH, or the query's limit when more."""
    return max(RRF_DEPTH, query.limit)


def hybrid_search(
    vault: Vault, query: Query, default_hits: Sequence[Hit], vectors: VectorArm | None = None
) -> tuple[Hit, ...]:
    """The top ``query.limit`` hits (all when the limit is 0 or less) by reciprocal rank fusion
    of ``default_hits`` (the default ranking's first ``arm_depth(query)``, which ``search``
    ranks: the default arm) with the other arms."""
    depth = arm_depth(query)
    plan = make_plan(vault, query)
    arms = [
        Arm("default", LEXICAL, [h.page.path for h in default_hits]),
        Arm("bm25f", LEXICAL, bm25f_rank(vault, query, depth, plan)),
    ]
    if vectors is not None:
        arms.append(Arm("vector", VECTOR, vectors.rank(vault, query, depth)))
    return fuse(vault, query, arms, {h.page.path: h for h in default_hits})


def fuse(vault: Vault, query: Query, arms: Sequence[Arm], explained: dict[str, Hit] | None = None) -> tuple[Hit, ...]:
    """Reciprocal rank fusion of ``arms`` into hits (snippets from ``explained`` default hits)."""
    found: dict[str, list[Match]] = {}
    for arm in arms:
        for i, path in enumerate(arm.paths):
            found.setdefault(path, []).append(Match("rrf", arm.name, i + 1, rrf_points(i), "", arm.kind))
    pages = vault.pages
    order = sorted(
        (-fused_score([m.points for m in matched]), pages[path].title.casefold(), path)
        for path, matched in found.items()
    )
    if query.limit > 0:
        order = order[: query.limit]
    explained = explained or {}
    hits = []
    for neg, _title, path in order:
        page = pages[path]
        default = explained.get(path)
        if default is not None:
            snippet = default.snippet or make_snippet(page, default.matched)
        else:
            snippet = first_paragraph(page)
        matched = order_matches(found[path])
        hits.append(Hit(page, matched, -neg, snippet, hit_via(matched)))
    return tuple(hits)
