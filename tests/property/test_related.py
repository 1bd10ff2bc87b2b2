"""``related(vault, path, limit)`` gives the first ``limit`` of its full ranking (``limit`` 0).

On a hub, pages that are only co-cited or share a link are skipped when they cannot reach the
``limit``-th best score, and the candidates' co-citations are counted one by one, best bound
first, only while they can still reach it (``engine.related``); these random vaults, where pages
link to a few shared targets, tag each other and carry typed edges, check that skipping them
never changes the hits, their order or their reasons, with the co-citations counted either way
(all at once for a page with few linkers, one candidate at a time for a hub's).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vaultkit import build_vault

from vaultlens.engine import related as related_module
from vaultlens.engine.related import related

NAMES = [f"p{i}" for i in range(12)]
TAGS = ["ai", "rag", "graph"]


@st.composite
def page_text(draw) -> str:
    head = []
    if draw(st.booleans()):
        head.append("tags: [" + ", ".join(draw(st.lists(st.sampled_from(TAGS), max_size=2))) + "]")
    if draw(st.integers(0, 3)) == 0:
        head.append("related: [" + ", ".join(f'"[[{n}]]"' for n in draw(st.lists(st.sampled_from(NAMES), max_size=2))) + "]")
    lines = ["---", *head, "---"] if head else []
    links = draw(st.lists(st.sampled_from(NAMES), max_size=8))
    lines.append(" ".join(f"[[{n}]]" for n in links))
    return "\n".join(lines) + "\n"


vaults = st.dictionaries(st.sampled_from(NAMES).map(lambda n: f"{n}.md"), page_text(), min_size=2, max_size=12)


def described(hits) -> list[tuple]:
    return [(h.page.path, h.score, h.matched) for h in hits]


@settings(max_examples=150)
@given(vaults, st.integers(1, 4), st.booleans())
def test_related_with_a_limit_is_the_top_of_the_full_ranking(files, limit, one_by_one):
    vault = build_vault(files)
    with pytest.MonkeyPatch.context() as mp:
        if one_by_one:  # as on a hub: each candidate's co-citations counted when it is reached
            mp.setattr(related_module, "_FEW_CITERS", 0)
        for path in sorted(vault.pages):
            assert described(related(vault, path, limit)) == described(related(vault, path, 0)[:limit])


@settings(max_examples=150)
@given(vaults, st.integers(0, 4))
def test_co_citations_counted_one_by_one_or_all_at_once_agree(files, limit):
    vault = build_vault(files)
    at_once = {path: described(related(vault, path, limit)) for path in sorted(vault.pages)}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(related_module, "_FEW_CITERS", 0)
        assert {path: described(related(vault, path, limit)) for path in sorted(vault.pages)} == at_once


def hub_vault(extra_citers_of_t1: int) -> dict[str, str]:
    # hub links to t1..t3; c1..c3 link to the hub and to a-x; a-x links to t1..t3 as well. So
    # a-x has no link, tag or title word in common with the hub, yet earns co-cited 3 + shared-link 3.
    files = {"hub.md": "[[t1]] [[t2]] [[t3]]\n", "a-x.md": "[[t1]] [[t2]] [[t3]]\n"}
    for i in (1, 2, 3):
        files[f"t{i}.md"] = "leaf\n"
        files[f"c{i}.md"] = "[[hub]] [[a-x]]" + (" [[t1]]" if i <= extra_citers_of_t1 else "") + "\n"
    return files


def test_a_page_only_co_cited_enters_above_and_at_the_bar_of_the_pages_linked():
    for extra, t1_score in ((1, 5), (2, 6)):  # t1: links-to 4 + co-cited by 1 or 2 of the c pages
        vault = build_vault(hub_vault(extra))
        full = related(vault, "hub.md", 0)
        assert (full[0].page.path, full[0].score) == ("a-x.md", 6)
        assert max(h.score for h in full[1:]) == t1_score == next(h.score for h in full if h.page.path == "t1.md")
        assert described(related(vault, "hub.md", 1)) == described(full[:1])
