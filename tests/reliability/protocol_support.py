"""Helpers for the protocol reliability tests: the real server over raw JSON-RPC on stdio.

pytest-lsp's client always sends a well-formed session (``initialize`` first, params of the
right types, ``shutdown`` before ``exit``), so a test that misbehaves on purpose talks to
``python -m vaultlens.lsp lsp`` itself: ``RawServer`` frames messages with ``Content-Length`` headers,
matches responses to requests by id, keeps every notification, and drains stderr so the log
can be checked (one clear line per bad message, no tracebacks).

The pytest-lsp helpers of ``tests/e2e/e2e_support.py`` are imported from there, never copied.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import sys
from pathlib import Path
from typing import Any

E2E = Path(__file__).resolve().parents[1] / "e2e"
if str(E2E) not in sys.path:  # e2e_support sits in tests/e2e (the test folders are not packages)
    sys.path.insert(0, str(E2E))

from lsprotocol.converters import get_converter  # noqa: E402

from e2e_support import (  # noqa: E402,F401 - re-exported: test modules import them from here
    CAPABILITIES,
    EXAMPLE_VAULT,
    REPO,
    SERVER,
    SERVER_COMMAND,
    SERVER_ENV,
    change_doc,
    copy_vault,
    engine_vault,
    insert_at,
    open_doc,
    start_session,
    utf16,
    watched,
    whole,
    write_vault,
)

# e2e_support's client: progress, watched files, configuration, versioned workspace edits.
CLIENT_CAPABILITIES = get_converter().unstructure(CAPABILITIES)
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INVALID_REQUEST = -32600
SERVER_NOT_INITIALIZED = -32002
REQUEST_CANCELLED = -32800
REPLY_TIMEOUT = 20.0


class RawServer:
    """One ``vaultlens lsp`` process driven message by message (see the module docstring)."""

    def __init__(self, proc: asyncio.subprocess.Process, answers: dict[str, Any] | None = None) -> None:
        self.proc = proc
        self.answers = answers or {}  # method -> result for the server's requests to the client
        self.ids = itertools.count(1)
        self.pending: dict[Any, asyncio.Future] = {}
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []
        self.unmatched: list[dict[str, Any]] = []  # responses to no request of ours (e.g. id null)
        self.stderr = bytearray()
        self._tasks = [asyncio.ensure_future(self._read_stdout()), asyncio.ensure_future(self._read_stderr())]

    @classmethod
    async def start(
        cls, *args: str, answers: dict[str, Any] | None = None, env: dict[str, str] | None = None
    ) -> RawServer:
        """Spawn the server (extra command-line arguments after ``lsp``); ``answers`` overrides
        what the client answers to the server's requests, by method; ``env`` adds variables."""
        proc = await asyncio.create_subprocess_exec(
            *SERVER_COMMAND, *args,
            cwd=str(REPO), env={**SERVER_ENV, **(env or {})},
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        return cls(proc, answers)

    # --- wire -------------------------------------------------------------------------------

    def send(self, message: dict[str, Any] | bytes) -> None:
        """Write one framed message (a dict is serialised; bytes go out as the body verbatim)."""
        body = message if isinstance(message, bytes) else json.dumps(message).encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def request_nowait(self, method: str, params: Any = None, msg_id: Any = None) -> tuple[Any, asyncio.Future]:
        """Send a request; returns its id and a future for the whole response message."""
        msg_id = next(self.ids) if msg_id is None else msg_id
        future = asyncio.get_running_loop().create_future()
        self.pending[msg_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return msg_id, future

    async def request(self, method: str, params: Any = None, timeout: float = REPLY_TIMEOUT) -> dict[str, Any]:
        """Send a request and wait for its response message (``result`` or ``error``)."""
        _msg_id, future = self.request_nowait(method, params)
        await self.drain()
        return await asyncio.wait_for(future, timeout)

    async def result(self, method: str, params: Any = None) -> Any:
        """The ``result`` of a request that must succeed."""
        reply = await self.request(method, params)
        assert "error" not in reply, reply
        return reply["result"]

    async def drain_then(self, send, timeout: float = REPLY_TIMEOUT) -> dict[str, Any]:
        """Call ``send`` (which writes something unusual) and wait for the next response that
        answers no request of ours (a parse error has id null)."""
        seen = len(self.unmatched)
        send()
        await self.drain()
        deadline = asyncio.get_running_loop().time() + timeout
        while len(self.unmatched) == seen:
            assert asyncio.get_running_loop().time() < deadline, "no response"
            await asyncio.sleep(0.01)
        return self.unmatched[seen]

    async def drain(self) -> None:
        """Wait until the written messages are handed to the pipe."""
        assert self.proc.stdin is not None
        await self.proc.stdin.drain()

    async def _read_stdout(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = await out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            assert length is not None, "a message without Content-Length"
            message = json.loads(await out.readexactly(length))
            if "method" in message and "id" in message:
                self.server_requests.append(message)
                items = (message.get("params") or {}).get("items") or []
                result = [None] * len(items) if message["method"] == "workspace/configuration" else None
                result = self.answers.get(message["method"], result)
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            elif "method" in message:
                self.notifications.append(message)
            else:
                future = self.pending.pop(message.get("id"), None)
                if future is not None and not future.done():
                    future.set_result(message)
                else:
                    self.unmatched.append(message)

    async def _read_stderr(self) -> None:
        err = self.proc.stderr
        assert err is not None
        while chunk := await err.read(65536):
            self.stderr += chunk

    # --- session ----------------------------------------------------------------------------

    async def initialize(self, root: Path | None, *, wait_index: bool = True) -> dict[str, Any]:
        """``initialize`` (one workspace folder) + ``initialized``; then wait for the index."""
        params: dict[str, Any] = {"processId": None, "capabilities": CLIENT_CAPABILITIES, "rootUri": None}
        if root is not None:
            params["rootUri"] = root.as_uri()
            params["workspaceFolders"] = [{"uri": root.as_uri(), "name": root.name}]
        result = await self.result("initialize", params)
        self.notify("initialized", {})
        if root is not None and wait_index:
            await self.result("wiki/search", {"query": "", "uri": (root / "probe.md").as_uri()})
        return result

    async def shutdown_and_exit(self, timeout: float = REPLY_TIMEOUT) -> int:
        """``shutdown`` then ``exit``; the exit code."""
        reply = await self.request("shutdown")
        assert "error" not in reply, reply
        self.notify("exit")
        return await self.wait(timeout)

    async def wait(self, timeout: float = REPLY_TIMEOUT) -> int:
        """The process's exit code, once it has exited."""
        with contextlib.suppress(Exception):
            await self.drain()
        code = await asyncio.wait_for(self.proc.wait(), timeout)
        await asyncio.wait_for(asyncio.gather(*self._tasks, return_exceptions=True), timeout)
        return code

    def alive(self) -> bool:
        """True while the process runs."""
        return self.proc.returncode is None

    def log(self) -> str:
        """Everything the server wrote to stderr so far."""
        return self.stderr.decode("utf-8", errors="replace")

    async def kill(self) -> None:
        """Stop the process if it still runs (test clean-up)."""
        if self.proc.returncode is None:
            self.proc.kill()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.proc.wait(), 5)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


@contextlib.asynccontextmanager
async def serving(vault: Path):
    """A server initialized on ``vault`` for a module's tests; at the end it must shut down
    cleanly (exit 0) and its log hold no traceback, whatever the tests sent it."""
    started = await RawServer.start()
    await started.initialize(vault)
    yield started
    try:
        assert await started.shutdown_and_exit() == 0
        log = started.log()
        assert "Traceback" not in log, log
    finally:
        await started.kill()


def error_code(reply: dict[str, Any]) -> int | None:
    """The JSON-RPC error code of a response message (None for a result)."""
    return reply.get("error", {}).get("code") if "error" in reply else None
