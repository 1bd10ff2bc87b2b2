"""Helpers for the end-to-end tests: start a session, wait for the index, talk to the server.

The tests drive the real server (``python -m vaultlens.lsp lsp``) over stdio with pytest-lsp's client.
Expected values come either from a person (hand-written) or from the engine called in-process
on the same copied vault: the latter checks that the server's wiring keeps the engine's answer.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from pygls.uris import to_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import make_test_lsp_client

from vaultlens.engine.page import parse_page
from vaultlens.engine.scan import open_vault
from vaultlens.engine.vault import Vault

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_VAULT = REPO / "examples" / "vault"
SHARED = REPO.parent / "shared"  # the sibling checkout of shared data; may be absent
INDEX_TIMEOUT = 20.0

# Whatever Python runs the tests runs the server, with the repo importable from anywhere.
SERVER_ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
}
SERVER_COMMAND = [sys.executable, "-m", "vaultlens.lsp", "lsp"]

MARKDOWN = [types.MarkupKind.Markdown, types.MarkupKind.PlainText]

# A client that shows progress and watches files for the server, as VS Code and Neovim do.
CAPABILITIES = types.ClientCapabilities(
    general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]),
    window=types.WindowClientCapabilities(work_done_progress=True),
    workspace=types.WorkspaceClientCapabilities(
        configuration=True,
        workspace_folders=True,
        did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
            dynamic_registration=True
        ),
        symbol=types.WorkspaceSymbolClientCapabilities(),
    ),
    text_document=types.TextDocumentClientCapabilities(
        synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
        completion=types.CompletionClientCapabilities(
            completion_item=types.ClientCompletionItemOptions(
                documentation_format=MARKDOWN, snippet_support=False, label_details_support=True
            ),
            context_support=True,
        ),
        hover=types.HoverClientCapabilities(content_format=MARKDOWN),
    ),
)


def make_client() -> LanguageClient:
    """pytest-lsp's test client, plus an answer to ``client/registerCapability``.

    pytest-lsp answers ``window/workDoneProgress/create`` (and records ``$/progress``) itself,
    but has no handler for dynamic registration; the server's file-watcher registration would
    otherwise come back as MethodNotFound.
    """
    client = make_test_lsp_client()
    client.registrations = []  # type: ignore[attr-defined]

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(ls: LanguageClient, params: types.RegistrationParams) -> None:
        ls.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    @client.feature(types.CLIENT_UNREGISTER_CAPABILITY)
    def unregister_capability(ls: LanguageClient, params: types.UnregistrationParams) -> None:
        gone = {u.id for u in params.unregisterations}
        ls.registrations[:] = [r for r in ls.registrations if r.id not in gone]  # type: ignore[attr-defined]

    return client


SERVER = ClientServerConfig(
    server_command=SERVER_COMMAND, client_factory=make_client, server_env=SERVER_ENV
)


# --- vaults on disk ---------------------------------------------------------------------------


def copy_vault(src: Path, dst: Path) -> Path:
    """A private copy of a vault (the tests never touch the original)."""
    shutil.copytree(src, dst)
    return dst.resolve()


def write_vault(root: Path, files: dict[str, str]) -> Path:
    """A vault made of ``files`` (vault-relative path -> text)."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root.resolve()


def engine_vault(root: Path, buffers: dict[str, str] | None = None) -> Vault:
    """The engine's view of ``root`` in-process, with open buffers (rel -> text) applied on top,
    the way the server sees them."""
    vault, _listing = open_vault(str(root))
    for rel, text in (buffers or {}).items():
        vault.upsert(parse_page(rel, text, label_first=vault.label_first))
    return vault


# --- the session ------------------------------------------------------------------------------


def index_reports(client: LanguageClient) -> dict[Any, list[Any]]:
    """The indexing progress reports, by token."""
    return {
        t: r for t, r in client.progress_reports.items() if str(t).startswith("vaultlens-index-")
    }


def index_ends(client: LanguageClient) -> list[types.WorkDoneProgressEnd]:
    """Every indexing progress "end" received so far."""
    return [
        r
        for reports in index_reports(client).values()
        for r in reports
        if isinstance(r, types.WorkDoneProgressEnd)
    ]


async def wait_indexed(client: LanguageClient, roots: list[Path]) -> None:
    """Until every vault is indexed: ``wiki/search`` waits for a vault's index, and the progress
    "end" follows the index in the same step on the server."""
    for root in roots:
        await client.protocol.send_request_async(
            "wiki/search", {"query": "", "uri": (root / "probe.md").as_uri()}
        )
    deadline = asyncio.get_running_loop().time() + INDEX_TIMEOUT
    while len(index_ends(client)) < len(roots):
        assert asyncio.get_running_loop().time() < deadline, "no indexing progress end"
        await asyncio.sleep(0.01)


async def start_session(
    client: LanguageClient, *roots: Path, options: Any = None
) -> types.InitializeResult:
    """``initialize`` + ``initialized`` with one workspace folder per vault, then wait for the index."""
    folders = [types.WorkspaceFolder(uri=r.as_uri(), name=r.name) for r in roots]
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=CAPABILITIES,
            root_uri=roots[0].as_uri(),
            workspace_folders=folders,
            initialization_options=options,
        )
    )
    await wait_indexed(client, list(roots))
    return result


