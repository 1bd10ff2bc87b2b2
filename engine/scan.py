"""The engine's only disk I/O: list a vault's pages in sorted order and read them.

Dot-folders (``.obsidian``, ``.git``, ``.trash``, ``.vaultlens``, ...) are skipped, and so is
``_vocabulary.md`` (configuration, not a page). Symbolic links are followed only while they stay
inside the vault, and each real directory is walked once, so link loops end.

``load_vault`` reads a whole vault: pages whose files are unchanged come from the persistent
index (``engine.cache``), the rest are parsed, by worker processes when there are many (parsing
is CPU-bound pure Python, so processes, not threads, use a second core), in groups that travel
back as the index's own chunks (``engine.compact`` records plus ``vault.index_part``).
"""

from __future__ import annotations

import errno
import fnmatch
import functools
import gc
import logging
import marshal
import operator
import os
import queue
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .cache import (
    LAZY_BODIES, RACY_NS, BodyFile, CacheError, CacheFile, CacheOptions, CacheWriter, Chunk, Listed, cache_paths,
    content_hash, listed_stats, open_cache,
)
from .compact import (
    MARSHAL_VERSION, BodyRegion, ChunkBuilder, LazyChunk, RecentBodies, Unpacked, decode_fields, decode_page, encode_fields,
    encode_page, index_entries, interned_fields, piped_links, rechunk, record_at, schema_version, split_chunk,
)
from .fields import PageFields, page_fields
from .links import STORED_LINKS
from .model import Page, Problem
from .names import names_page, read_head
from .pathindex import SPLIT, SplitValues, Stored, positions
from .page import parse_page
from .vault import Vault, index_part
from .vocabulary import VOCABULARY_FILE, Vocabulary, parse_vocabulary

log = logging.getLogger("vaultlens")

MAX_READ_BYTES = 64_000_000  # beyond this a page is not even read (parse_page indexes it by title)


@dataclass(frozen=True)
class Listing:
    """A vault's page paths (vault-relative, POSIX, sorted) and what could not be walked."""

    paths: tuple[str, ...]
    warnings: tuple[str, ...]
    stats: dict[str, tuple[int, int]] = field(default_factory=dict, compare=False, repr=False)  # (size, mtime_ns)


def is_page_path(rel: str) -> bool:
    """Whether a vault-relative path names a page (a ``.md`` file outside dot-folders)."""
    parts = rel.split("/")
    if any(p.startswith(".") for p in parts) or not rel.lower().endswith(".md"):
        return False
    return rel != VOCABULARY_FILE


def excluded(rel: str, globs: Iterable[str]) -> bool:
    """Whether ``rel`` matches any exclude glob (``fnmatch``; ``dir/`` excludes a folder)."""
    for pattern in globs:
        p = pattern.strip()
        if not p:
            continue
        if p.endswith("/"):
            if rel.startswith(p) or ("/" + p) in ("/" + rel):
                return True
        elif fnmatch.fnmatchcase(rel, p) or fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], p):
            return True
    return False


_NAME = operator.attrgetter("name")  # a directory entry's name (in C: 100,000 of them at a warm start)


def list_pages(root: str, exclude: Iterable[str] = (), *, stats: bool = False) -> Listing:
    """Every page under ``root``, sorted by path, confined to the vault.

    With ``stats``, ``Listing.stats`` has each page's ``(size, mtime_ns, ctime_ns, inode)``
    (what git's index keys on), taken before any page is read (what the persistent index is
    checked against).

    A folder's plain files are taken in the order the system lists them (the paths are sorted
    at the end): one ``stat`` each and nothing else is most of a warm start's check (0.6 s at
    100,000 pages). Its folders and symbolic links, which decide what is entered and warned
    about, are taken in name order, so the listing is the same on every file system.
    """
    exclude = tuple(exclude)
    found_stats: dict[str, tuple[int, int, int, int]] = {}
    real_root = os.path.realpath(root)
    seen_dirs: set[str] = set()
    paths: list[str] = []
    warnings: list[str] = []

    def keep(rel: str, entry: os.DirEntry) -> None:
        paths.append(rel)
        if stats:
            try:
                st = entry.stat()
            except OSError:  # vanished meanwhile: reading it will tell
                return
            found_stats[rel] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)

    stack = [("", real_root)]
    while stack:
        rel_dir, real_dir = stack.pop()
        if real_dir in seen_dirs:
            continue
        seen_dirs.add(real_dir)
        prefix = f"{rel_dir}/" if rel_dir else ""
        others = []  # folders, symbolic links and the rest: in name order, below
        try:
            with os.scandir(os.path.join(root, rel_dir) if rel_dir else root) as found:
                for entry in found:
                    name = entry.name
                    if name[0] == ".":
                        continue
                    try:
                        plain = entry.is_file(follow_symlinks=False)
                    except OSError:
                        continue
                    if not plain:
                        others.append(entry)
                    elif name[-3:].lower() == ".md":
                        rel = prefix + name
                        if rel == VOCABULARY_FILE or exclude and excluded(rel, exclude):
                            continue
                        keep(rel, entry)
        except OSError as exc:
            warnings.append(f"cannot list {rel_dir or '.'}: {exc.strerror or exc}")
            continue
        others.sort(key=_NAME)
        for entry in others:
            rel = prefix + entry.name
            try:
                if entry.is_symlink():
                    target = os.path.realpath(entry.path)
                    if target != real_root and not target.startswith(real_root + os.sep):
                        warnings.append(f"skipped {rel}: symbolic link leads outside the vault")
                        continue
                is_dir = entry.is_dir()
                is_file = entry.is_file()
            except OSError:
                continue
            if is_dir:
                if not excluded(rel + "/", exclude):
                    stack.append((rel, os.path.realpath(entry.path)))
            elif is_file and rel[-3:].lower() == ".md" and rel != VOCABULARY_FILE and (
                not exclude or not excluded(rel, exclude)
            ):  # is_page_path: dot-folders are never entered, dot-files skipped above
                keep(rel, entry)
    paths.sort()
    return Listing(tuple(paths), tuple(warnings), found_stats)


class OutsideVault(PermissionError):
    """A path that leads out of the vault (``..``, an absolute path or a symbolic link): never read."""


def confined_path(root: str, rel: str) -> str:
    """The file-system path of ``rel`` in the vault, or OutsideVault when its real path (symbolic
    links followed) is not inside the vault's real path."""
    full = os.path.join(root, rel)
    real_root = os.path.realpath(root)
    real = os.path.realpath(full)
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise OutsideVault(errno.EACCES, "the path leads outside the vault", rel)
    return full


def read_bytes(root: str, rel: str) -> bytes:
    """A file's bytes, confined to the vault: raises OSError when it is gone or unreadable (or
    not a regular file: a FIFO or a device is never waited on), and OutsideVault (an OSError)
    when ``rel`` or a symbolic link on the way leads outside."""
    return _read_regular(confined_path(root, rel))


class NotRegularFile(OSError):
    """A FIFO, socket or device where a file was expected: never read (it could block forever)."""


