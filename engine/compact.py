"""Compact page records: the form pages travel in between processes and rest in the cache.

A record is nested tuples of str, int, bool, None and dicts, so ``marshal`` reads
and writes it in C. ``decode_page`` gives a ``CompactPage``: a ``Page`` whose cheap fields are
set at once and whose links, edges, headings, blocks, inline tags, problems and frontmatter stay
one ``bytes`` blob, unpacked when read (a bounded number stay unpacked: ``Unpacked``). A vault loaded from records then costs what queries need
(titles, tags, bodies, tokens), not ~70 Python objects per page, and loads in a fraction of the
time. ``link_kinds`` and ``piped_links`` answer the whole-vault questions that would otherwise
unpack every page: what a page links to (and how), and how its ``[[a|b]]`` links read.

Strings that repeat across pages (tokens, tags, types, link targets) are interned before
marshalling: marshal keeps interned strings interned, so a loaded vault holds each once.

A stored chunk (``ChunkBuilder``) keeps each page's record, body, heavy blob and body counts
in the chunk's region, with a SHA-256 digest of the record in the chunk's tagged index and one
of each part in the record (``BodyRegion``): a page loaded from the index file holds none of
them until used, then reads them from the file. A warm start decodes no record at all:
``LazyChunk`` makes path-only pages and empty fields, each decoded alone on first read.

Must not: read files (``scan`` and ``cache`` do), or change what a page means: a decoded
record equals the page it was encoded from (``tests/engine/test_cache.py``).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import marshal
import os
import struct
import sys
import threading
from collections import OrderedDict
from sys import intern
from typing import Any

from . import __version__
from .pathindex import collector_paused
from .pathindex import part_digest as body_digest  # what a record holds to check an out-of-line part
from .fields import BodyCounts, PageFields
from .model import Heading, Link, Page, Problem, Span, Tag, fast_constructor

RECORD_VERSION = 9  # bump when the layout below changes
MARSHAL_VERSION = 4

_HEAVY = ("links", "edges", "headings", "blocks", "inline_tags", "problems", "meta")
_LIGHT = ("path", "title", "stem", "aliases", "tags", "type", "created", "updated", "body", "body_line", "size")
_BODY_AT = _LIGHT.index("body")  # a record's body: the text, or where a chunk holds it (``ChunkBuilder``)
_COMPARED = tuple(f.name for f in dataclasses.fields(Page) if f.compare)
_PAGE_FIELDS = tuple(f.name for f in dataclasses.fields(PageFields))


@functools.cache
def schema_version() -> str:
    """A fingerprint of everything a record's meaning depends on.

    The record layout, the engine version, the Python version (marshal), the field names of
    every dataclass in a record, and the source of the modules that compute records and the
    index snapshot stored beside them. A change to any of them gives a new fingerprint, so a
    stored record is never read by code that would have built it differently. Made once per
    process: the code running is what it was when first asked, whatever is installed since.
    """
    parts = [f"record {RECORD_VERSION}", f"engine {__version__}", f"python {sys.version_info[:2]}"]
    for cls in (Page, Link, Span, Heading, Tag, Problem, PageFields):
        parts.append(f"{cls.__name__}({','.join(f.name for f in dataclasses.fields(cls))})")
    here = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.blake2b(digest_size=16)
    digest.update("\n".join(parts).encode())
    for module in (
        "cache.py", "compact.py", "fields.py", "links.py", "model.py", "page.py", "pathindex.py", "postings.py", "scan.py",
        "text.py", "vault.py",
    ):
        try:
            with open(os.path.join(here, module), "rb") as fh:
                digest.update(fh.read())
        except OSError:  # e.g. a zipped install: the engine version stands for the source
            digest.update(module.encode())
    return digest.hexdigest()


# --- pages --------------------------------------------------------------------------------


def link_kinds(page: Page) -> tuple[tuple[str, str], ...]:
    """``(kind, target)`` of a page's typed edges, then its body links: the order of
    ``Vault.outlinks`` (without unpacking a compact page)."""
    found = getattr(page, "_targets", None)
    if type(found) is bytes:  # as its record holds them: made once, on first read
        found = marshal.loads(found)
        pairs = _get_unpacked(page).pairs
        if pairs is not None:
            setdefault = pairs.setdefault
            found = tuple([setdefault(pair, pair) for pair in found])
        _set_targets(page, found)
    if found is not None:
        return found
    return tuple((link.kind, link.target) for link in (*page.edges, *page.links))


def has_problems(page: Page) -> bool:
    """Whether the parser reported problems on the page (without unpacking a compact page)."""
    flags = getattr(page, "_flags", None)
    if flags is not None:
        return bool(flags & _PROBLEMS)
    return bool(page.problems)


def has_anchored_links(page: Page) -> bool:
    """Whether a link or typed edge of the page names a heading or a block (without unpacking)."""
    flags = getattr(page, "_flags", None)
    if flags is not None:
        return bool(flags & _ANCHORED)
    return any(link.heading or link.block for link in (*page.edges, *page.links))


_PROBLEMS, _ANCHORED = 1, 2


def link_targets(page: Page) -> tuple[str, ...]:
    """The targets of a page's typed edges and body links (see ``link_kinds``)."""
    return tuple(target for _kind, target in link_kinds(page))


