"""``benchmarks/run.py --smoke`` runs end to end: a 200-page vault, cold and warm sessions, the CLI.

Catches breakage of the benchmark (and of a start-up path it exercises: the persistent index
written by one server and read by the next). No figure is asserted: timings belong to
``make bench``, not to the tests.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO.parent / "shared" / "bench" / "lsp_bench.py"


@pytest.mark.skipif(not BENCH.exists(), reason="needs ../shared/bench/lsp_bench.py")
def test_the_benchmark_smoke_run_completes(tmp_path):
    out = tmp_path / "figures.json"
    copy = tmp_path / "corpus"  # an existing vault (--vault), measured as it is
    shutil.copytree(REPO / "examples" / "vault", copy)
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "run.py"), "--smoke", "--work", str(tmp_path / "work"),
         "--json", str(out), "--vault", str(copy)],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "ready, warm (persistent index)" in done.stdout
    figures = json.loads(out.read_text())["figures"]["200"]["vaultlens"]
    for key in ("ready_cold", "ready_warm", "symbol_p95", "completion_p95", "hover_p95", "search_p95",
                "edit_p50", "peak_rss_mb", "cli_ms"):
        assert figures[key] is not None, key
    assert "  ! " not in done.stderr, done.stderr  # no harness errors
    # each query style reported apart (whole titles, half titles, 2-3 letters), for each request
    styles = json.loads(out.read_text())["figures"]["200"]["styles"]["vaultlens"]
    for method in ("workspace/symbol", "completion", "wiki/search"):
        for style in ("whole", "half", "prefix"):
            assert styles[f"{method} {style}"]["p95_ms"] is not None, (method, style)
    assert "| wiki/search p50 / p95, 2-3 letters |" in done.stdout
    assert not list((tmp_path / "work" / "vault200").glob(".vaultlens"))  # the index went to --work
    pages = len(list(copy.rglob("*.md")))
    assert f"| figure | vaultlens 200 | vaultlens corpus ({pages} pages) |" in done.stdout
    corpus = json.loads(out.read_text())["figures"]["corpus"]["vaultlens"]
    assert corpus["ready_cold"] is not None and corpus["symbol_p95"] is not None
    assert sorted(p.relative_to(copy) for p in copy.rglob("*")) == sorted(
        p.relative_to(REPO / "examples" / "vault") for p in (REPO / "examples" / "vault").rglob("*"))  # nothing written
