"""The ranking contract: every channel and its points, component order, hit order, filters,
the vocabulary, the --graph walk and snippets.

Components are written as (channel, term, hits, points, field, via) tuples.
"""

from __future__ import annotations

import dataclasses
import re

import pytest
from vaultkit import (
    build_vault,
    check_ranking,
    check_ranking_contract,
    components,
    hits_for,
    only_hit,
    payload_text,
)

import vaultlens.engine.search
from vaultlens.engine.query import normalize_folder, parse_query
from vaultlens.engine.snippet import SNIPPET_CHARS
from vaultlens.engine.vocabulary import parse_vocabulary
from vaultlens.engine.scoring import TermPlan
from vaultlens.engine.weights import (
    ARM,
    BODY_CAP,
    BOUNDS,
    CHANNELS,
    EXACT_BASE,
    FIELD,
    GRAPH_HOP2,
    ONCE,
    POINTS,
    SYNONYM_MINOR,
    TERM,
)

VOCABULARY = "---\ngroups:\n  - canonical: automobile\n    variants: [car, auto]\n---\n"

# The channels of the ranking contract (engine issue) and the as-you-type ones that came before
# the ranking-quality channels. The tests in this file pin each of them down one at a time, so
# they look at these components only; tests/engine/test_ranking.py covers the channels added since.
CONTRACT = (*CHANNELS[:8], "context-edge", "prefix-term", "prefix-phrase")


def contract(hit) -> list[tuple]:
    """A hit's components on the contract's channels, in order."""
    return [c for c in components(hit) if c[0] in CONTRACT]


def test_points_table_is_the_contract():
    assert dict(POINTS) == {
        "title-phrase": 10,
        "title-term": 5,
        "alias-term": 4,
        "tag-term": 4,
        "body-term": 1,
        "synonym-term": 2,
        "stem-term": 1,
        "graph-edge": 2,
        "context-edge": 1,
        "prefix-term": 3,
        "prefix-phrase": 8,
        # ranking quality (issue 7), appended: see README.md, Ranking, and test_ranking.py
        "title-exact": 24,
        "leaf-exact": 15,
        "title-cover": 3,
        "heading-phrase": 4,
        "heading-term": 2,
        "path-term": 2,
        "body-bm25": 3,
        "folded-term": 3,
        "fuzzy-term": 2,
        "link-prior": 2,
        "body-pair": 1,  # questions (issue 17): see docs/ranking.md
        "section-term": 1.5,
        "rrf": 1,
    }
    assert CHANNELS[:8] == (
        "title-phrase", "title-term", "alias-term", "tag-term", "body-term", "synonym-term", "stem-term", "graph-edge",
    )
    assert (BODY_CAP, SYNONYM_MINOR, GRAPH_HOP2) == (3, 1, 1)
    with pytest.raises(TypeError):
        POINTS["title-term"] = 50  # type: ignore[index]


def test_every_channel_declares_its_bound():
    """A channel in POINTS without a bound in BOUNDS (what the top-k search prunes with: how often
    it fires, the fields it reads, the most it earns) fails here; so does a malformed one."""
    assert list(BOUNDS) == list(POINTS), "declare each channel's bound in weights.BOUNDS, in POINTS' order"
    plan_words = {f.name for f in dataclasses.fields(TermPlan)}
    for name, bound in BOUNDS.items():
        assert bound.per in (ONCE, TERM, FIELD, ARM), name
        assert bound.fields and set(bound.most) <= set(bound.fields), name
        assert set(bound.without) <= set(POINTS) - {name}, name
        assert not bound.stand_in or bound.stand_in in plan_words, name  # the TermPlan words it matches
        assert not (bound.pruned and bound.per == ARM), name  # per arm: not bounded per page
    with pytest.raises(TypeError):
        BOUNDS["title-term"] = BOUNDS["alias-term"]  # type: ignore[index]


# --- one channel at a time -------------------------------------------------------------------


def test_title_phrase_and_title_terms():
    hit = only_hit({"Graph RAG.md": "unrelated body"}, "graph rag", "Graph RAG.md")
    assert contract(hit) == [
        ("title-phrase", "", 1, 10, "", ""),
        ("title-term", "graph", 1, 5, "", ""),
        ("title-term", "rag", 1, 5, "", ""),
    ]
    # the query is the whole title: title-exact on top (test_ranking.py), nothing else
    assert hit.score == 20 + EXACT_BASE + 2 * POINTS["title-exact"]


