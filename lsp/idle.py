"""Background work on the event loop, done while the client is quiet, in short slices.

After the start-up scan the server has work no request is waiting for: pushing every page's
diagnostics (``features/diagnostics.py``), and reading the stored indexes, restoring the stored
links, unpacking the name indexes' keys, decoding what ranking reads of each page and then the
page (``prepare_vault``, ``Vault.prepare_index``, ``Vault.prepare_links``, ``Vault.prepare_key``,
``Vault.prepare``, ``Vault.prepare_page``: a warm start leaves each stored index, link part, key
and page as stored until first read, which the first requests after a start would otherwise pay
for), and making the converter's hooks for the protocol's messages (``prepare_protocol``: cattrs
makes a message class's hook when its first message is read or written). Such work runs in
slices of at most ``SLICE`` seconds and pauses at once when a message is waiting
(``VaultServer.input_pending``), so a request that arrives meanwhile waits for one page's work
at most. The diagnostics push also waits until the client has been quiet for ``IDLE`` seconds
(no message), or ``STARVE`` seconds at most (a client that never pauses still gets it, a slice
at a time); the preparation for ``PREPARE_QUIET`` seconds (before a stored index's read, which
cannot be cut, longer as the index is larger: ``read_quiet``), and it never forces its way in:
a request that needs what is not prepared yet decodes it itself.

The cyclic collector is scheduled here too (``collect_garbage``): the interpreter would start a
collection on whatever allocation crosses its threshold, inside a request (at 10,000 pages a
young collection took 20-40 ms once the pages decoded since the load filled the young
generation), so its automatic runs are off and it runs once the client has been quiet for
``IDLE`` seconds, generation by generation as the interpreter would; when a client never
pauses, once ``YOUNG_LIMIT`` objects wait, between two messages.

Must not: decide what the work is; it only schedules it.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import time
from collections.abc import Iterator

from vaultlens.engine.vault import PREPARED_KEYS, REQUESTED_INDEXES

from .server import SENT, TYPING, VaultServer, VaultState

log = logging.getLogger("vaultlens")
SLICE = 0.01
PAUSE = 0.004
IDLE = 0.2
PREPARE_QUIET = 0.025  # 25 ms: at 10,000 pages, 0.05 left the pages half prepared in lsp_bench
READ_QUIET = 20_000  # stored bytes read per ms of quiet asked first (~5x what the read takes)
STARVE = 2.0
COLLECT_EVERY = 0.25  # seconds between two looks at the collector's count
YOUNG_MIN = 50_000  # objects in the young generation before a collection is worth its time
YOUNG_LIMIT = 1_000_000  # collected then even while requests come (memory stays bounded)


async def quiet(ls: VaultServer) -> None:
    """Return once no message is waiting, none came for IDLE seconds and no request is running
    on the worker thread (a client waiting for an answer sends nothing, but is not quiet), or
    after STARVE seconds at most (a client that never pauses still gets the work done, a slice
    at a time)."""
    waited = 0.0
    while waited < STARVE:
        if _is_quiet(ls, IDLE):
            return
        step = max(IDLE - ls.quiet_for(), PAUSE)
        await asyncio.sleep(step)
        waited += step


def read_quiet(size: int) -> float:
    """Seconds of quiet asked before reading ``size`` bytes of a stored index at once (a read
    that cannot be cut, ~1 ms per 40-300 KB): ``PREPARE_QUIET`` up to 500 KB (most indexes at
    10,000 pages, where every one is 0.1-1.3 MB: a client's pauses of ~0.1 s, a benchmark's
    ready polls or someone reading, fit them), ~5x the read above, ``IDLE`` at most."""
    return min(IDLE, max(PREPARE_QUIET, size / READ_QUIET / 1000))


def _is_quiet(ls: VaultServer, seconds: float) -> bool:
    """Whether no message came for ``seconds``, none is waiting and no request is running."""
    return ls.quiet_for() >= seconds and not ls.input_pending() and not ls.worker.busy()


async def prepare_vault(ls: VaultServer, state: VaultState) -> None:
    """Read the stored indexes (``Vault.prepare_index``), restore the stored links part by part
    (``Vault.prepare_links``), then unpack every key of the name indexes (``Vault.prepare_key``),
    decode what ranking reads of every page (``Vault.prepare``), page by page, and every page
    itself (``Vault.prepare_page``), while the client is quiet: no message for ``PREPARE_QUIET``
    seconds (``read_quiet`` before an index read, which cannot be cut), none waiting and no
    request running; stops when the vault is swapped for another (a re-index prepares its own).

    Only then: a client that sends its next request as soon as it has the last answer (a
    benchmark, a script, someone holding a key down) would otherwise meet a slice begun in the
    gap, and wait for the stdin reader to get the interpreter lock back from it, up to a switch
    interval per request (measured at 10,000 pages: workspace/symbol p50 15 ms instead of 6 for
    the first 50 queries after a warm start). A request that reads a page or index not prepared
    yet decodes it itself, and answers the same."""
    vault = state.vault
    paths = vault.sorted_paths()
    try:
        # first the stored indexes a request would read on first use, one alone each time,
        # smallest first: a read cannot be cut (the body postings' keys take ~40 ms at 100,000
        # pages), and small ones fit short pauses
        for name in sorted(REQUESTED_INDEXES, key=vault.unread_index):
            size = vault.unread_index(name)  # 0 once read (a request may have meanwhile)
            if not size:
                continue
            if not await _quiet_for(ls, state, vault, read_quiet(size)):
                return
            vault.prepare_index(name)
        # then where every link resolves, a stored part at a time (~9 ms at 100,000 pages): the
        # first hover, backlink or diagnosis would otherwise restore them all at once (~0.9 s)
        if not await _in_slices(ls, iter(vault.prepare_links, False), state, vault):
            return
        # then every key of the name indexes (a partial term reads up to 500 of them), what
        # ranking reads of every page (its fields: thousands bounded per query), and every page
        # itself (a query reads those it scores and answers with: tens)
        for name in PREPARED_KEYS:
            keys = vault.packed_keys(name)
            if not await _in_slices(ls, map(functools.partial(vault.prepare_key, name), keys), state, vault):
                return
        for prepare in (vault.prepare, vault.prepare_page):
            if not await _in_slices(ls, map(prepare, paths), state, vault):
                return
    except Exception:  # noqa: BLE001 - an optimisation: failing must not take the server down
        log.exception("preparing the vault's pages failed")


async def _quiet_for(ls: VaultServer, state: VaultState | None, vault: object, seconds: float) -> bool:
    """Wait until no message came for ``seconds``, none is waiting and no request is running;
    False when ``vault`` is no longer ``state``'s live one meanwhile (no ``state``: never)."""
    while True:
        if state is not None and state.vault is not vault:
            return False
        if _is_quiet(ls, seconds):
            return True
        await asyncio.sleep(max(seconds - ls.quiet_for(), PAUSE))


