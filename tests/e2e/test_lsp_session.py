"""Initialise, the advertised capabilities, watcher registration, indexing progress, settings."""

from __future__ import annotations

from pathlib import Path

from e2e_support import (
    CAPABILITIES,
    EXAMPLE_VAULT,
    copy_vault,
    index_reports,
    start_session,
    symbols,
    wiki_search,
    write_vault,
)
from lsprotocol import types
from pytest_lsp import LanguageClient

from vaultlens.engine.scan import GROUP_PAGES, list_pages


async def test_initialize_watchers_and_progress(bare_client: LanguageClient, vault: Path):
    result = await start_session(bare_client, vault)

    # initialize: what the server offers
    caps = result.capabilities
    assert result.server_info is not None and result.server_info.name == "vaultlens"
    assert caps.position_encoding == types.PositionEncodingKind.Utf16
    assert caps.text_document_sync.change == types.TextDocumentSyncKind.Incremental
    assert caps.text_document_sync.open_close is True
    assert set(caps.completion_provider.trigger_characters) == {"[", "#", "^", "|", "!"}  # "!" opens a callout type: > [!
    assert caps.hover_provider
    assert caps.workspace_symbol_provider

    # initialized: the server asks to watch Markdown files
    [registration] = bare_client.registrations
    assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    globs = [w["globPattern"] for w in registration.register_options["watchers"]]
    assert "**/*.md" in globs

    # then indexes the vault, reporting begin / report / end with page counts
    n = len(list_pages(str(vault)).paths)
    assert n == 33
    [(_token, reports)] = index_reports(bare_client).items()
    begin, *middle, end = reports
    assert isinstance(begin, types.WorkDoneProgressBegin)
    assert begin.title == "Indexing vault"
    assert begin.percentage == 0
    assert middle and all(isinstance(r, types.WorkDoneProgressReport) for r in middle)
    assert middle[-1].message == f"{n}/{n} pages"
    assert middle[-1].percentage == 100
    assert isinstance(end, types.WorkDoneProgressEnd)
    assert end.message == f"{n} pages indexed"
    # the bundled vault is clean: no warnings about vocabulary or settings
    messages = bare_client.log_messages
    assert [m.message for m in messages if m.type <= types.MessageType.Warning] == []


async def test_progress_reports_each_batch(bare_client: LanguageClient, tmp_path: Path):
    """600 pages arrive in batches (``GROUP_PAGES``, 125): one report per batch, counts and
    percentages rising."""
    files = {
        f"notes/page-{i:03d}.md": f"# Note {i}\n\nSome words about topic {i % 7}.\n"
        for i in range(600)
    }
    root = write_vault(tmp_path / "big", files)
    await start_session(bare_client, root)
    [(_token, reports)] = index_reports(bare_client).items()
    kinds = [r.kind for r in reports]
    assert GROUP_PAGES == 125
    assert kinds == ["begin", "report", "report", "report", "report", "report", "end"]
    assert [r.message for r in reports[1:6]] == [f"{n}/600 pages" for n in (125, 250, 375, 500, 600)]
    assert [r.percentage for r in reports[1:6]] == [20, 41, 62, 83, 100]
    assert reports[-1].message == "600 pages indexed"
    result = await wiki_search(bare_client, {"query": "note 599", "limit": 1})
    assert result["hits"][0]["file"] == "notes/page-599.md"


async def test_no_progress_without_the_client_capability(bare_client: LanguageClient, vault: Path):
    caps = types.ClientCapabilities(
        window=types.WindowClientCapabilities(work_done_progress=False),
        text_document=CAPABILITIES.text_document,
    )
    await bare_client.initialize_session(
        types.InitializeParams(capabilities=caps, root_uri=vault.as_uri())
    )
    result = await wiki_search(bare_client, {"query": "graph rag", "limit": 1})
    assert result["hits"][0]["title"] == "Graph RAG"
    assert bare_client.progress_reports == {}
    assert bare_client.registrations == []  # no dynamic registration offered, none asked for


async def test_vault_settings_file_is_read(bare_client: LanguageClient, tmp_path: Path):
    """``.vaultlens.toml`` sets the result limit; a bad value is logged and the default kept."""
    root = copy_vault(EXAMPLE_VAULT, tmp_path / "vault")
    (root / ".vaultlens.toml").write_text('limit = 3\nlinkStyle = "sideways"\n', encoding="utf-8")
    await start_session(bare_client, root)
    found = await symbols(bare_client, "rag")
    assert len([s for s in found if s.kind == types.SymbolKind.File]) == 3
    warnings = [m.message for m in bare_client.log_messages if m.type == types.MessageType.Warning]
    assert warnings == [
        ".vaultlens.toml: link_style must be one of auto, title, filename, path; keeping 'auto'"
    ]
