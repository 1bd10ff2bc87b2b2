"""Ranking quality channels (issue 7), one at a time, and the exact-match guarantee.

An exact title, alias or file-name match always ranks first; headings, path segments, Dendron
file names, BM25 body weight, diacritics, typos and the link prior each earn their own
explained component. Components are (channel, term, hits, points, field, via) tuples.
"""

from __future__ import annotations

import json
from fractions import Fraction
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vaultkit import (
    build_vault,
    check_ranking_contract,
    components,
    hits_for,
    only_hit,
    payload_text,
)

from vaultlens.engine.query import parse_query
from vaultlens.engine.scoring import exact_points
from vaultlens.engine.weights import (
    BOUNDS,
    CHANNELS,
    EXACT_BASE,
    FIELD,
    FIXED_STEP,
    FOLDED_MINOR,
    HEADING_EXACT,
    ONCE,
    PATH_LEAF,
    POINTS,
    TERM,
    TERM_FIELDS,
    most_points,
)


def channel(hit, name: str) -> list[tuple]:
    return [c for c in components(hit) if c[0] == name]


def paths(hits) -> list[str]:
    return [h.page.path for h in hits]


# --- the exact-match guarantee ------------------------------------------------------------------


def _most_per_term() -> float:
    """The most one query term can earn on a page, from the declarations (``weights.BOUNDS``):
    the term itself in some of title, aliases, tags and body (``matched``), where its own
    channels may fire and no stand-in does; stand-ins in the others, one FIELD stand-in per
    field; the channels of headings and the path anywhere; never two that exclude each other."""
    channels = [c for c in CHANNELS if BOUNDS[c].pruned and BOUNDS[c].per in (TERM, FIELD)]
    best = 0.0
    for matched in (set(m) for k in range(len(TERM_FIELDS) + 1) for m in combinations(TERM_FIELDS, k)):
        for k in range(len(channels) + 1):
            for fired in combinations(channels, k):
                if any(other in fired for c in fired for other in BOUNDS[c].without):
                    continue
                total, per_field, ok = 0.0, dict.fromkeys(TERM_FIELDS, 0.0), True
                for c in fired:
                    bound = BOUNDS[c]
                    if bound.stand_in and bound.per == FIELD:
                        for f in set(bound.fields) - matched:
                            per_field[f] = max(per_field[f], most_points(c, f))
                        continue
                    where = [f for f in bound.fields if (f not in matched if bound.stand_in else
                                                        f in matched or f not in TERM_FIELDS)]
                    if not where:
                        ok = False
                        break
                    total += max(most_points(c, f) for f in where)
                if ok:
                    best = max(best, total + sum(per_field.values()))
    return best


def _most_once() -> float:
    """The most the once-per-page channels give a page without an exact match (from BOUNDS)."""
    channels = [c for c in CHANNELS if BOUNDS[c].pruned and BOUNDS[c].per == ONCE and c != "title-exact"]
    return max(
        sum(most_points(c) for c in fired)
        for k in range(len(channels) + 1)
        for fired in combinations(channels, k)
        if not any(other in fired for c in fired for other in BOUNDS[c].without)
    )


def test_title_exact_outweighs_everything_a_non_exact_page_can_earn():
    """The bound in weights.py, derived from the declarations: per query term, what the term and
    the words standing in for it can earn at most; per query, every once-only channel at its
    most, those that exclude each other aside."""
    per_term, once = _most_per_term(), _most_once()
    assert (per_term, once) == (23.5, 40)  # as weights.py says
    assert POINTS["title-exact"] >= per_term
    assert EXACT_BASE > once
    for n in range(1, 12):
        assert exact_points(parse_query(" ".join(f"w{i}" for i in range(n)))) > once + n * per_term


RIVALS = {
    # every field of these pages holds the query words, many times, and they are linked to
    "Task Notes Guide.md": (
        "---\naliases: [task notes handbook, tasks notes]\ntags: [task, notes, task/notes]\n---\n"
        "# Task Notes\n## task notes\ntask notes task notes task notes task notes\n"
    ),
    # a Dendron note whose own name is the query (leaf-exact), in folders named like it too
    "task/notes/tasks.task-notes.md": "---\ntitle: Notes on tasks\n---\n# Task notes\ntask task notes notes\n",
    "Hub.md": "[[Task Notes Guide]] [[tasks.task-notes]] [[Task Notes Guide]]\n",
    "Hub2.md": "[[Task Notes Guide]] [[tasks.task-notes]]\n",
}


