"""A misbehaving client over raw JSON-RPC: the server answers what it must, logs one line, lives on.

One server for the module (on a copy of the example vault plus a page with astral characters and
CRLF line ends); every test leaves no buffer open. The log is checked for tracebacks at the end:
a refused message is a warning line, never a stack trace, and never a ``window/showMessage``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_asyncio
from protocol_support import (
    EXAMPLE_VAULT,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    RawServer,
    copy_vault,
    error_code,
    serving,
    utf16,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

ODD = "# Odd 😀 page\r\nSee [[Home]] and 𝔸 [[Garden]].\r\n#tag-😀 end\r\n"  # CRLF, astral characters
PAST_THE_LAST_LINE = [{"line": 4, "character": 0}, {"line": 10_000, "character": 0},
                      {"line": 10_000, "character": 10_000}]
PAGE_METHODS = [
    "textDocument/hover",
    "textDocument/completion",
    "textDocument/definition",
    "textDocument/references",
    "textDocument/prepareRename",
    "textDocument/rename",
    "textDocument/documentSymbol",
]


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_vault(EXAMPLE_VAULT, tmp_path_factory.mktemp("misbehaviour") / "vault")
    (root / "Odd.md").write_bytes(ODD.encode("utf-8"))
    return root


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(vault: Path):
    async with serving(vault) as started:
        yield started
        assert not [n for n in started.notifications if n["method"] == "window/showMessage"]


def params_at(method: str, uri: str, position: dict) -> dict:
    params: dict = {"textDocument": {"uri": uri}}
    if method != "textDocument/documentSymbol":
        params["position"] = position
    if method == "textDocument/references":
        params["context"] = {"includeDeclaration": True}
    if method == "textDocument/rename":
        params["newName"] = "Renamed"
    return params


def open_buffer(server: RawServer, uri: str, text: str, version: int = 1) -> None:
    server.notify("textDocument/didOpen", {
        "textDocument": {"uri": uri, "languageId": "markdown", "version": version, "text": text}})


def close_buffer(server: RawServer, uri: str) -> None:
    server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


async def buffer_text(server: RawServer, vault: Path, rel: str) -> str:
    """The server's text of a page (its open buffer, else the disk) via ``wiki/read`` level 2."""
    found = await server.result("wiki/read", {"page": rel, "level": 2, "uri": (vault / rel).as_uri()})
    return found["content"]


async def test_unknown_request_is_method_not_found_and_notification_is_ignored(server: RawServer):
    reply = await server.request("vaultlens/noSuchThing", {"x": 1})
    assert error_code(reply) == METHOD_NOT_FOUND
    before = len(server.notifications)
    server.notify("vaultlens/noSuchNotification", {"x": 1})
    server.notify("$/noSuchNotification", None)
    assert await server.result("workspace/symbol", {"query": "home"})
    assert not [n for n in server.notifications[before:] if n["method"] == "window/showMessage"]


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("textDocument/hover", {"textDocument": 5, "position": "x"}, "textDocument"),
        ("textDocument/hover", {"textDocument": {"uri": "file:///x.md"}, "position": {"line": "0", "character": 0}},
         "position.line"),
        ("textDocument/completion", {"textDocument": {"uri": 7}, "position": {"line": 0, "character": 0}},
         "textDocument.uri"),
        ("textDocument/definition", [1, 2, 3], "textDocument"),
        ("textDocument/references", {"textDocument": {"uri": "file:///x.md"}}, "position"),
        ("workspace/symbol", {"query": ["not", "a", "string"]}, "query"),
        ("textDocument/rename", {"textDocument": {"uri": "file:///x.md"}, "position": {"line": 0, "character": 0},
                                 "newName": None}, "newName"),
        ("wiki/search", {"query": 42}, "query"),
        ("wiki/read", {"page": "Home.md", "level": "two"}, "level"),
        ("wiki/search", "just a string", "object"),
    ],
)
async def test_wrong_param_types_are_invalid_params(server: RawServer, method: str, params, field: str):
    reply = await server.request(method, params)
    assert error_code(reply) == INVALID_PARAMS, reply
    assert field in reply["error"]["message"]
    assert await server.result("workspace/symbol", {"query": "home"})


