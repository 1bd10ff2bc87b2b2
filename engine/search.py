"""search(vault, query) -> tuple[Hit, ...]: candidates, filters, scoring, graph walk, order.

Orchestration only: the points come from ``scoring`` and ``weights``, the walk from ``graph``.
Hits sort by score desc, then title casefolded, then path. Zero-score pages are not hits.
"""

from __future__ import annotations

import functools
import heapq
from bisect import bisect_left
import math
from operator import itemgetter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any
from dataclasses import replace

from .graph import walk_typed_edges
from .hybrid import VectorArm, hybrid_search
from .fields import PageFields
from .model import Hit, Page
from .query import Query, context_page, passes_filters
from .scoring import (
    _BM25_MOST,
    Plan,
    _bm25_norm,
    _starts_with_typed,
    candidates,
    exact_points,
    fixed,
    link_prior,
    make_plan,
    page_components,
    to_matches,
)
from .snippet import make_snippet
from .vault import PREFIX_TOKENS, Vault
from .weights import (
    BM25_B,
    BM25_K1,
    BM25_SCALE,
    BODY_CAP,
    FIXED_STEP,
    FOLDED_MINOR,
    GRAPH_HOP2,
    HEADING_EXACT,
    PATH_LEAF,
    POINTS,
    PREFIX_ALIAS,
    SYNONYM_MINOR,
)


def score_of(points: Iterable[int | float]) -> int | float:
    """The score of a hit: the sum of its components' points and nothing else.

    Points are whole numbers or exact binary fractions (``weights.FIXED_STEP``), so the sum is
    exact whatever the order of addition: the score equals the sum of the listed points.
    """
    return sum(points)


def hit_order(hit: Hit) -> tuple:
    """The ranking order: score desc, title casefolded, path."""
    return (-hit.score, hit.page.title.casefold(), hit.page.path)


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
    context = context_page(vault, query)
    near = _near(vault, context) if context is not None else set()
    if 0 < limit < len(found_in) and not query.graph and all(t.isascii() for t in query.tokens):
        scored = _scored_top(vault, query, plan, found_in, limit, near)
    else:
        scored = {}
        for path in found_in:
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
    hits = [Hit(pages[path], to_matches(scored[path]) if explain else (), -neg, "") for neg, _title, path in order]
    return hits, graph_only


def _near(vault: Vault, context: str) -> set[str]:
    """The pages one link away from ``context``, either way (those ``context-edge`` goes to)."""
    near = {r.path for _link, r in vault.outlinks(context) if r.path}
    near.update(source for source, _link in vault.backlinks(context))
    near.discard(context)
    return near


