"""vaultlens.engine.mentions: which phrases name another page, and linking them loses no link.

Data-driven: ``check(files, page, expected)`` lists the (text, target) suggestions of a page.
"""

from __future__ import annotations

import pytest
from vaultkit import build_vault

from vaultlens.engine.edits import EditError, apply_edits, link_mentions
from vaultlens.engine.mentions import page_mentions, suggestions, unlinked_mentions
from vaultlens.engine.model import Span
from vaultlens.engine.page import parse_page

FILLER = {f"filler/f{i}.md": f"# Filler {i}\n\nNothing about anything, day {i}.\n" for i in range(30)}


def found(files: dict[str, str], path: str) -> list[tuple[str, str]]:
    vault = build_vault({**FILLER, **files})
    return [(m.text, m.targets[0]) for m in page_mentions(vault, path)]


def test_a_title_is_found_case_insensitively_as_whole_words():
    files = {"Recurring Tasks.md": "# Recurring Tasks\n", "a.md": "Make RECURRING tasks, not recurring taskswork.\n"}
    assert found(files, "a.md") == [("RECURRING tasks", "Recurring Tasks.md")]


def test_an_alias_is_a_name_too():
    files = {"rag.md": "---\ntitle: Retrieval Augmented Generation\naliases: [Graph Retrieval]\n---\n",
             "a.md": "We tried graph retrieval last week.\n"}
    assert found(files, "a.md") == [("graph retrieval", "rag.md")]


def test_the_longest_name_wins():
    files = {"Tasks.md": "# Tasks\n", "Recurring Tasks.md": "# Recurring Tasks\n", "Custom Statuses.md": "x\n",
             "Recurring Tasks and Custom Statuses.md": "x\n",
             "a.md": "See recurring tasks and custom statuses for both.\n"}
    assert found(files, "a.md") == [("recurring tasks and custom statuses", "Recurring Tasks and Custom Statuses.md")]


@pytest.mark.parametrize("text", [
    "```\nglobal filter\n```\n",
    "    global filter in indented code\n",
    "Use `global filter` here.\n",
    "Use [[Other|global filter]] here.\n",
    "Use [global filter](https://example.com) here.\n",
    "See https://example.com/global-filter/global filter.\n".replace("global filter.", "x."),
    "## Global Filter\n",
    "| Global Filter | b |\n|---|---|\n| x | y |\n",
    "Tagged #global-filter only.\n",
    "%% global filter %% hidden.\n",
    "A non-global filter and a global filter-based one.\n",
])
def test_never_inside_code_links_urls_headings_tables_tags_or_comments(text):
    files = {"Global Filter.md": "# Global Filter\n", "Other.md": "x\n", "a.md": text}
    assert found(files, "a.md") == []


def test_never_in_frontmatter_never_the_page_itself_and_not_once_linked():
    files = {"Global Filter.md": "---\ntitle: Global Filter\n---\nThe global filter is global.\n",
             "a.md": "---\ndescription: global filter\n---\nThe global filter, again the global filter.\n",
             "b.md": "The [[Global Filter]] and the global filter.\n"}
    assert found(files, "Global Filter.md") == []
    assert found(files, "a.md") == [("global filter", "Global Filter.md")] * 2
    assert found(files, "b.md") == []  # per page: one link is enough


def test_a_common_single_word_title_is_no_reference():
    # "Done", "Filters" and "Priority" are titles and also words used on most pages
    common = {f"p{i}.md": f"Filters are done by priority here, item {i}.\n" for i in range(10)}
    files = {**common, "Done.md": "# Done\n", "Filters.md": "# Filters\n", "Priority.md": "# Priority\n",
             "a.md": "Filters: the Done and Priority items, also the and this.\n", "The.md": "x\n", "This.md": "x\n"}
    assert found(files, "a.md") == []


def test_a_rare_or_distinctive_single_word_is_a_reference_when_written_as_its_name():
    files = {"QuickAdd.md": "# QuickAdd\n", "Dataview.md": "# Dataview\n", "RAG.md": "# RAG\n",
             "a.md": "Use QuickAdd with Dataview, or quickadd, or a rag doll, and RAG.\n"}
    assert found(files, "a.md") == [("QuickAdd", "QuickAdd.md"), ("Dataview", "Dataview.md"), ("RAG", "RAG.md")]


def test_a_word_inside_a_longer_capitalised_name_is_no_reference():
    files = {"Analytics.md": "# Analytics\n", "a.md": "We use Google Analytics; plain Analytics too.\n"}
    assert found(files, "a.md") == [("Analytics", "Analytics.md")]
    assert [m.span for m in page_mentions(build_vault({**FILLER, **files}), "a.md")] == [Span(0, 31, 0, 40)]


