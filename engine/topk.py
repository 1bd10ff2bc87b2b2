"""Top-k search: the components of just enough candidates to hold the first ``limit`` hits.

``search.rank`` gives the same hits, with the same scores, as when every candidate is scored:
a page is scored only while an upper bound of its final score reaches the ``limit``-th best
score so far (max-score pruning). Every number in the bounds comes from the channels'
declarations in ``weights.BOUNDS`` (how often a channel fires, the fields it reads, the most
it earns there), read once below; a channel declared there that these bounds do not name
(``BOUNDED``) is bounded by its declared maximum (``declared_slack``), so a new channel never
makes the pruning wrong, only looser until it gets its own bound here.
``tests/property/test_pruned_rank.py`` checks the bounds against every page's score and the
pruned ranking against the full one, on random vaults where every channel fires.
"""

from __future__ import annotations

import functools
import heapq
import math
from itertools import product
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from operator import itemgetter
from typing import Any

from .fields import BodyCounts, PageFields, holds_all
from .model import Page
from .query import Query, passes_filters
from .scoring import (
    NO_BODY, Plan, PostedCounts, TermPlan, TextCounts, bm25_norm, body_components, body_most, counts_of, fixed, head_components, indexed_outside_body, link_prior,
    name_words, prior_points, score_of, starts_with_typed,
)
from .postings import holders as _holders  # (``holders`` names a local of top_components)
from .vault import Vault
from .weights import (
    BM25_B,
    BM25_K1,
    BM25_SCALE,
    BOUNDS,
    FIELD,
    FIXED_STEP,
    ONCE,
    POINTS,
    TERM,
    SECTION_MIN_TERMS,
    TERM_FIELDS,
    Bound,
    most_points,
)

# --- the numbers, from the declarations (once, at import) -------------------------------------

# The channels these bounds name, each with its own condition below; the stand-in channels
# (``Bound.stand_in``) are bounded from their declarations whatever they are (``stand_ins``).
BOUNDED = frozenset({
    "title-phrase", "title-term", "alias-term", "tag-term", "body-term", "context-edge", "prefix-term",
    "prefix-phrase", "title-exact", "leaf-exact", "title-cover", "heading-phrase", "heading-term",
    "path-term", "body-bm25", "link-prior", "body-pair", "section-term",
})


def declared_slack(bounds: Mapping[str, Bound], points: Mapping[str, float]) -> tuple[float, float]:
    """What the channels the top-k search meets but does not bound by name (neither in
    ``BOUNDED`` nor a stand-in) can add to a page at most, from their declarations: once per
    page, and per query term."""
    once = per_term = 0.0
    for name, bound in bounds.items():
        if not bound.pruned or name in BOUNDED or bound.stand_in:
            continue
        top = bound.top(points[name])
        if bound.per == ONCE and bound.base:  # worth base + top per query term
            once, per_term = once + bound.base, per_term + top
        elif bound.per == ONCE:
            once += top
        elif bound.per == TERM:
            per_term += top
        elif bound.per == FIELD:  # in every field it reads
            per_term += sum(bound.top(points[name], f) for f in bound.fields)
        else:
            raise ValueError(f"{name}: a channel fired {bound.per!r} cannot be bounded per page")
    return once, per_term


_SLACK_ONCE, _SLACK_TERM = declared_slack(BOUNDS, POINTS)

_PRIOR = most_points("link-prior")  # the page's own is looked up where it may matter
_CONTEXT = most_points("context-edge")
_TITLE_PHRASE = most_points("title-phrase")
_EXACT_BASE, _EXACT_TERM = BOUNDS["title-exact"].base, most_points("title-exact")  # once: base + per term
_LEAF_EXACT = most_points("leaf-exact")
_HEADING_EXACT = most_points("heading-phrase")  # a heading is the query
_HEADING_PHRASE = POINTS["heading-phrase"]  # a heading holds it
_COVER = most_points("title-cover")
_PREFIX_PHRASE = most_points("prefix-phrase")
_PREFIX_TERM = most_points("prefix-term")
_PREFIX_TITLE, _PREFIX_ALIAS = most_points("prefix-term", "title"), most_points("prefix-term", "alias")
_TITLE_TERM, _ALIAS_TERM, _TAG_TERM = most_points("title-term"), most_points("alias-term"), most_points("tag-term")
_HEADING_TERM, _PATH_TERM = most_points("heading-term"), most_points("path-term")
_BODY_TERM, _BODY_CAP = POINTS["body-term"], BOUNDS["body-term"].cap  # per occurrence, up to the cap
_BM25_MOST = most_points("body-bm25")
_PAIR = most_points("body-pair")  # per pair of content terms, counted with the pair's first term
_SECTION = most_points("section-term")  # per content term in the body (one fewer at most)
# The stand-in channels (``Bound.stand_in``: the TermPlan attribute holding the words they
# match) and, for each set of them a term may have words for, the most those words earn in
# each of TERM_FIELDS (title, alias, tag, body): one FIELD stand-in per field, every TERM one.
_STAND_IN_WORDS = tuple(dict.fromkeys(bound.stand_in for bound in BOUNDS.values() if bound.stand_in))


def _stand_in_most(present: tuple[bool, ...]) -> tuple[float, ...]:
    has = dict(zip(_STAND_IN_WORDS, present))
    out = []
    for field in TERM_FIELDS:
        one = per_term = 0.0
        for name, bound in BOUNDS.items():
            if bound.stand_in and has[bound.stand_in]:
                if bound.per == FIELD:
                    one = max(one, most_points(name, field))
                else:
                    per_term += most_points(name, field)
        out.append(one + per_term)
    return tuple(out)


_STAND_IN_MOST = {present: _stand_in_most(present) for present in product((False, True), repeat=len(_STAND_IN_WORDS))}
# (a body count of three or more earns more than any stand-in there: ``_MostlyThrice`` takes 3 for
# a page that lacks the term as an upper bound)
assert max(most[3] for most in _STAND_IN_MOST.values()) <= _BODY_TERM * _BODY_CAP


def stand_ins(tp: TermPlan) -> tuple[float, ...]:
    """The most the words standing in for one term (its synonyms, stems, folded forms, typo
    corrections) can earn in each of TERM_FIELDS (title, alias, tag, body)."""
    return _STAND_IN_MOST[tuple(bool(getattr(tp, words)) for words in _STAND_IN_WORDS)]


def _body_stand_ins(tp: TermPlan) -> tuple[tuple[str, ...], ...]:
    """Per kind of stand-in (``_STAND_IN_WORDS``), the words of one term a body must hold for
    that kind to earn body points there: a synonym's first word (it needs all of them), each
    stem, folded and typo form."""
    return tuple(
        tuple(tp.synonym_heads) if words == "synonyms" else tuple(getattr(tp, words)) for words in _STAND_IN_WORDS
    )


def prunes(query: Query, limit: int, candidates: int) -> bool:
    """Whether ``top_components`` applies: fewer hits wanted than candidates, no graph walk
    (graph-edge is not pruned) and an ASCII query (a title's diacritics are folded when matched
    exactly, so a non-ASCII query is compared with every candidate)."""
    return 0 < limit < candidates and not query.graph and all(t.isascii() for t in query.tokens)