def _scored_top(
    vault: Vault, query: Query, plan: Plan, found_in: set[str], limit: int, near: set[str]
) -> dict[str, list]:
    """The components of enough candidates to hold the first ``limit`` hits: ``rank`` gives the
    same hits, with the same scores, as when every candidate is scored.

    Max-score pruning: the candidates with a query word (a term, or a synonym, stem, folded or
    typo form of one) in their title or aliases are "strong": they can earn every channel, and
    each is bounded from its fields (``_Bounds.strong``). The others first get a coarse bound
    from the terms they hold: tag, heading and path channels where a query word is in those,
    the prefix channels (when a name token starts with the partial term), and body points: per
    term the body channels when its body holds the term and at most 2 stand-in points (synonym
    or variant, and typo) when it does not; then a tight one. Each page's bound counts
    its own link-prior and context-edge, as its final score does. A page is scored only while
    its bound reaches the ``limit``-th best score so far: one below it can never enter the
    first ``limit``, nor tie with them. (Only for ASCII queries: a title's diacritics are folded
    when matched exactly, so a non-ASCII query is compared with every candidate.)
    """
    pages, fields = vault.pages, vault.fields
    bounds = _Bounds(vault, query, plan, near)
    strong = bounds.named_pages() & found_in
    prefix_cut = bounds.prefix_cut  # any page may have a name token that starts with the partial term
    prefixed = (bounds.prefixed & found_in) - strong  # the others with such a token

    near_points = POINTS["context-edge"]  # for the pages in ``near``, one link from --context
    scored: dict[str, list] = {}
    # The ``limit`` best so far in ranking order, as a min-heap whose root is the last of them:
    # the lowest score and, among equal scores, the title and path that sort last.
    best: list[tuple[int | float, _Last]] = []

    def score(path: str) -> None:
        if path in scored:  # a page seeded below is met again among the others
            return
        page = pages[path]
        if not passes_filters(page, query):
            return
        found = page_components(page, fields[path], query, vault, plan)
        if found:
            scored[path] = found
            # the score the page ends with: link-prior and context-edge are added by ``rank``
            prior = link_prior(vault, page)
            total = score_of(c[3] for c in found) + (prior[3] if prior else 0) + (near_points if path in near else 0)
            entry = (total, _Last((page.title.casefold(), path)))
            if len(best) < limit:
                heapq.heappush(best, entry)
            elif best[0] < entry:
                heapq.heapreplace(best, entry)

    def can_enter(path: str, most: float) -> bool:
        """Whether a page that scores at most ``most`` (link-prior and context-edge included)
        could still be among the first ``limit``."""
        if len(best) < limit or most > best[0][0]:
            return True
        return most == best[0][0] and (pages[path].title.casefold(), path) < best[0][1].key

    # Every strong candidate gets a quick bound (``_Bounds.medium``), then is scored in order of
    # it, once its tight bound reaches the bar too, until the quick bound falls below the bar,
    # which then only rises: the fewest pages are scored.
    strong_bound, medium = bounds.strong, bounds.medium
    tiered = bounds.tiered_pages(strong)
    # Grouped by the quick bound with the page's own link-prior in place of the most (one look
    # at a count kept per page), and by title within a group only once it is reached (as the
    # ranking breaks ties, so the bar's own tie-break passes over the rest of a tie without a
    # tight bound): most groups lie below the bar and are never sorted.
    quick = bounds.medium_pages(strong, tiered)
    prior_most = POINTS["link-prior"]
    by_bound: dict[float, list[str]] = {}
    for path, most in quick.items():
        if most != math.inf:
            prior = link_prior(vault, pages[path])
            most += (prior[3] if prior else 0) - prior_most
        found = by_bound.get(most)
        if found is None:
            by_bound[most] = [path]
        else:
            found.append(path)
    # They are scored in the order of their tight bounds, which the quick ones order only
    # roughly (link-prior and length norms are not in them): a page's tight bound waits in a
    # heap until no page still to come can have a higher one (its quick bound is at most the
    # tight bound's), so the bar rises as fast as it can and the fewest pages are scored.
    tighten = bounds.tighten
    waiting: list[tuple[float, str, str]] = []  # (-tight bound, title casefolded, path)

    def score_waiting(most: float) -> None:
        # (and, until there are ``limit`` hits, the best waiting page anyway: a bar sooner)
        while waiting and (-waiting[0][0] >= most or len(best) < limit):
            neg_tight, _title, path = heapq.heappop(waiting)
            if len(best) < limit or can_enter(path, -neg_tight):
                score(path)

    groups = sorted(((-most, _BY_TITLE, paths) for most, paths in by_bound.items()), key=_bound_order)
    for neg, _title, path in _expand(groups, pages):
        score_waiting(-neg)
        if len(best) == limit and not can_enter(path, -neg):
            if -neg < best[0][0]:
                break
            continue
        tight = tighten(pages[path], fields[path], quick[path], tiered[path])
        if len(best) == limit and not can_enter(path, tight):
            continue
        heapq.heappush(waiting, (-tight, pages[path].title.casefold(), path))
    score_waiting(-math.inf)

    # As-you-type, few titles may hold the words typed so far ("to": 17 of 100,000 pages). Then
    # pages with a name token that starts with the partial term are scored until there are
    # ``limit`` hits, those whose title starts with the text typed first: the bar then stands
    # before the body postings are walked, where a common word such as "to" is in every page.
    typed = query.tokens
    starting = {path for path in prefixed if _starts_typed(fields[path], typed)}  # can earn prefix-phrase
    if len(best) < limit and prefixed:
        for path in (*sorted(starting), *sorted(prefixed - starting)):
            if len(best) == limit:
                break
            score(path)

    # Every other candidate: a coarse bound from the terms it holds (and the prefix channels),
    # then, while that reaches the bar, a tight one. Those with a query word in a tag, heading
    # or path (``meta``) can earn those channels too: per term at most tag-term, heading-term
    # and path-term, and the phrase channels only when they hold every term there.
    later = POINTS["link-prior"] + (POINTS["context-edge"] if query.context else 0)
    prefix_max = POINTS["prefix-phrase"] + POINTS["prefix-term"]
    postings = vault.postings
    floor = best[0][0] if len(best) == limit else -math.inf
    # prefix-phrase only where the title or an alias starts with the text typed
    bound: dict[str, float] = dict.fromkeys(prefixed, POINTS["prefix-term"])
    bound.update(dict.fromkeys(starting, prefix_max))
    base = prefix_max if prefix_cut else 0
    meta: set[str] = set()
    in_all_meta: set[str] | None = None  # pages with every term (or a stand-in) in their meta tokens
    # per term: tag-term (or a stand-in's tag points) where a tag holds it or a stand-in,
    # heading-term where a heading holds it, path-term where the path does
    for tagged, stand_for, term_plan in zip(bounds.tagged, bounds.stand_fors, plan.terms):
        tagged = (tagged & found_in) - strong
        if not tagged:
            in_all_meta = tagged
            continue
        channels = (
            (bounds._holders(vault.tag_postings, stand_for), POINTS["tag-term"]),
            (vault.heading_postings.get(term_plan.term, ()), POINTS["heading-term"]),
            (vault.path_postings.get(term_plan.term, ()), PATH_LEAF),
        )
        for holders, points in channels:
            for path in holders:
                if path in tagged:
                    bound[path] = bound.get(path, base) + points
        meta |= tagged
        in_all_meta = tagged if in_all_meta is None else in_all_meta & tagged
    phrase_max = max(exact_points(query), POINTS["leaf-exact"]) + HEADING_EXACT
    for path in in_all_meta or ():
        bound[path] = bound.get(path, base) + phrase_max
    # Body points, per term at most its tier of 3 or more occurrences. Terms whose maxima,
    # smallest first, cannot lift a page holding only them to the bar are not enumerated ("the"
    # is in every page): only looked up in the pages the other terms, prefixes and meta tokens
    # bring in.
    # A page holding the term itself gets the most its body count can earn (``_Bounds.tiers``);
    # one holding only a stand-in (synonym, variant, typo) at most the stand-in points.
    body = []
    for tp, (_tp, _others, stand_in), tier in zip(plan.terms, bounds.terms, bounds.tiers):
        stand_words = (*(synonym[0] for synonym in tp.synonyms), *tp.stems, *tp.folded, *tp.fuzzy)
        body.append((tier[3], tp.term, stand_words, tier, stand_in))  # at most: 3 or more occurrences
    body.sort(key=itemgetter(0))
    reach = base + later
    minor = 0
    while minor < len(body) and reach + body[minor][0] < floor:
        reach += body[minor][0]
        minor += 1
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
        minors = sorted(body[:minor], key=itemgetter(0), reverse=True)
        rest_most = [0.0] * (len(minors) + 1)
        for k in range(len(minors) - 1, -1, -1):
            rest_most[k] = rest_most[k + 1] + minors[k][3][3]
        alive = bound
        for k, (_most, term, stand_words, tier, stand_in) in enumerate(minors):
            short = floor - later - rest_most[k]
            alive = {path: b for path, b in alive.items() if b >= short}
            if not alive:
                break
            holders = postings.get(term, ())
            if len(holders) < 4 * len(alive):
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
                    counts = fields[path].body_counts
                    tokens = counts.tokens
                    i = bisect_left(tokens, term)
                    if i < len(tokens) and tokens[i] == term:
                        count = counts.counts[i]
                        alive[path] = b + (tier[count] if count < 3 else tier[3])
                    elif stand_in:
                        for word in stand_words:
                            i = bisect_left(tokens, word)
                            if i < len(tokens) and tokens[i] == word:
                                alive[path] = b + stand_in
                                break
            bound.update(alive)
    # In order of the bound with link-prior and context-edge at most (``later``): a page with a
    # prefix of the partial term gets its own link-prior and is ordered by title among equals,
    # since many such pages often tie and the title decides between them (as-you-type).
    context = later - POINTS["link-prior"]
    # The others fall into a few bound values (sums of per-term maxima): grouped by value, not
    # sorted one by one; the order within a value only changes how soon the bar rises.
    # (Those with a prefix are grouped the same way, each group sorted by title only once the
    # loop below reaches it: thousands of them start with a two-letter word at 100,000 pages.)
    buckets: dict[float, list[str]] = {}
    titled: dict[float, list[str]] = {}
    for path, b in bound.items():
        if b + later < floor:
            continue
        if path in prefixed:
            prior = link_prior(vault, pages[path])
            most, group = b + context + (prior[3] if prior else 0), titled
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
    for neg, _title, path in _expand(rest, pages):
        if len(best) == limit and -neg < best[0][0]:
            break
        page, f = pages[path], fields[path]
        if len(best) == limit:
            bar = best[0][0]
            # (for a page with neither a meta token nor a prefix, ``medium`` adds little to the above)
            if (path in meta or path in prefixed or prefix_cut) and medium(page, f) < bar:
                continue
        else:
            bar = -math.inf
        if path in meta:
            most = strong_bound(page, f)
        else:
            most = other_bound(page, f, prefix_cut or path in prefixed, bar)
        if can_enter(path, most):
            score(path)
    return scored


