"""The stdio message loop: framing, read-ahead, the session's states, and cancellation of queued work.

pygls' own loop (``pygls.io_.run_async``) reads one message, handles it, and reads the next. It
cannot see what is still waiting in the pipe, so during a burst of edits a ``$/cancelRequest``
arrives only after the request it cancels has run, and every superseded ``didChange`` is parsed
in full. This loop reads messages on a thread as fast as they come and keeps the ones not yet
handled in a ``Backlog``, which lets it

- answer a request cancelled while still queued with RequestCancelled (-32800) without running it;
- mark a ``didChange`` whose document is changed again before the next request as superseded:
  its text is applied (edits are deltas and must all be applied, in order) but the page is not
  re-parsed, because the later change re-parses it before any request can look
  (``VaultServer.change_superseded``);
- enforce the session's states (LSP 3.17 "Lifecycle Messages"): a request before ``initialize``
  gets ServerNotInitialized (-32002), a second ``initialize`` or any request after ``shutdown``
  gets InvalidRequest (-32600), notifications in those states are dropped, and ``exit`` ends the
  process with code 0 after ``shutdown`` and 1 without;
- answer a message that is not JSON (-32700, id null), not JSON-RPC 2.0 (-32600), or whose params
  do not match the method's types (-32602, naming the bad field), logging one line each; JSON
  nested too deeply to decode (``RecursionError``) is answered -32700 with the request's id when
  a shallow scan of the body finds one, and the reader keeps reading;
- resynchronise after a framing error: a header block without a usable Content-Length (missing,
  negative, not a number) is logged and skipped, and the reader looks for the next
  ``Content-Length:`` header even in the middle of a line (what is left of a body whose length
  was too short), or inside a body that fails to decode (its length was too long and it swallowed
  the next message). A length longer than everything the client ever sends cannot be detected:
  the reader waits for the rest, as the framing asks.

Everything else is pygls': ``VaultProtocol.handle_message`` dispatches, handlers answer.

Must not: touch the vault; it moves messages.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol

from lsprotocol import types
from pygls.io_ import StdoutWriter

log = logging.getLogger("vaultlens")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
SERVER_NOT_INITIALIZED = -32002
REQUEST_CANCELLED = -32800


@dataclass(frozen=True)
class Unreadable:
    """A framed message whose body is not JSON (or too deeply nested to decode); ``msg_id`` is
    the request's id when a shallow scan found one, else None."""

    reason: str
    msg_id: Any = None


EOF = object()  # the client closed stdin


class Session(Protocol):
    """What this loop needs of the protocol (``lsp.server.VaultProtocol``)."""

    shut_down: bool

    def receive(self, raw: Any) -> None: ...

    def send_error(self, msg_id: Any, code: int, message: str) -> None: ...

    def set_writer(self, writer: Any, include_headers: bool = True) -> None: ...


class Served(Protocol):
    """What this loop needs of the server (``lsp.server.VaultServer``), which it knows no more of."""

    protocol: Session
    change_superseded: bool
    input_pending: Callable[[], bool]
    quiet_for: Callable[[], float]

    def shutdown(self) -> None: ...


