"""Agent hints for a search result: is it enough, and what to do next. Deterministic rules.

The rules read the pages the search returned, never the scores' scale, so they mean the same
under ``--rank default`` and ``--rank hybrid`` (whose fused scores are all near 0.03).

- **Content words**: the query's terms, weak ones left out (``Query.weak``: function words and
  question scaffolding, engine/weights.py), held by fewer than half the vault's pages (``COMMON``),
  each weighted by its BM25 idf. Function words (``how``, ``do``, ``a``) and words on nearly
  every page (``task`` in a tasks vault) weigh nothing; a query made only of such words uses
  all its terms.
- ``coverage`` of a page: the weighted share of the content words the page holds (the word
  itself or a word with the same stem), each counted by the best field it is in: title, alias
  or file name 1, heading or tag 0.8, body only 0.6 (``FIELD_CREDIT``), absent 0.
- ``passage`` of a page: the largest weighted share of the content words found together in one
  passage: the page's name (title, aliases, file name), with one section (a heading and its text
  up to the next heading) and any PASSAGE (60) consecutive words of it. A question is answered
  by a passage, not by words scattered over a long page: a changelog, FAQ or transcript holds
  most words of any question, but seldom in one place. It reads the page, not the hit's
  components, so it is the same under either ranking (hybrid's hits carry only ``rrf``).
- ``arms_agree``: every ranking put the top page among its first AGREE (3), the pages an agent
  reads: the explained channel ranking and BM25F (``--rank hybrid``'s two lexical arms), and
  the vector arm when the search ran one (a hit carries a ``vector`` rrf component). Under
  hybrid the top hit's ``rrf`` components give the ranks (a page an arm did not rank is not
  among its first AGREE); by default the top hit is the ranking's first, and BM25F ranks the
  ranking's first POOL (10) pages. Not "the same first page": the explained ranking's
  proximity channels (section-term, body-pair) now order questions better than BM25F, so a
  first-place tie-break between two good pages said nothing about either. The vector arm is a
  judge because the wrong answers lexical evidence cannot tell from right ones (a page holding
  most words of the question, about something else) are the ones an embedding puts lower.
- ``max_score``: the top hit's passage coverage when the rankings agree; when they do not, half
  its field coverage (so only a page named by every content word passes 0.5); 3 decimals.
  ``sufficient``: ``max_score >= threshold`` (``SUFFICIENT`` = 0.5 by default; the search's
  ``hints_threshold``, else the server's setting, else the vault's ``.vaultlens.toml``
  ``[search] hints_threshold``, ``threshold_setting``): the rankings show the top page in their
  first three and one passage of it holds at least half the content words' weight, or its name
  holds every content word.
- ``next_action``: no hits -> ``broaden``; sufficient -> ``synthesize`` (``read`` names the
  pages to read: the top hit, and the second and third when their own passage coverage
  reaches the threshold); otherwise ``expand`` when ``max_score < WEAK`` (0.3) and the top hits link to
  pages that are not hits (``related_ids``), else ``refine`` (``suggested_queries``).
- ``suggested_queries`` (up to 5): each holds a word no returned hit holds in its title,
  aliases, file name, tags or headings (so following it cannot just confirm a page already
  shown): the query with a word no hit holds swapped for its ``_vocabulary.md`` synonym; the
  content words the top hit's best passage lacks (the part of the question it does not answer;
  words no page holds left out); the titles of pages the top hits link to that are not hits and
  that a content word names (in a title, alias, file name, heading or tag).
- ``related_ids``: pages the top 3 hits link to that are not hits, up to 5 (``RELATED``);
  ``gap_keywords``: query terms, weak ones left out, that no returned hit holds in any field.
Match labels for people: a hit is ``strong`` at >= 75 % of the top score, ``good`` at >= 40 %,
else ``weak``.
"""

from __future__ import annotations

import math
import sys
from typing import Any

from .model import Hit
from .query import Query
from .scoring import bm25_idf
from .text import stem, tokenize
from .vault import Vault

SUFFICIENT = 0.5  # the default hints_threshold (the agentic-search design's 0.5)
SETTINGS_FILE = ".vaultlens.toml"  # [search] hints_threshold: the vault's own threshold
WEAK = 0.3
TOP = 3  # how many top hits feed read, suggestions and related pages
RELATED = 5  # related_ids at most
POOL = 10  # how many of the default ranking's first pages BM25F judges (arms_agree)
AGREE = TOP  # arms_agree: every ranking put the top page among its first AGREE
JUDGES = ("default", "bm25f", "vector")  # the hybrid arms whose ranks arms_agree reads (not "name")
PASSAGE = 60  # words in a passage (about a paragraph): content words found within it count together
COMMON = 0.5  # a term held by at least this share of the vault's pages is no content word
FIELD_CREDIT = (("name", 1.0), ("heading", 0.8), ("tag", 0.8), ("body", 0.6))
DISAGREE = 0.5  # max_score's factor when the lexical rankings put different pages first
STRONG_LABEL = 0.75
GOOD_LABEL = 0.4


