"""Golden queries on examples/vault: the page a person means must come first.

Each line of tests/data/golden_queries.txt is ``query|expected top path``, written for the
bundled vault by hand (exact titles, aliases, tag words, synonyms, stems, body-only topics).
A ranking change that breaks one of these must be a deliberate one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultlens.engine.query import parse_query
from vaultlens.engine.scan import open_vault
from vaultlens.engine.search import search

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = [
    tuple(line.split("|", 1))
    for line in (ROOT / "tests" / "data" / "golden_queries.txt").read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.startswith("#")
]


@pytest.fixture(scope="module")
def vault():
    v, _listing = open_vault(str(ROOT / "examples" / "vault"))
    return v


@pytest.mark.parametrize(("query", "expected"), GOLDEN, ids=[q for q, _ in GOLDEN])
def test_golden_query_ranks_expected_page_first(vault, query, expected):
    hits = search(vault, parse_query(query, limit=5))
    assert hits, f"no hits for {query!r}"
    assert hits[0].page.path == expected, [(h.score, h.page.path) for h in hits]
    # strictly first: a tie broken only by title order would be luck, not ranking
    if len(hits) > 1:
        assert hits[0].score > hits[1].score, [(h.score, h.page.path) for h in hits]


def test_golden_set_is_large_enough():
    assert len(GOLDEN) >= 30
