"""A cold start answers from every page's names first, then from the full vault.

The server runs with ``VAULTLENS_TEST_SLOW_BODIES`` (a test-only hook: a names pass whatever
the vault's size, and the full parse held back), so the names phase lasts long enough to be
asked: workspace symbols, ``[[`` completion and go-to-definition answer before the full vault
is in; an edit made then is kept; no diagnostic is published before the full vault; and once it
is in, every answer equals a plain server's (no names pass) on the same vault.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from e2e_support import (
    CAPABILITIES, EXAMPLE_VAULT, SERVER_COMMAND, SERVER_ENV, complete, copy_vault, index_ends, index_reports,
    hover, make_client, open_doc, page_symbols, position, start_session, symbols, wait_indexed,
)
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

SLOW = 4.0  # seconds the full parse is held back (one group: the example vault has 33 pages)
SLOW_ENV = {**SERVER_ENV, "VAULTLENS_TEST_SLOW_BODIES": str(SLOW), "VAULTLENS_CACHE": "0"}
PLAIN_ENV = {**SERVER_ENV, "VAULTLENS_CACHE": "0"}
QUERIES = ["compost", "tomat", "rag", "att", "soil health", "elena", "Index", "aphid"]
NEW_PAGE = "inbox/Mulch Notes.md"
NEW_TEXT = "# Mulch Notes\n\nStraw over the beds, see [[Composting]] and [[Aphids#Timing]].\n\n[[Tomat"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return copy_vault(EXAMPLE_VAULT, tmp_path / "vault")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_COMMAND, client_factory=make_client,
                                              server_env=SLOW_ENV))
async def slow_client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


def progress_messages(client: LanguageClient) -> list[str]:
    return [r.message or "" for reports in index_reports(client).values() for r in reports
            if isinstance(r, types.WorkDoneProgressReport)]


async def final_answers(client: LanguageClient, root: Path, uri: str, text: str) -> list:
    out: list = []
    for query in QUERIES:
        out.append([(s.name, s.kind, s.location.uri, s.location.range, s.container_name)
                    for s in await symbols(client, query)])
    found = await complete(client, uri, position(text, "[[Tomat", len("[[Tomat")))
    out.append([(i.label, i.sort_text, i.detail, i.text_edit) for i in (found.items if found else [])])
    for needle in ("[[Composting]]", "[[Aphids#Timing]]"):
        out.append(await client.text_document_definition_async(types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=position(text, needle, 3))))
        out.append(await hover(client, uri, position(text, needle, 3)))
    return out


@pytest.mark.timeout(90)
async def test_names_answer_first_and_the_full_vault_equals_a_plain_load(slow_client: LanguageClient, vault: Path):
    client = slow_client
    await client.initialize_session(types.InitializeParams(
        capabilities=CAPABILITIES, root_uri=vault.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=vault.as_uri(), name=vault.name)]))
    loop = asyncio.get_running_loop()
    started = loop.time()
    while not page_symbols(vault, await symbols(client, "compost")):
        assert loop.time() - started < 20, "no symbol from the names pass"
        await asyncio.sleep(0.05)
    # The names phase: the page is found by its title; the full vault is not in yet.
    assert not index_ends(client)
    assert ("Composting", "garden/Composting.md") in page_symbols(vault, await symbols(client, "compost"))
    assert any("by name" in m for m in progress_messages(client))

    # An edit made now (a new page, open in the editor) is part of every answer from here on.
    uri, text = open_doc(client, vault, NEW_PAGE, NEW_TEXT)
    assert ("Mulch Notes", NEW_PAGE) in page_symbols(vault, await symbols(client, "mulch"))
    found = await complete(client, uri, position(NEW_TEXT, "[[Tomat", len("[[Tomat")))
    assert found is not None and "Tomatoes" in [i.label for i in found.items]
    jump = await client.text_document_definition_async(types.DefinitionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=position(NEW_TEXT, "[[Composting]]", 3)))
    assert jump, "a link by page name goes to its page during the names phase"
    at_heading = asyncio.ensure_future(client.text_document_definition_async(types.DefinitionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=position(NEW_TEXT, "[[Aphids#Timing]]", 3))))
    # A hover shows backlinks and related pages: none from a half-built graph (no answer yet).
    assert await hover(client, uri, position(NEW_TEXT, "[[Composting]]", 3)) is None
    await asyncio.sleep(0.3)
    assert not at_heading.done(), "a heading's place waits for the full vault"
    assert not index_ends(client), "answered from names: the full vault is still held back"
    assert not client.diagnostics, "nothing is published from a half-built vault"

    await wait_indexed(client, [vault])
    assert await at_heading
    assert await hover(client, uri, position(NEW_TEXT, "[[Composting]]", 3)) is not None
    assert ("Mulch Notes", NEW_PAGE) in page_symbols(vault, await symbols(client, "mulch"))
    slow = await final_answers(client, vault, uri, text)

    plain = make_client()
    await plain.start_io(*SERVER_COMMAND, env=PLAIN_ENV)
    try:
        await start_session(plain, vault)
        open_doc(plain, vault, NEW_PAGE, NEW_TEXT)
        await asyncio.sleep(0.2)
        assert await final_answers(plain, vault, uri, text) == slow
    finally:
        await plain.shutdown_session()