@pytest.mark.parametrize(
    "path, text, query",
    [
        ("Task Notes.md", "", "task notes"),  # the file name is the title
        ("Task Notes.md", "", "TASK NOTES"),  # case does not matter
        ("Task Notes.md", "", "task-notes"),  # nor punctuation between the words
        ("x.md", "---\ntitle: Task Notes\n---\n", "task notes"),  # a frontmatter title
        ("x.md", "---\ntitle: Other\naliases: [Task Notes]\n---\n", "task notes"),  # an alias
        ("Tâsk Nötes.md", "", "task notes"),  # diacritics aside
        ("dendron.task-notes.md", "---\ntitle: Elsewhere\n---\n", "dendron task notes"),  # the whole file name
    ],
)
def test_an_exact_title_alias_or_file_name_ranks_first(path, text, query):
    hits = hits_for(build_vault({**RIVALS, path: text}), query)
    check_ranking_contract(hits)
    assert hits[0].page.path == path, [(h.page.path, h.score) for h in hits]
    assert channel(hits[0], "title-exact")
    assert hits[0].score > hits[1].score


def test_title_exact_names_the_alias_or_file_name_it_equals():
    alias = only_hit({"x.md": "---\ntitle: Other\naliases: [Task Notes]\n---\n"}, "task notes", "x.md")
    assert channel(alias, "title-exact") == [("title-exact", "Task Notes", 1, EXACT_BASE + 2 * 24, "alias", "")]
    file = only_hit({"a.b.md": "---\ntitle: Other\n---\n"}, "a b", "a.b.md")
    assert channel(file, "title-exact") == [("title-exact", "a.b", 1, EXACT_BASE + 2 * 24, "file", "")]
    title = only_hit({"Kiwi.md": ""}, "kiwi", "Kiwi.md")
    assert channel(title, "title-exact") == [("title-exact", "", 1, EXACT_BASE + 24, "", "")]


def test_title_exact_needs_the_whole_title():
    vault = build_vault({"Task Notes Guide.md": "", "Notes.md": ""})
    assert not channel(only_hit(vault, "task notes", "Task Notes Guide.md"), "title-exact")
    assert not channel(only_hit(vault, "notes task", "Task Notes Guide.md"), "title-exact")


WORDS = ["task", "notes", "kiwi", "graph", "rag", "deep", "café", "runs"]


@st.composite
def rival_page(draw) -> str:
    words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
    lines = ["---", "title: " + draw(words), "aliases: [" + ", ".join(draw(st.lists(words, max_size=2))) + "]",
             "tags: [" + ", ".join(draw(st.lists(st.sampled_from(WORDS), max_size=3))) + "]", "---"]
    lines += [f"{'#' * draw(st.integers(1, 3))} {draw(words)}" for _ in range(draw(st.integers(0, 3)))]
    lines += [draw(words) for _ in range(draw(st.integers(0, 6)))]
    lines += [f"[[{draw(st.sampled_from(['Exact', 'r0', 'r1']))}]]" for _ in range(draw(st.integers(0, 3)))]
    return "\n".join(lines) + "\n"


@settings(max_examples=60)
@given(st.lists(rival_page(), min_size=1, max_size=5), st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
       st.booleans())
def test_property_an_exact_match_outranks_every_page_without_one(rivals, words, as_alias):
    query = " ".join(words)
    exact = f"---\ntitle: Exact\naliases: [{query}]\n---\n" if as_alias else f"---\ntitle: {query}\n---\n"
    files = {f"r{i}.md": text for i, text in enumerate(rivals)} | {"Exact.md": exact}
    hits = hits_for(build_vault(files), query)
    exact_hits = [h for h in hits if channel(h, "title-exact")]
    assert hits[0] in exact_hits
    others = [h.score for h in hits if h not in exact_hits]
    assert not others or min(h.score for h in exact_hits) > max(others)


# --- headings ------------------------------------------------------------------------------------


