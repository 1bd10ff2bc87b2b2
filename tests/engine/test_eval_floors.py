"""Ranking quality floors on the shared dev sets: MRR@10 and Recall@10 may not fall below
the numbers recorded in tests/data/eval_floors.json.

The dev sets are known-item queries (link texts) over real vaults in ``../shared`` next to
the repository; the test is skipped cleanly when that folder is not there. Runs in-process
(engine only): the default ranking, and ``--rank hybrid`` with its lexical arms (the vector
arm needs the optional embeddings extra and is measured by hand, see README.md). Raise the
floors when the ranking improves; set them a little below what it reaches, since a floor
is a guard against regressions, not a target.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vaultlens.engine.query import parse_query
from vaultlens.engine.scan import open_vault
from vaultlens.engine.search import search

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED = REPO_ROOT.parent / "shared"
FLOORS = json.loads((REPO_ROOT / "tests" / "data" / "eval_floors.json").read_text(encoding="utf-8"))
K = 10

DEV_SETS = sorted((SHARED / "eval").glob("*-dev.jsonl")) if (SHARED / "eval").is_dir() else []

pytestmark = pytest.mark.skipif(not DEV_SETS, reason=f"no dev sets under {SHARED / 'eval'}")


def measure(vault, rows: list[dict], rank: str) -> tuple[float, float]:
    """MRR@10 and Recall@10 of one ranking mode over known-item queries."""
    reciprocal = recalled = 0.0
    for row in rows:
        hits = search(vault, parse_query(row["query"], limit=K, rank=rank))
        found = [i for i, hit in enumerate(hits) if hit.page.path in row["relevant"]]
        if found:
            reciprocal += 1.0 / (found[0] + 1)
            recalled += 1
    return reciprocal / len(rows), recalled / len(rows)


@pytest.mark.parametrize("dev_set", DEV_SETS or [None], ids=lambda p: p.name if p else "none")
def test_dev_set_stays_above_its_floors(dev_set):
    name = dev_set.name.removesuffix("-dev.jsonl")
    root = SHARED / "vaults" / name
    if not root.is_dir():
        pytest.skip(f"no vault at {root}")
    if not isinstance(FLOORS.get(name), dict):
        pytest.skip(f"no floors recorded for {name} in tests/data/eval_floors.json")
    rows = [json.loads(line) for line in dev_set.read_text(encoding="utf-8").splitlines() if line.strip()]
    vault, _listing = open_vault(str(root))
    report = {}
    for rank, floors in FLOORS[name].items():
        mrr, recall = measure(vault, rows, "hybrid" if rank == "hybrid-lexical" else rank)
        report[rank] = (round(mrr, 4), round(recall, 4))
    for rank, floors in FLOORS[name].items():
        mrr, recall = report[rank]
        assert mrr >= floors["mrr@10"], f"{name} {rank}: MRR@10 {mrr} < floor {floors['mrr@10']} ({report})"
        assert recall >= floors["recall@10"], (
            f"{name} {rank}: Recall@10 {recall} < floor {floors['recall@10']} ({report})"
        )