def piped_links(page: Page) -> tuple[tuple[str, str], ...]:
    """``(target, label)`` of the page's ``[[a|b]]`` wikilinks, as parsed (for link order)."""
    found = getattr(page, "_piped", None)
    if type(found) is bytes:  # as ``link_kinds``
        found = marshal.loads(found)
        _set_piped(page, found)
    if found is not None:
        return found
    return tuple((link.target, link.label) for link in page.links if link.kind == "wiki" and link.label)


def _span(s: Span) -> tuple[int, int, int, int]:
    return (s.start_line, s.start_char, s.end_line, s.end_char)


def _link(link: Link) -> tuple[Any, ...]:
    return (
        intern(link.kind), link.target, link.heading, link.block, link.label,
        _span(link.span), _span(link.target_span), link.raw,
    )


def encode_page(page: Page, body: tuple[int, int, bytes] | None = None) -> tuple[Any, ...]:
    """A page as a record (marshal-ready). ``body``: where its chunk holds the body instead
    (``ChunkBuilder``); without it the record holds the text."""
    heavy = (
        tuple(map(_link, page.links)),
        tuple(map(_link, page.edges)),
        tuple((h.level, h.text, _span(h.span)) for h in page.headings),
        tuple(page.blocks),
        tuple((t.name, _span(t.span)) for t in page.inline_tags),
        tuple((p.code, p.message, p.line) for p in page.problems),
        page.meta,
    )
    return (
        intern(page.path),  # one string per path across every marshalled piece (marshal keeps it interned)
        intern(page.title),  # one string with the file name it often is, and with the names vault's
        intern(page.stem),
        tuple(page.aliases),
        tuple(map(intern, page.tags)),
        intern(page.type) if page.type is not None else None,
        _interned(page.created),  # dates: a few hundred distinct ones in thousands of pages
        _interned(page.updated),
        page.body if body is None else body,
        page.body_line,
        page.size,
        # (unmarshalled when first read, not with the record: few requests read them, and they
        # were half the time a page's record took to decode)
        _later(tuple((intern(kind), intern(target)) for kind, target in link_kinds(page))),
        _later(tuple((intern(t), label) for t, label in piped_links(page))),
        marshal.dumps(heavy, MARSHAL_VERSION),
        (_PROBLEMS if page.problems else 0) | (_ANCHORED if has_anchored_links(page) else 0),
    )


def _later(value: tuple[Any, ...]) -> tuple[Any, ...] | bytes:
    """``value`` as a record holds it to be unmarshalled on first read (``()`` as itself)."""
    return marshal.dumps(value, MARSHAL_VERSION) if value else ()


class Unpacked:
    """The heavy fields of the pages read most recently, for one load's ``CompactPage``s.

    A bounded LRU: a walk over every page's links (diagnostics after the start-up scan, a
    full backlink count) unpacks each page once and keeps only the last ``limit``, so memory
    stays what queries need rather than growing back to every page's ~70 objects. A page's
    blob is unmarshalled once; each field becomes objects only when that field is read.
    """

    __slots__ = ("_items", "limit", "pairs")

    def __init__(self, limit: int = 512) -> None:
        self._items: OrderedDict[int, tuple[CompactPage, list[Any]]] = OrderedDict()
        self.limit = limit
        # what makes equal ``(kind, target)`` pairs of different pages one object when
        # ``link_kinds`` unmarshals them: the load's table of shared values, while it lasts
        self.pairs: dict[Any, Any] | None = None

    def value(self, page: CompactPage, index: int) -> Any:
        """Heavy field ``index`` (``_HEAVY`` order) of ``page``."""
        key = id(page)  # the entry holds the page, so the id cannot be reused meanwhile
        found = self._items.get(key)
        if found is not None:
            try:
                self._items.move_to_end(key)
            except KeyError:  # evicted by another thread just now
                pass
            slots = found[1]
        else:
            # [which fields are still as marshalled, then the fields]
            slots = [list(_RAW), *marshal.loads(_heavy_blob(page))]
            self._items[key] = (page, slots)
            while len(self._items) > self.limit:
                try:
                    self._items.popitem(last=False)
                except KeyError:
                    break
        value = slots[index + 1]
        if slots[0][index]:  # still as marshalled: make its objects once
            value = slots[index + 1] = _CONVERT[index](value)
            slots[0][index] = False
        return value