class _Bounds:
    """Upper bounds of a page's final score for one query (link-prior and context-edge
    included), from set and dict look-ups: what ``_scored_top`` prunes with.

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
        self.exact_max = exact_points(query)
        self.context = POINTS["context-edge"] if query.context else 0
        self.terms = []  # per term: its plan, its stand-ins (None when none), what they earn in the body
        self.stand_fors: list[frozenset[str]] = []  # per term: the term and every word standing for it
        self.words: set[str] = set(query.tokens)  # every query word and every word standing for one
        for tp in plan.terms:
            stand_for = {tp.term, *tp.stems, *tp.folded, *tp.fuzzy}
            for synonym in tp.synonyms:
                stand_for.update(synonym)
            self.stand_fors.append(frozenset(stand_for))
            self.words.update(stand_for)
            stand_in = (SYNONYM_MINOR if tp.synonyms or tp.variants else 0) + (FOLDED_MINOR if tp.fuzzy else 0)
            self.terms.append((tp, frozenset(stand_for - {tp.term}) or None, stand_in))
        # per term, by body count 1, 2, 3 or more: body-term and body-bm25 at most (BM25 with the
        # smallest length norm, k1 (1 - b), that of an empty body)
        least_norm = BM25_K1 * (1.0 - BM25_B)
        self.tiers = [
            (0.0, *(
                POINTS["body-term"] * count
                + min(_BM25_MOST, math.ceil(BM25_SCALE * tp.idf * count * (BM25_K1 + 1.0) / (count + least_norm) * FIXED_STEP) / FIXED_STEP)
                for count in (1, 2)
            ), POINTS["body-term"] * BODY_CAP + min(_BM25_MOST, math.ceil(BM25_SCALE * tp.idf * (BM25_K1 + 1.0) * FIXED_STEP) / FIXED_STEP))
            for tp in plan.terms
        ]

    def named_pages(self) -> set[str]:
        """The pages with a query word (or a stand-in) in a title or alias."""
        return self._holders(self.vault.name_postings, self.words)

    def meta_pages(self) -> set[str]:
        """The pages with a query word (or a stand-in) in a tag, heading or path."""
        return set().union(*self.tagged)

    @staticmethod
    def _holders(index, words) -> set[str]:
        found: set[str] = set()
        for word in words:
            found.update(index.get(word, ()))
        return found

    @functools.cached_property
    def tagged(self) -> list[set[str]]:
        """Per term: the pages with it or a stand-in in a tag, heading or path."""
        vault = self.vault
        return [
            self._holders(vault.tag_postings, stand_for)
            | self._holders(vault.heading_postings, stand_for)
            | self._holders(vault.path_postings, stand_for)
            for stand_for in self.stand_fors
        ]

    @functools.cached_property
    def named(self) -> list[set[str]]:
        """Per term: the pages with it or a stand-in in a title, alias, tag, heading or path
        (a page outside can earn only body points and stand-ins for that term)."""
        name_postings = self.vault.name_postings
        return [self._holders(name_postings, stand_for) | tagged for stand_for, tagged in zip(self.stand_fors, self.tagged)]

    @functools.cached_property
    def prefixed(self) -> set[str]:
        """The pages with a title or alias token that starts with the partial term (see
        ``prefix_cut``)."""
        found: set[str] = set()
        if self.partial:
            for token in self._prefix_tokens:
                found.update(self.vault.name_postings.get(token, ()))
        return found

    @functools.cached_property
    def _prefix_tokens(self) -> list[str]:
        return self.vault.name_tokens_with_prefix(self.partial) if self.partial else []

    @functools.cached_property
    def prefix_cut(self) -> bool:
        """Whether more name tokens start with the partial term than ``prefixed`` went through:
        then any page may have one."""
        return len(self._prefix_tokens) >= PREFIX_TOKENS

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
        prior = link_prior(self.vault, page)
        return (prior[3] if prior else 0) + (self.context if page.path in self.near else 0)

    def _body(self, f: PageFields) -> float:
        """The body points of every term (body-term and body-bm25 as ``page_components`` gives
        them), or what a stand-in can earn there when the body lacks the term."""
        count_of = f.body_counts.count
        total = 0.0
        norm = 0.0
        for tp, _others, stand_in in self.terms:
            count = count_of(tp.term)
            if count:
                if not norm:
                    norm = _bm25_norm(f.lengths[4], self.plan.avg_body)
                total += POINTS["body-term"] * min(count, BODY_CAP) + fixed(
                    min(_BM25_MOST, BM25_SCALE * (tp.idf * count * (BM25_K1 + 1.0) / (count + norm)))
                )
            else:
                total += stand_in
        return total

    def strong(self, page: Page, f: PageFields) -> float:
        """At most the final score of any page: each channel of ``page_components`` bounded
        from the page's fields (see ``weights`` for the points)."""
        if not f.ascii_names:
            return math.inf
        total: float = self._prior_and_context(page) + self._body(f) + self._named(page.path, f)
        title_set = f.title_set
        typed, partial = self.typed, self.partial
        phrase = self._phrase(f)  # title-phrase, title-exact or leaf-exact, heading-phrase; or else prefix-phrase
        if title_set and title_set <= self.words:
            total += POINTS["title-cover"]
        if partial:
            # prefix-phrase comes only to a page that earned none of the others above
            if phrase < POINTS["prefix-phrase"] and _starts_typed(f, typed):
                phrase = POINTS["prefix-phrase"]
            total += self._prefix_term(f)
        return total + phrase

    def tighten(self, page: Page, f: PageFields, quick: float, tiered: float) -> float:
        """``strong`` from the page's ``medium`` (``quick``, whose body part was ``tiered``):
        the three parts the quick bound takes at their most (link-prior, body points by tier,
        prefix-term) replaced by the page's own. Every part is a multiple of 1/FIXED_STEP, so
        this is ``strong`` exactly, without its per-term names loop and phrase checks again."""
        if quick == math.inf:
            return quick
        path = page.path
        near = self.context if path in self.near else 0
        total = quick - POINTS["link-prior"] - near + self._prior_and_context(page) - tiered + self._body(f)
        if self.partial and (self.prefix_cut or path in self.prefixed):
            total += self._prefix_term(f) - POINTS["prefix-term"]
        return total

    def _prefix_term(self, f: PageFields) -> float:
        """prefix-term (or its alias form) as the page earns it: the partial term starts a title
        token that it is not yet, or else an alias token."""
        partial, title_set, alias_set = self.partial, f.title_set, f.alias_set
        if partial in title_set:
            return 0
        for t in title_set:
            if t.startswith(partial):
                return POINTS["prefix-term"]
        if partial not in alias_set:
            for t in alias_set:
                if t.startswith(partial):
                    return PREFIX_ALIAS
        return 0

    def _named(self, path: str, f: PageFields) -> float:
        """Per term, the title, alias, tag, heading and path channels at most (the term's or
        a stand-in's), for the terms held in one of those (``named``)."""
        total = 0.0
        for (tp, others, _stand_in), named in zip(self.terms, self.named):
            if path in named:  # else neither the term nor a stand-in in a name, tag, heading or path
                total += _name_points(tp.term, others, f)
        return total

    def _phrase(self, f: PageFields) -> float:
        """title-phrase, title-exact or leaf-exact, and heading-phrase at most (from set and
        tuple comparisons: the names are ASCII, so an exact name is one whose tokens are the
        query's)."""
        seq, typed = self.seq, self.typed
        phrase = 0
        if seq:
            if seq <= f.title_set or seq <= f.alias_set:
                phrase = POINTS["title-phrase"]
            if f.title_tokens == typed or f.file_tokens == typed or typed in f.alias_tokens:
                phrase += self.exact_max
            elif len(f.leaf_tokens) <= len(typed) and seq <= f.leaf_tokens:
                phrase += POINTS["leaf-exact"]
            if seq <= f.heading_set:
                phrase += HEADING_EXACT if typed in f.heading_tokens else POINTS["heading-phrase"]
        return phrase

    def tiered(self, f: PageFields) -> float:
        """The body points of every term at most, by its count (``tiers``; a stand-in's points
        when the body lacks the term): ``medium``'s body part."""
        count_of = f.body_counts.count
        total = 0.0
        for (tp, _others, stand_in), tier in zip(self.terms, self.tiers):
            count = count_of(tp.term)
            total += (tier[count] if count < 3 else tier[3]) if count else stand_in
        return total

    def tiered_pages(self, paths: set[str]) -> dict[str, float]:
        """At least ``tiered`` of each page in ``paths`` (``tighten`` takes back whatever part
        of it ``medium`` was given), found term by term: a term held by few pages against
        ``paths`` walks its postings by body count (``Vault.body_twice``, ``body_thrice``), a
        holder that has it in a name only getting one occurrence's points; a term three times
        or more in most bodies gives every page that tier; else each page's counts are
        bisected, exactly."""
        vault = self.vault
        fields, postings = vault.fields, vault.postings
        out = dict.fromkeys(paths, float(sum(stand_in for _tp, _others, stand_in in self.terms)))
        for (tp, _others, stand_in), tier in zip(self.terms, self.tiers):
            term = tp.term
            holders = postings.get(term, ())
            twice, thrice = vault.body_twice.get(term, ()), vault.body_thrice.get(term, ())
            if len(holders) + len(twice) + len(thrice) < 3 * len(paths):
                _add_tiers(out, holders, twice, thrice, tier, stand_in, minus=stand_in)  # in place of it
                continue
            if 4 * len(thrice) >= 3 * len(vault.pages):
                # a word three times or more in most bodies ("the"): every page gets that
                # tier, almost always its own, without a look at its counts
                up = tier[3] - stand_in
                for path in out:
                    out[path] += up
                continue
            for path in holders if len(holders) < len(paths) else paths:
                if path not in out:
                    continue
                counts = fields[path].body_counts
                tokens = counts.tokens
                i = bisect_left(tokens, term)
                if i < len(tokens) and tokens[i] == term:
                    count = counts.counts[i]
                    out[path] += (tier[count] if count < 3 else tier[3]) - stand_in
        return out

    def medium(self, page: Page, f: PageFields, tiered: float | None = None) -> float:
        """At most ``strong``, for any page, and quicker: body points by count (``tiered``,
        or given) rather than from the page's length, the most link-prior, and the phrase and
        prefix channels from set look-ups (``_phrased``, ``prefixed``) and the title's start."""
        if not f.ascii_names:
            return math.inf
        path = page.path
        total: float = POINTS["link-prior"] + (self.context if path in self.near else 0)
        total += (self.tiered(f) if tiered is None else tiered) + self._named(path, f)
        return total + self._cover_phrase_prefix(path, f)

    def _cover_phrase_prefix(self, path: str, f: PageFields) -> float:
        """``medium``'s title-cover, phrase and prefix channels at most, from set look-ups
        (``_phrased``, ``prefixed``) and the title's start."""
        total = 0.0
        title_set = f.title_set
        phrase = self._phrase(f) if path in self._phrased else 0
        if title_set and title_set <= self.words:
            total += POINTS["title-cover"]
        if self.partial and (self.prefix_cut or path in self.prefixed):
            total += POINTS["prefix-term"]
            if phrase < POINTS["prefix-phrase"] and _starts_typed(f, self.typed):
                phrase = POINTS["prefix-phrase"]
        return total + phrase

    def medium_pages(self, paths: set[str], tiered: dict[str, float]) -> dict[str, float]:
        """``medium`` of each page in ``paths``, with its ``tiered``, the names part found term
        by term: each term's name, tag, heading and path points go only to the pages that hold
        it there (``named``), where ``medium`` asks every page about every term.
        The same values (every part is a multiple of 1/FIXED_STEP, so the order of the sums
        does not matter)."""
        fields = self.vault.fields
        out = {}
        for path in paths:
            out[path] = POINTS["link-prior"] + tiered[path] if fields[path].ascii_names else math.inf
        if self.context:
            for path in self.near & out.keys():
                out[path] += self.context
        for (tp, others, _stand_in), named in zip(self.terms, self.named):
            term = tp.term
            for path in named.intersection(paths):
                out[path] += _name_points(term, others, fields[path])
        rest = self._cover_phrase_prefix
        for path in out:
            out[path] += rest(path, fields[path])
        return out

    def other(self, page: Page, f: PageFields, prefix: bool = True, floor: float = -math.inf) -> float:
        """At most the final score of a page without a query word in its names, tags, headings
        or path: its body channels, stand-ins and prefix channels (``prefix``: when a name token
        may start with the partial term). A page whose bound is below ``floor`` anyway gets
        its bound with the most link-prior, not its own (which is not looked up)."""
        if not f.ascii_names:
            return math.inf
        tight = 0.0
        partial = self.partial
        if partial and prefix:
            typed = self.typed
            if _starts_typed(f, typed):
                tight += POINTS["prefix-phrase"]
            if any(t.startswith(partial) for t in f.title_set):
                tight += POINTS["prefix-term"]
            elif any(t.startswith(partial) for t in f.alias_set):
                tight += PREFIX_ALIAS
        tight += self._body(f)
        most = tight + POINTS["link-prior"] + self.context
        if most < floor:  # below the bar even with the most link-prior: its own is not looked up
            return most
        return tight + self._prior_and_context(page)


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


