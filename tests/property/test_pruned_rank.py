"""Max-score pruning (``engine.topk.top_components``) never changes the first ``limit`` hits.

``rank(vault, query, limit)`` scores only the candidates that can still reach the first
``limit``; these tests compare it, hit for hit (path, score, every component), with the first
``limit`` of the ranking that scores every candidate (``limit`` 0), on random vaults whose
pages share words between titles, aliases, tags, headings, folders and bodies, with synonyms,
stems, diacritics, typos, partial terms and ``--context``. And the bounds it prunes with are
checked directly: never below any page's final score.

Every component seen is checked against its channel's declaration (``weights.BOUNDS``: at most
its declared points, as often as declared, never with what it is declared never to come with),
and each test fails unless every channel the top-k search meets fired, at each of its declared
maxima, somewhere in its examples: a channel added to the table must fire here too.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from types import SimpleNamespace

import pytest

from hypothesis import example, given, settings
from hypothesis import strategies as st
from vaultkit import build_vault, write_vault

from vaultlens.engine.page import parse_page
from vaultlens.engine.query import context_page, parse_query
from vaultlens.engine.scan import load_vault
from vaultlens.engine.scoring import TextCounts, candidates, counts_of, link_prior, make_plan, page_components, starts_with_typed
from vaultlens.engine.search import matching_headings, near_pages, rank
from vaultlens.engine.text import fold, tokenize
from vaultlens.engine import topk
from vaultlens.engine.topk import Bounds, starts_typed
from vaultlens.engine.weights import BOUNDS, CHANNELS, FIELD, ONCE, POINTS, TERM, Bound

WORDS = ["alpha", "beta", "gamma", "kiwi", "graph", "rag", "run", "runs", "running", "car", "cafe", "café",
         "automobile", "notes", "river", "stone", "garden", "gardens"]
PATHS = ["A.md", "b.md", "kiwi.md", "graph-rag.md", "notes/river.md", "notes/sub/car.md", "deep/café.md",
         "garden/stone.md", "c.d.gamma.md", "notes.stone.md", "kiwi.river.md", "x.md", "y.md", "z.md"]
VOCABULARY = "---\ngroups:\n  - canonical: automobile\n    variants: [car, auto]\n  - {canonical: kiwi, variants: [graph rag]}\n---\n"

words = st.sampled_from(WORDS)
phrase = st.lists(words, min_size=1, max_size=3).map(" ".join)
flags = st.sampled_from([True, False])  # True more often than st.booleans() gives: more channels fire


@st.composite
def page_text(draw) -> str:
    head = []
    if draw(flags):
        head.append("title: " + draw(phrase))
    if draw(flags):
        head.append("aliases: [" + ", ".join(draw(st.lists(phrase, max_size=2))) + "]")
    if draw(flags):
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
# a word for another: a synonym (with the vocabulary), a stem or a form with(out) diacritics
OTHER_WORD = {"car": "automobile", "auto": "car", "automobile": "auto", "kiwi": "graph rag", "rag": "kiwi",
              "café": "cafe", "cafe": "café", "runs": "run", "running": "runs", "run": "running", "gardens": "garden",
              "garden": "gardens"}


def _names(page) -> list[str]:
    """What a query may be made of: the page's names, headings, tags and path."""
    return [page.title, page.path[:-3], *page.aliases, *(h.text for h in page.headings), *page.tags]