def check_threshold(value: object) -> float:
    """A hints threshold as given, checked: a number from 0 to 1 (ValueError otherwise)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError("a number from 0 to 1")
    return float(value)


def threshold_setting(root: str) -> float | None:
    """``hints_threshold`` in the ``[search]`` section of the vault's ``.vaultlens.toml``; None
    when the file, the key or a valid value (a number from 0 to 1) is missing."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    from .scan import read_bytes

    try:
        data = tomllib.loads(read_bytes(root, SETTINGS_FILE).decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    section = data.get("search") if isinstance(data, dict) else None
    try:
        return check_threshold(section.get("hints_threshold")) if isinstance(section, dict) else None
    except ValueError:
        return None


def match_label(score: float, top: float) -> str:
    """``strong`` / ``good`` / ``weak``: a hit's score against the top hit's."""
    if top <= 0:
        return "weak"
    ratio = score / top
    return "strong" if ratio >= STRONG_LABEL else "good" if ratio >= GOOD_LABEL else "weak"


def content_weights(vault: Vault, terms: tuple[str, ...]) -> dict[str, float]:
    """Each content word of ``terms`` with its idf weight (all terms when none is a content word)."""
    n_pages = len(vault.pages)
    df = {t: len(vault.postings.get(t, ())) for t in terms}
    weights = {t: bm25_idf(n_pages, max(d, 1)) for t, d in df.items() if d < COMMON * n_pages}
    return weights or {t: bm25_idf(n_pages, max(d, 1)) for t, d in df.items()}


def _variants(vault: Vault, term: str) -> set[str]:
    return {term, *vault.stem_tokens.get(stem(term), ())}


def term_fields(vault: Vault, path: str, term: str) -> list[str]:
    """The fields of page ``path`` that hold ``term`` or a word with its stem, in FIELD_CREDIT order."""
    fields = vault.fields.get(path)
    if fields is None:
        return []
    words = _variants(vault, term)
    found = []
    if not words.isdisjoint((*fields.title_set, *fields.alias_set, *fields.file_tokens)):
        found.append("name")
    if not words.isdisjoint(fields.heading_set):
        found.append("heading")
    if not words.isdisjoint((*fields.tag_names, *fields.tag_tokens)):
        found.append("tag")
    if any(fields.body_counts.count(w) for w in words):
        found.append("body")
    return found


def coverage(vault: Vault, path: str, weights: dict[str, float]) -> float:
    """The share of the content words' weight page ``path`` holds, by the best field of each."""
    total = sum(weights.values())
    if not total:
        return 0.0
    credit = dict(FIELD_CREDIT)
    got = sum(w * max((credit[f] for f in term_fields(vault, path, t)), default=0.0) for t, w in weights.items())
    return got / total


def _sections(page) -> list[tuple[str, str]]:
    """The page's sections as (heading, text): the text before the first heading (heading
    ``""``), then each heading and its text up to the next heading (``scoring.best_section``'s cuts)."""
    lines = page.body.split("\n")
    names = {h.span.start_line - page.body_line: h.text for h in page.headings}
    starts = [0, *sorted(c for c in names if 0 < c < len(lines))]
    return [(names.get(a, ""), "\n".join(lines[a:b])) for a, b in zip(starts, [*starts[1:], len(lines)])]


def passage_terms(vault: Vault, path: str, weights: dict[str, float]) -> tuple[str, ...]:
    """The content words of page ``path``'s best passage (``passage``), in ``weights``' order: its
    name (title, aliases, file name) with the heading of one section and PASSAGE consecutive
    words of that section (a word or one with its stem, as ``coverage``)."""
    fields = vault.fields.get(path)
    if not weights or fields is None:
        return ()
    owners: dict[str, list[str]] = {}  # a token -> the content words it stands for
    for term in weights:
        for word in sorted(_variants(vault, term)):
            owners.setdefault(word, []).append(term)
    name = {*fields.title_set, *fields.alias_set, *fields.file_tokens}
    named = {t for w in name for t in owners.get(w, ())}
    best, best_weight = named, math.fsum(weights[t] for t in sorted(named))
    for heading, text in _sections(vault.pages[path]):
        found = [(i, owners[w]) for i, w in enumerate(tokenize(text)) if w in owners]
        if not found:
            continue
        base = named | {t for w in tokenize(heading) for t in owners.get(w, ())}
        window: dict[str, int] = {}
        first = 0
        for at, terms in found:  # slide a PASSAGE-word window over the section's content words
            for t in terms:
                window[t] = window.get(t, 0) + 1
            while found[first][0] <= at - PASSAGE:
                for t in found[first][1]:
                    window[t] -= 1
                first += 1
            held = base | {t for t, n in window.items() if n}
            weight = math.fsum(weights[t] for t in sorted(held))
            if weight > best_weight:
                best, best_weight = held, weight
    return tuple(t for t in weights if t in best)


def passage(vault: Vault, path: str, weights: dict[str, float]) -> float:
    """The largest share of the content words' weight page ``path`` holds in one passage (the
    words ``passage_terms`` names)."""
    total = sum(weights.values())
    if not total:
        return 0.0
    return min(math.fsum(weights[t] for t in sorted(passage_terms(vault, path, weights))) / total, 1.0)


def arms_agree(vault: Vault, query: Query, hits: tuple[Hit, ...]) -> bool:
    """Whether the explained ranking and BM25F both rank the top hit among their first AGREE.

    Under hybrid the top hit's ``rrf`` components give each lexical arm's rank of it. Otherwise
    the top hit is the explained ranking's first, and BM25F ranks the first POOL pages of that
    ranking (the hits, or a search for POOL when fewer were asked for): ranking the whole vault
    by BM25F would cost ~30x the search on 10,000 pages for a question full of common words."""
    top = hits[0]
    arms = {m.term: m.hits for m in top.matched if m.channel == "rrf" and m.term in JUDGES}
    if arms:
        ran = {m.term for h in hits for m in h.matched if m.channel == "rrf"}  # the arms this search had
        return all(0 < arms.get(arm, 0) <= AGREE for arm in JUDGES if arm in ran or arm != "vector")
    if query.rank == "hybrid" or query.prefix:
        return False
    from dataclasses import replace

    from .bm25 import bm25f_scores
    from .search import search

    pool = [h.page for h in hits[:POOL]]
    if len(pool) < POOL and query.limit and query.limit < POOL:
        pool = [h.page for h in search(vault, replace(query, limit=POOL, hints=False))]
    scores = bm25f_scores(vault, query, [page.path for page in pool])
    order = sorted(pool, key=lambda page: (-scores[page.path], page.title.casefold(), page.path))
    return top.page.path in {page.path for page in order[:AGREE]}


def _named(vault: Vault, hits: tuple[Hit, ...]) -> set[str]:
    """Every word the returned hits hold in a title, alias, file name, tag or heading."""
    out: set[str] = set()
    for hit in hits:
        fields = vault.fields.get(hit.page.path)
        if fields is not None:
            out.update(fields.title_set, fields.alias_set, fields.file_tokens, fields.heading_set,
                       fields.tag_names, fields.tag_tokens)
    return out


def _suggestions(vault: Vault, query: Query, hits: tuple[Hit, ...], gaps: list[str],
                 related: list[str], weights: dict[str, float]) -> list[str]:
    named = _named(vault, hits)
    shown = {h.page.title.casefold() for h in hits}
    text = query.text.casefold()
    out: list[str] = []

    def offer(candidate: str) -> None:
        words = tokenize(candidate)
        fresh = any(not (_variants(vault, w) & named) for w in words)
        if words and fresh and candidate.casefold() not in shown and candidate.casefold() != text \
                and candidate not in out:
            out.append(candidate)

    for term in gaps:
        for synonym in vault.vocabulary.synonyms(term):
            offer(" ".join(" ".join(synonym) if t == term else t for t in query.terms))
    if hits and weights:  # the part of the question the top hit's best passage does not hold
        held = set(passage_terms(vault, hits[0].page.path, weights))
        missing = [t for t in weights if t not in held and any(vault.postings.get(w) for w in _variants(vault, t))]
        if missing and len(missing) < len(weights):
            offer(" ".join(missing))
    for path in related:  # a linked page named by a content word (not only its body): a lead
        if any(set(term_fields(vault, path, t)) - {"body"} for t in weights):
            offer(vault.pages[path].title)
    return out[:5]


def hints(vault: Vault, query: Query, hits: tuple[Hit, ...], threshold: float = SUFFICIENT) -> dict[str, Any]:
    """The hints object for one search (see the module docstring for every rule)."""
    words = tuple(t for t in query.terms if t not in query.weak) or query.terms  # weak words carry no content
    weights = content_weights(vault, words) if words else {}
    cover = coverage(vault, hits[0].page.path, weights) if hits and weights else 0.0
    held = passage(vault, hits[0].page.path, weights) if hits and weights else 0.0
    agree = bool(hits and weights) and arms_agree(vault, query, hits)
    max_score = round(held if agree else cover * DISAGREE, 3)
    sufficient = bool(hits) and bool(weights) and max_score >= threshold
    hit_paths = {h.page.path for h in hits}

    related: list[str] = []
    for hit in hits[:TOP]:
        for _link, res in vault.outlinks(hit.page.path):
            if res.path and res.path not in hit_paths and res.path not in related:
                related.append(res.path)
    related = related[:RELATED]

    gaps = [t for t in words if not any(term_fields(vault, h.page.path, t) for h in hits)]
    read: list[str] = []
    if sufficient:
        read = [hits[0].page.path] + [h.page.path for h in hits[1:TOP]
                                      if passage(vault, h.page.path, weights) >= threshold]

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
        "read": read,
        "suggested_queries": _suggestions(vault, query, hits, gaps, related, weights),
        "related_ids": related,
        "gap_keywords": gaps,
        "evidence": {"coverage": round(cover, 3), "passage": round(held, 3), "arms_agree": agree},
    }
