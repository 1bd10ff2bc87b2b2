"""``--rank hybrid``: reciprocal rank fusion of ranked arms, each hit explained by its arm ranks.

Arms: ``default`` (the explained channel ranking, lexical), ``bm25f`` (BM25F over title,
aliases, headings, tags and body with stemming, lexical; ``bm25.py``) and, when the optional
embeddings extra is installed and the caller passes a vector index, ``vector`` (cosine
similarity of sentence embeddings; ``embed.py``), and ``name``: the pages the default arm
matched by name (title, alias, file name), weighted so that an exact name stays first. Each
arm contributes its top ``max(RRF_DEPTH, limit)`` pages.

Fusion (Cormack, Clarke & Büttcher 2009, "Reciprocal rank fusion outperforms Condorcet and
individual rank learning methods"), weighted: a page earns ``weight / (k + rank)`` from every
arm that ranks it (rank 0 = top; ARM_WEIGHTS; k = RRF_K for the lexical arms alone,
VECTOR_RRF_K with a vector arm), recorded as one ``rrf`` component per arm: term = the arm, hits =
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


# How much each arm's ranks count (weighted RRF; the default arm is the unit). Equal: since the
# default ranking learned questions (weak terms, body pairs, sections), a heavier vector arm
# pulls good lexical answers down (benchmarks/fusion_tune.py on the link-text and question dev
# sets of obsidian-tasks and dendron-site; docs/performance.md has the table).
ARM_WEIGHTS = {"default": 1.0, "bm25f": 1.0, "vector": 1.0}
# With a vector arm the fusion's k is small: the arms' first ranks decide (k=60, the paper's,
# flattens ranks 1-20 to within a third of each other). MRR@10 at equal weights, obsidian-tasks
# questions / links: 0.753 / 0.797 at k=5, 0.727 / 0.784 at k=60 (default ranking 0.722 / 0.764).
# The lexical arms alone keep RRF_K.
VECTOR_RRF_K = 5
# A page the default arm matched by name (the query is its title, an alias, its file name or
# Dendron leaf) is ranked by the ``name`` arm too, weighted above all other arms together: an
# exact name stays first under hybrid as under the default ranking.
NAME_CHANNELS = frozenset({"title-exact", "leaf-exact"})
NAME_WEIGHT = 4.0


def rrf_points(rank: int, weight: float = 1.0, k: float = RRF_K) -> float:
    """``POINTS["rrf"] * weight / (k + rank)`` for a 0-based rank, rounded to RRF_DECIMALS."""
    return round(POINTS["rrf"] * weight / (k + rank), RRF_DECIMALS)


def name_matches(default_hits: Sequence[Hit]) -> list[str]:
    """The default arm's pages matched by name (NAME_CHANNELS), in its order."""
    return [h.page.path for h in default_hits if any(m.channel in NAME_CHANNELS for m in h.matched)]


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
    vector = vectors.rank(vault, query, depth) if vectors is not None else None
    arms = hybrid_arms(default_hits, bm25f_rank(vault, query, depth, plan), vector)
    k = VECTOR_RRF_K if vector is not None else RRF_K
    return fuse(vault, query, arms, {h.page.path: h for h in default_hits}, k)


def hybrid_arms(
    default_hits: Sequence[Hit], bm25: Sequence[str], vector: Sequence[str] | None, protect: bool = True
) -> list[Arm]:
    """The arms fused by ``--rank hybrid``: default, bm25f, vector (when there is a vector
    index) and name (pages the default arm matched by name, when there are any)."""
    arms = [Arm("default", LEXICAL, [h.page.path for h in default_hits]), Arm("bm25f", LEXICAL, bm25)]
    if vector is not None:
        arms.append(Arm("vector", VECTOR, vector))
    names = name_matches(default_hits) if protect else []
    if names:
        arms.append(Arm("name", LEXICAL, names))
    return arms


def fuse_order(vault: Vault, default_hits, bm25, vector_paths, *, protect=True, k=None, **weights) -> list[str]:
    """The fused page order for given arm weights (benchmarks/fusion_tune.py tunes them)."""
    arms = hybrid_arms(default_hits, bm25, vector_paths, protect)
    k = k if k is not None else (VECTOR_RRF_K if vector_paths is not None else RRF_K)
    weights = {**ARM_WEIGHTS, "name": NAME_WEIGHT, **weights}
    found: dict[str, float] = {}
    for arm in arms:
        for i, path in enumerate(arm.paths):
            found[path] = found.get(path, 0.0) + rrf_points(i, weights[arm.name], k)
    return [p for _s, _t, p in sorted((-s, vault.pages[p].title.casefold(), p) for p, s in found.items())]


def fuse(
    vault: Vault, query: Query, arms: Sequence[Arm], explained: dict[str, Hit] | None = None, k: float = RRF_K
) -> tuple[Hit, ...]:
    """Weighted reciprocal rank fusion of ``arms`` into hits (snippets from ``explained``
    default hits): ``weight / (k + rank)`` per arm, weights ARM_WEIGHTS (NAME_WEIGHT for name)."""
    found: dict[str, list[Match]] = {}
    for arm in arms:
        for i, path in enumerate(arm.paths):
            points = rrf_points(i, NAME_WEIGHT if arm.name == "name" else ARM_WEIGHTS.get(arm.name, 1.0), k)
            found.setdefault(path, []).append(Match("rrf", arm.name, i + 1, points, "", arm.kind))
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
