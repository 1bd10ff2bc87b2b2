"""No lost edits, no graph drift: the server's buffers and page graph against a client's model.

- A hypothesis property: random sequences of incremental ``didChange`` edits (inserts, deletes,
  multi-line replacements, several changes per notification, whole-document replacements,
  positions past the end of a line or of the document, astral-plane characters such as 😀 and 𝔸
  whose UTF-16 columns differ from Python indices, CRLF, lone CR, U+2028) go through the real
  server to a few open pages. The client's model applies each edit the way LSP 3.17 defines it,
  independently of the server's code. Then the server's text of every open page (``wiki/read``
  level 2) equals the model's, and its graph equals one the engine builds in-process from the
  final texts: the page list (``wiki/glob``), each page's title, headings and outline
  (``wiki/read`` level 1) and its outgoing links, backlinks and typed edges (``wiki/links``).
  One server serves the whole run (it lives on an event loop in a thread, since hypothesis
  tests are synchronous); every example starts by closing every buffer, so pages are the disk's.
- Interleaved disk changes and buffer edits of one page (pytest-lsp, the e2e helpers): an open
  buffer wins over a disk write reported by ``workspace/didChangeWatchedFiles``; after
  ``didClose`` the disk wins; a page deleted on disk while open stays findable until closed.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types
from vaultlens.engine.writes import page_version
from protocol_support import (
    SERVER,
    RawServer,
    change_doc,
    engine_vault,
    insert_at,
    open_doc,
    start_session,
    utf16,
    watched,
    whole,
    write_vault,
)
from pytest_lsp import LanguageClient

from vaultlens.engine import retrieve

PAGES = {
    "A.md": "# Alpha\nLinks to [[B]] and [[C|see C]].\n#tag-one\n",
    "B.md": "---\ntitle: Beta\naliases: [Bee]\n---\n# Beta 😀\nBack to [[A]]. 𝔸 text\n## Section\n",
    "C.md": "# Gamma\r\nSee [[A#Alpha]] and [[D]].\r\nup:: [[sub/E]]\r\n",
    "D.md": "# Delta\nNo links é.\n",
    "sub/E.md": "# Epsilon\n[[B]] [[Missing]] [[Bee]]\n",
}
NEW_PAGE = "New.md"  # a page that exists only as a buffer
OPENABLE = ["A.md", "B.md", "C.md", "sub/E.md", NEW_PAGE]
FRAGMENTS = [
    "a", "Z", " ", "é", "😀", "𝔸", "\n", "\r\n", "\r", "\u2028", "[[", "]]", "[[A]]", "[[B|bee]]",
    "[[C#Gamma]]", "[[New]]", "[[D", "|", "#", "#tag-two ", "# ", "## Head 😀\n", "---\n", "title: T\n",
    "::", "up:: [[D]]\n", "^block",
]
PAST_LINE = 40  # a drawn line at or above this is past the last line
PAST_CHAR = 70  # a drawn character at or above this is past the end of its line

_BREAK = re.compile(r"\r\n|\r|\n")


# --- the client's model of a buffer (LSP 3.17, written apart from the server's code) ----------


def line_starts(text: str) -> list[tuple[int, int]]:
    """(offset, length without terminator) of each LSP line."""
    out, start = [], 0
    for found in _BREAK.finditer(text):
        out.append((start, found.start() - start))
        start = found.end()
    out.append((start, len(text) - start))
    return out


def offset_of(text: str, line: int, character: int) -> int:
    """The code-point offset of an LSP position (UTF-16 character); past the end of a line is
    its end, past the last line is the end of the text."""
    lines = line_starts(text)
    if line >= len(lines):
        return len(text)
    start, length = lines[line]
    units = 0
    for index, char in enumerate(text[start : start + length]):
        if units >= character:
            return start + index
        units += 2 if ord(char) > 0xFFFF else 1
    return start + length


def position_of(text: str, line_draw: int, char_draw: int) -> dict[str, int]:
    """An LSP position from two drawn numbers: a code-point boundary of a line, or past an end."""
    lines = line_starts(text)
    if line_draw >= PAST_LINE:
        return {"line": len(lines) + line_draw - PAST_LINE, "character": char_draw}
    line = line_draw % len(lines)
    start, length = lines[line]
    content = text[start : start + length]
    if char_draw >= PAST_CHAR:
        return {"line": line, "character": utf16(content) + char_draw - PAST_CHAR + 1}
    return {"line": line, "character": utf16(content[: char_draw % (length + 1)])}


def apply_change(text: str, change: dict[str, Any]) -> str:
    """A content change applied as LSP says (a change without a range replaces the whole text)."""
    if "range" not in change:
        return change["text"]
    start = offset_of(text, change["range"]["start"]["line"], change["range"]["start"]["character"])
    end = offset_of(text, change["range"]["end"]["line"], change["range"]["end"]["character"])
    return text[:start] + change["text"] + text[end:]


# --- strategies --------------------------------------------------------------------------------

inserted = st.lists(st.sampled_from(FRAGMENTS), max_size=6).map("".join)
edits = st.tuples(
    st.integers(0, PAST_LINE + 2), st.integers(0, PAST_CHAR + 3),  # start
    st.integers(0, 3), st.integers(0, PAST_CHAR + 3),  # end: lines after the start, character
    inserted,
    st.sampled_from(["range"] * 12 + ["whole"]),
)
sessions = st.tuples(
    st.lists(st.sampled_from(OPENABLE), min_size=1, max_size=3, unique=True),
    st.lists(st.tuples(st.integers(0, 2), st.lists(edits, min_size=1, max_size=3)), min_size=1, max_size=10),
)


def change_from(text: str, edit: tuple) -> dict[str, Any]:
    """A content change for the current text from a drawn edit (ranges are put in order)."""
    line, char, more_lines, end_char, new_text, kind = edit
    if kind == "whole":
        return {"text": new_text}
    start = position_of(text, line, char)
    end = position_of(text, line + more_lines if line < PAST_LINE else line, end_char)
    if offset_of(text, end["line"], end["character"]) < offset_of(text, start["line"], start["character"]):
        start, end = end, start
    return {"range": {"start": start, "end": end}, "text": new_text}


# --- one server for the whole hypothesis run ---------------------------------------------------


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("consistency") / "vault"
    write_vault(root, {})
    for rel, text in PAGES.items():  # bytes, so CRLF stays CRLF
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(text.encode("utf-8"))
    return root.resolve()


@pytest.fixture(scope="module")
def live(vault: Path) -> Iterator[tuple[RawServer, Callable[[Any], Any]]]:
    """(server, call): ``call(coroutine)`` runs it on the server's loop thread and returns its result."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="consistency-loop", daemon=True)
    thread.start()

    def call(coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result(120)

    server = call(RawServer.start())
    try:
        call(server.initialize(vault))
        yield server, call
        assert call(server.shutdown_and_exit()) == 0
        assert "Traceback" not in server.log(), server.log()
    finally:
        call(server.kill())
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def plain(value: Any) -> Any:
    """JSON data as it comes over the wire (tuples become lists)."""
    return json.loads(json.dumps(value))


async def run_session(server: RawServer, vault: Path, opened: list[str], steps: list) -> None:
    for rel in OPENABLE:  # reset: every page is the disk's again
        server.notify("textDocument/didClose", {"textDocument": {"uri": (vault / rel).as_uri()}})
    texts = {rel: PAGES.get(rel, "# New page\n[[A]]\n") for rel in opened}
    versions = dict.fromkeys(opened, 1)
    for rel in opened:
        server.notify("textDocument/didOpen", {"textDocument": {
            "uri": (vault / rel).as_uri(), "languageId": "markdown", "version": 1, "text": texts[rel]}})
    for which, batch in steps:
        rel = opened[which % len(opened)]
        changes = []
        for edit in batch:  # the changes of one notification apply one after the other
            change = change_from(texts[rel], edit)
            texts[rel] = apply_change(texts[rel], change)
            changes.append(change)
        versions[rel] += 1
        server.notify("textDocument/didChange", {
            "textDocument": {"uri": (vault / rel).as_uri(), "version": versions[rel]}, "contentChanges": changes})

    for rel in opened:
        got = await server.result("wiki/read", {"page": rel, "level": 2})
        assert got["content"] == texts[rel], rel

    expected = engine_vault(vault, texts)
    got = await server.result("wiki/glob", {"pattern": "**"})
    assert got == plain(retrieve.glob(expected, "**", 0))
    for path in expected.sorted_paths():
        got = await server.result("wiki/read", {"page": path, "level": 1})
        text = texts[path] if path in texts else (vault / path).read_bytes().decode("utf-8", errors="replace")
        assert got.pop("version") == page_version(text), path  # the server's text, hashed (engine/writes.py)
        assert got == plain(retrieve.read(expected, path, 1)), path
        got = await server.result("wiki/links", {"page": path})
        assert got == plain(retrieve.links(expected, path)), path


@settings(max_examples=100)
@given(session=sessions)
def test_random_edits_keep_text_and_graph_consistent(live, vault: Path, session) -> None:
    server, call = live
    opened, steps = session
    call(run_session(server, vault, opened, steps))


# --- disk changes and buffer edits of the same page -------------------------------------------


@pytest.fixture
def disk_vault(tmp_path: Path) -> Path:
    return write_vault(tmp_path / "vault", {
        "Hub.md": "# Hub\n[[Note]]\n",
        "Note.md": "# Note\nFrom disk: [[Alpha]]\n",
        "Alpha.md": "# Alpha\n",
        "Beta.md": "# Beta\n",
        "Doomed.md": "# Doomed\n[[Beta]]\n",
    })


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, disk_vault: Path):
    await start_session(lsp_client, disk_vault)
    yield
    await lsp_client.shutdown_session()