def _name_points(term: str, others: frozenset[str] | None, f: PageFields) -> float:
    """The most one term (or a stand-in of it, ``others``) can earn on a page in its title,
    aliases, tags, headings and path, as ``page_components`` gives those channels."""
    title_set, alias_set, tag_names, tag_tokens = f.title_set, f.alias_set, f.tag_names, f.tag_tokens
    total = 0.0
    in_title = term in title_set
    if in_title:
        total += _TITLE_TERM
    elif others is not None and not title_set.isdisjoint(others):
        total += _STAND_INS_NAME  # synonym and typo forms: at most 4
    # alias-term only when the title lacks the term (else nothing in the aliases for it); or
    # stand-ins in an alias that lacks it: at most 4
    in_alias = term in alias_set
    if in_alias and not in_title or not in_alias and others is not None and not alias_set.isdisjoint(others):
        total += _ALIAS_TERM
    if term in tag_names or term in tag_tokens or (
        others is not None and not (tag_names.isdisjoint(others) and tag_tokens.isdisjoint(others))
    ):
        total += _TAG_TERM  # or stand-ins: at most 3
    if term in f.heading_set:
        total += _HEADING_TERM
    if not in_title and not in_alias and term in f.path_tokens:
        total += PATH_LEAF
    return total


_TITLE_TERM, _ALIAS_TERM, _TAG_TERM, _HEADING_TERM = (
    POINTS["title-term"], POINTS["alias-term"], POINTS["tag-term"], POINTS["heading-term"]
)
_STAND_INS_NAME = POINTS["synonym-term"] + POINTS["fuzzy-term"]


