"""``--rank hybrid``: reciprocal rank fusion of the default ranking, BM25F and (with the
embeddings extra) a vector arm; every hit explained by one ``rrf`` component per arm.

The vector arm itself is tested in test_embed.py.
"""

from __future__ import annotations

import io
import json
import math
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vaultkit import build_vault, components, hits_for, payload_text, write_vault

import vaultlens.engine.embed
from vaultlens.engine import cli
from vaultlens.engine.bm25 import bm25f_rank
from vaultlens.engine.hybrid import (
    ARM_WEIGHTS,
    NAME_WEIGHT,
    VECTOR_RRF_K,
    Arm,
    fuse,
    hybrid_arms,
    name_matches,
    rrf_points,
)
from vaultlens.engine.query import parse_query
from vaultlens.engine.search import search
from vaultlens.engine.weights import RRF_K

FILES = {
    "Compost.md": "---\ntags: [garden]\n---\n# Compost\nCompost feeds the soil. Compost tea is a liquid.\n",
    "garden/Soil.md": "---\naliases: [Dirt]\n---\n## Feeding the soil\nAdd compost.\n",
    "notes/Tea.md": "---\ntitle: Compost Tea\n---\nSteep it. [[Compost]]\n",
    "Worms.md": "Worms eat scraps and make castings for the soil.\n",
}


def hybrid(vault, text: str, vectors=None, **options):
    options.setdefault("limit", 0)
    return search(vault, parse_query(text, rank="hybrid", **options), vectors)


def test_hybrid_hits_carry_one_rrf_component_per_arm():
    vault = build_vault(FILES)
    hits = hybrid(vault, "compost")
    default_hits = hits_for(vault, "compost")
    default = [h.page.path for h in default_hits]
    lexical = bm25f_rank(vault, parse_query("compost"), 100)
    names = name_matches(default_hits)
    assert names == ["Compost.md"]  # the query is its title: the name arm ranks it too
    for hit in hits:
        expected = []
        for arm, ranked in (("default", default), ("bm25f", lexical), ("name", names)):
            if hit.page.path in ranked:
                rank = ranked.index(hit.page.path)
                weight = NAME_WEIGHT if arm == "name" else ARM_WEIGHTS[arm]
                expected.append(("rrf", arm, rank + 1, round(weight / (RRF_K + rank), 6), "", "lexical"))
        assert sorted(components(hit)) == sorted(expected)
        assert components(hit) == sorted(components(hit), key=lambda c: (-c[3], c[1]))
    assert hits[0].page.path == "Compost.md"


def test_hybrid_score_is_the_rounded_sum_of_its_points_in_the_json():
    vault = build_vault(FILES)
    payload = json.loads(payload_text(vault, "compost soil", rank="hybrid"))
    assert payload["hits"]
    for hit in payload["hits"]:
        points = [m["points"] for m in hit["matched"]]
        assert hit["score"] == round(math.fsum(points), 6)
        # as decimals, exactly: what a reader adding up the JSON gets
        assert Decimal(repr(hit["score"])) == sum(Decimal(repr(p)) for p in points)
        assert all(m["channel"] == "rrf" and m["via"] in ("lexical", "vector") for m in hit["matched"])
        assert list(hit) == ["title", "wikilink", "file", "type", "score", "via", "snippet", "matched"]
        assert hit["via"] == "lexical"  # no vector arm here


def test_hybrid_orders_like_the_default_ranking_and_keeps_filters_and_limit():
    vault = build_vault(FILES)
    hits = hybrid(vault, "soil compost")
    order = [(-h.score, h.page.title.casefold(), h.page.path) for h in hits]
    assert order == sorted(order)
    assert [h.page.path for h in hybrid(vault, "soil compost", folder="garden")] == ["garden/Soil.md"]
    assert hybrid(vault, "soil compost", limit=2) == hits[:2]
    assert hybrid(vault, "durian") == ()


def test_hybrid_snippets_come_from_the_default_arms_match():
    vault = build_vault(FILES)
    (worms,) = [h for h in hybrid(vault, "castings") if h.page.path == "Worms.md"]
    assert "castings" in worms.snippet


