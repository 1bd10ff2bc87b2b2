"""Stop points in long engine work: ``checkpoint()`` raises ``Stop`` when the caller asked it to.

Engine code calls ``checkpoint()`` between batches of work (``search.rank`` between candidate
batches). It costs one context-variable read when nobody is watching, which is always the case
for the CLI. A caller that runs engine work on a thread of its own (the language server's
``lsp/worker.py``) wraps the call in ``watching(check)``; ``check`` raises ``Stop`` to end it.

Must not: know who asks, or why (cancelled by a client, preempted by an edit).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")


class Stop(Exception):
    """Raised at a checkpoint: the work was asked to stop (``reason`` says why)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_CHECK: ContextVar[Callable[[], None] | None] = ContextVar("vaultlens_checkpoint", default=None)


def checkpoint() -> None:
    """Raise ``Stop`` if the work under way was asked to stop (no-op when nobody watches)."""
    check = _CHECK.get()
    if check is not None:
        check()


@contextmanager
def watching(check: Callable[[], None]) -> Iterator[None]:
    """Run the body with ``check`` called at every ``checkpoint()`` (in this thread or task)."""
    token = _CHECK.set(check)
    try:
        yield
    finally:
        _CHECK.reset(token)


def every(items: Iterable[T], batch: int = 128) -> Iterable[T]:
    """``items``, with a ``checkpoint()`` before each batch of ``batch`` of them (``items``
    itself when nobody watches: the CLI's loops pay nothing)."""
    return items if _CHECK.get() is None else _every(items, batch)


def _every(items: Iterable[T], batch: int) -> Iterator[T]:
    for n, item in enumerate(items):
        if not n % batch:
            checkpoint()
        yield item
