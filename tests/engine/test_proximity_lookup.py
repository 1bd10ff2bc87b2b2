"""body-pair and section-term find their words without tokenizing sections: the same answers as
the plain definitions (a phrase as tokens in a row; a section's words as ``tokenize`` gives them)."""

from __future__ import annotations

import random
import re

import pytest

from vaultlens.engine.page import parse_page
from vaultlens.engine.scoring import _phrase_pattern, best_section
from vaultlens.engine.text import tokenize

WORDS = ["alpha", "beta", "gamma", "the", "a", "x1", "café", "straße", "i", "東京", "naïve", "b_c", "2023", "05"]
SEPS = [" ", "  ", "\n", ", ", "_", "-", "—", "é", "İ", "\n\n## Head ", "\n# Top\n", "'s ", "ǅ"]


def _reference_pattern(tokens: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"(?<![^\W_])" + r"[\W_]+".join(map(re.escape, tokens)) + r"(?![^\W_])")


def _reference_section(page, terms):
    """``best_section`` as first written: every section tokenized."""
    if len(terms) < 2:
        return None
    lines = page.body.split("\n")
    cuts = sorted({h.span.start_line - page.body_line for h in page.headings} - {0})
    starts = [0, *(c for c in cuts if 0 < c < len(lines))]
    best = None
    names = {h.span.start_line - page.body_line: h.text for h in page.headings}
    for start, end in zip(starts, [*starts[1:], len(lines)]):
        words = set(tokenize("\n".join(lines[start:end])))
        together = tuple(t for t in terms if t in words)
        if len(together) >= 2 and (best is None or len(together) > len(best[1])):
            best = (names.get(start, ""), together)
    return best


def _texts(seed: int, n: int):
    rng = random.Random(seed)
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(1, 40)):
            parts += [rng.choice(WORDS).capitalize() if rng.random() < 0.2 else rng.choice(WORDS), rng.choice(SEPS)]
        yield "".join(parts)


@pytest.mark.timeout(60)
def test_the_phrase_pattern_matches_where_the_plain_one_does():
    rng = random.Random(3)
    for text in _texts(1, 400):
        folded = text.casefold()
        tokens = tokenize(text) or ["alpha"]
        for _ in range(4):
            i = rng.randrange(len(tokens))
            pair = tuple(tokens[i : i + rng.choice((2, 3))]) if rng.random() < 0.6 else tuple(rng.sample(WORDS, 2))
            pair = tuple(tokenize(" ".join(pair))) or ("alpha", "beta")
            assert bool(_phrase_pattern(pair).search(folded)) == bool(_reference_pattern(pair).search(folded)), (text, pair)


@pytest.mark.timeout(60)
def test_the_best_section_is_the_one_tokenizing_each_section_finds():
    rng = random.Random(5)
    for k, body in enumerate(_texts(2, 300)):
        page = parse_page(f"p{k}.md", f"---\ntitle: P{k}\n---\n# P{k}\n{body}\n## Last\ngamma alpha\n")
        vocabulary = sorted(set(tokenize(page.body))) or ["alpha"]
        for _ in range(4):
            terms = rng.sample(vocabulary, min(len(vocabulary), rng.randint(2, 5)))
            assert best_section(page, terms) == _reference_section(page, terms), (page.body, terms)
            assert best_section(page, terms, page.body.casefold()) == _reference_section(page, terms)
