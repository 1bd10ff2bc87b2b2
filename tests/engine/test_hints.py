"""The agent hints' rules (engine/hints.py, docs/contracts.md "Hints"), on built vaults."""

from __future__ import annotations

import pytest
from vaultkit import build_vault

from vaultlens.engine.hints import PASSAGE, SUFFICIENT, content_weights, coverage, hints, passage
from vaultlens.engine.operation import Source
from vaultlens.engine.ops import BY_NAME
from vaultlens.engine.query import parse_query
from vaultlens.engine.render import search_payload
from vaultlens.engine.search import search

FILES = {
    "Getting Started/Priority.md": "# Priority\n\nHow do I set a priority on a task? Add the priority emoji to the "
    "task line.\n\n## Levels\n\nHighest, high, medium, low.\nSee [[Dates]] and [[Emoji Reference]].\n",
    "Dates.md": "# Dates\n\nHow do I set a due date on a task? Add the date emoji to the task.\n",
    "Recurring.md": "# Recurring\n\nHow do I make a task repeat? Add a recurrence rule to the task.\n",
    "Statuses.md": "# Statuses\n\nHow do I change the status of a task? Click the checkbox of the task.\n",
    "Callouts.md": "---\ntags: [query]\n---\n# Callouts\n\nHow do I find a task inside a callout block? "
    "Queries read callouts too.\n",
    "Emoji Reference.md": "# Emoji Reference\n\nEvery emoji signifier, with its meaning.\n",
}
QUERIES = ("Priority", "how do I set a priority on a task", "callout block", "emoji meaning", "zzzz qqqq",
           "task", "how do i")


@pytest.fixture(scope="module")
def vault():
    return build_vault(FILES)


def h(vault, text, rank="default", **kw):
    query = parse_query(text, limit=10, hints=True, rank=rank)
    return hints(vault, query, search(vault, query), **kw)


def test_words_on_half_the_pages_are_no_content_words(vault):
    weights = content_weights(vault, parse_query("how do I set a priority on a task").terms)
    assert "priority" in weights and "set" in weights
    assert not {"how", "do", "i", "a", "task"} & set(weights)  # on every page: they say nothing
    assert weights["priority"] > weights["set"]  # rarer words weigh more (idf)
    assert set(content_weights(vault, ("how", "do", "i"))) == {"how", "do", "i"}  # only such words: all count


def test_coverage_counts_each_word_by_its_best_field(vault):
    weights = content_weights(vault, ("priority", "levels", "highest", "checkbox"))
    assert len(set(weights.values())) == 1  # each on one page: the same weight
    # Priority: "priority" in its title (1), "levels" in a heading (0.8), "highest" in its body (0.6)
    assert coverage(vault, "Getting Started/Priority.md", weights) == pytest.approx((1 + 0.8 + 0.6 + 0) / 4)
    assert coverage(vault, "Recurring.md", weights) == 0.0


def test_an_answer_found_by_both_rankings_is_sufficient_and_names_the_pages_to_read(vault):
    got = h(vault, "how do I set a priority on a task")
    assert got["sufficient"] and got["next_action"] == "synthesize" and got["max_score"] >= SUFFICIENT
    assert got["read"][0] == "Getting Started/Priority.md"
    assert got["evidence"]["arms_agree"] is True and got["gap_keywords"] == []
    exact = h(vault, "Emoji Reference")
    assert exact["max_score"] == 1.0 and exact["read"][0] == "Emoji Reference.md"


def test_the_hints_mean_the_same_under_hybrid(vault):
    for text in QUERIES:
        default, hybrid = h(vault, text), h(vault, text, rank="hybrid")
        query = parse_query(text, limit=10, rank="hybrid")
        tops = [search(vault, parse_query(text, limit=10))[:1], search(vault, query)[:1]]
        if tops[0] and tops[0][0].page.path == tops[1][0].page.path:  # the same top page: the same judgement
            same = ("sufficient", "max_score", "evidence", "next_action", "result_count")
            assert {k: hybrid[k] for k in same} == {k: default[k] for k in same}, text
            assert hybrid["read"][:1] == default["read"][:1], text  # then the 2nd and 3rd of each ranking
        else:
            assert hybrid["gap_keywords"] == default["gap_keywords"], text
    assert h(vault, "Priority", rank="hybrid")["max_score"] == 1.0  # not ~0.001, as a fused score would give


