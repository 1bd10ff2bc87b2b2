"""Vault: one vault's pages and the indexes over them, in three parts fed by one upsert/remove.

- ``page_store`` (``PageStore``, here): the pages and their fields by path, and pages by tag;
- ``search_index`` (``engine.postings.SearchIndex``): token postings per field, what search
  bounds and expands terms by;
- ``link_index`` (``engine.links.LinkIndex``): link names, resolution, backlinks, typed edges.

``Vault.upsert(page)`` and ``Vault.remove(path)`` feed every part in one synchronous step (no
reader sees a page in one part and not another), in time proportional to that page (its
tokens, names and links), never to the vault: each part touches only the entries whose keys the
page gained or lost, so re-parsing an open buffer on every keystroke changes almost nothing. A
whole vault is built in bulk (``from_pages``, ``from_entries``, ``from_parts``), and a snapshot
(the persistent index, ``engine.cache``) is every part's own pieces.

The vault's attributes of the parts' containers (``pages``, ``fields``, ``postings``,
``body_twice``, ``by_title``, ...) are the containers themselves, set once: readers in hot loops
pay one attribute lookup. A part changes its containers in place and never replaces them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from .fields import PageFields, page_fields
from .links import TYPED_EDGES, UNRESOLVED, LinkIndex, Resolution, is_link_part, link_keys, page_keys
from .model import Link, Page
from .pathindex import PathIndex, Stored, move_keys, path_index, read_once, unread_bytes
from .postings import PREFIX_TOKENS, SearchIndex
from .vocabulary import EMPTY, Vocabulary

__all__ = [
    "INDEX_NAMES", "PREFIX_TOKENS", "PREPARED_KEYS", "REQUESTED_INDEXES", "TYPED_EDGES", "UNRESOLVED", "PageStore",
    "PathIndex", "Resolution", "Vault", "index_part", "link_keys",
]

_TITLES = "title_keys"  # the snapshot entry of every page's title casefolded (``PageStore.title_key``)


def _titles_by_path(titles: Any, table: tuple[str, ...]) -> dict[str, str]:
    """The ``title_keys`` entry's value (a title key per path of ``table``) as path -> key."""
    if not isinstance(titles, tuple) or len(titles) != len(table):
        raise ValueError("title keys of another length than the path table")
    return dict(zip(table, titles))


