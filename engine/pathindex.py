"""PathIndex: key -> the pages filed under it, compact, changed one path at a time.

Every key -> pages index of a vault (its search postings, its link names, its tags) is one:
read-only tuples of paths (build a ``set`` where set algebra is needed), a quarter of the
memory of a set per key at 10,000 pages.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import logging
import marshal
import sys
import threading
from array import array
from collections.abc import Callable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

log = logging.getLogger("vaultlens")


class PathIndex(Mapping[str, tuple[str, ...]]):
    """key -> the paths filed under it, as a tuple; only keys with at least one path exist.

    What it holds: ``_tuples`` (a key's paths as one tuple, 8 bytes a path: a set costs 30-60)
    and, per key changed since, the paths ``_plus`` filed and ``_minus`` unfiled. ``add`` and
    ``discard`` cost O(1); nothing is quadratic when many pages change between reads. Reading
    never changes what it holds.

    ``_folded`` is a memo of reads: for a key with pending changes, the tuple a read computed
    (O(its paths), once). Its invalidation rule: the next write (``add``, ``discard``,
    ``settled``) first makes every memoised tuple the key's tuple and drops that key's pending
    changes (the tuple already includes them), so an entry is always exact and lives from a
    read to the next write. The order of a tuple carries no meaning.
    """

    __slots__ = ("_tuples", "_plus", "_minus", "_folded", "_table", "_code", "_split")

    def __init__(self, tuples: dict[str, tuple[str, ...]] | None = None) -> None:
        self._tuples: dict[str, Any] = tuples if tuples is not None else {}
        self._plus: dict[str, set[str]] = {}  # paths filed since the key's tuple was made
        self._minus: dict[str, set[str]] = {}  # paths of the key's tuple no longer filed
        self._folded: dict[str, tuple[str, ...]] = {}  # the memo of reads (see above)
        # Packed keys (``packed``/``from_packed``): a key's tuple may instead be ``bytes`` of
        # positions in ``_table`` (array typecode ``_code``), made a tuple on its first read.
        self._table: tuple[str, ...] = ()
        self._code = "I"
        # A split entry (``SplitValues``): a key's value may instead be an ``int``, its place in
        # the index file, read, checked and unpacked on its first read.
        self._split: SplitValues | None = None

    @classmethod
    def from_packed(cls, packed: dict[str, bytes], table: tuple[str, ...]) -> PathIndex:
        """An index of what ``packed(table)`` wrote: each key's paths stay positions in
        ``table`` (2 or 4 bytes a path instead of 8, and one ``bytes`` to unmarshal instead of
        a tuple to build) until the key is first read."""
        index = cls(packed)  # type: ignore[arg-type]
        index._table = table
        index._code = _code(len(table))
        return index

    @classmethod
    def from_split(cls, places: dict[str, int], table: tuple[str, ...], split: SplitValues) -> PathIndex:
        """An index of a split entry (``SplitValues``): each key's positions in ``table`` are
        read from the index file on its first read."""
        index = cls.from_packed(places, table)  # type: ignore[arg-type]
        index._split = split
        return index

    def packed(self, table: tuple[str, ...], position: dict[str, bytes], *, adopt: bool = False) -> dict[str, bytes]:
        """Every key's paths as ``bytes`` of positions in ``table`` (``position``: path -> its
        position as bytes, ``positions(table)``; it must hold every path filed here). Keys
        still packed against the same table are not touched. With ``adopt`` this index keeps
        the packed form too (its tuples are dropped; reads unpack a key again once)."""
        tuples = self._settle()
        code = _code(len(table))
        # positions in a table this one extends are positions in this one too
        # (an index never packed holds no positions at all)
        same = not self._table or self._table is table or (
            self._code == code and self._table == table[: len(self._table)]
        )
        old = PathIndex.from_packed({}, self._table) if not same else self
        if adopt and same:
            self._table, self._code = table, code
        get, join = position.__getitem__, b"".join
        out: dict[str, bytes] = {}
        for key, paths in tuples.items():
            if type(paths) is int:  # still in the index file: read (and left there: no adopting)
                paths = self._stored(key, paths)
            if type(paths) is bytes:
                if same:
                    out[key] = paths
                    continue
                paths = old._unpacked(paths)
            blob = out[key] = join(map(get, paths))  # (a join of ready bytes: quicker than an array of ints)
            if adopt and same:  # one key at a time: its tuple is freed as its bytes are made
                tuples[key] = blob
        if adopt and not same:
            self._table, self._code = table, code
            tuples.update(out)
        return out

    def _unpacked(self, blob: bytes) -> tuple[str, ...]:
        ids = array(self._code, blob)
        if _SWAP:
            ids.byteswap()
        return tuple(map(self._table.__getitem__, ids))

    def _tuple(self, key: str) -> tuple[str, ...]:
        """``_tuples[key]`` as a tuple (unpacked and kept, when packed or still stored); ()
        when absent."""
        found = self._tuples.get(key, ())
        if type(found) is int:
            found = self._stored(key, found)
        if type(found) is bytes:
            found = self._tuples[key] = self._unpacked(found)
        return found

    def _stored(self, key: str, place: int) -> bytes | tuple[str, ...]:
        """The value of ``key`` still in the index file (``place`` in its split entry): its
        packed bytes, checked against their digest; when they do not match, the whole index is
        made again first (``_repair``) and the key's value is what that made."""
        split = self._split
        if split is not None:
            data = split.value(place)
            if data is not None:
                return data
            self._repair(split)
        found = self._tuples.get(key, ())
        return () if type(found) is int else found

    def _repair(self, split: SplitValues) -> None:
        """A stored value did not match its digest: every key's value made again from the
        vault's pages (``Stored.rebuild``), less what was filed and plus what was unfiled since
        (the pending changes stay as they are, so every read gives what it gave before)."""
        with _DEFER_LOCK:
            if self._split is not split:
                return  # repaired by another reader meanwhile
            if split.rebuild is None:
                raise ValueError(f"index snapshot entry {split.name!r}: a stored value is damaged")
            _kind, now = split.rebuild(split.name)
            plus, minus = self._plus, self._minus
            base: dict[str, Any] = {}
            for key, paths in now.items():
                if key in plus:
                    paths = tuple([p for p in paths if p not in plus[key]])
                if key in minus:
                    paths += tuple(sorted(minus[key]))
                if paths:
                    base[key] = paths
            for key, gone in minus.items():  # every stored path of the key unfiled since
                if key not in now:
                    base[key] = tuple(sorted(gone))
            self._tuples = base
            self._split = None

    @classmethod
    def deferred(cls, stored: Stored, table: tuple[str, ...]) -> PathIndex:
        """An index of a snapshot entry still as stored (``Stored``: ``packed`` ids against
        ``table``, or ``paths``), unmarshalled when the index is first used: a warm start pays
        for the indexes its requests read, not for all of them (a search reads no link name,
        a link no body postings)."""
        index = cls.__new__(_Deferred)
        index._tuples = stored  # type: ignore[assignment]
        index._plus, index._minus, index._folded = {}, {}, {}
        index._table, index._code = table, _code(len(table))
        index._split = None
        return index

    def _load(self) -> None:
        """Nothing to do: a deferred index (``_Deferred``) becomes a plain one here."""

    def unread_bytes(self) -> int:
        """Bytes of the stored entry still to unmarshal before the first use (``deferred``):
        0 once read, or for an index built in memory; what reading it ahead costs, roughly."""
        stored = self._tuples
        return stored.size if type(self) is _Deferred and isinstance(stored, Stored) else 0

    @classmethod
    def from_lists(cls, lists: dict[str, list[str]]) -> PathIndex:
        """An index holding ``lists`` (each list without repeats); empties ``lists`` as it goes,
        so a list and its tuple never both exist for long."""
        tuples: dict[str, tuple[str, ...]] = {}
        while lists:
            key, paths = lists.popitem()
            if paths:
                tuples[key] = tuple(paths)
        return cls(tuples)

    # --- writing -------------------------------------------------------------------------

    def _promote(self) -> None:
        """Make every memoised tuple its key's tuple (the write side of the memo's rule)."""
        tuples, plus, minus = self._tuples, self._plus, self._minus
        for key, paths in self._folded.items():
            plus.pop(key, None)
            minus.pop(key, None)
            if paths:
                tuples[key] = paths
            else:
                tuples.pop(key, None)
        self._folded.clear()

    def add(self, key: str, path: str) -> bool:
        """File ``path`` under ``key`` (it must not be filed there); True when the key is new."""
        if self._folded:
            self._promote()
        new = self.count(key) == 0
        minus = self._minus.get(key)
        if minus is not None and path in minus:
            minus.discard(path)
            if not minus:
                del self._minus[key]
        else:
            self._plus.setdefault(key, set()).add(path)
        return new

    def discard(self, key: str, path: str) -> bool:
        """Unfile ``path`` from ``key`` (it must be filed there); True when the key is now gone."""
        if self._folded:
            self._promote()
        plus = self._plus.get(key)
        if plus is not None and path in plus:
            plus.discard(path)
            if not plus:
                del self._plus[key]
        else:
            self._minus.setdefault(key, set()).add(path)
        return self.count(key) == 0

    def settled(self) -> dict[str, tuple[str, ...]]:
        """Every pending change folded into the tuples, and the key -> tuple dict itself (for a
        snapshot: read it, do not change it; a copy, with every value read, when some are still
        in the index file). A write: the contents stay the same."""
        tuples = self._settle()
        if self._split is None:
            return tuples
        return {key: self._stored(key, paths) if type(paths) is int else paths for key, paths in tuples.items()}

    def _settle(self) -> dict[str, Any]:
        for key in {*self._plus, *self._minus}:
            if key not in self._folded:
                self._folded[key] = self._fold(key)
        self._promote()
        return self._tuples

    # --- reading -------------------------------------------------------------------------

    def _fold(self, key: str) -> tuple[str, ...]:
        paths = self._tuple(key)
        minus = self._minus.get(key)
        plus = self._plus.get(key)
        if minus:
            paths = tuple([p for p in paths if p not in minus])
        if plus:
            paths += tuple(sorted(plus))
        return paths

    def count(self, key: str) -> int:
        """How many paths are filed under ``key`` (O(1))."""
        found = self._tuples.get(key, ())
        kind = type(found)
        if kind is int:
            n = self._split.length(found) // _SIZE[self._code] if self._split is not None else len(self._tuple(key))
        else:
            n = len(found) if kind is not bytes else len(found) // _SIZE[self._code]
        if key in self._minus:
            n -= len(self._minus[key])
        if key in self._plus:
            n += len(self._plus[key])
        return n

    def get(self, key: str, default=None):  # type: ignore[override]
        """The paths filed under ``key``, or ``default`` when there are none."""
        if key in self._plus or key in self._minus:
            found = self._folded.get(key)
            if found is None:
                found = self._folded[key] = self._fold(key)
            return found or default
        found = self._tuples.get(key, default)
        if type(found) is int:
            found = self._stored(key, found)
            if not found:  # none left once the index was made again
                return default
        if type(found) is bytes:
            found = self._tuples[key] = self._unpacked(found)
        return found

    def packed_keys(self) -> list[str]:
        """The keys whose paths are still packed or in the index file, in key order (``get``
        unpacks one and keeps it)."""
        return sorted(key for key, found in self._tuples.items() if type(found) is not tuple)

    def peek(self, key: str, default=None):  # noqa: ANN001, ANN201 - as ``get``
        """``get`` without keeping what it unpacks: for a reader that looks once and keeps its
        own answer (a key left packed or stored stays so, and costs no tuple)."""
        if key in self._plus or key in self._minus:
            return self.get(key, default)
        found = self._tuples.get(key, default)
        if type(found) is int:
            found = self._stored(key, found)
            if not found:
                return default
        if type(found) is bytes:
            found = self._unpacked(found)
        return found

    def __getitem__(self, key: str) -> tuple[str, ...]:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __contains__(self, key: object) -> bool:
        if key in self._plus or key in self._minus:
            return self.count(key) > 0  # type: ignore[arg-type]
        return key in self._tuples

    def _changed_keys(self) -> set[str]:
        return {*self._plus, *self._minus}

    def __iter__(self) -> Iterator[str]:
        if not self._plus and not self._minus:
            return iter(list(self._tuples))
        changed = self._changed_keys()
        keys = [k for k in self._tuples if k not in changed or self.count(k) > 0]
        keys.extend(k for k in self._plus if k not in self._tuples and self.count(k) > 0)
        return iter(keys)

    def __len__(self) -> int:
        n = len(self._tuples)
        for key in self._changed_keys() if self._plus or self._minus else ():
            n += (self.count(key) > 0) - (key in self._tuples)
        return n

    def __repr__(self) -> str:
        return f"PathIndex({dict(self.items())!r})"