@st.composite
def queries_for(draw, files: dict[str, str]) -> list[str]:
    """Queries for ``files``: random words, and words from one page's title, alias, heading, tag
    or file name: as they are, with the last one typed in part (as-you-type: prefix-term,
    prefix-phrase), with two letters of one swapped (a typo: fuzzy-term) and with one in place of
    a word for it (synonym-term, stem-term, folded-term), without diacritics (folded-term),
    sometimes with one more word; and the
    last dotted segment of a file name (leaf-exact)."""
    texts = [draw(queries)]
    names = sorted({name for path, text in files.items() for name in _names(parse_page(path, text))})
    tokens = tokenize(draw(st.sampled_from(names))) if names else []
    if tokens:
        i = draw(st.integers(0, len(tokens) - 1))
        word = tokens[i]
        typed = [*tokens[:i], word[: draw(st.integers(1, len(word)))]]
        typo = list(tokens)
        if len(word) >= 5:  # the first letter kept: a short word is corrected only so
            j = draw(st.integers(1, len(word) - 2))
            typo[i] = word[:j] + word[j + 1] + word[j] + word[j + 2 :]
        other = [*tokens[:i], OTHER_WORD.get(word, word), *tokens[i + 1 :]]
        folded = [fold(t) for t in tokens]  # without diacritics (an ASCII query: the top-k search's)
        more = [draw(words)] if draw(st.integers(0, 3)) == 0 else []
        texts += [" ".join(t + more) for t in (tokens, typed, typo, other, folded)]
    leaves = sorted(path[:-3].rsplit(".", 1)[-1] for path in files if path.count(".") > 1)
    if leaves:  # a Dendron note's own name (leaf-exact)
        texts.append(draw(st.sampled_from(leaves)))
    return list(dict.fromkeys(texts))


cases = vaults.flatmap(lambda files: st.tuples(st.just(files), queries_for(files)))  # (files, query texts)
contexts = st.sampled_from([None, "A", "kiwi"])


def described(hits) -> list[tuple]:
    return [(h.page.path, h.score, h.matched) for h in hits]


# --- the declarations (weights.BOUNDS) hold for what scoring gives, and every channel fires --------

# examples per property (more under HYPOTHESIS_PROFILE=thorough): enough for every channel to fire
EXAMPLES = max(150, settings.default.max_examples)
PRUNED = tuple(c for c in CHANNELS if BOUNDS[c].pruned)  # the channels the top-k search meets
FORMULA = ("title-exact", "body-bm25", "link-prior")  # points by formula: at most the declared, not each value


def declared_values(channel: str) -> set[float]:
    """What one firing of a channel earns at most, in each field it reads (and its own points
    times the cap): each is reached somewhere in the random vaults below."""
    bound, points = BOUNDS[channel], POINTS[channel]
    return {bound.top(points, f) for f in bound.fields} | {points * bound.cap}


class Channels:
    """The components seen across examples, each checked against its channel's declaration."""

    def __init__(self) -> None:
        self.points: dict[str, set[float]] = defaultdict(set)

    def add(self, components, n_terms: int) -> None:
        """One page's components (Matches or component tuples) for a query of ``n_terms`` terms."""
        components = [tuple(c) if isinstance(c, tuple) else (c.channel, c.term, c.hits, c.points, c.field, c.via)
                      for c in components]
        fired: Counter = Counter()
        stand_ins: Counter = Counter()
        for channel, term, _hits, points, field, _via in components:
            bound = BOUNDS[channel]
            assert bound.pruned, channel
            if bound.base:
                assert points == bound.base + bound.top(POINTS[channel]) * n_terms, (channel, points)
            else:
                assert points <= bound.top(POINTS[channel], field or None), (channel, field, points)
            key = (channel,) if bound.per == ONCE else (channel, term) if bound.per == TERM else (channel, term, field)
            fired[key] += 1
            if bound.stand_in and bound.per == FIELD:
                stand_ins[term, field] += 1
            self.points[channel].add(points)
        assert max(fired.values(), default=1) == 1, fired  # once, per term, per term and field as declared
        assert max(stand_ins.values(), default=1) == 1, stand_ins  # one FIELD stand-in per term and field
        for channel, term, *_ in components:
            for other in BOUNDS[channel].without:
                if BOUNDS[channel].per == ONCE:
                    assert not any(c[0] == other for c in components), (channel, other)
                else:
                    assert not any(c[0] == other and c[1] == term for c in components), (channel, other, term)

    def missing(self) -> list:
        """The channels never seen, and the declared values never reached."""
        gone = [c for c in PRUNED if c not in self.points]
        return gone + [
            (c, v) for c in PRUNED if c not in FORMULA and c in self.points
            for v in sorted(declared_values(c)) if v not in self.points[c]
        ]