def close_doc(client: LanguageClient, uri: str) -> None:
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))


async def graph(client: LanguageClient, rel: str) -> tuple[str, list[str], list[str]]:
    """(full text, outgoing link targets, pages linking here) of a page, from the server."""
    read = await client.protocol.send_request_async("wiki/read", {"page": rel, "level": 2})
    links = await client.protocol.send_request_async("wiki/links", {"page": rel})
    return read.content, [o.target for o in links.outgoing], [i.file for i in links.incoming]


def expected_graph(root: Path, rel: str, buffers: dict[str, str], text: str) -> tuple[str, list[str], list[str]]:
    vault = engine_vault(root, buffers)
    found = retrieve.links(vault, rel)
    return text, [o["target"] for o in found["outgoing"]], [i["file"] for i in found["incoming"]]


async def test_open_buffer_wins_over_disk_until_closed(client: LanguageClient, disk_vault: Path):
    note = disk_vault / "Note.md"
    uri, text = open_doc(client, disk_vault, "Note.md")
    change_doc(client, uri, 2, insert_at(1, 0, "[[Beta]] "))
    buffer = "# Note\n[[Beta]] From disk: [[Alpha]]\n"
    assert await graph(client, "Note.md") == expected_graph(disk_vault, "Note.md", {"Note.md": buffer}, buffer)

    note.write_text("# Note\nRewritten on disk: [[Hub]]\n", encoding="utf-8")
    watched(client, (note, types.FileChangeType.Changed))
    assert await graph(client, "Note.md") == expected_graph(disk_vault, "Note.md", {"Note.md": buffer}, buffer)

    change_doc(client, uri, 3, insert_at(0, 6, " 😀"))  # edits after the disk write still apply
    buffer = "# Note 😀\n[[Beta]] From disk: [[Alpha]]\n"
    assert await graph(client, "Note.md") == expected_graph(disk_vault, "Note.md", {"Note.md": buffer}, buffer)

    close_doc(client, uri)
    disk = note.read_text(encoding="utf-8")
    assert await graph(client, "Note.md") == expected_graph(disk_vault, "Note.md", {}, disk)
    assert "Note.md" in (await graph(client, "Hub.md"))[2]  # Note links to Hub now (the disk's text)

    note.write_text("# Note\nAgain: [[Alpha]]\n", encoding="utf-8")  # closed: the disk is the truth
    watched(client, (note, types.FileChangeType.Changed))
    disk = note.read_text(encoding="utf-8")
    assert await graph(client, "Note.md") == expected_graph(disk_vault, "Note.md", {}, disk)


async def test_page_deleted_on_disk_stays_findable_while_open(client: LanguageClient, disk_vault: Path):
    doomed = disk_vault / "Doomed.md"
    uri, text = open_doc(client, disk_vault, "Doomed.md")
    change_doc(client, uri, 2, whole("# Doomed\n[[Beta]] [[Alpha]]\n"))
    doomed.unlink()
    watched(client, (doomed, types.FileChangeType.Deleted))
    buffer = "# Doomed\n[[Beta]] [[Alpha]]\n"
    assert await graph(client, "Doomed.md") == (buffer, ["Beta", "Alpha"], [])
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="Doomed"))
    assert any(s.name == "Doomed" for s in found or [])
    beta = await client.protocol.send_request_async("wiki/links", {"page": "Beta.md"})
    assert [i.file for i in beta.incoming] == ["Doomed.md"]

    close_doc(client, uri)
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="Doomed"))
    assert not any(s.name == "Doomed" for s in found or [])
    beta = await client.protocol.send_request_async("wiki/links", {"page": "Beta.md"})
    assert list(beta.incoming) == []
    expected = engine_vault(disk_vault)
    assert "Doomed.md" not in expected.pages