_DEFER_LOCK = threading.RLock()
_PAUSE_LOCK = threading.Lock()
_paused = [0, False]  # how many ``collector_paused`` blocks run now; whether the collector ran before the first


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Run the block with the cyclic collector paused, then move what exists out of its sight
    (``gc.freeze``), as ``scan.load_vault`` does for a whole load.

    For a stored piece unmarshalled after the load (``Stored.value``, the resolved links): hundreds
    of thousands of objects that all live on, which the collector would otherwise walk again and
    again while they are made (at 100,000 pages the links piece took 2.7 s to unmarshal with it
    running, 0.5 s without). Blocks in several threads at once keep it paused until the last ends.
    """
    with _PAUSE_LOCK:
        if not _paused[0]:
            _paused[1] = gc.isenabled()
            gc.disable()
        _paused[0] += 1
    try:
        yield
    finally:
        with _PAUSE_LOCK:
            _paused[0] -= 1
            if not _paused[0]:
                gc.freeze()
                if _paused[1]:
                    gc.enable()


class _Deferred(PathIndex):
    """A ``PathIndex`` whose entry is still as stored (``PathIndex.deferred``): any use
    unmarshals it first (once, under a lock), then the object becomes a plain ``PathIndex``
    (its class is switched: the same object, so every holder of it sees the change, and no
    later call pays for the check)."""

    __slots__ = ()

    def _load(self) -> None:
        with _DEFER_LOCK:
            if type(self) is not _Deferred:
                return
            stored = self._tuples
            assert isinstance(stored, Stored)
            kind, value = stored.value()
            if kind == SPLIT:
                region = stored.region
                if region is None:
                    raise ValueError(f"index snapshot entry {stored.name!r}: a split entry without its file")
                self._split = SplitValues.of(stored.name, value, region.read, region.damaged, stored.rebuild)
                value = value[1]
            if not isinstance(value, dict):
                raise ValueError(f"index snapshot entry {stored.name!r} of another kind")
            self._tuples = value
            if kind not in ("ids", SPLIT):  # tuples of paths, not positions in the table
                self._table = ()
            self.__class__ = PathIndex


def _deferring(name: str) -> None:
    method = getattr(PathIndex, name)

    def run(self, *args, **kwargs):  # noqa: ANN001, ANN202
        self._load()
        return method(self, *args, **kwargs)

    run.__name__ = run.__qualname__ = name
    run.__doc__ = method.__doc__
    setattr(_Deferred, name, run)


for _name in ("packed", "_settle", "_unpacked", "_tuple", "add", "discard", "settled", "_fold", "count",
              "get", "peek", "packed_keys", "__getitem__",
              "__contains__", "__iter__", "__len__", "__repr__", "keys", "items", "values", "__eq__"):
    _deferring(_name)


class Stored:
    """One entry of an index snapshot as its piece was stored, unmarshalled on first need
    (``value``): the piece's bytes (``blob``, already checked against their tag), or ``read``,
    which reads them from the index file and checks them then (raising ValueError when they do
    not match). ``rebuild(name)``, when set, gives the entry computed again from the vault's
    pages instead of failing: a file damaged after the start is never believed."""

    __slots__ = ("name", "blob", "kinds", "read", "rebuild", "region", "size")

    def __init__(self, name: str, blob: bytes = b"", kinds: tuple[str, ...] = ("ids", "paths", "value"),
                 read: Any = None, region: Any = None, size: int = 0) -> None:
        self.name, self.blob, self.kinds, self.read = name, blob, kinds, read
        self.size = size or len(blob)  # the piece's bytes (``read``'s length, given by its caller)
        self.rebuild: Any = None
        # what reads the values of a split entry (``SplitValues``): ``read(offset, length)``
        # and ``damaged(what)``, the index file's (``cache.BodyFile``)
        self.region = region

    def value(self) -> tuple[str, Any]:
        """``(kind, value)`` of the entry; ValueError when the piece does not hold it (and
        nothing can rebuild it)."""
        blob, self.blob = self.blob, b""
        read, self.read = self.read, None
        try:
            if read is not None:
                blob = read()
            with collector_paused():
                found = marshal.loads(blob).get(self.name) if blob else None
            if not isinstance(found, tuple) or len(found) != 2 or found[0] not in self.kinds:
                raise ValueError(f"index snapshot without {self.name!r}")
        except (ValueError, EOFError, TypeError):
            if self.rebuild is None:
                raise
            return self.rebuild(self.name)
        return found


SPLIT = "split"  # the kind of an ``ids`` entry stored with its values out of line (``SplitValues``)
DIGEST = 16  # bytes of SHA-256 that check one out-of-line part (a split value, a page body)


def part_digest(data: bytes | memoryview) -> bytes:
    """What is stored to check one out-of-line part's bytes: 16 bytes of its SHA-256."""
    return hashlib.sha256(data).digest()[:DIGEST]


