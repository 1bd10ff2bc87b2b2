"""vaultlens.engine.retrieve: grep, glob, read levels, links and related as result objects."""

from __future__ import annotations

import time

import pytest
from vaultkit import build_vault

from vaultlens.engine.retrieve import RetrievalError, find_page, glob, grep, links, read, related_payload

FILES = {
    "wiki/ai/Graph RAG.md": "---\ntitle: Graph RAG\naliases: [GraphRAG]\nsummary: Graphs for retrieval.\n---\n"
    "# Graph RAG\n\nIntro line about graphs. Second sentence.\n\n## How\n\nExtract entities. Then link.\n"
    "See [[Chunking]] and [[Missing Page]].\n",
    "wiki/ai/Chunking.md": "# Chunking\n\nSplit text into chunks. Chunk size matters.\nBack to [[Graph RAG#How|how]].\n",
    "wiki/notes.md": "---\nrelated: [[Graph RAG]]\n---\nA note on Chunking and graph things.\n",
    "garden/Tomatoes.md": "Tomatoes like sun.\nTOMATO blight is bad.\n",
}


@pytest.fixture
def vault():
    return build_vault(FILES)


def test_find_page_by_path_title_alias_and_link(vault):
    for name in ("wiki/ai/Graph RAG.md", "wiki/ai/Graph RAG", "Graph RAG", "graphrag", "[[GraphRAG]]",
                 "[[Graph RAG#How|label]]"):
        assert find_page(vault, name).path == "wiki/ai/Graph RAG.md", name
    with pytest.raises(RetrievalError, match="no page matches"):
        find_page(vault, "Nope")
    with pytest.raises(RetrievalError, match="a page is required"):
        find_page(vault, "[[]]")


def test_grep_orders_by_path_then_line_with_one_based_positions(vault):
    out = grep(vault, r"chunk", ignore_case=True)
    assert [(m["file"], m["line"]) for m in out["matches"]] == [
        ("wiki/ai/Chunking.md", 1),
        ("wiki/ai/Chunking.md", 3),
        ("wiki/ai/Graph RAG.md", 13),
        ("wiki/notes.md", 4),
    ]
    first = out["matches"][0]
    assert (first["column"], first["content"]) == (3, "# Chunking")
    assert out["count"] == 4 and out["truncated"] is False
    assert list(out) == ["command", "vault", "pattern", "matches", "count", "truncated"]


def test_grep_case_folder_exclude_and_limit(vault):
    assert grep(vault, "tomato")["count"] == 0  # "Tomatoes" and "TOMATO" differ in case
    assert grep(vault, "TOMATO")["count"] == 1
    assert grep(vault, "tomato", ignore_case=True)["count"] == 2
    assert {m["file"] for m in grep(vault, "a", folder="wiki/ai")["matches"]} <= {
        "wiki/ai/Chunking.md", "wiki/ai/Graph RAG.md"}
    assert all(not m["file"].startswith("wiki/") for m in grep(vault, "a", exclude=("wiki",))["matches"])
    limited = grep(vault, "a", limit=2)
    assert len(limited["matches"]) == 2 and limited["count"] > 2
    assert grep(vault, "a", folder="../etc")["count"] == 0


def test_grep_searches_frontmatter_only_when_given(vault):
    fm = {"wiki/notes.md": ["", "related: [[Graph RAG]]"]}
    assert grep(vault, "related:")["count"] == 0
    hit = grep(vault, "related:", frontmatter=fm)["matches"]
    assert [(m["file"], m["line"]) for m in hit] == [("wiki/notes.md", 2)]


def test_grep_rejects_a_pattern_that_does_not_compile(vault):
    with pytest.raises(RetrievalError, match="does not compile"):
        grep(vault, "(unclosed")


def test_grep_bounds_a_catastrophic_pattern():
    vault = build_vault({f"p{i}.md": "x" * 4000 + "!\n" for i in range(3)})
    start = time.monotonic()
    out = grep(vault, r"(x+x+)+y")
    assert time.monotonic() - start < 5
    assert out["truncated"] is True and out["reason"]


def test_glob_patterns(vault):
    assert glob(vault, "**/*.md")["files"] == sorted(FILES)
    assert glob(vault, "wiki/ai/*")["files"] == ["wiki/ai/Chunking.md", "wiki/ai/Graph RAG.md"]
    assert glob(vault, "wiki/*.md")["files"] == ["wiki/notes.md"]
    assert glob(vault, "wiki/**")["count"] == 3
    assert glob(vault, "*/[gG]*")["files"] == []
    assert glob(vault, "garden/?omatoes.md")["files"] == ["garden/Tomatoes.md"]
    limited = glob(vault, "**/*.md", limit=1)
    assert (limited["files"], limited["count"]) == (["garden/Tomatoes.md"], 4)
    assert list(limited) == ["command", "vault", "pattern", "files", "matches", "count"]  # matches: OpenViking's name


def test_read_levels(vault):
    assert read(vault, "Graph RAG", 0)["content"] == "Graphs for retrieval."  # frontmatter summary
    assert read(vault, "Chunking", 0)["content"] == "Split text into chunks. Chunk size matters. Back to [[Graph RAG#How|how]]."
    overview = read(vault, "Graph RAG", 1)["content"].splitlines()
    assert overview[0] == "# Graph RAG"
    assert "  - How: Extract entities." in overview
    assert read(vault, "Chunking", 2)["content"] == vault.pages["wiki/ai/Chunking.md"].body
    assert read(vault, "Chunking", 2, full_text="WHOLE")["content"] == "WHOLE"
    with pytest.raises(RetrievalError, match="level must be"):
        read(vault, "Chunking", 3)


def test_links_lists_outgoing_incoming_and_edges(vault):
    out = links(vault, "Graph RAG")
    assert [(o["target"], o["file"]) for o in out["outgoing"]] == [
        ("Chunking", "wiki/ai/Chunking.md"), ("Missing Page", None)]
    assert out["outgoing"][0]["line"] == 13 and out["outgoing"][0]["column"] == 5
    assert [(i["file"], i["raw"]) for i in out["incoming"]] == [("wiki/ai/Chunking.md", "[[Graph RAG#How|how]]")]
    assert out["edges"] == [
        {"predicate": "related", "target": "wiki/ai/Graph RAG.md", "file": "wiki/notes.md", "direction": "in"}]


def test_related_payload_carries_reasons(vault):
    out = related_payload(vault, "Graph RAG")
    assert out["page"] == "wiki/ai/Graph RAG.md"
    top = out["hits"][0]
    assert top["file"] == "wiki/ai/Chunking.md"
    assert top["score"] == sum(m["points"] for m in top["matched"])
    assert "links here" in top["reasons"] and "linked from here" in top["reasons"]


def test_overview_sentences_do_not_end_at_a_numbered_list_marker():
    canvas = ("# Canvas\n\n## Add cards\n\nTo add cards to your canvas:\n1. Open the menu.\n2. Pick a card.\n\n"
              "## Steps\n\n1. First do this. Then that.\n2. Second.\n\n## Tasks\n\n- [ ] Water the plants.\n\n"
              "## Plain\n\nIn 2024. Then more.\n")
    lines = read(build_vault({"Canvas.md": canvas}), "Canvas", 1)["content"].splitlines()
    assert "  - Add cards: To add cards to your canvas:" in lines
    assert "  - Steps: First do this." in lines
    assert "  - Tasks: Water the plants." in lines
    assert "  - Plain: In 2024." in lines
