"""POINTS: the one table of every number that changes the ranking, and the channel order;
BOUNDS: what bounds each channel, which the top-k search (``topk.py``) prunes with.

The order of ``CHANNELS`` is the order components are listed in within a hit (after points).
The first eight channels and their points are the ranking contract (engine issue, section 5);
channels after them are additions that never change what the contract's channels mean.

A new channel gets its points in POINTS and its bound in BOUNDS (a test fails without one):
``topk.py`` then bounds it by its declared maximum until it is given a tighter bound there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

# --- how a channel's bound is declared (BOUNDS, after POINTS) ------------------------------------

ONCE = "once"  # at most once per page
TERM = "term"  # at most once per query term
FIELD = "field"  # at most once per query term and field it reads
ARM = "arm"  # once per ranked arm of --rank hybrid

# The page fields a channel reads: TERM_FIELDS and these.
HEADING, PATH, FILE, LINKS, RANKS = "heading", "path", "file", "links", "ranks"
NAMES = ("title", "alias")
TERM_FIELDS = ("title", "alias", "tag", "body")  # = FIELDS: where a stand-in can match


@dataclass(frozen=True, slots=True)
class Bound:
    """What bounds the points one channel gives one page for one query.

    ``per``: how often it fires (ONCE, TERM, FIELD, ARM). ``fields``: the page fields it reads.
    One firing earns at most the channel's points times ``cap`` (a channel whose points count
    per occurrence: the occurrences that count), or ``most[field]`` in a field named there.
    ``base``: a ONCE channel worth ``base`` plus that much per query term (title-exact).
    ``stand_in``: it matches a word standing in for a query term (the ``TermPlan`` attribute
    that holds those words: synonyms, stems, folded, fuzzy), and only in a field where the term
    itself did not match; of the FIELD stand-ins at most one fires per term and field.
    ``without``: channels it never fires with (for the same term; a ONCE channel: on the page).
    ``pruned``: False for a channel the top-k search never meets (graph-edge: ``--graph`` is
    not pruned; rrf: fused after the ranking).
    """

    per: str
    fields: tuple[str, ...]
    most: Mapping[str, float] = field(default_factory=dict)
    cap: int = 1
    base: int = 0
    stand_in: str = ""
    without: tuple[str, ...] = ()
    pruned: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "most", MappingProxyType(dict(self.most)))

    def top(self, points: float, field: str | None = None) -> float:
        """The most one firing earns, with the channel's ``points``: in ``field`` (0 for a
        field it does not read), or in any field it reads."""
        if field is None:
            return max(self.most.get(f, points * self.cap) for f in self.fields)
        return self.most.get(field, points * self.cap) if field in self.fields else 0


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
        "body-pair": 1,  # per pair of consecutive content terms: the query's words from one to the next, in the body
        "section-term": 1.5,  # per content term after the first in one section (SECTION_MIN_TERMS+ terms)
        "rrf": 1,  # --rank hybrid: 1 / (RRF_K + rank) per arm, rounded to RRF_DECIMALS
    }
)

BODY_CAP = 3
SYNONYM_MINOR = 1
GRAPH_HOP2 = 1
GRAPH_MAX_HOPS = 2
PREFIX_ALIAS = 2  # prefix of an alias token only (not of a title token)

HEADING_EXACT = 6  # heading-phrase when a heading is exactly the query
FOLDED_MINOR = 1
PATH_LEAF = 3  # path-term for the file name's last dotted segment (a Dendron note's own name)

# title-exact guarantees that an exact title, alias or file-name match ranks first. It is worth
# EXACT_BASE + POINTS["title-exact"] per query term: more than any page without an exact match can
# earn. By BOUNDS, per term that is at most title 5 + alias stand-ins 4 + tag 4 + body 3
# + body-bm25 3 + heading 2 + body-pair 1 + section-term 1.5 = 23.5 (alias-term and path-term never come with
# title-term; a term starts at most one body pair, its weak words are in no term channel); once
# per query at most title-phrase 10 + leaf-exact 15 + heading-phrase 6 + title-cover 3
# + link-prior 2 + context-edge 1 + prefix-term 3 = 40 (prefix-phrase comes only without the
# phrase channels). tests/engine/test_ranking.py derives both bounds from BOUNDS.
EXACT_BASE = 48

# What bounds each channel, in POINTS' order: how often it fires, the fields it reads, the most
# it earns where that is not its points, what it never comes with (``Bound``).
BOUNDS = MappingProxyType(
    {
        "title-phrase": Bound(ONCE, NAMES),
        "title-term": Bound(TERM, ("title",)),
        "alias-term": Bound(TERM, ("alias",), without=("title-term",)),
        "tag-term": Bound(TERM, ("tag",)),
        "body-term": Bound(TERM, ("body",), cap=BODY_CAP),
        "synonym-term": Bound(FIELD, TERM_FIELDS, {"tag": SYNONYM_MINOR, "body": SYNONYM_MINOR}, stand_in="synonyms"),
        "stem-term": Bound(FIELD, TERM_FIELDS, stand_in="stems"),
        "graph-edge": Bound(ONCE, (LINKS,), pruned=False),  # GRAPH_HOP2 (less) at hop 2
        "context-edge": Bound(ONCE, (LINKS,)),
        "prefix-term": Bound(ONCE, NAMES, {"alias": PREFIX_ALIAS}),
        "prefix-phrase": Bound(
            ONCE, NAMES, without=("title-phrase", "title-exact", "leaf-exact", "heading-phrase")
        ),
        "title-exact": Bound(ONCE, (*NAMES, FILE), base=EXACT_BASE),
        "leaf-exact": Bound(ONCE, (FILE,), without=("title-exact",)),
        "title-cover": Bound(ONCE, ("title",), without=("title-exact",)),
        "heading-phrase": Bound(ONCE, (HEADING,), {HEADING: HEADING_EXACT}),  # its points: a heading holds it
        "heading-term": Bound(TERM, (HEADING,)),
        "path-term": Bound(TERM, (PATH, FILE), {FILE: PATH_LEAF}, without=("title-term", "alias-term")),
        "body-bm25": Bound(TERM, ("body",)),  # by formula, at most its points
        "folded-term": Bound(FIELD, TERM_FIELDS, {"tag": FOLDED_MINOR, "body": FOLDED_MINOR}, stand_in="folded"),
        # typo corrections only for a term the vault knows no stem or folded form of
        "fuzzy-term": Bound(
            TERM, TERM_FIELDS, {"tag": FOLDED_MINOR, "body": FOLDED_MINOR}, stand_in="fuzzy",
            without=("stem-term", "folded-term"),
        ),
        "link-prior": Bound(ONCE, (LINKS,)),  # by formula, at most its points
        "body-pair": Bound(TERM, ("body",)),  # fewer pairs than content terms
        "section-term": Bound(TERM, ("body",)),  # at most one term fewer than the query's
        "rrf": Bound(ARM, (RANKS,), pruned=False),
    }
)


def most_points(channel: str, field: str | None = None) -> float:
    """The most one firing of ``channel`` earns (``BOUNDS``): in ``field``, or anywhere."""
    return BOUNDS[channel].top(POINTS[channel], field)


# Fixed precision: channels whose points come from a formula (body-bm25, link-prior) are rounded
# to a multiple of 1/FIXED_STEP. Eighths are exact binary fractions, so any sum of them is exact
# in floating point and in the JSON: score == sum(points) however it is added up.
FIXED_STEP = 8

# section-term: a section is a heading with the text up to the next heading (or the text before
# the first); only for a query of this many content terms or more (a question, not a name)
SECTION_MIN_TERMS = 3

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


# --- query understanding: words that say little about which page is meant -------------------
# A weak term is a function word (WEAK_WORDS) or a word of question scaffolding (SCAFFOLDS, as a
# whole sequence: "is there a way to"). It counts only where the query's whole token sequence
# matters (title-phrase, title-exact, leaf-exact, heading-phrase, title-cover); the per-term
# channels pass it over, and it brings no page in. A query made only of weak terms has none
# (every term counts: "The Who", "To Do", "how to"); the partial term of as-you-type is never
# weak (it is a word on its way). ``query_plan.weak`` lists them. English only; a general list
# (pronouns, articles, auxiliaries, prepositions, conjunctions, question words, contraction
# pieces), not one picked for any evaluation question.
# Incidental words: general English that qualifies a request without naming what it is about
# (quantifiers, discourse adverbs, pieces of "e.g." / "i.e.", placeholder nouns and verbs). Rare
# in most vaults, so idf would weigh them high, yet a page holding "whole" or "instead" is no
# more likely the answer. Topic verbs that name commands in vaults (make, use, set, show, find,
# create, open, change) and nouns that name things ("way": "the milky way") are not here.
INCIDENTAL_WORDS = frozenset("""
certain whole entire every everything everyone anyone anybody nothing another either neither
several many much various
just instead already still even ever really actually maybe perhaps rather quite simply else
otherwise anyway somehow though although however yet
e g ie eg
kind kinds stuff lot bit
put turn want wants wanted need needs needed try trying possible please
""".split())
WEAK_WORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself
just me more most my myself no nor not now of off on once only or other our ours ourselves out
over own same she should so some such than that the their theirs them themselves then there
these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves
also any anything etc get got lets let may might must shall something thing things whether
s t d ll m re ve don doesn didn isn wasn aren weren won wouldn couldn shouldn haven hasn hadn
""".split()) | INCIDENTAL_WORDS
SCAFFOLDS = tuple(
    tuple(phrase.split())
    for phrase in (
        "is there a way to", "is there any way to", "is it possible to", "what is the best way to",
        "what s the best way to", "what is the difference between", "what s the difference between",
        "i want to", "i would like to", "i d like to", "i need to", "how do i", "how can i",
        "how would i", "how should i", "tell me", "show me how to",
    )
)


CHANNELS: tuple[str, ...] = tuple(POINTS)
CHANNEL_RANK = MappingProxyType({name: i for i, name in enumerate(CHANNELS)})

# Fields a term can match, in the order components name them.
FIELDS: tuple[str, ...] = TERM_FIELDS

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
