"""The link index of a vault: the names a link can use, where every link leads, backlinks.

One part of ``Vault`` (``Vault.link_index``), fed one page at a time by ``upsert``/``remove``
or built in bulk from ``lists_of`` parts. Link resolution is computed from the name indexes
when asked, so a link's target is always right after any page appears, disappears or is
renamed; ``linkers`` finds the pages whose links could point at a page by name.
"""

from __future__ import annotations

import bisect
import logging
import marshal
import posixpath
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain
from typing import Any

from .compact import link_kinds, link_targets
from .fields import PageFields
from .model import Link, Page, path_stem
from .pathindex import (
    _DEFER_LOCK, PathIndex, Stored, collector_paused, move_keys, path_index, piece, positions, read_once, unpacked,
    unpacker,
)

log = logging.getLogger("vaultlens")

TYPED_EDGES = ("sources", "related", "depends_on")


@dataclass(frozen=True, slots=True)
class Resolution:
    """Where a link leads.

    ``via`` is how it resolved: ``path``, ``stem`` (file name), ``title``, ``alias`` (Obsidian
    would not resolve it), or ``None`` when unresolved. ``candidates`` are every page that
    resolved at that same step, sorted by (path length, path); ``path`` is the first of them.
    ``attachment`` is True for a link to a non-Markdown file (not a page).
    """

    path: str | None
    via: str | None
    candidates: tuple[str, ...] = ()
    attachment: bool = False

    @property
    def ambiguous(self) -> bool:
        """Whether more than one page could be meant."""
        return len(self.candidates) > 1


UNRESOLVED = Resolution(None, None)


def _noext(target: str) -> str:
    return target[:-3] if target.lower().endswith(".md") else target


def link_keys(target: str) -> tuple[str, ...]:
    """Name keys a link target can resolve through: its base name and its whole text."""
    t = _noext(target.strip().replace("\\", "/")).casefold()
    base = t.rsplit("/", 1)[-1]
    return (base,) if base == t else (base, t)


def page_keys(page: Page) -> set[str]:
    """The names a link can use to reach ``page``: file stem, title and aliases, casefolded."""
    return {page.stem.casefold(), page.title.casefold(), *(a.casefold() for a in page.aliases)}


def _by_len_then_path(path: str) -> tuple[int, str]:
    return (len(path), path)


_LINKS = "(links)"  # the snapshot entry of the resolved links: how many parts they are stored in
STORED_LINKS = _LINKS  # a loader may hand it over still marshalled (``bytes`` of its piece)
_PART = _LINKS + "/"  # the snapshot entries of their parts: "(links)/0", "(links)/1", ...
_COUNTS = "linker_counts"  # the snapshot entry of every page's ``linker_count`` (the non-zero ones)
# A stored part of the resolved links holds the links of LINK_PART_PAGES pages, or LINK_PART_ROWS
# of the resolutions they name: a warm start restores one part per idle slice (~10 ms at
# 100,000 pages; all at once it was ~0.9 s, the first hover's or diagnosis's wait).
LINK_PART_PAGES = 1000
LINK_PART_ROWS = 4000


def is_link_part(name: str) -> bool:
    """Whether a snapshot entry is a part of the stored resolved links (their number varies)."""
    return name.startswith(_PART)


def _part_of(starts: Sequence[str], path: str) -> int:
    """The part whose range of paths (from ``starts[k]`` on) holds ``path``."""
    return max(bisect.bisect_right(starts, path) - 1, 0)


def _split(flat: tuple[Any, ...], lengths: Sequence[int]) -> list[tuple[Any, ...]]:
    """``flat`` cut into consecutive tuples of ``lengths`` (their sum is its length)."""
    ends = list(accumulate(lengths))
    if (ends[-1] if ends else 0) != len(flat):
        raise ValueError("a stored links part of another shape")
    return list(map(flat.__getitem__, map(slice, [0, *ends[:-1]], ends)))


RESOLVE_MEMO_MAX = 100_000  # resolve_memoised answers kept (about 0.3 KB each), the oldest dropped first


def _counts_by_path(value: Any, table: tuple[str, ...]) -> dict[str, int]:
    """The ``linker_counts`` entry's value, (paths, counts), as path -> count (``table``: the
    path table its packed paths count positions in)."""
    paths, counts = value
    if type(paths) is bytes:
        paths = unpacked(paths, table)
    if len(paths) != len(counts):
        raise ValueError("linker counts of another length")
    return dict(zip(paths, counts))