def test_pruned_ranking_equals_the_top_of_the_full_ranking():
    seen = Channels()
    _pruned_equals_full(seen)
    assert not seen.missing(), "never seen in the random vaults: " + repr(seen.missing())


@settings(max_examples=EXAMPLES)
@example(  # pages that match by a tag alone
    ({"a.md": "---\ntitle: zz\ntags: [alpha]\n---\n", "b.md": "---\ntags: [alpha]\n---\n"}, ("alpha",)), 1, False, False, None
)
@example(  # a page that matches by a heading: more than its body alone earns
    ({"a.md": "river stone river stone river stone\n", "b.md": "## river stone\n"}, ("river stone",)), 1, False, False, None
)
@example(  # a page whose file name is the query, under a title without it, beats a titled page
    ({"alpha.md": "---\ntitle: zz\n---\n", "b.md": "---\ntitle: alpha beta\n---\nalpha alpha alpha\n"}, ("alpha",)), 1,
    False, False, None,
)
@example(  # few titles hold the partial term: a page with a prefix of it is scored first, and once
    ({"garden.md": "gard gard gard\n", "b.md": "gard\n", "c.md": "gard gard\n"}, ("gard",)), 2, True, False, None
)
@example(  # a body holding each word twice beats a tagged page: its bound counts two occurrences of each
    ({"x.md": "river river stone stone gamma gamma beta beta\n", "y.md": "---\ntags: [gamma]\n---\nriver river river stone\n",
      "z.md": "alpha\n"}, ("river stone gamma beta",)), 1, False, False, None,
)
@example(  # a tag holding a stand-in only ("run" for "running") earns its points, not tag-term's, and must be bounded
    ({"a.md": "---\ntags: [run]\n---\nrun\n", "c.md": "---\ntags: [running]\n---\n",
      **{f"l{i}.md": "[[a]]\n" for i in range(17)}}, ("running",)), 1, False, False, None,
)
@given(cases, st.integers(1, 4), flags, flags, contexts)
def _pruned_equals_full(seen, case, limit, prefix, vocabulary, context):
    files, texts = case
    if vocabulary:
        files = {**files, "_vocabulary.md": VOCABULARY}
    vault = build_vault(files)
    for text in texts:
        query = parse_query(text, prefix=prefix, limit=limit, context=context)
        pruned, _ = rank(vault, query, limit)
        full, _ = rank(vault, query, 0)
        for hit in full:
            seen.add(hit.matched, len(query.terms))
        assert described(pruned) == described(full[:limit]), text
        unexplained, _ = rank(vault, query, limit, explain=False)  # workspace symbols: the same order, no reasons
        assert [(h.page.path, h.score, h.matched) for h in unexplained] == [(h.page.path, h.score, ()) for h in pruned]


def test_the_bounds_are_never_below_a_final_score():
    seen = Channels()
    _bounds_hold(seen)
    assert not seen.missing(), "never seen in the random vaults: " + repr(seen.missing())


@settings(max_examples=EXAMPLES)
@example(({"kiwi.md": "---\ntitle: alpha\n---\nriver\n", "b.md": "kiwi\n"}, ("kiwi",)), False, False, None)  # file name
@given(cases, flags, flags, contexts)
def _bounds_hold(seen, case, prefix, vocabulary, context):
    files, texts = case
    if vocabulary:
        files = {**files, "_vocabulary.md": VOCABULARY}
    vault = build_vault(files)
    for text in texts:
        query = parse_query(text, prefix=prefix, limit=5, context=context)
        if all(t.isascii() for t in query.tokens):  # the top-k search bounds ASCII queries only (``topk.prunes``)
            _check_bounds(seen, vault, query)