def test_heading_phrase_exact_heading_and_contained():
    files = {
        "a.md": "# Intro\n## Short Mode\ntext\n",
        "b.md": "## Using short mode in queries\n",
        "c.md": "## Mode\nshort\n",
    }
    vault = build_vault(files)
    assert channel(only_hit(vault, "short mode", "a.md"), "heading-phrase") == [
        ("heading-phrase", "Short Mode", 1, HEADING_EXACT, "heading", "")
    ]
    assert channel(only_hit(vault, "short mode", "b.md"), "heading-phrase") == [
        ("heading-phrase", "Using short mode in queries", 1, POINTS["heading-phrase"], "heading", "")
    ]
    assert channel(only_hit(vault, "short mode", "c.md"), "heading-phrase") == []
    assert paths(hits_for(vault, "short mode"))[:2] == ["a.md", "b.md"]


def test_heading_term_per_term_in_any_heading():
    hit = only_hit({"a.md": "# Alpha\n## Beta gamma\nalpha\n"}, "alpha gamma delta", "a.md")
    assert channel(hit, "heading-term") == [
        ("heading-term", "alpha", 1, 2, "heading", ""),
        ("heading-term", "gamma", 1, 2, "heading", ""),
    ]


# --- paths and Dendron file names ----------------------------------------------------------------


def test_path_term_for_folders_and_dotted_file_name_segments():
    files = {
        "queries/layout.md": "---\ntitle: Layout\n---\nkiwi\n",
        "dendron.topic.lookup.modifiers.md": "---\ntitle: Modifiers\n---\nkiwi\n",
    }
    vault = build_vault(files)
    assert channel(only_hit(vault, "queries layout", "queries/layout.md"), "path-term") == [
        ("path-term", "queries", 1, POINTS["path-term"], "path", "")
    ]
    hit = only_hit(vault, "lookup modifiers", "dendron.topic.lookup.modifiers.md")
    assert channel(hit, "path-term") == [("path-term", "lookup", 1, POINTS["path-term"], "path", "")]
    # a title token is never also a path-term; the file name's last segment counts more
    untitled = only_hit({"dendron.topic.pods.md": "---\ntitle: Export\n---\n"}, "pods topic", "dendron.topic.pods.md")
    assert channel(untitled, "path-term") == [
        ("path-term", "pods", 1, PATH_LEAF, "file", ""),
        ("path-term", "topic", 1, POINTS["path-term"], "path", ""),
    ]


def test_file_name_segments_make_a_page_a_candidate_folders_do_not():
    vault = build_vault({"garden.soil.md": "", "garden/Compost.md": "", "Other.md": "x"})
    assert paths(hits_for(vault, "garden")) == ["garden.soil.md"]
    assert channel(only_hit(vault, "compost garden", "garden/Compost.md"), "path-term") == [
        ("path-term", "garden", 1, POINTS["path-term"], "path", "")
    ]


def test_leaf_exact_the_query_is_a_dendron_notes_own_name():
    files = {
        "dendron.topic.pod.md": "---\ntitle: Pods\n---\nexport and import\n",
        "dendron.topic.pod.cli.md": "---\ntitle: Pod CLI\n---\nthe pod command\n",
    }
    hits = hits_for(build_vault(files), "pod")
    assert paths(hits)[0] == "dendron.topic.pod.md"
    assert channel(hits[0], "leaf-exact") == [("leaf-exact", "dendron.topic.pod", 1, 15, "file", "")]


# --- title coverage --------------------------------------------------------------------------------


def test_title_cover_a_title_the_query_names_whole_outranks_a_longer_one():
    files = {"Grouping.md": "how to group", "Custom Grouping.md": "how to group"}
    hits = hits_for(build_vault(files), "group")
    assert paths(hits) == ["Grouping.md", "Custom Grouping.md"]
    assert channel(hits[0], "title-cover") == [("title-cover", "", 1, POINTS["title-cover"], "", "")]
    assert channel(hits[1], "title-cover") == []


# --- body-bm25 --------------------------------------------------------------------------------------


def test_body_bm25_weighs_rare_words_over_common_ones():
    files = {f"p{i}.md": "common words here " * 2 for i in range(20)}
    files |= {"a.md": "common rare", "b.md": "common common"}
    vault = build_vault(files)
    (rare,) = channel(only_hit(vault, "rare", "a.md"), "body-bm25")
    assert rare[3] > 1
    assert channel(only_hit(vault, "common", "a.md"), "body-bm25") == []  # in every page: no weight
    assert paths(hits_for(vault, "rare common"))[0] == "a.md"


def test_body_bm25_is_capped_and_in_eighths():
    vault = build_vault({"a.md": "zebra " * 50, **{f"p{i}.md": "filler" for i in range(200)}})
    (bm25,) = channel(only_hit(vault, "zebra", "a.md"), "body-bm25")
    assert bm25[3] == POINTS["body-bm25"] and bm25[2] == 50


