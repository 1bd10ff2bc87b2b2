"""``textDocument/hover`` on wikilinks (resolved, alias-only, ambiguous, unresolved) and ``#tags``."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_support import change_doc, engine_vault, hover, hover_text, position
from lsprotocol import types
from pytest_lsp import LanguageClient

from vaultlens.engine.query import parse_query
from vaultlens.engine.related import related
from vaultlens.engine.render import page_hover, unresolved_hover
from vaultlens.engine.search import search

pytestmark = pytest.mark.asyncio(loop_scope="module")  # one session for the module (conftest)

DAILY = "daily/2025-06-01.md"


def backlink_count(vault, path: str) -> int:
    return len({s for s, _ in vault.backlinks(path) if s != path})


async def test_hover_on_a_link_describes_the_page(
    shared_client: LanguageClient, shared_vault: Path, buffers
):
    uri, text = buffers(DAILY)
    at = position(text, "[[Seed Starting]]", 4)
    result = await hover(shared_client, uri, at)
    assert result.range == types.Range(
        start=types.Position(line=at.line, character=at.character - 4),
        end=types.Position(line=at.line, character=at.character - 4 + len("[[Seed Starting]]")),
    )
    shown = result.contents.value
    engine = engine_vault(shared_vault)
    path = "garden/Seed Starting.md"
    assert shown == page_hover(engine, path, related_pages=True, via="stem")
    # what a person reads there
    assert shown.startswith(
        f"### Seed Starting\n\n`{path}` · type **howto** · {backlink_count(engine, path)} backlinks"
    )
    assert "4 backlinks" in shown
    assert "Tags: #garden/propagation" in shown
    assert "**Outline**\n\n- Seed Starting\n  - Compost and containers\n  - Germination\n" in shown
    assert "**Related pages**\n\n| page | score | why |\n|---|--:|---|\n" in shown
    rows = [
        line
        for line in shown.split("**Related pages**")[1].splitlines()
        if line.startswith("| ") and "---" not in line
    ][1:]
    assert [r.split(" | ")[0].removeprefix("| ") for r in rows] == [
        h.page.title for h in related(engine, path, 5)
    ]
    assert rows[0].startswith("| Tomatoes | ")


async def test_hover_on_an_alias_only_link(
    shared_client: LanguageClient, shared_vault: Path, buffers
):
    uri, text = buffers(DAILY)
    shown = await hover_text(shared_client, uri, position(text, "[[RAG]]", 3))
    engine = engine_vault(shared_vault)
    path = "ai/rag/Retrieval-Augmented Generation.md"
    assert shown == page_hover(engine, path, related_pages=True, via="alias")
    assert shown.startswith(
        f"### Retrieval-Augmented Generation\n\n`{path}` · type **concept** · {backlink_count(engine, path)} backlinks"
    )
    assert "_Resolved through an alias only: Obsidian does not follow this link._" in shown


async def test_hover_on_an_ambiguous_link(
    shared_client: LanguageClient, shared_vault: Path, buffers
):
    uri, text = buffers(DAILY)
    shown = await hover_text(shared_client, uri, position(text, "[[Index]]", 2))
    assert shown.startswith("### Index\n\n`garden/Index.md` · type **index**")
    assert shown.endswith("\n\n_Ambiguous: also matches `projects/Index.md`._")
    # the full paths are not ambiguous
    assert (
        await hover_text(shared_client, uri, position(text, "[[projects/Index]]", 2))
    ).startswith("### Index\n\n`projects/Index.md`")


async def test_hover_on_an_unresolved_link_lists_candidates(
    shared_client: LanguageClient, shared_vault: Path, buffers
):
    uri, text = buffers(DAILY)
    shown = await hover_text(shared_client, uri, position(text, "[[Quantum Gardening]]", 5))
    engine = engine_vault(shared_vault)
    candidates = search(engine, parse_query("Quantum Gardening", limit=5))
    assert shown == unresolved_hover(engine, "Quantum Gardening", candidates)
    assert shown.startswith(
        "### No page named “Quantum Gardening”\n\nThis link resolves to no page in the vault."
    )
    assert "**Closest pages**" in shown
    assert "| 2025-06-01 (`daily/2025-06-01.md`) | 6 |" in shown
    assert (
        len([line for line in shown.splitlines() if line.startswith("| ") and "`" in line])
        == len(candidates)
        == 5
    )


async def test_hover_on_embeds_edges_and_markdown_links(
    shared_client: LanguageClient, shared_vault: Path, buffers
):
    uri, text = buffers(DAILY)
    assert (
        await hover_text(shared_client, uri, position(text, "![[Watering Schedule]]", 5))
    ).startswith("### Watering Schedule\n")
    # a typed edge in the frontmatter: `related: - "[[Tomatoes]]"`
    assert (await hover_text(shared_client, uri, position(text, '"[[Tomatoes]]"', 4))).startswith(
        "### Tomatoes\n\n`garden/Tomatoes.md`"
    )
    tomatoes_uri, tomatoes = buffers("garden/Tomatoes.md")
    shown = await hover_text(
        shared_client, tomatoes_uri, position(tomatoes, "[my compost notes]", 3)
    )
    assert shown.startswith("### Composting\n\n`garden/Composting.md`")


async def test_hover_on_tags_counts_pages(
    shared_client: LanguageClient, shared_vault: Path, buffers
):
    uri, text = buffers(DAILY)
    result = await hover(shared_client, uri, position(text, "#harvest", 2))
    assert (
        result.contents.value
        == "### #harvest\n\n1 page carries this tag.\n\n- 2025-06-01 (`daily/2025-06-01.md`)"
    )
    at = position(text, "#harvest")
    assert result.range == types.Range(
        start=at, end=types.Position(line=at.line, character=at.character + 8)
    )
    shown = await hover_text(shared_client, uri, position(text, "#ai/llm", 3))
    assert shown.startswith("### #ai/llm\n\n8 pages carry this tag.\n\n")
    assert shown.count("\n- ") == 8
    assert "- Attention (`ai/Attention.md`)" in shown
    assert (await hover_text(shared_client, uri, position(text, "#garden/log", 3))).startswith(
        "### #garden/log\n\n1 page carries this tag."
    )


async def test_no_hover_away_from_links(shared_client: LanguageClient, shared_vault: Path, buffers):
    uri, text = buffers(DAILY)
    assert await hover(shared_client, uri, position(text, "Warm, dry", 2)) is None
    assert await hover(shared_client, uri, position(text, "# Sunday", 3)) is None


async def test_a_hover_shown_again_follows_a_change_to_the_vault(
    shared_client: LanguageClient, shared_vault: Path, buffers
):
    # Hovers are remembered per vault generation: the same link hovered twice gives the same
    # text; once the target page changes (a buffer here), the same link's hover shows the change.
    uri, text = buffers(DAILY)
    at = position(text, "[[Seed Starting]]", 4)
    first = await hover_text(shared_client, uri, at)
    assert await hover_text(shared_client, uri, at) == first
    assert "Sown in moonlight" not in first
    buffers("garden/Seed Starting.md", "# Seed Starting\n\nSown in moonlight, always.\n")
    now = await hover_text(shared_client, uri, at)
    assert "Sown in moonlight" in now, now
    engine = engine_vault(shared_vault, {"garden/Seed Starting.md": "# Seed Starting\n\nSown in moonlight, always.\n"})
    assert now == page_hover(engine, "garden/Seed Starting.md", related_pages=True, via="stem")


async def test_a_hover_outlives_typing_but_not_a_new_link(
    shared_client: LanguageClient, shared_vault: Path, buffers
):
    # A remembered hover holds while other pages change only their prose (the link graph is
    # the same), and is made again once a page gains a link to the target: the backlink count
    # and the related pages then count it, exactly as the engine does for the same buffers.
    uri, text = buffers(DAILY)
    at = position(text, "[[Seed Starting]]", 4)
    first = await hover_text(shared_client, uri, at)
    aphids = (shared_vault / "garden/Aphids.md").read_text()
    assert "Seed Starting" not in aphids
    typed = aphids + "\nLadybirds came back in June.\n"
    aphids_uri, _ = buffers("garden/Aphids.md", typed)
    assert await hover_text(shared_client, uri, at) == first
    linked = typed + "\nSee [[Seed Starting]] for the trays.\n"
    change_doc(shared_client, aphids_uri, 2, types.TextDocumentContentChangeWholeDocument(text=linked))
    now = await hover_text(shared_client, uri, at)
    engine = engine_vault(shared_vault, {"garden/Aphids.md": linked})
    assert now == page_hover(engine, "garden/Seed Starting.md", related_pages=True, via="stem")
    before = engine_vault(shared_vault)
    count = backlink_count(engine, "garden/Seed Starting.md")
    assert count == backlink_count(before, "garden/Seed Starting.md") + 1
    assert f"{count} backlinks" in now and now != first
