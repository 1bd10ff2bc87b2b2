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
