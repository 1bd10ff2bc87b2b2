"""Invariants over random small vaults and queries (hypothesis, derandomized in tests/conftest.py).

- every hit's score is the sum of its components' points, and every channel is a POINTS key;
  with ``--rank hybrid``, the sum of its rrf points rounded to 6 decimals;
- parsing never raises, and every link's span covers exactly its text (UTF-16 columns);
- the ranking does not depend on the order pages are added (same JSON bytes);
- filters only remove hits;
- backlinks (from the name index) equal resolving every link of every page;
- incremental upsert/remove leaves the vault, every index of every part, equal to a fresh build
  of the final pages.
"""

from __future__ import annotations

import math
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from vaultkit import (
    brute_backlinks,
    build_vault,
    check_ranking_contract,
    hits_for,
    payload_text,
    vault_state,
)

from vaultlens.engine.page import parse_page
from vaultlens.engine.query import parse_query, passes_filters
from vaultlens.engine.text import index_of_utf16, query_terms, tokenize, utf16_col
from vaultlens.engine.vault import PathIndex, Vault
from vaultlens.engine.weights import FIXED_STEP, POINTS

WORDS = [
    "alpha", "Beta", "gamma", "kiwi", "graph", "rag", "run", "runs", "running", "car", "cars",
    "automobile", "café", "Straße", "notes", "deep", "x1",
]
PATHS = [
    "A.md", "a.md", "b.md", "Kiwi.md", "graph-rag.md", "notes/A.md", "notes/Gamma.md",
    "notes/sub/car.md", "deep/x/Run.md", "deep/Café.md",
]
TARGETS = [
    "A", "a", "b", "Kiwi", "graph-rag", "Graph RAG", "notes/A", "Gamma", "sub/car", "car",
    "Run", "../A", "./Gamma", "Missing", "alias one", "Café", "pic.png",
]
TAGS = ["kiwi", "ai", "ai/rag", "ai/graph", "Run", "notes/deep"]
TYPES = ["note", "concept"]
VOCABULARY = "---\ngroups:\n  - canonical: automobile\n    variants: [car, auto]\n  - {canonical: kiwi, variants: [graph rag]}\n---\n"

words = st.sampled_from(WORDS)


@st.composite
def frontmatter(draw) -> str:
    lines = []
    if draw(st.booleans()):
        lines.append("title: " + " ".join(draw(st.lists(words, min_size=1, max_size=3))))
    if draw(st.booleans()):
        aliases = draw(st.lists(st.sampled_from(["alias one", "Graph RAG", "Kiwi Fruit", "cars"]), max_size=2))
        lines.append("aliases: [" + ", ".join(aliases) + "]")
    if draw(st.booleans()):
        lines.append("tags: [" + ", ".join(draw(st.lists(st.sampled_from(TAGS), max_size=3))) + "]")
    if draw(st.booleans()):
        lines.append("type: " + draw(st.sampled_from(TYPES)))
    for key in ("sources", "related", "depends_on"):
        if draw(st.integers(0, 2)) == 0:
            targets = draw(st.lists(st.sampled_from(TARGETS), min_size=1, max_size=2))
            lines.append(f"{key}:")
            lines.extend(f'  - "[[{t}]]"' for t in targets)
    return "---\n" + "\n".join(lines) + "\n---\n" if lines or draw(st.booleans()) else ""


body_piece = st.one_of(
    words,
    words,
    words,
    st.sampled_from(TARGETS).map(lambda t: f"[[{t}]]"),
    st.tuples(st.sampled_from(TARGETS), words).map(lambda p: f"[[{p[0]}|{p[1]}]]"),
    st.sampled_from(TAGS).map(lambda t: f"#{t}"),
    st.sampled_from(["\n", "\n\n", "\n```\n", "`code kiwi`", "\n    indented kiwi\n", "[md](A.md)", "😀"]),
)


@st.composite
def page_text(draw) -> str:
    return draw(frontmatter()) + " ".join(draw(st.lists(body_piece, max_size=25))) + "\n"


vaults = st.dictionaries(st.sampled_from(PATHS), page_text(), min_size=1, max_size=6)
queries = st.lists(st.sampled_from([*WORDS, "graph rag", "auto", "kiw", "zzz"]), min_size=1, max_size=3).map(" ".join)


def with_vocabulary(files: dict[str, str], on: bool) -> dict[str, str]:
    return {**files, "_vocabulary.md": VOCABULARY} if on else files