class LinkIndex:
    """Names -> pages, and where every link of every page leads.

    - ``by_path``: casefolded path without ``.md`` -> the first (shortest, then lowest) of the
      pages whose paths differ only in case (``path_holders``);
    - ``by_stem``, ``by_title``, ``by_alias``: casefolded names -> pages;
    - ``linkers``: every name key of a page's links and typed edges -> that page.

    Resolved links (``resolved_links`` and what is read from them) are built on first need,
    or restored from a snapshot (stored in parts of LINK_PART_PAGES pages, which idle time
    restores one at a time: ``restore_step``; the first reader restores the rest), and then
    kept current page by page. Two memos,
    each with its rule:

    - ``resolve_memoised`` answers, keyed by what an answer depends on (the target text,
      Markdown or not, and the source's folder only for ``./`` ``../`` and Markdown links):
      cleared whenever a page appears, disappears or changes a name (stem, title, alias);
    - ``linker_count`` answers per page: dropped for a page when it changes, and for the pages
      of a name when a link by that name comes or goes.

    ``pages`` is the vault's own dict: the vault updates it before calling ``upsert`` or
    ``remove`` here.
    """

    LISTS = ("_path_holders", "by_stem", "by_title", "by_alias", "linkers")  # snapshot/bulk names

    def __init__(self, pages: dict[str, Page]) -> None:
        self.pages = pages
        self._by_path: Any = {}  # ``by_path``: or its snapshot entry, still as stored
        self.path_holders = PathIndex()
        self.by_stem = PathIndex()
        self.by_title = PathIndex()
        self.by_alias = PathIndex()
        self.linkers = PathIndex()
        self._links: dict[str, tuple[Resolution, ...]] | None = None  # path -> per outlink, once built
        self._stored: Any = None  # a snapshot's resolved links (how many parts), restored on first need
        self._parts: dict[int, Any] = {}  # their parts not restored yet, as stored
        self._table: tuple[str, ...] = ()  # the path table their positions are places in
        # the parts restored so far, in idle time (``restore_step``): links, targets, incoming,
        # and the stored resolutions, by number
        self._restoring: tuple[dict[str, Any], dict[str, Any], dict[str, Any], list[Resolution]] | None = None
        self._relink_later: set[str] = set()  # pages changed since ``_stored`` was stored: relinked on restoring it
        # held while they are restored (a part, or the rest): only readers of links wait for it,
        # not the stored indexes' first reads (``_DEFER_LOCK``), which resolving links takes too
        self._links_lock = threading.Lock()
        self._targets: dict[str, tuple[str, ...]] = {}  # path -> kind, target, kind, target... resolved
        # target path -> the pages linking to it: a sorted tuple as built or restored (a set of
        # a few paths costs 216-728 bytes, the tuple 40 + 8 a path), a set once its linkers change
        self._incoming: dict[str, tuple[str, ...] | set[str]] = {}
        self._memo: dict[tuple[str, bool, str | None], Resolution] = {}  # resolve_memoised answers
        self._linker_counts: dict[str, int] = {}  # linker_count answers
        # a snapshot's linker counts (path -> count, the non-zero ones; its entry as stored
        # until first read), and the pages whose count may have changed since it was stored
        self._stored_counts: Any = None
        self._counts_stale: set[str] = set()

    # --- in bulk ---------------------------------------------------------------------------

    @staticmethod
    def lists_of(pairs: Sequence[tuple[Page, PageFields]]) -> dict[str, Any]:
        """What ``pairs`` add to each of its indexes, as plain data (see ``vault.index_part``)."""
        holders: dict[str, list[str]] = {}
        by_stem: dict[str, list[str]] = {}
        by_title: dict[str, list[str]] = {}
        by_alias: dict[str, list[str]] = {}
        linkers: dict[str, list[str]] = {}
        for page, _fields in pairs:
            path = page.path
            holders.setdefault(_noext(path).casefold(), []).append(path)
            by_stem.setdefault(page.stem.casefold(), []).append(path)
            by_title.setdefault(page.title.casefold(), []).append(path)
            for key in {a.casefold() for a in page.aliases}:
                by_alias.setdefault(key, []).append(path)
            for key in _link_keys(page):
                linkers.setdefault(key, []).append(path)
        return {"_path_holders": holders, "by_stem": by_stem, "by_title": by_title, "by_alias": by_alias,
                "linkers": linkers}

    def take(self, pairs: Sequence[tuple[Page, PageFields]], part: dict[str, Any]) -> None:
        """While built in bulk: nothing beyond its ``LISTS`` to merge."""

    def finish(self, lists: dict[str, dict[str, list[str]]]) -> None:
        """End a bulk build: the indexes of ``LISTS`` from every part's lists merged (taken over)."""
        self.by_path.update(
            (key, min(paths, key=_by_len_then_path)) for key, paths in lists["_path_holders"].items()
        )
        self.path_holders = PathIndex.from_lists(lists["_path_holders"])
        for name in self.LISTS[1:]:
            setattr(self, name, PathIndex.from_lists(lists[name]))

    # --- snapshots -------------------------------------------------------------------------

    SNAPSHOT = (*LISTS, "by_path", _COUNTS, _LINKS)

    def snapshot_pieces(self, *, links: bool = True, table: tuple[str, ...] = ()) -> Iterator[dict[str, Any]]:
        """Its indexes, one piece at a time, as plain data (``from_snapshot``); with ``links``,
        where every link resolves too (resolving all of them first if need be), last. With
        ``table`` (the search index's path table, holding every page), its key -> paths
        indexes are stored as positions there (``PathIndex.packed``): a few bytes a path, and
        one ``bytes`` to unmarshal per key, not a tuple of strings."""
        position = positions(table) if table else None
        for name in self.LISTS:
            index = self.path_holders if name == "_path_holders" else getattr(self, name)
            if position is None:
                yield {name: ("paths", index.settled())}
                continue
            try:
                yield {name: ("ids", index.packed(table, position))}
            except KeyError as exc:  # a path in no table: never, but never a broken file either
                raise ValueError(f"{name}: path {exc} not in the path table") from None
        yield {"by_path": ("value", self.by_path)}
        pages = self.pages
        counted = [(path, n) for path in (table or sorted(pages)) if path in pages and (n := self._count(path, keep=False))]
        found = tuple(path for path, _n in counted)
        yield {_COUNTS: ("counts", (b"".join(map(position.__getitem__, found)) if position else found,
                                    tuple(n for _path, n in counted)))}
        if not links or (pages and not table):  # (the parts name paths by their place in the table)
            yield {_LINKS: ("links", None)}
            return
        parts = list(self._link_parts(position or {}))
        yield {_LINKS: ("links", len(parts))}
        for k, part in enumerate(parts):
            yield {f"{_PART}{k}": ("value", part)}

    @classmethod
    def from_snapshot(cls, pages: dict[str, Page], snapshot: dict[str, Any], table: tuple[str, ...] = ()) -> LinkIndex:
        """The index a ``snapshot_pieces`` wrote (every piece merged into one dict), over the
        vault's ``pages`` (``table``: the path table it was packed against); each key -> paths
        index is unmarshalled when first used, the resolved links restored on first need (a
        search never needs them)."""
        index = cls(pages)
        index.path_holders = path_index(snapshot, "_path_holders", table)
        for name in cls.LISTS[1:]:
            setattr(index, name, path_index(snapshot, name, table))
        index._by_path = snapshot.get("by_path")  # unmarshalled on first use (a search never needs it)
        index._stored_counts = (snapshot.get(_COUNTS), table)  # read on first use
        index._stored = piece(snapshot, _LINKS, "links")
        index._table = table  # what the stored parts' positions are places in
        index._parts = {int(name[len(_PART):]): entry for name, entry in snapshot.items() if is_link_part(name)}
        return index

    def stored_entry(self, name: str) -> Any:
        """Index ``name`` (one of ``LISTS``, or ``by_path``) as held, without reading it: a
        ``PathIndex`` (deferred while still as stored), ``by_path``'s snapshot entry or dict."""
        if name == "by_path":
            return self._by_path
        return self.path_holders if name == "_path_holders" else getattr(self, name, None)

    @property
    def by_path(self) -> dict[str, str]:
        """Casefolded path without ``.md`` -> the path it names (see the class); after a warm
        start, read from the snapshot on first use (100,000 keys: ~70 ms), or made again from
        ``path_holders`` when that piece turns out damaged."""
        found = self._by_path
        if type(found) is dict:
            return found
        with _DEFER_LOCK:
            found = self._by_path
            if type(found) is not dict:
                try:
                    found = piece({"by_path": found}, "by_path", "value")
                    if not isinstance(found, dict):
                        raise ValueError("index snapshot entry 'by_path' of another kind")
                except (ValueError, EOFError, TypeError) as exc:
                    log.warning("index snapshot entry 'by_path' made again from the pages (%s)", exc)
                    found = {key: min(paths, key=_by_len_then_path) for key, paths in self.path_holders.items()}
                self._by_path = found
        return found

    @by_path.setter
    def by_path(self, value: dict[str, str]) -> None:
        self._by_path = value

    def _link_parts(self, position: Mapping[str, bytes]) -> Iterator[tuple[Any, ...]]:
        """The stored parts of the resolved links, in restoring order: the resolutions, numbered
        once for every page (LINK_PART_ROWS a part), then per LINK_PART_PAGES pages in path order
        those pages' links (as numbers) and targets, and the (sorted) linkers of the targets in
        the part's range of paths. So each part restores alone (``_restore_next``), the rows
        before the pages.

        Stored column by column, and every page as its position in the path table (``position``:
        path -> its packed bytes; the table holds every page), as the other link indexes store
        them: a few bytes a path to unmarshal, and the table's strings shared once restored (at
        100,000 pages, path strings made the parts 61 MB and 1.1 s to unmarshal). A rows part is
        ``("rows", paths (positions or None), vias, candidate counts, candidates joined,
        attachments)``; a pages part ``("pages", pages joined, link counts, link numbers, pages
        with targets joined, target counts, kinds, targets joined, linked pages joined, linker
        counts, linkers joined)``."""
        resolved = self._resolved()
        table: list[tuple[Any, ...]] = []
        ids: dict[int, int] = {}
        at = {path: int.from_bytes(blob, "little") for path, blob in position.items()}
        join = b"".join
        place = position.__getitem__

        def number(r: Resolution) -> int:
            n = ids.get(id(r))
            if n is None:
                n = ids[id(r)] = len(table)
                table.append((None if r.path is None else at[r.path], r.via, r.candidates, r.attachment))
            return n

        starts = sorted(self.pages)[::LINK_PART_PAGES] or [""]
        parts: list[tuple[dict[str, tuple[int, ...]], dict[str, Any], dict[str, Any]]] = [({}, {}, {}) for _ in starts]
        for path in sorted(resolved):
            per_page, flat, _incoming = parts[_part_of(starts, path)]
            per_page[path] = tuple(map(number, resolved[path]))
            if path in self._targets:
                flat[path] = self._targets[path]
        for target in sorted(self._incoming):
            parts[_part_of(starts, target)][2][target] = tuple(sorted(self._incoming[target]))
        # the memo is not stored: it refills as pages change
        for first in range(0, len(table), LINK_PART_ROWS):
            rows = table[first : first + LINK_PART_ROWS]
            yield ("rows", tuple(r[0] for r in rows), tuple(r[1] for r in rows), tuple(len(r[2]) for r in rows),
                   join(map(place, chain.from_iterable(r[2] for r in rows))), tuple(r[3] for r in rows))
        for per_page, flat, incoming in parts:
            yield (
                "pages",
                join(map(place, per_page)), tuple(map(len, per_page.values())),
                tuple(chain.from_iterable(per_page.values())),
                join(map(place, flat)), tuple(len(f) // 2 for f in flat.values()),
                tuple(chain.from_iterable(f[::2] for f in flat.values())),
                join(map(place, chain.from_iterable(f[1::2] for f in flat.values()))),
                join(map(place, incoming)), tuple(map(len, incoming.values())),
                join(map(place, chain.from_iterable(incoming.values()))),
            )

    def restore_step(self) -> bool:
        """Restore one stored part of the resolved links ahead of their first reader (idle time:
        ``Vault.prepare_links``); the last one makes them the links read from then on. False
        when nothing is left to restore (restored, built, or never stored)."""
        if self._links is not None or self._stored is None:
            return False
        with self._links_lock:
            if self._links is not None or self._stored is None:
                return False
            if self._restore_next() and self._parts:
                return True
            self._build_links()
        return False

    def _restore_next(self) -> bool:
        """Restore the next stored part into ``_restoring``; False when none was left, or when the
        stored links turn out damaged (``_stored`` is then None: every link is resolved again)."""
        if self._restoring is None:
            count = self._stored
            try:
                if type(count) is bytes:  # its piece as stored (checked, not yet unmarshalled)
                    count = piece(marshal.loads(count), _LINKS, "links")
                elif isinstance(count, Stored):  # read (and checked) only now
                    count = count.value()[1]
            except (ValueError, EOFError, TypeError):
                count = None
            if type(count) is not int or sorted(self._parts) != list(range(count)):
                self._stored, self._parts = None, {}
                return False
            self._restoring = ({}, {}, {}, [])
        if not self._parts:
            return False
        k = min(self._parts)
        name = f"{_PART}{k}"
        links, all_targets, all_incoming, made = self._restoring
        try:
            part = piece({name: self._parts.pop(k)}, name, "value")
            table, unpack = self._table, unpacker(self._table)
            with collector_paused():  # resolutions that all live on
                if part[0] == "rows":
                    _kind, paths, vias, counts, candidates, attachments = part
                    if not len(paths) == len(vias) == len(counts) == len(attachments):
                        raise ValueError("a stored links part of another shape")
                    made.extend(map(Resolution, [None if p is None else table[p] for p in paths], vias,
                                    _split(unpack(candidates), counts), attachments))
                else:
                    (_kind, pages, link_counts, numbers, sources, target_counts, kinds, targets,
                     linked, linker_counts, linkers) = part
                    resolutions = tuple(map(made.__getitem__, numbers))
                    links.update(zip(unpack(pages), _split(resolutions, link_counts), strict=True))
                    flat: list[str] = [""] * (2 * len(kinds))  # kind, target, kind, target...
                    flat[::2], flat[1::2] = kinds, unpack(targets)
                    all_targets.update(zip(unpack(sources), _split(tuple(flat), [2 * n for n in target_counts]),
                                           strict=True))
                    # the stored sorted tuples, made sets only where they change
                    all_incoming.update(zip(unpack(linked), _split(unpack(linkers), linker_counts), strict=True))
        except (ValueError, EOFError, TypeError, IndexError, KeyError):
            log.warning("index snapshot entry %r damaged: every link resolved again", name)
            self._stored, self._parts, self._restoring = None, {}, None
            return False
        return True

    # --- one page at a time ----------------------------------------------------------------

    def upsert(self, old: Page | None, new: Page) -> None:
        """File ``new`` (already in ``pages``) under its names instead of those of ``old``, and
        re-resolve the links it and its names touch."""
        path = new.path
        if old is None:
            key = _noext(path).casefold()
            self.path_holders.add(key, path)
            self.by_path[key] = min(self.path_holders[key], key=_by_len_then_path)
        self._refile(path, old, new)
        self._relink(old, new)

    def remove(self, old: Page) -> None:
        """Unfile ``old`` (already gone from ``pages``) and re-resolve the links it touched."""
        path = old.path
        key = _noext(path).casefold()
        self.path_holders.discard(key, path)
        if key in self.path_holders:  # another page's path differs only in case: it takes over
            self.by_path[key] = min(self.path_holders[key], key=_by_len_then_path)
        else:
            self.by_path.pop(key, None)
        self._refile(path, old, None)
        self._relink(old, None)

    def _refile(self, path: str, old: Page | None, new: Page | None) -> None:
        self._linker_counts.pop(path, None)
        stored = self._stored_counts is not None
        if stored:
            self._counts_stale.add(path)
        for index, keys in (
            (self.by_stem, lambda p: {p.stem.casefold()}),
            (self.by_title, lambda p: {p.title.casefold()}),
            (self.by_alias, lambda p: {a.casefold() for a in p.aliases}),
            (self.linkers, _link_keys),
        ):
            before = keys(old) if old is not None else set()
            after = keys(new) if new is not None else set()
            if not move_keys(index, path, before, after):
                continue
            if index is self.linkers and (self._linker_counts or stored):
                for key in before ^ after:
                    for holder in self.by_stem.get(key, ()):
                        self._linker_counts.pop(holder, None)
                        if stored:
                            self._counts_stale.add(holder)

    # Resolved links, kept current: a change to any page's names or the set of paths clears
    # the resolve memo and re-resolves the pages whose links could name that page
    # (``linkers``), so an edit that keeps a page's names costs its own links only.

    def _relink(self, old: Page | None, new: Page | None) -> None:
        renamed = old is None or new is None or page_keys(old) != page_keys(new)
        if renamed:
            self._memo.clear()
        if self._links is None and self._stored is None:
            return  # not built yet: it will be, from the pages as they are then
        path = (new or old).path  # type: ignore[union-attr]
        affected = {path}
        if renamed:
            for key in page_keys(old) if old is not None else ():
                affected.update(self.linkers.get(key, ()))
            for key in page_keys(new) if new is not None else ():
                affected.update(self.linkers.get(key, ()))
        if self._links is None:
            # Stored and not restored yet (a warm start's first edits: restoring every link's
            # resolution costs ~35 ms at 10,000 pages, ~0.5 s at 100,000): the pages whose links
            # this change can move are relinked when it is restored, from the pages as they are
            # then. Every page that can resolve otherwise than stored is among them: its own
            # links changed, or a name they could reach did (its linkers at that change).
            self._relink_later |= affected
            return
        for source in sorted(affected):
            self._link_page(source)

    def _resolved(self) -> dict[str, tuple[Resolution, ...]]:
        links = self._links
        if links is not None:
            return links
        with self._links_lock:  # a read on the event loop and one on the worker thread may both ask first
            if self._links is None:
                self._build_links()
        return self._links  # type: ignore[return-value]

    def _build_links(self) -> None:
        """Restore the stored resolved links (the parts not restored yet, then relink the pages
        changed since), or resolve every page's; ``_links`` is set last, so a reader never sees
        them half made."""
        links: dict[str, tuple[Resolution, ...]] | None = None
        if self._stored is not None:
            while self._restore_next():
                pass
            if self._restoring is not None:
                links, self._targets, self._incoming, _made = self._restoring
        self._stored, self._parts, self._restoring = None, {}, None
        todo: Iterable[str] = sorted(self._relink_later)
        self._relink_later = set()
        if links is None:  # nothing stored (or it was damaged): every page's links resolved
            links, self._targets, self._incoming = {}, {}, {}
            for path in self.pages:
                self._link_page(path, links)
            self._incoming = _sorted_linkers(self._incoming)
        else:
            for path in todo:
                self._link_page(path, links)
        self._links = links

    def _link_page(self, path: str, links: dict[str, tuple[Resolution, ...]] | None = None) -> None:
        if links is None:
            links = self._links
        assert links is not None
        old = links.pop(path, ())
        page = self.pages.get(path)
        kinds = link_kinds(page) if page is not None else ()
        new = tuple(self.resolve_memoised(t, path, kind) for kind, t in kinds)
        self._targets.pop(path, None)
        if page is not None:
            links[path] = new
            self._targets[path] = tuple(x for (kind, _t), r in zip(kinds, new) if r.path is not None for x in (kind, r.path))
        # ``[[#Heading]]`` resolves to its own page ("self") but names no page: not a backlink.
        before = {r.path for r in old if r.path is not None and r.via != "self"}
        after = {r.path for r in new if r.path is not None and r.via != "self"}
        for target in before - after:
            holders = self._linkers_to_change(target)
            holders.discard(path)
            if not holders:
                del self._incoming[target]
        for target in after - before:
            self._linkers_to_change(target).add(path)

    def _linkers_to_change(self, target: str) -> set[str]:
        """The pages linking to ``target``, as the set that changes them (made one from a
        built or restored tuple, or empty)."""
        holders = self._incoming.get(target)
        if type(holders) is not set:
            holders = self._incoming[target] = set(holders or ())
        return holders

    # --- resolution --------------------------------------------------------------------------

    def resolve(self, target: str, source: str | None = None, kind: str = "wiki") -> Resolution:
        """Resolve a link target as Obsidian does: path, then file name, then title, then alias.

        ``source`` is the linking page's path (for ``./`` and ``../`` and Markdown links).
        Ties resolve to the shortest path, then the lexicographically first.
        """
        t = target.strip().replace("\\", "/")
        if not t:
            return Resolution(source, "self", (source,)) if source in self.pages else UNRESOLVED
        base = t.rsplit("/", 1)[-1]
        dot = base.rfind(".")  # posixpath.splitext: leading dots of a name are no extension
        ext = base[dot:].lower() if dot > 0 and base[:dot].strip(".") else ""
        if ext and ext != ".md" and not _is_plausible_name_ext(ext):
            return Resolution(None, None, (), attachment=True)
        noext = _noext(t)

        if "/" in noext or kind == "md":
            tries = []
            if noext.startswith(("./", "../")) or kind == "md":
                source_dir = posixpath.dirname(source) if source else ""
                tries.append(posixpath.normpath(posixpath.join(source_dir, noext)))
            if not noext.startswith(("./", "../")):
                tries.append(posixpath.normpath(noext.lstrip("/")))
            for candidate in tries:
                if candidate == ".." or candidate.startswith("../") or candidate.startswith("/"):
                    continue  # never outside the vault
                exact = candidate + ".md"  # the page spelled exactly so wins over one differing in case
                hit = exact if exact in self.pages else self.by_path.get(candidate.casefold())
                if hit is not None:
                    return Resolution(hit, "path", (hit,))
            if "/" in noext and not noext.startswith(("./", "../")):
                suffix = "/" + posixpath.normpath(noext.lstrip("/")).casefold()
                found = sorted(
                    (p for p in self.by_stem.get(base.casefold().removesuffix(".md"), ()) if
                     ("/" + _noext(p).casefold()).endswith(suffix)),
                    key=_by_len_then_path,
                )
                if found:
                    return Resolution(found[0], "path", tuple(found))
        key = _noext(base if kind == "md" else noext).casefold()
        for via, index in (("stem", self.by_stem), ("title", self.by_title), ("alias", self.by_alias)):
            found_set = index.get(key)
            if found_set:
                found = sorted(found_set, key=_by_len_then_path)
                return Resolution(found[0], via, tuple(found))
        return UNRESOLVED

    def resolve_memoised(self, target: str, source: str, kind: str = "wiki") -> Resolution:
        """``resolve``, remembered by what the answer depends on (see the class: the memo is
        cleared whenever a page appears, disappears or changes a name)."""
        t = target.strip().replace("\\", "/")
        md = kind == "md"
        where = source if not t else (posixpath.dirname(source) if md or t.startswith(("./", "../")) else None)
        key = (t, md, where)
        memo = self._memo
        found = memo.get(key)
        if found is None:
            if len(memo) >= RESOLVE_MEMO_MAX:  # every link text ever typed must not stay: oldest out
                del memo[next(iter(memo))]
            found = memo[key] = self.resolve(target, source, kind)
        return found

    # --- the graph ------------------------------------------------------------------------

    def resolved_links(self, path: str) -> tuple[Resolution, ...]:
        """Where each of the page's typed edges, then body links, resolves (``outlinks`` order)."""
        return self._resolved().get(path, ())

    def outlink_targets(self, path: str) -> list[tuple[str, str]]:
        """``(kind, target path)`` of the page's links and edges that resolve to a page."""
        self._resolved()
        flat = self._targets.get(path, ())
        return list(zip(flat[::2], flat[1::2]))

    def link_kinds(self, source: str, target: str) -> list[str]:
        """The kinds of the links and edges of ``source`` that resolve to ``target``."""
        self._resolved()
        flat = self._targets.get(source, ())
        kinds: list[str] = []
        i = 1
        while True:
            try:
                i = flat.index(target, i)
            except ValueError:
                return kinds
            if i % 2:  # a target, not a kind
                kinds.append(flat[i - 1])
            i += 1

    def outlink_flats(self, paths: Iterable[str]) -> list[tuple[str, ...]]:
        """For each page, ``(kind, target, kind, target, ...)`` of its resolving links and edges
        (the tuples as held)."""
        self._resolved()
        get = self._targets.get
        return [get(path, ()) for path in paths]

    def outlink_paths(self, path: str) -> set[str]:
        """The pages the page's links and edges resolve to (a new set)."""
        self._resolved()
        return set(self._targets.get(path, ())[1::2])

    def linking_pages(self, path: str) -> set[str]:
        """The pages with at least one link or edge that names ``path`` and resolves to it."""
        self._resolved()
        return set(self._incoming.get(path, ()))

    def linking_among(self, path: str, among: set[str]) -> set[str]:
        """The pages of ``among`` that link to ``path`` (``linking_pages & among``, walking the
        smaller of the two sets, without a copy of the larger)."""
        self._resolved()
        return among.intersection(self._incoming.get(path, ()))

    def backlinks(self, path: str) -> list[tuple[str, Link]]:
        """Every (source path, link) that resolves to ``path``, sorted by source then position."""
        if path not in self.pages:
            return []
        links = self._resolved()
        out: list[tuple[str, Link]] = []
        for source in sorted(self._incoming.get(path, ())):
            spage = self.pages[source]
            for link, res in zip((*spage.edges, *spage.links), links.get(source, ())):
                if res.path == path and res.via != "self":
                    out.append((source, link))
        return out

    def linker_count(self, page: Page) -> int:
        """How many other pages link to ``page`` by its file name (``linkers`` of its stem,
        itself left out); memoised (see the class), the linkers' paths read and not kept
        (``Vault.prepare`` asks for every page in idle time: at 100,000 pages the first queries
        had unpacked ~20,000 keys for it, ~90 ms). After a warm start, the count stored with
        the index, for every page whose count no change since can have moved."""
        return self._count(page.path)

    def linker_counts(self, paths: Iterable[str]) -> dict[str, int]:
        """``linker_count`` of the page at each of ``paths``, in one call (a query bounds
        thousands of pages by their link-prior: "The" at 100,000 pages, 7,181)."""
        known, count = self._linker_counts, self._count
        stored, stale = self._counts(), self._counts_stale
        out = {}
        for path in paths:  # ``_count`` inlined for the remembered and stored ones (thousands a query)
            n = known.get(path)
            if n is None:
                n = stored.get(path, 0) if stored is not None and path not in stale else count(path)
            out[path] = n
        return out

    def _count(self, path: str, keep: bool = True) -> int:
        """``linker_count`` of the page at ``path``: remembered, stored, or counted (and
        remembered when ``keep``)."""
        n = self._linker_counts.get(path)
        if n is not None:
            return n
        stored = self._counts()
        if stored is not None and path not in self._counts_stale:
            return stored.get(path, 0)
        # (the stem from the path: a page a warm start left as stored is not decoded)
        linkers = self.linkers.peek(path_stem(path).casefold())
        n = len(linkers) - (path in linkers) if linkers else 0
        if keep:
            self._linker_counts[path] = n
        return n

    def _counts(self) -> dict[str, int] | None:
        """A snapshot's linker counts, read from it on first use (at 100,000 pages ~10 ms, where
        counting them from ``linkers`` took the first queries ~0.3 s); None without a snapshot,
        or when its entry is damaged (then every count is counted)."""
        return read_once(self, "_stored_counts", _COUNTS, "counts", _counts_by_path, "counted from the links")

    def indexes(self) -> Mapping[str, Any]:
        """Every index and derived table it keeps, by name (for tests comparing two builds)."""
        self._resolved()
        return {
            "by_path": self.by_path, "path_holders": self.path_holders, "by_stem": self.by_stem,
            "by_title": self.by_title, "by_alias": self.by_alias, "linkers": self.linkers,
            "resolved": self._links, "targets": self._targets,
            "incoming": {target: frozenset(sources) for target, sources in self._incoming.items()},
            "linkers counted": {path: self._count(path, keep=False) for path in self.pages},
        }


def _sorted_linkers(incoming: Mapping[str, Iterable[str]]) -> dict[str, tuple[str, ...]]:
    """Each target's linking pages as a sorted tuple (how they are kept once built, and stored)."""
    return {target: tuple(sorted(sources)) for target, sources in incoming.items()}


def _link_keys(page: Page) -> set[str]:
    """The name keys of every link and typed edge of ``page`` (see ``link_keys``)."""
    keys: set[str] = set()
    for target in link_targets(page):
        keys.update(link_keys(target))
    return keys


def _is_plausible_name_ext(ext: str) -> bool:
    """Whether a dotted suffix is part of a page name rather than a file type.

    Dendron names pages ``a.b.c`` and people write ``[[v1.2 notes]]``: a suffix is taken as a
    file type only when it is a known attachment extension.
    """
    return ext not in _ATTACHMENT_EXTS


_ATTACHMENT_EXTS = frozenset(
    ".png .jpg .jpeg .gif .bmp .svg .webp .avif .tif .tiff .ico .pdf .mp3 .wav .m4a .ogg .flac .webm .3gp "
    ".mp4 .mov .mkv .ogv .canvas .excalidraw .csv .json .txt .zip .docx .xlsx .pptx .html .js .css".split()
)
