"""Background work on the event loop, done while the client is quiet, in short slices.

After the start-up scan the server has work no request is waiting for: pushing every page's
diagnostics (``features/diagnostics.py``), and unpacking what ranking reads of each page
(``prepare_vault``: a page loaded from the persistent index keeps its body token counts packed
until read, ~0.2 ms a page, which the first queries after a start would otherwise pay, page by
page). Such work runs only once the client has been quiet for ``IDLE`` seconds (no message), in
slices of at most ``SLICE`` seconds, and pauses at once when a message is waiting
(``VaultServer.input_pending``), so a request that arrives meanwhile waits for one page's work
at most, and a burst of requests (typing, a script) none at all. A client that never pauses
still gets it done, a slice every ``STARVE`` seconds.

Must not: decide what the work is; it only schedules it.
"""

from __future__ import annotations

import asyncio
import logging
import time

from .server import VaultServer, VaultState

log = logging.getLogger("vaultlens")
SLICE = 0.01
PAUSE = 0.004
IDLE = 0.2
STARVE = 2.0


async def quiet(ls: VaultServer) -> None:
    """Return once no message is waiting and none came for IDLE seconds, or after STARVE
    seconds at most (a client that never pauses still gets the work done, a slice at a time)."""
    waited = 0.0
    while waited < STARVE:
        wait = IDLE - ls.quiet_for()
        if wait <= 0 and not ls.input_pending():
            return
        step = max(wait, PAUSE)
        await asyncio.sleep(step)
        waited += step


async def prepare_vault(ls: VaultServer, state: VaultState) -> None:
    """Unpack what ranking reads of every page (``Vault.prepare``), in idle slices; stops when
    the vault is swapped for another (a re-index prepares its own)."""
    vault = state.vault
    try:
        await quiet(ls)
        deadline = time.perf_counter() + SLICE
        for path in vault.sorted_paths():
            if state.vault is not vault:
                return
            vault.prepare(path)
            if time.perf_counter() > deadline or ls.input_pending():
                await asyncio.sleep(PAUSE)
                await quiet(ls)
                deadline = time.perf_counter() + SLICE
    except Exception:  # noqa: BLE001 - an optimisation: failing must not take the server down
        log.exception("preparing the vault's pages failed")


def on_indexed(ls: VaultServer, state: VaultState) -> None:
    """After the start-up scan: prepare the vault's pages (in a task)."""
    ls.index_tasks.append(asyncio.ensure_future(prepare_vault(ls, state)))