def prior_pages(scored: Mapping[str, list], limit: int) -> Iterable[str]:
    """The pages of ``scored`` (components without link-prior) that can still reach the first
    ``limit`` once their link-prior is added (at most ``_PRIOR``): adding it to these only gives
    the same first ``limit`` hits, with the same scores, as adding it everywhere."""
    if not 0 < limit < len(scored):
        return scored.keys()
    base = {path: score_of(c[3] for c in found) for path, found in scored.items()}
    floor = heapq.nlargest(limit, base.values())[-1] - _PRIOR
    return [path for path, score in base.items() if score >= floor]


def top_components(
    vault: Vault, query: Query, plan: Plan, found_in: set[str], limit: int, near: set[str]
) -> dict[str, list]:
    """The components of enough candidates to hold the first ``limit`` hits: ``rank`` gives the
    same hits, with the same scores, as when every candidate is scored.

    Max-score pruning: the candidates with a query word (a term, or a synonym, stem, folded or
    typo form of one) in their title or aliases are "strong": they can earn every channel, and
    each is bounded from its fields (``Bounds.strong``). The others first get a coarse bound
    from the terms they hold: tag, heading and path channels where a query word is in those,
    the prefix channels (when a name token starts with the partial term), and body points: per
    term the body channels when its body holds the term and at most 2 stand-in points (synonym
    or variant, and typo) when it does not; then a tight one. Each page's bound counts
    its own link-prior and context-edge, as its final score does. A page is scored only while
    its bound reaches the ``limit``-th best score so far: one below it can never enter the
    first ``limit``, nor tie with them. (Only for ASCII queries: a title's diacritics are folded
    when matched exactly, so a non-ASCII query is compared with every candidate.)
    """
    pages, fields, title_key = vault.pages, vault.fields, vault.title_key
    bounds = Bounds(vault, query, plan, near)
    strong = bounds.named_pages() & found_in
    prefix_cut = bounds.prefix_cut  # any page may have a name token that starts with the partial term
    prefixed = (bounds.prefixed & found_in) - strong  # the others with such a token

    near_points = POINTS["context-edge"]  # what ``rank`` adds to the pages in ``near``, one link from --context
    scored: dict[str, list] = {}
    # The ``limit`` best so far in ranking order, as a min-heap whose root is the last of them:
    # the lowest score and, among equal scores, the title and path that sort last.
    best: list[tuple[int | float, _Last]] = []

    with_body = plan.body and (bool(plan.pairs) or len(plan.terms) >= SECTION_MIN_TERMS)  # body_components can add points

    def score(path: str) -> None:
        if path in scored:  # a page seeded below is met again among the others
            return
        page = pages[path]
        if not passes_filters(page, query):
            return
        counts = bounds.posted(page, fields[path])
        found = head_components(page, fields[path], query, plan, counts)
        if found:
            # the score the page ends with: link-prior and context-edge are added by ``rank``
            prior = link_prior(vault, page)
            total = score_of(c[3] for c in found) + (prior[3] if prior else 0) + (near_points if path in near else 0)
            if with_body and (len(best) < limit or can_enter(path, total + body_most(plan, counts))):
                # section-term and body-pair read the body (and its headings: their first read
                # unmarshals the page's links and headings, ~0.1 ms): only for a page that can
                # still enter with them; one that cannot is left out, as one below its bound is
                extra = len(found)
                body_components(found, page, plan, counts)
                total += score_of(c[3] for c in found[extra:])
            elif with_body:
                return
            scored[path] = found
            entry = (total, _Last((title_key(path), path)))
            if len(best) < limit:
                heapq.heappush(best, entry)
            elif best[0] < entry:
                heapq.heapreplace(best, entry)

    def can_enter(path: str, most: float) -> bool:
        """Whether a page that scores at most ``most`` (link-prior and context-edge included)
        could still be among the first ``limit``."""
        if len(best) < limit or most > best[0][0]:
            return True
        return most == best[0][0] and (title_key(path), path) < best[0][1].key

    # Every strong candidate gets a quick bound (``Bounds.medium``), then is scored in order of
    # it, once its tight bound reaches the bar too, until the quick bound falls below the bar,
    # which then only rises: the fewest pages are scored.
    strong_bound, medium = bounds.strong, bounds.medium
    tiered = bounds.tiered_pages(strong)
    # Grouped by the quick bound with the page's own link-prior in place of the most (one look
    # at a count kept per page), and by title within a group only once it is reached (as the
    # ranking breaks ties, so the bar's own tie-break passes over the rest of a tie without a
    # tight bound): most groups lie below the bar and are never sorted.
    quick = bounds.medium_pages(strong, tiered)
    by_bound: dict[float, list[str]] = {}
    priors = prior_points(vault, quick)
    for path, most in quick.items():
        if most != math.inf:
            most += priors[path] - _PRIOR
        found = by_bound.get(most)
        if found is None:
            by_bound[most] = [path]
        else:
            found.append(path)
    # They are scored in the order of their tight bounds, which the quick ones order only
    # roughly (link-prior and length norms are not in them): a page's tight bound waits in a
    # heap until no page still to come can have a higher one (its quick bound is at most the
    # tight bound's), so the bar rises as fast as it can and the fewest pages are scored.
    # A page waits first with its tight bound from postings (``Bounds.body_by_postings``: its
    # body counts, unpacked on first use, not read), and when it comes out on top, again with
    # the exact one, unless the bar has passed it meanwhile.
    tighten = bounds.tighten
    waiting: list[tuple[float, str, str, bool]] = []  # (-tight bound, title casefolded, path, exact)

    def score_waiting(most: float) -> None:
        # (and, until there are ``limit`` hits, the best waiting page anyway: a bar sooner)
        while waiting and (-waiting[0][0] >= most or len(best) < limit):
            neg_tight, title, path, exact = heapq.heappop(waiting)
            if len(best) == limit and not can_enter(path, -neg_tight):
                continue
            if not exact:
                tight = tighten(pages[path], fields[path], quick[path], tiered[path])
                if len(best) < limit or can_enter(path, tight):
                    heapq.heappush(waiting, (-tight, title, path, True))
                continue
            score(path)

    groups = sorted(((-most, _BY_TITLE, paths) for most, paths in by_bound.items()), key=_bound_order)
    for neg, _title, path in _expand(groups, title_key):
        score_waiting(-neg)
        if len(best) == limit and not can_enter(path, -neg):
            if -neg < best[0][0]:
                break
            continue
        tight = tighten(pages[path], fields[path], quick[path], tiered[path], by_postings=True)
        if len(best) == limit and not can_enter(path, tight):
            continue
        heapq.heappush(waiting, (-tight, title_key(path), path, False))
    score_waiting(-math.inf)

    # As-you-type, few titles may hold the words typed so far ("to": 17 of 100,000 pages). Then
    # pages with a name token that starts with the partial term are scored until there are
    # ``limit`` hits, those whose title starts with the text typed first: the bar then stands
    # before the body postings are walked, where a common word such as "to" is in every page.
    # (Not for a names-only query, whose body postings bring in no page: the pages with such a
    # token are bounded below with the others and scored in the order of their bounds, which
    # raises the bar sooner than path order: half titles at 10,000 pages ~20% quicker.)
    typed = query.tokens
    # can earn prefix-phrase (none with two or more words typed: see ``base`` below)
    starting = bounds.starting & prefixed if len(typed) == 1 else set()
    if len(best) < limit and prefixed and not query.names_only:
        for path in (*sorted(starting), *sorted(prefixed - starting)):
            if len(best) == limit:
                break
            score(path)

    # Every other candidate: a coarse bound from the terms it holds (and the prefix channels),
    # then, while that reaches the bar, a tight one. Those with a query word in a tag, heading
    # or path (``meta``) can earn those channels too: per term at most tag-term, heading-term
    # and path-term, and the phrase channels only when they hold every term there.
    later = _PRIOR + (_CONTEXT if query.context else 0) + bounds.slack
    prefix_max = _PREFIX_PHRASE + _PREFIX_TERM
    postings = vault.postings
    floor = best[0][0] if len(best) == limit else -math.inf
    # prefix-phrase only where the title or an alias starts with the text typed
    bound: dict[str, float] = dict.fromkeys(prefixed, _PREFIX_TERM)
    bound.update(dict.fromkeys(starting, prefix_max))
    # (with two or more words typed, a name that starts with them holds the first as a whole
    # word: its page is strong, so the others can earn prefix-term at most)
    base = (prefix_max if len(typed) == 1 else _PREFIX_TERM) if prefix_cut else 0
    meta: set[str] = set()
    in_all_meta: set[str] | None = None  # pages with every term (or a stand-in) in their meta tokens
    # per term: tag-term (or a stand-in's tag points) where a tag holds it or a stand-in,
    # heading-term where a heading holds it, path-term where the path does
    for tagged, stand_for, (term_plan, _others, _stand_in, names) in zip(bounds.tagged, bounds.stand_fors, bounds.terms):
        tagged = (tagged & found_in) - strong
        if not tagged:
            in_all_meta = tagged
            continue
        # (tag-term where a tag holds the term itself; a stand-in's tag points, ``names[2]``,
        # where a tag holds only a stand-in: "Worke" at 100,000 pages met 11,642 pages tagged
        # "work", each bounded with tag-term's 4 points, above the bar, for the 1 it can earn)
        term_tagged = set(vault.tag_postings.get(term_plan.term, ()))
        channels = (
            (term_tagged, max(_TAG_TERM, names[2])),
            (_holders(vault.tag_postings, stand_for - {term_plan.term}) - term_tagged, names[2]),
            (vault.heading_postings.get(term_plan.term, ()), _HEADING_TERM),
            (vault.path_postings.get(term_plan.term, ()), _PATH_TERM),
        )
        for holders, points in channels:
            for path in holders:
                if path in tagged:
                    bound[path] = bound.get(path, base) + points
        meta |= tagged
        in_all_meta = tagged if in_all_meta is None else in_all_meta & tagged
    # The phrase channels match the words typed, not their stand-ins: only a page with every
    # word typed in a name, tag, heading or path token (``Bounds._phrased``) can earn one, or a
    # page whose names are not ASCII (an exact name is matched with diacritics folded). ("Worke"
    # at 100,000 pages: 16,761 pages with "worked" or "worker" in a heading or folder each had
    # its ``medium`` bound made, ~0.1 s, for a phrase none can earn.)
    phrase_max = max(bounds.exact_max, _LEAF_EXACT) + _HEADING_EXACT
    phrased = bounds._phrased if in_all_meta else set()
    for path in in_all_meta or ():
        if path in phrased or not fields[path].ascii_names:
            bound[path] = bound.get(path, base) + phrase_max
    if query.names_only:
        # The body postings below bring in no page (``minor``): the candidates a stand-in brought
        # in by a heading or folder token (which earns nothing there) start at ``base`` too, and
        # get their body points as the others do.
        for path in found_in:
            if path not in bound and path not in strong:
                bound[path] = base
    # Body points, per term at most its tier of 3 or more occurrences. Terms whose maxima,
    # smallest first, cannot lift a page holding only them to the bar are not enumerated ("the"
    # is in every page): only looked up in the pages the other terms, prefixes and meta tokens
    # bring in.
    # A page holding the term itself gets the most its body count can earn (``Bounds.tiers``);
    # one holding only a stand-in (synonym, variant, typo) at most the stand-in points.
    body = []
    for (tp, _others, stand_in, _names), tier in zip(bounds.terms, bounds.tiers):
        stand_words = (*(synonym[0] for synonym in tp.synonyms), *tp.stems, *tp.folded, *tp.fuzzy)
        body.append((tier[3], tp.term, stand_words, tier, stand_in))  # at most: 3 or more occurrences
    body.sort(key=itemgetter(0))
    reach = base + later
    minor = 0
    while minor < len(body) and reach + body[minor][0] < floor:
        reach += body[minor][0]
        minor += 1
    if query.names_only:
        # only the candidates whose names match (``scoring.name_matches``): the strong ones are
        # done, the others are in ``bound`` already (a tag, heading or path token, a prefix), and
        # every term is looked up in those alone (the body postings bring in no page)
        minor = len(body)
    # Each enumerated term walks its postings once (every holder gets the tier of one
    # occurrence, or the stand-in points when those are more), then its pages of two, and of
    # three or more, occurrences (``Vault.body_twice``, ``body_thrice``) get the difference: no
    # page's body counts are looked up. A holder of the term in a name or tag only gets at
    # least its stand-in points, as before, and the strong pages are dropped at the end.
    twice, thrice = vault.body_twice, vault.body_thrice
    for _most, term, stand_words, tier, stand_in in body[minor:]:
        holders = postings.get(term, ())
        _add_tiers(bound, holders, twice.get(term, ()), thrice.get(term, ()), tier, stand_in, base)
        if stand_words and stand_in:
            standing: set[str] = set()
            for word in stand_words:
                standing.update(postings.get(word, ()))
            standing.difference_update(holders)
            get = bound.get
            for path in standing:
                bound[path] = get(path, base) + stand_in
    for path in strong:
        bound.pop(path, None)
    if minor:
        # Looked up only in the pages whose bound may still reach the bar with them, one term at
        # a time, the one that can earn the most first: a page drops out as soon as the most the
        # remaining terms could add leaves it below the bar. A term held by fewer pages than a
        # few times those left walks its postings by count (as above) instead of bisecting each
        # page's body counts.
        # (a term that can earn nothing in the body adds nothing to any page's bound: as-you-type,
        # where no body channel counts, each term copied every bound and merged it back for
        # nothing: half of "Texted R" at 10,000 pages, whose "r" brings in ~1,000 pages)
        minors = sorted((entry for entry in body[:minor] if entry[0] or entry[4]), key=itemgetter(0), reverse=True)
        rest_most = [0.0] * (len(minors) + 1)
        for k in range(len(minors) - 1, -1, -1):
            rest_most[k] = rest_most[k + 1] + minors[k][3][3]
        alive = bound
        for k, (_most, term, stand_words, tier, stand_in) in enumerate(minors):
            short = floor - later - rest_most[k]
            alive = {path: b for path, b in alive.items() if b >= short}
            if not alive:
                break
            if mostly_thrice(vault, term):
                # three times or more in most bodies ("in": ~95,000 holders at 100,000 pages):
                # every page gets that tier (or its stand-in's points, if more), as
                # ``Bounds.tiered_pages`` gives, without walking the postings
                up = max(tier[3], stand_in)
                for path in alive:
                    alive[path] += up
                bound.update(alive)
                continue
            holders = postings.get(term, ())
            if len(holders) < _WALK * len(alive):
                _add_tiers(alive, holders, twice.get(term, ()), thrice.get(term, ()), tier, stand_in)
                if stand_words and stand_in:
                    standing = set()
                    for word in stand_words:
                        standing.update(postings.get(word, ()))
                    standing.difference_update(holders)
                    for path in standing:
                        if path in alive:
                            alive[path] += stand_in
            else:
                for path, b in alive.items():
                    count_of = bounds.counts(pages[path], fields[path]).count
                    count = count_of(term)
                    if count:
                        alive[path] = b + (tier[count] if count < 3 else tier[3])
                    elif stand_in:
                        for word in stand_words:
                            if count_of(word):
                                alive[path] = b + stand_in
                                break
            bound.update(alive)
    # In order of the bound with link-prior and context-edge at most (``later``): a page with a
    # prefix of the partial term gets its own link-prior and is ordered by title among equals,
    # since many such pages often tie and the title decides between them (as-you-type).
    context = later - _PRIOR
    # The others fall into a few bound values (sums of per-term maxima): grouped by value, not
    # sorted one by one; the order within a value only changes how soon the bar rises.
    # (Those with a prefix are grouped the same way, each group sorted by title only once the
    # loop below reaches it: thousands of them start with a two-letter word at 100,000 pages.)
    buckets: dict[float, list[str]] = {}
    titled: dict[float, list[str]] = {}
    priors = prior_points(vault, [path for path in prefixed if path in bound and bound[path] + later >= floor])
    for path, b in bound.items():
        if b + later < floor:
            continue
        if path in prefixed:
            most, group = b + context + priors[path], titled
        else:
            most, group = b + later, buckets
        found = group.get(most)
        if found is None:
            group[most] = [path]
        else:
            found.append(path)
    rest: list[tuple[float, str, Any]] = [(-most, "", paths) for most, paths in buckets.items()]
    rest.extend((-most, _BY_TITLE, paths) for most, paths in titled.items())  # after the plain group
    rest.sort(key=_bound_order)
    other_bound = bounds.other
    by_postings = bounds.tiered_by_postings
    partial = query.partial
    for neg, _title, path in _expand(rest, title_key):
        if len(best) == limit and not can_enter(path, -neg):
            if -neg < best[0][0]:
                break
            continue  # a tie with the bar that sorts after it (by its title key: no page decoded)
        page, f = pages[path], fields[path]
        if len(best) == limit:
            bar = best[0][0]
            if path in meta or path in prefixed:
                # body points from the postings by count, not the page's body counts (read off
                # its text: "Worke" at 100,000 pages met 17,000 pages with a name token that
                # starts so, and read every body, 0.4 s)
                if medium(page, f, by_postings(path)) < bar:
                    continue
            elif prefix_cut and -neg - base < bar and f.ascii_names and not _names_start(f, partial):
                # its bound took the prefix channels for any page (``base``): it has no name token
                # that starts with the partial term, so it earns neither. (For a page with neither a
                # meta token nor a prefix, ``medium`` adds little to the bound above: ``other`` next.)
                continue
            elif -neg - _PRIOR < bar:
                # the bound above counts the most link-prior (``later``): with the page's own
                # (one look at a count), is it still at the bar?
                prior = link_prior(vault, page)
                if -neg - _PRIOR + (prior[3] if prior else 0) < bar:
                    continue
        else:
            bar = -math.inf
        if path in meta:
            most = strong_bound(page, f)
        else:
            may_prefix = prefix_cut or path in prefixed
            # first without the page's body counts (unpacked on first use: most pages checked
            # here are not scored), then with them
            if bar != -math.inf and not can_enter(path, other_bound(page, f, may_prefix, bar, by_postings=True)):
                continue
            most = other_bound(page, f, may_prefix, bar)
        if can_enter(path, most):
            score(path)
    return scored