@given(st.lists(st.sampled_from(["kiwi", "mango", "kiwi kiwi", "# Kiwi", "[[b]]", "café"]), max_size=12),
       st.sampled_from(["kiwi", "kiwi mango", "cafe", "mangoes", "kiwii"]))
def test_property_points_are_exact_binary_fractions_and_the_json_score_is_their_sum(body, query):
    files = {"a.md": " ".join(body), "b.md": "mango [[a]] kiwi", "c.md": "# Mango\n[[a]]"}
    payload = json.loads(payload_text(build_vault(files), query))
    for hit in payload["hits"]:
        points = [m["points"] for m in hit["matched"]]
        assert all((Fraction(p) * FIXED_STEP).denominator == 1 for p in points)
        assert hit["score"] == sum(points) == sum(reversed(points))


# --- folded, fuzzy ----------------------------------------------------------------------------------


def test_folded_term_matches_without_diacritics_either_way():
    files = {"Café.md": "un café naïve", "Cafe Two.md": "cafe naive"}
    vault = build_vault(files)
    hit = only_hit(vault, "cafe", "Café.md")
    assert channel(hit, "folded-term") == [
        ("folded-term", "cafe", 1, POINTS["folded-term"], "title", "café"),
        ("folded-term", "cafe", 1, FOLDED_MINOR, "body", "café"),
    ]
    assert channel(only_hit(vault, "naïve", "Cafe Two.md"), "folded-term") == [
        ("folded-term", "naïve", 1, FOLDED_MINOR, "body", "naive")
    ]


def test_fuzzy_term_corrects_a_word_the_vault_does_not_know():
    files = {"Dendron Config.md": "the dendron configuration", "Other.md": "dendrites"}
    vault = build_vault(files)
    hit = only_hit(vault, "dendrom config", "Dendron Config.md")
    assert channel(hit, "fuzzy-term") == [("fuzzy-term", "dendrom", 1, POINTS["fuzzy-term"], "title", "dendron")]
    assert paths(hits_for(vault, "dnedron"))[0] == "Dendron Config.md"  # a transposition is one edit


@pytest.mark.parametrize("query", ["dendron", "cat", "dendrons"])
def test_fuzzy_term_never_for_known_or_short_words(query):
    vault = build_vault({"Dendron.md": "a bat", "Dendrons.md": "x"})
    assert all(not channel(h, "fuzzy-term") for h in hits_for(vault, query))


def test_fuzzy_term_is_below_an_exact_match():
    vault = build_vault({"Config.md": "", "Confog Notes.md": ""})
    assert paths(hits_for(vault, "confog")) == ["Confog Notes.md"]
    assert paths(hits_for(vault, "config")) == ["Config.md"]


# --- link-prior -------------------------------------------------------------------------------------


def test_link_prior_counts_the_pages_that_link_here():
    files = {
        "Target.md": "kiwi [[Target]]",  # a self-link does not count
        "Other.md": "kiwi",
        **{f"s{i}.md": "[[Target]] [[Target]]" for i in range(3)},  # a page counts once
        "typed.md": "---\nrelated: [[Target]]\n---\n",  # a typed edge is a link too
    }
    vault = build_vault(files)
    (prior,) = channel(only_hit(vault, "kiwi", "Target.md"), "link-prior")
    assert prior[:3] == ("link-prior", "", 4) and 0 < prior[3] < POINTS["link-prior"]
    assert paths(hits_for(vault, "kiwi")) == ["Target.md", "Other.md"]
    assert channel(only_hit(vault, "kiwi", "Other.md"), "link-prior") == []


def test_link_prior_never_makes_a_hit_on_its_own():
    files = {"Target.md": "nothing", **{f"s{i}.md": "[[Target]]" for i in range(5)}}
    assert hits_for(build_vault(files), "kiwi") == ()


def test_link_prior_is_full_at_sixteen_pages_and_capped():
    files = {"Target.md": "kiwi", **{f"s{i}.md": "[[Target]]" for i in range(20)}}
    (prior,) = channel(only_hit(build_vault(files), "kiwi", "Target.md"), "link-prior")
    assert prior == ("link-prior", "", 16, POINTS["link-prior"], "", "collection: linked from 16+ pages")
