"""The stemmer: PyStemmer's C build of Snowball's Porter stemmer, which must give exactly the
stems of snowballstemmer's pure Python one (the reference, and the fallback where PyStemmer is
missing): a stem that differed would change which pages a query finds, and stored indexes."""

from __future__ import annotations

import os
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from snowballstemmer.porter_stemmer import PorterStemmer

from vaultlens.engine import text

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "vault")


def _reference(word: str) -> str:
    return PorterStemmer().stemWord(word)


def test_the_c_stemmer_is_used():
    assert type(text._porter()).__module__ == "Stemmer"


def test_same_stems_as_the_pure_python_stemmer_on_the_example_vault():
    words: set[str] = set()
    for folder, _dirs, files in os.walk(EXAMPLES):
        for name in files:
            if name.endswith(".md"):
                with open(os.path.join(folder, name), encoding="utf-8") as fh:
                    words.update(text.tokenize(fh.read()))
    words.update(["generalizations", "conditional", "hopefulness", "caresses", "ponies", "sky", "skies",
                  "dying", "news", "agreed", "feed", "bled", "sing", "motoring", "happy", "relational"])
    assert len(words) > 500
    c = text._porter()
    differ = [(w, c.stemWord(w), _reference(w)) for w in sorted(words) if c.stemWord(w) != _reference(w)]
    assert not differ, differ[:10]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyz" + "eiouyss" + "éüßøł0123"), min_size=1,
               max_size=16) | st.text(min_size=1, max_size=8))
def test_same_stems_as_the_pure_python_stemmer(word):
    for token in re.findall(r"[^\W_]+", word.casefold()):
        assert text._porter().stemWord(token) == _reference(token)