class Bounds:
    """Upper bounds of a page's final score for one query (link-prior and context-edge
    included), from set and dict look-ups: what ``top_components`` prunes with.

    Sound for any page: ``strong`` for every page, ``other`` for a page with none of the query
    words (``named_pages``, ``meta_pages``) in its title, aliases, tags, headings or path; both infinite for a
    page whose names are not ASCII (an exact name is matched with diacritics folded).
    ``tests/property/test_pruned_rank.py`` checks both against the scores of every page.
    """

    def __init__(self, vault: Vault, query: Query, plan: Plan, near: set[str]) -> None:
        self.vault = vault
        self.plan = plan
        self.near = near
        self.partial = query.partial
        self.typed = query.tokens
        self.seq = set(query.tokens)
        self.exact_max = _EXACT_BASE + _EXACT_TERM * len(query.terms)  # title-exact
        self.context = _CONTEXT if query.context else 0
        # what the channels not bounded by name can add (none in today's table: ``BOUNDED``)
        self.slack = _SLACK_ONCE + _SLACK_TERM * len(plan.terms)
        self.prior_most = _PRIOR + self.slack  # link-prior at most, and that
        self.near_extra = self.context + self.slack  # a page's own link-prior has these beside it
        # per term: its plan, its stand-ins (None when none), what they earn in the body, and in
        # the title, aliases and tags (``stand_ins``)
        self.terms: list[tuple[TermPlan, frozenset[str] | None, float, tuple[float, float, float]]] = []
        self.stand_fors: list[frozenset[str]] = []  # per term: the term and every word standing for it
        self.words: set[str] = set(query.tokens)  # every query word and every word standing for one
        # per term with stand-ins worth body points: the words of each kind (``_body_stand_ins``)
        self.body_stand_ins: list[tuple[tuple[str, ...], ...] | None] = []
        self.body = plan.body  # as-you-type: no body channel counts, and no body is read
        for tp in plan.terms:
            stand_for = name_words(tp)
            self.stand_fors.append(frozenset(stand_for))
            self.words.update(stand_for)
            title, alias, tag, body = stand_ins(tp)
            if not plan.body:  # as-you-type: a stand-in earns nothing in the body either
                body = 0.0
            self.terms.append((tp, frozenset(stand_for - {tp.term}) or None, body, (title, alias, tag)))
            self.body_stand_ins.append(_body_stand_ins(tp) if body else None)
        # per term, by body count 1, 2, 3 or more: body-term and body-bm25 at most (BM25 with the
        # smallest length norm, k1 (1 - b), that of an empty body; as the count grows, k1 + 1)
        least_norm = BM25_K1 * (1.0 - BM25_B)
        self.tiers = [
            (0.0, *(
                _BODY_TERM * min(count, _BODY_CAP)
                + min(_BM25_MOST, math.ceil(BM25_SCALE * tp.idf * count * (BM25_K1 + 1.0) / (count + least_norm) * FIXED_STEP) / FIXED_STEP)
                for count in (1, 2)
            ), _BODY_TERM * _BODY_CAP + min(_BM25_MOST, math.ceil(BM25_SCALE * tp.idf * (BM25_K1 + 1.0) * FIXED_STEP) / FIXED_STEP))
            for tp in plan.terms
        ] if plan.body else [(0.0, 0.0, 0.0, 0.0)] * len(plan.terms)
        # body-pair needs every word of the pair in the body: its points go with the tiers of
        # the pair's first term (a page without that term in its body cannot earn it)
        # section-term: per term the body holds, one term fewer at most (the same to every tier)
        self.pairs = plan.pairs
        self.sections = plan.body and len(plan.terms) >= SECTION_MIN_TERMS
        if plan.pairs or self.sections:
            starts = [pair[0] for pair in plan.pairs]
            section = _SECTION if self.sections else 0
            self.tiers = [
                (tier[0], *(t + _PAIR * starts.count(tp.term) + section for t in tier[1:]))
                for tp, tier in zip(plan.terms, self.tiers)
            ]

    def named_pages(self) -> set[str]:
        """The pages with a query word (or a stand-in) in a title or alias."""
        return _holders(self.vault.name_postings, self.words)

    def meta_pages(self) -> set[str]:
        """The pages with a query word (or a stand-in) in a tag, heading or path."""
        return set().union(*self.tagged)

    @functools.cached_property
    def tagged(self) -> list[set[str]]:
        """Per term: the pages with it or a stand-in in a tag, heading or path."""
        vault = self.vault
        return [
            _holders(vault.tag_postings, stand_for)
            | _holders(vault.heading_postings, stand_for)
            | _holders(vault.path_postings, stand_for)
            for stand_for in self.stand_fors
        ]

    @functools.cached_property
    def named(self) -> list[set[str]]:
        """Per term: the pages with it or a stand-in in a title, alias, tag, heading or path
        (a page outside can earn only body points and stand-ins for that term)."""
        name_postings = self.vault.name_postings
        return [_holders(name_postings, stand_for) | tagged for stand_for, tagged in zip(self.stand_fors, self.tagged)]

    @functools.cached_property
    def prefixed(self) -> frozenset[str]:
        """The pages with a title or alias token that starts with the partial term (see
        ``prefix_cut``)."""
        return self.vault.prefixed(self.partial)[0] if self.partial else frozenset()

    @functools.cached_property
    def starting(self) -> frozenset[str]:
        """With one word typed in part, the pages whose title or an alias starts with it (what
        ``starts_typed`` tells of one page: prefix-phrase), from ``first_postings``: a two-letter
        prefix brings in thousands of pages, and testing each decoded every page a warm start
        had left as stored (~50 ms for the first such query at 10,000 pages)."""
        if not self.partial or len(self.typed) != 1:
            return frozenset()
        return self.vault.starting(self.partial)

    @functools.cached_property
    def prefix_cut(self) -> bool:
        """Whether more name tokens start with the partial term than ``prefixed`` went through:
        then any page may have one."""
        return bool(self.partial) and self.vault.prefixed(self.partial)[1]

    @functools.cached_property
    def _phrased(self) -> set[str]:
        """The pages with every query word in a name, tag, heading or path token: the only ones
        that can earn a phrase channel (title-phrase, title-exact, leaf-exact, heading-phrase)."""
        found: set[str] | None = None
        vault = self.vault
        for word in self.seq:
            holders = set(vault.name_postings.get(word, ())).union(
                vault.tag_postings.get(word, ()), vault.heading_postings.get(word, ()), vault.path_postings.get(word, ())
            )
            found = holders if found is None else found & holders
        return found or set()

    def _prior_and_context(self, page: Page) -> float:
        """The page's own link-prior, context-edge if it is near the context page, and the slack."""
        prior = link_prior(self.vault, page)
        return (prior[3] if prior else 0) + (self.near_extra if page.path in self.near else self.slack)

    def counts(self, page: Page, f: PageFields) -> BodyCounts | TextCounts:
        """The page's body counts (``scoring.counts_of``; none without the body channels)."""
        return counts_of(page, f) if self.body else NO_BODY

    def posted(self, page: Page, f: PageFields) -> BodyCounts | TextCounts | PostedCounts:
        """The page's body counts, the query's words answered from the postings where they can
        be (``scoring.PostedCounts``) once ``_by_count`` is made (else ``counts``)."""
        if not self.body:
            return NO_BODY
        if "_by_count" not in self.__dict__:
            return counts_of(page, f)
        return PostedCounts(page, f, self._posted_words, self._zero_words)

    @functools.cached_property
    def _posted_words(self) -> dict[str, dict[str, int]]:
        return {tp.term: posted for (tp, _o, _s, _n), (posted, _most, _standing) in zip(self.terms, self._by_count)}

    @functools.cached_property
    def _zero_words(self) -> dict[str, frozenset[str]]:
        """Per stand-in word of a term: the pages holding a word of its kind (``_by_count``)."""
        out: dict[str, frozenset[str]] = {}
        posted = self._posted_words
        for kinds, (_posted, _most, standing) in zip(self.body_stand_ins, self._by_count):
            if kinds is None or standing is None:
                continue
            for words, pages in zip(kinds, standing):
                for word in words:
                    if word not in posted:
                        known = out.get(word)
                        out[word] = pages if known is None else known | pages
        return out

    def _body(self, counts: BodyCounts | TextCounts | None, f: PageFields, path: str | None = None,
              page: Page | None = None) -> float:
        """The body points of every term (body-term and body-bm25 as ``page_components`` gives
        them), or what a stand-in can earn there when the body lacks the term (``counts``: the
        page's, ``counts``). With the page's ``path``, and once ``_by_count`` is made, a word
        no posting gives the page is not looked for in its body (a body's tokens are all in
        the postings; the counts of a page read off its text cost a search of the text).
        ``counts`` None: the ``page``'s, read only if a word needs them."""
        if not self.body:
            return 0.0
        if counts is None:
            found: list = []

            def count_of(token: str) -> int:
                if not found:
                    found.append(counts_of(page, f).count)
                return found[0](token)
        else:
            count_of = counts.count
        total = 0.0
        norm = 0.0
        held = 0  # terms the body holds
        pairs = self.pairs
        seen: dict[str, int] = {}  # each word looked up once (body-pair asks again)
        by_count = self.__dict__.get("_by_count") if path is not None else None
        for i, ((tp, _others, stand_in, _names), kinds) in enumerate(zip(self.terms, self.body_stand_ins)):
            if by_count is None:
                count = count_of(tp.term)
            else:
                posted, _most, standing = by_count[i]
                count = posted.get(path, 0)
                if count == 3 or count == 1 and indexed_outside_body(f, tp.term):
                    # 3: three times or more; 1 with the term in a name, tag or file name: in
                    # the body once, or not at all
                    count = count_of(tp.term)
                if not count and kinds is not None:
                    tags = f.tag_names
                    total += _STAND_IN_MOST[tuple(
                        path in pages and any(count_of(w) or w in tags for w in words)
                        for words, pages in zip(kinds, standing)
                    )][3]
                    kinds = None
            if count:
                held += 1
                if not norm:
                    norm = bm25_norm(f.lengths[4], self.plan.avg_body)
                total += _BODY_TERM * min(count, _BODY_CAP) + fixed(
                    min(_BM25_MOST, BM25_SCALE * (tp.idf * count * (BM25_K1 + 1.0) / (count + norm)))
                )
            elif kinds is not None:
                # a stand-in earns body points only where the body holds it (a typo form: or a
                # tag, as ``page_components`` looks): the kinds the page holds, at most
                tags = f.tag_names
                total += _STAND_IN_MOST[tuple(
                    any(count_of(w) or w in tags for w in words) for words in kinds
                )][3]
            if pairs:
                seen[tp.term] = count
        if pairs:
            both = 0
            for pair in pairs:
                for word in pair:
                    count = seen.get(word)
                    if count is None:
                        count = seen[word] = count_of(word)
                    if not count:
                        break
                else:
                    both += 1
            total += _PAIR * both
        if self.sections and held >= 2:
            total += _SECTION * (held - 1)
        return total

    @functools.cached_property
    def _by_count(self) -> list[tuple[dict[str, int], float, tuple[frozenset[str], ...] | None]]:
        """Per term, from its postings: the pages holding it, each with 1, 2 or 3 (three or
        more) for its body count (``Vault.body_twice``, ``body_thrice``; a page holding it in a
        name only counts once); ``_body``'s body-bm25 for three or more at most (its limit as
        the count grows); and, when its stand-ins are worth body points, per kind of them
        (``_body_stand_ins``) the pages holding one of those words in any field."""
        vault = self.vault
        postings, twice = vault.postings, vault.body_twice
        out = []
        for (tp, _others, _stand_in, _names), kinds in zip(self.terms, self.body_stand_ins):
            term = tp.term
            if mostly_thrice(vault, term):
                # three times or more in most bodies ("the", "in": ~100,000 holders at 100,000
                # pages, 17 ms a query to enumerate): 2 where it is twice, 3 ("three or more: look
                # at the body", an upper bound) for every other page (``_MostlyThrice``)
                counts = _MostlyThrice.fromkeys(twice.get(term, ()), 2)
            else:
                counts = vault.counts_by_page(term)  # (kept for the next keystroke when large)
            most = min(_BM25_MOST, math.ceil(BM25_SCALE * tp.idf * (BM25_K1 + 1.0) * FIXED_STEP) / FIXED_STEP)
            standing = None
            if kinds is not None:
                standing = tuple(frozenset(_holders(postings, words)) for words in kinds)
            out.append((counts, most, standing))
        return out

    def body_by_postings(self, path: str, f: PageFields) -> float:
        """At least ``_body``, without the page's body counts (which a page read from the
        persistent index unpacks on first use, ~0.1-0.3 ms): each term's count from its
        postings by count (``_by_count``: exact up to two, three standing for three or more),
        a stand-in's points only where a page holds one of its words, a pair's only where the
        page holds each of its terms (a weak word between them is taken as held)."""
        if not self.body:
            return 0.0
        total = 0.0
        norm = 0.0
        held = 0
        pairs = self.pairs
        seen: dict[str, int] = {}
        for (tp, _others, _stand_in, _names), (counts, most, standing) in zip(self.terms, self._by_count):
            count = counts.get(path, 0)
            if count:
                held += 1
                if count < 3:
                    if not norm:
                        norm = bm25_norm(f.lengths[4], self.plan.avg_body)
                    total += _BODY_TERM * count + fixed(
                        min(_BM25_MOST, BM25_SCALE * (tp.idf * count * (BM25_K1 + 1.0) / (count + norm)))
                    )
                else:
                    total += _BODY_TERM * _BODY_CAP + most
            elif standing is not None:
                total += _STAND_IN_MOST[tuple(path in pages for pages in standing)][3]
            if pairs:
                seen[tp.term] = count
        if pairs:
            for pair in pairs:
                if all(seen.get(word, 1) for word in pair):
                    total += _PAIR
        if self.sections and held >= 2:
            total += _SECTION * (held - 1)
        return total

    def strong(self, page: Page, f: PageFields) -> float:
        """At most the final score of any page: each channel of ``page_components`` bounded
        from the page's fields (see ``weights`` for the points)."""
        if not f.ascii_names:
            return math.inf
        total: float = self._prior_and_context(page) + self._body(None, f, page.path, page) + self._named(page.path, f)
        title_set = f.title_set
        typed, partial = self.typed, self.partial
        phrase = self._phrase(f)  # title-phrase, title-exact or leaf-exact, heading-phrase; or else prefix-phrase
        if title_set and self.words.issuperset(title_set):
            total += _COVER
        if partial:
            # prefix-phrase comes only to a page that earned none of the others above
            if phrase < _PREFIX_PHRASE and starts_typed(f, typed):
                phrase = _PREFIX_PHRASE
            total += self._prefix_term(f)
        return total + phrase

    def tighten(self, page: Page, f: PageFields, quick: float, tiered: float, by_postings: bool = False) -> float:
        """``strong`` from the page's ``medium`` (``quick``, whose body part was ``tiered``):
        the three parts the quick bound takes at their most (link-prior, body points by tier,
        prefix-term) replaced by the page's own. Every part is a multiple of 1/FIXED_STEP, so
        this is ``strong`` exactly, without its per-term names loop and phrase checks again.
        With ``by_postings``, its body part is ``body_by_postings`` (at least ``strong``, and
        the page's body counts are not read)."""
        if quick == math.inf:
            return quick
        path = page.path
        near = self.context if path in self.near else 0
        body = self.body_by_postings(path, f) if by_postings else self._body(None, f, path, page)
        total = quick - self.prior_most - near + self._prior_and_context(page) - tiered + body
        if self.partial and (self.prefix_cut or path in self.prefixed) and self.partial not in f.title_set:
            total += self._prefix_term(f) - _PREFIX_TERM  # (``medium`` gave none when the title holds it)
        return total

    def _prefix_term(self, f: PageFields) -> float:
        """prefix-term (or its alias form) as the page earns it: the partial term starts a title
        token that it is not yet, or else an alias token."""
        partial, title_set, alias_set = self.partial, f.title_set, f.alias_set
        if partial in title_set:
            return 0
        for t in title_set:
            if t.startswith(partial):
                return _PREFIX_TITLE
        if partial not in alias_set:
            for t in alias_set:
                if t.startswith(partial):
                    return _PREFIX_ALIAS
        return 0

    def _named(self, path: str, f: PageFields) -> float:
        """Per term, the title, alias, tag, heading and path channels at most (the term's or
        a stand-in's), for the terms held in one of those (``named``)."""
        total = 0.0
        for (tp, others, _stand_in, names), named in zip(self.terms, self.named):
            if path in named:  # else neither the term nor a stand-in in a name, tag, heading or path
                total += _name_points(tp.term, others, names, f)
        return total

    def _phrase(self, f: PageFields) -> float:
        """title-phrase, title-exact or leaf-exact, and heading-phrase at most (from set and
        tuple comparisons: the names are ASCII, so an exact name is one whose tokens are the
        query's)."""
        seq, typed = self.seq, self.typed
        phrase = 0
        if seq:
            if holds_all(f.title_set, seq) or holds_all(f.alias_set, seq):
                phrase = _TITLE_PHRASE
            if f.title_tokens == typed or f.file_tokens == typed or typed in f.alias_tokens:
                phrase += self.exact_max
            elif len(f.leaf_tokens) <= len(typed) and holds_all(f.leaf_tokens, seq):
                phrase += _LEAF_EXACT
            if holds_all(f.heading_set, seq):
                phrase += _HEADING_EXACT if typed in f.heading_tokens else _HEADING_PHRASE
        return phrase

    def tiered(self, f: PageFields, counts: BodyCounts | TextCounts | None = None) -> float:
        """The body points of every term at most, by its count (``tiers``; a stand-in's points
        when the body lacks the term): ``medium``'s body part (``counts``: the page's, when
        the caller has them)."""
        if not self.body:
            return 0.0
        count_of = (f.body_counts if counts is None else counts).count
        total = 0.0
        for (tp, _others, stand_in, _names), tier in zip(self.terms, self.tiers):
            count = count_of(tp.term)
            total += (tier[count] if count < 3 else tier[3]) if count else stand_in
        return total

    def tiered_by_postings(self, path: str) -> float:
        """At least ``tiered`` of the page at ``path``, without its body counts: each term's
        count from its postings by count (``_by_count``: exact up to two, three standing for
        three or more; a page holding the term in a name only is taken to hold it once)."""
        if not self.body:
            return 0.0
        total = 0.0
        for (_tp, _others, stand_in, _names), tier, (counts, _most, _standing) in zip(self.terms, self.tiers, self._by_count):
            count = counts.get(path, 0)
            if count:
                most = tier[count] if count < 3 else tier[3]
                total += most if most >= stand_in else stand_in
            else:
                total += stand_in
        return total

    def tiered_pages(self, paths: set[str]) -> dict[str, float]:
        """At least ``tiered`` of each page in ``paths`` (``tighten`` takes back whatever part
        of it ``medium`` was given), found term by term: a term held by few pages against
        ``paths`` walks its postings by body count (``Vault.body_twice``, ``body_thrice``), a
        holder that has it in a name only getting one occurrence's points; a term three times
        or more in most bodies gives every page that tier; else each page's counts are
        bisected, exactly."""
        vault = self.vault
        pages, fields, postings = vault.pages, vault.fields, vault.postings
        out = dict.fromkeys(paths, float(sum(stand_in for _tp, _others, stand_in, _names in self.terms)))
        if not self.body:
            return out
        for i, ((tp, _others, stand_in, _names), tier) in enumerate(zip(self.terms, self.tiers)):
            term = tp.term
            holders = postings.get(term, ())
            twice, thrice = vault.body_twice.get(term, ()), vault.body_thrice.get(term, ())
            if len(holders) + len(twice) + len(thrice) < 3 * len(paths):
                _add_tiers(out, holders, twice, thrice, tier, stand_in, minus=stand_in)  # in place of it
                continue
            if mostly_thrice(vault, term):
                # a word three times or more in most bodies ("the"): every page gets that
                # tier, almost always its own, without a look at its counts
                up = tier[3] - stand_in
                for path in out:
                    out[path] += up
                continue
            if len(holders) + len(twice) + len(thrice) < _WALK * len(paths):
                # (a page's counts are unpacked on first use: looking them up in the postings is
                # cheaper): each page's count from ``_by_count``, which the tight bounds read
                # anyway ("on" at 100,000 pages: 2,330 look-ups, not a walk of 100,000 postings)
                counts = self._by_count[i][0]
                first = tier[1] if tier[1] >= stand_in else stand_in
                ups = (0.0, first - stand_in, tier[2] - stand_in, tier[3] - stand_in)
                for path in out:
                    count = counts.get(path, 0)
                    if count:
                        out[path] += ups[count]
                continue
            for path in holders if len(holders) < len(paths) else paths:
                if path not in out:
                    continue
                count = self.counts(pages[path], fields[path]).count(term)
                if count:
                    out[path] += (tier[count] if count < 3 else tier[3]) - stand_in
        return out

    def medium(self, page: Page, f: PageFields, tiered: float | None = None) -> float:
        """At most ``strong``, for any page, and quicker: body points by count (``tiered``,
        or given) rather than from the page's length, the most link-prior, and the phrase and
        prefix channels from set look-ups (``_phrased``, ``prefixed``) and the title's start."""
        if not f.ascii_names:
            return math.inf
        path = page.path
        total: float = self.prior_most + (self.context if path in self.near else 0)
        total += (self.tiered(f, self.counts(page, f)) if tiered is None else tiered) + self._named(path, f)
        return total + self._cover_phrase_prefix(path, f)

    def _cover_phrase_prefix(self, path: str, f: PageFields) -> float:
        """``medium``'s title-cover, phrase and prefix channels at most, from set look-ups
        (``_phrased``, ``prefixed``) and the title's start."""
        total = 0.0
        title_set = f.title_set
        phrase = self._phrase(f) if path in self._phrased else 0
        if title_set and self.words.issuperset(title_set):
            total += _COVER
        if self.partial and (self.prefix_cut or path in self.prefixed):
            if self.partial not in title_set:  # else no prefix-term ("the" typed, "The …" titles)
                total += _PREFIX_TERM
            if phrase < _PREFIX_PHRASE and starts_typed(f, self.typed):
                phrase = _PREFIX_PHRASE
        return total + phrase

    def medium_pages(self, paths: set[str], tiered: dict[str, float]) -> dict[str, float]:
        """``medium`` of each page in ``paths``, with its ``tiered``, the names part found term
        by term: each term's name, tag, heading and path points go only to the pages that hold
        it there (``named``), where ``medium`` asks every page about every term.
        The same values (every part is a multiple of 1/FIXED_STEP, so the order of the sums
        does not matter)."""
        fields = self.vault.fields
        out = {}
        prior_most = self.prior_most
        for path in paths:
            out[path] = prior_most + tiered[path] if fields[path].ascii_names else math.inf
        if self.context:
            for path in self.near & out.keys():
                out[path] += self.context
        for (tp, others, _stand_in, names), named in zip(self.terms, self.named):
            term = tp.term
            for path in named.intersection(paths):
                out[path] += _name_points(term, others, names, fields[path])
        rest = self._cover_phrase_prefix
        for path in out:
            out[path] += rest(path, fields[path])
        return out

    def other(
        self, page: Page, f: PageFields, prefix: bool = True, floor: float = -math.inf, by_postings: bool = False
    ) -> float:
        """At most the final score of a page without a query word in its names, tags, headings
        or path: its body channels, stand-ins and prefix channels (``prefix``: when a name token
        may start with the partial term). A page whose bound is below ``floor`` anyway gets
        its bound with the most link-prior, not its own (which is not looked up). With
        ``by_postings``, the body part is ``body_by_postings`` (looser, and the page's body
        counts are not read)."""
        if not f.ascii_names:
            return math.inf
        tight = 0.0
        partial = self.partial
        if partial and prefix:
            typed = self.typed
            if starts_typed(f, typed):
                tight += _PREFIX_PHRASE
            if any(t.startswith(partial) for t in f.title_set):
                tight += _PREFIX_TITLE
            elif any(t.startswith(partial) for t in f.alias_set):
                tight += _PREFIX_ALIAS
        tight += self.body_by_postings(page.path, f) if by_postings else self._body(None, f, page.path, page)
        most = tight + self.prior_most + self.context
        if most < floor:  # below the bar even with the most link-prior: its own is not looked up
            return most
        return tight + self._prior_and_context(page)


