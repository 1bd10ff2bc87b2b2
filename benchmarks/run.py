#!/usr/bin/env python3
"""The vaultlens performance benchmark: one command, the figures of issue 8, optionally beside another server.

    python benchmarks/run.py                      # 1,000 and 10,000 pages, one run each
    python benchmarks/run.py --sizes 1000,10000,100000 --runs 3
    python benchmarks/run.py --vs "node …/vscode-markdown-language-server --stdio" --vs-args "--md-parser …"
    python benchmarks/run.py --sizes 10000 --vault …/interconnected-markdown/Markdown/10000s/10000
    python benchmarks/run.py --smoke              # 200 pages, few samples: does it all still run?

For each vault size it generates a vault (``../shared/bench/make_vault.py``, or a small generator
of its own when ``../shared`` is absent), and each ``--vault`` folder is taken as it is (a corpus
nobody here generated; its index goes to ``--work``, never into the folder). Then it drives the
server over stdio with ``../shared/bench/lsp_bench.py``:

- **ready cold**: the persistent index removed first (``VAULTLENS_CACHE_DIR`` points at a folder
  of the benchmark's own, so the vault is not written to);
- **ready warm**: the same again with the index the cold run left;
- latencies (p50/p95) of workspace/symbol, ``[[`` completion, hover on wikilinks, ``wiki/search``,
  an edit visible in workspace/symbol, and the peak RSS of the server's process tree;
- ``vaultlens search`` on the command line with a warm index (wall time, peak RSS);
- one more warm session (``benchmarks/styles.py``) timing workspace/symbol, ``[[`` completion and
  ``wiki/search`` with each query style apart: whole titles (the pruning's best case), half
  titles and 2-3 letter prefixes (what people type); ``--no-styles`` leaves it out.

With ``--vs CMD`` the other server is driven the same way in the same run (its "ready" is its
only start), and the table gains its column and the ratio vaultlens / other (below 1 is better
for times and memory). Nothing here asserts a figure: it measures and prints (``--json FILE``
keeps every raw report). Not part of the unit tests; ``tests/test_benchmark_smoke.py`` runs
``--smoke`` to catch breakage.

Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import styles  # noqa: E402 - benchmarks/styles.py, beside this file
SHARED_BENCH = REPO.parent / "shared" / "bench"
RACY_SECONDS = 2.5  # the persistent index re-hashes files modified this close to a scan


# --- vaults -----------------------------------------------------------------------------------


def make_vault(size: int, out: Path, seed: int, bench_dir: Path | None) -> str:
    """A vault of ``size`` pages in ``out`` (reused when already generated the same way)."""
    generator = "make_vault.py" if bench_dir and (bench_dir / "make_vault.py").exists() else "builtin"
    marker = out / ".vaultlens-bench.json"
    want = {"pages": size, "seed": seed, "generator": generator}
    if marker.exists():
        try:
            if json.loads(marker.read_text()) == want:
                return generator
        except ValueError:
            pass
    if out.exists():
        shutil.rmtree(out)
    if generator == "make_vault.py":
        subprocess.run(
            [sys.executable, str(bench_dir / "make_vault.py"), "--pages", str(size), "--out", str(out),
             "--seed", str(seed)],
            check=True, stdout=subprocess.DEVNULL,
        )
    else:
        _builtin_vault(size, out, seed)
    marker.write_text(json.dumps(want))
    return generator


_WORDS = (
    "the of and to in is that for it as with be on not this are or from at which have an they were "
    "garden compost soil seed water light graph search index vector query page note link tag title "
    "river stone cloud market theory model system network memory signal engine language history "
    "music science health travel recipe coffee budget project review draft summary method result"
).split()


def _builtin_vault(size: int, out: Path, seed: int) -> None:
    """A small Obsidian-style vault (used when ../shared/bench is absent): frontmatter, headings,
    [[links]] (some piped, some to headings), #tags and a synonym file."""
    rng = random.Random(seed)
    titles: list[str] = []
    seen: set[str] = set()
    while len(titles) < size:
        title = " ".join(w.capitalize() for w in rng.sample(_WORDS[20:], rng.randint(1, 3)))
        title += "" if title.casefold() not in seen else f" {len(titles)}"
        if title.casefold() not in seen:
            seen.add(title.casefold())
            titles.append(title)
    folders = ["wiki", "notes", "people", "projects", "sources"]
    for i, title in enumerate(titles):
        folder = out / folders[i % len(folders)]
        folder.mkdir(parents=True, exist_ok=True)
        tags = rng.sample(["ai", "ai/rag", "garden", "cooking", "travel", "work", "health"], 2)
        body = [f"# {title}", ""]
        for h in range(rng.randint(1, 4)):
            body += [f"## {' '.join(rng.sample(_WORDS, 2)).capitalize()}", ""]
            words = [rng.choice(_WORDS) for _ in range(rng.randint(30, 120))]
            for _ in range(rng.randint(1, 4)):
                target = rng.choice(titles[: max(1, i)] or titles)
                words.insert(rng.randrange(len(words)), rng.choice([f"[[{target}]]", f"[[{target}|that]]"]))
            words.insert(rng.randrange(len(words)), f"#{rng.choice(tags)}")
            body += [" ".join(words) + ".", ""]
        front = [
            "---", f'title: "{title}"', "aliases:", f'  - "{rng.choice(_WORDS)} {rng.choice(_WORDS)}"',
            "tags:", *(f"  - {t}" for t in tags), f"type: {rng.choice(['concept', 'note', 'source'])}",
            "created: 2024-01-15", "---",
        ]
        (folder / f"{title}.md").write_text("\n".join(front + body) + "\n", encoding="utf-8")
    (out / "_vocabulary.md").write_text(
        "---\ngroups:\n  - canonical: automobile\n    variants: [car, auto]\n---\n", encoding="utf-8"
    )


