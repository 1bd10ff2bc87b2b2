"""In-process checks of the two pieces under the protocol tests: buffers and the read-ahead.

``lsp.documents``: the inputs that corrupted a pygls 2.1 buffer, each kept as a regression case.
``lsp.transport.Backlog``: which queued requests a ``$/cancelRequest`` catches, and which
``didChange`` notifications are superseded (their re-parse skipped).
"""

from __future__ import annotations

import pytest
from lsprotocol import types

from vaultlens.lsp.documents import VaultTextDocument, VaultWorkspace, split_lines
from vaultlens.lsp.transport import Backlog


def edited(text: str, start: tuple[int, int], end: tuple[int, int], new: str) -> str:
    workspace = VaultWorkspace(None)
    workspace.put_text_document(types.TextDocumentItem(uri="file:///p.md", language_id="markdown", version=1, text=text))
    change = types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(*start), end=types.Position(*end)), text=new
    )
    workspace.update_text_document(types.VersionedTextDocumentIdentifier(uri="file:///p.md", version=2), change)
    return workspace.get_text_document("file:///p.md").source


@pytest.mark.parametrize(
    ("text", "start", "end", "new", "expected"),
    [
        ("abc", (0, 99), (0, 99), "X", "abcX"),  # pygls: "abXc"
        ("abc\ndef", (0, 4), (0, 4), "X", "abcX\ndef"),  # pygls: after the line break, "abc\nXdef"
        ("ab\r\ncd", (0, 3), (0, 3), "X", "abX\r\ncd"),  # pygls: between CR and LF
        ("a\u2028b\nc", (1, 0), (1, 0), "X", "a\u2028b\nXc"),  # U+2028 is no line break in LSP
        ("a\x0cb\x85c\nd", (1, 1), (1, 1), "X", "a\x0cb\x85c\ndX"),
        ("x😀y", (0, 3), (0, 3), "Z", "x😀Zy"),  # UTF-16 columns: 😀 is two units
        ("x😀y", (0, 2), (0, 2), "Z", "x😀Zy"),  # inside the surrogate pair: after the character
        ("one\ntwo", (1, 2), (0, 1), "-", "o-o"),  # a reversed range is put in order
        ("one\n", (5, 0), (9, 9), "end", "one\nend"),  # past the last line: the end
        ("", (3, 3), (3, 3), "new", "new"),
        ("a\rb", (1, 1), (1, 1), "X", "a\rbX"),  # a lone CR ends a line
    ],
)
def test_incremental_edits_follow_the_spec(text, start, end, new, expected):
    assert edited(text, start, end, new) == expected


def test_lines_split_only_at_lsp_line_breaks():
    assert split_lines("a\r\nb\rc\nd\u2028e\x85f") == ("a\r\n", "b\r", "c\n", "d\u2028e\x85f")
    assert split_lines("") == ()
    assert split_lines("x\n") == ("x\n",)


def test_a_document_never_opened_and_missing_on_disk_is_empty(tmp_path):
    doc = VaultTextDocument((tmp_path / "nowhere.md").as_uri())
    assert doc.source == "" and doc.lines == ()
    (tmp_path / "bad.md").write_bytes(b"caf\xe9\n")
    assert VaultTextDocument((tmp_path / "bad.md").as_uri()).source == "caf\ufffd\n"


def change(uri: str) -> dict:
    return {"jsonrpc": "2.0", "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": uri, "version": 1}, "contentChanges": []}}


def request(msg_id) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": "workspace/symbol", "params": {"query": "x"}}


def cancel(msg_id) -> dict:
    return {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": msg_id}}


def drained(backlog: Backlog) -> list[tuple[str, bool, bool]]:
    out = []
    while backlog:
        message, cancelled, superseded = backlog.pop()
        out.append((message.get("method", "") + str(message.get("id", "")), cancelled, superseded))
    return out


def test_a_change_is_superseded_only_by_a_later_change_before_any_request():
    backlog = Backlog()
    for message in [change("a"), change("b"), change("a"), request(1), change("a"), change("b")]:
        assert backlog.add(message) is None
    assert drained(backlog) == [
        ("textDocument/didChange", False, True),  # "a" changes again before request 1
        ("textDocument/didChange", False, False),  # "b" changes again only after request 1
        ("textDocument/didChange", False, False),
        ("workspace/symbol1", False, False),
        ("textDocument/didChange", False, False),
        ("textDocument/didChange", False, False),
    ]


def test_a_cancel_catches_a_request_still_queued_and_only_that():
    backlog = Backlog()
    backlog.add(request(1))
    backlog.add(request("two"))
    assert backlog.add(cancel("two")) == "two"  # consumed: the caller answers RequestCancelled
    assert backlog.add(cancel("two")) is None  # a repeat is passed on (pygls ignores it)
    assert backlog.add(cancel(99)) is None  # not queued: running or answered, pygls decides
    assert backlog.add(cancel([1])) is None  # an id of the wrong type
    assert drained(backlog) == [
        ("workspace/symbol1", False, False),
        ("workspace/symboltwo", True, False),
        ("$/cancelRequest", False, False),
        ("$/cancelRequest", False, False),
        ("$/cancelRequest", False, False),
    ]
