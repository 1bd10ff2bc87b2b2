"""``wiki/related``: the engine's related pages for a page, as search-shaped hits plus reasons."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from e2e_support import REPO, SERVER_ENV, engine_vault, to_plain
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from vaultlens.engine.related import reasons, related
from vaultlens.engine.render import hit_to_json

pytestmark = pytest.mark.asyncio(loop_scope="module")  # one session for the module (conftest)


async def wiki_related(client: LanguageClient, params: object) -> dict:
    return to_plain(await client.protocol.send_request_async("wiki/related", params))


async def test_related_is_the_engines_answer(shared_client: LanguageClient, shared_vault: Path):
    uri = (shared_vault / "ai/rag/graph-rag.md").as_uri()
    got = await wiki_related(shared_client, {"uri": uri, "limit": 5})
    vault = engine_vault(shared_vault)
    expected = [
        {**hit_to_json(vault, h), "reasons": reasons(h.matched)}
        for h in related(vault, "ai/rag/graph-rag.md", 5)
    ]
    assert got == {"command": "related", "vault": "vault", "page": "ai/rag/graph-rag.md", "hits": expected}
    # what a person expects: the page it builds on and that links back comes first
    assert got["hits"][0]["title"] == "Retrieval-Augmented Generation"
    assert "links here" in got["hits"][0]["reasons"]
    for hit in got["hits"]:
        assert hit["score"] == sum(m["points"] for m in hit["matched"])


async def test_related_equals_the_cli_json(shared_client: LanguageClient, shared_vault: Path):
    """``vaultlens related PAGE --json`` prints the same object for the same page."""
    for rel, limit in (("ai/rag/graph-rag.md", 5), ("garden/Composting.md", 3), ("Home.md", 10)):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "vaultlens.lsp", "related", rel, "--vault", str(shared_vault), "--limit", str(limit), "--json",
            cwd=str(REPO), env=SERVER_ENV, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        out, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
        got = await wiki_related(shared_client, {"uri": (shared_vault / rel).as_uri(), "limit": limit})
        assert got == json.loads(out.decode("utf-8")), rel


async def test_limit_defaults_to_ten(shared_client: LanguageClient, shared_vault: Path):
    got = await wiki_related(shared_client, {"uri": (shared_vault / "Home.md").as_uri()})
    assert len(got["hits"]) == 10
    assert got["page"] == "Home.md"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, '"uri" is required'),
        ({"uri": 3}, '"uri" is required'),
        ({"uri": "file:///a.md", "limit": 0}, '"limit" must be a whole number'),
        ({"uri": "file:///a.md", "bogus": 1}, "unknown parameter(s): bogus"),
        ({"uri": "file:///nowhere/else/page.md"}, "is not inside any open vault"),
    ],
)
async def test_bad_params_are_invalid_params(shared_client: LanguageClient, params, message):
    with pytest.raises(JsonRpcInvalidParams) as caught:
        await shared_client.protocol.send_request_async("wiki/related", params)
    assert message in caught.value.message