def settle(root: Path) -> None:
    """Wait until the newest page is older than the index's racy window (as a real vault is)."""
    newest = max((p.stat().st_mtime for p in root.rglob("*.md")), default=0.0)
    wait = newest + RACY_SECONDS - time.time()
    if wait > 0:
        time.sleep(wait)


# --- running the harness ----------------------------------------------------------------------


def lsp_bench(bench_dir: Path, server: str, root: Path, env: dict[str, str], runs: int,
              extra: list[str], smoke: bool) -> dict:
    """One ``lsp_bench.py`` report (``--runs`` fresh sessions); the medians when runs > 1."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as fh:
        out = fh.name
    args = [sys.executable, str(bench_dir / "lsp_bench.py"), "--server", server, "--root", str(root),
            "--runs", str(runs), "--out", out, "--quiet", *extra]
    if smoke:
        args += ["--queries", "5", "--completions", "4", "--hovers", "4", "--change-samples", "1",
                 "--custom-repeat", "3", "--ready-settle", "0.2"]
    for kv in sorted(env.items()):
        args += ["--env", "=".join(kv)]
    done = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    try:
        report = json.loads(Path(out).read_text())
    except ValueError:  # the harness refused its arguments or died: say why, measure nothing
        tail = (done.stderr or "").strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        return {"figures": figures({}), "errors": [f"lsp_bench.py: {tail[0]}"], "report": {}}
    finally:
        os.unlink(out)
    per_run = [figures(run) for run in report.get("runs", [])]
    errors = [e for r in report.get("runs", []) for e in r.get("errors", [])]
    return {"figures": medians(per_run), "errors": errors, "report": report}


def medians(per_run: list[dict[str, float | None]]) -> dict[str, float | None]:
    """Each figure's median over the runs that have it."""
    keys = per_run[0] if per_run else figures({})
    out: dict[str, float | None] = {}
    for key in keys:
        values = [f[key] for f in per_run if f.get(key) is not None]
        out[key] = statistics.median(values) if values else None
    return out


