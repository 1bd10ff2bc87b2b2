#!/usr/bin/env python3
"""Link suggestions and unlinked mentions: p50/p95 per page at 1,000 and 10,000 pages.

    python benchmarks/mentions_bench.py                       # /tmp/vault1k-mentions and /tmp/vault10k
    python benchmarks/mentions_bench.py VAULT [VAULT ...] --samples 300
    python benchmarks/mentions_bench.py ../shared/vaults/obsidian-tasks --show 20 --seed 7   # judge by eye

For each vault (read with the persistent index, as the server does; pages are never written):
the phrase index build (once, on first use), then for a fixed sample of pages (seeded, sorted
paths) the time of ``suggestions(vault, page)`` (what the editor's diagnostics compute after a
keystroke's pause), of ``unlinked_mentions(vault, page)`` (the code lens, the hover's count,
``vaultlens mentions``), and of one ``Vault.upsert`` of a page that changes its title (the
index kept per page). In one process, engine calls only: the figures are what the server adds
on top of its own work. A busy machine makes them indicative only.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vaultlens.engine.mentions import mention_index, suggestions, unlinked_mentions  # noqa: E402
from vaultlens.engine.scan import open_vault  # noqa: E402

DEFAULT = ["/tmp/vault1k-mentions", "/tmp/vault10k"]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def ms(values: list[float]) -> str:
    return f"p50 {1000 * statistics.median(values):7.2f} ms  p95 {1000 * pct(values, 0.95):7.2f} ms  max {1000 * max(values):7.2f} ms"


def show(root: str, count: int, seed: int) -> None:
    """Every page's suggestions, then ``count`` of them sampled, each with its line: to judge
    the precision rules by eye."""
    vault, _ = open_vault(root)
    found = [m for path in sorted(vault.pages) for m in suggestions(vault, path)]
    print(f"{root}: {len(found)} suggestions on {len({m.path for m in found})} of {len(vault.pages)} pages")
    for m in random.Random(seed).sample(found, min(count, len(found))):
        page = vault.pages[m.path]
        lines = page.body.split("\n")
        line = lines[m.span.start_line - page.body_line].strip()
        print(f"  {m.path}:{m.span.start_line + 1}  '{m.text}' -> {m.targets[0]} ({m.via})  | {line[:140]}")


def bench(root: str, samples: int, seed: int) -> None:
    vault, _ = open_vault(root)
    started = time.perf_counter()
    index = mention_index(vault)
    built = time.perf_counter() - started
    paths = sorted(vault.pages)
    chosen = random.Random(seed).sample(paths, min(samples, len(paths)))
    sugg, ment, found_s, found_m = [], [], 0, 0
    for path in chosen:
        t = time.perf_counter()
        found_s += len(suggestions(vault, path))
        sugg.append(time.perf_counter() - t)
        t = time.perf_counter()
        found_m += len(unlinked_mentions(vault, path))
        ment.append(time.perf_counter() - t)
    ups = []
    for path in chosen[:50]:
        page = vault.pages[path]
        t = time.perf_counter()
        vault.upsert(replace(page, title=page.title + " Draft"))
        vault.upsert(page)
        ups.append((time.perf_counter() - t) / 2)
    print(f"{root}: {len(paths)} pages, {sum(map(len, index.by_path.values()))} phrases, index built in "
          f"{1000 * built:.0f} ms; {len(chosen)} sampled pages")
    print(f"  suggestions       {ms(sugg)}  ({found_s} found)")
    print(f"  unlinked mentions {ms(ment)}  ({found_m} found)")
    print(f"  upsert (title)    {ms(ups)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vaults", nargs="*", default=DEFAULT)
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--show", type=int, metavar="N", help="print N sampled suggestions instead of timing")
    args = parser.parse_args()
    for root in args.vaults:
        if not os.path.isdir(root):
            print(f"{root}: not here (make it with ../shared/bench/make_vault.py --pages N --out {root})")
            continue
        if args.show:
            show(root, args.show, args.seed)
        else:
            bench(root, args.samples, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