_HEADER = b"content-length:"
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\]]')
_ID_VALUE = re.compile(rb'\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


def top_level_id(body: bytes) -> Any:
    """The ``id`` of a JSON-RPC object that ``json`` could not decode (nested too deeply), found
    by one regular-expression pass that tracks nesting depth; None when there is none."""
    depth = 0
    for token in _TOKEN.finditer(body):
        text = token.group()
        if text in (b"{", b"["):
            depth += 1
        elif text in (b"}", b"]"):
            depth -= 1
        elif depth == 1 and text == b'"id"':
            value = _ID_VALUE.match(body, token.end())
            if value is not None:
                try:
                    return json.loads(value.group(1))
                except ValueError:
                    return None
    return None


def _decode(body: bytes) -> Any:
    """A body decoded, or ``Unreadable`` saying why not; never raises."""
    try:
        return json.loads(body)
    except RecursionError:
        return Unreadable("the JSON is nested too deeply", top_level_id(body))
    except ValueError as exc:  # includes UnicodeDecodeError; a cut body still starts with its id
        return Unreadable(str(exc), top_level_id(body))
    except Exception as exc:  # noqa: BLE001 - whatever a body holds, the reader keeps reading
        return Unreadable(f"{type(exc).__name__}: {exc}")


class _FdReader:
    """``readline``/``read`` straight from a file descriptor.

    The reading thread is a daemon blocked in a read when the process exits; had it been inside
    ``sys.stdin.buffer`` it would hold that object's lock, and the interpreter aborts at exit
    ("could not acquire lock for <_io.BufferedReader name='<stdin>'>").
    """

    def __init__(self, fd: int, stream: Any = None) -> None:
        self.fd = fd
        self.stream = stream  # a file object with no descriptor (tests pass BytesIO)
        self.buffer = bytearray()
        self.eof = False

    def unread(self, data: bytes) -> None:
        """Put bytes back in front of what is still to be read."""
        self.buffer[:0] = data

    def _fill(self) -> None:
        chunk = os.read(self.fd, 65536) if self.stream is None else self.stream.read(65536)
        if chunk:
            self.buffer += chunk
        else:
            self.eof = True

    def readline(self) -> bytes:
        while (end := self.buffer.find(b"\n")) < 0 and not self.eof:
            self._fill()
        end = len(self.buffer) if end < 0 else end + 1
        line = bytes(self.buffer[:end])
        del self.buffer[:end]
        return line

    def read(self, size: int) -> bytes:
        while len(self.buffer) < size and not self.eof:
            self._fill()
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data


def read_messages(stdin: BinaryIO, deliver) -> None:
    """Read framed messages from ``stdin`` until it closes; ``deliver`` each decoded body (runs on
    a thread). A framing error is logged and the reader resynchronises on the next header."""
    try:
        source = _FdReader(stdin.fileno())
    except (AttributeError, OSError, ValueError):  # not a real file (tests may pass BytesIO)
        source = _FdReader(-1, stdin)
    while True:
        length = None
        while True:
            line = source.readline()
            if not line:
                deliver(EOF)
                return
            if not line.strip():
                if length is not None:
                    break
                continue  # stray blank lines between messages, or a header block without a length
            start = line.lower().find(_HEADER)
            if start > 0:  # the tail of a body whose length was too short, then the next header
                log.warning("skipped %d bytes that were not a message header before Content-Length", start)
                skipped_id = top_level_id(line[:start])
                if skipped_id is not None:  # a whole request sent without a length: answer it
                    deliver(Unreadable("the message had no Content-Length header", skipped_id))
                line = line[start:]
            name, _, value = line.decode("ascii", errors="replace").partition(":")
            if name.strip().lower() == "content-length":
                try:
                    length = int(value.strip())
                except ValueError:
                    length = -1
                if length < 0:
                    log.warning("ignoring a message header with a bad Content-Length: %r", line[:80])
                    length = None
            elif start < 0 and length is None and not _looks_like_header(line):
                log.warning("skipped a line that is not a message header: %r", line[:80])
        body = source.read(length)
        if len(body) < length:
            deliver(EOF)
            return
        message = _decode(body)
        if isinstance(message, Unreadable):
            # a length too long swallows the next message: read on from its header
            start = body.lower().find(_HEADER, 1)
            if start > 0:
                log.warning("a message body holds another message's header (its Content-Length was too long); "
                            "resynchronising there")
                source.unread(body[start:])
                message = _decode(body[:start].rstrip())
            else:  # the body may end with the first bytes of the next header
                tail = next((i for i in range(len(_HEADER) - 1, 0, -1) if body[-i:].lower() == _HEADER[:i]), 0)
                if tail:
                    source.unread(body[-tail:])
        deliver(message)


def _looks_like_header(line: bytes) -> bool:
    name, colon, _ = line.partition(b":")
    return bool(colon) and 0 < len(name) < 80 and name.replace(b"-", b"").strip().isalnum()


def _method(message: Any) -> str | None:
    return message.get("method") if isinstance(message, dict) else None


def _is_request(message: Any) -> bool:
    return isinstance(message, dict) and "method" in message and "id" in message


def _key(value: Any) -> Any:
    """A request id or URI usable as a dict key (a string or an integer), else None."""
    return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None


def _change_uri(message: Any) -> str | None:
    if _method(message) != types.TEXT_DOCUMENT_DID_CHANGE or "id" in message:
        return None
    try:
        uri = message["params"]["textDocument"]["uri"]
    except (KeyError, TypeError):
        return None
    return uri if isinstance(uri, str) else None


class Backlog:
    """Messages read but not yet handled, in arrival order, indexed for the look-ahead."""

    def __init__(self) -> None:
        self.items: deque[tuple[int, Any]] = deque()
        self.seq = 0
        self.changes: dict[str, deque[int]] = {}  # uri -> seqs of its queued didChange
        self.requests: deque[int] = deque()  # seqs of queued requests
        self.queued_ids: dict[Any, int] = {}  # request id -> seq, while queued
        self.cancelled: set[Any] = set()

    def __bool__(self) -> bool:
        return bool(self.items)

    def add(self, message: Any) -> Any | None:
        """Queue a message; a ``$/cancelRequest`` for a queued request is consumed here and
        the cancelled id returned (the caller answers it), else None."""
        if _method(message) == types.CANCEL_REQUEST and "id" not in message:
            params = message.get("params")
            target = _key(params.get("id")) if isinstance(params, dict) else None
            if target is not None and target in self.queued_ids and target not in self.cancelled:
                self.cancelled.add(target)
                return target
        self.seq += 1
        self.items.append((self.seq, message))
        if _is_request(message):
            self.requests.append(self.seq)
            if _key(message["id"]) is not None:  # other ids are answered as invalid requests
                self.queued_ids[message["id"]] = self.seq
        elif (uri := _change_uri(message)) is not None:
            self.changes.setdefault(uri, deque()).append(self.seq)
        return None

    def pop(self) -> tuple[Any, bool, bool]:
        """The next message, whether it is a cancelled request, and whether it is a ``didChange``
        superseded by a later change of the same document with no request queued between them."""
        seq, message = self.items.popleft()
        cancelled = superseded = False
        if _is_request(message):
            self.requests.popleft()
            msg_id = _key(message["id"])
            if msg_id is not None:
                self.queued_ids.pop(msg_id, None)
                cancelled = msg_id in self.cancelled
                self.cancelled.discard(msg_id)
        elif (uri := _change_uri(message)) is not None:
            pending = self.changes[uri]
            pending.popleft()
            if pending:
                superseded = not self.requests or pending[0] < self.requests[0]
            else:
                del self.changes[uri]
        return message, cancelled, superseded


async def serve(server: Served, stdin: BinaryIO) -> int:
    """Handle messages from ``stdin`` until ``exit`` or end of input; the process's exit code."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    counts = [0, 0]  # messages the reader delivered, messages the loop took (ints: atomic under the GIL)
    last = [time.monotonic()]  # when the reader last delivered one

    def deliver(message: Any) -> None:
        counts[0] += 1
        last[0] = time.monotonic()
        try:
            loop.call_soon_threadsafe(queue.put_nowait, message)
        except RuntimeError:  # the loop has closed: the server is exiting
            pass

    reader = threading.Thread(
        target=read_messages,
        args=(stdin, deliver),
        name="vaultlens-stdin",
        daemon=True,  # blocked in read(); must not keep the process alive after exit
    )
    reader.start()
    protocol = server.protocol
    backlog = Backlog()

    # Long background work (the vault-wide diagnostics push) asks this between steps and
    # pauses while a message waits, so an answer never waits for a whole slice of it.
    server.input_pending = lambda: counts[0] > counts[1] or bool(backlog)
    server.quiet_for = lambda: time.monotonic() - last[0]

    def take(message: Any) -> None:
        counts[1] += 1
        target = backlog.add(message)
        if target is not None:
            log.info("request %r cancelled before it ran", target)
            protocol.send_error(target, REQUEST_CANCELLED, f"Request {target!r} was cancelled")

    while True:
        if not backlog:
            take(await queue.get())
        while not queue.empty():  # read ahead: everything that has arrived
            take(queue.get_nowait())
        message, cancelled, superseded = backlog.pop()
        if message is EOF:
            return 0 if protocol.shut_down else 1
        if _method(message) == types.EXIT and not _is_request(message):
            return 0 if protocol.shut_down else 1
        if not cancelled:
            server.change_superseded = superseded
            try:
                protocol.receive(message)
            except Exception:  # noqa: BLE001 - the last line of defence: never stop reading
                log.exception("failed to handle a message")
            finally:
                server.change_superseded = False
        await asyncio.sleep(0)  # let started handlers (tasks) and their responses run


def run_stdio(server: Served, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Serve over stdio; the exit code (see ``serve``)."""
    server.protocol.set_writer(StdoutWriter(stdout))
    try:
        return asyncio.run(serve(server, stdin))
    except BrokenPipeError:
        log.error("the client closed the connection; stopping")
        return 1
    except KeyboardInterrupt:
        return 1
    finally:
        server.shutdown()
