"""A warm start answers from the persistent index at once, then catches up with the disk.

The index as stored serves the first requests (``engine.scan.load_vault(check_later=True)``);
the files are then listed and every page changed, added or deleted while no server ran is read
again before the vault counts as indexed: from then on nothing stale is served, and the index
is stored again with the changes.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from e2e_support import (
    CAPABILITIES, EXAMPLE_VAULT, SERVER_COMMAND, SERVER_ENV, copy_vault, hover_text, make_client, open_doc,
    page_symbols, position, start_session, symbols, wiki_search,
)
from lsprotocol import types


async def session(vault: Path, env: dict[str, str], probe) -> object:  # noqa: ANN001
    client = make_client()
    await client.start_io(*SERVER_COMMAND, env=env)
    try:
        await start_session(client, vault)
        return await probe(client)
    finally:
        await client.shutdown_session()


def index_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.vlc"))


async def wait_for(condition, seconds: float = 20.0) -> None:  # noqa: ANN001
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


@pytest.mark.timeout(120)
async def test_pages_changed_while_no_server_ran_are_served_once_indexed(tmp_path: Path):
    vault = copy_vault(EXAMPLE_VAULT, tmp_path / "vault")
    old = time.time() - 3600  # outside the racy window: trusted by their stat
    for page in vault.rglob("*.md"):
        os.utime(page, (old, old))
    cache = tmp_path / "index"
    env = {**SERVER_ENV, "VAULTLENS_CACHE_DIR": str(cache)}

    async def names(client) -> list:  # noqa: ANN001
        return page_symbols(vault, await symbols(client, "composting"))

    before = await session(vault, env, names)
    await wait_for(lambda: bool(index_files(cache)))  # the cold session stored its index
    [stored] = index_files(cache)
    written = stored.stat().st_mtime_ns

    (vault / "garden" / "Composting.md").write_text(
        "---\ntitle: Vermicomposting\n---\n# Vermicomposting\n\nWorms only.\n", encoding="utf-8"
    )
    (vault / "Mulch Notes.md").write_text("# Mulch Notes\n\nStraw over the beds.\n", encoding="utf-8")
    (vault / "Home.md").unlink()

    async def after(client) -> tuple:  # noqa: ANN001
        hits = (await wiki_search(client, {"query": "mulch"}))["hits"]
        files = [h["file"] for h in (await wiki_search(client, {"query": "home"}))["hits"]]
        return (page_symbols(vault, await symbols(client, "vermicomposting")), hits[0]["file"],
                "Home.md" in files, page_symbols(vault, await symbols(client, "composting")))

    vermi, mulch, home, composting = await session(vault, env, after)
    assert ("Composting", "garden/Composting.md") in before
    assert vermi[0] == ("Vermicomposting", "garden/Composting.md")
    assert mulch == "Mulch Notes.md" and not home
    assert ("Composting", "garden/Composting.md") not in composting
    await wait_for(lambda: index_files(cache) and index_files(cache)[0].stat().st_mtime_ns != written)  # stored again

    async def unchanged(client) -> list:  # noqa: ANN001
        return page_symbols(vault, await symbols(client, "vermicomposting"))

    assert (await session(vault, env, unchanged))[0] == ("Vermicomposting", "garden/Composting.md")


@pytest.mark.timeout(120)
async def test_a_warm_start_answers_hovers_and_definitions_while_the_files_are_checked(tmp_path: Path):
    """The index as stored holds every page in full: a hover and a go-to-definition sent as soon
    as it answers are answered from it, not left empty (or held) until the listing is compared
    with it, which a client that never pauses once had to wait 2 s for."""
    vault = copy_vault(EXAMPLE_VAULT, tmp_path / "vault")
    cache = tmp_path / "index"
    env = {**SERVER_ENV, "VAULTLENS_CACHE_DIR": str(cache)}
    await session(vault, env, lambda client: symbols(client, "home"))
    await wait_for(lambda: bool(index_files(cache)))  # the cold session stored its index

    client = make_client()
    await client.start_io(*SERVER_COMMAND, env=env)
    try:
        await client.initialize_session(types.InitializeParams(
            capabilities=CAPABILITIES, root_uri=vault.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=vault.as_uri(), name=vault.name)],
        ))
        uri, text = open_doc(client, vault, "Home.md")
        at = position(text, "[[Embeddings]]", 4)
        while not page_symbols(vault, await symbols(client, "embeddings")):  # the stored index is in
            pass
        shown = await hover_text(client, uri, at)  # at once: no pause for a quiet moment
        jump = await client.text_document_definition_async(
            types.DefinitionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=at)
        )
    finally:
        await client.shutdown_session()
    assert shown is not None and "Embeddings" in shown
    [link] = jump if isinstance(jump, list) else [jump]
    assert (link.target_uri if isinstance(link, types.LocationLink) else link.uri) == (vault / "ai" / "Embeddings.md").as_uri()