class SplitValues:
    """Where the values of a ``split`` entry lie in the index file, and how to read one.

    A large ``ids`` entry (the body postings: 80 MB at 100,000 pages, 48,000 keys) is stored
    split (``cache.CacheWriter.add_piece``): every key's packed positions one after another in
    a region of the file, then the tagged piece ``(base, places, starts, digests)``: ``places``
    key -> its place (0, 1, ...), ``starts`` where each place's bytes start in the region (one
    more: the end; unsigned 64-bit, little-endian), ``digests`` each place's ``part_digest``.
    A warm start unmarshals the keys alone; a key's bytes are read and checked when it is
    first read (a search reads a few keys), and are never used when they do not match.
    """

    __slots__ = ("name", "read", "damaged", "rebuild", "base", "starts", "digests")

    def __init__(self, name: str, read: Any, base: int, starts: bytes, digests: bytes,
                 damaged: Any = None, rebuild: Any = None) -> None:
        self.name, self.read, self.damaged, self.rebuild = name, read, damaged, rebuild
        self.base = base
        self.starts = array("Q", starts)
        if _SWAP:
            self.starts.byteswap()
        self.digests = digests

    @classmethod
    def of(cls, name: str, value: Any, read: Any, damaged: Any = None, rebuild: Any = None) -> SplitValues:
        """The values of the split entry ``value`` of snapshot entry ``name``, read by
        ``read(offset, length)``; ValueError when it is not one."""
        try:
            base, places, starts, digests = value
            split = cls(name, read, base, starts, digests, damaged, rebuild)
        except (TypeError, ValueError):
            raise ValueError(f"index snapshot entry {name!r}: a split entry of another layout") from None
        if not isinstance(places, dict) or len(split.starts) != len(places) + 1 or len(digests) != DIGEST * len(places):
            raise ValueError(f"index snapshot entry {name!r}: a split entry of another layout")
        return split

    def length(self, place: int) -> int:
        """How many bytes the value at ``place`` holds."""
        return self.starts[place + 1] - self.starts[place]

    def value(self, place: int) -> bytes | None:
        """The bytes at ``place``, checked against their digest; None (and the file reported
        damaged) when they do not match."""
        length = self.length(place)
        data = self.read(self.base + self.starts[place], length)
        if len(data) == length and part_digest(data) == self.digests[DIGEST * place : DIGEST * (place + 1)]:
            return data
        if self.damaged is not None:
            self.damaged(f"a value of the index snapshot piece {self.name!r} does not match its digest")
        return None

    def values(self, places: Mapping[str, int]) -> dict[str, bytes]:
        """Every key's bytes, checked (for a file read whole at load); ValueError when one does
        not match."""
        out = {}
        for key, place in places.items():
            data = self.value(place)
            if data is None:
                raise ValueError(f"index snapshot entry {self.name!r}: a stored value is damaged")
            out[key] = data
        return out


