#!/usr/bin/env python3
"""Load on the language server: a burst of edits with requests in flight, half of them cancelled.

    python benchmarks/load.py                    # issue 9: 5,000 pages, 2,000 didChange, 200 requests
    python benchmarks/load.py --pages 1000 --changes 500 --requests 60     # what the test runs

Generates a vault (``../shared/bench/make_vault.py``, or ``benchmarks/run.py``'s own generator
when ``../shared`` is absent), starts ``python -m vaultlens.lsp lsp`` on it, waits for the index and the
start-up diagnostics, opens a few pages, then writes as fast as the pipe takes them: ``--changes``
incremental ``didChange`` notifications (words, links and line breaks inserted, ranges deleted)
spread over the open pages, with ``--requests`` requests among them (completion inside ``[[``,
workspace/symbol, hover on a link) and a ``$/cancelRequest`` right behind every second one.

It checks, and prints with the figures:

- the server never exits, every request gets a response or a RequestCancelled (-32800) error, and
  nothing else (no InternalError);
- each open page's text on the server equals the client's (``wiki/read`` level 2), and its links
  and backlinks (``wiki/links``) equal the engine's, built in-process from the final texts;
- the server's resident memory (``VmRSS`` in ``/proc/PID/status``) before the burst, its peak
  during the burst (sampled every 10 ms), and after it; ``VmHWM`` (the lifetime peak) too.

Exit code 0 when every check holds, 1 otherwise. ``run_load`` is what ``tests/reliability/
test_protocol_load.py`` calls with a smaller configuration.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SHARED_BENCH = REPO.parent / "shared" / "bench"
for entry in (str(REPO), str(REPO / "tests" / "reliability")):
    if entry not in sys.path:
        sys.path.insert(0, entry)

from protocol_support import REQUEST_CANCELLED, RawServer, engine_vault  # noqa: E402 - one JSON-RPC client

from vaultlens.engine import retrieve  # noqa: E402

_BREAK = re.compile(r"\r\n|\r|\n")
WORDS = ["garden", "graph", "search", "😀", "𝔸lpha", "note", "é", "index", "link", "[[", "]]", "#tag"]


@dataclass
class Figures:
    """What one load run measured."""

    pages: int = 0
    generator: str = ""
    changes: int = 0
    requests: int = 0
    cancels_sent: int = 0
    answered: int = 0
    cancelled: int = 0
    other_errors: list[str] = field(default_factory=list)
    unanswered: int = 0
    index_s: float = 0.0
    burst_s: float = 0.0
    settle_s: float = 0.0
    rss_before_mb: float = 0.0
    rss_peak_mb: float = 0.0
    rss_after_mb: float = 0.0
    hwm_mb: float = 0.0
    alive: bool = True
    text_mismatches: list[str] = field(default_factory=list)
    graph_mismatches: list[str] = field(default_factory=list)
    exit_code: int | None = None

    @property
    def ok(self) -> bool:
        return (
            self.alive and not self.other_errors and not self.unanswered and not self.text_mismatches
            and not self.graph_mismatches and self.answered + self.cancelled == self.requests and self.exit_code == 0
        )


# --- vault and memory ---------------------------------------------------------------------------


def make_vault(pages: int, out: Path, seed: int) -> str:
    """``benchmarks/run.py``'s generator: make_vault.py from ../shared/bench, or its own."""
    spec = importlib.util.spec_from_file_location("vaultlens_bench_run", REPO / "benchmarks" / "run.py")
    assert spec is not None and spec.loader is not None
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    bench = SHARED_BENCH if (SHARED_BENCH / "make_vault.py").exists() else None
    return run.make_vault(pages, out, seed, bench)