def test_a_weak_answer_says_what_to_do_instead(vault):
    none = h(vault, "zzzz qqqq")
    assert none["next_action"] == "broaden" and not none["sufficient"] and none["gap_keywords"] == ["zzzz", "qqqq"]
    partial = h(vault, "priority zzzz qqqq wwww")  # one content word in four
    assert not partial["sufficient"] and partial["read"] == [] and partial["gap_keywords"] == ["zzzz", "qqqq", "wwww"]
    assert partial["next_action"] == "expand" and "Dates.md" in partial["related_ids"]


def test_suggestions_never_repeat_a_page_already_shown(vault):
    for text in (*QUERIES, "priority zzzz qqqq", "levels zzzz"):
        query = parse_query(text, limit=10, hints=True)
        hits = search(vault, query)
        shown = {hit.page.title.casefold() for hit in hits}
        named = set()
        for hit in hits:
            fields = vault.fields[hit.page.path]
            named.update(fields.title_set, fields.alias_set, fields.heading_set, fields.tag_names, fields.tag_tokens)
            named.update(fields.file_tokens)
        for suggestion in hints(vault, query, hits)["suggested_queries"]:
            assert suggestion.casefold() not in shown, (text, suggestion)
            assert set(suggestion.casefold().split()) - named, (text, suggestion)  # a word no hit is named by


def test_the_threshold_is_a_parameter(vault):
    two_of_three = "recurrence rule checkbox"  # Recurring holds two of three rare words in one passage
    assert h(vault, two_of_three)["max_score"] == pytest.approx(2 / 3, abs=1e-3)
    assert h(vault, two_of_three)["sufficient"]
    assert not h(vault, two_of_three, threshold=0.9)["sufficient"]
    source = Source(vault, "", lambda path: None)
    run = BY_NAME["search"].run
    strict = run(source, two_of_three, hints=True, hints_threshold=0.9, no_timing=True)
    assert not strict["hints"]["sufficient"] and strict["hints"]["next_action"] != "synthesize"
    assert run(source, two_of_three, hints=True, no_timing=True)["hints"]["sufficient"]
    with pytest.raises(ValueError, match="hints_threshold"):
        run(source, two_of_three, hints=True, hints_threshold=1.5)


FILLER = " ".join(f"filler{i}" for i in range(PASSAGE))  # PASSAGE words apart: no longer one passage
HUB = {
    # a long page holding every word, but each in another place (a changelog, an FAQ)
    "Changelog.md": f"# Changelog\n\n## 1.0\n\nA glaze fix. {FILLER}\n\nKiln notes.\n\n## 2.0\n\nCone charts.\n",
    "Firing.md": "# Firing\n\nWhich cone to fire a glaze to in the kiln.\n",
    "Clay.md": "# Clay\n\nClay bodies, wedging and drying.\n",
    "Tools.md": "# Tools\n\nRibs, wires and a banding wheel.\n",
}


def test_a_passage_holds_the_words_together():
    vault = build_vault(HUB)
    weights = content_weights(vault, ("glaze", "kiln", "cone"))
    assert coverage(vault, "Changelog.md", weights) == coverage(vault, "Firing.md", weights) == pytest.approx(0.6)
    assert passage(vault, "Firing.md", weights) == pytest.approx(1.0)  # one sentence holds all three
    assert passage(vault, "Changelog.md", weights) == pytest.approx(1 / 3)  # never two of them together
    assert passage(vault, "Clay.md", weights) == 0.0
    named = content_weights(vault, ("firing", "glaze"))  # a word in the name counts in every passage
    assert passage(vault, "Firing.md", named) == pytest.approx(1.0)
    got = h(vault, "which cone should I fire a glaze to in the kiln")
    assert got["read"][0] == "Firing.md" and got["sufficient"] and got["evidence"]["passage"] == 1.0
    hub = hints(vault, parse_query("glaze kiln cone", limit=10, hints=True),
                tuple(x for x in search(vault, parse_query("glaze kiln cone", limit=10)) if x.page.path == "Changelog.md"))
    assert not hub["sufficient"] and hub["max_score"] < SUFFICIENT  # the hub alone is not an answer