def _starts_typed(f: PageFields, typed: tuple[str, ...]) -> bool:
    """Whether the page's title or an alias starts with the text typed (prefix-phrase)."""
    if len(typed) == 1:  # one word typed in part, the common case: its first token starts so
        start = typed[0]
        title = f.title_tokens
        return bool(title) and title[0].startswith(start) or any(a and a[0].startswith(start) for a in f.alias_tokens)
    return _starts_with_typed(f.title_tokens, typed) or any(_starts_with_typed(a, typed) for a in f.alias_tokens)


def _bound_order(entry: tuple[float, str, Any]) -> tuple[float, str]:
    return entry[0], entry[1]


_BY_TITLE = "\uffff"  # a group of ``_expand`` to go through in title order


def _expand(entries: list[tuple[float, str, list[str]]], pages: dict[str, Page]) -> Iterator[tuple[float, str, str]]:
    """``(-bound, tag, paths)`` groups opened up in place into ``(-bound, tag, path)``, a
    group tagged ``_BY_TITLE`` in title order (sorted only when reached)."""
    for neg, tag, paths in entries:
        if tag == _BY_TITLE and len(paths) > 1:
            paths = sorted(paths, key=lambda path: (pages[path].title.casefold(), path))
        for path in paths:
            yield neg, tag, path


class _Last:
    """A (title casefolded, path) key that orders backwards: in ``_scored_top``'s min-heap the
    root is then, among equal scores, the page that sorts last."""

    __slots__ = ("key",)

    def __init__(self, key: tuple[str, str]) -> None:
        self.key = key

    def __lt__(self, other: _Last) -> bool:
        return other.key < self.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Last) and other.key == self.key


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


def matching_headings(page: Page, text: str, fields: PageFields | None = None) -> list:
    """The page's sub-headings (level 2+) that contain every token of ``text``, in page order.

    Shown under their page in workspace symbols; they never change the page ranking. With the
    page's ``fields``, a page whose headings lack one of the words is passed over at once.
    """
    from .text import tokenize

    words = set(tokenize(text))
    if not words or (fields is not None and not words <= fields.heading_set):
        return []
    return [h for h in page.headings if h.level > 1 and words <= set(tokenize(h.text))]
