#!/usr/bin/env python3
"""Dump every ranked answer for a fixed set of queries, so that a refactor can prove it changed none.

    python benchmarks/rank_dump.py --out /tmp/before.jsonl VAULT [VAULT ...]
    ... change the code ...
    python benchmarks/rank_dump.py --out /tmp/after.jsonl VAULT [VAULT ...]
    cmp /tmp/before.jsonl /tmp/after.jsonl

For each vault it ranks, in one process and without the persistent index:

- every page title (at most ``--titles`` of them, an even sample in path order), whole;
- the first half of each title's words (what people type for a page they half remember);
- 2- and 3-letter prefixes of titles as-you-type (prefix on, operators off: completion's input);
- the titles, halves and prefixes as workspace/symbol asks them (``as_you_type``: names only);
- the shared dev sets' link texts and questions when ``../shared/eval`` has them for the vault.

Each query is answered at limits 10 and 50 (the payload ``search --json --hints`` prints: hits,
scores, every component, snippets, hints), as-you-type at limit 50 with and without explanation,
and the questions also with ``--rank hybrid`` (lexical arms). One JSON line per answer, keys sorted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED_EVAL = os.path.join(HERE, "..", "..", "shared", "eval")  # --eval overrides (a worktree elsewhere)

try:  # the installed package (``vaultlens.engine``), or a checkout from before it had that name
    from vaultlens.engine.query import as_you_type, parse_query
    from vaultlens.engine.render import search_payload
    from vaultlens.engine.scan import load_vault
    from vaultlens.engine.search import rank, search
except ImportError:  # pragma: no cover - older checkouts
    sys.path.insert(0, os.path.join(HERE, ".."))
    from vaultlens.engine.query import as_you_type, parse_query  # type: ignore[no-redef]
    from vaultlens.engine.render import search_payload  # type: ignore[no-redef]
    from vaultlens.engine.scan import load_vault  # type: ignore[no-redef]
    from vaultlens.engine.search import rank, search  # type: ignore[no-redef]


def _eval_queries(name: str) -> tuple[list[str], list[str]]:
    links, questions = [], []
    for folder, out in ((SHARED_EVAL, links), (os.path.join(SHARED_EVAL, "questions"), questions)):
        path = os.path.join(folder, f"{name}-dev.jsonl")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                out.extend(json.loads(line)["query"] for line in fh if line.strip())
    return links, questions


def queries_for(vault, titles_max: int) -> dict[str, list[str]]:
    titles = [vault.pages[p].title for p in sorted(vault.pages)]
    step = max(1, len(titles) // titles_max)
    titles = titles[::step][:titles_max]
    halves, prefixes = [], []
    for title in titles:
        words = title.split()
        halves.append(" ".join(words[: max(1, len(words) // 2)]))
        prefixes.extend((title[:2], title[:3]))
    links, questions = _eval_queries(os.path.basename(os.path.normpath(vault.root)))
    return {"title": titles, "half": halves, "prefix": prefixes, "link": links, "question": questions}


def dump(root: str, out, titles_max: int) -> int:
    vault = load_vault(root, cache=None).vault
    n = 0
    for style, queries in queries_for(vault, titles_max).items():
        for q in queries:
            answers: list[tuple[str, object]] = []
            if style == "prefix":
                for explain in (True, False):
                    query = parse_query(q, limit=50, prefix=True, operators=False)
                    hits, _ = rank(vault, query, 50, explain=explain)
                    answers.append((f"as-you-type explain={explain}", [
                        [h.page.path, h.score, [m.to_json() for m in h.matched]] for h in hits]))
            else:
                for limit in (10, 50):
                    query = parse_query(q, limit=limit, hints=True)
                    answers.append((f"limit={limit}", search_payload(vault, query, search(vault, query))))
                if style == "question":
                    query = parse_query(q, limit=10, rank="hybrid")
                    answers.append(("hybrid", search_payload(vault, query, search(vault, query))))
            if style in ("title", "half", "prefix"):
                hits, _ = rank(vault, as_you_type(q, 50), 50, explain=False)
                answers.append(("symbol", [[h.page.path, h.score] for h in hits]))
            for mode, answer in answers:
                out.write(json.dumps({"vault": os.path.basename(os.path.normpath(root)), "style": style,
                                      "query": q, "mode": mode, "answer": answer},
                                     sort_keys=True, ensure_ascii=False, default=str) + "\n")
                n += 1
    return n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("vaults", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--eval", help="folder holding the dev sets (default ../shared/eval beside the checkout)")
    ap.add_argument("--titles", type=int, default=400, help="titles per vault at most (default 400)")
    args = ap.parse_args()
    if args.eval:
        global SHARED_EVAL
        SHARED_EVAL = args.eval
    elif not os.path.isdir(SHARED_EVAL):
        print(f"note: no dev sets at {SHARED_EVAL}: link texts and questions are left out (--eval DIR)",
              file=sys.stderr)
    start = time.perf_counter()
    with open(args.out, "w", encoding="utf-8") as out:
        total = sum(dump(root, out, args.titles) for root in args.vaults)
    print(f"{total} answers in {time.perf_counter() - start:.1f} s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
