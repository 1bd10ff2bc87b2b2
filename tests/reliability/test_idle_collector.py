"""The cyclic collector runs in idle time (``lsp/idle.py``: ``collect_garbage``): never while the
client keeps the server busy, unless garbage piles up past ``YOUNG_LIMIT``; soon once it is quiet.

Driven with a stand-in for the server's three signals (time since the last message, a message
waiting, a request running), which is all the scheduler reads; the collector itself is the
interpreter's."""

from __future__ import annotations

import asyncio
import gc
import weakref

import pytest

from vaultlens.lsp import idle


class _Worker:
    def __init__(self) -> None:
        self.running = False

    def busy(self) -> bool:
        return self.running


class _Server:
    """What ``collect_garbage`` reads of a ``VaultServer``."""

    def __init__(self) -> None:
        self.quiet = 0.0
        self.pending = False
        self.worker = _Worker()
        self.collector = None

    def quiet_for(self) -> float:
        return self.quiet

    def input_pending(self) -> bool:
        return self.pending


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def _cycles(n: int) -> list[weakref.ref]:
    """``n`` pairs of objects that refer to each other (only the collector frees them), as weak
    references to watch them go."""
    refs = []
    for _ in range(n):
        a, b = _Node(), _Node()
        a.other, b.other = b, a
        refs.append(weakref.ref(a))
    return refs


@pytest.fixture
def scheduler(monkeypatch):
    """A fast-looking collector with small thresholds; automatic collection restored after."""
    was_enabled = gc.isenabled()
    monkeypatch.setattr(idle, "COLLECT_EVERY", 0.01)
    monkeypatch.setattr(idle, "YOUNG_MIN", 100)
    yield
    gc.enable() if was_enabled else gc.disable()


async def test_busy_client_gets_no_collection_and_quiet_one_gets_it_soon(scheduler, monkeypatch):
    monkeypatch.setattr(idle, "YOUNG_LIMIT", 10**9)
    server = _Server()
    server.quiet = 0.0  # a message just came
    server.worker.running = True
    try:
        idle.start_collector(server)  # type: ignore[arg-type]
        await asyncio.sleep(0.02)
        assert not gc.isenabled()  # automatic runs are off: none can start inside a request
        refs = _cycles(2000)
        await asyncio.sleep(0.1)
        assert all(r() is not None for r in refs)  # busy: the garbage waits
        server.quiet = idle.IDLE + 1
        server.worker.running = False
        for _ in range(100):
            if all(r() is None for r in refs):
                break
            await asyncio.sleep(0.01)
        assert all(r() is None for r in refs)  # quiet: collected
    finally:
        server.collector.cancel()


async def test_garbage_past_the_limit_is_collected_even_while_busy(scheduler, monkeypatch):
    monkeypatch.setattr(idle, "YOUNG_LIMIT", 1000)
    server = _Server()
    server.worker.running = True  # never quiet
    try:
        idle.start_collector(server)  # type: ignore[arg-type]
        await asyncio.sleep(0.02)
        refs = _cycles(2000)
        for _ in range(100):
            if all(r() is None for r in refs):
                break
            await asyncio.sleep(0.01)
        assert all(r() is None for r in refs)
    finally:
        server.collector.cancel()


async def test_collection_turned_on_again_by_a_paused_block_is_turned_off(scheduler):
    server = _Server()
    try:
        idle.start_collector(server)  # type: ignore[arg-type]
        await asyncio.sleep(0.02)
        gc.enable()  # as a block that paused the collector does when it ends
        await asyncio.sleep(0.05)
        assert not gc.isenabled()
        first = server.collector
        idle.start_collector(server)  # type: ignore[arg-type]
        assert server.collector is first  # one collector per server
    finally:
        server.collector.cancel()
