"""Long requests off the event loop: one worker thread, preempted by edits, cancelled by clients.

A long request (every ``wiki/*`` operation, ``workspace/symbol``) runs its engine call with
``Worker.run`` on one worker thread; the event loop keeps reading messages and answering the
others meanwhile. Vaults are only ever changed on the event loop, and every change first calls
``Worker.quiesce`` (``lsp/live.py``'s ``VaultSync.before_change`` hook, and the buffer update of
``didChange``): it asks the running call to stop at its next ``engine.cancel.checkpoint``
(between candidate batches) and waits for it, a few milliseconds. The change is then applied at
once, in arrival order, and the stopped call is run again on the changed vault. So no call ever
reads a vault halfway through a change, and edits are never held back by a search.

A call stopped ``PREEMPT_LIMIT`` times (someone typing through a long search) is not stopped
again: the next change waits until it ends, so it always finishes.

``$/cancelRequest`` for a running request cancels its task (pygls), and ``run`` then marks the
call cancelled: it stops at its next checkpoint and the request is answered RequestCancelled
(-32800) at once. Reads on the loop (hover, completion) may run while the worker reads: both
only read (the indexes' read memos hold the same answers whoever fills them).

Must not: know about vaults or requests; it runs functions.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from vaultlens.engine.cancel import Stop, watching

log = logging.getLogger("vaultlens")
T = TypeVar("T")
PREEMPT_LIMIT = 8
CANCEL = "cancel"
PREEMPT = "preempt"


class _Call:
    """One attempt at a call: what it runs, and whether it was asked to stop."""

    def __init__(self, fn: Callable[[], Any], preemptible: bool) -> None:
        self.fn = fn
        self.preemptible = preemptible
        self.stop: str | None = None  # set from the loop; read by the worker at checkpoints
        self.thread: threading.Thread | None = None  # the thread running it

    def check(self) -> None:
        if self.stop == CANCEL or self.stop == PREEMPT and self.preemptible:
            raise Stop(self.stop)


class Worker:
    """The worker thread of one server, and the call it is running."""

    def __init__(self) -> None:
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vaultlens-worker")
        self.cond = threading.Condition()
        self.running: _Call | None = None
        self.preemptions = 0  # calls stopped by a change and run again (for logs and tests)
        self.calls = 0  # calls submitted and not yet ended (on the loop)

    def _run(self, call: _Call) -> Any:
        with self.cond:
            if call.stop == CANCEL:
                raise Stop(CANCEL)
            call.thread = threading.current_thread()
            self.running = call
        try:
            with watching(call.check):
                return call.fn()
        finally:
            with self.cond:
                self.running = None
                self.cond.notify_all()

    async def run(self, fn: Callable[[], T]) -> T:
        """``fn()`` on the worker thread: again after each preemption; cancelled with the task."""
        stopped = 0
        self.calls += 1
        try:
            while True:
                call = _Call(fn, preemptible=stopped < PREEMPT_LIMIT)
                future = self.executor.submit(self._run, call)
                try:
                    return await asyncio.wrap_future(future)
                except Stop as exc:
                    if exc.reason != PREEMPT:
                        raise asyncio.CancelledError from None
                    stopped += 1
                    self.preemptions += 1
                except asyncio.CancelledError:
                    call.stop = CANCEL  # the thread stops at its next checkpoint
                    raise
        finally:
            self.calls -= 1

    def busy(self) -> bool:
        """Whether a call is queued or running (background work on the loop waits meanwhile:
        it would take turns at the interpreter lock with it)."""
        return self.calls > 0

    def quiesce(self) -> None:
        """Before a vault changes (on the loop): stop the running call at its next checkpoint
        and wait for it (or, past its preemption limit, for its end)."""
        with self.cond:
            call = self.running
            if call is None or threading.current_thread() is call.thread:  # a call never waits for itself
                return
            if call.stop is None:
                call.stop = PREEMPT
            self.cond.wait_for(lambda: self.running is not call)

    def close(self) -> None:
        """Stop taking calls; a running one is asked to stop."""
        with self.cond:
            if self.running is not None:
                self.running.stop = CANCEL
        self.executor.shutdown(wait=False, cancel_futures=True)
