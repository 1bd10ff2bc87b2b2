"""A hostile client (issue 19): framing errors, JSON nested too deeply, a 1 MB word and a
10,000-term query, names no file can have. The real server over raw JSON-RPC on stdio, the
real CLI (``jsonl``, since argv cannot carry 1 MB) and the real MCP server.

Memory is checked as the server process's peak resident size (``VmHWM`` in /proc), read after
the request: never a timed assertion. Typo correction used to build ~36·L strings of length L
for an unknown word (8,000 letters took 4.6 GB), so these stay well under the bounds below.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_asyncio
from protocol_support import CLIENT_CAPABILITIES, EXAMPLE_VAULT, REPO, SERVER_ENV, RawServer, copy_vault, error_code, serving

pytestmark = pytest.mark.asyncio(loop_scope="module")

HUGE_WORD = "q" + "zxcvbnmlkj" * 100_000  # one 1 MB word no page holds
MANY_TERMS = " ".join(f"w{i}x" for i in range(10_000))  # 10,000 distinct terms
# The process's whole peak resident size after the hostile requests: the old code took 4.6 GB for
# an 8,000-letter word and 23.8 GB for 1 MB. Alone the CLI stays under 400 MB; within a whole-suite
# run it was seen at 491 MB once (not explained yet), so the bound is 1 GB.
PEAK_MB = 1024


def peak_mb(pid: int) -> float:
    """A live process's peak resident set size, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    pytest.skip("no /proc/PID/status here")


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_vault(EXAMPLE_VAULT, tmp_path_factory.mktemp("hostile") / "vault")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(vault: Path):
    async with serving(vault) as started:
        yield started


def write_raw(server: RawServer, data: bytes) -> None:
    assert server.proc.stdin is not None
    server.proc.stdin.write(data)


def body(msg_id: object, method: str = "workspace/symbol", params: object = None) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params or {"query": "home"}}).encode()


async def still_answers(server: RawServer) -> None:
    assert await server.result("workspace/symbol", {"query": "home"})


# --- item 5: JSON nested too deeply -------------------------------------------------------------


@pytest.mark.parametrize("depth", [1_000, 100_000])
async def test_json_nested_too_deeply_is_answered_and_the_reader_lives(server: RawServer, depth: int):
    msg_id = f"deep-{depth}"
    future = asyncio.get_running_loop().create_future()
    server.pending[msg_id] = future
    nested = b"[" * depth + b"]" * depth
    write_raw(server, b"Content-Length: %d\r\n\r\n" % (len(nested) + 80) + (
        b'{"jsonrpc": "2.0", "id": "%s", "method": "workspace/symbol", "params": {"query": %s}}'
        % (msg_id.encode(), nested)).ljust(len(nested) + 80))
    reply = await asyncio.wait_for(future, 20)
    assert error_code(reply) == -32700 and "nested too deeply" in reply["error"]["message"]
    await still_answers(server)


# --- item 6: framing errors ---------------------------------------------------------------------


FRAMINGS = {
    "no Content-Length": lambda b: b"Content-Type: application/json\r\n\r\n" + b,
    "non-numeric length": lambda b: b"Content-Length: twelve\r\n\r\n" + b,
    "negative length": lambda b: b"Content-Length: -5\r\n\r\n" + b,
    "length too short": lambda b: b"Content-Length: %d\r\n\r\n" % (len(b) - 7) + b,
    "length too long": lambda b: b"Content-Length: %d\r\n\r\n" % (len(b) + 30) + b,
}


@pytest.mark.parametrize("kind", sorted(FRAMINGS))
async def test_a_framing_error_is_survived_and_the_next_message_answered(server: RawServer, kind: str):
    write_raw(server, FRAMINGS[kind](body("broken-frame")))
    # the next well-framed request (its header may have been swallowed by a length too long)
    reply = await server.request("workspace/symbol", {"query": "home"})
    assert "error" not in reply, reply
    await still_answers(server)
    assert "Content-Length" in server.log()


async def test_a_request_sent_without_content_length_gets_an_error_with_its_id(server: RawServer):
    future = asyncio.get_running_loop().create_future()
    server.pending["no-length"] = future
    write_raw(server, b"Content-Type: x\r\n\r\n" + body("no-length"))
    await still_answers(server)  # its header ends the unframed body
    reply = await asyncio.wait_for(future, 20)
    assert error_code(reply) == -32700


# --- tidy: a notification sent with an id -------------------------------------------------------


async def test_a_notification_sent_with_an_id_is_answered(server: RawServer, vault: Path):
    reply = await server.request("textDocument/didSave", {"textDocument": {"uri": (vault / "Home.md").as_uri()}})
    assert error_code(reply) == -32600 and "notification" in reply["error"]["message"]
    await still_answers(server)


# --- item 3: a 1 MB word, a 10,000-term query ---------------------------------------------------


