"""Issue 20's CLI answers as an agent gets them from the real MCP server: the whole day for a
date-only ``until``, a list of folders, a listing without search words, an ambiguous name."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_mcp import error_text, mcp_session, payload  # skips this module without the MCP SDK
from vaultkit import write_vault

pytestmark = pytest.mark.asyncio

FILES = {
    "ai/Morning.md": "---\ntags: [rag]\nupdated: 2026-03-15T10:00:00\n---\nRetrieval in the morning.\n",
    "ai/Evening.md": "---\ntags: [rag]\nupdated: 2026-03-15T23:59:30Z\n---\nRetrieval late.\n",
    "notes/Next Day.md": "---\ntags: [rag]\nupdated: 2026-03-16T00:00:00\n---\nRetrieval the next day.\n",
    "a/Templates.md": "A stub about templates.\n",
    "plugins/Templates.md": "The core plugin.\n",
    "Home.md": "See [[plugins/Templates]] and [[ai/Morning]].\n",
}


async def test_the_answers_over_mcp(tmp_path: Path):
    root = write_vault(tmp_path / "v", FILES)
    async with mcp_session(root) as client:
        day = payload(await client.call_tool("search", {"query": "retrieval", "until": "2026-03-15"}))
        assert sorted(h["file"] for h in day["hits"]) == ["ai/Evening.md", "ai/Morning.md"]
        before = payload(await client.call_tool("search", {"query": "retrieval before:2026-03-15"}))
        assert sorted(h["file"] for h in before["hits"]) == ["ai/Evening.md", "ai/Morning.md"]

        both = payload(await client.call_tool("search", {"query": "retrieval", "folder": ["notes", "ai"]}))
        assert len(both["hits"]) == 3 and both["query_plan"]["folders"] == ["notes", "ai"]
        one = payload(await client.call_tool("search", {"query": "retrieval", "folder": "notes"}))
        assert [h["file"] for h in one["hits"]] == ["notes/Next Day.md"]
        assert "folder" in error_text(await client.call_tool("search", {"query": "x", "folder": 3}))

        listed = payload(await client.call_tool("search", {"query": "tag:rag", "sort": "updated"}))
        assert [h["title"] for h in listed["hits"]] == ["Next Day", "Evening", "Morning"]

        read = payload(await client.call_tool("read", {"page": "Templates", "level": 0}))
        assert read["page"] == "plugins/Templates.md" and read["ambiguous"] is True
        assert [c["file"] for c in read["candidates"]] == ["plugins/Templates.md", "a/Templates.md"]
