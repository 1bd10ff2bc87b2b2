"""``wiki/grep``, ``wiki/glob``, ``wiki/read``, ``wiki/links``: equal to the CLI's ``--json`` output."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from e2e_support import REPO, SERVER_ENV, to_plain
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def cli(root: Path, *args: str) -> dict:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vaultlens.lsp", *args, "--vault", str(root), "--json",
        cwd=str(REPO), env=SERVER_ENV, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    return json.loads(out.decode("utf-8"))


CASES = [
    ("wiki/grep", {"pattern": "compost(ing)?", "ignoreCase": True, "limit": 5},
     ["grep", "compost(ing)?", "-i", "--limit", "5"]),
    ("wiki/grep", {"pattern": "^tags:", "frontmatter": True, "folder": "garden", "limit": 3},
     ["grep", "^tags:", "--frontmatter", "--folder", "garden", "--limit", "3"]),
    ("wiki/grep", {"pattern": "RAG", "exclude": ["ai/"]}, ["grep", "RAG", "--exclude", "ai/"]),
    ("wiki/glob", {"pattern": "ai/**/*.md"}, ["glob", "ai/**/*.md"]),
    ("wiki/glob", {"pattern": "garden/*", "limit": 2}, ["glob", "garden/*", "--limit", "2"]),
    ("wiki/read", {"page": "Graph RAG", "level": 0}, ["read", "Graph RAG", "--level", "0"]),
    ("wiki/read", {"page": "[[RAG]]"}, ["read", "[[RAG]]"]),
    ("wiki/read", {"page": "garden/Composting.md", "level": 2}, ["read", "garden/Composting.md", "--level", "2"]),
    ("wiki/links", {"page": "Composting"}, ["links", "Composting"]),
]


async def test_retrieval_requests_equal_the_cli(shared_client: LanguageClient, shared_vault: Path):
    expected = await asyncio.gather(*(cli(shared_vault, *argv) for _, _, argv in CASES))
    for (method, params, _), want in zip(CASES, expected):
        got = to_plain(await shared_client.protocol.send_request_async(method, params))
        assert got == want, (method, params)
        assert json.dumps(got) == json.dumps(want)
    # the cases find something, so the equality is not between two empty answers
    assert expected[0]["count"] > 0 and expected[3]["count"] > 3 and expected[8]["incoming"]
    assert expected[7]["content"].startswith("---")  # level 2 is the whole file


BAD = [
    ("wiki/grep", {}, '"pattern" is required'),
    ("wiki/grep", {"pattern": "("}, "does not compile"),
    ("wiki/grep", {"pattern": "x", "limit": 0}, '"limit" must be'),
    ("wiki/grep", {"pattern": "x", "exclude": [1]}, '"exclude" must be'),
    ("wiki/glob", {"pattern": 3}, '"pattern" must be a string'),
    ("wiki/read", {"page": "Graph RAG", "level": 7}, "level must be"),
    ("wiki/read", {"page": "No Such Page"}, "no page matches"),
    ("wiki/links", {"page": "x", "extra": 1}, "unknown parameter(s): extra"),
]


async def test_bad_retrieval_params_are_invalid_params(shared_client: LanguageClient):
    for method, params, message in BAD:
        with pytest.raises(JsonRpcInvalidParams) as caught:
            await shared_client.protocol.send_request_async(method, params)
        assert message in str(caught.value), (method, params, str(caught.value))
    ok = to_plain(await shared_client.protocol.send_request_async("wiki/glob", {"pattern": "*.md"}))
    assert ok["files"] == ["Home.md"]
