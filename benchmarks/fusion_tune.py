"""Re-fuse the arms of ``--rank hybrid`` offline: MRR@10 on the dev sets for fusion settings.

    python benchmarks/fusion_tune.py --encoder minilm --eval /work/shared/eval VAULT...

For every dev query (link texts and questions) the arms are ranked once (default, bm25f, vector
from embed_bench's cached vectors); then each setting in GRID is fused with the shipped
``hybrid.fuse_order`` and scored. Prints one line per setting: MRR@10 per (vault, set).
``--grid SHORT`` runs the few-parameter candidates only; ``--section-chars N`` embeds sections
with N characters instead of embed.SECTION_CHARS (the bench's vector cache holds one text
selection at a time, so a later run with the default re-embeds). The default arm is ranked
with ``search.rank``, so it misses what ``search.search`` adds around it (the quoted-phrase
relaxation); run_eval.py through ``vaultlens jsonl`` is the end-to-end check.
"""

from __future__ import annotations

import argparse
import json
import os

import embed_bench

from vaultlens.engine import embed, hybrid
from vaultlens.engine.bm25 import bm25f_rank
from vaultlens.engine.query import parse_query
from vaultlens.engine.scoring import make_plan
from vaultlens.engine.search import rank


def arms_for(vault, index, text):
    query = parse_query(text, limit=10, rank="hybrid")
    depth = hybrid.arm_depth(query)
    default_hits, _ = rank(vault, query, depth)
    plan = make_plan(vault, query)
    return default_hits, bm25f_rank(vault, query, depth, plan), (index.rank(vault, query, depth) if index else [])


def mrr(rows, order_of):
    total = 0.0
    for rel, arms in rows:
        ranking = order_of(arms)[:10]
        first = next((i + 1 for i, p in enumerate(ranking) if p in rel), None)
        total += 1.0 / first if first else 0.0
    return total / len(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--encoder", default="minilm")
    ap.add_argument("--eval", default="/work/shared/eval")
    ap.add_argument("--section-chars", type=int, help="embed.SECTION_CHARS for this run (text selection)")
    ap.add_argument("--grid", default="GRID", help="GRID (all settings) or SHORT (the chosen few)")
    ap.add_argument("vaults", nargs="+")
    args = ap.parse_args()
    if args.section_chars:
        embed.SECTION_CHARS = args.section_chars
    sets = {}
    for root in args.vaults:
        vault, index, *_ = embed_bench.open_index(root, args.encoder)
        name = os.path.basename(root.rstrip("/"))
        for kind, path in (("links", f"{args.eval}/{name}-dev.jsonl"), ("questions", f"{args.eval}/questions/{name}-dev.jsonl")):
            rows = []
            for line in open(path, encoding="utf-8"):
                q = json.loads(line)
                rows.append((set(q["relevant"]), (vault, arms_for(vault, index, q["query"]))))
            sets[f"{name[:8]}/{kind[:5]}"] = rows

    def fused(settings):
        def order_of(arms):
            vault, (default_hits, bm25, vec) = arms
            chosen = dict(settings)
            if chosen.pop("lexical", False):
                return hybrid.fuse_order(vault, default_hits, bm25, None, **chosen)
            return hybrid.fuse_order(vault, default_hits, bm25, vec, **chosen)

        return order_of

    def default_order(arms):
        return [h.page.path for h in arms[1][0]]

    print("default  ", "  ".join(f"{k} {mrr(r, default_order):.4f}" for k, r in sets.items()))
    for settings in globals()[args.grid]:
        print(settings, "  ".join(f"{k} {mrr(r, fused(settings)):.4f}" for k, r in sets.items()), flush=True)


GRID = [dict(lexical=True, k=k, bm25f=b) for k in (5, 60) for b in (0.5, 1.0)] + [
    dict(vector=v, default=1.0, bm25f=1.0, k=k) for k in (3, 4, 5, 6, 8) for v in (1.25, 1.5, 1.75)
]

# Few-parameter candidates: equal arm weights at k = 5, 10, 60 (RRF's own), and the vector
# arm at 1.25 / 1.5 at k = 5.
SHORT = [dict(vector=1.0, default=1.0, bm25f=1.0, k=k) for k in (5, 10, 60)] + [
    dict(vector=v, default=1.0, bm25f=1.0, k=5) for v in (1.25, 1.5)
]

if __name__ == "__main__":
    main()
