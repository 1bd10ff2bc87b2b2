#!/usr/bin/env python3
"""Query latency by query style, over stdio: whole titles, half titles, 2-3 letter prefixes.

    python benchmarks/styles.py --root VAULT --server "vaultlens lsp" [--runs 3] [--out FILE]

One session per run (``../shared/bench/lsp_bench.py``'s client and inputs: the same 50 sampled
pages, the same document): once the server is ready, each page title is asked in each style as
``workspace/symbol``, as ``[[`` completion (typed at the end of the open document, with the
``didChange`` before it) and as ``wiki/search`` (limit 10). Whole titles are the pruning's best
case (a title of rare words has few rivals); half titles and short prefixes are what people
type. A method the server does not offer is dropped after its first error. Prints a JSON
report: per method and style, p50 / p95 (medians over the runs). ``benchmarks/run.py`` runs
it after its warm sessions and prints the table.

Standard library only.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED_BENCH = REPO.parent / "shared" / "bench"
STYLES = ("whole", "half", "prefix")
METHODS = ("workspace/symbol", "completion", "wiki/search")


def style_text(title: str, style: str, i: int) -> str:
    """The query of ``style`` for a page titled ``title`` (the ``i``-th sampled)."""
    if style == "whole":
        return title
    if style == "half":
        return title[: max(3, len(title) // 2)]  # lsp_bench's --query-style half
    return title[: 2 + i % 2]  # 2 or 3 letters, as lsp_bench's completion types


def _lsp_bench(bench_dir: Path):
    spec = importlib.util.spec_from_file_location("lsp_bench", bench_dir / "lsp_bench.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["lsp_bench"] = module
    spec.loader.exec_module(module)
    return module


def measure(bench_dir: Path, server: str, root: str, runs: int, env: list[str], extra: list[str]) -> dict:
    """Per method and style, p50 / p95 in ms (medians over ``runs`` sessions), and errors."""
    lb = _lsp_bench(bench_dir)
    lb.QUIET = True
    args = lb.parse_args(["--server", server, "--root", root, "--quiet", "--skip-completion", "--skip-hover",
                          "--skip-definition", "--skip-change", "--skip-symbols",
                          *(x for kv in env for x in ("--env", kv)), *extra])
    pages = lb.scan_vault(args.root)
    per_run: list[dict] = []
    errors: list[str] = []
    for run in range(runs):
        session = lb.Session(args, pages, run + 1)
        found: dict = {}
        opened = session.phase_open

        def styles_phase(session=session, found=found, opened=opened) -> None:
            opened()
            c, trig = session.c, args.completion_trigger
            dropped: set[str] = set()
            for style in STYLES:
                for method in METHODS:
                    times: list[float] = []
                    for i, page in enumerate(session.query_pages):
                        if method in dropped:
                            break
                        q = style_text(page.title, style, i)
                        if method == "workspace/symbol":
                            r = c.request(method, {"query": q}, timeout=args.timeout)
                        elif method == "wiki/search":
                            r = c.request(method, {"query": q, "limit": 10}, timeout=args.timeout)
                        else:
                            line = trig + q
                            session.set_tail(line)
                            r = c.request("textDocument/completion", {
                                "textDocument": {"uri": session.doc.uri},
                                "position": {"line": session.append_line, "character": lb.utf16_len(line)},
                                "context": {"triggerKind": 1}}, timeout=args.timeout)
                        if not r.ok:
                            dropped.add(method)
                            errors.append(f"{method}: {r.error}")
                            break
                        times.append(r.ms)
                    if method == "completion":
                        session.set_tail("")
                    if times:
                        found[f"{method} {style}"] = lb.lat_summary(times)

        session.phase_open = styles_phase
        result = session.run()
        errors += result.get("errors", [])
        per_run.append(found)
    out: dict = {}
    for key in dict.fromkeys(k for run in per_run for k in run):
        runs_with = [run[key] for run in per_run if key in run]
        out[key] = {q: statistics.median(r[q] for r in runs_with) for q in ("p50_ms", "p95_ms")
                    if all(isinstance(r.get(q), (int, float)) for r in runs_with)}
    return {"styles": out, "errors": errors}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--env", action="append", default=[], metavar="K=V")
    ap.add_argument("--bench-dir", default=str(SHARED_BENCH))
    ap.add_argument("--extra", default="", help="more lsp_bench.py arguments (shell words)")
    ap.add_argument("--out", help="also write the report here")
    a = ap.parse_args(argv)
    import shlex

    report = measure(Path(a.bench_dir), a.server, a.root, a.runs, a.env, shlex.split(a.extra))
    text = json.dumps(report, indent=1)
    if a.out:
        Path(a.out).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
