"""Load: a burst of edits with requests in flight, half of them cancelled (a CI-sized
``benchmarks/load.py``: 1,000 pages, 500 didChange, 60 requests; the script runs the full
5,000 / 2,000 / 200 of issue 9 and prints the figures).

The server must stay up, answer every request with a result or RequestCancelled (-32800) and
nothing else, cancel at least some of the requests still queued behind the edits, end with every
open page's text equal to the client's and its links equal to the engine's on the final texts,
and give back what the burst took: resident memory after the burst stays near its level before.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from protocol_support import REPO

SPEC = importlib.util.spec_from_file_location("vaultlens_benchmarks_load", REPO / "benchmarks" / "load.py")
assert SPEC is not None and SPEC.loader is not None
load = importlib.util.module_from_spec(SPEC)
sys.modules[SPEC.name] = load  # dataclasses look their module up there
SPEC.loader.exec_module(load)

RSS_GROWTH_MB = 25.0  # a leak of ~1 kB per message would show as more than this after 560 messages


async def test_burst_of_edits_with_cancelled_requests(tmp_path: Path):
    root = tmp_path / "vault"
    generator = load.make_vault(1000, root, seed=7)
    # the memory bound is the edit burst's: with the embeddings extra the server would also load
    # the 90 MB model and embed the vault in the background meanwhile (engine.embed)
    figures = await load.run_load(
        root.resolve(), changes=500, requests=60, open_pages=6, seed=7, env={"VAULTLENS_VECTORS": "off"}
    )
    figures.generator = generator
    print(load.report(figures, "tests/reliability/test_protocol_load.py"))
    assert figures.alive
    assert figures.other_errors == [] and figures.unanswered == 0
    assert figures.answered + figures.cancelled == 60
    assert figures.cancelled > 0, "no request was cancelled while queued"
    assert figures.answered >= 30  # only every second request was cancelled
    assert figures.text_mismatches == [] and figures.graph_mismatches == []
    assert figures.exit_code == 0
    assert figures.rss_after_mb - figures.rss_before_mb < RSS_GROWTH_MB, load.report(figures, "")