def test_title_phrase_counts_once_and_needs_the_tokens_in_order():
    twice = only_hit({"p.md": "---\ntitle: Graph RAG and Graph RAG\n---\n"}, "graph rag", "p.md")
    assert [c[0] for c in contract(twice)].count("title-phrase") == 1
    assert twice.score == 20
    reversed_ = only_hit({"p.md": "---\ntitle: RAG Graph\n---\n"}, "graph rag", "p.md")
    gapped = only_hit({"p.md": "---\ntitle: Graph of RAG\n---\n"}, "graph rag", "p.md")
    for hit in (reversed_, gapped):
        assert [c[0] for c in contract(hit)] == ["title-term", "title-term"]


def test_title_phrase_in_an_alias_names_the_alias():
    files = {"rag.md": "---\ntitle: RAG\naliases: [Retrieval Augmented Generation, Other]\n---\n"}
    hit = only_hit(files, "Retrieval augmented", "rag.md")
    assert contract(hit) == [
        ("title-phrase", "Retrieval Augmented Generation", 1, 10, "", ""),
        ("alias-term", "augmented", 1, 4, "", ""),
        ("alias-term", "retrieval", 1, 4, "", ""),
    ]


def test_title_phrase_prefers_the_title_and_fires_once_over_several_aliases():
    files = {"p.md": "---\ntitle: Deep Learning\naliases: [deep learning, Deep Learning Notes]\n---\n"}
    hit = only_hit(files, "deep learning", "p.md")
    assert [c[:2] for c in contract(hit)] == [
        ("title-phrase", ""),
        ("title-term", "deep"),
        ("title-term", "learning"),
    ]
    files = {"p.md": "---\ntitle: DL\naliases: [deep learning, Deep Learning Notes]\n---\n"}
    hit = only_hit(files, "deep learning", "p.md")
    assert [c[:2] for c in contract(hit) if c[0] == "title-phrase"] == [("title-phrase", "deep learning")]


def test_alias_term_only_for_terms_not_in_the_title():
    files = {"n.md": "---\ntitle: Neural Nets\naliases: [Neural Networks]\n---\n"}
    hit = only_hit(files, "neural networks", "n.md")
    assert contract(hit) == [
        ("title-phrase", "Neural Networks", 1, 10, "", ""),
        ("title-term", "neural", 1, 5, "", ""),
        ("alias-term", "networks", 1, 4, "", ""),
    ]


@pytest.mark.parametrize(
    "tags, query, expected",
    [
        ("[ml/transformers]", "transformers", [("tag-term", "transformers", 1, 4, "", "")]),
        ("[ml/transformers]", "ml", [("tag-term", "ml", 1, 4, "", "")]),
        ("[ml/transformers]", "ml transformers", [
            ("tag-term", "ml", 1, 4, "", ""), ("tag-term", "transformers", 1, 4, "", ""),
        ]),
        ("[a/b/c]", "b", [("tag-term", "b", 1, 4, "", "")]),
        ("[Kiwi]", "kiwi", [("tag-term", "kiwi", 1, 4, "", "")]),
    ],
)
def test_tag_term(tags, query, expected):
    hit = only_hit({"t.md": f"---\ntags: {tags}\n---\n"}, query, "t.md")
    assert contract(hit) == expected


def test_tag_term_needs_the_whole_tag_or_segment():
    vault = build_vault({"t.md": "---\ntags: [machine-learning]\n---\n", "u.md": "#kiwifruit"})
    assert all(c[0] != "tag-term" for h in hits_for(vault, "machine") for c in contract(h))
    assert hits_for(vault, "kiwi") == ()


def test_inline_tags_score_as_tags():
    hit = only_hit({"t.md": "text #garden/compost"}, "compost", "t.md")
    assert ("tag-term", "compost", 1, 4, "", "") in contract(hit)


@pytest.mark.parametrize("count, points", [(1, 1), (2, 2), (3, 3), (4, 3), (9, 3)])
def test_body_term_counts_occurrences_capped(count, points):
    body = " ".join(["Apple"] * count) + " other words"
    hit = only_hit({"b.md": body}, "apple", "b.md")
    assert contract(hit) == [("body-term", "apple", count, points, "body", "")]


def test_body_term_per_term_and_never_from_frontmatter():
    files = {"b.md": "---\ndescription: kiwi kiwi kiwi\n---\nkiwi mango mango\n"}
    hit = only_hit(files, "kiwi mango", "b.md")
    assert contract(hit) == [
        ("body-term", "mango", 2, 2, "body", ""),
        ("body-term", "kiwi", 1, 1, "body", ""),
    ]