def _links(raw: tuple) -> tuple[Link, ...]:
    return tuple(Link(k, t, h, b, lab, Span(*s), Span(*ts), raw_) for k, t, h, b, lab, s, ts, raw_ in raw)


_CONVERT = (
    _links,
    _links,
    lambda raw: tuple(Heading(level, text, Span(*s)) for level, text, s in raw),
    lambda raw: raw,
    lambda raw: tuple(Tag(name, Span(*s)) for name, s in raw),
    lambda raw: tuple(Problem(code, message, line) for code, message, line in raw),
    lambda raw: raw,
)
_RAW = (True, True, True, False, True, True, False)  # which heavy fields need converting (blocks, meta: no)


def decode_page(
    record: tuple[Any, ...],
    unpacked: Unpacked | None = None,
    region: BodyRegion | None = None,
    into: CompactPage | None = None,
) -> CompactPage:
    """The page a record holds; its heavy fields are unpacked when read, through ``unpacked``
    (share one per load; without one, each page keeps its own once read), and so are its
    link targets (``link_kinds``: with ``unpacked.pairs``, equal ``(kind, target)`` pairs of
    different pages become one object; a vault links to the same pages again and again:
    87,614 pairs, 20,275 distinct, at 10,000 pages: 3.8 MB). ``region``: the out-of-line
    region of the record's chunk, for a record made by ``ChunkBuilder`` (its body and heavy
    blob are there); a lazy region leaves them there, read when used (``BodyRegion``).
    ``into``: a page of a ``LazyChunk`` to fill."""
    page = _new(CompactPage) if into is None else into
    for setter, value in zip(_LIGHT_SETTERS, record):
        setter(page, value)
    ref = record[_BODY_AT]
    if type(ref) is str:  # a record holding its body and heavy blob (``encode_page`` alone)
        _set_heavy(page, record[13])
    elif region is None:
        raise TypeError("a record whose body is in its chunk, decoded without the chunk")
    elif region.lazy:
        _set_ref(page, ref)
        _set_region(page, region)
    else:
        _set_body_text(page, region.text_at(ref, record[0]))
        _set_heavy(page, region.part(ref, _HEAVY_PART, record[0]))
    _set_targets(page, record[11])
    _set_piped(page, record[12])
    _set_flags(page, record[14])
    _set_unpacked(page, unpacked if unpacked is not None else Unpacked(1))
    return page


def _set_light_body(page: CompactPage, value: Any) -> None:
    if type(value) is str:
        _set_body_text(page, value)


def _heavy_blob(page: CompactPage) -> bytes:
    try:
        return _get_heavy(page)
    except AttributeError:  # out of line: read from its chunk's region (not kept)
        return _get_region(page).part(_get_ref(page), _HEAVY_PART, _get_path(page))


# --- out of line: records, bodies, heavy blobs, body counts ------------------------------------
#
# A stored chunk is ``[index length: 8 bytes][index][region]``. The region holds, page after
# page, the body (UTF-8), the heavy blob (links, headings...: ``encode_page``), the body counts
# blob (``encode_fields``) and then the page's record itself: the length of its fields record,
# the fields record and the page record, each marshalled alone (``_record_data``: ranking bounds
# thousands of pages by their fields and reads few of the pages themselves). A record holds,
# instead of the three parts, one ``ref``: where they are in the region and the SHA-256 (16
# bytes) of each. The index holds, per page in manifest order, where its record is and the
# SHA-256 of it (``_ENTRY``). The index file's tag covers the head and the index only (28 bytes
# a page): a warm start neither reads, hashes nor unmarshals the region, and a page is decoded
# alone when first read (its record read with one ``os.pread`` and checked against the digest
# in the tagged index), its parts when used (checked against the digests in the record), so
# every byte is exactly as trusted as the tag.

_CHUNK_HEAD = struct.Struct("<Q")
CHUNK_HEAD = _CHUNK_HEAD.size
_REF = struct.Struct("<QIII16s16s16s")  # offset in the region; body, heavy, counts lengths; digests
_ENTRY = struct.Struct("<QI16s")  # a page's record: offset in the region, length, digest
_SPLIT = struct.Struct("<I")  # at the head of a page's record: the length of its fields record
_BODY_PART, _HEAVY_PART, _COUNTS_PART = 0, 1, 2


def _encoded(body: str) -> bytes:
    return body.encode("utf-8", "surrogatepass")  # any str, lone surrogates too, and back


def chunk_blob(index: bytes, parts: list[bytes]) -> bytes:
    """A stored chunk: its ``index`` of page records and the region they are in."""
    return b"".join((_CHUNK_HEAD.pack(len(index)), index, *parts))


def records_length(head: bytes | memoryview) -> int:
    """The length of the index part, from a chunk's first ``CHUNK_HEAD`` bytes."""
    return _CHUNK_HEAD.unpack_from(head)[0]