def open_regular(path: str) -> int:
    """A read-only descriptor for the regular file at ``path``: opened without blocking (a FIFO
    with no writer would hang ``open``), then checked with ``fstat``; NotRegularFile otherwise."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file", path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_listed(root: str, rel: str, size: int = -1) -> bytes:
    """``read_bytes`` for a path ``list_pages`` just found inside the vault, without checking
    again (two ``realpath`` calls would cost more than the read on a cold load).

    ``size``, the size the listing saw, sizes the first read: asking for the most a page may
    hold instead makes every read allocate (and hand back) 64 MB, 20 us a page, a sixth of
    parsing one. A file that changed size meanwhile is still read whole, up to that most.
    """
    return _read_regular(os.path.join(root, rel), size)


def _read_regular(path: str, size: int = -1) -> bytes:
    limit = MAX_READ_BYTES + 1
    fd = open_regular(path)
    try:
        want = min(size + 1, limit) if size >= 0 else limit
        data = os.read(fd, want)
        if not data:
            return data
        parts = [data]
        got = len(data)
        while got < limit:
            chunk = os.read(fd, min(max(want - got, 1 << 16), limit - got))
            if not chunk:
                break
            parts.append(chunk)
            got += len(chunk)
        return parts[0] if len(parts) == 1 else b"".join(parts)
    finally:
        os.close(fd)


def load_page(root: str, rel: str, *, label_first: bool = False) -> Page | None:
    """Read and parse one page; None when the file vanished or leads outside the vault, a bare
    page when unreadable."""
    try:
        data = read_bytes(root, rel)
    except (FileNotFoundError, OutsideVault):
        return None
    except OSError as exc:
        page = parse_page(rel, b"", label_first=label_first)
        problem = Problem("unreadable", f"cannot read this file: {exc.strerror or exc}", 0)
        return _with_problem(page, problem)
    return parse_page(rel, data, label_first=label_first)


def load_pages(root: str, rels: Iterable[str], *, label_first: bool = False) -> list[Page]:
    """Read and parse pages in the given order, dropping files that vanished meanwhile."""
    out = []
    for rel in rels:
        page = load_page(root, rel, label_first=label_first)
        if page is not None:
            out.append(page)
    return out


def load_vocabulary(root: str) -> Vocabulary:
    """The vault's ``_vocabulary.md``; an absent file is an empty vocabulary, silently."""
    try:
        data = read_bytes(root, VOCABULARY_FILE)
    except FileNotFoundError:
        return Vocabulary()
    except OutsideVault:
        return Vocabulary({}, (f"{VOCABULARY_FILE}: not read: it is a symbolic link that leads outside the vault",))
    except OSError as exc:
        return Vocabulary({}, (f"{VOCABULARY_FILE}: cannot read: {exc.strerror or exc}",))
    return parse_vocabulary(data)


def _with_problem(page: Page, problem: Problem) -> Page:
    from dataclasses import replace

    return replace(page, problems=page.problems + (problem,))


# --- whole vaults ---------------------------------------------------------------------------

GROUP_PAGES = 125  # pages per parse task and per stored chunk (a worker's peak grows with it: ~7 MB from 125 to 250)
PARALLEL_MIN_PAGES = 1500  # fewer pages parse faster in-process than worker start-up costs
ENV_WORKERS = "VAULTLENS_WORKERS"  # worker processes for cold parsing; 0 or 1: parse in-process
CHECK_WORKER_MIN_PAGES = 20_000  # ``LoadedVault.check`` lists in a worker process from this many pages (0.75 s
# of one core at 100,000); below, listing in-process costs less than a worker's start (~0.3 s of CPU)
NAMES_MIN_PAGES = PARALLEL_MIN_PAGES  # a cold load of fewer pages is over before a names pass would help
# Tests only: seconds each group of a cold load's full parse is held back, and a names pass
# whatever the vault's size (the end-to-end tests of the names phase run on small vaults).
ENV_SLOW_BODIES = "VAULTLENS_TEST_SLOW_BODIES"

Manifest = tuple[tuple[str, int, int, int, int, bytes], ...]  # (path, size, mtime_ns, ctime_ns, inode, content hash)
Pairs = list[tuple[Page, PageFields]]


def parse_group(root: str, rels: Sequence[str], stats: Sequence[tuple[int, int, int, int] | None], label_first: bool,
                positions: Sequence[bytes] | None = None) -> tuple[bytes, dict[str, Any], Manifest]:
    """Read, parse and index a group of pages: ``(records, part, manifest)``.

    ``records`` is one index chunk (``compact.ChunkBuilder``): a ``(page record, fields
    record)`` per page that could be read (vanished files are left out), and their bodies; ``part``
    the group's ``vault.index_part``, its search postings packed when ``positions`` gives each
    page's position in the vault's path table (``pathindex.positions``). Runs in worker
    processes, so it takes and returns plain data only.
    """
    chunk = ChunkBuilder()
    pairs: Pairs = []
    manifest: list[tuple[str, int, int, int, int, bytes]] = []
    for rel, stat in zip(rels, stats):
        try:
            data = _read_listed(root, rel, stat[0] if stat is not None else -1)
        except FileNotFoundError:
            continue
        except OSError as exc:
            page = _with_problem(parse_page(rel, b"", label_first=label_first),
                                 Problem("unreadable", f"cannot read this file: {exc.strerror or exc}", 0))
            key = (rel, -1, -1, -1, -1, b"")  # never valid: tried again next time
        else:
            page = parse_page(rel, data, label_first=label_first)
            size, mtime_ns, ctime_ns, inode = stat if stat is not None else (-1, -1, -1, -1)
            if size != len(data):  # changed since it was listed: keep it, but not as this stat
                size, mtime_ns, ctime_ns, inode = len(data), -1, -1, -1
            key = (rel, size, mtime_ns, ctime_ns, inode, content_hash(data))
        interned: list[Any] = []
        chunk.add(page, encode_fields(page_fields(page), interned))
        pairs.append((page, interned_fields(interned)))  # interned tokens for the part's keys
        manifest.append(key)
    position = dict(zip(rels, positions)) if positions is not None else None
    return chunk.blob(), index_part(pairs, position), tuple(manifest)


def names_group(root: str, rels: Sequence[str], stats: Sequence[tuple[int, int, int, int] | None], label_first: bool,
                positions: Sequence[bytes] | None = None) -> tuple[list[Any], dict[str, Any], Manifest]:
    """``parse_group`` for a cold load's names pass: each page by its frontmatter's names alone
    (``engine.names``), and the part as ``parse_group``'s; nothing to store (no manifest), so
    the records are plain ``(compact.encode_page, encode_fields)`` pairs in a list (no chunk,
    no digests: ``Decoder.plain``), sent in the same ``marshal`` as the part.

    Equal values of the group's pages are made one object here (the empty sets, the lengths, a
    title that is the file name), and the part's keys are the records' own interned tokens, so
    that one ``marshal`` sends each once and the server makes one object of it: the names vault
    lives beside the full one while that is built (100,000 pages: hundreds of MB).
    """
    records: list[Any] = []
    pairs: Pairs = []
    same: dict[Any, Any] = {}
    one = same.setdefault
    for rel, stat in zip(rels, stats):
        size = stat[0] if stat is not None else -1
        page = names_page(rel, read_head(os.path.join(root, rel), size), size, label_first=label_first)
        interned: list[Any] = []
        fields = tuple([one(v, v) for v in encode_fields(page_fields(page), interned)])
        record = encode_page(page)
        if record[1] == record[2]:  # title and file name: one string
            record = (record[0], record[2], *record[2:])
        records.append((record, fields))
        pairs.append((page, interned_fields(interned)))
    position = dict(zip(rels, positions)) if positions is not None else None
    return records, index_part(pairs, position), ()


