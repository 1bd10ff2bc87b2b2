"""The persistent index: parsed pages kept on disk, so a warm start reads one file, not every page.

One file per vault (in the user cache folder by default, ``~/.cache/vaultlens/<name>-<hash>.vlc``
on Linux; ``<vault>/.vaultlens/index.vlc`` with ``location="vault"``) holds chunks of page records
(``engine.compact``), a snapshot of the vault's indexes over exactly those pages
(``Vault.snapshot``), and a footer header naming, for every page, the ``(path, size, mtime_ns,
content hash)`` it was parsed from.
A page is reused when its file's size and mtime are unchanged, which takes one ``stat`` and no
read; a file touched within ``RACY_NS`` of the scan that cached it is read and hashed instead
(git's "racy clean" rule), and a changed mtime with the same content hash is reused too.

- Versioned: the header carries ``compact.schema_version()``; any other version is ignored.
- Crash-safe: written to a temporary file, fsynced, then ``os.replace``d over the old one; every
  chunk and the header carry a CRC-32, and a file that fails any check is ignored and rebuilt.
- Never the only copy of anything: deleting it costs one cold start.
- Off with ``VAULTLENS_CACHE=0`` (or the CLI's ``--no-cache``, the server's ``cache.enabled``);
  ``VAULTLENS_CACHE_DIR`` (or ``cache.location``) moves it. Not in the vault by default: vaults
  are synced and versioned, and some are read-only. A location that cannot be written falls back
  to the user cache folder, then to no cache.

Only this module and ``scan`` touch the disk.
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import os
import struct
import sys
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass
from typing import Any

from .compact import MARSHAL_VERSION, schema_version

log = logging.getLogger("vaultlens")

CACHE_DIRNAME = ".vaultlens"
CACHE_FILE = "index.vlc"
MAGIC = b"VLCACHE1"
_TRAILER = struct.Struct("<QII8s")  # header offset, header length, header CRC-32, MAGIC
RACY_NS = 2_000_000_000  # files modified this close to a scan are checked by content
ENV_ENABLED = "VAULTLENS_CACHE"
ENV_DIR = "VAULTLENS_CACHE_DIR"
_OFF = ("0", "off", "false", "no", "disabled")


@dataclass(frozen=True)
class CacheOptions:
    """Where the persistent index lives and whether to use it.

    ``location`` is ``"user"`` (the user cache folder, one file per vault), ``"vault"``
    (``<vault>/.vaultlens/``) or a folder path (one file per vault).
    """

    enabled: bool = True
    location: str = "user"

    @classmethod
    def from_env(cls, enabled: bool = True, location: str = "user") -> CacheOptions:
        """These options with ``VAULTLENS_CACHE`` / ``VAULTLENS_CACHE_DIR`` applied on top."""
        flag = os.environ.get(ENV_ENABLED, "").strip().lower()
        if flag in _OFF:
            enabled = False
        folder = os.environ.get(ENV_DIR, "").strip()
        if folder:
            location = folder
        return cls(enabled, location or "user")


def user_cache_dir() -> str:
    """The per-user cache folder for vaultlens (XDG on Linux, Library/Caches, LOCALAPPDATA)."""
    if sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Caches")
    elif os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "vaultlens")


def _per_vault_name(root: str) -> str:
    real = os.path.realpath(root)
    digest = hashlib.blake2b(real.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in os.path.basename(real))[:40]
    return f"{name or 'vault'}-{digest}.vlc"


def cache_paths(root: str, options: CacheOptions) -> list[str]:
    """Where the vault's index file may live, preferred first (empty when disabled)."""
    if not options.enabled:
        return []
    user = os.path.join(user_cache_dir(), _per_vault_name(root))
    if options.location == "vault":
        return [os.path.join(root, CACHE_DIRNAME, CACHE_FILE), user]
    if options.location == "user":
        return [user]
    return [os.path.join(os.path.abspath(os.path.expanduser(options.location)), _per_vault_name(root)), user]