def test_tokens_are_unicode_letter_and_digit_runs_casefolded():
    files = {"u.md": "Straße café_au_lait v2.0 naïve"}
    assert contract(only_hit(files, "STRASSE", "u.md")) == [("body-term", "strasse", 1, 1, "body", "")]
    assert contract(only_hit(files, "Café", "u.md")) == [("body-term", "café", 1, 1, "body", "")]
    assert contract(only_hit(files, "v2", "u.md")) == [("body-term", "v2", 1, 1, "body", "")]
    # "naive" is "naïve" without its diacritic: a folded-term match (test_ranking.py), not body-term
    assert contract(only_hit(files, "naive", "u.md")) == []


# --- synonyms and stems ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "page, expected",
    [
        ("---\ntitle: Automobile Guide\n---\n", [("synonym-term", "car", 1, 2, "title", "automobile")]),
        ("---\ntitle: Guide\naliases: [Auto Manual]\n---\n", [("synonym-term", "car", 1, 2, "alias", "auto")]),
        ("---\ntags: [vehicle/automobile]\n---\n", [("synonym-term", "car", 1, 1, "tag", "automobile")]),
        ("auto automobile auto automobile", [("synonym-term", "car", 1, 1, "body", "auto")]),
    ],
)
def test_synonym_term_per_field(page, expected):
    hit = only_hit(build_vault({"s.md": page, "_vocabulary.md": VOCABULARY}), "car", "s.md")
    assert contract(hit) == expected


def test_synonym_term_only_where_the_term_itself_did_not_match():
    vault = build_vault(
        {
            "s.md": "---\ntitle: Car and Automobile\naliases: [Auto]\n---\ncar auto automobile\n",
            "_vocabulary.md": VOCABULARY,
        }
    )
    assert contract(only_hit(vault, "car", "s.md")) == [
        ("title-phrase", "", 1, 10, "", ""),
        ("title-term", "car", 1, 5, "", ""),
        ("synonym-term", "car", 1, 2, "alias", "auto"),
        ("body-term", "car", 1, 1, "body", ""),
    ]


def test_synonyms_expand_to_every_other_member_of_the_group():
    vault = build_vault({"s.md": "car", "_vocabulary.md": VOCABULARY})
    for term in ("automobile", "auto"):
        assert contract(only_hit(vault, term, "s.md")) == [("synonym-term", term, 1, 1, "body", "car")]


def test_multi_word_synonyms_match_as_a_phrase():
    vocabulary = "---\ngroups:\n  - {canonical: llm, variants: [large language model]}\n---\n"
    vault = build_vault(
        {"yes.md": "a large language model here", "no.md": "a large model of language", "_vocabulary.md": vocabulary}
    )
    hits = hits_for(vault, "llm")
    assert [(h.page.path, contract(h)) for h in hits] == [
        ("yes.md", [("synonym-term", "llm", 1, 1, "body", "large language model")])
    ]


def test_stem_term_per_field_where_exact_and_synonym_did_not_match():
    vault = build_vault(
        {
            "s.md": "---\ntitle: Cars\naliases: [Vehicle]\ntags: [cars]\n---\nautomobile and cars\n",
            "_vocabulary.md": VOCABULARY,
        }
    )
    assert contract(only_hit(vault, "car", "s.md")) == [
        ("synonym-term", "car", 1, 1, "body", "automobile"),
        ("stem-term", "car", 1, 1, "tag", "cars"),
        ("stem-term", "car", 1, 1, "title", "cars"),
    ]


def test_stem_term_counts_distinct_variants_but_scores_once():
    hit = only_hit({"r.md": "runs running runs runner"}, "run", "r.md")
    assert contract(hit) == [("stem-term", "run", 2, 1, "body", "running")]


def test_stem_term_never_where_the_term_matched_exactly():
    hit = only_hit({"r.md": "---\ntitle: Running\n---\nrunning runs"}, "running", "r.md")
    assert [c[0] for c in contract(hit)] == ["title-phrase", "title-term", "body-term"]


def test_prefix_term_only_as_you_type():
    files = {"a.md": "---\ntitle: Automobile\n---\n", "b.md": "---\ntitle: Other\naliases: [Automaton]\n---\n"}
    vault = build_vault(files)
    assert hits_for(vault, "autom") == ()
    typed = hits_for(vault, "autom", prefix=True)
    assert [(h.page.path, contract(h)) for h in typed] == [
        ("a.md", [("prefix-phrase", "", 1, 8, "", ""), ("prefix-term", "autom", 1, 3, "title", "automobile")]),
        ("b.md", [("prefix-phrase", "Automaton", 1, 8, "", ""), ("prefix-term", "autom", 1, 2, "alias", "automaton")]),
    ]
    assert hits_for(vault, "autom ", prefix=True) == ()  # a finished word is not a prefix