class _MostlyThrice(dict):
    """``Bounds._by_count`` of a term three times or more in most bodies: the pages holding it
    twice -> 2, and 3 for every other page, holder or not. Every reader takes 3 as "three or
    more, or look": an upper bound (``body_by_postings``, ``tiered_by_postings``), or a count
    read from the page's body (``_body``, ``scoring.PostedCounts``), so the answers are the
    same and the term's ~100,000 holders are not enumerated."""

    __slots__ = ()

    def get(self, path: str, default: int | None = None) -> int:  # type: ignore[override]
        return dict.get(self, path, 3)


def mostly_thrice(vault: Vault, term: str) -> bool:
    """Whether ``term`` is three times or more in most bodies (3 in 4: "the", "in"): then the
    top-k search gives every page that tier as a bound, almost always its own, instead of
    enumerating the term's ~100,000 holders (``_MostlyThrice``)."""
    return 4 * vault.body_thrice.count(term) >= 3 * len(vault.pages)


def _add_tiers(acc: dict[str, float], holders: Sequence[str], twice: Sequence[str], thrice: Sequence[str],
               tier: tuple[float, ...], stand_in: float, base: float | None = None, minus: float = 0.0) -> None:
    """Add one term's body tier to the pages of ``acc`` that hold it, from its postings by body
    count: one occurrence's points (or the stand-in's, when more: a holder may have the term in
    a name only) to every holder, then the difference to the pages holding it twice, and three
    times or more; ``minus`` less each. With ``base``, a holder not in ``acc`` is added at
    ``base``; without, only the pages already in ``acc`` are counted."""
    first = tier[1] if tier[1] >= stand_in else stand_in
    up2, up3 = tier[2] - first, tier[3] - first
    if base is not None:  # then every holder is in ``acc``, those of two and three included
        get, up = acc.get, first - minus
        for path in holders:
            acc[path] = get(path, base) + up
        for path in twice:
            acc[path] += up2
        for path in thrice:
            acc[path] += up3
        return
    up = first - minus
    for path in holders:
        if path in acc:
            acc[path] += up
    for path in twice:
        if path in acc:
            acc[path] += up2
    for path in thrice:
        if path in acc:
            acc[path] += up3