class Decoder:
    """What the pages of one load share: the bounded caches of unpacked heavy fields and of
    bodies read, and the table that makes equal small values of different pages one object."""

    def __init__(self, root: str = "", label_first: bool = False) -> None:
        self.unpacked = Unpacked()
        self.shared: dict[Any, Any] = {}
        self.unpacked.pairs = self.shared  # (until the load ends: ``done``)
        self.recent = RecentBodies()
        self.root, self.label_first = root, label_first
        self.bodies: BodyFile | None = None  # the index file read, once a chunk of it is decoded
        self.raw = b""  # the records of the chunk ``stored`` read last, as checked
        self.written_file: BodyFile | None = None  # the index file being written (``written``)

    def done(self) -> None:
        """The load is over: its table of shared values is let go (the chunks not decoded yet
        hold it; decoded, it goes with them), and a page's link targets first read from now on
        are its own (``compact.link_kinds``)."""
        self.shared = {}
        self.unpacked.pairs = None

    def plain(self, records: list[Any]) -> Pairs:
        """The pages and fields of ``names_group``'s plain records (each holding its own body)."""
        unpacked, shared = self.unpacked, self.shared
        return [(decode_page(p, unpacked), decode_fields(f, shared, None, p[0])) for p, f in records]

    def records(self, blob: bytes, keep: Sequence[int] | None = None) -> tuple[Pairs, list[Any]]:
        """The pages and fields of one whole chunk (a parse group's: bodies decoded at once; with
        ``keep``: only those positions), and the raw records kept."""
        index, region = split_chunk(blob)
        return self._decode(index, BodyRegion(data=region, trusted=True), keep)

    def stored(self, stored: CacheFile, chunk: Any, keep: Sequence[int] | None = None) -> tuple[Pairs, list[Any], BodyRegion]:
        """``records`` of a chunk of the index file ``stored``, the bodies left there (read when
        a page's body is: ``compact.BodyRegion``), and the chunk's body region."""
        raw, base = stored.read_records(chunk)
        self.raw = raw
        if index_entries(raw) != len(chunk.paths):
            raise ValueError("a chunk index of another length than its manifest")
        if self.bodies is None or self.bodies.path != stored.path:
            self.bodies = stored.body_file()
        region = BodyRegion(read=self.bodies.read, base=base, lazy=LAZY_BODIES, recent=self.recent, damaged=self._damaged)
        pairs, records = self._decode(raw, region, keep)
        return pairs, records, region

    def stored_records(self, region: BodyRegion, keep: Sequence[int]) -> list[Any]:
        """The records at ``keep`` of the chunk ``stored`` or ``lazy`` read last (its region),
        each checked against the chunk's index (ValueError when one does not match)."""
        return [record_at(self.raw, i, region) for i in keep]

    def written(self, blob: bytes, writer: CacheWriter | None, base: int | None) -> Pairs:
        """The pages and fields of a parse group's chunk just written at ``base`` (its region's
        offset) by ``writer``: their bodies, heavy fields and body counts left in the file being
        written, read from there when used (checked by their digests); decoded from ``blob`` at
        once when the file cannot be read back."""
        if writer is None or base is None or not writer.flush():
            return self.records(blob)[0]
        if self.written_file is None:
            self.written_file = writer.reader()
            if self.written_file is None:
                return self.records(blob)[0]
        index, data = split_chunk(blob)
        region = BodyRegion(read=self.written_file.read, base=base, lazy=True, recent=self.recent, damaged=self._damaged)
        return self._decode(index, region, None, BodyRegion(data=data, trusted=True))[0]

    def lazy(self, stored: CacheFile, chunk: Any) -> tuple[Pairs, BodyRegion]:
        """The pages and fields of a chunk of ``stored`` as ``compact.LazyChunk`` placeholders
        (their paths from the manifest; the chunk's index, checked here, is kept and each page's
        record read and decoded on first use), and the chunk's region."""
        raw, base = stored.read_records(chunk)
        self.raw = raw
        if self.bodies is None or self.bodies.path != stored.path:
            self.bodies = stored.body_file()
        region = BodyRegion(read=self.bodies.read, base=base, lazy=True, recent=self.recent, damaged=self._damaged)
        lazy = LazyChunk(list(chunk.paths), raw, region, self.unpacked, self.shared, self._damaged)
        return lazy.pairs, region

    def _decode(self, index: Any, region: BodyRegion, keep: Sequence[int] | None,
                source: BodyRegion | None = None) -> tuple[Pairs, list[Any]]:
        """The pages of a chunk's ``index`` (``keep``: only those positions), their parts in
        ``region``; the records read from ``source`` (the region itself by default)."""
        source = source if source is not None else region
        todo = keep if keep is not None else range(index_entries(index))
        records = [record_at(index, i, source) for i in todo]
        unpacked, shared = self.unpacked, self.shared
        return [(decode_page(p, unpacked, region), decode_fields(f, shared, region, p[0])) for p, f in records], records

    def _damaged(self, path: str) -> Page:
        """The page at ``path`` parsed again, when the index file's copy of a part of it is
        damaged (and the index file dropped, so the next start rebuilds it)."""
        if self.bodies is not None:
            self.bodies.damaged()
        page = load_page(self.root, path, label_first=self.label_first) if self.root else None
        if page is None:
            raise CacheError(f"{path}: stored part damaged and the page cannot be read again")
        return page


def _worker_count(n_pages: int, workers: int | None) -> int:
    if workers is None:
        env = os.environ.get(ENV_WORKERS, "").strip()
        if env.isdigit():
            workers = int(env)
        else:
            workers = min(_cores(), 4) if n_pages >= PARALLEL_MIN_PAGES else 1
    return max(1, workers)


def _cores() -> int:
    """The cores this process may run on (``VAULTLENS_WORKERS`` says how many workers, if set)."""
    env = os.environ.get(ENV_WORKERS, "").strip()
    if env.isdigit():
        return int(env)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


_WORKER_CODE = f"from {__name__} import serve_worker; serve_worker()"  # the installed package's own name