def test_explain_levels_keep_the_ranking(vault):
    query = parse_query("how do I set a priority on a task", limit=5)
    hits = search(vault, query)
    full = search_payload(vault, query, hits)
    summary = search_payload(vault, query, hits, explain="summary")
    bare = search_payload(vault, query, hits, explain="none")
    assert [x["file"] for x in full["hits"]] == [x["file"] for x in summary["hits"]] == [x["file"] for x in bare["hits"]]
    for f, s, n in zip(full["hits"], summary["hits"], bare["hits"]):
        assert f["score"] == s["score"] == n["score"] and f["snippet"] == s["snippet"] == n["snippet"]
        assert "matched" not in s and "matched" not in n and "channels" not in n
        totals = {}
        for m in f["matched"]:
            totals[m["channel"]] = totals.get(m["channel"], 0) + m["points"]
        best = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        assert [(c["channel"], c["points"]) for c in s["channels"]] == [(c, pytest.approx(p)) for c, p in best]
    assert search_payload(vault, query, hits, explain="full") == full


class FixedArm:
    """A vector arm that ranks the pages it was given, in that order (engine.hybrid.VectorArm)."""

    def __init__(self, *paths: str) -> None:
        self.paths = list(paths)

    def rank(self, vault, query, limit):
        return self.paths[:limit]


def test_under_hybrid_with_vectors_the_vector_arm_judges_too(vault):
    text = "how do I set a priority on a task"
    query = parse_query(text, limit=10, hints=True, rank="hybrid")
    agreeing = search(vault, query, FixedArm("Getting Started/Priority.md", "Dates.md"))
    assert agreeing[0].page.path == "Getting Started/Priority.md"
    assert hints(vault, query, agreeing)["evidence"]["arms_agree"] is True
    # the vector arm ran but does not rank the top page among its first 3: the arms disagree
    away = search(vault, query, FixedArm("Emoji Reference.md"))
    assert away[0].page.path == "Getting Started/Priority.md"
    got = hints(vault, query, away)
    assert got["evidence"]["arms_agree"] is False
    assert got["max_score"] == round(got["evidence"]["coverage"] * 0.5, 3)
    # lexical arms alone (no vector arm ran): the two lexical arms decide, as before
    assert h(vault, text, rank="hybrid")["evidence"]["arms_agree"] is True


def test_suggestions_hold_what_the_top_hit_lacks_and_only_linked_pages_the_query_names(vault):
    got = h(vault, "priority levels repeat")  # Priority holds two words; "repeat" is only in Recurring's text
    assert "repeat" in got["suggested_queries"]
    # Priority links to Dates and Emoji Reference, but neither is named by a word of the query
    weak = h(vault, "priority zzzz qqqq wwww")
    assert not {"Dates", "Emoji Reference"} & set(weak["suggested_queries"])
    assert "Dates.md" in weak["related_ids"]  # still offered to read (expand)
    assert "zzzz qqqq wwww" not in weak["suggested_queries"]  # words no page holds are no refinement
    # the query's content words alone would rank the same pages (weak words earn no points): never offered
    assert "set priority task" not in h(vault, "how do I set a priority on a task zzzz")["suggested_queries"]


def test_the_threshold_is_a_setting(tmp_path):
    from vaultlens.engine.scan import load_vault

    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    two_of_three = "recurrence rule checkbox"  # max_score 2/3
    run = BY_NAME["search"].run
    vault = load_vault(str(tmp_path), cache=None).vault

    def sufficient(source, **kw):
        return run(source, two_of_three, hints=True, no_timing=True, **kw)["hints"]["sufficient"]

    plain = Source(vault, str(tmp_path), lambda path: None)
    assert sufficient(plain)  # 0.5
    (tmp_path / ".vaultlens.toml").write_text("[search]\nhints_threshold = 0.9\n", encoding="utf-8")
    assert not sufficient(plain)  # the vault's setting
    assert sufficient(plain, hints_threshold=0.6)  # a search's own threshold wins
    assert sufficient(Source(vault, str(tmp_path), lambda path: None, hints_threshold=0.5))  # the server's setting
    (tmp_path / ".vaultlens.toml").write_text("[search]\nhints_threshold = 7\n", encoding="utf-8")
    assert sufficient(plain)  # not a number from 0 to 1: the default
