"""Max-score pruning (``engine.topk.top_components``) never changes the first ``limit`` hits.

``rank(vault, query, limit)`` scores only the candidates that can still reach the first
``limit``; these tests compare it, hit for hit (path, score, every component), with the first
``limit`` of the ranking that scores every candidate (``limit`` 0), on random vaults whose
pages share words between titles, aliases, tags, headings, folders and bodies, with synonyms,
stems, diacritics, typos, partial terms and ``--context``. And the bounds it prunes with are
checked directly: never below any page's final score.
"""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from hypothesis import example, given, settings
from hypothesis import strategies as st
from vaultkit import build_vault

from vaultlens.engine.query import context_page, parse_query
from vaultlens.engine.scoring import candidates, link_prior, make_plan, page_components, starts_with_typed
from vaultlens.engine.search import matching_headings, near_pages, rank
from vaultlens.engine.topk import Bounds, starts_typed
from vaultlens.engine.weights import POINTS

WORDS = ["alpha", "beta", "gamma", "kiwi", "graph", "rag", "run", "runs", "running", "car", "cafe", "café",
         "automobile", "notes", "river", "stone", "garden", "gardens"]
PATHS = ["A.md", "b.md", "kiwi.md", "graph-rag.md", "notes/river.md", "notes/sub/car.md", "deep/café.md",
         "garden/stone.md", "c.d.gamma.md", "x.md", "y.md", "z.md"]
VOCABULARY = "---\ngroups:\n  - canonical: automobile\n    variants: [car, auto]\n  - {canonical: kiwi, variants: [graph rag]}\n---\n"

words = st.sampled_from(WORDS)
phrase = st.lists(words, min_size=1, max_size=3).map(" ".join)


@st.composite
def page_text(draw) -> str:
    head = []
    if draw(st.booleans()):
        head.append("title: " + draw(phrase))
    if draw(st.booleans()):
        head.append("aliases: [" + ", ".join(draw(st.lists(phrase, max_size=2))) + "]")
    if draw(st.booleans()):
        head.append("tags: [" + ", ".join(draw(st.lists(words, max_size=2))) + "]")
    lines = ["---", *head, "---"] if head else []
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.integers(0, 3)) == 0:
            lines.append("## " + draw(phrase))
        lines.append(" ".join(draw(st.lists(st.one_of(words, st.sampled_from(["[[A]]", "[[kiwi]]", "[[b]]"])), max_size=12))))
    return "\n".join(lines) + "\n"


vaults = st.dictionaries(st.sampled_from(PATHS), page_text(), min_size=2, max_size=12)
queries = st.lists(st.sampled_from([*WORDS, "graph rag", "auto", "gard", "kiw", "ca", "rivr", "automobil"]),
                   min_size=1, max_size=3).map(" ".join)


def described(hits) -> list[tuple]:
    return [(h.page.path, h.score, h.matched) for h in hits]


@settings(max_examples=150)
@example(  # pages that match by a tag alone
    {"a.md": "---\ntitle: zz\ntags: [alpha]\n---\n", "b.md": "---\ntags: [alpha]\n---\n"}, "alpha", 1, False, False, None
)
@example(  # a page that matches by a heading: more than its body alone earns
    {"a.md": "river stone river stone river stone\n", "b.md": "## river stone\n"}, "river stone", 1, False, False, None
)
@example(  # a page whose file name is the query, under a title without it, beats a titled page
    {"alpha.md": "---\ntitle: zz\n---\n", "b.md": "---\ntitle: alpha beta\n---\nalpha alpha alpha\n"}, "alpha", 1,
    False, False, None,
)
@example(  # few titles hold the partial term: a page with a prefix of it is scored first, and once
    {"garden.md": "gard gard gard\n", "b.md": "gard\n", "c.md": "gard gard\n"}, "gard", 2, True, False, None
)
@example(  # a body holding each word twice beats a tagged page: its bound counts two occurrences of each
    {"x.md": "river river stone stone gamma gamma beta beta\n", "y.md": "---\ntags: [gamma]\n---\nriver river river stone\n",
     "z.md": "alpha\n"}, "river stone gamma beta", 1, False, False, None,
)
@given(vaults, queries, st.integers(1, 4), st.booleans(), st.booleans(), st.sampled_from([None, "A", "kiwi"]))
def test_pruned_ranking_equals_the_top_of_the_full_ranking(files, text, limit, prefix, vocabulary, context):
    if vocabulary:
        files = {**files, "_vocabulary.md": VOCABULARY}
    vault = build_vault(files)
    query = parse_query(text, prefix=prefix, limit=limit, context=context)
    pruned, _ = rank(vault, query, limit)
    full, _ = rank(vault, query, 0)
    assert described(pruned) == described(full[:limit])
    unexplained, _ = rank(vault, query, limit, explain=False)  # workspace symbols: the same order, no reasons
    assert [(h.page.path, h.score, h.matched) for h in unexplained] == [(h.page.path, h.score, ()) for h in pruned]