def test_hybrid_is_deterministic_whatever_the_build_order():
    forward = payload_text(build_vault(FILES), "compost soil", rank="hybrid")
    backward = payload_text(build_vault(FILES, order=sorted(FILES, reverse=True)), "compost soil", rank="hybrid")
    assert forward == backward


@given(st.lists(st.sampled_from(["compost", "soil", "tea", "worms", "dirt", "feeding"]), min_size=1, max_size=3))
def test_property_hybrid_score_equals_rounded_sum(words):
    vault = build_vault(FILES)
    for hit in hybrid(vault, " ".join(words)):
        assert hit.score == round(math.fsum(m.points for m in hit.matched), 6)
        assert {m.channel for m in hit.matched} == {"rrf"}


def test_fuse_ranks_agreement_first():
    vault = build_vault(FILES)
    query = parse_query("x", rank="hybrid")
    arms = [
        Arm("default", "lexical", ["Compost.md", "Worms.md"]),
        Arm("bm25f", "lexical", ["Worms.md", "Compost.md"]),
        Arm("vector", "vector", ["garden/Soil.md", "Worms.md"]),
    ]
    hits = fuse(vault, query, arms)
    assert [h.page.path for h in hits] == ["Worms.md", "Compost.md", "garden/Soil.md"]
    vector = ARM_WEIGHTS["vector"]
    assert hits[0].score == round(rrf_points(1) + rrf_points(0) + rrf_points(1, vector), 6)
    assert [(m.term, m.hits, m.via) for m in hits[2].matched] == [("vector", 1, "vector")]


def test_with_a_vector_arm_the_first_ranks_decide_and_an_exact_title_stays_first():
    vault = build_vault(FILES)
    query = parse_query("compost", rank="hybrid")
    default_hits = hits_for(vault, "compost")
    assert default_hits[0].page.path == "Compost.md"
    # every other arm puts Compost.md last; the name arm keeps it first
    others = ["Worms.md", "garden/Soil.md", "notes/Tea.md", "Compost.md"]
    arms = hybrid_arms(default_hits, others, others)
    assert [a.name for a in arms] == ["default", "bm25f", "vector", "name"]
    hits = fuse(vault, query, arms, k=VECTOR_RRF_K)
    assert hits[0].page.path == "Compost.md"
    for hit in hits:
        weights = {**ARM_WEIGHTS, "name": NAME_WEIGHT}
        assert all(m.points == round(weights[m.term] / (VECTOR_RRF_K + m.hits - 1), 6) for m in hit.matched)


def test_rank_is_validated():
    with pytest.raises(ValueError, match="rank"):
        parse_query("x", rank="fast")


# --- the command line ---------------------------------------------------------------------------


def test_cli_hybrid_without_the_extra_says_so_once_and_answers(tmp_path, monkeypatch, capsys):
    root = write_vault(tmp_path / "v", FILES)
    monkeypatch.setattr(vaultlens.engine.embed, "unavailable", lambda: "no embeddings here")
    requests = "\n".join(json.dumps({"query": q, "rank": "hybrid"}) for q in ("compost", "soil", "tea")) + "\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(requests))
    assert cli.main(["jsonl", "--vault", str(root)]) == 0
    out, err = capsys.readouterr()
    answers = [json.loads(line) for line in out.splitlines()]
    assert len(answers) == 3 and all(a["hits"] for a in answers)
    assert err.count("lexical arms only") == 1 and "no embeddings here" in err


def test_cli_search_rank_flag(tmp_path, monkeypatch, capsys):
    root = write_vault(tmp_path / "v", FILES)
    monkeypatch.setattr(vaultlens.engine.embed, "unavailable", lambda: "no embeddings here")
    assert cli.main(["search", "compost", "--vault", str(root), "--rank", "hybrid", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["hits"][0]["matched"][0]["channel"] == "rrf"
    assert cli.main(["search", "compost", "--vault", str(root), "--rank", "fast"]) == 2
