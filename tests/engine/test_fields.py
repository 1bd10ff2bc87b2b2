"""``BodyCounts``: the compact body token counts answer as the Counter they replace; a page's
field token sets are tuples of distinct tokens in the page's order."""

from __future__ import annotations

import marshal
import pickle
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultlens.engine.compact import PackedBodyCounts, decode_fields, encode_fields
from vaultlens.engine.fields import BodyCounts, distinct, holds_all, page_fields
from vaultlens.engine.page import parse_page

tokens = st.lists(st.sampled_from(["a", "b", "río", "zz", "the", "0", "ünïcode", "é"]), max_size=40)


@given(tokens, st.lists(st.sampled_from(["a", "b", "c", "río", "é", "", "zzz"]), max_size=5))
def test_body_counts_answer_as_a_counter(words, asked):
    counts, expected = BodyCounts.of(words), Counter(words)
    assert dict(counts.items()) == dict(expected) and len(counts) == len(expected)
    assert list(counts) == sorted(expected) and counts.total() == len(words)
    for word in asked:
        assert counts.get(word) == expected.get(word) and counts.count(word) == expected[word]
        assert (word in counts) == (word in expected)
    assert counts.isdisjoint(asked) == expected.keys().isdisjoint(asked)
    assert pickle.loads(pickle.dumps(counts)) == counts


def test_counts_above_a_byte_are_kept_whole():
    counts = BodyCounts.of(["x"] * 300 + ["y"])
    assert counts["x"] == 300 and counts.get("y") == 1 and counts.total() == 301


def test_a_page_s_body_counts_survive_its_record():
    page = parse_page("n.md", "# Title\n\n" + "word " * 260 + "other words, and río\n")
    fields = page_fields(page)
    assert fields.body_counts["word"] == 260 and fields.body_counts["río"] == 1
    assert decode_fields(marshal.loads(marshal.dumps(encode_fields(fields)))) == fields


@given(tokens)
def test_packed_body_counts_unpack_on_first_read_and_answer_the_same(words):
    page = parse_page("n.md", "# T\n\n" + " ".join(words) + "\n")
    fields = page_fields(page)
    decoded = decode_fields(marshal.loads(marshal.dumps(encode_fields(fields))))
    counts = decoded.body_counts
    assert isinstance(counts, PackedBodyCounts) and isinstance(counts, BodyCounts)
    with pytest.raises(AttributeError):
        counts.no_such_field  # noqa: B018 - only tokens and counts unpack
    assert counts.count("a") == fields.body_counts.count("a") and counts == fields.body_counts
    assert counts.tokens == fields.body_counts.tokens and counts.counts == fields.body_counts.counts
    again = pickle.loads(pickle.dumps(counts))
    assert type(again) is BodyCounts and again == fields.body_counts


def test_prepare_decodes_a_warm_loaded_page_ahead_of_a_query_and_changes_no_answer(tmp_path):
    from vaultlens.engine.cache import LAZY_BODIES, CacheOptions
    from vaultlens.engine.compact import LazyFields, _get_fields_chunk, _get_page_chunk
    from vaultlens.engine.query import parse_query
    from vaultlens.engine.scan import load_vault
    from vaultlens.engine.search import rank

    if not LAZY_BODIES:
        pytest.skip("stored chunks are decoded at load on this system")
    for i in range(12):
        (tmp_path / f"p{i}.md").write_text(f"# Page {i}\n\nriver stone {'garden ' * i}and río\n", encoding="utf-8")
    options = CacheOptions(location=str(tmp_path / "cache"))
    load_vault(str(tmp_path), cache=options).commit()
    vault = load_vault(str(tmp_path), cache=options).vault
    before = [(h.page.path, h.score) for h in rank(vault, parse_query("garden river", limit=5), 5)[0]]

    def waiting(vault) -> list[str]:  # pages whose stored chunk is not decoded yet
        out = []
        for path in vault.sorted_paths():
            fields = vault.fields[path]
            try:
                chunk = _get_fields_chunk(fields) if isinstance(fields, LazyFields) else None
            except AttributeError:
                chunk = None
            if chunk is not None and chunk.pairs and object.__getattribute__(chunk, "_entries") is not None:
                out.append(path)
        return out

    vault = load_vault(str(tmp_path), cache=options).vault
    assert waiting(vault) == vault.sorted_paths()  # a warm start decodes nothing
    def pages_waiting(vault) -> list[str]:  # pages whose own record is not decoded yet
        out = []
        for path in vault.sorted_paths():
            try:
                _get_page_chunk(vault.pages[path])
            except AttributeError:
                continue
            out.append(path)
        return out

    for path in vault.sorted_paths():
        vault.prepare(path)
    assert waiting(vault) == []
    assert pages_waiting(vault) == vault.sorted_paths()  # the fields alone: what ranking bounds pages by
    for path in vault.sorted_paths():
        vault.prepare_page(path)
    assert pages_waiting(vault) == []
    assert [(h.page.path, h.score) for h in rank(vault, parse_query("garden river", limit=5), 5)[0]] == before
    vault.prepare("no/such/page.md")  # nothing to do, no error
    vault.prepare_page("no/such/page.md")


