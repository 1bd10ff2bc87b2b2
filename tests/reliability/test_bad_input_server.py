"""The real server (``python -m vaultlens.lsp lsp`` over stdio, pytest-lsp) on the bad-input vault.

One session opens the whole catalogue of ``badvault_support`` (malformed YAML of every kind,
invalid UTF-8, surrogates, NUL bytes, a 50 MB page, a 4.9 MB line, 10,000 links, symbolic-link
loops and links out of the vault, a ``_vocabulary.md`` that is not a mapping) and then answers
``workspace/symbol``, completion, hover, ``wiki/search`` and diagnostic pulls, pushes a diagnostic
for each bad page, and keeps serving. What is wrong is logged in one line each (the vocabulary
as ``window/logMessage``, the skipped links on stderr, here ``--log-file``), never as a traceback.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import attrs
import pytest
import pytest_lsp
from badvault_support import write_bad_vault
from e2e_support import (
    CAPABILITIES,
    SERVER_COMMAND,
    SERVER_ENV,
    complete,
    end_of,
    hover_text,
    make_client,
    open_doc,
    position,
    symbols,
    wait_indexed,
    wiki_search,
)
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

LOG = Path(tempfile.mkdtemp(prefix="vaultlens-badvault-")) / "server.log"
SERVER = ClientServerConfig(
    server_command=[*SERVER_COMMAND, "--log-file", str(LOG)], client_factory=make_client, server_env=SERVER_ENV
)
PULL = attrs.evolve(
    CAPABILITIES,
    text_document=attrs.evolve(
        CAPABILITIES.text_document,
        diagnostic=types.DiagnosticClientCapabilities(related_document_support=False),
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(),
    ),
)


@pytest.fixture
def bad_vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write_bad_vault(root, tmp_path / "outside")
    return root.resolve()


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, bad_vault: Path):
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=PULL,
            root_uri=bad_vault.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=bad_vault.as_uri(), name="vault")],
        )
    )
    await wait_indexed(lsp_client, [bad_vault])
    yield
    await lsp_client.shutdown_session()


async def eventually(check, seconds: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.02)


def codes(items: list[types.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in items)


async def pull(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    return list(report.items)


async def test_the_server_serves_the_bad_vault_and_stays_alive(client: LanguageClient, bad_vault: Path):
    # workspace/symbol: good and bad pages alike, by title
    found = await symbols(client, "")
    names = {s.location.uri for s in found if s.kind == types.SymbolKind.File}
    for rel in ("Good.md", "Other.md", "huge.md", "yaml/list.md", "nul.md", "Many Links.md", "one-line.md"):
        assert (bad_vault / rel).as_uri() in names, rel
    assert not any("/escape/" in uri or uri.endswith("/secret.md") for uri in names)
    assert [s.name for s in await symbols(client, "many links")][:1] == ["Many Links"]

    # wiki/search: the bad pages do not hide the good ones, and the 4.9 MB line is searchable
    result = await wiki_search(client, {"query": "other"})
    assert "Other.md" in [hit["file"] for hit in result["hits"]]
    result = await wiki_search(client, {"query": "start end"})
    assert result["hits"][0]["file"] == "one-line.md"
    assert "TOPSECRET" not in str(await wiki_search(client, {"query": "topsecret"}))

    # completion and hover in an open page, and in a page with 10,000 links
    good_uri, good = open_doc(client, bad_vault, "Good.md")
    assert any(item.label.startswith("Other") for item in (await complete(client, good_uri, position(good, "Other"))).items)
    assert "### Other" in (await hover_text(client, good_uri, position(good, "[[Other", 3)) or "")
    many_uri, many = open_doc(client, bad_vault, "Many Links.md")
    assert await hover_text(client, many_uri, position(many, "[[Good", 3))
    listed = await complete(client, many_uri, position(many, "Target 9999", 2))
    assert listed is not None and listed.items

    # a buffer with lone surrogates (JSON can carry them) and NUL bytes
    odd_uri = (bad_vault / "odd.md").as_uri()
    odd = "# Odd \ud800 page\n\nSee [[Other]] \x00 and [[Go"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=odd_uri, language_id="markdown", version=1, text=odd)
        )
    )
    assert "### Other" in (await hover_text(client, odd_uri, position(odd, "[[Other", 3)) or "")
    assert await complete(client, odd_uri, end_of(odd)) is not None
    assert codes(await pull(client, odd_uri)) == ["invalid-utf16", "nul-bytes"]  # "[[Go" is not closed yet

    # diagnostics: pulled for open pages, pushed for the others, one per bad page
    tabs_uri, _ = open_doc(client, bad_vault, "yaml/tab-indent.md")
    (tabs,) = await pull(client, tabs_uri)
    assert (tabs.code, tabs.range.start.line) == ("frontmatter-yaml", 2)
    assert tabs.message == "malformed YAML frontmatter: found a tab character that violates indentation"
    expected = {
        "huge.md": "too-large",
        "nul.md": "nul-bytes",
        "invalid-utf8.md": "invalid-utf8",
        "surrogates.md": "invalid-utf8",
        "unclosed-frontmatter.md": "frontmatter-unclosed",
        "yaml/list.md": "frontmatter-not-mapping",
        "yaml/billion-laughs.md": "frontmatter-too-large",
        "yaml/python-tag.md": "frontmatter-yaml",
    }
    for rel, code in expected.items():
        uri = (bad_vault / rel).as_uri()
        await eventually(lambda uri=uri: uri in client.diagnostics)
        assert code in codes(client.diagnostics[uri]), rel
    many_pushed = client.diagnostics.get(many_uri) or await pull(client, many_uri)
    assert len(many_pushed) == 10_000

    # the vocabulary that is not a mapping: one warning line, to the client
    vocabulary = [m for m in client.log_messages if "_vocabulary.md" in m.message]
    assert [(m.type, m.message) for m in vocabulary] == [
        (types.MessageType.Warning, "_vocabulary.md:2: frontmatter is a list, not a mapping of keys (key: value lines)")
    ]

    # still alive and consistent: a disk change to a bad page is taken in
    (bad_vault / "yaml/list.md").write_text("---\ntitle: Listed\n---\nNow fine: [[Good]].\n", encoding="utf-8")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=(bad_vault / "yaml/list.md").as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    await eventually(lambda: not client.diagnostics.get((bad_vault / "yaml/list.md").as_uri()))
    assert "Listed" in [s.name for s in await symbols(client, "listed")]

    # the server's own log: one line per skipped link, no traceback
    log = LOG.read_text(encoding="utf-8")
    assert "Traceback" not in log
    lines = [line for line in log.splitlines() if str(bad_vault) in line or "skipped" in line]
    assert any(line.endswith("skipped escape: symbolic link leads outside the vault") for line in lines)
    assert any(line.endswith("skipped secret.md: symbolic link leads outside the vault") for line in lines)