def split_entry(packed: Mapping[str, bytes]) -> tuple[dict[str, int], bytes, bytes]:
    """``places``, ``starts`` and ``digests`` of a split entry whose values, in ``packed``'s
    order, are written one after another (``SplitValues``)."""
    places: dict[str, int] = {}
    starts = array("Q", [0])
    digests = []
    end = 0
    for place, (key, blob) in enumerate(packed.items()):
        places[key] = place
        end += len(blob)
        starts.append(end)
        digests.append(part_digest(blob))
    if _SWAP:
        starts.byteswap()
    return places, starts.tobytes(), b"".join(digests)


_SIZE = {"H": 2, "I": 4}
_SWAP = sys.byteorder != "little"  # packed positions are stored little-endian


def positions(table: tuple[str, ...]) -> dict[str, bytes]:
    """Each path of ``table`` -> its position there as packed bytes (``PathIndex.packed``)."""
    width = _SIZE[_code(len(table))]
    return {path: i.to_bytes(width, "little") for i, path in enumerate(table)}


def unpacked(blob: bytes, table: tuple[str, ...]) -> tuple[str, ...]:
    """The paths whose positions in ``table`` ``blob`` holds, as one key of ``PathIndex.packed``
    (or a join of ``positions(table)``'s bytes) writes them."""
    return unpacker(table)(blob)