def _check_bounds(seen, vault, query) -> None:
    # Each channel's bound must hold on its own: a loose bound elsewhere must not hide a wrong one,
    # so this compares the bound with the score of every candidate, not just the hits that change.
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
        names = {*f.title_set, *f.alias_set, *f.tag_names, *f.tag_tokens, *f.file_tokens}
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
        seen.add([*components, *([prior] if prior else []), *([("context-edge", "", 1, POINTS["context-edge"], "", "")] if path in near else [])],
                 len(query.terms))
        assert bounds.strong(page, fields) >= final, (path, components)
        assert bounds.medium(page, fields) >= final, (path, components)
        quick = bounds.medium(page, fields, tiered[path])
        assert bounds.tighten(page, fields, quick, tiered[path]) == bounds.strong(page, fields)  # the same bound
        # each term's parts on their own (other channels' slack would hide a low one above): its
        # body tier, or the stand-ins' body points; its name, tag, heading and path points
        for (term_plan, others, stand_in, names), tier, named in zip(bounds.terms, bounds.tiers, bounds.named):
            term = term_plan.term
            mine = [c for c in components if c[1] == term and BOUNDS[c[0]].per != ONCE]
            body = sum(c[3] for c in mine if c[0] in ("body-term", "body-bm25"))
            count = fields.body_counts.get(term, 0)
            assert body <= (tier[min(count, 3)] if count else 0), (path, term, count, components)
            stood = sum(c[3] for c in mine if BOUNDS[c[0]].stand_in and c[4] == "body")
            assert stood <= (0 if count else stand_in), (path, term, components)
            in_names = sum(c[3] for c in mine if c[0] not in ("body-term", "body-bm25") and c[4] != "body")
            assert in_names <= (topk._name_points(term, others, names, fields) if path in named else 0), (path, term, components)
        # the bounds without the page's body counts (from postings) are never below the exact ones
        counts = bounds.counts(page, fields)
        assert bounds.body_by_postings(path, fields) >= bounds._body(counts, fields), (path, components)
        assert bounds.tighten(page, fields, quick, tiered[path], by_postings=True) >= bounds.strong(page, fields)
        if path not in strong:
            assert bounds.other(page, fields) >= final, (path, components)
            assert bounds.other(page, fields, by_postings=True) >= bounds.other(page, fields), (path, components)


def test_every_channel_the_top_k_search_meets_is_bounded_by_name():
    # a channel declared in BOUNDS that topk.py does not bound by its own condition is bounded by
    # its declared maximum on every page (right, but the pruning is looser for every query):
    # give it its bound in topk.py and name it in BOUNDED
    unnamed = [c for c in PRUNED if c not in topk.BOUNDED and not BOUNDS[c].stand_in]
    assert topk.declared_slack(BOUNDS, POINTS) == (0, 0), unnamed


def test_a_channel_only_declared_is_bounded_by_its_declared_maximum():
    table = {
        **BOUNDS,
        "new-once": Bound(ONCE, ("title",)),
        "new-exact": Bound(ONCE, ("title",), base=10),
        "new-term": Bound(TERM, ("body",), cap=3),
        "new-field": Bound(FIELD, ("title", "body"), {"body": 1}),
        "new-arm": Bound("arm", ("ranks",), pruned=False),
    }
    points = {**POINTS, "new-once": 5, "new-exact": 4, "new-term": 2, "new-field": 2, "new-arm": 1}
    assert topk.declared_slack(table, points) == (5 + 10, 4 + 2 * 3 + (2 + 1))


