"""Long requests off the event loop (issue 19 item 9): the real server over stdio, a vault of
2,000 generated pages and a search for 200 words with a limit of 2,000 (seconds of work).

The search used to run on the event loop: every message behind it waited until it ended, a
``$/cancelRequest`` came too late to stop it, and an edit waited for it. Now it runs on the
server's worker thread (``lsp/worker.py``). Nothing here is timed: each test checks the ORDER of
the answers (the hover's answer comes before the search's), so a slow machine cannot fail it.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest
import pytest_asyncio
from protocol_support import REQUEST_CANCELLED, RawServer, error_code, serving

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(240)]

PAGES = 2_000
WORDS = [f"{a}{b}{c}" for a in "bcdfgklmnprst" for b in "aeiou" for c in "lmnrstx"][:300]
SLOW = {"query": " ".join(WORDS[:200]), "limit": 2_000}  # every page matches: 2,000 hits with snippets
STARTED = 0.3  # seconds for the search to be under way before the test sends more
LONG_TIMEOUT = 180.0


def make_vault(root: Path) -> Path:
    rnd = random.Random(7)
    root.mkdir(parents=True)
    (root / ".obsidian").mkdir()
    for i in range(PAGES):
        body = " ".join(rnd.choice(WORDS) for _ in range(200))
        (root / f"p{i:04d}.md").write_text(f"# Page {i}\n\n{body}\n\nSee [[p{(i + 1) % PAGES:04d}]].\n")
    return root


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_vault(tmp_path_factory.mktemp("long") / "vault")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(vault: Path):
    async with serving(vault) as started:
        yield started


class Doc:
    """One open page, edited by appending lines (incremental changes: order matters)."""

    def __init__(self, server: RawServer, path: Path) -> None:
        self.server, self.uri, self.text, self.version = server, path.as_uri(), path.read_text(), 1
        server.notify("textDocument/didOpen", {"textDocument": {
            "uri": self.uri, "languageId": "markdown", "version": 1, "text": self.text}})

    def append(self, line: str) -> int:
        """Append ``line``; the line number it is on."""
        at = self.text.count("\n")
        self.version += 1
        self.server.notify("textDocument/didChange", {
            "textDocument": {"uri": self.uri, "version": self.version},
            "contentChanges": [{"range": {"start": {"line": at, "character": 0}, "end": {"line": at, "character": 0}},
                                "text": line + "\n"}],
        })
        self.text += line + "\n"
        return at

    def close(self) -> None:
        self.server.notify("textDocument/didClose", {"textDocument": {"uri": self.uri}})


async def test_an_edit_and_a_hover_are_answered_while_a_search_runs(server: RawServer, vault: Path):
    doc = Doc(server, vault / "p0001.md")
    try:
        _id, search = server.request_nowait("wiki/search", SLOW)
        await server.drain()
        await asyncio.sleep(STARTED)
        line = doc.append("New link: [[p0777]]")
        reply = await server.request("textDocument/hover", {
            "textDocument": {"uri": doc.uri}, "position": {"line": line, "character": 13}})
        assert not search.done(), "the hover waited for the search"
        assert "p0777" in str(reply["result"]), reply  # the edit is seen by the hover
        found = await asyncio.wait_for(search, LONG_TIMEOUT)
        assert "error" not in found and len(found["result"]["hits"]) == PAGES
    finally:
        doc.close()


async def test_a_cancelled_search_answers_request_cancelled_and_the_server_goes_on(server: RawServer):
    msg_id, search = server.request_nowait("wiki/search", SLOW)
    await server.drain()
    await asyncio.sleep(STARTED)
    server.notify("$/cancelRequest", {"id": msg_id})
    symbol = server.request_nowait("workspace/symbol", {"query": "page 12"})[1]
    await server.drain()
    reply = await asyncio.wait_for(search, LONG_TIMEOUT)
    assert error_code(reply) == REQUEST_CANCELLED, reply
    assert not symbol.done() or "error" not in symbol.result()
    assert "error" not in await asyncio.wait_for(symbol, LONG_TIMEOUT)
    found = await server.result("wiki/search", {"query": WORDS[0], "limit": 3})
    assert len(found["hits"]) == 3


async def test_edits_during_a_search_are_applied_in_order_and_seen_after(server: RawServer, vault: Path):
    doc = Doc(server, vault / "p0002.md")
    try:
        _id, search = server.request_nowait("wiki/search", SLOW)
        await server.drain()
        await asyncio.sleep(STARTED)
        added = [f"zqmark{n} follows" for n in range(20)]
        for line in added:
            doc.append(line)
        await server.drain()
        found = await asyncio.wait_for(search, LONG_TIMEOUT)
        assert "error" not in found and len(found["result"]["hits"]) == PAGES
        read = await server.result("wiki/read", {"page": "p0002.md", "level": 2})
        text = str(read)
        assert [text.find(line) for line in added] == sorted(text.find(line) for line in added)
        assert all(line in text for line in added), text[-2000:]
        for n in (0, 19):
            hits = (await server.result("wiki/search", {"query": f"zqmark{n}"}))["hits"]
            assert [h["file"] for h in hits] == ["p0002.md"]
    finally:
        doc.close()
