"""The language server's vector arm: built in the background after indexing, then used by
``wiki/search`` with ``rank: hybrid`` (engine.embed.BackgroundVectors). Needs the embeddings
extra (skipped without it): the packaged all-MiniLM-L6-v2 run in NumPy, nothing downloaded."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from e2e_support import EXAMPLE_VAULT, copy_vault, start_session, wiki_search
from pytest_lsp import LanguageClient

from vaultlens.engine.embed import unavailable

pytestmark = [
    pytest.mark.skipif(unavailable() is not None, reason="the embeddings extra is not installed"),
    pytest.mark.timeout(240),
]


@pytest.mark.asyncio(loop_scope="function")  # its own server, in its own loop
async def test_wiki_search_uses_vectors_once_the_background_build_is_done(bare_client: LanguageClient, tmp_path: Path):
    vault = copy_vault(EXAMPLE_VAULT, tmp_path / "vault")
    await start_session(bare_client, vault)
    params = {"query": "how do I make plant food from kitchen scraps", "limit": 5, "rank": "hybrid"}
    deadline = time.monotonic() + 180
    while True:  # the first answers may come from the lexical arms alone: the build runs meanwhile
        found = await wiki_search(bare_client, params)
        arms = {m["term"] for h in found["hits"] for m in h["matched"]}
        if "vector" in arms or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.5)
    assert "vector" in arms, found
    assert any("vector" in h["via"] for h in found["hits"])
    assert {m["channel"] for h in found["hits"] for m in h["matched"]} == {"rrf"}
    # the default ranking is untouched by the vector arm
    plain = await wiki_search(bare_client, {"query": "compost", "limit": 3})
    assert all("via" not in h for h in plain["hits"])
