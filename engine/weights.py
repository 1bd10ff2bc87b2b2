"""POINTS: the one table of every number that changes the ranking, and the channel order.

The order of ``CHANNELS`` is the order components are listed in within a hit (after points).
The first eight channels and their points are the ranking contract (engine issue, section 5);
channels after them are additions that never change what the contract's channels mean.
"""

from __future__ import annotations

from types import MappingProxyType

POINTS = MappingProxyType(
    {
        "title-phrase": 10,  # once: the query's token sequence in the title or an alias
        "title-term": 5,  # per term that is a title token
        "alias-term": 4,  # per term that is an alias token but not a title token
        "tag-term": 4,  # per term equal to a tag or a segment of a hierarchical tag
        "body-term": 1,  # per occurrence, at most BODY_CAP per term
        "synonym-term": 2,  # title/alias; SYNONYM_MINOR in tag/body; once per (term, field)
        "stem-term": 1,  # per (term, field) matched only through the Porter stem
        "graph-edge": 2,  # hop 1; GRAPH_HOP2 at hop 2 (only with --graph)
        "context-edge": 1,  # with --context PAGE: a hit one link away (either way) from that page
        "prefix-term": 3,  # as-you-type: the last term is a prefix of a title/alias token
        "prefix-phrase": 8,  # as-you-type: the title (or an alias) starts with the text typed so far
        "title-exact": 24,  # once: EXACT_BASE + this per query term; the query is the title/alias/file name
        "leaf-exact": 15,  # once: the query is the last dotted segment of the file name (Dendron)
        "title-cover": 3,  # once: every title token is matched by a query term (not an exact match)
        "heading-phrase": 4,  # once: the query's token sequence in a heading; HEADING_EXACT if it is one
        "heading-term": 2,  # per term that is a heading token
        "path-term": 2,  # per term in a folder or dotted file-name segment, not a title/alias token
        "body-bm25": 3,  # per body term: BM25 of the term in the body, at most this many points
        "folded-term": 3,  # title/alias; FOLDED_MINOR in tag/body: the term up to diacritics
        "fuzzy-term": 2,  # a term unknown to the vault, one edit from a title/alias token; else 1
        "link-prior": 2,  # once, with another match: how many pages link here, at most this many
        "rrf": 1,  # --rank hybrid: 1 / (RRF_K + rank) per arm, rounded to RRF_DECIMALS
    }
)

BODY_CAP = 3
SYNONYM_MINOR = 1
GRAPH_HOP2 = 1
GRAPH_MAX_HOPS = 2
PREFIX_ALIAS = 2  # prefix of an alias token only (not of a title token)
PREFIX_MIN_CHARS = 1  # shortest partial term that counts as a prefix

# Fixed precision: channels whose points come from a formula (body-bm25, link-prior) are rounded
# to a multiple of 1/FIXED_STEP. Eighths are exact binary fractions, so any sum of them is exact
# in floating point and in the JSON: score == sum(points) however it is added up.
FIXED_STEP = 8

# title-exact guarantees that an exact title, alias or file-name match ranks first. It is worth
# EXACT_BASE + POINTS["title-exact"] per query term: more than any page without an exact match can
# earn. Per term that is at most title 5 + alias 4 + tag 4 + body 3 + body-bm25 3 + heading 2
# + path 3 = 24 (synonym, stem, folded and fuzzy matches only stand in, for less, where these did
# not match); once per query at most title-phrase 10 + leaf-exact 15 + heading-phrase 6
# + title-cover 3 + link-prior 2 + prefix-phrase 8 + prefix-term 3 = 47. tests/engine/test_ranking.py
# recomputes both bounds from this table.
EXACT_BASE = 48

HEADING_EXACT = 6  # heading-phrase when a heading is exactly the query
FOLDED_MINOR = 1
PATH_LEAF = 3  # path-term for the file name's last dotted segment (a Dendron note's own name)
FUZZY_MIN_CHARS = 5  # shorter words are never corrected
FUZZY_LONG_CHARS = 9  # shorter words keep their first letter when corrected; these need not
BM25_K1 = 1.2  # BM25 term-frequency saturation (Robertson & Zaragoza 2009, "The Probabilistic
BM25_B = 0.75  # Relevance Framework: BM25 and Beyond", eq. 3.15; Lucene's defaults)
BM25_SCALE = 0.5  # body-bm25 points per unit of BM25 (before the cap)
LINK_PRIOR_PAGES = 16  # pages linking here for the whole link-prior (log-scaled below that)

# --rank hybrid: reciprocal rank fusion (Cormack, Clarke & Büttcher 2009) of ranked arms.
RRF_K = 60
RRF_DECIMALS = 6
RRF_DEPTH = 20  # each arm contributes its top RRF_DEPTH pages (at least the query's limit)
VECTOR_MIN_SIMILARITY = 0.2  # cosine below this is no evidence: the vector arm leaves the page out
# BM25F field weights and length normalisation: the short name fields are hardly normalised
# (a title is short by nature), the body half way (notes vary in length for no reason of
# relevance: a long page is not less about its words).
BM25F_WEIGHTS = MappingProxyType({"title": 5.0, "alias": 4.0, "heading": 4.0, "tag": 2.0, "body": 1.0})
BM25F_B = MappingProxyType({"title": 0.3, "alias": 0.3, "heading": 0.3, "tag": 0.3, "body": 0.5})

CHANNELS: tuple[str, ...] = tuple(POINTS)
CHANNEL_RANK = MappingProxyType({name: i for i, name in enumerate(CHANNELS)})

# Fields a term can match, in the order components name them.
FIELDS: tuple[str, ...] = ("title", "alias", "tag", "body")

# Related pages (hover "Related pages", `vaultlens related`): why two pages belong together.
RELATED_POINTS = MappingProxyType(
    {
        "links-to": 4,  # the page links to the candidate
        "linked-from": 4,  # the candidate links to the page
        "typed-edge": 3,  # per sources/related/depends_on predicate, either direction
        "shared-tag": 2,  # per tag both pages carry
        "co-cited": 1,  # per page that links to both; capped at RELATED_CAP
        "shared-link": 1,  # per page both link to; capped at RELATED_CAP
        "title-term": 1,  # per title token both titles share; capped at RELATED_CAP
    }
)
RELATED_CHANNELS: tuple[str, ...] = tuple(RELATED_POINTS)
RELATED_CHANNEL_RANK = MappingProxyType({name: i for i, name in enumerate(RELATED_CHANNELS)})
RELATED_CAP = 3
RELATED_FANOUT = 400  # a tag, link target or title token shared by more pages proposes no candidates
