"""related(vault, path): the pages most related to a page, each with the reasons it earned.

Reasons are explained components like search's (``Match``), from ``weights.RELATED_POINTS``:
direct links either way, typed edges, shared tags, co-citation (both linked from one page),
shared outgoing links and shared title words. Score == sum of points, as in search. Candidates
come from the page's neighbourhood (links, tags, titles); a hub shared by more than
``RELATED_FANOUT`` pages proposes none, so the cost stays bounded on large vaults. Links are
read from the vault's resolved-link index (``Vault.outlink_targets``, ``Vault.linking_pages``),
so no page is unpacked or link re-resolved here.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from itertools import chain

from .model import Hit, Match
from .text import collapse
from .vault import TYPED_EDGES, Vault
from .weights import RELATED_CAP, RELATED_CHANNEL_RANK, RELATED_FANOUT, RELATED_POINTS

_MIN_TITLE_TOKEN = 3
_FEW_CITERS = 64  # up to this many pages linking here, every co-citation is counted at once
_TYPED = frozenset(TYPED_EDGES)


def _resolved_targets(vault: Vault, path: str) -> tuple[set[str], dict[str, set[str]]]:
    """Pages ``path`` links to in its body, and typed-edge targets by target path."""
    body: set[str] = set()
    typed: dict[str, set[str]] = defaultdict(set)
    for kind, target in vault.outlink_targets(path):
        if target == path:
            continue
        if kind in TYPED_EDGES:
            typed[target].add(kind)
        else:
            body.add(target)
    return body, typed


def related(vault: Vault, path: str, limit: int = 5) -> tuple[Hit, ...]:
    """The top ``limit`` pages related to ``path`` (empty for an unknown page).

    Evidence is gathered for every candidate but scored as numbers; the explained components
    (``Match``, with the titles they name) are built for the hits returned only.
    """
    page = vault.pages.get(path)
    if page is None:
        return ()

    out_body, out_typed = _resolved_targets(vault, path)
    in_body: set[str] = set()
    in_typed: dict[str, set[str]] = defaultdict(set)
    # One pass over the pages linking here sorts them into body links and typed edges, and
    # finds those with more than RELATED_FANOUT links, which co-cite nothing (a hub has
    # thousands of linkers: no per-link work in Python).
    linkers = vault.linking_pages(path)
    linkers.discard(path)
    wide: set[str] = set()
    fanout = 2 * RELATED_FANOUT
    for source, flat in zip(linkers, vault.outlink_flats(linkers)):  # kind, target, kind, ...
        kinds = flat[::2]
        if _TYPED.isdisjoint(kinds):
            in_body.add(source)
        else:  # its links here, found by ``index`` (in C)
            ends, at = flat[1::2], -1
            for _ in range(ends.count(path)):
                at = ends.index(path, at + 1)
                if kinds[at] in TYPED_EDGES:
                    in_typed[source].add(kinds[at])
                else:
                    in_body.add(source)
        if len(flat) > fanout:
            targets = set(flat[1::2])
            targets.discard(source)
            if len(targets) > RELATED_FANOUT:
                wide.add(source)
    citing = linkers - wide  # a page co-cited with this one is linked from one of these
    typed = {other: out_typed.get(other, set()) | in_typed.get(other, set()) for other in set(out_typed) | set(in_typed)}

    tags: dict[str, list[str]] = defaultdict(list)
    for tag in page.tags:
        holders = vault.tag_pages.get(tag, ())
        if len(holders) > RELATED_FANOUT:
            continue
        for other in holders:
            if other != path:
                tags[other].append(tag)

    linked: dict[str, set[str]] = {}  # page linked from here -> the pages linking to it
    sharing = Counter()
    for target in out_body | set(out_typed):
        sources = vault.linking_pages(target)
        if len(sources) > RELATED_FANOUT:
            continue
        sources.discard(path)
        sources.discard(target)
        linked[target] = sources
        sharing.update(sources)

    words: dict[str, list[str]] = defaultdict(list)
    for token in sorted(vault.fields[path].title_set):
        if len(token) < _MIN_TITLE_TOKEN:
            continue
        holders = vault.name_postings.get(token, ())
        if len(holders) > RELATED_FANOUT:
            continue
        for other in holders:
            if other != path and token in vault.fields[other].title_set:
                words[other].append(token)

    points = RELATED_POINTS
    cap = RELATED_CAP
    cited_worth, shared_worth = points["co-cited"], points["shared-link"]

    def co_citers(other: str) -> set[str]:
        """The pages linking to both (the co-cited count's members)."""
        found = vault.linking_among(other, citing)
        found.discard(other)
        return found

    def co_cited() -> Counter:
        """Every co-citation count, from the link sets of the pages linking here."""
        counts: Counter = Counter()
        for source, flat in zip(citing, vault.outlink_flats(citing)):
            targets = set(flat[1::2])
            targets.discard(source)
            targets.discard(path)
            counts.update(targets)
        return counts

    # A few linkers: every count at once; a hub's thousands: each candidate's when reached below
    counts = co_cited() if len(citing) <= _FEW_CITERS else None
    count = counts.get if counts is not None else (lambda other: len(co_citers(other)))

    # The sum of the points matches() gives each candidate, added up without building them:
    # first for the pages with a link, edge, tag or title word in common (with the links they
    # share), then their co-citations, in order of the most they can reach, until that is below
    # the limit-th best score so far (a hub's linkers are thousands: few get that far).
    scores: dict[str, int | float] = dict.fromkeys(in_body, points["linked-from"])
    for other in out_body:
        scores[other] = scores.get(other, 0) + points["links-to"]
    for other, predicates in typed.items():
        scores[other] = scores.get(other, 0) + points["typed-edge"] * len(predicates)
    for other, shared in tags.items():
        scores[other] = scores.get(other, 0) + points["shared-tag"] * len(shared)
    for other, tokens in words.items():
        scores[other] = scores.get(other, 0) + points["title-term"] * min(len(tokens), cap)
    for other, n in sharing.items():
        if other in scores:
            scores[other] += shared_worth * min(n, cap)
    cited: dict[str, int] = {}
    by_most: dict[int | float, list[str]] = defaultdict(list)
    for other, value in scores.items():
        by_most[value].append(other)
    best: list[int | float] = []  # a min-heap of the limit best scores so far
    for value in sorted(by_most, reverse=True):
        if 0 < limit <= len(best) and value + cited_worth * cap < best[0]:
            break  # neither these nor any below can reach the first ``limit``
        for other in by_most[value]:
            n = count(other)
            if n:
                cited[other] = n
                scores[other] = value + cited_worth * min(n, cap)
            if len(best) < limit:
                heapq.heappush(best, scores[other])
            elif best and best[0] < scores[other]:
                heapq.heapreplace(best, scores[other])
    only_cited = cited_worth * cap  # the most a page only co-cited can earn
    most = only_cited + shared_worth * cap  # and one only co-cited and sharing links
    if 0 < limit <= len(best) and only_cited < best[0] <= most and counts is None:
        # of the pages neither linked nor tagged, only those sharing a link may reach the
        # first ``limit``: their co-citations, one by one
        for other, shared in sharing.items():
            value = shared_worth * min(shared, cap)
            if other not in scores and value + only_cited >= best[0]:
                n = count(other)
                if n:
                    cited[other] = n
                scores[other] = value + cited_worth * min(n, cap)
    elif not 0 < limit <= len(best) or best[0] <= most:
        # the pages only co-cited or sharing a link may reach the first ``limit``: count every
        # co-citation (and those of the candidates not reached above)
        if counts is None:
            counts = co_cited()
        primary = set(scores)
        for other, n in counts.items():
            if other not in cited:
                cited[other] = n
                scores[other] = scores.get(other, 0) + cited_worth * min(n, cap)
        for other, n in sharing.items():
            if other not in primary:
                scores[other] = scores.get(other, 0) + shared_worth * min(n, cap)

    def titles(paths: set[str]) -> str:
        return ", ".join(sorted(vault.pages[p].title for p in paths)[:cap])

    def matches(other: str) -> tuple[Match, ...]:
        found: list[Match] = []
        if other in out_body:
            found.append(Match("links-to", "", 1, points["links-to"]))
        if other in in_body:
            found.append(Match("linked-from", "", 1, points["linked-from"]))
        for predicate in sorted(typed.get(other, ())):
            found.append(Match("typed-edge", predicate, 1, points["typed-edge"]))
        for tag in tags.get(other, ()):
            found.append(Match("shared-tag", tag, 1, points["shared-tag"]))
        if cited.get(other):
            n = cited[other]
            found.append(Match("co-cited", "", n, points["co-cited"] * min(n, cap), "", titles(co_citers(other))))
        if sharing.get(other):
            n = sharing[other]
            made_of = {via for via, members in linked.items() if other in members}
            found.append(Match("shared-link", "", n, points["shared-link"] * min(n, cap), "", titles(made_of)))
        if other in words:
            tokens = words[other]
            n = len(tokens)
            found.append(Match("title-term", tokens[0], n, points["title-term"] * min(n, cap), "", " ".join(tokens)))
        return tuple(sorted(found, key=lambda m: (-m.points, RELATED_CHANNEL_RANK[m.channel], m.term, m.via)))

    order = lambda other: (-scores[other], vault.pages[other].title.casefold(), other)  # noqa: E731
    if 0 < limit < len(scores):  # only pages scoring at least the limit-th best can make it
        floor = heapq.nlargest(limit, scores.values())[-1]
        chosen = sorted((other for other, value in scores.items() if value >= floor), key=order)[:limit]
    else:
        chosen = sorted(scores, key=order)
    hits = []
    for other in chosen:
        matched = matches(other)
        hits.append(Hit(vault.pages[other], matched, sum(m.points for m in matched), ""))
    return tuple(hits)


def reasons(matched: tuple[Match, ...]) -> str:
    """The components as one sentence: "links here; shares #ai, #rag; cited together by 3 pages"."""
    parts: list[str] = []
    tags = [m.term for m in matched if m.channel == "shared-tag"]
    for m in matched:
        if m.channel == "links-to":
            parts.append("linked from here")
        elif m.channel == "linked-from":
            parts.append("links here")
        elif m.channel == "typed-edge":
            parts.append(f"{m.term.replace('_', ' ')} edge")
        elif m.channel == "co-cited":
            parts.append(f"cited together by {m.hits} page{'s' if m.hits != 1 else ''}")
        elif m.channel == "shared-link":
            parts.append(f"both link to {m.via}" + (" …" if m.hits > RELATED_CAP else ""))
        elif m.channel == "title-term":
            parts.append(f"title shares “{m.via}”")
    if tags:
        parts.insert(min(len(parts), 2), "shares " + ", ".join(f"#{t}" for t in tags))
    return collapse("; ".join(dict.fromkeys(parts)))