@given(vaults, queries, st.booleans(), st.booleans(), st.booleans())
def test_score_is_the_sum_of_points_and_channels_are_points_keys(files, query, graph, prefix, vocabulary):
    vault = build_vault(with_vocabulary(files, vocabulary))
    hits = hits_for(vault, query, graph=graph, prefix=prefix)
    check_ranking_contract(hits)
    for hit in hits:
        assert {m.channel for m in hit.matched} <= set(POINTS)
        assert hit.score == sum(m.points for m in hit.matched) == sum(reversed([m.points for m in hit.matched]))
        # formula channels round to exact binary fractions, so the sum is exact in any order
        assert all(float(m.points * FIXED_STEP).is_integer() for m in hit.matched)
        # the walk credits a page once (a keyword hit it reaches too); a page only it found has no snippet
        assert [m.channel for m in hit.matched].count("graph-edge") <= 1
        if [m.channel for m in hit.matched] == ["graph-edge"]:
            assert hit.snippet == ""


@given(vaults, queries, st.booleans(), st.booleans(), st.data())
def test_hybrid_scores_are_rounded_sums_of_rrf_points_whatever_the_build_order(files, query, graph, vocabulary, data):
    files = with_vocabulary(files, vocabulary)
    vault = build_vault(files)
    hits = hits_for(vault, query, graph=graph, rank="hybrid")
    check_ranking_contract_hybrid(hits)
    for hit in hits:
        assert {m.channel for m in hit.matched} == {"rrf"}
        assert hit.score == round(math.fsum(m.points for m in hit.matched), 6)
        arms = [m.term for m in hit.matched]
        assert len(arms) == len(set(arms)) and set(arms) <= {"default", "bm25f", "vector", "name"}  # one per arm
        assert hit.via in ("lexical", "vector", "lexical+vector")
    order = data.draw(st.permutations(list(files)))
    expected = payload_text(vault, query, graph=graph, rank="hybrid")
    assert payload_text(build_vault(files, order=order), query, graph=graph, rank="hybrid") == expected


def check_ranking_contract_hybrid(hits) -> None:
    order = [(-h.score, h.page.title.casefold(), h.page.path) for h in hits]
    assert order == sorted(order)
    assert len({h.page.path for h in hits}) == len(hits)


@given(st.text())
def test_parse_page_never_raises_on_any_text(text):
    page = parse_page("any/page.md", text)
    assert page.title == "page" or page.title


@given(st.binary())
def test_parse_page_never_raises_on_any_bytes(data):
    parse_page("any/page.md", data)


MARKUP = st.lists(
    st.sampled_from(
        list("[]|#^!()<>\n `~-:*é😀x.md/\t\"'\r")
        + ["[[", "]]", ".md", "---\n", "%20", "\ufeff", "    ", "```"]
        + ["[[x]]", "[[😀 é|x]]", "![[x#h]]", "[[x#^b|y]]", "[é](x%20y.md)", "[a](<b c.md>)", "#tag"]
    )
).map("".join)


@given(st.one_of(MARKUP, page_text()))
def test_every_link_span_covers_exactly_its_text(text):
    page = parse_page("p.md", text)
    lines = re.split(r"\r\n|\r|\n", text.removeprefix("\ufeff"))
    for link in page.links:
        span = link.span
        assert span.start_line == span.end_line
        units = lines[span.start_line].encode("utf-16-le")
        assert units[2 * span.start_char : 2 * span.end_char].decode("utf-16-le") == link.raw
        t = link.target_span
        assert span.start_char <= t.start_char <= t.end_char <= span.end_char


@given(vaults, queries, st.booleans(), st.booleans(), st.booleans(), st.data())
def test_ranking_ignores_the_order_pages_are_added(files, query, graph, prefix, vocabulary, data):
    files = with_vocabulary(files, vocabulary)
    order = data.draw(st.permutations(list(files)))
    expected = payload_text(build_vault(files), query, graph=graph, prefix=prefix)
    assert payload_text(build_vault(files, order=order), query, graph=graph, prefix=prefix) == expected


filters = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(TYPES),
        "folder": st.sampled_from(["notes", "notes/", "deep/x", "./deep", "../notes", ""]),
        "tag": st.sampled_from(TAGS + ["AI", "nope"]),
    },
)


@given(vaults, queries, filters)
def test_filters_only_remove_hits(files, query, options):
    vault = build_vault(files)
    everything = hits_for(vault, query)
    filtered = hits_for(vault, query, **options)
    q = parse_query(query, **options)
    assert list(filtered) == [h for h in everything if passes_filters(h.page, q)]
    walked = {h.page.path for h in hits_for(vault, query, graph=True)}
    assert {h.page.path for h in hits_for(vault, query, graph=True, **options)} <= walked


