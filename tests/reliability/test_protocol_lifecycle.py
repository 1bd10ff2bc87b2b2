"""The session's states over raw JSON-RPC: before ``initialize``, after ``shutdown``, and ``exit``.

LSP 3.17 "Lifecycle Messages": a request before ``initialize`` is answered with
ServerNotInitialized (-32002) and notifications are dropped; ``initialize`` may be sent once;
after ``shutdown`` requests get InvalidRequest (-32600); ``exit`` ends the process with code 0
after ``shutdown`` and 1 without. Each test starts its own server, since each ends it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from protocol_support import (
    EXAMPLE_VAULT,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    SERVER_NOT_INITIALIZED,
    RawServer,
    copy_vault,
    error_code,
)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return copy_vault(EXAMPLE_VAULT, tmp_path / "vault")


@pytest.fixture
async def server():
    started = await RawServer.start()
    yield started
    await started.kill()


def hover_params(uri: str) -> dict:
    return {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}


async def test_requests_before_initialize_are_refused_then_the_session_starts(server: RawServer, vault: Path):
    uri = (vault / "Home.md").as_uri()
    for method, params in [
        ("textDocument/hover", hover_params(uri)),
        ("workspace/symbol", {"query": "garden"}),
        ("wiki/search", {"query": "garden"}),
        ("shutdown", None),
        ("no/such/method", {}),
    ]:
        reply = await server.request(method, params)
        assert error_code(reply) == SERVER_NOT_INITIALIZED, (method, reply)
    # notifications before initialize are dropped: this buffer must not count once initialized
    server.notify("textDocument/didOpen", {"textDocument": {
        "uri": (vault / "Early.md").as_uri(), "languageId": "markdown", "version": 1, "text": "# Early bird\n"}})
    result = await server.initialize(vault)
    assert "capabilities" in result
    again = await server.request("initialize", {"processId": None, "capabilities": {}, "rootUri": vault.as_uri()})
    assert error_code(again) == INVALID_REQUEST
    found = await server.result("workspace/symbol", {"query": "Early bird"})
    assert all(s["name"] != "Early bird" for s in found)
    assert error_code(await server.request("no/such/method", {})) == METHOD_NOT_FOUND
    assert await server.shutdown_and_exit() == 0
    assert "Traceback" not in server.log()
    assert "not initialized" in server.log()


async def test_requests_after_shutdown_are_invalid_and_exit_is_clean(server: RawServer, vault: Path):
    await server.initialize(vault)
    assert (await server.request("shutdown"))["result"] is None
    for method, params in [
        ("textDocument/hover", hover_params((vault / "Home.md").as_uri())),
        ("wiki/search", {"query": "garden"}),
        ("shutdown", None),
    ]:
        reply = await server.request(method, params)
        assert error_code(reply) == INVALID_REQUEST, (method, reply)
    server.notify("textDocument/didOpen", {"textDocument": {
        "uri": (vault / "Late.md").as_uri(), "languageId": "markdown", "version": 1, "text": "late\n"}})
    assert server.alive()
    server.notify("exit")
    assert await server.wait() == 0
    assert "Traceback" not in server.log()


async def test_exit_without_shutdown_exits_with_code_1(server: RawServer, vault: Path):
    await server.initialize(vault)
    assert await server.result("workspace/symbol", {"query": "garden"})
    server.notify("exit")
    assert await server.wait() == 1
    assert "Traceback" not in server.log()
    assert "Fatal Python error" not in server.log()


async def test_exit_before_initialize_exits_with_code_1(server: RawServer):
    server.notify("exit")
    assert await server.wait() == 1


async def test_end_of_input_stops_the_server(server: RawServer, vault: Path):
    """A client that vanishes (stdin closed) without shutdown: the server stops by itself (code 1)."""
    await server.initialize(vault)
    assert server.proc.stdin is not None
    server.proc.stdin.close()
    assert await server.wait() == 1


async def test_a_malformed_response_from_the_client_fails_only_that_request(vault: Path):
    """The server asks for ``workspace/configuration`` and gets ``null`` (not a list): that one
    request fails at once (pygls left it pending until the server's 5 s time-out) and indexing
    goes on with the default settings."""
    server = await RawServer.start(answers={"workspace/configuration": None})
    try:
        loop = asyncio.get_running_loop()
        started = loop.time()
        await server.initialize(vault)
        assert loop.time() - started < 4.5
        assert await server.result("workspace/symbol", {"query": "garden"})
        assert await server.shutdown_and_exit() == 0
        assert "is malformed" in server.log()
        assert "Traceback" not in server.log()
    finally:
        await server.kill()
