"""Questions (issue 17): weak terms, the question channels, golden questions and floors.

Weak terms (function words, question scaffolding; data in ``weights.WEAK_WORDS`` and
``SCAFFOLDS``) count only in the phrase and exact-name channels, and ``query_plan.weak``
lists them; a query made only of them means them, so "The Who" and "To Do" still rank first.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from vaultkit import build_vault, components, hits_for

from vaultlens.engine.page import parse_page
from vaultlens.engine.query import parse_query
from vaultlens.engine.render import search_payload
from vaultlens.engine.scan import open_vault
from vaultlens.engine.search import search

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
GOLDEN = [
    tuple(line.split("|", 1))
    for line in (ROOT / "tests" / "data" / "golden_questions.txt").read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.startswith("#")
]
FLOORS = json.loads((ROOT / "tests" / "data" / "eval_floors.json").read_text(encoding="utf-8"))["questions"]

pytestmark = pytest.mark.timeout(120)

BAND = {
    "The Who.md": "# The Who\n\nAn English rock band: who they were and what they played.\n",
    "To Do.md": "# To Do\n\nThings to do this week, what to do first and how to do it.\n",
    "How To.md": "# How To\n\nHow to do things.\n",
    "Notes.md": "The who and the what, to do and how to: the words of every note.\n" * 3,
}


@pytest.mark.parametrize(("query", "expected"), [
    ("The Who", "The Who.md"), ("the who", "The Who.md"), ("To Do", "To Do.md"), ("to do", "To Do.md"),
    ("how to", "How To.md"),
])
def test_a_title_made_of_weak_words_still_ranks_first(query, expected):
    vault = build_vault(BAND)
    assert parse_query(query).weak == ()  # every term would be weak: none is
    hits = hits_for(vault, query)
    assert hits[0].page.path == expected and hits[0].score > hits[1].score
    assert components(hits[0])[0][0] == "title-exact"


def test_incidental_words_are_weak_but_a_title_of_them_still_ranks_first():
    query = parse_query("how do I publish only certain hierarchies instead of my whole vault, e.g. one")
    assert {"certain", "instead", "whole", "e", "g"} <= set(query.weak)
    assert {"publish", "hierarchies", "vault", "one"} <= set(query.terms) - set(query.weak)  # topic words stay
    vault = build_vault({"Just Kind.md": "# Just Kind\n\nA page.\n", "Kind Notes.md": "# Kind Notes\n\njust kind.\n"})
    assert parse_query("just kind").weak == ()  # only incidental words: they are the query
    assert hits_for(vault, "just kind")[0].page.path == "Just Kind.md"
    assert "sort" not in parse_query("sort tasks by due date").weak  # a command word is a topic


def test_weak_terms_are_listed_and_earn_no_term_points():
    query = parse_query("how do I water the tomatoes")
    assert query.weak == ("how", "do", "i", "the")
    vault = build_vault({"Tomatoes.md": "# Tomatoes\n\nWater them how you do the others.\n"})
    hits = search(vault, query)
    assert {c[1] for c in components(hits[0])} <= {"tomatoes", "water", "water tomatoes", ""}
    assert search_payload(vault, query, hits)["query_plan"] == {
        "terms": ["how", "do", "i", "water", "the", "tomatoes"], "weak": ["how", "do", "i", "the"],
    }


def test_scaffolding_is_weak_only_as_a_whole_sequence():
    assert "way" in parse_query("is there a way to sort tasks").weak
    assert "way" not in parse_query("the milky way").weak


def test_the_partial_term_is_never_weak():
    assert "the" not in parse_query("aphids the", prefix=True).weak
    assert "the" in parse_query("aphids the ", prefix=True).weak


def test_body_pair_and_section_term_explain_proximity():
    vault = build_vault({
        "Near.md": "# Near\n\n## Colours\n\nSort the tasks by their priority here.\n",
        "Far.md": "# Far\n\n## One\n\ntasks\n\n## Two\n\npriority sort\n",
    })
    hits = hits_for(vault, "sort tasks by their priority")
    assert hits[0].page.path == "Near.md"
    near = components(hits[0])
    assert ("body-pair", "tasks by their priority", 1, 1, "body", "") in near
    assert sorted(c[1] for c in near if c[0] == "section-term") == ["priority", "tasks"]  # with "sort"
    assert all(c[5] == "Colours" for c in near if c[0] == "section-term")


def test_body_bm25_says_which_collection_statistics_it_used():
    files = {"A.md": "kiwi kiwi\n", "B.md": "apple\n"}
    before = hits_for(build_vault(files), "kiwi")
    (bm25,) = [c for c in components(before[0]) if c[0] == "body-bm25"]
    assert bm25[5] == "collection: in 1 of 2 pages, mean body 1.5 tokens"
    # an unrelated page moves the statistic, and the component says so (no quantising: docs/ranking.md)
    vault = build_vault(files)
    vault.upsert(parse_page("C.md", "pear pear pear pear\n"))
    (after,) = [c for c in components(hits_for(vault, "kiwi")[0]) if c[0] == "body-bm25"]
    assert after[5] == "collection: in 1 of 3 pages, mean body 2.3 tokens"


@pytest.fixture(scope="module")
def example_vault():
    return open_vault(str(ROOT / "examples" / "vault"))[0]


@pytest.mark.parametrize(("question", "expected"), GOLDEN, ids=[q for q, _ in GOLDEN])
def test_golden_question_finds_its_page_in_the_top_three(example_vault, question, expected):
    hits = search(example_vault, parse_query(question, limit=3))
    assert expected in [h.page.path for h in hits], [(h.score, h.page.path) for h in hits]


QUESTION_SETS = sorted((SHARED / "eval" / "questions").glob("*-dev.jsonl")) if (SHARED / "eval").is_dir() else []


@pytest.mark.skipif(not QUESTION_SETS, reason=f"no question sets under {SHARED / 'eval' / 'questions'}")
@pytest.mark.parametrize("dev_set", QUESTION_SETS or [None], ids=lambda p: p.name if p else "none")
def test_question_dev_set_stays_above_its_floor(dev_set):
    name = dev_set.name.removesuffix("-dev.jsonl")
    root = SHARED / "vaults" / name
    if not root.is_dir() or name not in FLOORS:
        pytest.skip(f"no vault or no floor for {name}")
    vault = open_vault(str(root))[0]
    rows = [json.loads(line) for line in dev_set.read_text(encoding="utf-8").splitlines() if line.strip()]
    reciprocal = 0.0
    for row in rows:
        found = [i for i, h in enumerate(search(vault, parse_query(row["query"], limit=10))) if h.page.path in row["relevant"]]
        reciprocal += 1.0 / (found[0] + 1) if found else 0.0
    mrr = round(reciprocal / len(rows), 4)
    assert mrr >= FLOORS[name]["default"]["mrr@10"], (name, mrr)