def test_suggestions_keep_the_first_occurrence_and_rank_pages_sharing_a_name():
    # first the page [[Soil health]] resolves to (the shorter path), then by links in
    files = {"x/Soil Health.md": "x\n", "y/Soil Health.md": "x\n", "c.md": "[[y/Soil Health]]\n",
             "a.md": "Soil health matters. Soil health again.\n"}
    vault = build_vault({**FILLER, **files})
    found_ = suggestions(vault, "a.md")
    assert [(m.text, m.targets) for m in found_] == [("Soil health", ("x/Soil Health.md", "y/Soil Health.md"))]
    files["z/Soil Health.md"], files["d.md"] = "x\n", "[[z/Soil Health]] [[y/Soil Health]]\n"
    vault = build_vault({**FILLER, **files})
    assert suggestions(vault, "a.md")[0].targets == ("x/Soil Health.md", "y/Soil Health.md", "z/Soil Health.md")


def test_columns_are_utf16():
    files = {"Soil Health.md": "x\n", "a.md": "🌱 soil health\n"}
    vault = build_vault({**FILLER, **files})
    assert page_mentions(vault, "a.md")[0].span == Span(0, 3, 0, 14)


def test_the_phrase_index_follows_upsert_and_remove():
    vault = build_vault({**FILLER, "a.md": "About soil health.\n"})
    assert page_mentions(vault, "a.md") == []  # builds the index
    vault.upsert(parse_page("Soil Health.md", "# Soil Health\n"))
    assert [m.text for m in page_mentions(vault, "a.md")] == ["soil health"]
    vault.upsert(parse_page("Soil Health.md", "---\ntitle: Ground\n---\n"))
    assert page_mentions(vault, "a.md") == []
    vault.upsert(parse_page("Soil Health.md", "---\ntitle: Ground\naliases: [soil health]\n---\n"))
    assert [m.name for m in page_mentions(vault, "a.md")] == ["soil health"]
    vault.remove("Soil Health.md")
    assert page_mentions(vault, "a.md") == []


def test_unlinked_mentions_of_a_page_and_linking_them_all_keeps_every_link():
    files = {"Soil Health.md": "# Soil Health\n",
             "a.md": "Soil health and [[b]] and soil  health.\n",
             "b.md": "[[Soil Health]] already; soil health.\n",
             "c.md": "---\ntitle: C\n---\nOn SOIL HEALTH: see [[a]].\n"}
    vault = build_vault({**FILLER, **files})
    mentions = unlinked_mentions(vault, "Soil Health.md")
    assert [(m.path, m.text) for m in mentions] == [("a.md", "Soil health"), ("a.md", "soil  health"),
                                                    ("c.md", "SOIL HEALTH")]
    change = link_mentions(vault, mentions, "Soil Health.md", lambda p: files.get(p))
    after = {p: apply_edits(files[p], [e for e in change.edits if e.path == p]) for p in change.paths()}
    assert after == {"a.md": "[[Soil health]] and [[b]] and [[Soil Health|soil  health]].\n",
                     "c.md": "---\ntitle: C\n---\nOn [[SOIL HEALTH]]: see [[a]].\n"}
    relinked = build_vault({**FILLER, **files, **after})
    assert unlinked_mentions(relinked, "Soil Health.md") == []
    assert relinked.linking_pages("Soil Health.md") == {"a.md", "b.md", "c.md"}


def test_linking_a_mention_refuses_a_stale_text():
    files = {"Soil Health.md": "# Soil Health\n", "a.md": "About soil health.\n"}
    vault = build_vault({**FILLER, **files})
    mentions = unlinked_mentions(vault, "Soil Health.md")
    with pytest.raises(EditError, match="has changed"):
        link_mentions(vault, mentions, "Soil Health.md", lambda p: "Changed text entirely.\n")


def test_label_first_vaults_write_the_label_first():
    files = {"notes/soil.md": "---\ntitle: Soil Health\n---\n", "a.md": "Good soil health.\n"}
    vault = build_vault({**FILLER, **files}, label_first=True)
    mentions = unlinked_mentions(vault, "notes/soil.md")
    change = link_mentions(vault, mentions, "notes/soil.md", files.get)
    assert [e.new_text for e in change.edits] == ["[[soil health|soil]]"]


def test_unlinked_mentions_find_names_in_any_case_with_separators_and_non_ascii_letters():
    # candidate_pages' quick text test runs on casefolded text: it must keep every page the
    # scan accepts (STRASSE and Straße are one word casefolded) and drop partial words.
    files = {"Große Straße.md": "# Große Straße\n", "2023-08-04.md": "# 2023-08-04\n",
             "a.md": "Down the GROSSE STRASSE we went.\n",
             "b.md": "Then große straße again; not xgroße straße.\n",
             "c.md": "On 2023 - 08 - 04 and 2023-08-04, not 12023-08-04.\n"}
    vault = build_vault({**FILLER, **files})
    assert [(m.path, m.text) for m in unlinked_mentions(vault, "Große Straße.md")] == [
        ("a.md", "GROSSE STRASSE"), ("b.md", "große straße")]
    assert [(m.path, m.text) for m in unlinked_mentions(vault, "2023-08-04.md")] == [("c.md", "2023 - 08 - 04"), ("c.md", "2023-08-04")]
