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
    # co-cited and shared-link: counted in C over the neighbours' link sets; which pages make
    # up a count is worked out again only for the hits returned (``evidence``). One pass over
    # the pages linking here sorts them into body links and typed edges and counts what else
    # they link to (a hub has thousands of them: no per-link work in Python).
    citers: dict[str, set[str]] = {}  # page linking here -> the pages it links to
    linkers = list(vault.linking_pages(path) - {path})
    for source, flat in zip(linkers, vault.outlink_flats(linkers)):  # kind, target, kind, ...
        kinds = flat[::2]
        if _TYPED.isdisjoint(kinds):
            in_body.add(source)
        else:
            for kind, target in zip(kinds, flat[1::2]):
                if target == path:
                    if kind in TYPED_EDGES:
                        in_typed[source].add(kind)
                    else:
                        in_body.add(source)
        targets = set(flat[1::2])
        targets.discard(source)
        if len(targets) > RELATED_FANOUT:
            continue
        targets.discard(path)
        citers[source] = targets
    cited = Counter(chain.from_iterable(citers.values()))
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

    def evidence(chosen: list[str]) -> dict[tuple[str, str], set[str]]:
        """Which pages make up the co-cited and shared-link counts of the hits returned (one
        pass over the neighbours' link sets, not one a hit)."""
        found: dict[tuple[str, str], set[str]] = defaultdict(set)
        wanted = set(chosen)
        for channel, sets in (("co-cited", citers), ("shared-link", linked)):
            for via, members in sets.items():
                for other in wanted.intersection(members):
                    found[channel, other].add(via)
        return found

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
    # The sum of the points matches() gives each candidate, added up without building them:
    # first for the pages with a link, edge, tag or title word in common, then for those only
    # co-cited or sharing a link, unless these can reach no more than the limit-th best score
    # so far (on a hub page they are thousands, and the pages linking here outscore them).
    scores: dict[str, int | float] = defaultdict(int)
    for other in out_body:
        scores[other] += points["links-to"]
    for other in in_body:
        scores[other] += points["linked-from"]
    for other, predicates in typed.items():
        scores[other] += points["typed-edge"] * len(predicates)
    for other, shared in tags.items():
        scores[other] += points["shared-tag"] * len(shared)
    worth = points["title-term"]
    for other, tokens in words.items():
        scores[other] += worth * min(len(tokens), RELATED_CAP)
    counted = (("co-cited", cited), ("shared-link", sharing))
    for channel, counts in counted:
        worth = points[channel]
        for other in scores:
            n = counts.get(other)
            if n:
                scores[other] += worth * min(n, RELATED_CAP)
    most = sum(points[channel] * RELATED_CAP for channel, _counts in counted)
    if not 0 < limit <= len(scores) or heapq.nlargest(limit, scores.values())[-1] <= most:
        primary = set(scores)
        for channel, counts in counted:
            worth = points[channel]
            for other, n in counts.items():
                if other not in primary:
                    scores[other] += worth * min(n, RELATED_CAP)

    def titles(paths: set[str]) -> str:
        return ", ".join(sorted(vault.pages[p].title for p in paths)[:RELATED_CAP])

    def matches(other: str, made_of: dict[tuple[str, str], set[str]]) -> tuple[Match, ...]:
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
            found.append(Match("co-cited", "", n, points["co-cited"] * min(n, RELATED_CAP), "", titles(made_of["co-cited", other])))
        if sharing.get(other):
            n = sharing[other]
            found.append(Match("shared-link", "", n, points["shared-link"] * min(n, RELATED_CAP), "", titles(made_of["shared-link", other])))
        if other in words:
            tokens = words[other]
            n = len(tokens)
            found.append(
                Match("title-term", tokens[0], n, points["title-term"] * min(n, RELATED_CAP), "", " ".join(tokens))
            )
        return tuple(sorted(found, key=lambda m: (-m.points, RELATED_CHANNEL_RANK[m.channel], m.term, m.via)))

    order = lambda other: (-scores[other], vault.pages[other].title.casefold(), other)  # noqa: E731
    if 0 < limit < len(scores):  # only pages scoring at least the limit-th best can make it
        floor = heapq.nlargest(limit, scores.values())[-1]
        chosen = sorted((other for other, value in scores.items() if value >= floor), key=order)[:limit]
    else:
        chosen = sorted(scores, key=order)
    hits = []
    made_of = evidence(chosen)
    for other in chosen:
        matched = matches(other, made_of)
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