# --- requests ---------------------------------------------------------------------------------


def to_plain(value: Any) -> Any:
    """pygls hands custom results back as nested namedtuples: turn them into JSON data again."""
    if hasattr(value, "_asdict"):
        return {k: to_plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    return value


async def wiki_search(client: LanguageClient, params: Any) -> Any:
    """``wiki/search`` as plain JSON data."""
    return to_plain(await client.protocol.send_request_async("wiki/search", params))


async def cli_search(root: Path, query: str, *flags: str) -> dict[str, Any]:
    """``vaultlens search QUERY --vault ROOT --json FLAGS`` in a subprocess, parsed."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "vaultlens.lsp",
        "search",
        query,
        "--vault",
        str(root),
        "--json",
        *flags,
        cwd=str(REPO),
        env=SERVER_ENV,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    return json.loads(out.decode("utf-8"))


def cli_flags(params: dict[str, Any]) -> list[str]:
    """The CLI flags that say what ``wiki/search`` params say."""
    flags: list[str] = []
    for key in ("type", "folder", "tag", "limit"):
        if key in params:
            flags += [f"--{key}", str(params[key])]
    if params.get("graph"):
        flags.append("--graph")
    return flags


def rel_of(root: Path, uri: str) -> str:
    """The vault-relative POSIX path of a ``file:`` URI."""
    return Path(to_fs_path(uri)).resolve().relative_to(root).as_posix()


async def symbols(client: LanguageClient, query: str) -> list[types.WorkspaceSymbol]:
    """``workspace/symbol`` (the server answers WorkspaceSymbol objects)."""
    result = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    return list(result or [])


def page_symbols(root: Path, found: list[types.WorkspaceSymbol]) -> list[tuple[str, str]]:
    """(title, path) of the page symbols, in the order received."""
    return [
        (s.name, rel_of(root, s.location.uri)) for s in found if s.kind == types.SymbolKind.File
    ]


def open_doc(
    client: LanguageClient, root: Path, rel: str, text: str | None = None
) -> tuple[str, str]:
    """``didOpen`` a page (its disk text unless given); returns (uri, text)."""
    path = root / rel
    if text is None:
        text = path.read_text(encoding="utf-8")
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="markdown", version=1, text=text
            )
        )
    )
    return uri, text


def change_doc(
    client: LanguageClient, uri: str, version: int, *changes: types.TextDocumentContentChangeEvent
) -> None:
    """``didChange`` with the given content changes."""
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=list(changes),
        )
    )


def insert_at(line: int, character: int, text: str) -> types.TextDocumentContentChangePartial:
    """An incremental change inserting ``text`` at one position."""
    at = types.Position(line=line, character=character)
    return types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text=text)


def whole(text: str) -> types.TextDocumentContentChangeWholeDocument:
    """A full-document change."""
    return types.TextDocumentContentChangeWholeDocument(text=text)


def utf16(text: str) -> int:
    """Length in UTF-16 code units (LSP columns)."""
    return len(text.encode("utf-16-le")) // 2


def position(text: str, needle: str, offset: int = 0) -> types.Position:
    """The LSP position ``offset`` code points into the first occurrence of ``needle``."""
    index = text.index(needle) + offset
    line = text.count("\n", 0, index)
    start = text.rfind("\n", 0, index) + 1
    return types.Position(line=line, character=utf16(text[start:index]))


def end_of(text: str) -> types.Position:
    """The position at the very end of ``text``."""
    lines = text.split("\n")
    return types.Position(line=len(lines) - 1, character=utf16(lines[-1]))


async def complete(
    client: LanguageClient, uri: str, at: types.Position
) -> types.CompletionList | None:
    """``textDocument/completion`` as typed (trigger kind Invoked)."""
    result = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=at,
            context=types.CompletionContext(trigger_kind=types.CompletionTriggerKind.Invoked),
        )
    )
    assert result is None or isinstance(result, types.CompletionList)
    return result


async def hover(client: LanguageClient, uri: str, at: types.Position) -> types.Hover | None:
    """``textDocument/hover``."""
    return await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=at)
    )


async def hover_text(client: LanguageClient, uri: str, at: types.Position) -> str | None:
    """The Markdown of a hover, or None when the server has nothing to say."""
    result = await hover(client, uri, at)
    if result is None:
        return None
    assert isinstance(result.contents, types.MarkupContent)
    assert result.contents.kind == types.MarkupKind.Markdown
    return result.contents.value


def watched(client: LanguageClient, *events: tuple[Path, types.FileChangeType]) -> None:
    """``workspace/didChangeWatchedFiles`` for files changed on disk."""
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=p.as_uri(), type=t) for p, t in events]
        )
    )


# --- fixtures (imported by the conftest of each test folder that drives the server) ----------


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, vault: Path):
    """A session on the requesting module's ``vault`` fixture, indexed."""
    await start_session(lsp_client, vault)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def bare_client(lsp_client: LanguageClient):
    """A running server without a session: the test calls ``start_session`` itself."""
    yield
    if lsp_client.capabilities is None:  # no session (the test skipped first): just let it go
        lsp_client.exit(None)
    await lsp_client.shutdown_session()  # a no-op when no session was started
