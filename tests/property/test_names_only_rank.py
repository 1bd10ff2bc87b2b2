"""The as-you-type surfaces' ranking (``Query.names_only``) is the full ranking of the names.

Workspace symbols and ``[[`` completion list the pages whose names match the query, ranked by
what their names earn: the full ranking's components without those read in the body (field
``body``: body-term, body-bm25, body-pair, section-term, a stand-in in the body), so a page
earns what ``search`` gives it there, and its body never moves it. These tests compare ``rank``
and ``search`` with ``names_only`` hit for hit (path, score, every component, the snippet) with
the full ranking, every hit scored, its body components taken out, the pages whose names do not
match (or that earn nothing by them) left out and the rest ordered again, on the random vaults
of ``test_pruned_rank.py``.
What "the names match" means is written out here from the pages' fields, apart from the engine's
``scoring.name_matches``: a query term, or a word standing in for one (stem, folded form, typo
correction, a word of a synonym), is a token of the title, an alias, a heading, the path or a
tag; or a title or alias token starts with the partial term.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_pruned_rank import EXAMPLES, VOCABULARY, _thrice_vault, cases, contexts, described, flags
from vaultkit import build_vault

from vaultlens.engine.model import Hit
from vaultlens.engine.query import parse_query
from vaultlens.engine.scoring import make_plan
from vaultlens.engine.search import rank, search
from vaultlens.engine.snippet import make_snippet
from vaultlens.engine import topk
from vaultlens.engine.topk import Bounds


def matching(vault, query) -> set[str]:
    """The pages whose names match ``query`` (see the module docstring)."""
    words: set[str] = set()
    for tp in make_plan(vault, query).terms:
        words.update((tp.term, *tp.stems, *tp.folded, *tp.fuzzy))
        for synonym in tp.synonyms:
            words.update(synonym)
    partial = query.partial
    out = set()
    for path, f in vault.fields.items():
        names = {*f.title_set, *f.alias_set, *f.heading_set, *f.path_tokens, *f.tag_names, *f.tag_tokens}
        prefixed = partial is not None and any(t.startswith(partial) for t in (*f.title_set, *f.alias_set))
        if prefixed or not words.isdisjoint(names):
            out.add(path)
    return out


def by_names(full: list[Hit], keep: set[str]) -> list[Hit]:
    """The hits of ``full`` (every page scored) whose names match (``keep``), without their
    body components, in ranking order again (score, then title, then path), each with the snippet
    its matches make: a page left with nothing but link-prior or context-edge is out."""
    out = []
    for hit in full:
        matched = tuple(m for m in hit.matched if m.field != "body")
        if hit.page.path in keep and any(m.channel not in ("link-prior", "context-edge") for m in matched):
            out.append(Hit(hit.page, matched, sum(m.points for m in matched), make_snippet(hit.page, matched)))
    return sorted(out, key=lambda h: (-h.score, h.page.title.casefold(), h.page.path))


@settings(max_examples=EXAMPLES, deadline=None)
@example(  # a body-only page is left out; a page named by a heading or a folder stays
    ({"a.md": "river river river\n", "b.md": "## river\n", "river/c.md": "river\n", "d.md": "---\ntitle: river\n---\n"},
     ("river",)), 2, False, False, None,
)
@example(  # a partial term starting a title token; a page holding it in its body only is out
    ({"garden.md": "gard gard gard\n", "b.md": "gard\n", "c.md": "gardens gardens\n"}, ("gard",)), 2, True, False, None
)
@example(  # a stand-in ("run" for "runs") in a heading: the page is named, and earns nothing by it
    ({"A.md": "---\ntitle: alpha\n---\n## run\n", "b.md": "---\ntitle: alpha\ntags: [run]\n---\n"}, ("beta runs",)),
    1, True, True, None,
)
@example(  # a page whose only name match is a stand-in in a tag ("run" for "running")
    ({"a.md": "---\ntags: [run]\n---\nrun\n", "c.md": "---\ntags: [running]\n---\n",
      **{f"l{i}.md": "[[a]]\n" for i in range(17)}}, ("running",)), 1, True, False, None,
)
@given(cases, st.integers(1, 4), flags, flags, contexts)
def test_names_only_is_the_full_ranking_of_the_pages_whose_names_match(case, limit, prefix, vocabulary, context):
    files, texts = case
    if vocabulary:
        files = {**files, "_vocabulary.md": VOCABULARY}
    vault = build_vault(files)
    for text in texts:
        query = parse_query(text, prefix=prefix, limit=limit, context=context)
        named = replace(parse_query(text, prefix=prefix, limit=limit, context=context), names_only=True)
        full, _ = rank(vault, query, 0)
        kept = by_names(full, matching(vault, query))
        pruned, _ = rank(vault, named, limit)
        assert described(pruned) == described(kept[:limit]), text
        unpruned, _ = rank(vault, named, 0)
        assert described(unpruned) == described(kept), text
        # ``search`` (``[[`` completion): the same hits, with the snippets their matches make
        found = search(vault, named)
        assert [(*d, h.snippet) for d, h in zip(described(found), found)] == [
            (*d, h.snippet) for d, h in zip(described(kept[:limit]), kept[:limit])
        ], text


@pytest.mark.parametrize("seed", [4, 5])
def test_a_word_three_times_in_most_bodies_is_bounded_the_same(seed):
    vault = build_vault(_thrice_vault(seed))
    assert 4 * len(vault.body_thrice.get("the", ())) >= 3 * len(vault.pages) > 4 * len(vault.body_twice.get("the", ()))
    for text, want in (("the", {"the": topk._MostlyThrice}), ("w1 w2", {"w1": dict, "w2": dict})):
        query = parse_query(text, limit=10)
        bounds = Bounds(vault, query, make_plan(vault, query), set())
        kinds = {tp.term: type(counts) for (tp, *_), (counts, *_) in zip(bounds.terms, bounds._by_count)}
        assert kinds == want  # the shortcut is what this test meets, for "the" alone (a weak word beside others)
    rng = random.Random(seed)
    titles = sorted(page.title for page in vault.pages.values() if "the" in page.title.split())
    texts = ["the", "th", "the w", "then", *rng.sample(titles, 10), *(t[: max(2, len(t) // 2)] for t in rng.sample(titles, 10))]
    for text in texts:
        for prefix in (False, True):
            query = parse_query(text, prefix=prefix, limit=0)
            full, _ = rank(vault, query, 0)
            kept = by_names(full, matching(vault, query))
            for limit in (3, 10, 50):
                pruned, _ = rank(vault, parse_query(text, prefix=prefix, limit=limit), limit)
                assert described(pruned) == described(full[:limit]), (text, prefix, limit)
                as_typed, _ = rank(vault, replace(parse_query(text, prefix=prefix, limit=limit), names_only=True), limit)
                assert described(as_typed) == described(kept[:limit]), (text, prefix, limit, "names only")