# --- component order and hit order -----------------------------------------------------------


def test_components_sort_by_points_then_channel_then_term():
    files = {"p.md": "---\ntitle: Beta Alpha\naliases: [Zeta]\ntags: [able]\n---\ngamma gamma gamma delta\n"}
    hit = only_hit(files, "delta zeta able gamma beta alpha", "p.md")
    assert contract(hit) == [
        ("title-term", "alpha", 1, 5, "", ""),
        ("title-term", "beta", 1, 5, "", ""),
        ("alias-term", "zeta", 1, 4, "", ""),  # alias before tag at equal points, whatever the term
        ("tag-term", "able", 1, 4, "", ""),
        ("body-term", "gamma", 3, 3, "body", ""),
        ("body-term", "delta", 1, 1, "body", ""),
    ]
    assert sum(c[3] for c in contract(hit)) == 22


def test_hits_order_by_score_then_title_casefold_then_path():
    files = {
        "z.md": "---\ntitle: Alpha\n---\nkiwi",
        "m.md": "---\ntitle: BETA\n---\nkiwi",
        "a.md": "---\ntitle: beta\n---\nkiwi",
        "q.md": "---\ntitle: Zeta\n---\nkiwi",
        "s1.md": "---\ntitle: Straße\n---\nkiwi",
        "s0.md": "---\ntitle: STRASSE\n---\nkiwi",
        "top.md": "kiwi kiwi",
    }
    check_ranking(files, "kiwi", ["top.md", "z.md", "a.md", "m.md", "s0.md", "s1.md", "q.md"])


@pytest.mark.parametrize(
    "query, expected",
    [
        ("compost", ["Compost.md", "notes/Tea.md", "garden/Soil.md"]),
        ("compost tea", ["notes/Tea.md", "Compost.md", "garden/Soil.md"]),
        ("soil", ["garden/Soil.md", "Compost.md"]),
        ("worms", []),
    ],
)
def test_check_ranking_table(query, expected):
    files = {
        "Compost.md": "---\ntags: [garden]\n---\nCompost feeds the soil. Compost tea is a liquid.\n",
        "garden/Soil.md": "---\naliases: [Dirt]\n---\nAdd compost.\n",
        "notes/Tea.md": "---\ntitle: Compost Tea\n---\nSteep it.\n",
    }
    check_ranking(files, query, expected)


def test_zero_score_pages_are_not_hits():
    vault = build_vault({"a.md": "kiwi", "b.md": "mango", "c.md": ""})
    assert [h.page.path for h in hits_for(vault, "kiwi")] == ["a.md"]
    assert hits_for(vault, "") == ()
    assert hits_for(vault, "!!! ???") == ()


def test_limit_cuts_after_ranking():
    files = {f"p{i}.md": "kiwi " * (i % 4) for i in range(1, 9)}
    vault = build_vault(files)
    everything = hits_for(vault, "kiwi")
    assert hits_for(vault, "kiwi", limit=3) == everything[:3]
    assert len(hits_for(vault, "kiwi", limit=10)) == len(everything) == 6


# --- filters ---------------------------------------------------------------------------------

FILTER_FILES = {
    "ai/Attention.md": "---\ntype: concept\ntags: [ai/nlp]\n---\nkiwi",
    "ai/rag/Retrieval.md": "---\ntype: concept\ntags: [ai]\n---\nkiwi",
    "ai-other/Note.md": "---\ntype: note\ntags: [air]\n---\nkiwi",
    "ai.md": "---\ntype: concepts\ntags: [x/ai]\n---\nkiwi",
    "garden/Soil.md": "---\ntype: Concept\n---\nkiwi kiwi kiwi #AI/vision",
}