@pytest.mark.parametrize("slack", [(3, 0), (0, 2.5)])
def test_the_pruning_stays_right_with_a_channel_bounded_only_by_its_declaration(monkeypatch, slack):
    # a channel only declared adds up to its maximum to every bound (the slack): the bounds then
    # stay above every final score plus that, and ``tighten`` still gives ``strong`` exactly
    monkeypatch.setattr(topk, "_SLACK_ONCE", slack[0])
    monkeypatch.setattr(topk, "_SLACK_TERM", slack[1])
    vault = build_vault(_zipf_vault(3, 120))
    for text in ("w1 w2", "the w3", "w5", "w1 the of"):
        for prefix in (False, True):
            query = parse_query(text, prefix=prefix, limit=5)
            plan = make_plan(vault, query)
            bounds = Bounds(vault, query, plan, set())
            extra = slack[0] + slack[1] * len(plan.terms)
            cands = candidates(vault, query, plan)
            tiered = bounds.tiered_pages(set(cands))
            for path in cands:
                page, fields = vault.pages[path], vault.fields[path]
                prior = link_prior(vault, page)
                final = sum(c[3] for c in page_components(page, fields, query, vault, plan)) + (prior[3] if prior else 0)
                strong = bounds.strong(page, fields)
                assert strong >= final + extra
                assert bounds.medium(page, fields) >= strong
                assert bounds.tighten(page, fields, bounds.medium(page, fields, tiered[path]), tiered[path]) == strong
            full, _ = rank(vault, query, 0)
            pruned, _ = rank(vault, query, 5)
            assert described(pruned) == described(full[:5])


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


@pytest.mark.timeout(300)
def test_a_vault_read_back_with_packed_body_counts_ranks_the_same(tmp_path):
    # Loaded through the index records, a page's body counts stay packed and the ranking reads
    # them off the page's text (``scoring.TextCounts``): the same hits, scores and components as
    # the vault parsed in memory (plain counts), pruned and in full.
    files = _zipf_vault(3)
    plain = build_vault(files)
    packed = load_vault(str(write_vault(tmp_path / "v", files)), cache=None, workers=0).vault
    assert all(type(counts_of(packed.pages[p], f)) is TextCounts for p, f in packed.fields.items())
    rng = random.Random(3)
    titles = sorted(page.title for page in plain.pages.values())
    texts = rng.sample(titles, 30) + [t[: max(2, len(t) // 2)] for t in rng.sample(titles, 15)]
    for text in texts:
        for prefix in (False, True):
            full, _ = rank(plain, parse_query(text, prefix=prefix, limit=0), 0)
            assert described(rank(packed, parse_query(text, prefix=prefix, limit=0), 0)[0]) == described(full), text
            for limit in (3, 50):
                pruned, _ = rank(packed, parse_query(text, prefix=prefix, limit=limit), limit)
                assert described(pruned) == described(full[:limit]), (text, prefix, limit)


def _thrice_vault(seed: int) -> dict[str, str]:
    """``_zipf_vault`` where "the" is three times or more in most bodies (as in English prose),
    and once, twice or not at all in the rest, and in few titles: most pages a query for it
    meets have it in a heading, or a title word that starts with it ("then", "theme"). The top-k
    search then bounds it without walking its postings (``topk._MostlyThrice`` and the loop over
    the pages without a query word in their titles)."""
    rng = random.Random(seed)
    files = _zipf_vault(seed, 300)
    for path in sorted(files):
        head, body = files[path].split("\n---\n", 1)
        title = head.split("title: ", 1)[1]
        words = ["of" if word == "the" and rng.random() < 0.9 else word for word in title.split(" ")]
        if rng.random() < 0.15:
            words.append(rng.choice(["then", "theme", "thesis"]))
        body = " ".join("of" if word == "the" else word for word in body.split(" "))
        if rng.random() < 0.3:
            body = "## the " + rng.choice(["w1", "w2", "w3"]) + "\n" + body
        roll = rng.random()
        times = rng.randint(3, 9) if roll < 0.8 else 2 if roll < 0.87 else 1 if roll < 0.94 else 0
        files[path] = f"---\ntitle: {' '.join(words)}\n---\n{body}" + " ".join(["the"] * times) + "\n"
    return files