def unpacker(table: tuple[str, ...]) -> Callable[[bytes], tuple[str, ...]]:
    """``unpacked`` against ``table``, made once for many blobs."""
    code, get = _code(len(table)), table.__getitem__

    def unpack(blob: bytes) -> tuple[str, ...]:
        ids = array(code, blob)
        if _SWAP:
            ids.byteswap()
        return tuple(map(get, ids))

    return unpack


def _code(n_paths: int) -> str:
    return "H" if n_paths <= 0xFFFF else "I"


def move_keys(index: PathIndex, path: str, before: AbstractSet[str], after: AbstractSet[str]) -> bool:
    """File ``path`` under the keys of ``after`` instead of those of ``before``; False when
    they are the same keys (nothing to do)."""
    if before == after:
        return False
    for key in before - after:
        index.discard(key, path)
    for key in after - before:
        index.add(key, path)
    return True


def piece(snapshot: dict[str, Any], name: str, kind: str) -> Any:
    """The value of one entry of an index snapshot, ``{name: (kind, value)}`` (``paths`` for a
    PathIndex's tuples, ``value`` for plain data); ValueError when it is missing or of another
    kind, as for a snapshot of another vault layout."""
    found = snapshot.get(name)
    if isinstance(found, Stored):  # as stored: unmarshalled here
        found.kinds = (kind,)
        found = found.value()
    if not isinstance(found, tuple) or len(found) != 2 or found[0] != kind:
        raise ValueError(f"index snapshot without {kind} {name!r}")
    return found[1]