@given(vaults)
def test_backlinks_equal_resolving_every_link(files):
    vault = build_vault(files)
    for path in vault.pages:
        assert vault.backlinks(path) == brute_backlinks(vault, path)
        for link, resolution in vault.outlinks(path):
            assert resolution.path is None or resolution.path in vault.pages
            assert list(resolution.candidates[:1]) == ([resolution.path] if resolution.path else [])


ops = st.lists(
    st.one_of(
        st.tuples(st.just("upsert"), st.sampled_from(PATHS), page_text()),
        st.tuples(st.just("remove"), st.sampled_from(PATHS), st.just("")),
    ),
    min_size=1,
    max_size=12,
)


def apply_op(vault: Vault, files: dict[str, str], op: str, path: str, text: str) -> None:
    """One step of ``ops`` on ``vault``, and on ``files`` (what a fresh build should be made of)."""
    if op == "upsert":
        vault.upsert(parse_page(path, text))
        files[path] = text
    else:
        vault.remove(path)
        files.pop(path, None)


@settings(max_examples=80)
@given(ops)
def test_incremental_updates_equal_a_fresh_build(sequence):
    vault = Vault("vault")
    files: dict[str, str] = {}
    for step in sequence:
        apply_op(vault, files, *step)
        for page in vault.pages.values():
            vault.linker_count(page)  # remembered: the next changes must drop what they make untrue
    fresh = build_vault(files)
    assert vault_state(vault) == vault_state(fresh)
    assert parts_state(vault) == parts_state(fresh)
    assert {p: vault.linker_count(page) for p, page in vault.pages.items()} == {
        p: fresh.linker_count(page) for p, page in fresh.pages.items()
    }


def parts_state(vault: Vault) -> dict[str, object]:
    """Every index of every part of a vault (``part.indexes()``), as plain data; checks on the
    way that the vault's attribute of each is that very container (what readers use)."""
    out: dict[str, object] = {}
    for part in vault.parts:
        for name, index in part.indexes().items():
            if hasattr(vault, name):
                assert getattr(vault, name) is index, name
            if isinstance(index, PathIndex):  # the order of a key's paths carries no meaning
                out[name] = {key: sorted(paths) for key, paths in sorted(index.items())}
            elif isinstance(index, dict):
                out[name] = {k: sorted(v) if isinstance(v, set) else v for k, v in sorted(index.items())}
            else:
                out[name] = index
    return out


@given(st.text(), st.data())
def test_utf16_columns_round_trip(line, data):
    index = data.draw(st.integers(0, len(line)))
    col = utf16_col(line, index)
    assert col == len(line[:index].encode("utf-16-le", "surrogatepass")) // 2
    assert index_of_utf16(line, col) == index


@given(st.text())
def test_tokens_are_casefolded_letter_digit_runs(text):
    tokens = tokenize(text)
    assert all(t and t == t.casefold() and all(c.isalnum() for c in t) for t in tokens)
    assert list(query_terms(text)) == list(dict.fromkeys(tokens))


@settings(max_examples=60)
@given(vaults, st.integers(1, 4), ops)
def test_a_bulk_build_from_packed_parts_equals_a_fresh_build(files, group, sequence):
    """A cold load's build: parts whose search postings are positions in a path table (what
    parse workers send, ``index_part(pairs, position)``), in groups of any size, merged by
    ``from_parts(table=...)``: every index equal to a build from plain parts (stems made
    once per token), and still equal after upserts and removes."""
    from vaultlens.engine.fields import page_fields
    from vaultlens.engine.pathindex import positions
    from vaultlens.engine.vault import index_part

    pages = [parse_page(path, text) for path, text in sorted(files.items())]
    table = tuple(sorted({*files, *PATHS}))  # the listing: paths a group may not hold too
    position = positions(table)
    pairs = [(page, page_fields(page)) for page in pages]
    groups = [pairs[i : i + group] for i in range(0, len(pairs), group)]
    packed = Vault.from_parts(((g, index_part(g, position)) for g in groups), "vault", table=table)
    fresh = build_vault(files)
    assert parts_state(packed) == parts_state(fresh)
    files = dict(files)
    for step in sequence:
        apply_op(packed, files, *step)
    assert parts_state(packed) == parts_state(build_vault(files))