def test_prepare_index_reads_a_warm_loaded_index_ahead_of_a_query_and_changes_no_answer(tmp_path):
    from vaultlens.engine.cache import CacheOptions
    from vaultlens.engine.pathindex import PathIndex
    from vaultlens.engine.query import parse_query
    from vaultlens.engine.scan import load_vault
    from vaultlens.engine.search import rank
    from vaultlens.engine.vault import INDEX_NAMES

    for i in range(12):
        (tmp_path / f"p{i}.md").write_text(f"# Page {i}\n\nriver stone {'garden ' * i}#tag{i % 3}\n", encoding="utf-8")
    options = CacheOptions(location=str(tmp_path / "cache"))
    load_vault(str(tmp_path), cache=options).commit()
    before = [(h.page.path, h.score) for h in rank(load_vault(str(tmp_path), cache=options).vault, parse_query("garden river", limit=5), 5)[0]]

    vault = load_vault(str(tmp_path), cache=options).vault

    def stored() -> list[str]:  # indexes still as stored (a deferred PathIndex is a subclass)
        return [name for name in INDEX_NAMES for part in vault.parts
                if isinstance(getattr(part, name, None), PathIndex) and type(getattr(part, name)) is not PathIndex]

    assert "postings" in stored()  # a warm start reads no index it does not need
    for name in INDEX_NAMES:
        vault.prepare_index(name)
    assert stored() == []
    assert [(h.page.path, h.score) for h in rank(vault, parse_query("garden river", limit=5), 5)[0]] == before


_HEADING_BITS = ["# ", "## ", "### ", "Word", "wörd", "x1", "C#", " #", " ##", "**b**", "`code`", "[[Link|Label]]",
                 "#tag", "_u_", "a_b", "-", "=", "\n", "\n===\n", "\n---\n", "```\n", "    ", "  ", "ǅ", "İ"]


@given(st.lists(st.sampled_from(_HEADING_BITS), max_size=40).map("".join))
def test_a_headings_words_are_words_of_its_body(text):
    # the names-only candidates take a page with a query word in a heading as one holding it in
    # ``postings`` (scoring._named_candidates): every heading token is a body token
    fields = page_fields(parse_page("p.md", text))
    assert set(fields.heading_set) <= fields.vocabulary()


SETS = ("title_set", "alias_set", "tag_names", "tag_tokens", "heading_set", "path_tokens", "leaf_tokens")


def test_a_fields_sets_are_its_distinct_tokens_in_page_order():
    text = ("---\ntitle: The Cat and the Hat\naliases: [Hat Cat, Red Hat]\ntags: [pets/cats, pets, hats]\n---\n"
            "# Cats\n## Hats and cats\ntext\n")
    f = page_fields(parse_page("zoo/pets.the-hat.md", text))
    assert f.title_set == ("the", "cat", "and", "hat")  # "the" once, where it first is
    assert f.alias_set == ("hat", "cat", "red")
    assert f.tag_names == ("hats", "pets", "pets/cats", "cats")  # the page's tags are sorted
    assert f.tag_tokens == ("hats", "pets", "cats")
    assert f.heading_set == ("cats", "hats", "and")
    assert f.path_tokens == ("zoo", "pets", "the", "hat") and f.leaf_tokens == ("the", "hat")
    assert all(type(getattr(f, name)) is tuple for name in SETS)
    assert holds_all(f.title_set, {"hat", "cat"}) and not holds_all(f.title_set, {"hat", "dog"})
    assert holds_all(f.heading_set, ())


def test_a_title_without_a_repeated_word_is_its_own_set():
    # one tuple for both (and for the file name's tokens when the file is named after the title)
    f = page_fields(parse_page("Blue Moon Rising.md", "text"))
    assert f.title_set is f.title_tokens is f.file_tokens
    assert f.leaf_tokens is f.title_set


@given(st.lists(st.sampled_from(["a", "b", "río", "the", "0"]), max_size=12))
def test_distinct_keeps_the_first_of_each(words):
    out = distinct(words)
    assert len(out) == len(set(words)) and set(out) == set(words)
    assert list(out) == sorted(set(words), key=words.index)