class PageStore:
    """The pages by path, their fields (``engine.fields``), ``tag_pages`` (tag -> pages), and
    every page's title casefolded (``title_key``), which the ranking breaks ties by."""

    LISTS = ("tag_pages",)  # its key -> paths indexes, in a snapshot and a bulk part
    SNAPSHOT = (*LISTS, _TITLES)  # the pages and fields travel apart (``engine.compact`` records)

    def __init__(self) -> None:
        self.pages: dict[str, Page] = {}
        self.fields: dict[str, PageFields] = {}
        self.tag_pages = PathIndex()
        # a snapshot's title keys (path -> title casefolded; its entry and path table as stored
        # until first read), and the pages changed since it was stored
        self._stored_titles: Any = None
        self._titles_stale: set[str] = set()

    @staticmethod
    def lists_of(pairs: Sequence[tuple[Page, PageFields]]) -> dict[str, Any]:
        """What ``pairs`` add to ``tag_pages``, as plain data (see ``index_part``)."""
        tag_pages: dict[str, list[str]] = {}
        for page, _fields in pairs:
            for tag in set(page.tags):
                tag_pages.setdefault(tag, []).append(page.path)
        return {"tag_pages": tag_pages}

    def take(self, pairs: Sequence[tuple[Page, PageFields]], part: dict[str, Any]) -> None:
        """While built in bulk: hold the pages of one part."""
        pages, fields_by_path = self.pages, self.fields
        for page, fields in pairs:
            pages[page.path] = page
            fields_by_path[page.path] = fields

    def finish(self, lists: dict[str, dict[str, list[str]]]) -> None:
        """End a bulk build: ``tag_pages`` from every part's lists merged (taken over)."""
        self.tag_pages = PathIndex.from_lists(lists["tag_pages"])

    def snapshot_pieces(self, table: Sequence[str] = ()) -> Iterator[dict[str, Any]]:
        """Its indexes as plain data (``from_snapshot``): the title keys in the order of
        ``table`` (the search index's path table, holding every page; ``""`` for a path that is
        no page), each taken from the snapshot read when no change since can have moved it (a
        page a warm start left as stored is not decoded to be written again)."""
        yield {"tag_pages": ("paths", self.tag_pages.settled())}
        pages, key = self.pages, self.title_key
        yield {_TITLES: ("titles", tuple(key(path) if path in pages else "" for path in table))}

    @classmethod
    def from_snapshot(cls, pairs: Iterable[tuple[Page, PageFields]], snapshot: dict[str, Any],
                      table: tuple[str, ...] = ()) -> PageStore:
        """The store of ``pairs`` with the indexes a ``snapshot_pieces`` wrote (``table``: the
        path table its title keys follow); the title keys are read on first use."""
        store = cls()
        store.tag_pages = path_index(snapshot, "tag_pages")
        store._stored_titles = (snapshot.get(_TITLES), table)
        store.take(pairs, {})
        return store

    def title_key(self, path: str) -> str:
        """The title of the page at ``path``, casefolded: how the ranking orders pages of equal
        score. From the snapshot read when no change since can have moved it (a query orders
        hundreds of tied pages by it, and reading ``page.title`` decodes a page a warm start
        left as stored, ~30-50 µs each), else from the page."""
        stored = self._titles()
        if stored is not None and path not in self._titles_stale:
            found = stored.get(path)
            if found is not None:
                return found
        return self.pages[path].title.casefold()

    def _titles(self) -> dict[str, str] | None:
        """A snapshot's title keys, read from it on first use; None when its entry is damaged
        (then every key comes from its page)."""
        return read_once(self, "_stored_titles", _TITLES, "titles", _titles_by_path, "titles read from the pages")

    def upsert(self, page: Page, fields: PageFields) -> tuple[Page | None, PageFields | None]:
        """Hold ``page`` (replacing the page at its path); the page and fields it replaced."""
        path = page.path
        old = self.pages.get(path)
        old_fields = self.fields.get(path)
        if self._stored_titles is not None:
            self._titles_stale.add(path)
        self.pages[path] = page
        self.fields[path] = fields
        move_keys(self.tag_pages, path, set(old.tags) if old is not None else set(), set(page.tags))
        return old, old_fields

    def remove(self, path: str) -> tuple[Page, PageFields] | None:
        """Drop the page at ``path``; the page and fields dropped, None when there was none."""
        page = self.pages.pop(path, None)
        if page is None:
            return None
        fields = self.fields.pop(path)
        if self._stored_titles is not None:
            self._titles_stale.add(path)
        move_keys(self.tag_pages, path, set(page.tags), set())
        return page, fields

    def indexes(self) -> dict[str, Any]:
        """Every index it keeps, by name (for tests comparing two builds)."""
        return {"pages": self.pages, "fields": self.fields, "tag_pages": self.tag_pages,
                "title_keys": {path: self.title_key(path) for path in self.pages}}


def graph_facts(page: Page) -> tuple:
    """What the link graph, tags and names read of a page (not where its links stand, nor its
    prose): two versions with the same facts leave every resolution and backlink unchanged."""
    return (page.title, page.aliases, page.tags, tuple((link.kind, link.target) for link in (*page.edges, *page.links)))


_PARTS = (PageStore, SearchIndex, LinkIndex)
INDEX_NAMES = tuple(name for part in _PARTS for name in part.LISTS)  # every key -> paths list of a bulk part
# The stored indexes a request reads, which the server reads ahead (``prepare_index``): every
# one but the path holders (only a page added or removed reads them), and by_path
REQUESTED_INDEXES = (*(name for name in INDEX_NAMES if name != "_path_holders"), "by_path")
# The indexes whose every key a query may read, which the server unpacks ahead too
# (``prepare_key``): a partial term expands to up to ``PREFIX_TOKENS`` name tokens
PREPARED_KEYS = ("name_postings", "first_postings")


def index_part(pairs: Iterable[tuple[Page, PageFields]], position: Mapping[str, bytes] | None = None
               ) -> dict[str, Any]:
    """What a group of pages (paths unique) adds to each index, for ``Vault.from_parts``.

    Plain data (dicts of lists of str, ints), so parse workers can compute it beside the pages
    and the cache can store it with them: ``{index name: {key: [path, ...]}, "lengths": [sums
    of PageFields.lengths]}``, every part's share. With ``position`` (path -> position bytes
    in the vault's path table), the search postings are packed (``SearchIndex.lists_of``).
    """
    pairs = pairs if isinstance(pairs, list) else list(pairs)
    part: dict[str, Any] = {}
    for kind in _PARTS:
        part.update(kind.lists_of(pairs, position) if kind is SearchIndex else kind.lists_of(pairs))
    return part