def unread_bytes(entry: Any) -> int:
    """Bytes of an index, or a snapshot entry, still as stored (``PathIndex.unread_bytes``,
    ``Stored.size``): 0 once read, for what was built in memory, and for anything else."""
    if isinstance(entry, PathIndex):
        return entry.unread_bytes()
    return entry.size if isinstance(entry, Stored) else 0


def read_once(owner: Any, attr: str, name: str, kind: str, decode: Callable[[Any, tuple[str, ...]], Any],
              instead: str) -> Any:
    """``owner.attr``: a snapshot entry held as ``(entry, path table)`` until first use, then its
    value (a dict) or None. On the first call the entry is read (``read_entry``, its value
    ``decode(value, table)``d; None when damaged, logged with what is done ``instead``) and kept,
    under ``_DEFER_LOCK``, so two threads asking first read it once."""
    found = getattr(owner, attr)
    if found is None or type(found) is dict:
        return found
    with _DEFER_LOCK:
        found = getattr(owner, attr)
        if found is None or type(found) is dict:
            return found
        entry, table = found
        found = read_entry(entry, name, kind, lambda value: decode(value, table), instead)
        setattr(owner, attr, found)
    return found


def read_entry(entry: Any, name: str, kind: str, decode: Callable[[Any], Any], instead: str) -> Any:
    """One snapshot entry as stored (``{name: (kind, value)}``: ``piece``), its value
    ``decode``d; None, logged with what is done ``instead``, when it is damaged (reading or
    decoding it fails: ValueError, EOFError, TypeError, IndexError)."""
    try:
        return decode(piece({name: entry}, name, kind))
    except (ValueError, EOFError, TypeError, IndexError) as exc:
        log.warning("index snapshot entry %r not used: %s (%s)", name, instead, exc)
        return None


def path_index(snapshot: dict[str, Any], name: str, table: tuple[str, ...] = ()) -> PathIndex:
    """The ``PathIndex`` of a snapshot entry: ``ids`` (packed against ``table``) or ``paths``
    (tuples); deferred (``PathIndex.deferred``) while the entry is still as stored."""
    found = snapshot.get(name)
    if isinstance(found, Stored):
        found.kinds = ("ids", "paths", SPLIT)
        return PathIndex.deferred(found, table)
    if isinstance(found, tuple) and found and found[0] == "ids":
        return PathIndex.from_packed(piece(snapshot, name, "ids"), table)
    return PathIndex(piece(snapshot, name, "paths"))
