"""PathIndex: key -> the pages filed under it, compact, changed one path at a time.

Every key -> pages index of a vault (its search postings, its link names, its tags) is one:
read-only tuples of paths (build a ``set`` where set algebra is needed), a quarter of the
memory of a set per key at 10,000 pages.
"""

from __future__ import annotations

import contextlib
import gc
import marshal
import sys
import threading
from array import array
from collections.abc import Iterator, Mapping
from collections.abc import Set as AbstractSet
from typing import Any


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

    __slots__ = ("_tuples", "_plus", "_minus", "_folded", "_table", "_code")

    def __init__(self, tuples: dict[str, tuple[str, ...]] | None = None) -> None:
        self._tuples: dict[str, Any] = tuples if tuples is not None else {}
        self._plus: dict[str, set[str]] = {}  # paths filed since the key's tuple was made
        self._minus: dict[str, set[str]] = {}  # paths of the key's tuple no longer filed
        self._folded: dict[str, tuple[str, ...]] = {}  # the memo of reads (see above)
        # Packed keys (``packed``/``from_packed``): a key's tuple may instead be ``bytes`` of
        # positions in ``_table`` (array typecode ``_code``), made a tuple on its first read.
        self._table: tuple[str, ...] = ()
        self._code = "I"

    @classmethod
    def from_packed(cls, packed: dict[str, bytes], table: tuple[str, ...]) -> PathIndex:
        """An index of what ``packed(table)`` wrote: each key's paths stay positions in
        ``table`` (2 or 4 bytes a path instead of 8, and one ``bytes`` to unmarshal instead of
        a tuple to build) until the key is first read."""
        index = cls(packed)  # type: ignore[arg-type]
        index._table = table
        index._code = _code(len(table))
        return index

    def packed(self, table: tuple[str, ...], position: dict[str, bytes], *, adopt: bool = False) -> dict[str, bytes]:
        """Every key's paths as ``bytes`` of positions in ``table`` (``position``: path -> its
        position as bytes, ``positions(table)``; it must hold every path filed here). Keys
        still packed against the same table are not touched. With ``adopt`` this index keeps
        the packed form too (its tuples are dropped; reads unpack a key again once)."""
        tuples = self.settled()
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
        """``_tuples[key]`` as a tuple (unpacked and kept, when packed); () when absent."""
        found = self._tuples.get(key, ())
        if type(found) is bytes:
            found = self._tuples[key] = self._unpacked(found)
        return found

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
        return index

    def _load(self) -> None:
        """Nothing to do: a deferred index (``_Deferred``) becomes a plain one here."""

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
        snapshot: read it, do not change it). A write: the contents stay the same."""
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
        n = len(found) if type(found) is not bytes else len(found) // _SIZE[self._code]
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
        if type(found) is bytes:
            found = self._tuples[key] = self._unpacked(found)
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
            if not isinstance(value, dict):
                raise ValueError(f"index snapshot entry {stored.name!r} of another kind")
            self._tuples = value
            if kind != "ids":
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


for _name in ("packed", "_unpacked", "_tuple", "add", "discard", "settled", "_fold", "count", "get", "__getitem__",
              "__contains__", "__iter__", "__len__", "__repr__", "keys", "items", "values", "__eq__"):
    _deferring(_name)


class Stored:
    """One entry of an index snapshot as its piece was stored, unmarshalled on first need
    (``value``): the piece's bytes (``blob``, already checked against their tag), or ``read``,
    which reads them from the index file and checks them then (raising ValueError when they do
    not match). ``rebuild(name)``, when set, gives the entry computed again from the vault's
    pages instead of failing: a file damaged after the start is never believed."""

    __slots__ = ("name", "blob", "kinds", "read", "rebuild")

    def __init__(self, name: str, blob: bytes = b"", kinds: tuple[str, ...] = ("ids", "paths", "value"),
                 read: Any = None) -> None:
        self.name, self.blob, self.kinds, self.read = name, blob, kinds, read
        self.rebuild: Any = None

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


_SIZE = {"H": 2, "I": 4}
_SWAP = sys.byteorder != "little"  # packed positions are stored little-endian


def positions(table: tuple[str, ...]) -> dict[str, bytes]:
    """Each path of ``table`` -> its position there as packed bytes (``PathIndex.packed``)."""
    width = _SIZE[_code(len(table))]
    return {path: i.to_bytes(width, "little") for i, path in enumerate(table)}


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


def path_index(snapshot: dict[str, Any], name: str, table: tuple[str, ...] = ()) -> PathIndex:
    """The ``PathIndex`` of a snapshot entry: ``ids`` (packed against ``table``) or ``paths``
    (tuples); deferred (``PathIndex.deferred``) while the entry is still as stored."""
    found = snapshot.get(name)
    if isinstance(found, Stored):
        found.kinds = ("ids", "paths")
        return PathIndex.deferred(found, table)
    if isinstance(found, tuple) and found and found[0] == "ids":
        return PathIndex.from_packed(piece(snapshot, name, "ids"), table)
    return PathIndex(piece(snapshot, name, "paths"))
