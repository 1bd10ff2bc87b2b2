"""related(vault, path): the pages most related to a page, each with the reasons it earned.

Reasons are explained components like search's (``Match``), from ``weights.RELATED_POINTS``:
direct links either way, typed edges, shared tags, co-citation (both linked from one page),
shared outgoing links and shared title words. Score == sum of points, as in search. Candidates
come from the page's neighbourhood (links, tags, titles); a hub shared by more than
``RELATED_FANOUT`` pages proposes none, so the cost stays bounded on large vaults.
"""

from __future__ import annotations

from collections import defaultdict

from .model import Hit, Match
from .text import collapse
from .vault import TYPED_EDGES, Vault
from .weights import RELATED_CAP, RELATED_CHANNEL_RANK, RELATED_FANOUT, RELATED_POINTS

_MIN_TITLE_TOKEN = 3


def _resolved_targets(vault: Vault, path: str) -> tuple[set[str], dict[str, set[str]]]:
    """Pages ``path`` links to in its body, and typed-edge targets by target path."""
    body: set[str] = set()
    typed: dict[str, set[str]] = defaultdict(set)
    for link, res in vault.outlinks(path):
        if res.path is None or res.path == path:
            continue
        if link.kind in TYPED_EDGES:
            typed[res.path].add(link.kind)
        else:
            body.add(res.path)
    return body, typed


def related(vault: Vault, path: str, limit: int = 5) -> tuple[Hit, ...]:
    """The top ``limit`` pages related to ``path`` (empty for an unknown page)."""
    page = vault.pages.get(path)
    if page is None:
        return ()
    found: dict[str, list[Match]] = defaultdict(list)
    titles = lambda paths: ", ".join(sorted(vault.pages[p].title for p in paths)[:RELATED_CAP])  # noqa: E731

    out_body, out_typed = _resolved_targets(vault, path)
    in_body: set[str] = set()
    in_typed: dict[str, set[str]] = defaultdict(set)
    for source, link in vault.backlinks(path):
        if source == path:
            continue
        if link.kind in TYPED_EDGES:
            in_typed[source].add(link.kind)
        else:
            in_body.add(source)

    for other in out_body:
        found[other].append(Match("links-to", "", 1, RELATED_POINTS["links-to"]))
    for other in in_body:
        found[other].append(Match("linked-from", "", 1, RELATED_POINTS["linked-from"]))
    for other in set(out_typed) | set(in_typed):
        for predicate in sorted(out_typed.get(other, set()) | in_typed.get(other, set())):
            found[other].append(Match("typed-edge", predicate, 1, RELATED_POINTS["typed-edge"]))

    for tag in page.tags:
        holders = vault.tag_pages.get(tag, ())
        if len(holders) > RELATED_FANOUT:
            continue
        for other in holders:
            if other != path:
                found[other].append(Match("shared-tag", tag, 1, RELATED_POINTS["shared-tag"]))

    cited_with: dict[str, set[str]] = defaultdict(set)
    for citer in in_body | set(in_typed):
        body, typed = _resolved_targets(vault, citer)
        targets = body | set(typed)
        if len(targets) > RELATED_FANOUT:
            continue
        for other in targets:
            if other != path:
                cited_with[other].add(citer)
    for other, citers in cited_with.items():
        n = len(citers)
        found[other].append(
            Match("co-cited", "", n, RELATED_POINTS["co-cited"] * min(n, RELATED_CAP), "", titles(citers))
        )

    shares: dict[str, set[str]] = defaultdict(set)
    for target in out_body | set(out_typed):
        sources = {s for s, _ in vault.backlinks(target)}
        if len(sources) > RELATED_FANOUT:
            continue
        for other in sources:
            if other != path and other != target:
                shares[other].add(target)
    for other, targets in shares.items():
        n = len(targets)
        found[other].append(
            Match("shared-link", "", n, RELATED_POINTS["shared-link"] * min(n, RELATED_CAP), "", titles(targets))
        )

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
    for other, tokens in words.items():
        n = len(tokens)
        found[other].append(
            Match("title-term", tokens[0], n, RELATED_POINTS["title-term"] * min(n, RELATED_CAP), "", " ".join(tokens))
        )

    hits = []
    for other, matched in found.items():
        ordered = tuple(sorted(matched, key=lambda m: (-m.points, RELATED_CHANNEL_RANK[m.channel], m.term, m.via)))
        hits.append(Hit(vault.pages[other], ordered, sum(m.points for m in ordered), ""))
    hits.sort(key=lambda h: (-h.score, h.page.title.casefold(), h.page.path))
    return tuple(hits[:limit] if limit > 0 else hits)


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
