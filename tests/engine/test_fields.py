"""``BodyCounts``: the compact body token counts answer as the Counter they replace."""

from __future__ import annotations

import marshal
import pickle
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from vaultlens.engine.compact import decode_fields, encode_fields
from vaultlens.engine.fields import BodyCounts, page_fields
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