def split_chunk(blob: bytes) -> tuple[memoryview, memoryview]:
    """A whole chunk's index part and region (views of ``blob``); ValueError when the
    length at its head does not fit."""
    view = memoryview(blob)
    if len(view) < CHUNK_HEAD:
        raise ValueError("chunk shorter than its head")
    n = records_length(view)
    if CHUNK_HEAD + n > len(view):
        raise ValueError("chunk records out of range")
    return view[CHUNK_HEAD : CHUNK_HEAD + n], view[CHUNK_HEAD + n :]


def index_entries(index: bytes | memoryview) -> int:
    """How many pages a chunk's index lists (ValueError when it is not whole entries)."""
    n, rest = divmod(len(index), _ENTRY.size)
    if rest:
        raise ValueError("a chunk index of broken length")
    return n


def record_at(index: bytes | memoryview, i: int, region: BodyRegion) -> tuple[Any, Any]:
    """The ``(page record, fields record)`` of entry ``i`` of a chunk's ``index``, read from
    its ``region`` and checked against the index's digest (ValueError when it does not match)."""
    data, n = _record_data(index, i, region)
    return marshal.loads(data[_SPLIT.size + n :]), marshal.loads(data[_SPLIT.size : _SPLIT.size + n])


def _record_data(index: bytes | memoryview, i: int, region: BodyRegion) -> tuple[memoryview, int]:
    """Entry ``i``'s record as stored, checked as ``record_at`` does, and the length of its
    fields record (after ``_SPLIT``; the page record follows it)."""
    offset, length, digest = _ENTRY.unpack_from(index, i * _ENTRY.size)
    data = memoryview(region.raw(offset, length))
    if not region.trusted and (len(data) != length or body_digest(data) != digest):
        raise ValueError("a stored record does not match its chunk's index")
    n = _SPLIT.unpack_from(data)[0] if len(data) >= _SPLIT.size else -1
    if not 0 <= n <= len(data) - _SPLIT.size:
        raise ValueError("a stored record of broken length")
    return data, n


class ChunkBuilder:
    """One chunk of page records in the making (``add`` each page, then ``blob``)."""

    __slots__ = ("_index", "_parts", "_size")

    def __init__(self) -> None:
        self._index: list[bytes] = []
        self._parts: list[bytes] = []
        self._size = 0

    def add(self, page: Page, fields: tuple[Any, ...]) -> None:
        """Append a page (its record made here) and its ``encode_fields`` record."""
        record = encode_page(page)
        body, heavy, counts = _encoded(page.body), record[13], fields[_BODY]
        self._add(record, fields, body, heavy, counts, body_digest(body), body_digest(heavy), body_digest(counts))

    def _add(self, record, fields, body, heavy, counts, *digests) -> None:  # noqa: ANN001
        ref = _REF.pack(self._size, len(body), len(heavy), len(counts), *digests)
        page = (*record[:_BODY_AT], ref, *record[_BODY_AT + 1 : 13], None, *record[14:])
        fields_data = marshal.dumps((*fields[:_BODY], ref, *fields[_BODY + 1 :]), MARSHAL_VERSION)
        data = b"".join((_SPLIT.pack(len(fields_data)), fields_data, marshal.dumps(page, MARSHAL_VERSION)))
        at = self._size + len(body) + len(heavy) + len(counts)
        self._index.append(_ENTRY.pack(at, len(data), body_digest(data)))
        self._parts += (body, heavy, counts, data)
        self._size = at + len(data)

    def add_stored(self, record: tuple[Any, Any], region: BodyRegion) -> None:
        """Append a record of a stored chunk again, its parts copied from that chunk's
        ``region`` as they are (their digests stay, so they are checked when read)."""
        page, fields = record
        offset, n_body, n_heavy, n_counts, *digests = _REF.unpack(page[_BODY_AT])
        data = region.raw(offset, n_body + n_heavy + n_counts)
        self._add(page, fields, data[:n_body], data[n_body : n_body + n_heavy], data[n_body + n_heavy :], *digests)

    def __len__(self) -> int:
        return len(self._index)

    def blob(self) -> bytes:
        """The chunk's bytes."""
        return chunk_blob(b"".join(self._index), self._parts)


def rechunk(records: list[tuple[Any, Any]], region: BodyRegion) -> bytes:
    """A chunk of some of a stored chunk's records (``records``, as unmarshalled), their parts
    taken from that chunk's ``region``."""
    chunk = ChunkBuilder()
    for record in records:
        chunk.add_stored(record, region)
    return chunk.blob()