def content_hash(data: bytes) -> bytes:
    """The content key of a page file: 16 bytes of BLAKE2b."""
    return hashlib.blake2b(data, digest_size=16).digest()


def _pread(fd: int, length: int, offset: int) -> bytes:
    """``length`` bytes at ``offset`` (``os.pread`` where it exists; Windows has none)."""
    if hasattr(os, "pread"):
        return os.pread(fd, length, offset)
    with _SEEK_LOCK:
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, length)


_SEEK_LOCK = threading.Lock()


class CacheError(Exception):
    """The index file is missing, of another version, or damaged: it is ignored."""


@dataclass(frozen=True)
class Chunk:
    """One stored group of pages: where its bytes are and what each page was parsed from.

    ``manifest`` holds ``(path, size, mtime_ns, content hash)`` per page, in record order.
    """

    offset: int
    length: int
    crc: int
    manifest: tuple[tuple[str, int, int, bytes], ...]


class CacheFile:
    """An open index file of the current schema (``open`` raises CacheError otherwise)."""

    def __init__(self, path: str, fd: int, header: dict[str, Any]) -> None:
        self.path = path
        self._fd = fd
        self.label_first: bool = bool(header["label_first"])
        self.detected: bool = bool(header.get("detected"))  # link order found by detection, not forced
        self.scan_ns: int = int(header["scan_ns"])
        self.chunks: list[Chunk] = [Chunk(*c) for c in header["chunks"]]
        # the index snapshot, in pieces (marshalled one at a time: ``Vault.snapshot_pieces``)
        pieces = header.get("snapshot")
        self.snapshot: list[Chunk] | None = [Chunk(*piece, ()) for piece in pieces] if pieces else None

    @classmethod
    def open(cls, path: str) -> CacheFile:
        """Open and check ``path``: magic, trailer, header CRC and schema version."""
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except OSError as exc:
            raise CacheError(f"cannot open: {exc.strerror or exc}") from None
        try:
            size = os.fstat(fd).st_size
            if size < len(MAGIC) + _TRAILER.size:
                raise CacheError("too short")
            offset, length, crc, magic = _TRAILER.unpack(_pread(fd, _TRAILER.size, size - _TRAILER.size))
            if magic != MAGIC or _pread(fd, len(MAGIC), 0) != MAGIC:
                raise CacheError("not a vaultlens index")
            if offset + length > size - _TRAILER.size:
                raise CacheError("header out of range")
            raw = _pread(fd, length, offset)
            if len(raw) != length or zlib.crc32(raw) != crc:
                raise CacheError("header checksum mismatch")
            header = marshal.loads(raw)
            if not isinstance(header, dict) or header.get("schema") != schema_version():
                raise CacheError("written by another version")
            cache = cls(path, fd, header)
            for chunk in (*cache.chunks, *(cache.snapshot or ())):
                if chunk.offset + chunk.length > offset:
                    raise CacheError("chunk out of range")
            return cache
        except CacheError:
            os.close(fd)
            raise
        except (OSError, ValueError, EOFError, TypeError, KeyError, struct.error) as exc:
            os.close(fd)
            raise CacheError(f"unreadable: {exc}") from None

    def read(self, chunk: Chunk) -> bytes:
        """A chunk's bytes, checked against its CRC-32."""
        try:
            raw = _pread(self._fd, chunk.length, chunk.offset)
        except OSError as exc:
            raise CacheError(f"cannot read: {exc.strerror or exc}") from None
        if len(raw) != chunk.length or zlib.crc32(raw) != chunk.crc:
            raise CacheError("chunk checksum mismatch")
        return raw

    def close(self) -> None:
        """Release the file."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class CacheWriter:
    """A new index file, written to a temporary name and renamed over the old one on commit."""

    def __init__(self, path: str) -> None:
        folder = os.path.dirname(path)
        os.makedirs(folder, exist_ok=True)
        if os.path.basename(folder) == CACHE_DIRNAME:
            _ignore_in_git(folder)
        _sweep(folder)
        fd, self._tmp = tempfile.mkstemp(prefix=_TMP_PREFIX, suffix=".tmp", dir=folder)
        self.path = path
        self._file = os.fdopen(fd, "wb")
        self._file.write(MAGIC)
        self._offset = len(MAGIC)
        self._chunks: list[tuple[int, int, int, tuple[Any, ...]]] = []
        self._snapshot: list[tuple[int, int, int]] = []

    @classmethod
    def create(cls, candidates: list[str]) -> CacheWriter | None:
        """A writer at the first candidate path that can be written, else None."""
        for path in candidates:
            try:
                return cls(path)
            except OSError as exc:
                log.info("vaultlens index: cannot write %s (%s)", path, exc.strerror or exc)
        return None

    def add(self, blob: bytes, manifest: tuple[tuple[str, int, int, bytes], ...]) -> None:
        """Append one chunk of page records."""
        self._file.write(blob)
        self._chunks.append((self._offset, len(blob), zlib.crc32(blob), manifest))
        self._offset += len(blob)

    def add_snapshot(self, blob: bytes) -> None:
        """Append a piece of the index snapshot (together, over every page of every chunk)."""
        self._file.write(blob)
        self._snapshot.append((self._offset, len(blob), zlib.crc32(blob)))
        self._offset += len(blob)

    def commit(self, *, label_first: bool, scan_ns: int, detected: bool = True) -> str:
        """Finish the file and put it in place; returns its path. ``detected``: whether the link
        order was detected (an automatic load), not forced by a setting."""
        header = marshal.dumps(
            {"schema": schema_version(), "label_first": label_first, "detected": detected, "scan_ns": scan_ns,
             "chunks": self._chunks, "snapshot": self._snapshot or None},
            MARSHAL_VERSION,
        )
        self._file.write(header)
        self._file.write(_TRAILER.pack(self._offset, len(header), zlib.crc32(header), MAGIC))
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        os.replace(self._tmp, self.path)
        return self.path

    def abort(self) -> None:
        """Drop the unfinished file."""
        if self._file.closed and not os.path.exists(self._tmp):
            return
        try:
            self._file.close()
        finally:
            try:
                os.unlink(self._tmp)
            except OSError:
                pass

    def __del__(self) -> None:  # never leave a half-written file behind
        try:
            if not self._file.closed:
                self.abort()
        except Exception:  # noqa: BLE001 - at interpreter exit anything may be gone
            pass


def open_cache(candidates: list[str]) -> CacheFile | None:
    """The newest valid index file among the candidates, else None (reasons logged)."""
    best: CacheFile | None = None
    for path in candidates:
        if not os.path.exists(path):
            continue
        try:
            found = CacheFile.open(path)
        except CacheError as exc:
            log.info("vaultlens index %s ignored: %s", path, exc)
            continue
        if best is None or found.scan_ns > best.scan_ns:
            if best is not None:
                best.close()
            best = found
        else:
            found.close()
    return best


_TMP_PREFIX = ".index-"
_STALE_TMP_SECONDS = 3600


def _sweep(folder: str) -> None:
    """Remove unfinished index files that a killed process left over an hour ago."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    old = time.time() - _STALE_TMP_SECONDS
    for name in names:
        if name.startswith(_TMP_PREFIX) and name.endswith(".tmp"):
            full = os.path.join(folder, name)
            try:
                if os.stat(full).st_mtime < old:
                    os.unlink(full)
            except OSError:
                pass


def _ignore_in_git(folder: str) -> None:
    """Keep the cache folder out of version control (as pytest does for .pytest_cache)."""
    marker = os.path.join(folder, ".gitignore")
    if not os.path.exists(marker):
        try:
            with open(marker, "w", encoding="utf-8") as fh:
                fh.write("# Created by vaultlens: its persistent index, safe to delete.\n*\n")
        except OSError:
            pass
