"""``workspace/symbol``: the engine's as-you-type ranking, unchanged by the wiring, plus headings."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_support import engine_vault, page_symbols, rel_of, symbols, wiki_search
from lsprotocol import types
from pytest_lsp import LanguageClient

from vaultlens.engine.query import as_you_type, parse_query
from vaultlens.engine.search import search

pytestmark = pytest.mark.asyncio(loop_scope="module")  # one session for the module (conftest)

LIMIT = 50  # the server's default result limit (Settings.limit)

QUERIES = [
    "graph rag",
    "rag",
    "RA",
    "att",
    "attention",
    "compost",
    "tomat",
    "zucchini",
    "retrieval aug",
    "vector d",
    "failure modes",
    "soil ",
    "quantum",
    "é",
]


async def test_page_order_is_the_engine_order(shared_client: LanguageClient, shared_vault: Path):
    """For each query, the page symbols are exactly the engine's hits (prefix on, the pages
    whose names match), in order: pages the full search finds too, ranked by what their names
    earn (no component read in the body), score first, then title and path."""
    engine = engine_vault(shared_vault)
    for query in QUERIES:
        hits = search(engine, as_you_type(query, LIMIT))
        expected = [(h.page.title, h.page.path) for h in hits]
        assert page_symbols(shared_vault, await symbols(shared_client, query)) == expected, query
        full = [(h.page.title, h.page.path) for h in search(engine, parse_query(query, prefix=True, limit=0))]
        assert set(expected) <= set(full), query
        assert not [m for h in hits for m in h.matched if m.field == "body"], query
        order = [(-h.score, h.page.title.casefold(), h.page.path) for h in hits]
        assert order == sorted(order), query


async def test_a_page_found_by_its_body_alone_is_no_symbol(shared_client: LanguageClient, shared_vault: Path):
    """Home mentions graph RAG in its body only: wiki/search finds it, workspace/symbol does not."""
    found = await wiki_search(shared_client, {"query": "graph rag", "limit": 50})
    assert "Home.md" in [hit["file"] for hit in found["hits"]]
    assert "Home.md" not in [path for _title, path in page_symbols(shared_vault, await symbols(shared_client, "graph rag"))]


async def test_rankings_a_person_would_expect(shared_client: LanguageClient, shared_vault: Path):
    first = {}
    for query in [
        "graph rag",
        "attention",
        "tomat",
        "compost",
        "zucchini",
        "elena",
        "vector d",
        "rer",
    ]:
        found = page_symbols(shared_vault, await symbols(shared_client, query))
        first[query] = found[0] if found else None
    assert first == {
        "graph rag": ("Graph RAG", "ai/rag/graph-rag.md"),
        "attention": ("Attention", "ai/Attention.md"),
        "tomat": ("Tomatoes", "garden/Tomatoes.md"),
        "compost": ("Composting", "garden/Composting.md"),  # through its alias "Compost Heap"
        "zucchini": ("Courgettes", "garden/Courgettes.md"),  # through _vocabulary.md
        "elena": ("Elena Marsh", "people/Elena Marsh.md"),
        "vector d": ("Vector Databases", "ai/rag/Vector Databases.md"),
        "rer": ("Reranking", "ai/rag/Reranking.md"),  # malformed frontmatter, still indexed
    }
    titles = [t for t, _ in page_symbols(shared_vault, await symbols(shared_client, "attention"))]
    assert titles[:2] == ["Attention", "Attention Is All You Need"]
    assert page_symbols(shared_vault, await symbols(shared_client, "xylophone")) == []


async def test_symbol_shape_and_location(shared_client: LanguageClient, shared_vault: Path):
    found = await symbols(shared_client, "graph rag")
    top = found[0]
    assert top.name == "Graph RAG"
    assert top.kind == types.SymbolKind.File
    assert top.container_name == "ai/rag"
    assert top.location.uri == (shared_vault / "ai" / "rag" / "graph-rag.md").as_uri()
    assert top.location.range == types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
    )
    home = (await symbols(shared_client, "home"))[0]
    assert (home.name, home.container_name) == ("Home", None)  # top-level page: no folder
    # a file name with spaces is a well-formed URI
    lewis = (await symbols(shared_client, "patrick lewis"))[0]
    assert lewis.location.uri.endswith("/people/Patrick%20Lewis.md")


async def test_matching_headings_follow_their_page(
    shared_client: LanguageClient, shared_vault: Path
):
    found = await symbols(shared_client, "attention")
    names = [s.name for s in found]
    at = names.index("Attention")
    assert names[at + 1 : at + 3] == [
        "Attention › Scaled Dot-Product Attention",
        "Attention › Multi-Head Attention",
    ]
    heading = found[at + 1]
    assert heading.kind == types.SymbolKind.String
    assert heading.container_name == "Attention"
    assert rel_of(shared_vault, heading.location.uri) == "ai/Attention.md"
    text = (shared_vault / "ai" / "Attention.md").read_text(encoding="utf-8").split("\n")
    line = heading.location.range.start.line
    assert text[line] == "## Scaled Dot-Product Attention"

    found = await symbols(shared_client, "failure modes")
    [failure] = [s for s in found if s.kind == types.SymbolKind.String]
    assert failure.name == "Retrieval-Augmented Generation › Failure Modes"
    rag = (
        (shared_vault / "ai" / "rag" / "Retrieval-Augmented Generation.md")
        .read_text(encoding="utf-8")
        .split("\n")
    )
    assert rag[failure.location.range.start.line] == "## Failure Modes"


async def test_empty_query_lists_pages_by_path(shared_client: LanguageClient, shared_vault: Path):
    engine = engine_vault(shared_vault)
    found = await symbols(shared_client, "")
    assert [rel for _, rel in page_symbols(shared_vault, found)] == engine.sorted_paths()[:LIMIT]
    assert all(s.kind == types.SymbolKind.File for s in found)


async def test_half_typed_title_ranks_its_page_first(
    shared_client: LanguageClient, shared_vault: Path
):
    found = page_symbols(shared_vault, await symbols(shared_client, "retrieval aug"))
    assert found[0] == (
        "Retrieval-Augmented Generation",
        "ai/rag/Retrieval-Augmented Generation.md",
    )
