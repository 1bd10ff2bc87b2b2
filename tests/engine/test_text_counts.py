"""A page's body counts read off its text (``scoring.TextCounts``, used while the stored counts
are still packed) are the counts ``BodyCounts.of(tokenize(body))`` holds, for every word asked."""

from __future__ import annotations

import random

import pytest

from vaultlens.engine.fields import BodyCounts
from vaultlens.engine.scoring import TextCounts
from vaultlens.engine.text import tokenize

WORDS = ["alpha", "Alpha", "ALPHA", "alphabet", "beta", "the", "a", "x1", "1", "café", "CAFÉ", "straße", "STRASSE",
         "i", "İstanbul", "東京", "naïve", "b_c", "2023", "05", "ǅ", "ﬁne", "Σίσυφος"]
SEPS = [" ", "  ", "\n", ", ", "_", "-", "—", "é", "İ", "\n## Head ", "'s ", "ǅ", "", "[[", "]]", "#", "`"]
ASKED = ["alpha", "alphabet", "alph", "lpha", "beta", "the", "a", "x1", "1", "café", "cafe", "straße", "strasse",
         "i", "i̇stanbul", "東京", "naïve", "b", "c", "b_c", "2023", "05", "5", "ǆ", "fine", "σίσυφος", "σίσυφοσ",
         "alpha beta", "", "-", "zz"]


def _texts(seed: int, n: int):
    rng = random.Random(seed)
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(0, 40)):
            parts += [rng.choice(WORDS), rng.choice(SEPS)]
        yield "".join(parts)


@pytest.mark.timeout(60)
def test_the_counts_read_off_the_text_are_the_tokenized_counts():
    for text in _texts(1, 1500):
        counts = BodyCounts.of(tokenize(text))
        read = TextCounts(text)
        for word in [*ASKED, *counts.tokens]:
            assert read.count(word) == counts.count(word), (text, word)
            assert (word in read) == (word in counts), (text, word)
            assert read.get(word, 0) == counts.get(word, 0), (text, word)
        words = list(counts.tokens[:3]) + ["zz"]
        assert read.isdisjoint(words) == counts.isdisjoint(words)