class RecentBodies:
    """The bodies read most recently, for one load's lazily held pages: a bounded LRU, so a
    walk over every body (a regex filter, the phrase index) keeps only the last ``limit``."""

    __slots__ = ("_items", "limit")

    def __init__(self, limit: int = 2048) -> None:
        self._items: OrderedDict[int, tuple[CompactPage, str]] = OrderedDict()
        self.limit = limit

    def get(self, page: CompactPage) -> str | None:
        """``page``'s body when it was read lately."""
        found = self._items.get(id(page))  # the entry holds the page, so the id cannot be reused
        if found is None:
            return None
        try:
            self._items.move_to_end(id(page))
        except KeyError:  # evicted by another thread just now
            pass
        return found[1]

    def put(self, page: CompactPage, text: str) -> None:
        """Remember ``page``'s body."""
        items = self._items
        items[id(page)] = (page, text)
        while len(items) > self.limit:
            try:
                items.popitem(last=False)
            except KeyError:
                break


class BodyRegion:
    """The out-of-line region of one stored chunk, and how to read it.

    ``read(offset, length)`` gives bytes of the region (an index file's, through ``cache``,
    which alone reads files; ``base``: where the region starts), or ``data`` holds the
    region. ``lazy``: pages and fields keep only their ``ref`` and read a part when it is used
    (bodies through the bounded ``recent``); else every part is taken at once. A part whose
    bytes do not match their digest is never used: ``damaged(path)`` (set by the loader)
    gives the page parsed again, its part is taken from that; without it ValueError is raised.
    ``trusted``: ``data`` a parse worker of this process just made, taken without checking.
    """

    __slots__ = ("read", "base", "data", "lazy", "recent", "damaged", "trusted")

    def __init__(self, *, read: Any = None, base: int = 0, data: bytes | memoryview | None = None, lazy: bool = False,
                 recent: RecentBodies | None = None, damaged: Any = None, trusted: bool = False) -> None:
        self.read = read
        self.base = base
        self.data = data
        self.lazy = lazy
        self.recent = recent if recent is not None else RecentBodies(64)
        self.damaged = damaged
        self.trusted = trusted

    def raw(self, offset: int, length: int) -> bytes:
        """The region's bytes at ``offset`` (unchecked)."""
        if self.data is not None:
            return bytes(self.data[offset : offset + length])
        return self.read(self.base + offset, length)

    def part(self, ref: bytes, which: int, path: str) -> bytes:
        """One part (``_BODY_PART``, ``_HEAVY_PART``, ``_COUNTS_PART``) of the page of ``ref``,
        as stored, checked against its digest."""
        offset, *rest = _REF.unpack(ref)
        lengths, digests = rest[:3], rest[3:]
        start = offset + sum(lengths[:which])
        data = self.raw(start, lengths[which])
        if self.trusted or (len(data) == lengths[which] and body_digest(data) == digests[which]):
            return data
        if self.damaged is None:
            raise ValueError(f"{path}: a stored part does not match its record")
        page = self.damaged(path)
        if which == _BODY_PART:
            return _encoded(page.body)
        if which == _HEAVY_PART:
            return encode_page(page)[13]
        from .fields import page_fields  # noqa: PLC0415 - only for a damaged index

        return encode_fields(page_fields(page))[_BODY]

    def text_at(self, ref: bytes, path: str) -> str:
        """The body of the page of ``ref``."""
        return self.part(ref, _BODY_PART, path).decode("utf-8", "surrogatepass")

    def text(self, page: CompactPage) -> str:
        """``page.body`` of a page decoded lazily from this region."""
        recent = self.recent
        found = recent.get(page)
        if found is None:
            found = self.text_at(_get_ref(page), _get_path(page))
            recent.put(page, found)
        return found


class CompactPage(Page):
    """A ``Page`` decoded from a record: equal to, and usable as, the page it was made from.

    Its heavy fields are unpacked from one blob when read (see ``Unpacked``). It pickles and
    copies as a plain ``Page``; ``dataclasses.replace`` gives a page with every field set.
    """

    __slots__ = ("_heavy", "_targets", "_piped", "_unpacked", "_flags", "_ref", "_region", "_chunk", "_at")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Page):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _COMPARED)

    __hash__ = Page.__hash__

    def __reduce__(self):  # a plain Page: the compact form is an in-memory detail
        return (Page, tuple(getattr(self, f.name) for f in dataclasses.fields(Page)))


def _lazy(name: str, index: int) -> property:
    member = Page.__dict__[name]  # the slot's own descriptor, under the frozen __setattr__
    get, set_ = member.__get__, member.__set__

    def read(self: CompactPage) -> Any:
        try:
            return get(self, CompactPage)  # set by __init__ (dataclasses.replace, unpickling)
        except AttributeError:
            return _get_unpacked(self).value(self, index)

    return property(read, set_, doc=f"``Page.{name}``, unpacked when read")


for _index, _name in enumerate(_HEAVY):
    setattr(CompactPage, _name, _lazy(_name, _index))


def _lazy_body() -> property:
    member = Page.__dict__["body"]
    get, set_ = member.__get__, member.__set__

    def read(self: CompactPage) -> str:
        try:
            return get(self, CompactPage)  # decoded at once, or set by __init__
        except AttributeError:
            return _get_region(self).text(self)

    return property(read, set_, doc="``Page.body``, read from its chunk's body region when not held")


