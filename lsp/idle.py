"""Background work on the event loop, done while the client is quiet, in short slices.

After the start-up scan the server has work no request is waiting for: pushing every page's
diagnostics (``features/diagnostics.py``), and reading the stored indexes and decoding what
ranking reads of each page (``prepare_vault``, ``Vault.prepare_index``, ``Vault.prepare``: a warm
start leaves each stored index and page as stored until first read, which the first queries
after a start would otherwise pay for). Such work runs
in slices of at most ``SLICE`` seconds and pauses at once when a message is waiting
(``VaultServer.input_pending``), so a request that arrives meanwhile waits for one page's work
at most. The diagnostics push also waits until the client has been quiet for ``IDLE`` seconds
(no message), or ``STARVE`` seconds at most (a client that never pauses still gets it, a slice
at a time); the preparation only for the worker to be idle.

Must not: decide what the work is; it only schedules it.
"""

from __future__ import annotations

import asyncio
import logging
import time

from vaultlens.engine.vault import INDEX_NAMES

from .server import VaultServer, VaultState

log = logging.getLogger("vaultlens")
SLICE = 0.01
PAUSE = 0.004
IDLE = 0.2
STARVE = 2.0


async def quiet(ls: VaultServer) -> None:
    """Return once no message is waiting, none came for IDLE seconds and no request is running
    on the worker thread (a client waiting for an answer sends nothing, but is not quiet), or
    after STARVE seconds at most (a client that never pauses still gets the work done, a slice
    at a time)."""
    waited = 0.0
    while waited < STARVE:
        wait = IDLE - ls.quiet_for()
        if wait <= 0 and not ls.input_pending() and not ls.worker.busy():
            return
        step = max(wait, PAUSE)
        await asyncio.sleep(step)
        waited += step


async def prepare_vault(ls: VaultServer, state: VaultState) -> None:
    """Read the stored indexes (``Vault.prepare_index``), then decode what ranking reads of every
    page (``Vault.prepare``), page by page, whenever no
    message is waiting and no request is running (not only once the client is quiet: the
    requests of the first seconds after a start are the ones it speeds up); stops when the
    vault is swapped for another (a re-index prepares its own)."""
    vault = state.vault
    paths = vault.sorted_paths()
    done = 0
    try:
        # first the stored indexes a request would read on first use, one alone each time (a
        # read cannot be cut: the body postings, last, take ~0.3 s at 100,000 pages)
        for name in sorted(INDEX_NAMES, key=lambda name: name == "postings"):
            while ls.input_pending() or ls.worker.busy():
                if state.vault is not vault:
                    return
                await asyncio.sleep(PAUSE)
            if state.vault is not vault:
                return
            vault.prepare_index(name)
            await asyncio.sleep(0)
        while done < len(paths):
            if state.vault is not vault:
                return
            if ls.input_pending() or ls.worker.busy():
                await asyncio.sleep(PAUSE)
                continue
            deadline = time.perf_counter() + SLICE
            while done < len(paths) and time.perf_counter() < deadline and not ls.input_pending():
                vault.prepare(paths[done])
                done += 1
                time.sleep(0)  # hands the interpreter lock to the stdin reader, if it waits for it
            await asyncio.sleep(0)
    except Exception:  # noqa: BLE001 - an optimisation: failing must not take the server down
        log.exception("preparing the vault's pages failed")


def on_indexed(ls: VaultServer, state: VaultState) -> None:
    """After the start-up scan: prepare the vault's pages (in a task)."""
    ls.index_tasks.append(asyncio.ensure_future(prepare_vault(ls, state)))