def serve_worker() -> None:  # pragma: no cover - runs in worker processes
    """A parse worker's loop: length-prefixed ``marshal`` requests on stdin, replies on stdout.

    A request is ``(root, rels, stats, label_first, positions, kind, schema)``; a reply ``(True,
    records, part, manifest)`` (``parse_group``, or ``names_group`` when ``kind`` is ``"names"``)
    or ``(False, reason)``, also when ``schema`` is not this install's ``schema_version()`` (a
    parent started before vaultlens was upgraded, or after: its records would not decode there;
    the parent then parses in-process). Anything else written to stdout goes to stderr instead,
    so a stray print can never corrupt a reply (or the JSON-RPC stream of the server that
    started us).
    """
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    gc.disable()  # a group's objects are freed by reference counting; nothing forms cycles
    inp = sys.stdin.buffer
    while True:
        try:
            head = inp.read(8)
            if len(head) < 8:
                return
            request = marshal.loads(inp.read(int.from_bytes(head, "little")))
            root, rels, stats, label_first, positions, kind, schema = request
        except (OSError, ValueError, EOFError, KeyboardInterrupt):
            os._exit(0)  # the parent is gone (killed, or cut the pipe): nothing to say, nobody to say it to
        try:
            if schema != schema_version():
                raise RuntimeError(f"another vaultlens install: index schema {schema_version()}, asked for {schema}")
            group = names_group if kind == "names" else check_group if kind == "check" else parse_group
            reply = marshal.dumps((True, *group(root, rels, stats, label_first, positions)), MARSHAL_VERSION)
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which parses in-process
            reply = marshal.dumps((False, f"{type(exc).__name__}: {exc}"), MARSHAL_VERSION)
        try:
            out.write(len(reply).to_bytes(8, "little"))  # (not head + reply: a copy of megabytes)
            out.write(reply)
            out.flush()
        except (OSError, KeyboardInterrupt):  # BrokenPipeError: the parent died mid-load
            os._exit(0)


def _run_worker(proc: subprocess.Popen, todo: queue.SimpleQueue, done: queue.SimpleQueue, task, close: bool = True,
                ahead: threading.Semaphore | None = None) -> None:
    """Feed one worker groups from ``todo`` until none are left; results (or None) go to ``done``;
    then end the worker (its input closed) unless not ``close``. ``ahead``: taken before each
    group is sent (the reader gives it back as it takes each result), so that only so many
    results wait in ``done``."""
    try:
        while True:
            if ahead is not None:
                ahead.acquire()
            try:
                i = todo.get_nowait()
            except queue.Empty:
                if ahead is not None:
                    ahead.release()
                return
            request = marshal.dumps(task(i), MARSHAL_VERSION)
            try:
                proc.stdin.write(len(request).to_bytes(8, "little") + request)  # type: ignore[union-attr]
                proc.stdin.flush()  # type: ignore[union-attr]
                head = proc.stdout.read(8)  # type: ignore[union-attr]
                reply = marshal.loads(proc.stdout.read(int.from_bytes(head, "little")))  # type: ignore[union-attr]
            except (OSError, ValueError, EOFError) as exc:
                log.warning("parse worker %s failed: %s", proc.pid, exc)
                done.put((i, None))
                return
            if not reply[0]:
                log.warning("parse worker %s: %s", proc.pid, reply[1])
                done.put((i, None))
                continue
            done.put((i, reply[1:]))
    finally:
        try:
            if close:
                proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass


def start_workers(n_pages: int, workers: int | None = None) -> list[subprocess.Popen]:
    """The parse workers ``parse_groups`` would start for ``n_pages`` pages, started now (their
    interpreter starts and imports this engine meanwhile); none when the pages parse in-process."""
    n = min(_worker_count(n_pages, workers), -(-n_pages // GROUP_PAGES))
    procs: list[subprocess.Popen] = []
    if n > 1 and sys.executable:
        for _ in range(n):
            try:
                procs.append(subprocess.Popen([sys.executable, "-I", "-c", _WORKER_CODE], stdin=subprocess.PIPE,
                                              stdout=subprocess.PIPE, stderr=None, close_fds=True))
            except OSError as exc:
                log.info("parse workers unavailable: %s", exc)
                break
    return procs


def parse_groups(root: str, rels: Sequence[str], stats: dict[str, tuple[int, int]], label_first: bool,
                 workers: int | None = None, position: dict[str, bytes] | None = None,
                 started: list[subprocess.Popen] | None = None, names: bool = False,
                 ) -> Iterator[tuple[bytes, dict[str, Any], Manifest, int]]:
    """Parse pages in groups: ``parse_group``'s ``(records, part, manifest)`` (``names_group``'s
    with ``names``) and the number of pages asked for, as each group is done; with ``position`` (every path's position bytes in
    the vault's path table), the parts' postings are packed against that table.

    With two or more workers the groups go to worker processes (``python -I`` running
    ``serve_worker`` from this very engine), fed over pipes; a group a worker could not do, or
    every group when workers cannot start, is parsed in-process. ``started``: workers
    ``start_workers`` started already, used instead (and ended here, used or not).

    With ``names``, each group is ``names_group``'s (a cold load's names pass), and the
    ``started`` workers are left running, for the full parse that follows.
    """
    groups = [list(rels[i : i + GROUP_PAGES]) for i in range(0, len(rels), GROUP_PAGES)]
    kind = "names" if names else "pages"
    group = names_group if names else parse_group

    def task(i: int) -> tuple[Any, ...]:
        ids = [position[r] for r in groups[i]] if position is not None else None
        return (root, groups[i], [stats.get(r) for r in groups[i]], label_first, ids, kind, schema_version())

    procs = started if started is not None else start_workers(len(rels), workers)
    failed: list[int] = list(range(len(groups))) if not procs else []
    try:
        if procs:
            todo: queue.SimpleQueue = queue.SimpleQueue()
            done: queue.SimpleQueue = queue.SimpleQueue()
            for i in range(len(groups)):
                todo.put(i)
            keep = names and started is not None
            # Results wait in ``done`` until this thread takes them: when it is slower than the
            # workers (it merges every group, and shares the CPUs with them), a group's records
            # (its bodies: ~1 MB) would pile up there, tens of them at 10,000 pages: a worker
            # is at most one group ahead of what is taken.
            ahead = threading.Semaphore(2 * len(procs))
            threads = [threading.Thread(target=_run_worker, args=(p, todo, done, task, not keep, ahead), daemon=True)
                       for p in procs]
            for t in threads:
                t.start()
            for _ in range(len(groups)):
                while True:
                    try:
                        i, result = done.get(timeout=0.5)
                        ahead.release()
                        break
                    except queue.Empty:
                        if not any(t.is_alive() for t in threads) and done.empty():
                            i, result = -1, None  # every worker is gone: do the rest here
                            break
                if i < 0:
                    break
                if result is None:
                    failed.append(i)
                    continue
                yield result[0], result[1], result[2], len(groups[i])
            while True:  # groups no worker took (all of them died)
                try:
                    failed.append(todo.get_nowait())
                except queue.Empty:
                    break
        for i in sorted(set(failed)):
            yield (*group(*task(i)[:5]), len(groups[i]))
    finally:
        if not (names and started is not None):  # (else the workers parse the pages next)
            for proc in procs:
                if proc.poll() is None:
                    try:
                        proc.stdin.close()  # type: ignore[union-attr]
                    except OSError:
                        pass
            for proc in procs:
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


@dataclass
class LoadedVault:
    """A vault read from disk, and the index file still to be put in place (``commit``)."""

    vault: Vault
    listing: Listing
    from_cache: int = 0  # pages taken from the persistent index
    parsed: int = 0  # pages parsed
    changed: bool = True  # whether the pages differ from the persistent index
    cache_path: str | None = None  # the index file read, if any
    _writer: CacheWriter | None = field(default=None, repr=False)
    _scan_ns: int = 0
    detected: bool = True  # the link order came from detection (``link_order="auto"``), not a setting
    # ``load_vault(check_later=True)`` served the index as stored: what ``check`` compares the files with
    _unchecked: tuple[Any, ...] | None = field(default=None, repr=False)
    _recommit: Callable[[], LoadedVault] | None = field(default=None, repr=False)

    @property
    def unchecked(self) -> bool:
        """Whether the pages are the persistent index's as stored, not yet compared with the
        files (``load_vault(check_later=True)``): ``check`` says which changed."""
        return self._unchecked is not None

    def check(self) -> tuple[str, ...]:
        """For a vault loaded unchecked: list the vault now and compare every file with what
        the index stored, by the same rules as a checked load (size, times, inode; hashed when
        racy). Returns the pages to read again, sorted: changed, added, removed or excluded
        since (the caller applies them as disk events). When anything differs, ``commit``
        stores the index again. Off the event loop: it costs the listing (one ``stat`` a file).
        () when the vault was checked when loaded."""
        pending, self._unchecked = self._unchecked, None
        if pending is None:
            return ()
        root, exclude, link_order, cache, chunks, stored_scan_ns, worker = pending
        found = worker.result() if worker is not None else None
        if found is None:
            found = compare_listing(root, exclude, chunks, stored_scan_ns)
        changed, differs, warnings = found
        self.listing = Listing(self.listing.paths, tuple(warnings))
        if differs:
            self._recommit = functools.partial(load_vault, root, exclude=exclude, link_order=link_order, cache=cache)
        return tuple(changed)

    def apply(self, changed: Iterable[str]) -> None:
        """Read the pages ``check`` named again from disk into the vault, as a checked load does
        (the stale pages dropped first, then those whose file is a page read again, in order)."""
        vault, changed = self.vault, sorted(changed)
        for rel in changed:
            vault.remove(rel)
        for rel in changed:
            page = load_page(vault.root or "", rel, label_first=vault.label_first)
            if page is not None:
                vault.upsert(page)

    def commit(self) -> str | None:
        """Write the updated persistent index, if anything changed; returns its path.

        Safe to call from another thread, once; failures are logged, never raised. After a
        ``check`` that found changes, the vault is loaded again (checked: the unchanged pages
        from the index, the rest parsed) to store it; that vault is dropped.
        """
        recommit, self._recommit = self._recommit, None
        if recommit is not None:
            try:
                return recommit().commit()
            except Exception:  # noqa: BLE001 - an index not stored costs the next start time, no answer
                log.exception("vaultlens index of %s not stored again", self.vault.root)
                return None
        writer, self._writer = self._writer, None
        if writer is None:
            return None
        try:
            return writer.commit(label_first=self.vault.label_first, scan_ns=self._scan_ns, detected=self.detected)
        except OSError as exc:
            log.info("vaultlens index not written: %s", exc.strerror or exc)
            writer.abort()
            return None

    def discard(self) -> None:
        """Drop the pending index file."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.abort()


def load_vault(
    root: str,
    *,
    exclude: Iterable[str] = (),
    link_order: str = "auto",
    cache: CacheOptions | None = None,
    progress: Callable[[int, int], None] | None = None,
    workers: int | None = None,
    on_names: Callable[[Vault], None] | None = None,
    check_later: bool = False,
    check_worker_from: int | None = None,
) -> LoadedVault:
    """Read a whole vault: unchanged pages from the persistent index, the rest parsed.

    ``link_order`` is ``target-first`` (Obsidian: ``[[target|label]]``), ``label-first``
    (Dendron: ``[[label|target]]``) or ``auto``: whichever reading resolves more piped links.
    ``cache`` defaults to ``CacheOptions.from_env()``; ``progress(done, total)`` is called as
    pages come in (from this thread). The result's ``commit()`` stores what was parsed.

    ``on_names(vault)``, when given, is called (from this thread) on a cold load, before any page
    is parsed in full, with a vault of every page's names (``engine.names``: the frontmatter
    only, read in a fraction of the time), for a caller that answers from names meanwhile. The
    vault returned is the full one, the same as without ``on_names``; a warm load never calls it.

    ``check_later``: when a persistent index of the vault exists, return its pages and indexes
    as stored without listing the vault first (``LoadedVault.unchecked``; one ``stat`` a file
    is most of a warm start: 0.6 s at 100,000 pages); the caller then runs
    ``LoadedVault.check()`` and applies the pages it names, which are the ones a checked load
    would have read again. Without an index the load is the same as without it.

    From ``check_worker_from`` stored pages (``CHECK_WORKER_MIN_PAGES`` unless given), with more
    than one core, the listing runs in a worker process from the start, while this process
    answers: a one-shot command lists in-process below ``CHECK_WORKER_MIN_PAGES``, where that
    costs less than a worker's start; a server, whose first requests would share the
    interpreter with an in-process listing, asks for the worker from fewer pages.
    """
    # Loading creates millions of objects that all live on: the cyclic collector would walk
    # them again and again (a third of a cold load at 10,000 pages) and find nothing, so it is
    # paused, and what exists afterwards is moved out of its sight (``gc.freeze``) rather than
    # walked by the next collection, on whatever request happens to trigger it.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _load_vault(root, exclude, link_order, cache, progress, workers, on_names, check_later, check_worker_from)
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


def _load_vault(root: str, exclude: Iterable[str], link_order: str, cache: CacheOptions | None,
                progress: Callable[[int, int], None] | None, workers: int | None,
                on_names: Callable[[Vault], None] | None = None, check_later: bool = False,
                check_worker_from: int | None = None) -> LoadedVault:
    options = cache if cache is not None else CacheOptions.from_env()
    scan_ns = time.time_ns()
    candidates = cache_paths(root, options)
    stored = open_cache(candidates) if candidates else None
    if stored is not None and link_order != "auto" and stored.label_first != (link_order == "label-first"):
        stored.close()
        stored = None
    if check_later and stored is not None and not (link_order == "auto" and not stored.detected):
        exclude = tuple(exclude)
        worker = None
        n_stored = sum(len(chunk.paths) for chunk in stored.chunks)
        from_pages = CHECK_WORKER_MIN_PAGES if check_worker_from is None else check_worker_from
        if n_stored >= from_pages and _cores() > 1:
            worker = _CheckWorker.start(root, exclude, stored.chunks, stored.scan_ns)
        try:
            unchecked = _load_unchecked(root, stored, progress)
        finally:
            stored.close()
        if unchecked is None and worker is not None:
            worker.cancel()
        if unchecked is not None:
            unchecked._unchecked = (root, exclude, link_order, options, stored.chunks, stored.scan_ns, worker)
            unchecked.detected = link_order == "auto"
            unchecked.vault.set_vocabulary(load_vocabulary(root))
            return unchecked
        stored = open_cache(candidates)  # not usable as it is: the checked load below
    listing = list_pages(root, exclude, stats=options.enabled)
    label_first = link_order == "label-first" if stored is None or link_order != "auto" else stored.label_first
    # An automatic load trusts a stored order it detected itself; one a setting forced is checked.
    forced_before = link_order == "auto" and stored is not None and not stored.detected
    try:
        loaded = _load(root, listing, stored, candidates, label_first, scan_ns, progress, workers, forced_before, on_names)
        # Unchanged pages read as they did when stored: only a change can change the link order.
        if link_order == "auto" and loaded.changed and detect_label_first(loaded.vault) != label_first:
            # The vault reads the other way (a Dendron vault, or no longer one): parse it again so.
            loaded.discard()
            loaded = _load(root, listing, None, candidates, not label_first, scan_ns, progress, workers)
    finally:
        if stored is not None:
            stored.close()
    loaded.detected = link_order == "auto"
    loaded.vault.set_vocabulary(load_vocabulary(root))
    return loaded


def _stored_snapshot(stored: CacheFile, decoder: Decoder) -> dict[str, Any]:
    """The index snapshot of ``stored``, each single-index piece as a ``pathindex.Stored`` (read,
    checked against its tag and unmarshalled when first used; the ones every vault needs at
    once, by ``Vault.from_snapshot``)."""
    snapshot: dict[str, Any] = {}
    if LAZY_BODIES and decoder.bodies is None:
        decoder.bodies = stored.body_file()
    assert stored.snapshot is not None
    for piece, names in zip(stored.snapshot, stored.snapshot_names or [()] * len(stored.snapshot)):
        if LAZY_BODIES and len(names) == 1:
            read = functools.partial(decoder.bodies.read_piece, piece)  # type: ignore[union-attr]
            if names == (STORED_LINKS,):  # where every link resolves
                links = Stored(STORED_LINKS, kinds=("links",), read=read, size=piece.length)
                snapshot[STORED_LINKS] = ("links", links)
            else:
                snapshot[names[0]] = Stored(names[0], read=read, region=decoder.bodies, size=piece.length)
            continue
        blob = stored.read(piece)  # checked against its tag
        if names == (STORED_LINKS,):  # where every link resolves: unmarshalled on first need
            snapshot[STORED_LINKS] = ("links", blob)
        else:
            for name, entry in marshal.loads(blob).items():
                if isinstance(entry, tuple) and entry and entry[0] == SPLIT:  # its values read now
                    entry = ("ids", SplitValues.of(name, entry[1], stored.read_at).values(entry[1][1]))
                snapshot[name] = entry
    return snapshot


def _load_unchecked(root: str, stored: CacheFile, progress: Callable[[int, int], None] | None) -> LoadedVault | None:
    """Every page of ``stored`` with its index snapshot, as stored, before any file is listed
    (``load_vault(check_later=True)``); None when the file cannot serve so (no snapshot, a
    chunk without its manifest, a path stored twice, or damage found now)."""
    chunks = stored.chunks
    if stored.snapshot is None or any(chunk.listed is None for chunk in chunks):
        return None
    paths = [path for chunk in chunks for path in chunk.paths]
    if len(set(paths)) != len(paths):
        return None
    decoder = Decoder(root, stored.label_first)
    try:
        snapshot = _stored_snapshot(stored, decoder)
        pairs_all: Pairs = []
        for chunk in chunks:
            if LAZY_BODIES:  # records decoded when first used
                pairs, _region = decoder.lazy(stored, chunk)
            else:
                pairs, _records, _region = decoder.stored(stored, chunk)
            pairs_all.extend(pairs)
        vault = Vault.from_snapshot(pairs_all, snapshot, root, label_first=stored.label_first)
    except (CacheError, ValueError, TypeError, EOFError, IndexError, KeyError) as exc:
        log.info("vaultlens index not used as stored: %s", exc)
        return None
    del pairs_all
    decoder.done()
    if progress is not None:
        progress(len(paths), len(paths))
    listing = Listing(tuple(sorted(paths)), ())
    return LoadedVault(vault, listing, len(paths), 0, False, stored.path)


def compare_listing(root: str, exclude: Iterable[str], chunks: Sequence[Any], stored_scan_ns: int,
                    ) -> tuple[tuple[str, ...], bool, tuple[str, ...]]:
    """List the vault and compare it with stored ``chunks`` (``LoadedVault.check``): the pages to
    read again (changed, added, removed, excluded), sorted; whether the index differs from the
    files (those, or a stat to store again); the listing's warnings."""
    listing = list_pages(root, exclude, stats=True)
    _plans, seen, stale, duplicated, changed = _plan(root, listing.stats, chunks, stored_scan_ns, time.time_ns(), False)
    added = [path for path in listing.paths if path not in seen]
    return tuple(sorted({*stale, *added})), bool(changed or stale or added or duplicated), listing.warnings


def check_group(root: str, exclude: Sequence[str], stored: tuple[int, list[tuple[Any, ...]]], _label_first: bool = False,
                _positions: Any = None) -> tuple[tuple[str, ...], bool, tuple[str, ...]]:
    """``compare_listing`` in a worker process (``serve_worker``'s ``"check"``): ``stored`` is the
    scan time of the index and each chunk's manifest as its header holds it (``Listed.stored``)."""
    stored_scan_ns, manifests = stored
    chunks = [Chunk(0, 0, b"", Listed(*manifest)) for manifest in manifests]
    return compare_listing(root, exclude, chunks, stored_scan_ns)


def _feed(proc: subprocess.Popen, request: bytes) -> None:
    """Write ``request`` to the worker ``proc``, framed, and close its input."""
    try:
        proc.stdin.write(len(request).to_bytes(8, "little") + request)  # type: ignore[union-attr]
        proc.stdin.close()  # type: ignore[union-attr]
    except (OSError, ValueError) as exc:
        log.info("listing check worker unavailable: %s", exc)


class _CheckWorker:
    """``compare_listing`` in a worker process of its own, started as soon as the index's header
    is read (``load_vault(check_later=True)``), so the listing runs on another core while this
    process loads and answers; ``result`` waits for it (the caller's thread only waits)."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc

    @classmethod
    def start(cls, root: str, exclude: Sequence[str], chunks: Sequence[Any], stored_scan_ns: int) -> _CheckWorker | None:
        """The worker, started with its request; None when it cannot start."""
        try:
            request = marshal.dumps((root, tuple(exclude), (stored_scan_ns, [chunk.listed.stored() for chunk in chunks]),
                                     False, None, "check", schema_version()), MARSHAL_VERSION)
            proc = subprocess.Popen([sys.executable, "-I", "-c", _WORKER_CODE], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=None, close_fds=True)
        except (OSError, ValueError, AttributeError) as exc:
            log.info("listing check worker unavailable: %s", exc)
            return None
        # Fed from a thread: the request (the manifest, megabytes at 100,000 pages) fills the pipe
        # long before the worker has started and reads it, and the load would wait (~0.1 s).
        # A failed write leaves the worker without its request: ``result`` is then None.
        threading.Thread(target=_feed, args=(proc, request), name="vaultlens-check-feed", daemon=True).start()
        return cls(proc)

    def result(self) -> tuple[tuple[str, ...], bool, tuple[str, ...]] | None:
        """``compare_listing``'s answer, or None when the worker failed (then check in-process)."""
        proc = self.proc
        try:
            head = proc.stdout.read(8)  # type: ignore[union-attr]
            reply = marshal.loads(proc.stdout.read(int.from_bytes(head, "little")))  # type: ignore[union-attr]
        except (OSError, ValueError, EOFError, TypeError) as exc:
            log.warning("listing check worker %s failed: %s", proc.pid, exc)
            return None
        finally:
            self.cancel()
        if not reply[0]:
            log.warning("listing check worker %s: %s", proc.pid, reply[1])
            return None
        changed, differs, warnings = reply[1:]
        return tuple(changed), bool(differs), tuple(warnings)

    def cancel(self) -> None:
        """End the worker (done, or no longer wanted)."""
        try:
            self.proc.stdout.close()  # type: ignore[union-attr]
        except OSError:
            pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def __del__(self) -> None:  # a load dropped unchecked: no worker left writing to a pipe nobody reads
        try:
            self.cancel()
        except Exception:  # noqa: BLE001 - at interpreter exit anything may be gone
            pass


def _plan(root: str, stats: dict[str, tuple[int, int, int, int]], chunks: Sequence[Any], stored_scan_ns: int,
          scan_ns: int, changed: bool) -> tuple[list[tuple[Any, list[int], Any]], set[str], list[str], bool, bool]:
    """Which stored pages still match their files (``stats``: the listing's): per chunk, its
    valid positions and their manifest; the paths kept, the stale ones (changed or gone),
    whether a path is stored twice, and whether the index must be stored again (``changed``
    on entry, or a stat to update)."""
    plans: list[tuple[Any, list[int], Any]] = []  # (chunk, valid positions, their manifest)
    seen: set[str] = set()
    stale: list[str] = []  # stored pages whose file changed or is gone
    duplicated = False
    for chunk in chunks:
        listed = chunk.listed
        if listed is not None and listed.newest < stored_scan_ns - RACY_NS:
            # The common case, a chunk whose every file is as stored and none racy: its stats
            # compared as bytes, with no tuple per page (its manifest is kept as it is).
            if listed_stats(stats, listed.paths) == listed.stats and seen.isdisjoint(listed.paths):
                seen.update(listed.paths)
                plans.append((chunk, list(range(len(listed))), listed))
                continue
        keep: list[int] = []
        manifest = []
        for i, (path, size, mtime_ns, ctime_ns, inode, digest) in enumerate(chunk.manifest):
            now = stats.get(path)
            if path in seen:
                duplicated = True
                continue
            valid = now is not None and now[0] == size
            # git's rule: trusted by stat only when size, mtime, ctime and inode all match and the
            # file's mtime is not within RACY_NS of the scan that stored it (git's racy rule); else hashed.
            same_stat = valid and now[1:] == (mtime_ns, ctime_ns, inode)  # type: ignore[index]
            if valid and (not same_stat or mtime_ns >= stored_scan_ns - RACY_NS):
                valid = _same_content(root, path, digest, size)
                # Store the new stat, or a scan time after which this entry is trusted by stat.
                changed = changed or not same_stat or now[1] < scan_ns - RACY_NS  # type: ignore[index]
            if not valid:
                stale.append(path)
                continue
            seen.add(path)
            keep.append(i)
            manifest.append((path, *now, digest))  # type: ignore[misc]
        plans.append((chunk, keep, tuple(manifest)))
    return plans, seen, stale, duplicated, changed


def _load(root: str, listing: Listing, stored: CacheFile | None, candidates: list[str], label_first: bool,
          scan_ns: int, progress: Callable[[int, int], None] | None, workers: int | None,
          rewrite: bool = False, on_names: Callable[[Vault], None] | None = None) -> LoadedVault:
    """``load_vault`` in one link order; ``rewrite``: store the index again even if no page
    changed (``LoadedVault.changed`` is then true); ``on_names``: ``load_vault``'s."""
    stats = listing.stats
    total = len(listing.paths)
    done = 0
    decoder = Decoder(root, label_first)
    decode = decoder.records

    def advance(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(min(done, total), total)

    # Which stored pages still match their files: one stat each (taken by list_pages).
    plans, seen, stale, duplicated, changed = _plan(root, stats, stored.chunks if stored is not None else (),
                                                    stored.scan_ns if stored is not None else 0, scan_ns,
                                                    stored is None or rewrite)
    to_parse = [p for p in listing.paths if p not in seen]
    changed = changed or bool(stale) or bool(to_parse)
    writer = CacheWriter.create(candidates) if changed and candidates else None

    vault: Vault | None = None
    if stored is not None and stored.snapshot is not None and not duplicated and len(stale) + len(to_parse) <= len(seen):
        # Mostly unchanged: the stored pages and index snapshot as they are, then page by page
        # updates for what changed (each costs that page only).
        try:
            snapshot = _stored_snapshot(stored, decoder)
            pairs_all: Pairs = []
            for chunk, keep, manifest in plans:
                if LAZY_BODIES:  # records decoded when first used
                    pairs, region = decoder.lazy(stored, chunk)
                else:
                    pairs, _records, region = decoder.stored(stored, chunk)
                pairs_all.extend(pairs)
                if writer is not None and keep:
                    whole = len(keep) == len(pairs)
                    if whole:
                        blob = stored.chunk_bytes(chunk, decoder.raw)
                    else:
                        blob = rechunk(decoder.stored_records(region, keep), region)
                    writer.add(blob, manifest)
                advance(len(keep))
            vault = Vault.from_snapshot(pairs_all, snapshot, root, label_first=label_first)
            del pairs_all
            for path in stale:
                vault.remove(path)
        except (CacheError, ValueError, TypeError, EOFError, IndexError, KeyError) as exc:
            log.info("vaultlens index not used: %s", exc)
            vault = None
            done = 0
            changed = True  # whatever happens next, the file is to be replaced
            if writer is not None:
                writer.abort()
            writer = CacheWriter.create(candidates) if candidates else None
    if vault is not None:
        for records_blob, _part, manifest, n in parse_groups(root, to_parse, stats, label_first, workers):
            for page, fields in decode(records_blob)[0]:
                vault.upsert(page, fields)
            if writer is not None and manifest:
                writer.add(records_blob, manifest)
            advance(n)
        from_cache = len(seen)
        parsed = len(to_parse)
    else:
        # Cold (or mostly changed, or a stored file without a usable snapshot): parse everything
        # not reusable and build the indexes in bulk, each group merged as it arrives and dropped.
        counts = {"from_cache": 0, "parsed": 0}
        if writer is None and candidates and stored is not None:
            changed = True  # the stored file could not be used as it is: replace it
            writer = CacheWriter.create(candidates)

        # Every part's search postings are positions in one path table, the listing's (kept
        # packed so in the vault and in the snapshot), so workers send a few bytes a path.
        table = listing.paths
        position = positions(table)
        slow = _slow_bodies()
        started: list[subprocess.Popen] | None = None
        named: dict[str, PageFields] = {}  # the names vault's fields, while the full vault is built
        if on_names is not None:
            unread = len(table) - (0 if duplicated else sum(len(keep) for _chunk, keep, _manifest in plans))
            if unread >= NAMES_MIN_PAGES or slow:
                started = start_workers(unread, workers)  # they start up while the names are read
                try:
                    early = names_vault(root, listing, label_first, workers, started)
                    named = early.fields  # what the full pages share of it (``share_names``)
                    on_names(early)
                    del early
                except Exception:  # noqa: BLE001 - the names come first to save time, and the full load follows anyway
                    log.exception("the names pass of %s failed", root)

        def groups() -> Iterator[tuple[Pairs, dict[str, Any]]]:
            reused: set[str] = set()
            for chunk, keep, manifest in plans if not duplicated else ():
                if not keep:
                    continue
                try:
                    pairs, records, region = decoder.stored(stored, chunk, keep)  # type: ignore[arg-type]
                    part = index_part(pairs, position)
                except (CacheError, ValueError, TypeError, EOFError, IndexError, KeyError) as exc:
                    log.info("vaultlens index chunk not used: %s", exc)
                    continue
                if writer is not None:
                    whole = len(keep) == len(chunk.manifest)
                    writer.add(stored.chunk_bytes(chunk, decoder.raw) if whole else rechunk(records, region), manifest)
                reused.update(page.path for page, _ in pairs)
                counts["from_cache"] += len(pairs)
                advance(len(pairs))
                yield pairs, part
            rest = [p for p in listing.paths if p not in reused]
            counts["parsed"] = len(rest)
            for records_blob, part, manifest, n in parse_groups(root, rest, stats, label_first, workers, position,
                                                                started):
                if slow:
                    time.sleep(slow)
                base = writer.add(records_blob, manifest) if writer is not None and manifest else None
                pairs = decoder.written(records_blob, writer, base)  # bodies left in the written file
                del records_blob
                if named:
                    share_names(pairs, named)
                advance(n)
                yield pairs, part

        vault = Vault.from_parts(groups(), root, label_first=label_first, table=table)
        named = {}
        from_cache, parsed = counts["from_cache"], counts["parsed"]
    if parsed:
        release_free_memory()  # what parsing left free, before the snapshot's pieces are made
    if writer is not None:
        try:
            # piece by piece: one index's marshalled bytes at a time, not all of them at once
            for piece in vault.snapshot_pieces():
                writer.add_piece(piece)
        except ValueError as exc:  # an index marshal cannot write: store the pages only
            log.info("vaultlens index snapshot not stored: %s", exc)
        release_free_memory()  # and what the pieces left
    decoder.done()
    return LoadedVault(vault, listing, from_cache, parsed, changed, stored.path if stored else None, writer, scan_ns)


def names_vault(root: str, listing: Listing, label_first: bool, workers: int | None = None,
                started: list[subprocess.Popen] | None = None) -> Vault:
    """The names vault of a listed vault (``engine.names``): every page by its frontmatter's
    names alone, indexed as a vault of pages without bodies (by the ``started`` workers, left
    running, or as ``parse_groups`` would); the vault's vocabulary read too."""
    decoder = Decoder(root, label_first)
    position = positions(listing.paths)
    parts = ((decoder.plain(records), part)
             for records, part, _manifest, _n in parse_groups(root, listing.paths, listing.stats, label_first, workers,
                                                          position, started, names=True))
    vault = Vault.from_parts(parts, root, label_first=label_first, table=listing.paths)
    vault.set_vocabulary(load_vocabulary(root))
    return vault


_NAMED_FIELDS = ("title_tokens", "title_set", "alias_tokens", "alias_set", "path_tokens", "file_tokens", "leaf_tokens")
_NAMED_SLOTS = tuple((name, PageFields.__dict__[name].__get__, PageFields.__dict__[name].__set__) for name in _NAMED_FIELDS)


def share_names(pairs: Pairs, named: dict[str, PageFields]) -> None:
    """Give the full pages' fields the names vault's objects for the values they hold alike
    (title, alias, path and file-name tokens), in place: the names vault is live until the full
    vault replaces it, so equal values made twice would be held twice until then, and the
    full vault's own copies are freed at once instead (~700 bytes a page)."""
    for page, fields in pairs:
        early = named.get(page.path)
        if early is None or type(fields) is not PageFields:
            continue
        for _name, get, put in _NAMED_SLOTS:
            mine, theirs = get(fields), get(early)
            if mine is not theirs and mine == theirs:
                put(fields, theirs)


def _slow_bodies() -> float:
    """``VAULTLENS_TEST_SLOW_BODIES`` (tests only): seconds to hold back each group of bodies."""
    try:
        return max(0.0, float(os.environ.get(ENV_SLOW_BODIES, "") or 0))
    except ValueError:
        return 0.0


def release_free_memory() -> None:
    """Hand the heap's free memory back to the system (glibc's ``malloc_trim``; elsewhere a
    no-op). A cold load leaves tens of MB free inside the heap, in blocks the allocator keeps:
    the process would hold them, unused, for as long as it runs."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.lru_cache(maxsize=1)
def _malloc_trim():
    libc = _glibc()
    return libc.malloc_trim if libc is not None else None


@functools.lru_cache(maxsize=1)
def _glibc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        libc.malloc_trim  # noqa: B018 - glibc's, not musl's (which has none)
        return libc
    except (OSError, AttributeError):
        return None


_M_ARENA_MAX = -8  # glibc malloc.h


def single_malloc_arena() -> bool:
    """Have glibc's malloc serve every thread from one heap (``MALLOC_ARENA_MAX=1``), for a
    process that loads its vault in a thread and then serves it from another: the vault's
    objects made in the loading thread otherwise live in a heap of their own, and the two
    heaps' free space is held apart (~5 MB at 10,000 pages). Call before starting threads;
    False where there is no glibc (elsewhere nothing changes)."""
    libc = _glibc()
    if libc is None or "MALLOC_ARENA_MAX" in os.environ:  # the user's own setting stands
        return False
    try:
        return bool(libc.mallopt(_M_ARENA_MAX, 1))
    except AttributeError:
        return False


def _same_content(root: str, rel: str, digest: bytes, size: int = -1) -> bool:
    try:
        return content_hash(_read_listed(root, rel, size)) == digest
    except OSError:
        return False


def open_vault(
    root: str, *, exclude: Iterable[str] = (), link_order: str = "auto", cache: CacheOptions | None = None
) -> tuple[Vault, Listing]:
    """Read a whole vault from disk (``load_vault``) and store its index at once."""
    loaded = load_vault(root, exclude=exclude, link_order=link_order, cache=cache)
    loaded.commit()
    return loaded.vault, loaded.listing


def detect_label_first(vault: Vault) -> bool:
    """Whether piped links read as ``[[label|target]]`` resolve clearly more often (Dendron).

    Counts the piped links where only one side resolves: labels often repeat a title, so links
    where both sides resolve say nothing about the order. The answer is about the vault, not
    about how it was parsed: a vault parsed label-first (a stored index) holds each link's two
    sides the other way round, and gets the same answer as one parsed target-first.
    """
    only_left = only_right = 0
    resolve = vault.resolve_memoised  # the link index built next resolves the same targets: once
    for path in vault.sorted_paths():
        for target, label in piped_links(vault.pages[path]):
            parsed = _link_name(target)  # the side this parse links to: resolved again next
            other = _link_name(label)
            held = parsed and resolve(parsed, path, "wiki").path is not None
            named = bool(other) and vault.resolve(other, path).path is not None
            left, right = (named, held) if vault.label_first else (held, named)  # [[left|right]]
            if left and not right:
                only_left += 1
            elif right and not left:
                only_right += 1
    return only_right > 2 * only_left and only_right >= 3


def _link_name(side: str) -> str:
    """One side of ``[[a|b]]`` as the page name it would link to (no anchor, no Dendron vault)."""
    side = side.split("#", 1)[0]
    if side.startswith("dendron://"):
        side = side[len("dendron://") :].split("/", 1)[-1]
    return side.strip()


def file_mtime(root: str, rel: str) -> float | None:
    """A page file's modification time (seconds since the epoch), None when it cannot be read."""
    try:
        return os.stat(os.path.join(root, rel)).st_mtime
    except OSError:
        return None