CompactPage.body = _lazy_body()  # type: ignore[assignment]

_new = object.__new__
_set_body_text = Page.__dict__["body"].__set__
_get_path = Page.__dict__["path"].__get__
_LIGHT_SETTERS = tuple(Page.__dict__[name].__set__ if name != "body" else _set_light_body for name in _LIGHT)
_set_heavy = CompactPage.__dict__["_heavy"].__set__
_get_heavy = CompactPage.__dict__["_heavy"].__get__
_set_targets = CompactPage.__dict__["_targets"].__set__
_set_piped = CompactPage.__dict__["_piped"].__set__
_set_flags = CompactPage.__dict__["_flags"].__set__
_set_unpacked = CompactPage.__dict__["_unpacked"].__set__
_get_unpacked = CompactPage.__dict__["_unpacked"].__get__
_set_ref = CompactPage.__dict__["_ref"].__set__
_get_ref = CompactPage.__dict__["_ref"].__get__
_set_region = CompactPage.__dict__["_region"].__set__
_get_region = CompactPage.__dict__["_region"].__get__
_set_page_chunk = CompactPage.__dict__["_chunk"].__set__
_get_page_chunk = CompactPage.__dict__["_chunk"].__get__
_del_page_chunk = CompactPage.__dict__["_chunk"].__delete__
_set_page_at = CompactPage.__dict__["_at"].__set__
_get_page_at = CompactPage.__dict__["_at"].__get__
_set_path = Page.__dict__["path"].__set__


# --- page fields ----------------------------------------------------------------------------


def _interned(value: Any) -> Any:
    kind = type(value)
    if kind is str:
        return intern(value)
    if kind is BodyCounts or kind is PackedBodyCounts:
        return (tuple(map(intern, value.tokens)), value.counts)
    if kind is tuple or kind is frozenset:
        try:
            return kind(map(intern, value))  # the common case: a collection of tokens
        except TypeError:  # not all str: tuples of tuples, numbers
            return kind([_interned(v) for v in value])
    if kind is dict:
        try:
            return dict(zip(map(intern, value), value.values()))
        except TypeError:
            return {(intern(k) if type(k) is str else k): v for k, v in value.items()}
    return value


def encode_fields(fields: PageFields, interned: list[Any] | None = None) -> tuple[Any, ...]:
    """A page's fields as a record, every token interned; values that were one object (a file
    named after its title shares the title's tokens) stay one. The body's counts travel as one
    ``bytes`` blob (``PackedBodyCounts``). With ``interned``, the interned values (the body's
    as ``(tokens, counts)``) are appended to it, in field order."""
    done: dict[int, Any] = {}
    out = []
    for name in _PAGE_FIELDS:
        value = getattr(fields, name)
        found = done.get(id(value))
        if found is None:
            found = done[id(value)] = _interned(value)
        out.append(found)
    if interned is not None:
        interned.extend(out)
    out[_BODY] = marshal.dumps(out[_BODY], MARSHAL_VERSION)
    return tuple(out)


def interned_fields(values: list[Any]) -> PageFields:
    """The fields of the interned values ``encode_fields`` appended (body counts unpacked)."""
    values = list(values)
    tokens, counts = values[_BODY]
    body = _new(BodyCounts)
    _set_tokens(body, tokens)
    _set_counts(body, counts)
    values[_BODY] = body
    return _make_fields(*values)


class PackedBodyCounts(BodyCounts):
    """``BodyCounts`` read from a record, its tokens and counts unpacked on first use.

    A page's distinct body tokens are most of what a stored vault holds (~2 million at 10,000
    pages): unmarshalling them all was two thirds of a warm start. They stay one ``bytes``
    blob, or (a stored chunk's page) in the index file where the record points
    (``BodyRegion``), until something reads them (scoring a candidate, an edit), then become
    the interned tokens once and for good. Reading ``tokens`` or ``counts`` of a packed one
    goes through ``__getattr__`` (an unset slot), so a page's counts once unpacked cost what a
    plain ``BodyCounts``'s do.
    """

    __slots__ = ("_blob", "_region", "_path")

    def __getattr__(self, name: str) -> Any:
        if name != "tokens" and name != "counts":
            raise AttributeError(name)
        try:
            blob = _get_blob(self)
        except AttributeError:  # unpacked meanwhile by another thread
            return _get_tokens(self) if name == "tokens" else _get_counts(self)
        try:
            region = _get_counts_region(self)
        except AttributeError:  # the blob itself
            pass
        else:  # ``blob`` is the page's ref into its chunk's region
            blob = region.part(blob, _COUNTS_PART, _get_counts_path(self))
        tokens, counts = marshal.loads(blob)
        _set_tokens(self, tokens)
        _set_counts(self, counts)
        try:
            _del_blob(self)
        except AttributeError:
            pass
        return tokens if name == "tokens" else counts

    def __reduce__(self):  # a plain BodyCounts: the packed form is an in-memory detail
        return (BodyCounts, (self.tokens, self.counts))