def figures(run: dict) -> dict[str, float | None]:
    """The table's figures from one lsp_bench run (or its medians)."""

    def get(*keys: str) -> float | None:
        cur: object = run
        for key in keys:
            cur = cur.get(key) if isinstance(cur, dict) else None
        return cur if isinstance(cur, (int, float)) else None

    custom = run.get("custom") or [{}]
    rss = [v for v in (get("rss_after_ready", "peak_rss_mb"), get("rss_end", "peak_rss_mb")) if v is not None]
    return {
        "ready_ms": get("ready", "ms"),
        "symbol_p50": get("workspace_symbol", "p50_ms"),
        "symbol_p95": get("workspace_symbol", "p95_ms"),
        "symbol_hit_rate": get("workspace_symbol", "target_hit_rate"),
        "completion_p50": get("completion", "p50_ms"),
        "completion_p95": get("completion", "p95_ms"),
        "completion_found": get("completion", "target_found_rate"),
        "hover_p50": get("hover", "p50_ms"),
        "hover_p95": get("hover", "p95_ms"),
        "search_p50": custom[0].get("p50_ms") if isinstance(custom[0], dict) else None,
        "search_p95": custom[0].get("p95_ms") if isinstance(custom[0], dict) else None,
        "edit_p50": get("did_change", "p50_ms"),
        "edit_p95": get("did_change", "p95_ms"),
        "peak_rss_mb": max(rss) if rss else None,
    }


def cli_search(command: list[str], root: Path, env: dict[str, str], query: str, reps: int) -> dict:
    """Wall time (median) and peak RSS of ``vaultlens search`` with a warm index."""
    walls, peaks = [], []
    for _ in range(reps):
        start = time.perf_counter()
        proc = subprocess.Popen([*command, "search", query, "--vault", str(root)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env={**os.environ, **env})
        _pid, status, usage = os.wait4(proc.pid, 0)
        walls.append((time.perf_counter() - start) * 1000)
        peaks.append(usage.ru_maxrss / 1024)
        if os.waitstatus_to_exitcode(status) != 0:
            return {"error": f"exit status {os.waitstatus_to_exitcode(status)}"}
    return {"wall_ms": round(statistics.median(walls), 1), "peak_rss_mb": round(max(peaks), 1)}


def vaultlens_command() -> list[str]:
    """How to start this checkout's vaultlens: the venv's console script, else ``python -m vaultlens.lsp``."""
    script = Path(sys.executable).with_name("vaultlens")
    return [str(script)] if script.exists() else [sys.executable, "-m", "vaultlens.lsp"]


# --- the table --------------------------------------------------------------------------------

ROWS = [
    ("ready, cold (no index)", "ready_cold"),
    ("ready, warm (persistent index)", "ready_warm"),
    ("workspace/symbol p50", "symbol_p50"),
    ("workspace/symbol p95", "symbol_p95"),
    ("[[ completion p50", "completion_p50"),
    ("[[ completion p95", "completion_p95"),
    ("hover p50", "hover_p50"),
    ("hover p95", "hover_p95"),
    ("wiki/search p50", "search_p50"),
    ("wiki/search p95", "search_p95"),
    ("edit visible p50", "edit_p50"),
    ("edit visible p95", "edit_p95"),
    ("peak RSS, MB", "peak_rss_mb"),
    ("CLI search, warm", "cli_ms"),
    ("CLI peak RSS, MB", "cli_rss_mb"),
]


def fmt(value: float | None, key: str) -> str:
    if value is None:
        return "—"
    if key.endswith("_mb"):
        return f"{value:.0f}"
    if key.startswith("ready") or key == "cli_ms":
        return f"{value / 1000:.2f} s"
    return f"{value:.1f} ms"


def _head(first: str, sizes: dict[str, str], other: bool, ratio: str) -> list[str]:
    """A Markdown table's header rows: ``first``, then a column per vault (and per server with --vs)."""
    head = [first]
    for label in sizes.values():
        head.append(f"vaultlens {label}")
        if other:
            head += [f"other {label}", ratio]
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]


