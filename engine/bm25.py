"""BM25F: the lexical arm of ``--rank hybrid``, one score per page over five weighted fields.

Simple BM25F (Robertson, Zaragoza & Taylor 2004, "Simple BM25 extension to multiple weighted
fields"; Zaragoza et al. 2004): per query term, each field's term frequency is normalised by
that field's length against the vault's average, weighted (``weights.BM25F_WEIGHTS``) and
summed; the sum is saturated once, ``tf / (k1 + tf)``, and multiplied by the term's idf. A
term counts through its stem group and diacritics-folded variants (``Plan``), and through its
typo corrections when the vault does not know it. Pure: reads the vault's indexes only.

The arm ranks pages; its points never appear in an explanation (hybrid hits show each arm's
rank as an ``rrf`` component), so plain floats are fine here.
"""

from __future__ import annotations

import heapq

from .fields import LENGTH_FIELDS, PageFields
from .query import Query, passes_filters
from .scoring import Plan, bm25_idf, candidates, make_plan
from .vault import Vault
from .weights import BM25_K1, BM25F_B, BM25F_WEIGHTS

_W = tuple(BM25F_WEIGHTS[f] for f in LENGTH_FIELDS)
_B = tuple(BM25F_B[f] for f in LENGTH_FIELDS)


def _field_tf(fields: PageFields, variants: tuple[str, ...]) -> tuple[int, int, int, int, int]:
    """How often any of ``variants`` occurs in each field, in LENGTH_FIELDS order."""
    title = alias = heading = tag = body = 0
    for v in variants:
        title += fields.title_tokens.count(v)
        if v in fields.alias_set:
            alias += sum(a.count(v) for a in fields.alias_tokens)
        if v in fields.heading_set:
            heading += sum(h.count(v) for h in fields.heading_tokens)
        if v in fields.tag_tokens or v in fields.tag_names:
            tag += 1
        body += fields.body_counts.get(v, 0)
    return title, alias, heading, tag, body


def _weighted_terms(vault: Vault, plan: Plan) -> list[tuple[tuple[str, ...], float]]:
    """Each planned term's variants (itself, stems, folded, typo fixes) with the BM25 idf of the
    pages holding any of them; terms no page holds are left out."""
    n_pages = len(vault.pages)
    terms = []
    for tp in plan.terms:
        variants = (tp.term, *tp.stems, *tp.folded, *tp.fuzzy)
        holders: set[str] = set()
        for v in variants:
            holders.update(vault.postings.get(v, ()))
        if holders:
            terms.append((variants, bm25_idf(n_pages, len(holders))))
    return terms


def _score(vault: Vault, path: str, terms: list[tuple[tuple[str, ...], float]], averages: tuple[float, ...]) -> float:
    """Page ``path``'s BM25F score for ``terms`` (field lengths normalised by ``averages``)."""
    fields = vault.fields[path]
    norms = [w / (1.0 - b + b * length / avg) for w, b, length, avg in zip(_W, _B, fields.lengths, averages)]
    score = 0.0
    for variants, idf in terms:
        tf = sum(n * t for n, t in zip(norms, _field_tf(fields, variants)) if t)
        if tf:
            score += idf * tf / (BM25_K1 + tf)
    return score


def _averages(vault: Vault) -> tuple[float, ...]:
    n_pages = len(vault.pages)
    return tuple(max(total / n_pages, 1.0) for total in vault.field_lengths)


def bm25f_rank(vault: Vault, query: Query, limit: int, plan: Plan | None = None) -> list[str]:
    """The top ``limit`` pages by BM25F for the query (filters applied), best first.

    Ties go by title (casefolded), then path, as everywhere in the ranking.
    """
    if plan is None:
        plan = make_plan(vault, query)
    if not vault.pages or not plan.terms:
        return []
    terms, averages = _weighted_terms(vault, plan), _averages(vault)
    scored = []
    pages = vault.pages
    for path in candidates(vault, query, plan):
        page = pages[path]
        if not passes_filters(page, query):
            continue
        score = _score(vault, path, terms, averages)
        if score > 0:
            scored.append((-score, page.title.casefold(), path))
    best = heapq.nsmallest(limit, scored) if limit > 0 else sorted(scored)
    return [path for _neg, _title, path in best]


def bm25f_scores(vault: Vault, query: Query, paths: list[str], plan: Plan | None = None) -> dict[str, float]:
    """The BM25F score ``bm25f_rank`` gives each of ``paths`` (no filters: the caller chose them).

    For a few pages (the agent hints compare the top hits' BM25F), without ranking the vault."""
    if plan is None:
        plan = make_plan(vault, query)
    if not vault.pages or not plan.terms:
        return {path: 0.0 for path in paths}
    terms, averages = _weighted_terms(vault, plan), _averages(vault)
    return {path: _score(vault, path, terms, averages) for path in paths}