# The fields whose values repeat from page to page: most pages have no aliases, and tag sets
# recur. (Titles, headings, paths and lengths almost never do: sharing them costs more load
# time than it saves memory.)
_SHARED_FIELDS = tuple(i for i, name in enumerate(_PAGE_FIELDS) if name in ("alias_tokens", "alias_set", "tag_names", "tag_tokens"))


def decode_fields(record: tuple[Any, ...], shared: dict[Any, Any] | None = None, region: BodyRegion | None = None,
                  path: str = "", into: PageFields | None = None) -> PageFields:
    """The fields a record holds. With ``shared`` (one dict per load), equal alias and tag
    values of different pages become one object.
    ``region``: as for ``decode_page`` (a ``ChunkBuilder`` record's body counts are there;
    ``path``: its page's). ``into``: the fields of a ``LazyChunk`` page to fill."""
    values = list(record)
    if shared is not None:
        for i in _SHARED_FIELDS:
            v = values[i]
            values[i] = shared.setdefault(v, v)
    counts = _new(PackedBodyCounts)
    blob = values[_BODY]
    if region is not None:  # a ``ChunkBuilder`` record: ``blob`` is the page's ref
        if region.lazy:
            _set_counts_region(counts, region)
            _set_counts_path(counts, path)
        else:
            blob = region.part(blob, _COUNTS_PART, path)
    _set_blob(counts, blob)
    values[_BODY] = counts
    # PageFields is frozen: its __init__ sets each slot through object.__setattr__, which
    # costs more than the rest of decoding. A record of another length is a TypeError.
    if into is not None:
        if len(values) != len(_FIELD_SETTERS):
            raise TypeError("a fields record of another length")
        for setter, value in zip(_FIELD_SETTERS, values):
            setter(into, value)
        return into
    return _make_fields(*values)


_make_fields = fast_constructor(PageFields)
_FIELD_SETTERS = tuple(PageFields.__dict__[name].__set__ for name in _PAGE_FIELDS)
_PAGE_SETTERS = tuple((f.name, Page.__dict__[f.name].__set__) for f in dataclasses.fields(Page))


# --- records decoded on first use ---------------------------------------------------------------


class LazyFields(PageFields):
    """The ``PageFields`` of a page of a ``LazyChunk``: filled in place when first read, then
    equal to, and usable as, the fields it was made from."""

    __slots__ = ("_chunk", "_at")

    def __getattr__(self, name: str) -> Any:
        try:
            chunk = _get_fields_chunk(self)
        except AttributeError:
            raise AttributeError(name) from None
        chunk.fill_fields(_get_fields_at(self))
        return object.__getattribute__(self, name)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PageFields):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _PAGE_FIELDS)

    __hash__ = PageFields.__hash__

    def __reduce__(self):  # a plain PageFields: the lazy form is an in-memory detail
        return (PageFields, tuple(getattr(self, name) for name in _PAGE_FIELDS))


def _page_getattr(self: CompactPage, name: str) -> Any:
    try:
        chunk = _get_page_chunk(self)
    except AttributeError:
        raise AttributeError(name) from None
    chunk.fill(_get_page_at(self))
    return object.__getattribute__(self, name)


CompactPage.__getattr__ = _page_getattr  # type: ignore[attr-defined]  # a ``LazyChunk`` page: filled on first read