def memory_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of a process in MB (0 where /proc is missing)."""
    found = {"VmRSS": 0.0, "VmHWM": 0.0}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in found:
                found[key] = int(value.split()[0]) / 1024
    except OSError:
        pass
    return found["VmRSS"], found["VmHWM"]


# --- the client's model of a buffer -------------------------------------------------------------


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def position(text: str, offset: int) -> dict[str, int]:
    """The LSP position (UTF-16 character) of a code-point offset."""
    line, start = 0, 0
    for found in _BREAK.finditer(text, 0, offset):
        if found.end() > offset:
            break
        line, start = line + 1, found.end()
    return {"line": line, "character": utf16(text[start:offset])}


def boundary(text: str, offset: int) -> int:
    """``offset`` moved off the middle of a CRLF (an LSP position cannot point there)."""
    if 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n":
        return offset - 1
    return offset


def random_edit(rng: random.Random, text: str, titles: list[str]) -> tuple[str, dict[str, Any]]:
    """(new text, content change) for one random edit of ``text``."""
    start = boundary(text, rng.randint(0, len(text)))
    end = start
    roll = rng.random()
    if roll < 0.25 and text:  # delete a short range
        end = boundary(text, min(len(text), start + rng.randint(1, 12)))
        insert = ""
    elif roll < 0.5:
        insert = f" [[{rng.choice(titles)}]] "
    elif roll < 0.6:
        insert = "\n"
    else:
        insert = " " + rng.choice(WORDS)
    change = {"range": {"start": position(text, start), "end": position(text, end)}, "text": insert}
    return text[:start] + insert + text[end:], change


# --- the run ------------------------------------------------------------------------------------


async def _quiet(server: RawServer, seconds: float = 0.5, limit: float = 120.0) -> None:
    """Wait until the server has sent no notification for ``seconds`` (start-up diagnostics)."""
    deadline = time.monotonic() + limit
    seen = -1
    while len(server.notifications) != seen and time.monotonic() < deadline:
        seen = len(server.notifications)
        await asyncio.sleep(seconds)


async def run_load(root: Path, *, changes: int, requests: int, open_pages: int = 8, seed: int = 1,
                   env: dict[str, str] | None = None, timeout: float = 300.0) -> Figures:
    """Drive one server on ``root`` through the burst (see the module docstring)."""
    rng = random.Random(seed)
    figures = Figures(changes=changes, requests=requests)
    server = await RawServer.start(env=env)
    pid = server.proc.pid
    try:
        started = time.perf_counter()
        await server.initialize(root)
        figures.index_s = time.perf_counter() - started
        await _quiet(server)
        paths = [str(p.relative_to(root).as_posix()) for p in sorted(root.rglob("*.md")) if p.name != "_vocabulary.md"]
        figures.pages = len(paths)
        titles = [Path(p).stem for p in paths]
        opened = rng.sample(paths, min(open_pages, len(paths)))
        texts = {rel: (root / rel).read_bytes().decode("utf-8") for rel in opened}
        versions = dict.fromkeys(opened, 1)
        for rel in opened:
            server.notify("textDocument/didOpen", {"textDocument": {
                "uri": (root / rel).as_uri(), "languageId": "markdown", "version": 1, "text": texts[rel]}})
        # warm every request kind once, so "before" includes what the first request builds
        await server.result("workspace/symbol", {"query": titles[0][:4]})
        await server.result("textDocument/hover", {"textDocument": {"uri": (root / opened[0]).as_uri()},
                                                   "position": {"line": 0, "character": 0}})
        await _quiet(server, 0.3)
        figures.rss_before_mb, _ = memory_mb(pid)

        peak = [figures.rss_before_mb]
        sampling = True

        async def sample() -> None:
            while sampling:
                peak[0] = max(peak[0], memory_mb(pid)[0])
                await asyncio.sleep(0.01)

        sampler = asyncio.ensure_future(sample())
        futures: list[asyncio.Future] = []
        every = max(1, changes // max(1, requests))
        started = time.perf_counter()
        for i in range(changes):
            rel = opened[i % len(opened)]
            texts[rel], change = random_edit(rng, texts[rel], titles)
            versions[rel] += 1
            server.notify("textDocument/didChange", {
                "textDocument": {"uri": (root / rel).as_uri(), "version": versions[rel]}, "contentChanges": [change]})
            if i % every == every - 1 and len(futures) < requests:
                msg_id, future = server.request_nowait(*_a_request(rng, root, rel, texts[rel], titles, len(futures)))
                futures.append(future)
                if len(futures) % 2 == 0:
                    server.notify("$/cancelRequest", {"id": msg_id})
                    figures.cancels_sent += 1
            if i % 50 == 0:
                await server.drain()
        while len(futures) < requests:  # when changes < requests
            msg_id, future = server.request_nowait("workspace/symbol", {"query": rng.choice(titles)[:3]})
            futures.append(future)
        await server.drain()
        done, pending = await asyncio.wait(futures, timeout=timeout)
        figures.burst_s = time.perf_counter() - started
        figures.unanswered = len(pending)
        for future in done:
            reply = future.result()
            if "error" not in reply:
                figures.answered += 1
            elif reply["error"]["code"] == REQUEST_CANCELLED:
                figures.cancelled += 1
            else:
                figures.other_errors.append(f"{reply['error']['code']}: {reply['error']['message'][:120]}")
        figures.alive = server.alive()

        # the final state against the final texts
        started = time.perf_counter()
        for rel in opened:
            got = await server.result("wiki/read", {"page": rel, "level": 2})
            if got["content"] != texts[rel]:
                figures.text_mismatches.append(rel)
        figures.settle_s = time.perf_counter() - started
        expected = engine_vault(root, texts)
        for rel in opened:
            got = await server.result("wiki/links", {"page": rel})
            if got != json.loads(json.dumps(retrieve.links(expected, rel))):
                figures.graph_mismatches.append(rel)
        sampling = False
        await sampler
        figures.rss_peak_mb = peak[0]
        await asyncio.sleep(1.0)
        figures.rss_after_mb, figures.hwm_mb = memory_mb(pid)
        figures.alive = figures.alive and server.alive()
        figures.exit_code = await server.shutdown_and_exit()
    finally:
        await server.kill()
    return figures


def _a_request(rng: random.Random, root: Path, rel: str, text: str, titles: list[str], n: int) -> tuple[str, Any]:
    """The n-th request: completion inside ``[[``, workspace/symbol, or hover on a link, in turn."""
    uri = (root / rel).as_uri()
    link = text.rfind("[[")
    kind = n % 3
    if kind == 1 or link < 0:
        return "workspace/symbol", {"query": rng.choice(titles)[: rng.randint(2, 6)]}
    at = position(text, link + 2 + (1 if kind == 2 else 0))
    method = "textDocument/completion" if kind == 0 else "textDocument/hover"
    return method, {"textDocument": {"uri": uri}, "position": at}


def report(figures: Figures, command: str) -> str:
    """The figures as the lines the script prints."""
    f = figures
    lines = [
        f"vaultlens load: {f.pages:,} pages ({f.generator}), {os.cpu_count()} CPUs, Python {sys.version.split()[0]}",
        f"  command: {command}",
        f"  index ready          {f.index_s:8.2f} s",
        f"  burst                {f.burst_s:8.2f} s   ({f.changes:,} didChange, {f.requests} requests, "
        f"{f.cancels_sent} $/cancelRequest) until every response",
        f"  responses            {f.answered:8d}     results",
        f"                       {f.cancelled:8d}     RequestCancelled (-32800)",
        f"                       {len(f.other_errors):8d}     other errors" + (f": {f.other_errors[:3]}" if f.other_errors else ""),
        f"                       {f.unanswered:8d}     unanswered",
        f"  final text check     {f.settle_s:8.2f} s   mismatches: {f.text_mismatches or 'none'}",
        f"  final graph check               mismatches: {f.graph_mismatches or 'none'}",
        f"  RSS before burst     {f.rss_before_mb:8.1f} MB",
        f"  RSS peak in burst    {f.rss_peak_mb:8.1f} MB   (VmHWM over the whole run {f.hwm_mb:.1f} MB)",
        f"  RSS after burst      {f.rss_after_mb:8.1f} MB   ({f.rss_after_mb - f.rss_before_mb:+.1f} MB)",
        f"  server alive {f.alive}, exit code {f.exit_code}: {'OK' if f.ok else 'FAILED'}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=5000)
    ap.add_argument("--changes", type=int, default=2000, help="didChange notifications in the burst")
    ap.add_argument("--requests", type=int, default=200, help="requests in flight (every second one cancelled)")
    ap.add_argument("--open", type=int, default=8, help="pages open and edited")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "vaultlens-bench"),
                    help="where the vault and the persistent index go (the vault is reused between runs)")
    ap.add_argument("--json", metavar="FILE", help="also write the figures to FILE")
    args = ap.parse_args(argv)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    root = work / f"load{args.pages}"
    generator = make_vault(args.pages, root, args.seed)
    index = tempfile.mkdtemp(prefix="vaultlens-load-index-")  # a cold start; nothing written into the vault
    try:
        figures = asyncio.run(run_load(root.resolve(), changes=args.changes, requests=args.requests,
                                       open_pages=args.open, seed=args.seed,
                                       # a private XDG_CACHE_HOME too: no index left in the user cache
                                       env={"VAULTLENS_CACHE_DIR": index, "XDG_CACHE_HOME": os.path.join(index, "xdg")}))
    finally:
        shutil.rmtree(index, ignore_errors=True)
    figures.generator = generator
    command = "python benchmarks/load.py " + " ".join(argv if argv is not None else sys.argv[1:])
    print(report(figures, command.strip()))
    if args.json:
        Path(args.json).write_text(json.dumps(asdict(figures), indent=1))
    return 0 if figures.ok else 1


if __name__ == "__main__":
    sys.exit(main())
