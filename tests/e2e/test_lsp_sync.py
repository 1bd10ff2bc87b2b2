"""Keeping the graph live: buffer edits (didOpen/didChange/didClose) and files changed on disk."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from e2e_support import (
    EXAMPLE_VAULT,
    change_doc,
    copy_vault,
    end_of,
    engine_vault,
    hover_text,
    insert_at,
    open_doc,
    page_symbols,
    position,
    start_session,
    symbols,
    watched,
    whole,
    wiki_search,
)
from lsprotocol import types
from pytest_lsp import LanguageClient

CREATED, CHANGED, DELETED = (
    types.FileChangeType.Created,
    types.FileChangeType.Changed,
    types.FileChangeType.Deleted,
)


def backlinks_in(hover: str) -> int:
    return int(re.search(r" · (\d+) backlinks?\b", hover).group(1))


async def test_a_frontmatter_title_typed_in_a_buffer(client: LanguageClient, vault: Path):
    assert page_symbols(vault, await symbols(client, "xylophone")) == []
    uri, _ = open_doc(client, vault, "garden/Aphids.md")
    change_doc(client, uri, 2, insert_at(1, 0, "title: Xylophone Orchard\n"))
    assert page_symbols(vault, await symbols(client, "xylophone"))[0] == (
        "Xylophone Orchard",
        "garden/Aphids.md",
    )
    assert page_symbols(vault, await symbols(client, "xylo"))[0] == (
        "Xylophone Orchard",
        "garden/Aphids.md",
    )
    hits = (await wiki_search(client, {"query": "xylophone orchard"}))["hits"]
    assert (hits[0]["title"], hits[0]["file"]) == ("Xylophone Orchard", "garden/Aphids.md")
    # links by file name still reach the page, which now shows its new title
    tomatoes_uri, tomatoes = open_doc(client, vault, "garden/Tomatoes.md")
    assert (await hover_text(client, tomatoes_uri, position(tomatoes, "[[Aphids]]", 3))).startswith(
        "### Xylophone Orchard\n"
    )

    # while the buffer is open it wins over the disk ...
    disk = vault / "garden" / "Aphids.md"
    disk.write_text(
        disk.read_text(encoding="utf-8").replace("---\n", "---\ntitle: Zeppelin Ledger\n", 1),
        encoding="utf-8",
    )
    watched(client, (disk, CHANGED))
    assert page_symbols(vault, await symbols(client, "xylophone"))[0] == (
        "Xylophone Orchard",
        "garden/Aphids.md",
    )
    assert page_symbols(vault, await symbols(client, "zeppelin ledger")) == []
    # ... and on close the page is the disk's again
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert page_symbols(vault, await symbols(client, "xylophone")) == []
    assert page_symbols(vault, await symbols(client, "zeppelin ledger"))[0] == (
        "Zeppelin Ledger",
        "garden/Aphids.md",
    )


async def test_a_new_heading_typed_in_a_buffer(client: LanguageClient, vault: Path):
    heading = "Attention › Sparse Attention Patterns"
    assert heading not in [s.name for s in await symbols(client, "sparse")]
    uri, text = open_doc(client, vault, "ai/Attention.md")
    end = end_of(text)
    # two incremental edits in one notification, as an editor sends fast typing
    change_doc(
        client,
        uri,
        2,
        insert_at(end.line, end.character, "\n## Sparse Attention"),
        insert_at(end.line + 1, len("## Sparse Attention"), " Patterns\n\nLocal windows only.\n"),
    )
    found = await symbols(client, "sparse")
    [symbol] = [s for s in found if s.name == heading]
    assert symbol.kind == types.SymbolKind.String
    assert symbol.location.range.start.line == end.line + 1
    names = [s.name for s in found]
    assert names.index(heading) == names.index("Attention") + 1
    # undo: the heading is gone again
    change_doc(client, uri, 3, whole(text))
    assert heading not in [s.name for s in await symbols(client, "sparse")]


async def test_a_new_link_adds_a_backlink(client: LanguageClient, vault: Path):
    home_uri, home = open_doc(client, vault, "Home.md")
    at = position(home, "[[Composting]]", 3)
    before = await hover_text(client, home_uri, at)
    expected = len({s for s, _ in engine_vault(vault).backlinks("garden/Composting.md")})
    assert backlinks_in(before) == expected == 6
    assert "| Attention |" not in before

    uri, text = open_doc(client, vault, "ai/Attention.md")
    end = end_of(text)
    change_doc(
        client, uri, 2, insert_at(end.line, end.character, "\nSee also [[Composting]], oddly.\n")
    )
    after = await hover_text(client, home_uri, at)
    assert backlinks_in(after) == expected + 1
    # a second link from the same page is not a second backlink
    change_doc(client, uri, 3, insert_at(end.line + 2, 0, "And [[garden/Composting]] again.\n"))
    assert backlinks_in(await hover_text(client, home_uri, at)) == expected + 1
    # the new link itself hovers to the page
    new_text = text + "\nSee also [[Composting]], oddly.\nAnd [[garden/Composting]] again.\n"
    assert (
        await hover_text(client, uri, position(new_text, "[[Composting]], oddly", 3))
    ).startswith("### Composting\n")

    change_doc(client, uri, 4, whole(text))
    assert backlinks_in(await hover_text(client, home_uri, at)) == expected


async def test_files_created_changed_and_deleted_on_disk(client: LanguageClient, vault: Path):
    daily_uri, daily = open_doc(client, vault, "daily/2025-06-01.md")
    link = position(daily, "[[Quantum Gardening]]", 4)
    assert (await hover_text(client, daily_uri, link)).startswith(
        "### No page named “Quantum Gardening”"
    )

    page = vault / "garden" / "Quantum Gardening.md"
    page.write_text(
        "---\ntags: [garden/experiments]\n---\n# Quantum Gardening\n\nSuperposed seedlings.\n",
        encoding="utf-8",
    )
    watched(client, (page, CREATED))
    hits = (await wiki_search(client, {"query": "quantum gardening"}))["hits"]
    assert hits[0]["file"] == "garden/Quantum Gardening.md"
    assert page_symbols(vault, await symbols(client, "quantum"))[0] == (
        "Quantum Gardening",
        "garden/Quantum Gardening.md",
    )
    shown = await hover_text(client, daily_uri, link)
    # linked from this daily note and from garden/Index.md
    assert shown.startswith(
        "### Quantum Gardening\n\n`garden/Quantum Gardening.md` · 2 backlinks\n\nTags: #garden/experiments"
    )

    page.write_text(
        "---\ntitle: Quantum Horticulture\n---\n# Quantum Horticulture\n", encoding="utf-8"
    )
    watched(client, (page, CHANGED))
    assert page_symbols(vault, await symbols(client, "horticulture"))[0] == (
        "Quantum Horticulture",
        "garden/Quantum Gardening.md",
    )

    page.unlink()
    watched(client, (page, DELETED))
    assert page_symbols(vault, await symbols(client, "horticulture")) == []
    files = [h["file"] for h in (await wiki_search(client, {"query": "quantum gardening"}))["hits"]]
    assert "garden/Quantum Gardening.md" not in files
    assert (await hover_text(client, daily_uri, link)).startswith(
        "### No page named “Quantum Gardening”"
    )


async def test_a_deleted_folder_takes_its_pages_along(client: LanguageClient, vault: Path):
    folder = vault / "scratch"
    folder.mkdir()
    for name in ("Wombat Notes", "Wombat Burrows"):
        (folder / f"{name}.md").write_text(f"# {name}\n", encoding="utf-8")
    watched(client, *[(folder / f"{n}.md", CREATED) for n in ("Wombat Notes", "Wombat Burrows")])
    assert [t for t, _ in page_symbols(vault, await symbols(client, "wombat"))] == [
        "Wombat Burrows",
        "Wombat Notes",
    ]
    shutil.rmtree(folder)
    watched(client, (folder, DELETED))  # editors report only the folder
    assert page_symbols(vault, await symbols(client, "wombat")) == []


async def test_excluded_files_stay_out_whatever_the_event(bare_client: LanguageClient, tmp_path: Path):
    """The exclude globs of ``.vaultlens.toml`` hold for the start-up scan, folder rescans and
    single-file events alike (``lsp/live.py``, shared with the MCP server); an open buffer wins
    while it is open."""
    vault = copy_vault(EXAMPLE_VAULT, tmp_path / "vault")
    (vault / ".vaultlens.toml").write_text('exclude = ["templates/"]\n', encoding="utf-8")
    (vault / "templates").mkdir()
    (vault / "templates" / "Quokka Template.md").write_text("# Quokka Template\n", encoding="utf-8")
    await start_session(bare_client, vault)

    async def quokka_files() -> list[str]:
        return [h["file"] for h in (await wiki_search(bare_client, {"query": "quokka"}))["hits"]]

    assert await quokka_files() == []
    written = vault / "templates" / "Quokka Notes.md"
    written.write_text("# Quokka Notes\n", encoding="utf-8")
    watched(bare_client, (written, CREATED))
    assert await quokka_files() == []

    zoo = tmp_path / "zoo"  # a folder moved in whole: the event names only the folder
    (zoo / "templates").mkdir(parents=True)
    (zoo / "Quokka Sightings.md").write_text("# Quokka Sightings\n", encoding="utf-8")
    (zoo / "templates" / "Quokka Form.md").write_text("# Quokka Form\n", encoding="utf-8")
    shutil.move(str(zoo), str(vault / "zoo"))
    watched(bare_client, (vault / "zoo", CREATED))
    assert await quokka_files() == ["zoo/Quokka Sightings.md"]

    uri, _ = open_doc(bare_client, vault, "templates/Quokka Notes.md")
    assert "templates/Quokka Notes.md" in await quokka_files()  # the buffer wins while open
    bare_client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert await quokka_files() == ["zoo/Quokka Sightings.md"]