@settings(max_examples=150)
@example({"kiwi.md": "---\ntitle: alpha\n---\nriver\n", "b.md": "kiwi\n"}, "kiwi", False, False, None)  # file name
@given(vaults, queries, st.booleans(), st.booleans(), st.sampled_from([None, "A", "kiwi"]))
def test_the_bounds_are_never_below_a_final_score(files, text, prefix, vocabulary, context):
    # Each channel's bound must hold on its own: a loose bound elsewhere must not hide a wrong one,
    # so this compares the bound with the score of every candidate, not just the hits that change.
    if vocabulary:
        files = {**files, "_vocabulary.md": VOCABULARY}
    vault = build_vault(files)
    query = parse_query(text, prefix=prefix, limit=5, context=context)
    plan = make_plan(vault, query)
    found = context_page(vault, query)
    near = near_pages(vault, found) if found is not None else set()
    bounds = Bounds(vault, query, plan, near)
    strong = bounds.named_pages() | bounds.meta_pages()
    cands = candidates(vault, query, plan)
    tiered = bounds.tiered_pages(set(cands))  # term by term: at least what page by page gives
    assert all(tiered[path] >= bounds.tiered(vault.fields[path]) for path in cands)
    # the quick bound of many pages at once is each page's own
    assert bounds.medium_pages(set(cands), tiered) == {
        path: bounds.medium(vault.pages[path], vault.fields[path], tiered[path]) for path in cands
    }
    # exactly that for a page holding every term it has in its body only, or in none of them
    for path in cands:
        f = vault.fields[path]
        names = f.title_set | f.alias_set | f.tag_names | f.tag_tokens | set(f.file_tokens)
        if all(tp.term not in names or tp.term in f.body_counts for tp in plan.terms):
            assert tiered[path] == bounds.tiered(f), path
    for path in sorted(cands):
        page, fields = vault.pages[path], vault.fields[path]
        components = page_components(page, fields, query, vault, plan)
        if not components:
            continue
        prior = link_prior(vault, page)
        final = sum(c[3] for c in components) + (prior[3] if prior else 0)
        final += POINTS["context-edge"] if path in near else 0
        assert bounds.strong(page, fields) >= final, (path, components)
        assert bounds.medium(page, fields) >= final, (path, components)
        quick = bounds.medium(page, fields, tiered[path])
        assert bounds.tighten(page, fields, quick, tiered[path]) == bounds.strong(page, fields)  # the same bound
        # the body tiers on their own (other channels' slack would hide a low one above)
        for term_plan, tier in zip(plan.terms, bounds.tiers):
            body = sum(c[3] for c in components if c[0] in ("body-term", "body-bm25") and c[1] == term_plan.term)
            count = fields.body_counts.get(term_plan.term, 0)
            assert body <= (tier[min(count, 3)] if count else 0), (path, term_plan.term, count, components)
        if path not in strong:
            assert bounds.other(page, fields) >= final, (path, components)


@settings(max_examples=100)
@given(vaults, queries)
def test_matching_headings_with_fields_are_the_same_headings(files, text):
    vault = build_vault(files)
    for path, page in vault.pages.items():
        assert matching_headings(page, text, vault.fields[path]) == matching_headings(page, text)


name_tokens = st.lists(st.sampled_from(["a", "ab", "abc", "b", "ba"]), max_size=3).map(tuple)


@given(name_tokens, st.lists(name_tokens, max_size=2), st.lists(st.sampled_from(["a", "ab", "b", "abc"]), min_size=1, max_size=3))
def test_the_title_start_check_is_the_prefix_phrase_condition(title, aliases, typed):
    fields = SimpleNamespace(title_tokens=title, alias_tokens=tuple(aliases))
    want = starts_with_typed(title, tuple(typed)) or any(starts_with_typed(a, tuple(typed)) for a in aliases)
    assert starts_typed(fields, tuple(typed)) == want


def _zipf_vault(seed: int, n_pages: int = 400) -> dict[str, str]:
    """A vault with the shape that makes pruning work hard: a few words in nearly every body
    and many titles ("the"), the rest Zipf-distributed, bodies holding words 1-5 times, and the
    same words in headings, tags and folder names."""
    rng = random.Random(seed)
    vocab = ["the", "of", "and", *(f"w{i}" for i in range(120))]
    weights = [1.0 / (rank + 1) for rank in range(len(vocab))]
    files = {}
    for i in range(n_pages):
        title = " ".join(rng.choices(vocab, weights, k=rng.randint(1, 4)))
        lines = [f"---\ntitle: {title}\n---"]
        for _ in range(rng.randint(0, 3)):
            if rng.random() < 0.5:
                lines.append("## " + " ".join(rng.choices(vocab, weights, k=rng.randint(1, 3))))
            lines.append(" ".join(rng.choices(vocab, weights, k=rng.randint(5, 60))))
        tags = " ".join(f"#{w}" for w in rng.choices(vocab[3:], weights[3:], k=rng.randint(0, 2)))
        links = " ".join(f"[[p{rng.randrange(n_pages)}]]" for _ in range(rng.randint(0, 3)))
        lines.append(f"{tags} {links}")
        folder = rng.choice(["", "", "w1/", "w7/", "notes/w30/"])
        files[f"{folder}p{i}.md"] = "\n".join(lines) + "\n"
    return files


@pytest.mark.parametrize("seed", [1, 2])
def test_pruned_ranking_equals_the_full_ranking_on_a_larger_vault(seed):
    # Hundreds of candidates per query, so the bar stands before the body postings are walked and
    # the terms too small to enumerate are looked up in the bound's pages (the MaxScore part of
    # ``top_components``), which the small random vaults above seldom reach.
    vault = build_vault(_zipf_vault(seed))
    rng = random.Random(seed)
    titles = sorted(page.title for page in vault.pages.values())
    texts = rng.sample(titles, 40) + [t[: max(2, len(t) // 2)] for t in rng.sample(titles, 20)]
    for text in texts:
        for prefix in (False, True):
            full, _ = rank(vault, parse_query(text, prefix=prefix, limit=0), 0)
            for limit in (3, 10, 50):
                pruned, _ = rank(vault, parse_query(text, prefix=prefix, limit=limit), limit)
                assert described(pruned) == described(full[:limit]), (text, prefix, limit)