class LazyChunk:
    """A stored chunk whose pages are decoded one by one, each when first read.

    A warm start makes, per stored page, a ``CompactPage`` holding only its path and a
    ``LazyFields`` holding nothing (a few hundred bytes a page, from the index file's
    manifest), and decodes no record. Reading anything else of either goes through their
    ``__getattr__`` (an unset slot) to ``fill(i)`` (the page, and its fields if they are not
    yet) or ``fill_fields(i)`` (the fields alone: ranking bounds thousands of pages by their
    fields and reads few of the pages, each half the record): that page's record is read from
    the index file (one ``os.pread``), checked against the digest the chunk's tagged index
    holds (read at the start and kept: 28 bytes a page, so a file changed since the start is
    never believed) and the part asked for decoded into those very objects, under the chunk's
    lock, so another thread sees each slot unset or final. A query that touches a few thousand
    pages of 100,000 decodes those, not every chunk they are in. When the record cannot be had
    or does not match, ``damaged(path)`` gives the page parsed again instead (page and fields).
    """

    __slots__ = ("_index", "_region", "_entries", "_left", "_lock", "_unpacked", "_shared", "_damaged")

    def __init__(self, paths: list[str], index: bytes, region: BodyRegion, unpacked: Unpacked, shared: dict[Any, Any],
                 damaged: Any) -> None:
        if index_entries(index) != len(paths):
            raise ValueError("a chunk index of another length than its manifest")
        self._index, self._region = index, region
        self._unpacked, self._shared, self._damaged = unpacked, shared, damaged
        self._lock = threading.Lock()
        entries: list[tuple[CompactPage, LazyFields] | None] = []
        add, new = entries.append, _new
        set_path, set_chunk, set_at = _set_path, _set_page_chunk, _set_page_at
        set_fields_chunk, set_fields_at = _set_fields_chunk, _set_fields_at
        for i, path in enumerate(paths):  # (100,000 pages at a warm start: each call counts)
            page = new(CompactPage)
            set_path(page, path)
            set_chunk(page, self)
            set_at(page, i)
            fields = new(LazyFields)
            set_fields_chunk(fields, self)
            set_fields_at(fields, i)
            add((page, fields))
        self._entries: list[tuple[CompactPage, LazyFields] | None] | None = entries
        self._left = len(entries)

    @property
    def pairs(self) -> list[tuple[CompactPage, LazyFields]]:
        """The chunk's pages and fields not decoded yet, in record order (all, at first)."""
        return [entry for entry in self._entries or () if entry is not None]

    def fill(self, i: int) -> None:
        """Decode page ``i`` of the chunk into its page, and its fields if they are not yet (once)."""
        self._fill(i, True)

    def fill_fields(self, i: int) -> None:
        """Decode the fields of page ``i`` alone (once); the page waits for its first read."""
        self._fill(i, False)

    def _fill(self, i: int, page_too: bool) -> None:
        with self._lock:
            entries = self._entries
            if entries is None:
                return
            entry = entries[i]
            if entry is None:
                return
            page, fields = entry
            try:
                _get_fields_chunk(fields)
                fields_too = True
            except AttributeError:  # decoded before, alone
                fields_too = False
            if not (page_too or fields_too):
                return
            # dozens of objects that all live on: no collection can free any, and none should
            # walk them later (decoded during requests, they filled the youngest generation: its
            # next collection, in whatever request came then, took ~20 ms at 10,000 pages)
            with collector_paused():
                try:
                    data, n = _record_data(self._index, i, self._region)
                    path = _get_path(page)
                    if page_too:
                        p = marshal.loads(data[_SPLIT.size + n :])
                        if p[0] != path:
                            raise ValueError("a record of another page")
                        decode_page(p, self._unpacked, self._region, into=page)
                    if fields_too:
                        f = marshal.loads(data[_SPLIT.size : _SPLIT.size + n])
                        decode_fields(f, self._shared, self._region, path, into=fields)
                except Exception:  # noqa: BLE001 - damaged or unreadable: the page is parsed again
                    self._parsed_again(page, fields)  # (fields decoded before alone: set again, equal)
                    page_too = True
                if fields_too:
                    _del_fields_chunk(fields)
                if not page_too:
                    return
                _del_page_chunk(page)
                entries[i] = None
                self._left -= 1
                if not self._left:  # every page decoded: what they shared is theirs alone now
                    self._entries = None
                    self._index = b""
                    self._shared = self._unpacked = None

    def _parsed_again(self, page: CompactPage, fields: LazyFields) -> None:
        from .fields import page_fields  # noqa: PLC0415 - only for a damaged index

        fresh = self._damaged(_get_path(page))
        for name, setter in _PAGE_SETTERS:  # the slots themselves, under the lazy properties
            setter(page, getattr(fresh, name))
        made = page_fields(fresh)
        for name, setter in zip(_PAGE_FIELDS, _FIELD_SETTERS):
            setter(fields, getattr(made, name))


_BODY = _PAGE_FIELDS.index("body_counts")
_set_tokens = BodyCounts.__dict__["tokens"].__set__
_set_counts = BodyCounts.__dict__["counts"].__set__
_get_tokens = BodyCounts.__dict__["tokens"].__get__
_get_counts = BodyCounts.__dict__["counts"].__get__
_set_blob = PackedBodyCounts.__dict__["_blob"].__set__
_get_blob = PackedBodyCounts.__dict__["_blob"].__get__
_del_blob = PackedBodyCounts.__dict__["_blob"].__delete__
_set_counts_region = PackedBodyCounts.__dict__["_region"].__set__
_get_counts_region = PackedBodyCounts.__dict__["_region"].__get__
_set_counts_path = PackedBodyCounts.__dict__["_path"].__set__
_get_counts_path = PackedBodyCounts.__dict__["_path"].__get__
_set_fields_chunk = LazyFields.__dict__["_chunk"].__set__
_get_fields_chunk = LazyFields.__dict__["_chunk"].__get__
_del_fields_chunk = LazyFields.__dict__["_chunk"].__delete__
_set_fields_at = LazyFields.__dict__["_at"].__set__
_get_fields_at = LazyFields.__dict__["_at"].__get__