@pytest.mark.parametrize(
    "options, expected",
    [
        ({}, ["garden/Soil.md", "ai.md", "ai/Attention.md", "ai-other/Note.md", "ai/rag/Retrieval.md"]),
        ({"type": "concept"}, ["ai/Attention.md", "ai/rag/Retrieval.md"]),
        ({"type": "Concept"}, ["garden/Soil.md"]),
        ({"folder": "ai"}, ["ai/Attention.md", "ai/rag/Retrieval.md"]),
        ({"folder": "ai/"}, ["ai/Attention.md", "ai/rag/Retrieval.md"]),
        ({"folder": "./ai//"}, ["ai/Attention.md", "ai/rag/Retrieval.md"]),
        ({"folder": "ai/rag"}, ["ai/rag/Retrieval.md"]),
        ({"folder": "AI"}, []),
        ({"folder": "../x"}, []),
        ({"folder": "../ai"}, []),
        ({"folder": "ai/../.."}, []),
        ({"folder": "/etc"}, []),
        ({"tag": "ai"}, ["garden/Soil.md", "ai/Attention.md", "ai/rag/Retrieval.md"]),
        ({"tag": "#AI"}, ["garden/Soil.md", "ai/Attention.md", "ai/rag/Retrieval.md"]),
        ({"tag": "ai/nlp"}, ["ai/Attention.md"]),
        ({"tag": "nlp"}, []),
        ({"tag": "ai", "type": "concept", "folder": "ai/rag"}, ["ai/rag/Retrieval.md"]),
        ({"tag": "ai/nlp", "folder": "ai/rag"}, []),
    ],
)
def test_filters(options, expected):
    check_ranking(FILTER_FILES, "kiwi", expected, **options)


@pytest.mark.parametrize(
    "folder, normal",
    [("ai", "ai"), ("ai/", "ai"), ("./ai//rag/", "ai/rag"), ("ai\\rag", "ai/rag"), (".", ""), ("", "")],
)
def test_folder_normalisation(folder, normal):
    assert normalize_folder(folder) == normal


@pytest.mark.parametrize("folder", ["../x", "..", "a/../../b", "/abs", "\\abs"])
def test_folders_outside_the_vault_match_no_path(folder):
    normal = normalize_folder(folder)
    assert not any(p.startswith(normal + "/") or p == normal for p in FILTER_FILES)


def test_filters_are_applied_before_scoring_not_after_the_limit():
    files = {f"top{i}.md": "kiwi kiwi kiwi" for i in range(5)} | {"low/one.md": "kiwi"}
    check_ranking(files, "kiwi", ["low/one.md"], folder="low", limit=1)


@pytest.mark.parametrize("name", ["type", "folder", "tag"])
def test_a_filter_that_is_not_text_is_a_value_error(name):
    with pytest.raises(ValueError, match=name):
        parse_query("kiwi", **{name: 5})


# --- vocabulary ------------------------------------------------------------------------------


def test_vocabulary_absent_is_exact_only_and_silent():
    vault = build_vault({"s.md": "automobile"})
    assert vault.vocabulary.warnings == ()
    assert hits_for(vault, "car") == ()


@pytest.mark.parametrize(
    "text, warning",
    [
        ("---\ngroups: [\n---\n", "malformed YAML"),
        ("---\ngroups:\n  - canonical: car\n   variants: [auto]\n---\n", "malformed YAML"),
        ("---\n- canonical: car\n---\n", "not a mapping"),
        ("---\ngroups: car, auto\n---\n", "must be a list"),
        ("---\ngroups: {canonical: car}\n---\n", "must be a list"),
        ("no frontmatter at all\n", "no 'groups'"),
        (b"---\ngroups: \xff\xfe\n---\n", "UTF-8"),
    ],
)
def test_malformed_vocabulary_warns_and_matches_exactly(text, warning):
    vocabulary = parse_vocabulary(text)
    assert vocabulary.expansions == {}
    assert any(warning in w for w in vocabulary.warnings), vocabulary.warnings
    assert all(w.startswith("_vocabulary.md") for w in vocabulary.warnings)
    vault = build_vault({"s.md": "automobile", "_vocabulary.md": text})
    assert hits_for(vault, "car") == ()
    assert [h.page.path for h in hits_for(vault, "automobile")] == ["s.md"]


def test_vocabulary_skips_bad_groups_and_keeps_good_ones():
    text = (
        "---\n"
        "groups:\n"
        "  - just a string\n"
        "  - canonical: automobile\n"
        "    variants: [car, 7, null, {x: 1}, true]\n"
        "  - variants: solo\n"
        "  - {}\n"
        "---\n"
    )
    vocabulary = parse_vocabulary(text)
    assert vocabulary.synonyms("car") == (("7",), ("automobile",))
    assert vocabulary.synonyms("solo") == ()
    assert len(vocabulary.warnings) == 2


# --- the --graph walk ------------------------------------------------------------------------

