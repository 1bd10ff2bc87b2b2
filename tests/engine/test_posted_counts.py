"""The shortcuts query scoring takes give what the plain definitions give.

- ``scoring.PostedCounts`` (a scored page's counts of the query's words read from the postings
  where those tell them exactly) equals the page's own body counts for every word asked;
- ``topk.Bounds._body`` with a page's path (and no counts: read only when needed) equals it
  without;
- ``snippet.make_snippet`` on a body whose only line breaks are ``\\n`` (the line chosen cut out
  alone) equals the line-list way, which a body with other breaks still takes.
"""

from __future__ import annotations

import random

import pytest
from vaultkit import build_vault

from vaultlens.engine import snippet
from vaultlens.engine.model import Match
from vaultlens.engine.query import parse_query
from vaultlens.engine.scoring import PostedCounts, make_plan
from vaultlens.engine.topk import Bounds

WORDS = ["alpha", "beta", "gamma", "run", "runs", "running", "ran", "cafe", "café", "graph", "notes", "the", "kiwi"]
VOCABULARY = "---\ngroups:\n  - {canonical: kiwi, variants: [graph notes]}\n---\n"


def _vault(seed: int):
    rng = random.Random(seed)
    files = {"_vocabulary.md": VOCABULARY}
    for i in range(60):
        title = " ".join(rng.choices(WORDS, k=rng.randint(1, 3)))
        tags = ", ".join(rng.choices(WORDS, k=rng.randint(0, 2)))
        body = []
        for _ in range(rng.randint(0, 4)):
            if rng.random() < 0.4:
                body.append("## " + " ".join(rng.choices(WORDS, k=2)))
            body.append(" ".join(rng.choices(WORDS, k=rng.randint(0, 12))))
        folder = rng.choice(["", "alpha/", "notes/"])
        files[f"{folder}{rng.choice(WORDS)}-{i}.md"] = f"---\ntitle: {title}\ntags: [{tags}]\n---\n" + "\n".join(body) + "\n"
    return build_vault(files)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_posted_counts_are_the_body_counts(seed):
    vault = _vault(seed)
    rng = random.Random(seed)
    for _ in range(25):
        text = " ".join(rng.choices(WORDS, k=rng.randint(1, 4)))
        query = parse_query(text, prefix=rng.random() < 0.5, limit=5)
        plan = make_plan(vault, query)
        bounds = Bounds(vault, query, plan, set())
        assert bounds._by_count is not None  # (made: ``posted`` then answers from the postings)
        asked = {*query.tokens, *WORDS, "zz"}
        for tp in plan.terms:
            asked.update(tp.stems, tp.folded, tp.fuzzy, tp.synonym_heads)
        for path, page in vault.pages.items():
            fields = vault.fields[path]
            posted = bounds.posted(page, fields)
            assert type(posted) is PostedCounts
            for word in sorted(asked):
                assert posted.count(word) == fields.body_counts.count(word), (path, word)
                assert (word in posted) == (word in fields.body_counts), (path, word)
            assert bounds._body(None, fields, path, page) == bounds._body(fields.body_counts, fields), (text, path)


@pytest.mark.timeout(60)
def test_snippets_of_lf_bodies_are_the_line_list_snippets(monkeypatch):
    rng = random.Random(4)
    seps = [" ", "\n", "\n\n", ", ", "-"]
    for _ in range(400):
        body = "".join(rng.choice(WORDS) + rng.choice(seps) for _ in range(rng.randint(0, 30)))
        words = rng.sample(WORDS, rng.randint(1, 3))
        matched = tuple(Match("body-term", w, 1, 1, "body", "") for w in words)
        page = build_vault({"p.md": body}).pages["p.md"]
        fast = snippet.make_snippet(page, matched)
        monkeypatch.setattr(snippet, "_OTHER_BREAKS", snippet.re.compile("[\\s\\S]"))  # every body: the old way
        slow = snippet.make_snippet(page, matched)
        monkeypatch.undo()
        assert fast == slow, (body, words)


def _fresh_counts(vault, term: str) -> dict[str, int]:
    """``counts_by_page`` by its definition, from the postings as they are now."""
    counts = dict.fromkeys(vault.postings.get(term, ()), 1)
    counts.update(dict.fromkeys(vault.body_twice.get(term, ()), 2))
    counts.update(dict.fromkeys(vault.body_thrice.get(term, ()), 3))
    return counts


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kept_counts_by_page_follow_every_edit(monkeypatch, seed):
    # As-you-type asks for the same large terms keystroke after keystroke: their answers are
    # kept (``SearchIndex.counts_by_page``) and must be forgotten when an edit moves a page's count
    # of the term across 0, 1, 2 and 3, whatever else it changes; kept otherwise.
    from vaultlens.engine import postings
    from vaultlens.engine.page import parse_page

    monkeypatch.setattr(postings, "COUNTS_KEPT_MIN", 1)
    monkeypatch.setattr(postings, "COUNTS_KEPT", 3)
    rng = random.Random(seed)
    vault = _vault(seed)
    index = vault.search_index
    paths = sorted(p for p in vault.pages if not p.startswith("_"))
    for step in range(120):
        term = rng.choice(WORDS)
        assert vault.counts_by_page(term) == _fresh_counts(vault, term), (step, term)
        path = rng.choice(paths)
        words = rng.choices(WORDS, k=rng.randint(0, 3))
        body = " ".join(rng.choices([term, *words], k=rng.randint(0, 6)))
        title = rng.choice(["", f"title: {rng.choice(WORDS)}\n"])
        vault.upsert(parse_page(path, f"---\n{title}---\n{body}\n"))
        for kept in list(index._counts):  # every kept answer is what the postings now say
            assert index._counts[kept] == _fresh_counts(vault, kept), (step, kept)
    assert len(index._counts) <= 3


def test_counts_by_page_keeps_only_large_answers():
    from vaultlens.engine import postings

    vault = _vault(4)
    vault.counts_by_page("kiwi")
    assert vault.search_index._counts == {}  # 60 pages: every answer is quick to make again
    assert postings.COUNTS_KEPT_MIN > 60