def _name_points(term: str, others: frozenset[str] | None, names: tuple[float, float, float], f: PageFields) -> float:
    """The most one term can earn on a page in its title, aliases, tags, headings and path,
    as ``page_components`` gives those channels; or its stand-ins (``others``), at most
    ``names`` (``stand_ins``: title, alias, tag), in a field that lacks the term."""
    title_set, alias_set, tag_names, tag_tokens = f.title_set, f.alias_set, f.tag_names, f.tag_tokens
    total = 0.0
    in_title = term in title_set
    if in_title:
        total += _TITLE_TERM
    elif others is not None and not others.isdisjoint(title_set):
        total += names[0]
    # alias-term only when the title lacks the term (else nothing in the aliases for it)
    in_alias = term in alias_set
    if in_alias:
        if not in_title:
            total += _ALIAS_TERM
    elif others is not None and not others.isdisjoint(alias_set):
        total += names[1]
    if term in tag_names or term in tag_tokens:
        total += _TAG_TERM
    elif others is not None and not (others.isdisjoint(tag_names) and others.isdisjoint(tag_tokens)):
        total += names[2]
    if term in f.heading_set:
        total += _HEADING_TERM
    if not in_title and not in_alias and term in f.path_tokens:
        total += _PATH_TERM
    return total