async def test_a_huge_word_and_a_huge_query_are_bounded_in_the_language_server(server: RawServer, vault: Path):
    uri = (vault / "Home.md").as_uri()
    for query in (HUGE_WORD, MANY_TERMS, f"home {HUGE_WORD} {MANY_TERMS}"):
        result = await server.result("wiki/search", {"query": query, "uri": uri})
        assert result["query_plan"]["truncated"], result.get("query_plan")
        assert len(result["query"]) <= 4096
        assert isinstance(await server.result("workspace/symbol", {"query": query}), list)
    assert peak_mb(server.proc.pid) < PEAK_MB


async def test_a_huge_word_and_a_huge_query_are_bounded_in_the_cli(vault: Path):
    requests = "".join(json.dumps({"query": q}) + "\n" for q in (HUGE_WORD, MANY_TERMS))
    probe = ("import resource, runpy, sys; sys.argv = ['vaultlens', 'jsonl', '--vault', sys.argv[1]]\n"
             "try:\n runpy.run_module('vaultlens.lsp', run_name='__main__')\n"
             "except SystemExit: pass\n"
             "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)")
    done = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-c", probe, str(vault)], input=requests, capture_output=True,
                          text=True, cwd=str(REPO), env=SERVER_ENV, timeout=120)
    said = f"exit {done.returncode}; stdout {done.stdout[:500]!r}; stderr {done.stderr[-2000:]!r}"
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == 2 and all(a["query_plan"]["truncated"] for a in answers), said
    assert int(done.stderr.split()[-1]) / 1024 < PEAK_MB, said


async def test_a_huge_word_and_a_huge_query_are_bounded_in_the_mcp_server(vault: Path):
    pytest.importorskip("mcp.server.mcpserver", reason="the mcp SDK (2.x) is not installed")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vaultlens.lsp", "mcp", "--vault", str(vault), cwd=str(REPO), env=SERVER_ENV,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, limit=2**24,
    )
    assert proc.stdin is not None and proc.stdout is not None

    async def call(msg_id: int, method: str, params: dict) -> dict:
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode() + b"\n")
        await proc.stdin.drain()
        while True:
            message = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))
            if message.get("id") == msg_id:
                return message

    try:
        await call(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "hostile", "version": "1"}})
        proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        for n, query in enumerate((HUGE_WORD, MANY_TERMS), start=2):
            reply = await call(n, "tools/call", {"name": "search", "arguments": {"query": query}})
            structured = reply["result"]["structuredContent"]
            assert structured["query_plan"]["truncated"], reply
        assert peak_mb(proc.pid) < PEAK_MB
    finally:
        proc.kill()
        await proc.wait()


# --- item 12: names no file can have ------------------------------------------------------------


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(tmp_path_factory: pytest.TempPathFactory):
    """A server whose client applies versioned document changes and file renames."""
    root = copy_vault(EXAMPLE_VAULT, tmp_path_factory.mktemp("rename") / "vault")
    started = await RawServer.start()
    capabilities = json.loads(json.dumps(CLIENT_CAPABILITIES))
    capabilities.setdefault("workspace", {})["workspaceEdit"] = {
        "documentChanges": True, "resourceOperations": ["create", "rename", "delete"]}
    await started.result("initialize", {"processId": None, "capabilities": capabilities, "rootUri": root.as_uri(),
                                        "workspaceFolders": [{"uri": root.as_uri(), "name": "vault"}]})
    started.notify("initialized", {})
    await started.result("wiki/search", {"query": "", "uri": (root / "probe.md").as_uri()})
    yield started, root
    try:
        assert await started.shutdown_and_exit() == 0
    finally:
        await started.kill()


@pytest.mark.parametrize("new_name, says", [
    ("Ho\x00me", "control character"),
    ("x" * 10_000, "10,000 characters"),
    ("é" * 200, "too long for a file name"),
    ("../../outside", "cannot be a file name"),
    ("sub/dir", "cannot be a file name"),
    ("line\u0085break", "control character"),
])
async def test_a_rename_to_a_name_no_file_can_have_is_refused_up_front(editor, new_name: str, says: str):
    server, vault = editor
    uri = (vault / "Home.md").as_uri()
    reply = await server.request("textDocument/rename", {
        "textDocument": {"uri": uri}, "position": {"line": 10, "character": 3}, "newName": new_name})
    assert "error" in reply and says in reply["error"]["message"], reply
    assert (vault / "Home.md").exists()


async def test_a_rename_file_comes_before_every_text_edit(editor):
    server, vault = editor
    uri = (vault / "Home.md").as_uri()
    edit = await server.result("textDocument/rename", {
        "textDocument": {"uri": uri}, "position": {"line": 10, "character": 3}, "newName": "Start"})
    kinds = [c.get("kind", "edit") for c in edit["documentChanges"]]
    assert kinds[0] == "rename" and kinds.count("rename") == 1 and len(kinds) > 1, kinds
    new_uri = (vault / "Start.md").as_uri()
    assert any(c.get("textDocument", {}).get("uri") == new_uri for c in edit["documentChanges"])
    assert not any(c.get("textDocument", {}).get("uri") == uri for c in edit["documentChanges"])