GRAPH = {
    "Seed.md": (
        "---\ntitle: Seed\nrelated: [[Hop1a]]\nsources: [[Hop1b]]\ndepends_on: [[Hop1c]]\n---\nkiwi here\n"
    ),
    "Hop1a.md": "---\nrelated: [[Hop2]]\n---\nfirst paragraph of a\n",
    "Hop1b.md": "---\nrelated: [[Hop1a]]\n---\nb\n",
    "Hop1c.md": "---\nrelated: [[Seed]]\n---\nc\n",
    "Hop2.md": "---\nsources: [[Hop3]]\n---\ntwo\n",
    "Hop3.md": "three\n",
    "Unlinked.md": "nothing\n",
}


def graph_contract(hits) -> list[tuple]:
    return [(h.page.path, h.score, contract(h), h.snippet) for h in hits]


def test_graph_walk_hops_points_and_snippets():
    hits = hits_for(build_vault(GRAPH), "kiwi", graph=True)
    check_ranking_contract(hits)
    assert graph_contract(hits) == [
        # 1 + body-bm25 0.75 + link-prior 0.5 (Hop1c's edge links here): the seed itself leads
        ("Seed.md", 2.25, [("body-term", "kiwi", 1, 1, "body", "")], "kiwi here"),
        ("Hop1a.md", 2, [("graph-edge", "related", 1, 2, "", "Seed")], ""),
        ("Hop1b.md", 2, [("graph-edge", "sources", 1, 2, "", "Seed")], ""),
        ("Hop1c.md", 2, [("graph-edge", "depends_on", 1, 2, "", "Seed")], ""),
        ("Hop2.md", 1, [("graph-edge", "related", 2, 1, "", "Hop1a")], ""),
    ]


def test_graph_walk_records_a_page_once_at_its_nearest_hop():
    files = {
        "S1.md": "---\nrelated: [[X]]\n---\nkiwi",
        "S2.md": "---\nsources: [[Y]]\n---\nkiwi",
        "Y.md": "---\nrelated: [[X]]\n---\n",  # X is also two hops from S2
        "X.md": "---\nrelated: [[Y]]\n---\n",  # and Y is two hops from S1
    }
    hits = hits_for(build_vault(files), "kiwi", graph=True)
    got = {h.page.path: contract(h) for h in hits}
    assert got["X.md"] == [("graph-edge", "related", 1, 2, "", "S1")]
    assert got["Y.md"] == [("graph-edge", "sources", 1, 2, "", "S2")]
    assert len(hits) == 4


def test_graph_walk_ties_go_to_the_earlier_predicate_then_the_first_source():
    files = {
        "A.md": "---\nrelated: [[X]]\n---\nkiwi",
        "B.md": "---\ndepends_on: [[X]]\nsources: [[Z]]\n---\nkiwi",
        "C.md": "---\nsources: [[X]]\n---\nkiwi",
        "D.md": "---\nsources: [[Z]]\n---\nkiwi",
        "X.md": "",
        "Z.md": "",
    }
    got = {h.page.path: contract(h) for h in hits_for(build_vault(files), "kiwi", graph=True)}
    assert got["X.md"] == [("graph-edge", "sources", 1, 2, "", "C")]
    assert got["Z.md"] == [("graph-edge", "sources", 1, 2, "", "B")]


def test_graph_walk_never_reaches_the_seeds_and_stops_after_two_hops():
    hits = hits_for(build_vault(GRAPH), "kiwi", graph=True)
    paths = [h.page.path for h in hits]
    assert paths.count("Seed.md") == 1  # reached back from Hop1c, still only a keyword hit
    assert "Hop3.md" not in paths and "Unlinked.md" not in paths


def test_graph_walk_is_deterministic_whatever_the_build_order():
    forward = payload_text(build_vault(GRAPH), "kiwi", graph=True)
    backward = payload_text(build_vault(GRAPH, order=sorted(GRAPH, reverse=True)), "kiwi", graph=True)
    assert forward == backward == payload_text(build_vault(GRAPH), "kiwi", graph=True)


FILTERED = {
    "in/Seed.md": "---\nrelated: [[Out]]\nsources: [[Near]]\n---\nkiwi",
    "out/Out.md": "---\nrelated: [[Beyond]]\n---\n",
    "in/Near.md": "",
    "in/Beyond.md": "",
    "out/Kiwi.md": "kiwi",
}