def on_indexed(ls: VaultServer, state: VaultState) -> None:
    """After the start-up scan: prepare the vault's pages (in a task), and the converter's
    hooks for the protocol's messages (``prepare_protocol``, once a server)."""
    pages = asyncio.ensure_future(prepare_vault(ls, state))
    ls.index_tasks.append(pages)
    if ls.protocol_prepared is None:
        ls.protocol_prepared = asyncio.ensure_future(prepare_protocol(ls, pages))


async def prepare_protocol(ls: VaultServer, pages: asyncio.Future) -> None:
    """Make the converter's hook of every message class the server reads or writes
    (``ProtocolBase.hook_makers``), in slices, while the client is quiet as for the pages
    (``PREPARE_QUIET``): otherwise the first request of each kind makes them (6 ms of the
    first completion at 10,000 pages, a third of it). Those of what a person typing sends
    first (``TYPING``), then, once the vault's preparation (``pages``) is done, the rest: a page
    left as stored costs every query that reads it, a class without its hook one request."""
    typing_first, rest = ls.protocol.hook_makers(TYPING, SENT)
    try:
        await _in_slices(ls, (make() for make in typing_first))
        await asyncio.wait([pages])
        await _in_slices(ls, (make() for make in rest))
    except Exception:  # noqa: BLE001 - an optimisation: failing must not take the server down
        log.exception("preparing the protocol's messages failed")


_DONE = object()


async def _in_slices(ls: VaultServer, steps: Iterator[object], state: VaultState | None = None,
                     vault: object = None) -> bool:
    """Advance ``steps`` to its end (each ``next`` does one step of the work), in slices of
    ``SLICE`` seconds while the client is quiet (``PREPARE_QUIET``); False when ``vault`` is no
    longer ``state``'s live one meanwhile (no ``state``: never)."""
    while True:
        if not await _quiet_for(ls, state, vault, PREPARE_QUIET):
            return False
        deadline = time.perf_counter() + SLICE
        # (no ``time.sleep(0)`` between steps to hand the interpreter lock to the stdin reader:
        # on Linux it sleeps for the timer slack, ~80 us, more than a page takes; a reader
        # waiting for the lock gets it within the switch interval anyway)
        while time.perf_counter() < deadline and not ls.input_pending():
            if next(steps, _DONE) is _DONE:
                return True
        await asyncio.sleep(0)


def start_collector(ls: VaultServer) -> None:
    """Run the cyclic collector in idle time from now on (``collect_garbage``, in a task; once)."""
    if ls.collector is None:
        ls.collector = asyncio.ensure_future(collect_garbage(ls))


async def collect_garbage(ls: VaultServer) -> None:
    """The cyclic collector's runs, moved out of requests: automatic collection off (asserted at
    every look: a block that paused the collector may have turned it on again as it ended), a
    young collection once ``YOUNG_MIN`` objects wait and the client is quiet (``IDLE`` seconds,
    nothing waiting, no request running), every tenth an older one and every hundredth a full
    one, as the interpreter's thresholds (x, 10, 10) would; at ``YOUNG_LIMIT`` without waiting
    for quiet."""
    young_runs = 0
    while True:
        if gc.isenabled():
            gc.disable()
        await asyncio.sleep(COLLECT_EVERY)
        young = gc.get_count()[0]
        if young < YOUNG_MIN:
            continue
        if young < YOUNG_LIMIT and not _is_quiet(ls, IDLE):
            continue
        young_runs += 1
        gc.collect(2 if young_runs % 100 == 0 else 1 if young_runs % 10 == 0 else 0)