def table(results: dict, sizes: dict[str, str], other: bool) -> str:
    """The figures as a Markdown table: a column per size (and per server with --vs)."""
    lines = _head("figure", sizes, other, "ratio")
    for label, key in ROWS:
        cells = [label]
        for size in sizes:
            ours = results[size]["vaultlens"].get(key)
            cells.append(fmt(ours, key))
            if other:
                theirs = results[size]["other"].get(key)
                cells.append(fmt(theirs, key))
                cells.append(f"{ours / theirs:.2f}" if ours is not None and theirs else "—")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def styles_table(results: dict, sizes: dict[str, str], other: bool) -> str:
    """p50 / p95 per method and query style (``benchmarks/styles.py``), a column per size."""
    lines = _head("query style", sizes, other, "ratio p95")

    def cell(found: dict | None) -> str:
        if not found or "p95_ms" not in found:
            return "—"
        return f"{found['p50_ms']:.1f} / {found['p95_ms']:.1f} ms"

    for method in styles.METHODS:
        for style in styles.STYLES:
            key = f"{method} {style}"
            label = {"whole": "whole titles", "half": "half titles", "prefix": "2-3 letters"}[style]
            cells = [f"{'[[ completion' if method == 'completion' else method} p50 / p95, {label}"]
            for size in sizes:
                found = results[size].get("styles", {})
                ours, theirs = found.get("vaultlens", {}).get(key), found.get("other", {}).get(key)
                cells.append(cell(ours))
                if other:
                    cells.append(cell(theirs))
                    ok = ours and theirs and "p95_ms" in ours and theirs.get("p95_ms")
                    cells.append(f"{ours['p95_ms'] / theirs['p95_ms']:.2f}" if ok else "—")
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000",
                    help="generated vault sizes in pages, comma-separated (1000,10000; empty: none)")
    ap.add_argument("--vault", action="append", default=[], metavar="PATH",
                    help="also measure this existing vault folder (repeatable; never written to), e.g. "
                         "interconnected-markdown's Markdown/10000s/10000")
    ap.add_argument("--runs", type=int, default=1, help="sessions per figure (medians when > 1)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "vaultlens-bench"),
                    help="where vaults and indexes go (reused between runs)")
    ap.add_argument("--bench-dir", default=str(SHARED_BENCH), help="folder holding lsp_bench.py and make_vault.py")
    ap.add_argument("--server", help="the vaultlens command (default: this checkout's `vaultlens lsp`)")
    ap.add_argument("--vs", metavar="CMD", help="another language server to measure the same way")
    ap.add_argument("--vs-args", default="", help="extra lsp_bench.py arguments for --vs (e.g. --md-parser …)")
    ap.add_argument("--vs-search", action="store_true", help="time wiki/search on --vs too (another vaultlens)")
    ap.add_argument("--smoke", action="store_true", help="200 pages, few samples: a quick check that it runs")
    ap.add_argument("--json", metavar="FILE", help="also write every figure and raw report to FILE")
    ap.add_argument("--no-styles", action="store_true", help="skip the session timing each query style apart")
    args = ap.parse_args(argv)

    bench_dir = Path(args.bench_dir)
    if not (bench_dir / "lsp_bench.py").exists():
        print(f"benchmarks/run.py: needs lsp_bench.py in {bench_dir} (see --bench-dir)", file=sys.stderr)
        return 2
    sizes = [200] if args.smoke else [int(s) for s in args.sizes.split(",") if s.strip()]
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    vaults = [_Target(str(size), f"{size:,}", work / f"vault{size}", work / f"index{size}", size) for size in sizes]
    for path in args.vault:
        root = Path(path).resolve()
        if not root.is_dir():
            print(f"benchmarks/run.py: --vault {path}: not a folder", file=sys.stderr)
            return 2
        pages = sum(1 for p in root.rglob("*.md") if not any(part.startswith(".") for part in p.relative_to(root).parts))
        vaults.append(_Target(root.name, f"{root.name} ({pages:,} pages)", root, work / f"index-{root.name}", None))
    command = vaultlens_command()
    server = args.server or shlex.join([*command, "lsp"])
    custom = ["--custom-request", "wiki/search", "--params", '{"query": "${query}", "limit": 10}']
    results: dict = {}
    raw: dict = {}
    for target in vaults:
        size, root, index_dir = target.key, target.root, target.index
        generator = "as found" if target.pages is None else make_vault(target.pages, root, args.seed, bench_dir)
        settle(root)
        # the index goes to index_dir; XDG_CACHE_HOME too, so that an index some other run left
        # in the user's cache folder (the fallback location) can never make a cold start warm
        env = {"VAULTLENS_CACHE_DIR": str(index_dir), "XDG_CACHE_HOME": str(index_dir / "xdg")}
        print(f"[{target.label}, {generator}] vaultlens cold …", file=sys.stderr)
        colds = []
        for _ in range(args.runs):  # each cold session starts without an index
            shutil.rmtree(index_dir, ignore_errors=True)
            colds.append(lsp_bench(bench_dir, server, root, env, 1, custom, args.smoke))
        print(f"[{target.label}] vaultlens warm …", file=sys.stderr)
        warm = lsp_bench(bench_dir, server, root, env, args.runs, custom, args.smoke)
        ours = dict(warm["figures"])
        readies = [c["figures"]["ready_ms"] for c in colds if c["figures"]["ready_ms"] is not None]
        ours["ready_cold"] = statistics.median(readies) if readies else None
        ours["ready_warm"] = warm["figures"]["ready_ms"]
        cold_rss = [c["figures"]["peak_rss_mb"] for c in colds if c["figures"]["peak_rss_mb"] is not None]
        ours["peak_rss_mb"] = max([*cold_rss, ours["peak_rss_mb"] or 0]) or None
        query = _a_title(root)
        cli = cli_search(command, root, env, query, 1 if args.smoke else 3)
        ours["cli_ms"], ours["cli_rss_mb"] = cli.get("wall_ms"), cli.get("peak_rss_mb")
        results[size] = {"vaultlens": ours}
        raw[size] = {"cold": colds, "warm": warm, "cli": cli}
        errors = [e for c in colds for e in c["errors"]] + warm["errors"] + ([cli["error"]] if "error" in cli else [])
        if args.vs:
            print(f"[{target.label}] {args.vs.split()[0]} …", file=sys.stderr)
            extra = shlex.split(args.vs_args) + (custom if args.vs_search else [])
            theirs = lsp_bench(bench_dir, args.vs, root, {}, args.runs, extra, args.smoke)
            other = dict(theirs["figures"])
            other["ready_cold"] = other["ready_ms"]
            results[size]["other"] = other
            raw[size]["other"] = theirs
            errors += [f"other: {e}" for e in theirs["errors"]]
        if not args.no_styles:
            print(f"[{target.label}] query styles …", file=sys.stderr)
            few = ["--queries", "5"] if args.smoke else []
            found = styles.measure(bench_dir, server, str(root), args.runs, ["=".join(kv) for kv in sorted(env.items())], few)
            results[size]["styles"] = {"vaultlens": found["styles"]}
            errors += [f"styles: {e}" for e in found["errors"]]
            if args.vs:
                theirs = styles.measure(bench_dir, args.vs, str(root), args.runs, [], shlex.split(args.vs_args) + few)
                results[size]["styles"]["other"] = theirs["styles"]  # (its errors: methods it lacks)
        for error in errors:
            print(f"  ! {error}", file=sys.stderr)
    print(f"vaultlens benchmark: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, "
          f"{args.runs} run(s) per figure, server `{server}`" + (f", vs `{args.vs}`" if args.vs else ""))
    print()
    labels = {target.key: target.label for target in vaults}
    print(table(results, labels, bool(args.vs)))
    if not args.no_styles:
        print()
        print(styles_table(results, labels, bool(args.vs)))
    if args.json:
        Path(args.json).write_text(json.dumps({"sizes": list(labels), "figures": results, "raw": raw}, indent=1, default=str))
    return 0


class _Target(NamedTuple):  # (not a dataclass: benchmarks/load.py loads this file without a module entry)
    """One vault to measure: its key in ``--json``, column label, folder, index folder, and
    size when generated."""

    key: str
    label: str
    root: Path
    index: Path
    pages: int | None


def _a_title(root: Path) -> str:
    """A page title to search for on the command line (the first page's file name)."""
    first = min(p for p in root.rglob("*.md") if p.name != "_vocabulary.md")
    return first.stem


if __name__ == "__main__":
    sys.exit(main())