async def test_notifications_with_wrong_params_are_dropped(server: RawServer, vault: Path):
    uri = (vault / "Home.md").as_uri()
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "text": 5}})
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri}, "contentChanges": "x"})
    server.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": 3, "type": "deleted"}]})
    assert await buffer_text(server, vault, "Home.md") == (vault / "Home.md").read_text(encoding="utf-8")
    assert "dropped: invalid params" in server.log()


async def test_bodies_that_are_not_json_rpc_are_answered(server: RawServer):
    reply = await server.drain_then(lambda: server.send(b"{this is not json"))
    assert reply["id"] is None and error_code(reply) == -32700
    reply = await server.drain_then(lambda: server.send({"id": 99, "method": "workspace/symbol", "params": {}}))
    assert error_code(reply) == INVALID_REQUEST
    assert await server.result("workspace/symbol", {"query": "home"})


def answer(reply: dict) -> object:
    """A reply's result, or its error code: what a position's answer is, for comparing two."""
    return ("error", reply["error"]["code"]) if "error" in reply else reply["result"]


async def test_malformed_envelopes_never_stop_the_server(server: RawServer, vault: Path):
    """Ids, methods and URIs of the wrong JSON type, in the places the read-ahead looks at."""
    bad = [
        {"jsonrpc": "2.0", "id": [1], "method": "workspace/symbol", "params": {"query": "x"}},
        {"jsonrpc": "2.0", "id": True, "method": "workspace/symbol", "params": {"query": "x"}},
        {"jsonrpc": "2.0", "id": "m-5", "method": 17, "params": {}},
        {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": [1, 2]}},
        {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": [1]},
        {"jsonrpc": "2.0", "method": "textDocument/didChange",
         "params": {"textDocument": {"uri": ["x"], "version": 1}, "contentChanges": []}},
        {"jsonrpc": "2.0", "id": 77, "result": {"unexpected": True}},  # a response to nothing
        [1, 2, 3],
        "a string",
    ]
    for message in bad:
        server.send(message)
    await server.drain()
    assert await server.result("workspace/symbol", {"query": "home"})
    assert server.alive()
    invalid = [m for m in server.unmatched if m.get("error", {}).get("code") == INVALID_REQUEST]
    assert len(invalid) >= 5  # the three bad requests, the batch and the string


@pytest.mark.parametrize("method", PAGE_METHODS)
async def test_positions_past_the_end_give_sensible_answers(server: RawServer, vault: Path, method: str):
    """Past the end of a line is the end of that line (LSP ``Position``); past the last line
    there is nothing: null or [] (rename says why it cannot; the outline is the page's)."""
    uri = (vault / "Odd.md").as_uri()
    lines = ODD.split("\r\n")
    for opened in (False, True):
        if opened:
            open_buffer(server, uri, ODD)
        for line, text in enumerate(lines):
            at_end = await server.request(method, params_at(method, uri, {"line": line, "character": utf16(text)}))
            past = await server.request(method, params_at(method, uri, {"line": line, "character": utf16(text) + 50}))
            assert answer(past) == answer(at_end), (method, line)
            assert answer(past) != ("error", -32603), past
        for position in PAST_THE_LAST_LINE:
            reply = await server.request(method, params_at(method, uri, position))
            if method == "textDocument/rename":  # nothing to rename there: the editor shows why
                assert error_code(reply) == -32803, reply
            elif method == "textDocument/documentSymbol":
                assert reply["result"], reply  # the page's outline, whatever the position
            else:
                assert reply["result"] in (None, []), (method, position, reply)
        if opened:
            close_buffer(server, uri)


async def test_requests_on_a_page_that_does_not_exist(server: RawServer, vault: Path):
    uri = (vault / "Nowhere" / "Ghost.md").as_uri()
    for method in PAGE_METHODS:
        reply = await server.request(method, params_at(method, uri, {"line": 0, "character": 0}))
        if method == "textDocument/rename":
            assert error_code(reply) == -32803, reply
        else:
            assert "error" not in reply, (method, reply)
            assert reply["result"] in (None, []), (method, reply)


async def test_did_change_for_a_document_never_opened_is_ignored(server: RawServer, vault: Path):
    uri = (vault / "Home.md").as_uri()
    disk = (vault / "Home.md").read_text(encoding="utf-8")
    server.notify("textDocument/didChange", {
        "textDocument": {"uri": uri, "version": 2},
        "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                            "text": "[[Injected]] "}]})
    server.notify("textDocument/didChange", {
        "textDocument": {"uri": (vault / "Never.md").as_uri(), "version": 2}, "contentChanges": [{"text": "x"}]})
    assert await buffer_text(server, vault, "Home.md") == disk
    links = await server.result("wiki/links", {"page": "Home.md"})
    assert "Injected" not in [entry["target"] for entry in links["outgoing"]]
    assert "the document is not open" in server.log()


async def test_did_close_of_a_document_never_opened_is_harmless(server: RawServer, vault: Path):
    close_buffer(server, (vault / "Home.md").as_uri())
    close_buffer(server, (vault / "Never.md").as_uri())
    close_buffer(server, "untitled:Untitled-1")
    assert await buffer_text(server, vault, "Home.md") == (vault / "Home.md").read_text(encoding="utf-8")


async def test_versions_out_of_order_or_repeated_still_apply_every_edit_in_order(server: RawServer, vault: Path):
    """Edits are deltas on the previous text, and the wire is ordered: the server applies each
    change as it arrives, whatever its version says, and logs the odd version (one line)."""
    uri = (vault / "Odd.md").as_uri()
    open_buffer(server, uri, ODD, version=10)
    expected = ODD
    for version, (line, char, text) in zip([12, 11, 11, 3, 12], [
        (0, 0, "A"), (1, 0, "B"), (1, 0, "C"), (0, utf16("A# Odd 😀"), "D"), (3, 0, "[[New]]\n"),
    ]):
        server.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": {"line": line, "character": char},
                                          "end": {"line": line, "character": char}}, "text": text}]})
    expected = "A# Odd 😀D page\r\nCBSee [[Home]] and 𝔸 [[Garden]].\r\n#tag-😀 end\r\n[[New]]\n"
    assert await buffer_text(server, vault, "Odd.md") == expected
    links = await server.result("wiki/links", {"page": "Odd.md"})
    assert [entry["target"] for entry in links["outgoing"]] == ["Home", "Garden", "New"]
    close_buffer(server, uri)
    assert await buffer_text(server, vault, "Odd.md") == ODD
    assert "after version 12; applied in arrival order" in server.log()


async def test_edits_past_the_end_are_clamped_as_the_spec_says(server: RawServer, vault: Path):
    """A character past the end of a line is the line's end; a line past the end is the document's
    end (pygls 2.1 put the first one a character short, between ``\\r`` and ``\\n`` on CRLF)."""
    uri = (vault / "Odd.md").as_uri()
    open_buffer(server, uri, ODD)
    changes = [
        ((0, 999), (0, 999), "X"),  # end of line 0, before its CRLF
        ((1, 999), (1, 1000), "Y"),
        ((99, 0), (99, 5), "Z"),  # end of the document
        ((2, 3), (2, 0), "W"),  # a reversed range: put in order
    ]
    for (sl, sc), (el, ec), text in changes:
        server.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}},
                                "text": text}]})
    expected = "# Odd 😀 pageX\r\nSee [[Home]] and 𝔸 [[Garden]].Y\r\nWg-😀 end\r\nZ"
    assert await buffer_text(server, vault, "Odd.md") == expected
    close_buffer(server, uri)
