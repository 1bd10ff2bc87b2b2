#!/usr/bin/env python3
"""How far an agent can trust ``hints.sufficient``, per vault and dev set, default and hybrid ranking.

    python benchmarks/hints_eval.py [--eval ../shared/eval] [--vaults ../shared/vaults]

For each dev set (the questions in ``EVAL/questions/V-dev.jsonl`` and the link texts in
``EVAL/V-dev.jsonl``) it runs every query in one process (``--hints``, limit 10) and prints:

- ``precision@3``: of the queries where ``sufficient`` is true, the share with a relevant page
  in the top 3 (issue 17's goal: at least 0.90 on the question sets);
- ``recall@1``: of the queries whose top hit is relevant, the share where ``sufficient`` is
  true (goal: at least 0.70);
- ``shown``: suggested queries that are the title of a hit already returned (must be 0);
- the counts behind both. ``hybrid`` runs the lexical arms only; ``--vectors`` adds a
  ``hybrid+vec`` row per set with the vector arm (the embeddings extra; vectors from the user
  cache, ``XDG_CACHE_HOME``, computed first where missing).

``--why`` also prints, per set, each question where ``sufficient`` is true but no relevant page
is in the top 3 (``wrong``), and each whose top hit is relevant but ``sufficient`` is false
(``missed``), with the evidence (coverage, passage, arms_agree) and the top page.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

from vaultlens.engine.query import parse_query  # noqa: E402
from vaultlens.engine.render import search_payload  # noqa: E402
from vaultlens.engine.scan import load_vault  # noqa: E402
from vaultlens.engine.search import search  # noqa: E402


def rates(vault, queries: list[dict], rank: str, threshold: float | None,
          why: list[str] | None = None, vectors=None) -> dict[str, float | int]:
    sufficient = top3 = top1 = top1_sufficient = shown = 0
    for item in queries:
        query = parse_query(item["query"], limit=10, hints=True, rank=rank)
        extra = {} if threshold is None else {"hints_threshold": threshold}
        payload = search_payload(vault, query, search(vault, query, vectors), **extra)
        files = [h["file"] for h in payload["hits"]]
        relevant = set(item["relevant"])
        hints = payload["hints"]
        ok = hints["sufficient"]
        sufficient += ok
        top3 += ok and bool(relevant & set(files[:3]))
        titles = {h["title"].casefold() for h in payload["hits"]}
        shown += sum(q.casefold() in titles for q in hints["suggested_queries"])
        right = bool(files[:1]) and files[0] in relevant
        if right:
            top1 += 1
            top1_sufficient += ok
        if why is not None and ((ok and not relevant & set(files[:3])) or (right and not ok)):
            ev = hints["evidence"]
            why.append(f"  {'wrong ' if ok else 'missed'} coverage {ev['coverage']:.3f} passage {ev['passage']:.3f} "
                       f"agree {str(ev['arms_agree']):<5} {item['query'][:60]!r} -> {files[0]}")
    return {
        "queries": len(queries), "sufficient": sufficient, "top3_when_sufficient": top3,
        "top1": top1, "sufficient_when_top1": top1_sufficient, "shown": shown,
        "precision@3": round(top3 / sufficient, 3) if sufficient else None,
        "recall@1": round(top1_sufficient / top1, 3) if top1 else None,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--eval", default=os.path.join(HERE, "..", "..", "shared", "eval"))
    ap.add_argument("--vaults", default=os.path.join(HERE, "..", "..", "shared", "vaults"))
    ap.add_argument("--threshold", type=float, help="hints_threshold (default: the engine's)")
    ap.add_argument("--json", action="store_true", help="one JSON line per row instead of the table")
    ap.add_argument("--why", action="store_true", help="list the wrong and missed questions of each set")
    ap.add_argument("--vectors", action="store_true", help="also hybrid with the vector arm (embeddings extra)")
    ap.add_argument("--sets", default="questions,links", help="which kinds of dev set (default: both)")
    args = ap.parse_args()
    sets = []
    for kind, folder in (("questions", os.path.join(args.eval, "questions")), ("links", args.eval)):
        if kind not in args.sets.split(",") or not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if name.endswith("-dev.jsonl") and os.path.isdir(os.path.join(args.vaults, name[:-10])):
                sets.append((kind, name[:-10], os.path.join(folder, name)))
    if not sets:
        print(f"no dev sets with vaults under {args.eval} and {args.vaults}", file=sys.stderr)
        return 1
    vaults: dict[str, object] = {}
    arms: dict[str, object] = {}
    if not args.json:
        print(f"{'set':<10} {'vault':<16} {'rank':<10} {'n':>3} {'suff':>4} {'prec@3':>7} {'top1':>4} {'rec@1':>6} {'shown':>5}")
    for kind, name, path in sets:
        if name not in vaults:
            vaults[name] = load_vault(os.path.join(args.vaults, name), cache=None).vault
        with open(path, encoding="utf-8") as fh:
            queries = [json.loads(line) for line in fh if line.strip()]
        if args.vectors and name not in arms:
            from vaultlens.engine.embed import open_vectors

            arms[name] = open_vectors(vaults[name])
            if arms[name] is None:
                print("--vectors: the embeddings extra is not installed", file=sys.stderr)
                return 1
        for rank in ("default", "hybrid", *(("hybrid+vec",) if args.vectors else ())):
            why: list[str] | None = [] if args.why else None
            vectors = arms.get(name) if rank == "hybrid+vec" else None
            row = rates(vaults[name], queries, rank.split("+")[0], args.threshold, why, vectors)
            if args.json:
                print(json.dumps({"set": kind, "vault": name, "rank": rank, **row}))
            else:
                fmt = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
                print(f"{kind:<10} {name:<16} {rank:<10} {row['queries']:>3} {row['sufficient']:>4} "
                      f"{fmt(row['precision@3']):>7} {row['top1']:>4} {fmt(row['recall@1']):>6} {row['shown']:>5}")
                if why:
                    print("\n".join(why))
    return 0


if __name__ == "__main__":
    sys.exit(main())
