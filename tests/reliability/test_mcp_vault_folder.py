"""``vaultlens mcp`` when its vault folder is deleted and made again (issue 19 item 11): the real
server over stdio (newline-delimited JSON-RPC), the folder removed and rebuilt by the test.

A watcher on the old folder sees nothing of the new one; the server notices the folder's identity
changed (device, inode) at the next call, says so on stderr, reads the vault again and from then
on checks for changes before each call.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from protocol_support import REPO, SERVER_ENV

pytest.importorskip("mcp.server.mcpserver", reason="the mcp SDK (2.x) is not installed: pip install 'vaultlens[mcp]'")
pytestmark = pytest.mark.asyncio


class McpProcess:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.ids = iter(range(1, 10**6))

    async def call(self, method: str, params: dict) -> dict:
        msg_id = next(self.ids)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode() + b"\n")
        await self.proc.stdin.drain()
        while True:
            message = json.loads(await asyncio.wait_for(self.proc.stdout.readline(), 30))
            if message.get("id") == msg_id:
                return message

    async def search(self, query: str) -> list[str]:
        reply = await self.call("tools/call", {"name": "search", "arguments": {"query": query}})
        return [hit["file"] for hit in reply["result"]["structuredContent"]["hits"]]


async def start(root: Path, *flags: str) -> McpProcess:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vaultlens.lsp", "mcp", "--vault", str(root), *flags, cwd=str(REPO), env=SERVER_ENV,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    server = McpProcess(proc)
    await server.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "folder-test", "version": "1"}})
    assert proc.stdin is not None
    proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
    return server


def write_vault(root: Path, pages: dict[str, str]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in pages.items():
        (root / rel).write_text(text, encoding="utf-8")


@pytest.mark.parametrize("flags", [(), ("--poll",)])
async def test_a_vault_folder_deleted_and_made_again_is_read_again(tmp_path: Path, flags: tuple[str, ...]):
    root = tmp_path / "vault"
    write_vault(root, {"Apples.md": "# Apples\n\nOrchard notes about apples.\n"})
    server = await start(root, *flags)
    try:
        assert await server.search("orchard") == ["Apples.md"]
        shutil.rmtree(root)
        await asyncio.sleep(0.5)  # the watcher sees the folder go
        assert await server.search("orchard") == []
        write_vault(root, {"Pears.md": "# Pears\n\nOrchard notes about pears.\n"})
        assert await server.search("orchard") == ["Pears.md"]
        (root / "Plums.md").write_text("# Plums\n\nOrchard plums.\n", encoding="utf-8")
        assert sorted(await server.search("orchard")) == ["Pears.md", "Plums.md"]
        # replaced in one step, never seen missing (a sync tool's rename over it)
        staged = tmp_path / "staged"
        write_vault(staged, {"Quinces.md": "# Quinces\n\nOrchard quinces.\n"})
        shutil.rmtree(root)
        staged.rename(root)
        assert await server.search("orchard") == ["Quinces.md"]
    finally:
        server.proc.kill()
        _out, err = await server.proc.communicate()
    log = err.decode()
    assert "is gone" in log and "made again" in log and "replaced" in log, log
    assert "Traceback" not in log, log