def test_the_filters_choose_the_seeds_and_the_walk_reaches_across_them():
    hits = hits_for(build_vault(FILTERED), "kiwi", graph=True, folder="in")
    check_ranking_contract(hits)
    got = {h.page.path: contract(h) for h in hits}
    assert sorted(got) == ["in/Beyond.md", "in/Near.md", "in/Seed.md", "out/Out.md"]  # not out/Kiwi: no seed
    assert got["out/Out.md"] == [("graph-edge", "related", 1, 2, "", "Seed")]
    assert got["in/Beyond.md"] == [("graph-edge", "related", 2, 1, "", "Out")]  # walked through out/


def test_graph_filtered_keeps_the_walk_to_the_filters_as_before():
    hits = hits_for(build_vault(FILTERED), "kiwi", graph=True, graph_filtered=True, folder="in")
    assert [h.page.path for h in hits] == ["in/Near.md", "in/Seed.md"]


def test_a_type_filter_no_longer_hides_what_the_walk_finds():
    # the case: `zeppelin --graph --type concept` gave only the seed
    files = {
        "Zeppelin.md": "---\ntype: concept\nsources: [[Airships of 1900]]\n---\nzeppelin",
        "Airships of 1900.md": "---\ntype: source\n---\nold book",
    }
    paths = [h.page.path for h in hits_for(build_vault(files), "zeppelin", graph=True, type="concept")]
    assert paths == ["Zeppelin.md", "Airships of 1900.md"]
    kept = [h.page.path for h in hits_for(build_vault(files), "zeppelin", graph=True, graph_filtered=True,
                                          type="concept")]
    assert kept == ["Zeppelin.md"]


SEEDS = {
    "Graph RAG.md": "---\nsources: [[Edge Paper]]\nrelated: [[Hub]]\n---\nretrieval over a graph",
    "Edge Paper.md": "retrieval paper",  # a keyword hit the walk also reaches: hop 1 from Graph RAG
    "Hub.md": "---\nrelated: [[Far Note]]\n---\nhub",
    "Far Note.md": "---\nrelated: [[Graph RAG]]\n---\nretrieval far",  # hop 2 (via Hub), and it reaches Graph RAG
}


def test_a_keyword_hit_reached_over_an_edge_gets_the_nearest_hops_points_once():
    vault = build_vault(SEEDS)
    plain = {h.page.path: h for h in hits_for(vault, "retrieval")}
    hits = hits_for(vault, "retrieval", graph=True)
    check_ranking_contract(hits)
    got = {h.page.path: h for h in hits}
    edges = {path: [c for c in components(h) if c[0] == "graph-edge"] for path, h in got.items()}
    assert edges["Edge Paper.md"] == [("graph-edge", "sources", 1, 2, "", "Graph RAG")]
    assert edges["Far Note.md"] == [("graph-edge", "related", 2, 1, "", "Hub")]  # nearest: hop 2, once
    assert edges["Graph RAG.md"] == [("graph-edge", "related", 1, 2, "", "Far Note")]
    assert edges["Hub.md"] == [("graph-edge", "related", 1, 2, "", "Graph RAG")]
    for path in ("Edge Paper.md", "Far Note.md", "Graph RAG.md"):
        assert got[path].score == plain[path].score + edges[path][0][3]
        assert got[path].snippet == plain[path].snippet  # still a keyword hit, with its snippet


def test_a_seed_is_not_credited_for_an_edge_back_to_itself():
    files = {"A.md": "---\nrelated: [[B]]\n---\nkiwi", "B.md": "---\nrelated: [[A]]\n---\n"}
    got = {h.page.path: contract(h) for h in hits_for(build_vault(files), "kiwi", graph=True)}
    assert got["A.md"] == [("body-term", "kiwi", 1, 1, "body", "")]


def test_a_limit_gives_the_first_hits_of_the_whole_ranking_with_seed_credit():
    files = {f"P{i:02}.md": f"---\nsources: [[P{(i + 1) % 30:02}]]\n---\nkiwi {'kiwi ' * (i % 4)}"
             for i in range(30)}
    files.update({f"L{i}.md": f"[[P{i:02}]]" for i in range(0, 30, 3)})  # link-prior for some
    vault = build_vault(files)
    whole = hits_for(vault, "kiwi", graph=True)
    for limit in (1, 3, 10):
        top = hits_for(vault, "kiwi", graph=True, limit=limit)
        assert [(h.page.path, h.score) for h in top] == [(h.page.path, h.score) for h in whole[:limit]]