def _names_start(f: PageFields, partial: str) -> bool:
    """Whether a title or alias token of the page starts with ``partial`` (or is it): else the
    page earns neither prefix-term nor prefix-phrase."""
    return any(t.startswith(partial) for t in f.title_set) or any(t.startswith(partial) for t in f.alias_set)


def starts_typed(f: PageFields, typed: tuple[str, ...]) -> bool:
    """Whether the page's title or an alias starts with the text typed (prefix-phrase)."""
    if len(typed) == 1:  # one word typed in part, the common case: its first token starts so
        start = typed[0]
        title = f.title_tokens
        return bool(title) and title[0].startswith(start) or any(a and a[0].startswith(start) for a in f.alias_tokens)
    return starts_with_typed(f.title_tokens, typed) or any(starts_with_typed(a, typed) for a in f.alias_tokens)


def _bound_order(entry: tuple[float, str, Any]) -> tuple[float, str]:
    return entry[0], entry[1]


# Walk a term's postings rather than look it up in each page's body counts while it has fewer
# than this many holders a page: a page read from the persistent index unpacks its counts on
# first use (~0.1-0.3 ms, against ~40 ns a holder walked and ~1 µs a count once unpacked).
_WALK = 64

_BY_TITLE = "\uffff"  # a group of ``_expand`` to go through in title order


def _expand(entries: list[tuple[float, str, list[str]]], title_key: Callable[[str], str]) -> Iterator[tuple[float, str, str]]:
    """``(-bound, tag, paths)`` groups opened up in place into ``(-bound, tag, path)``, a
    group tagged ``_BY_TITLE`` in title order (sorted only when reached; ``title_key``:
    ``Vault.title_key``, which decodes no page)."""
    for neg, tag, paths in entries:
        if tag == _BY_TITLE and len(paths) > 1:
            paths = sorted(paths, key=lambda path: (title_key(path), path))
        for path in paths:
            yield neg, tag, path


class _Last:
    """A (title casefolded, path) key that orders backwards: in ``top_components``' min-heap the
    root is then, among equal scores, the page that sorts last."""

    __slots__ = ("key",)

    def __init__(self, key: tuple[str, str]) -> None:
        self.key = key

    def __lt__(self, other: _Last) -> bool:
        return other.key < self.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Last) and other.key == self.key


