"""The MCP write tools end to end: an agent session over stdio (the SDK's client against
``python -m vaultlens.lsp mcp --allow-writes``) that creates and edits pages with good and broken
links, is refused outside the vault and on a stale version, and a read-only server that offers
no write tool at all. Each test starts its own server on a private copy of the example vault.
"""

from __future__ import annotations

import http.server
import os
import threading
from pathlib import Path

import pytest
from test_mcp import error_text, mcp_session, payload  # skips this module without the MCP SDK

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(120)]

WRITE_TOOLS = {"create_page", "append_to_page", "edit_page", "add"}


async def tool_names(client) -> set[str]:
    return {t.name for t in (await client.list_tools()).tools}


async def hits_for(client, query: str) -> list[str]:
    return [h["file"] for h in payload(await client.call_tool("search", {"query": query}))["hits"]]


async def test_read_only_by_default_offers_no_write_tool(vault: Path):
    for flags in ((), ("--read-only",)):
        async with mcp_session(vault, *flags) as client:
            names = await tool_names(client)
            assert not names & WRITE_TOOLS and "search" in names
            assert "read-only" in (client.instructions or "")
            result = await client.call_tool("create_page", {"title": "Nope"})
            assert result.is_error
    assert not (vault / "Nope.md").exists()


async def test_an_agent_creates_and_edits_pages_and_sees_every_link(vault: Path):
    async with mcp_session(vault, "--allow-writes") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert WRITE_TOOLS <= set(tools)
        assert tools["edit_page"].annotations.read_only_hint is False
        assert tools["search"].annotations.read_only_hint is True
        assert "WRITE" in client.instructions and "create_page, append_to_page, edit_page and add" in client.instructions

        made = payload(await client.call_tool("create_page", {
            "title": "Quokka Habitat", "folder": "garden",
            "body": "Quokkas like [[Composting]] and [[Tomatos]].\n", "tags": ["animals"],
        }))
        assert made["path"] == "garden/Quokka Habitat.md" and made["written"]
        status = {e["target"]: e for e in made["links"]}
        assert status["Composting"]["status"] == "resolved" and status["Composting"]["file"] == "garden/Composting.md"
        assert status["Tomatos"]["status"] == "unresolved"
        assert status["Tomatos"]["suggestions"][0]["file"] == "garden/Tomatoes.md"
        assert (await hits_for(client, "quokka habitat"))[0] == "garden/Quokka Habitat.md"  # at once

        refused = await client.call_tool("create_page", {"title": "Broken", "body": "[[No Such Page]]",
                                                         "strict_links": True})
        assert "strict_links" in error_text(refused) and not (vault / "Broken.md").exists()

        read = payload(await client.call_tool("read", {"page": "Quokka Habitat", "level": 0}))
        assert read["version"] == made["version"]
        edited = payload(await client.call_tool("edit_page", {
            "page": "Quokka Habitat", "old_text": "[[Tomatos]]", "new_text": "[[Tomatoes]]", "version": read["version"],
        }))
        assert [(e["target"], e["status"]) for e in edited["links"]] == [("Tomatoes", "resolved")]
        stale = await client.call_tool("edit_page", {
            "page": "Quokka Habitat", "old_text": "Quokkas", "new_text": "Wallabies", "version": read["version"],
        })
        assert "changed since it was read" in error_text(stale)
        appended = payload(await client.call_tool("append_to_page", {
            "page": "Quokka Habitat", "heading": "Sightings", "text": "Seen near [[Soil Health]].",
            "version": edited["version"],
        }))
        text = (vault / "garden" / "Quokka Habitat.md").read_text()
        assert text.endswith("Quokkas like [[Composting]] and [[Tomatoes]].\n\n## Sightings\n\nSeen near [[Soil Health]].\n")
        assert appended["links"][0]["file"] == "garden/Soil Health.md"
        assert (await hits_for(client, "sightings quokka"))[0] == "garden/Quokka Habitat.md"


async def test_writes_outside_the_vault_are_refused(vault: Path, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, vault / "escape")
    async with mcp_session(vault, "--allow-writes") as client:
        for arguments in (
            {"title": "X", "path": "../x.md"},
            {"title": "X", "path": str(outside / "x.md")},
            {"title": "X", "folder": "../.."},
            {"title": "X", "folder": "escape"},
            {"title": "X", "path": "escape/x.md"},
        ):
            message = error_text(await client.call_tool("create_page", arguments))
            assert "outside the vault" in message or "symbolic link" in message, (arguments, message)
        for page in ("../x.md", "garden/../../x.md", str(tmp_path / "x.md")):
            message = error_text(await client.call_tool("append_to_page", {"page": page, "text": "x"}))
            assert "outside the vault" in message, (page, message)
    assert list(outside.iterdir()) == [] and not (tmp_path / "x.md").exists()


class Pages(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        data = b"# Quokka care\n\nQuokkas need shade. See Composting.\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/markdown")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


async def test_add_captures_a_url_and_refuses_a_local_file(vault: Path):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/care.md"
    try:
        async with mcp_session(vault, "--allow-writes") as client:
            dry = payload(await client.call_tool("add", {"ref": url, "dry_run": True}))
            assert dry["written"] is False and not (vault / dry["path"]).exists()
            done = payload(await client.call_tool("add", {"ref": url}))
            assert done["path"] == "inbox/quokka-care.md" and done["written"]
            assert done["related"][0]["file"] == "garden/Composting.md"
            assert (vault / done["path"]).read_text() == done["content"]
            assert (await hits_for(client, "quokka care"))[0] == "inbox/quokka-care.md"
            local = await client.call_tool("add", {"ref": str(vault / "Home.md")})
            assert "http and https URLs" in error_text(local)
    finally:
        httpd.shutdown()
        httpd.server_close()