def test_without_graph_the_walk_never_runs(monkeypatch):
    vault = build_vault(GRAPH)
    before = payload_text(vault, "kiwi")

    def boom(*args, **kwargs):
        raise AssertionError("the graph walk ran without --graph")

    monkeypatch.setattr(vaultlens.engine.search, "walk_typed_edges", boom)
    assert payload_text(vault, "kiwi") == before
    with pytest.raises(AssertionError):
        payload_text(vault, "kiwi", graph=True)


def test_without_graph_typed_edges_add_no_hits_and_no_graph_points():
    stripped = {p: re.sub(r"^(related|sources|depends_on):.*\n", "", t, flags=re.M) for p, t in GRAPH.items()}
    assert all(not build_vault(stripped).pages[p].edges for p in stripped)
    with_edges, without = hits_for(build_vault(GRAPH), "kiwi here"), hits_for(build_vault(stripped), "kiwi here")
    assert [h.page.path for h in with_edges] == [h.page.path for h in without]
    assert [contract(h) for h in with_edges] == [contract(h) for h in without]
    # a typed edge is a link: it counts towards the target's link-prior (test_ranking.py), and only there
    assert [(h.page.path, [c[0] for c in components(h) if c[0] not in CONTRACT]) for h in with_edges] == [
        ("Seed.md", ["body-bm25", "link-prior"])  # ("here" is a weak term: no body points)
    ]
    assert [[c[0] for c in components(h) if c[0] not in CONTRACT] for h in without] == [["body-bm25"]]


def test_graph_only_adds_hits_and_leaves_keyword_hits_alone():
    vault = build_vault(GRAPH)
    plain = hits_for(vault, "kiwi")
    walked = hits_for(vault, "kiwi", graph=True)
    keyword = [h for h in walked if h.matched[0].channel != "graph-edge"]
    assert keyword == list(plain)


def test_graph_walk_without_keyword_hits_finds_nothing():
    assert hits_for(build_vault(GRAPH), "durian", graph=True) == ()


# --- snippets --------------------------------------------------------------------------------


def test_snippet_is_the_line_of_the_first_body_occurrence():
    files = {"s.md": "---\ntitle: Notes\nsummary: kiwi in frontmatter\n---\nIntro line.\n\nThe   kiwi\tis  green.\nkiwi again\n"}
    assert only_hit(files, "kiwi", "s.md").snippet == "The kiwi is green."


def test_snippet_follows_the_best_body_match():
    files = {"s.md": "mango once.\nkiwi kiwi kiwi line.\n"}
    assert only_hit(files, "mango kiwi", "s.md").snippet == "kiwi kiwi kiwi line."


def test_snippet_of_a_long_line_is_a_window_around_the_word():
    words = [f"w{i:03d}" for i in range(120)]
    words[70] = "kiwi"
    line = " ".join(words)
    snippet = only_hit({"s.md": f"short first line\n{line}\n"}, "kiwi", "s.md").snippet
    assert "kiwi" in snippet
    assert snippet.startswith("…") and snippet.endswith("…")
    assert len(snippet) <= SNIPPET_CHARS + 2
    inner = snippet.strip("…")
    assert inner in line and inner.split(" ")[0] in words  # cut at word boundaries


def test_snippet_of_a_long_line_with_the_word_at_the_start():
    line = "kiwi " + " ".join(f"word{i}" for i in range(80))
    snippet = only_hit({"s.md": line}, "kiwi", "s.md").snippet
    assert snippet.startswith("kiwi ") and snippet.endswith("…") and len(snippet) <= SNIPPET_CHARS + 1


def test_snippet_for_synonym_and_stem_matches_shows_that_word():
    vault = build_vault({"s.md": "first line\nan automobile here\n", "t.md": "first\nwe were running\n", "_vocabulary.md": VOCABULARY})
    assert only_hit(vault, "car", "s.md").snippet == "an automobile here"
    assert only_hit(vault, "runs", "t.md").snippet == "we were running"


def test_snippet_is_the_first_paragraph_when_only_names_matched():
    files = {
        "Kiwi.md": (
            "---\nsummary: frontmatter kiwi text\n---\n# Introduction\n\n```\ncode\n```\n"
            "First paragraph\nspans two lines.\n\nSecond paragraph.\n"
        )
    }
    assert only_hit(files, "kiwi", "Kiwi.md").snippet == "First paragraph spans two lines."


def test_snippet_never_shows_frontmatter():
    files = {"Kiwi.md": "---\ntitle: Kiwi\ndescription: secret words\n---\n"}
    assert only_hit(files, "kiwi", "Kiwi.md").snippet == ""