def _rebuilt(pages: dict[str, Page], fields: dict[str, PageFields], name: str) -> tuple[str, dict[str, tuple[str, ...]]]:
    """The snapshot entry ``name`` (a key -> paths index) computed from the vault's pages, for
    one found damaged when first read (``pathindex.Stored``)."""
    lists = index_part([(page, fields[path]) for path, page in pages.items()])[name]
    return ("paths", {key: tuple(paths) for key, paths in lists.items() if paths})


class Vault:
    """The live index of one vault. Mutated only through ``upsert``/``remove``/``set_vocabulary``."""

    def __init__(
        self,
        root: str | None = None,
        *,
        label_first: bool = False,
        parts: tuple[PageStore, SearchIndex, LinkIndex] | None = None,
    ) -> None:
        self.root = root
        self.label_first = label_first
        self.vocabulary: Vocabulary = EMPTY
        if parts is None:
            store = PageStore()
            parts = (store, SearchIndex(), LinkIndex(store.pages))
        store, search, links = parts
        assert links.pages is store.pages
        self.page_store, self.search_index, self.link_index = store, search, links
        # The parts' containers, under the names readers use (the same objects: see the module)
        self.pages = store.pages
        self.fields = store.fields
        self.tag_pages = store.tag_pages
        self.postings = search.postings
        self.stem_tokens = search.stem_tokens
        self.name_postings = search.name_postings
        self.first_postings = search.first_postings
        self.tag_postings = search.tag_postings
        self.heading_postings = search.heading_postings
        self.path_postings = search.path_postings
        self.body_twice = search.body_twice
        self.body_thrice = search.body_thrice
        self.sorted_name_tokens = search.sorted_name_tokens
        self.field_lengths = search.field_lengths
        self.by_stem = links.by_stem
        self.by_title = links.by_title
        self.by_alias = links.by_alias
        self.linkers = links.linkers
        # the parts' methods called in hot loops, bound once (one call, not a call through here)
        self.linker_count = links.linker_count
        self.linker_counts = links.linker_counts
        self.name_tokens_with_prefix = search.name_tokens_with_prefix
        self.prefixed = search.prefixed
        self.starting = search.starting
        self.counts_by_page = search.counts_by_page
        self.title_key = store.title_key
        self.generation = len(store.pages)  # bumped on every change: callers may cache per generation
        # bumped only when a page comes, goes, or changes what the link graph reads of it (names,
        # tags, link targets): what holds for related pages and backlink counts while one types prose
        self.graph_generation = self.generation
        self.mention_index: Any = None  # engine.mentions.MentionIndex, built on first use, then kept here

    @property
    def parts(self) -> tuple[PageStore, SearchIndex, LinkIndex]:
        """The parts, in the order ``upsert`` feeds them."""
        return self.page_store, self.search_index, self.link_index

    # --- building ------------------------------------------------------------------------

    @classmethod
    def from_pages(cls, pages: Iterable[Page], root: str | None = None, *, label_first: bool = False) -> Vault:
        """A vault holding ``pages`` (their order does not matter; a later page replaces an
        earlier one with the same path)."""
        return cls.from_entries(((page, page_fields(page)) for page in pages), root, label_first=label_first)

    @classmethod
    def from_entries(
        cls, entries: Iterable[tuple[Page, PageFields]], root: str | None = None, *, label_first: bool = False
    ) -> Vault:
        """A vault holding pages whose fields are already computed, indexed in bulk."""
        pairs: dict[str, tuple[Page, PageFields]] = {}
        for page, fields in entries:
            pairs[page.path] = (page, fields)
        pairs_list = list(pairs.values())
        return cls.from_parts([(pairs_list, index_part(pairs_list))], root, label_first=label_first)

    @classmethod
    def from_parts(
        cls,
        parts: Iterable[tuple[list[tuple[Page, PageFields]], dict[str, Any]]],
        root: str | None = None,
        *,
        label_first: bool = False,
        table: tuple[str, ...] | None = None,
    ) -> Vault:
        """A vault from groups of pages, each with its ``index_part``; no path in two groups.

        The same state as upserting every page in turn, built by merging per-group lists, so
        the work here grows with groups x keys, not pages x keys: parse workers and the cache
        hand over groups whose parts are already computed. Each group is merged as it comes
        and dropped. With ``table``, every part's search postings are packed against it
        (``index_part``'s ``position``): merged by joining bytes, and kept packed.
        """
        store = PageStore()
        built = (store, SearchIndex(), LinkIndex(store.pages))
        lists: dict[str, dict[str, Any]] = {name: {} for name in INDEX_NAMES}
        packed = frozenset(SearchIndex.LISTS if table is not None else ())
        for pairs, part in parts:
            for name in INDEX_NAMES:
                merged = lists[name]
                if name in packed:
                    # A key's bytes: the first part's as they came, then one bytearray grown in
                    # place (``finish`` makes it bytes). Not a list of every part's bytes: those
                    # small objects would outlive their group, and the holes they leave among
                    # the pages when freed at the end stay with the process (~30 MB at 10,000
                    # pages); nor bytes joined part by part (quadratic at 100,000 pages).
                    get = merged.get
                    for key, blob in part[name].items():
                        found = get(key)
                        if found is None:
                            merged[key] = blob
                        elif type(found) is bytes:
                            grown = merged[key] = bytearray(found)
                            grown += blob
                        else:
                            found += blob
                    continue
                for key, paths in part[name].items():  # a part is used once: its lists are taken over
                    found = merged.get(key)
                    if found is None:
                        merged[key] = paths
                    else:
                        found.extend(paths)
            for each in built:
                each.take(pairs, part)
        store.finish(lists)
        built[1].finish(lists, table)
        built[2].finish(lists)
        return cls(root, label_first=label_first, parts=built)

    @property
    def by_path(self) -> dict[str, str]:
        """``LinkIndex.by_path``: casefolded path without ``.md`` -> the path (read from the
        snapshot on first use after a warm start)."""
        return self.link_index.by_path

    @classmethod
    def index_names(cls) -> tuple[str, ...]:
        """The entries of a snapshot: every part's indexes."""
        return tuple(name for part in _PARTS for name in part.SNAPSHOT)

    def snapshot(self, *, links: bool = True) -> dict[str, Any]:
        """Every index as plain data (for ``from_snapshot``; ``marshal`` can write it). With
        ``links``, where every link resolves too (resolving all of them first if need be)."""
        out: dict[str, Any] = {}
        for found in self.snapshot_pieces(links=links):
            out.update(found)
        return out

    def snapshot_pieces(self, *, links: bool = True) -> Iterator[dict[str, Any]]:
        """``snapshot`` one index at a time, each part writing its own (the resolved links
        last): written piece by piece, the plain data of only one is made and marshalled at once."""
        yield from self.search_index.snapshot_pieces(self.pages)  # (the path table first: the others follow it)
        yield from self.page_store.snapshot_pieces(self.search_index.path_table)
        yield from self.link_index.snapshot_pieces(links=links, table=self.search_index.path_table)

    @classmethod
    def from_snapshot(
        cls,
        pairs: Iterable[tuple[Page, PageFields]],
        snapshot: dict[str, Any],
        root: str | None = None,
        *,
        label_first: bool = False,
    ) -> Vault:
        """The vault of ``pairs`` with its indexes taken from ``snapshot`` (a ``snapshot()`` of a
        vault holding exactly those pages); ValueError when it does not fit this Vault."""
        if sorted(name for name in snapshot if not is_link_part(name)) != sorted(cls.index_names()):
            raise ValueError("index snapshot of another vault layout")
        search = SearchIndex.from_snapshot(snapshot)
        store = PageStore.from_snapshot(pairs, snapshot, search.path_table)
        for name, entry in snapshot.items():  # an index read later that turns out damaged: made again
            if isinstance(entry, Stored) and name in INDEX_NAMES:
                entry.rebuild = functools.partial(_rebuilt, store.pages, store.fields)
        built = (store, search, LinkIndex.from_snapshot(store.pages, snapshot, search.path_table))
        return cls(root, label_first=label_first, parts=built)

    # --- changing ------------------------------------------------------------------------

    def set_vocabulary(self, vocabulary: Vocabulary) -> None:
        """Replace the synonym groups; takes effect on the next query."""
        self.vocabulary = vocabulary
        self.generation += 1

    def upsert(self, page: Page, fields: PageFields | None = None) -> None:
        """Add or replace one page in every part, in one step and in time proportional to it.

        ``fields`` may be given when already computed (``page_fields(page)``). Only the index
        keys that the page gained or lost are touched.
        """
        if fields is None:
            fields = page_fields(page)
        old, old_fields = self.page_store.upsert(page, fields)
        self.search_index.upsert(page.path, old_fields, fields)
        self.link_index.upsert(old, page)
        if self.mention_index is not None:
            self.mention_index.upsert(old, page)
        self.generation += 1
        if old is None or graph_facts(old) != graph_facts(page):
            self.graph_generation = self.generation

    def remove(self, path: str) -> None:
        """Drop one page from every part (a no-op for an unknown path), in one step."""
        dropped = self.page_store.remove(path)
        if dropped is None:
            return
        page, fields = dropped
        self.search_index.remove(path, fields)
        self.link_index.remove(page)
        if self.mention_index is not None:
            self.mention_index.remove(page)
        self.generation += 1
        self.graph_generation = self.generation

    # --- queries about pages ---------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.pages)

    def __contains__(self, path: object) -> bool:
        return path in self.pages

    def get(self, path: str) -> Page | None:
        """The page at a vault-relative path, or None."""
        return self.pages.get(path)

    def sorted_paths(self) -> list[str]:
        """Every page path, sorted."""
        return sorted(self.pages)

    def prepare(self, path: str) -> None:
        """Decode what ranking reads of page ``path`` (its fields) ahead of the query that
        would: a warm start leaves each stored page's record undecoded until first read
        (``compact.LazyChunk``), and the first query to touch a page pays for it.
        The language server prepares every page in idle time after a load (``lsp/idle.py``);
        answers are the same either way. Body token counts stay where they are (in the index
        file, read when a query scores the page): bringing them all in would cost ~200 MB at
        100,000 pages. Its link-prior count is looked up too (``LinkIndex.linker_count``, kept:
        a query bounds every page that holds its words by it)."""
        fields = self.fields.get(path)
        if fields is not None:
            fields.title_set  # noqa: B018 - reading a field fills it (``LazyChunk.fill_fields``)
            self.link_index.linker_count(self.pages[path])

    def prepare_page(self, path: str) -> None:
        """Decode the stored record of page ``path`` itself (``prepare`` decodes its fields
        alone: a query bounds thousands of pages by those, and reads only the tens it scores
        and answers with). Answers are the same either way."""
        page = self.pages.get(path)
        if page is not None:
            page.title  # noqa: B018 - reading a field fills the page (``LazyChunk.fill``)

    def prepare_index(self, name: str) -> None:
        """Read index ``name`` (one of ``INDEX_NAMES``, or ``by_path``) ahead of the request that
        would: a warm start leaves each stored index as stored until first used
        (``pathindex.Stored``: at 100,000 pages the name indexes take 15-40 ms each to unmarshal,
        the body postings' keys ~40 ms). Answers are the same either way."""
        for entry in self._held(name):
            if isinstance(entry, PathIndex):
                entry.get("")  # any look-up reads a stored index
        if name == "by_path":
            self.link_index.by_path  # noqa: B018 - read on first use (a dict of its own)

    def packed_keys(self, name: str) -> list[str]:
        """The keys of index ``name`` (one of ``PREPARED_KEYS``) whose paths are still packed or
        in the index file (``PathIndex.packed_keys``)."""
        return getattr(self, name).packed_keys()

    def prepare_key(self, name: str, key: str) -> None:
        """Unpack the paths of ``key`` in index ``name`` ahead of the query that would (a key's
        first read unpacks them: "In" at 100,000 pages unpacked 448 name tokens' paths, 6 ms,
        on its first query). Answers are the same either way."""
        getattr(self, name).get(key)

    def unread_index(self, name: str) -> int:
        """Bytes of index ``name`` (as ``prepare_index``) still as stored: 0 once read or built
        in memory; ``prepare_index`` costs about 1 ms per 40-300 KB of it."""
        return sum(unread_bytes(entry) for entry in self._held(name))

    def _held(self, name: str) -> tuple[Any, ...]:
        """Index ``name`` as each part holds it, without reading it."""
        store, search, links = self.parts
        return getattr(store, name, None), getattr(search, name, None), links.stored_entry(name)

    def prepare_links(self) -> bool:
        """Restore one stored part of where every link resolves ahead of the request that would
        read them (``LinkIndex.restore_step``: a warm start leaves them as stored, and the first
        hover, backlink or diagnosis would restore them all at once, ~0.9 s at 100,000 pages);
        False when none is left. Answers are the same either way."""
        return self.link_index.restore_step()

    def page_keys(self, page: Page) -> set[str]:
        """The names a link can use to reach ``page``: file stem, title and aliases, casefolded."""
        return page_keys(page)

    # --- links (``link_index``) -------------------------------------------------------------

    def resolve(self, target: str, source: str | None = None, kind: str = "wiki") -> Resolution:
        """Resolve a link target as Obsidian does: path, then file name, then title, then alias
        (``LinkIndex.resolve``)."""
        return self.link_index.resolve(target, source, kind)

    def resolve_memoised(self, target: str, source: str, kind: str = "wiki") -> Resolution:
        """``resolve``, remembered until a page appears, disappears or changes a name (the memo
        the link index resolves every link through: ``LinkIndex.resolve_memoised``)."""
        return self.link_index.resolve_memoised(target, source, kind)

    def resolve_link(self, link: Link, source: str) -> Resolution:
        """Resolve one of ``source``'s links or typed edges."""
        return self.link_index.resolve(link.target, source, link.kind)

    def outlinks(self, path: str) -> list[tuple[Link, Resolution]]:
        """The page's body links and typed edges, each with where it resolves, in page order."""
        page = self.pages.get(path)
        if page is None:
            return []
        return list(zip((*page.edges, *page.links), self.link_index.resolved_links(path)))

    def resolved_links(self, path: str) -> tuple[Resolution, ...]:
        """Where each of the page's typed edges, then body links, resolves (``outlinks`` order)."""
        return self.link_index.resolved_links(path)

    def outlink_targets(self, path: str) -> list[tuple[str, str]]:
        """``(kind, target path)`` of the page's links and edges that resolve to a page, in
        ``outlinks`` order, without unpacking the page's links."""
        return self.link_index.outlink_targets(path)

    def link_kinds(self, source: str, target: str) -> list[str]:
        """The kinds (``wiki``, ``embed``, ``md`` or a typed edge) of the links and edges of
        ``source`` that resolve to ``target``, in ``outlinks`` order; O(links of source) in C."""
        return self.link_index.link_kinds(source, target)

    def outlink_flats(self, paths: Iterable[str]) -> list[tuple[str, ...]]:
        """``outlink_targets`` of each page, flat and as held: ``(kind, target, kind, target, ...)``
        (one call for many pages: ``related`` reads every linker of a hub)."""
        return self.link_index.outlink_flats(paths)

    def outlink_paths(self, path: str) -> set[str]:
        """The pages the page's links and edges resolve to (a new set; ``outlink_targets``
        without the kinds)."""
        return self.link_index.outlink_paths(path)

    def linking_pages(self, path: str) -> set[str]:
        """The pages with at least one link or edge that names ``path`` and resolves to it (itself
        included when it links to itself by name, not by ``[[#heading]]``); O(answer)."""
        return self.link_index.linking_pages(path)

    def linking_among(self, path: str, among: set[str]) -> set[str]:
        """The pages of ``among`` that link to ``path``: ``linking_pages(path) & among`` in the
        time of the smaller set (a hub's linkers are thousands)."""
        return self.link_index.linking_among(path, among)

    def backlinks(self, path: str) -> list[tuple[str, Link]]:
        """Every (source path, link) that resolves to ``path``, sorted by source then position."""
        return self.link_index.backlinks(path)

    def edge_targets(self, path: str, predicate: str) -> list[str]:
        """Resolved targets of one typed edge predicate of a page, unique, sorted by title."""
        page = self.pages.get(path)
        if page is None:
            return []
        resolve = self.link_index.resolve
        found = {
            r.path
            for link in page.edges
            if link.kind == predicate and (r := resolve(link.target, path, link.kind)).path is not None
        }
        return sorted(found, key=lambda p: (self.pages[p].title.casefold(), p))

    # ``linker_count(page)`` (``LinkIndex.linker_count``), ``name_tokens_with_prefix(prefix,
    # limit)``, ``prefixed(prefix)`` and ``starting(prefix)`` (``SearchIndex``'s) are the parts'
    # methods, bound in __init__.
