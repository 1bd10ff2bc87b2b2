"""Vault: pages by path, their fields, inverted indexes, link resolution and the link graph.

Updated one page at a time: ``upsert(page)`` and ``remove(path)`` cost time proportional to
that page (its tokens, names and links), never to the vault; an upsert touches only the index
entries whose keys the new version gained or lost, so re-parsing an open buffer on every
keystroke changes almost nothing. A whole vault is built in bulk (``from_pages``,
``from_entries``). Link resolution is computed when asked, from name indexes, so a link's target
is always right after any page appears, disappears or is renamed; ``linkers`` finds the pages
whose links could point at a page by name.

Every key -> pages index is a ``PathIndex``: read-only tuples of paths (build a ``set`` where
set algebra is needed), a quarter of the memory of a set per key at 10,000 pages.
"""

from __future__ import annotations

import bisect
import posixpath
from collections.abc import Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from .compact import link_kinds, link_targets
from .fields import PageFields, page_fields
from .model import Link, Page
from .text import stem
from .vocabulary import EMPTY, Vocabulary

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


def _by_len_then_path(path: str) -> tuple[int, str]:
    return (len(path), path)


PREFIX_TOKENS = 500  # name tokens a partial term expands to, at most


class PathIndex(Mapping[str, tuple[str, ...]]):
    """key -> the paths filed under it, as a tuple; only keys with at least one path exist.

    Built in bulk as one tuple per key (8 bytes a path: a set costs 30-60), then changed one
    path at a time through small per-key sets of additions and removals that are folded into
    the key's tuple the next time it is read. So ``add``/``discard`` cost O(1) and the first
    read of a changed key O(its paths), once; nothing is quadratic when many pages change
    between reads. The order of a tuple carries no meaning.
    """

    __slots__ = ("_base", "_plus", "_minus")

    def __init__(self, base: dict[str, tuple[str, ...]] | None = None) -> None:
        self._base: dict[str, tuple[str, ...]] = base if base is not None else {}
        self._plus: dict[str, set[str]] = {}  # paths filed since the tuple was built
        self._minus: dict[str, set[str]] = {}  # paths of the tuple no longer filed

    @classmethod
    def from_lists(cls, lists: dict[str, list[str]]) -> PathIndex:
        """An index holding ``lists`` (each list without repeats); empties ``lists`` as it goes,
        so a list and its tuple never both exist for long."""
        base: dict[str, tuple[str, ...]] = {}
        while lists:
            key, paths = lists.popitem()
            if paths:
                base[key] = tuple(paths)
        return cls(base)

    def _fold(self, key: str) -> None:
        base = self._base.get(key, ())
        minus = self._minus.pop(key, None)
        plus = self._plus.pop(key, None)
        if minus:
            base = tuple([p for p in base if p not in minus])
        if plus:
            base += tuple(sorted(plus))
        if base:
            self._base[key] = base
        else:
            self._base.pop(key, None)

    def _fold_all(self) -> None:
        for key in [*self._plus, *self._minus]:
            if key in self._plus or key in self._minus:
                self._fold(key)

    def count(self, key: str) -> int:
        """How many paths are filed under ``key`` (O(1), without folding)."""
        n = len(self._base.get(key, ()))
        if key in self._minus:
            n -= len(self._minus[key])
        if key in self._plus:
            n += len(self._plus[key])
        return n

    def add(self, key: str, path: str) -> bool:
        """File ``path`` under ``key`` (it must not be filed there); True when the key is new."""
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
        plus = self._plus.get(key)
        if plus is not None and path in plus:
            plus.discard(path)
            if not plus:
                del self._plus[key]
        else:
            self._minus.setdefault(key, set()).add(path)
        return self.count(key) == 0

    def get(self, key: str, default=None):  # type: ignore[override]
        """The paths filed under ``key``, or ``default`` when there are none."""
        if key in self._plus or key in self._minus:
            self._fold(key)
        return self._base.get(key, default)

    def __getitem__(self, key: str) -> tuple[str, ...]:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __contains__(self, key: object) -> bool:
        if key in self._plus or key in self._minus:
            self._fold(key)  # type: ignore[arg-type]
        return key in self._base

    def __iter__(self) -> Iterator[str]:
        self._fold_all()
        return iter(list(self._base))

    def __len__(self) -> int:
        self._fold_all()
        return len(self._base)

    def __repr__(self) -> str:
        return f"PathIndex({dict(self.items())!r})"


class Vault:
    """The live index of one vault. Mutated only through ``upsert``/``remove``/``set_vocabulary``."""

    def __init__(self, root: str | None = None, *, label_first: bool = False) -> None:
        self.root = root
        self.label_first = label_first
        self.pages: dict[str, Page] = {}
        self.fields: dict[str, PageFields] = {}
        self.vocabulary: Vocabulary = EMPTY
        self.postings = PathIndex()  # every token of every field -> pages
        self.stem_tokens: dict[str, set[str]] = {}
        self.name_postings = PathIndex()  # title and alias tokens only
        # tag, heading and path tokens, one index each (search's upper bounds: each channel
        # bounds only the pages holding a query word there)
        self.tag_postings = PathIndex()
        self.heading_postings = PathIndex()
        self.path_postings = PathIndex()
        # body tokens -> the pages holding them twice, and three times or more: a term's
        # postings by body count, so search bounds its holders without looking at their counts
        self.body_twice = PathIndex()
        self.body_thrice = PathIndex()
        self.sorted_name_tokens: list[str] = []
        self.by_path: dict[str, str] = {}  # casefolded path without .md -> the first of _path_holders
        self._path_holders = PathIndex()  # pages whose paths differ only in case
        self.by_stem = PathIndex()
        self.by_title = PathIndex()
        self.by_alias = PathIndex()
        self.linkers = PathIndex()
        self.tag_pages = PathIndex()
        self.generation = 0  # bumped on every change: callers may cache per generation
        self.field_lengths = [0, 0, 0, 0, 0]  # sums of PageFields.lengths (BM25 average lengths)
        # Where every link leads, built on first need (``_resolved``) and then kept up to date.
        self._links: dict[str, tuple[Resolution, ...]] | None = None  # path -> per outlink
        self._links_stored: tuple[Any, ...] | None = None  # a snapshot's link index, restored on first need
        self._targets: dict[str, tuple[str, ...]] = {}  # path -> kind, target, kind, target... resolved
        self._incoming: dict[str, set[str]] = {}  # target path -> pages linking to it
        self._memo: dict[tuple[str, bool, str | None], Resolution] = {}  # resolve() answers
        self._linker_counts: dict[str, int] = {}  # linker_count() answers, dropped as linkers change

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
    ) -> Vault:
        """A vault from groups of pages, each with its ``index_part``; no path in two groups.

        The same state as upserting every page in turn, built by merging per-group lists, so
        the work here grows with groups x keys, not pages x keys: parse workers and the cache
        hand over groups whose parts are already computed.
        """
        vault = cls(root, label_first=label_first)
        lists: dict[str, dict[str, list[str]]] = {name: {} for name in INDEX_NAMES}
        stems: dict[str, set[str]] = {}
        lengths = [0, 0, 0, 0, 0]
        pages, fields_by_path = vault.pages, vault.fields
        for pairs, part in parts:
            for page, fields in pairs:
                pages[page.path] = page
                fields_by_path[page.path] = fields
            for name in INDEX_NAMES:
                merged = lists[name]
                for key, paths in part[name].items():  # a part is used once: its lists are taken over
                    found = merged.get(key)
                    if found is None:
                        merged[key] = paths
                    else:
                        found.extend(paths)
            for s, tokens in part["stems"].items():
                group = stems.get(s)
                if group is None:
                    stems[s] = set(tokens)
                else:
                    group.update(tokens)
            lengths = [total + n for total, n in zip(lengths, part["lengths"])]
        vault.sorted_name_tokens = sorted(lists["name_postings"])
        vault.by_path = {key: min(paths, key=_by_len_then_path) for key, paths in lists["_path_holders"].items()}
        for name, found in lists.items():
            setattr(vault, name, PathIndex.from_lists(found))
        vault.stem_tokens = stems
        vault.field_lengths = lengths
        vault.generation = len(pages)
        return vault

    # What a snapshot leaves out: the pages and fields travel apart, the rest is not index.
    _NOT_INDEX = frozenset(
        ("root", "label_first", "pages", "fields", "vocabulary", "generation", "_links", "_targets", "_incoming",
         "_memo")
    )

    @classmethod
    def index_names(cls) -> tuple[str, ...]:
        """The attributes a snapshot holds: every index of a vault (sorted)."""
        return tuple(sorted(set(vars(cls())) - cls._NOT_INDEX))

    def snapshot(self, *, links: bool = True) -> dict[str, Any]:
        """Every index as plain data (for ``from_snapshot``; ``marshal`` can write it). With
        ``links``, where every link resolves too (resolving all of them first if need be)."""
        out: dict[str, Any] = {}
        for piece in self.snapshot_pieces(links=links):
            out.update(piece)
        return out

    def snapshot_pieces(self, *, links: bool = True) -> Iterator[dict[str, Any]]:
        """``snapshot`` one index at a time (the link state last): written piece by piece, the
        plain data of only one is made and marshalled at once."""
        for name in self.index_names():
            value = getattr(self, name)
            if isinstance(value, PathIndex):
                value._fold_all()
                yield {name: ("paths", value._base)}
            else:
                yield {name: ("value", value)}
        yield {_LINKS: ("links", self._links_state() if links else None)}

    def _links_state(self) -> tuple[Any, ...]:
        resolved = self._resolved()
        table: list[tuple[Any, ...]] = []
        ids: dict[int, int] = {}

        def number(r: Resolution) -> int:
            n = ids.get(id(r))
            if n is None:
                n = ids[id(r)] = len(table)
                table.append((r.path, r.via, r.candidates, r.attachment))
            return n

        per_page = {path: tuple(map(number, found)) for path, found in resolved.items()}
        incoming = {target: tuple(sources) for target, sources in self._incoming.items()}
        return table, per_page, self._targets, incoming  # the memo refills as pages change

    def _restore_links(self, state: tuple[Any, ...]) -> None:
        table, per_page, targets, incoming = state
        made = [Resolution(*r) for r in table]
        self._links = {path: tuple(made[n] for n in found) for path, found in per_page.items()}
        self._memo = {}
        self._targets = targets
        self._incoming = {target: set(sources) for target, sources in incoming.items()}

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
        if tuple(sorted(set(snapshot) - {_LINKS})) != cls.index_names():
            raise ValueError("index snapshot of another vault layout")
        vault = cls(root, label_first=label_first)
        for name, (kind, value) in snapshot.items():
            if kind == "links":
                vault._links_stored = value  # restored on first need: a search never needs it
            else:
                setattr(vault, name, PathIndex(value) if kind == "paths" else value)
        for page, fields in pairs:
            vault.pages[page.path] = page
            vault.fields[page.path] = fields
        vault.generation = len(vault.pages)
        return vault

    def set_vocabulary(self, vocabulary: Vocabulary) -> None:
        """Replace the synonym groups; takes effect on the next query."""
        self.vocabulary = vocabulary
        self.generation += 1

    def upsert(self, page: Page, fields: PageFields | None = None) -> None:
        """Add or replace one page, in time proportional to that page.

        ``fields`` may be given when already computed (``page_fields(page)``). Only the index
        keys that the page gained or lost are touched.
        """
        path = page.path
        old = self.pages.get(path)
        old_fields = self.fields.get(path)
        if fields is None:
            fields = page_fields(page)
        self.pages[path] = page
        self.fields[path] = fields
        if old_fields is not None:
            self.field_lengths = [total - n for total, n in zip(self.field_lengths, old_fields.lengths)]
        self.field_lengths = [total + n for total, n in zip(self.field_lengths, fields.lengths)]
        if old is None:
            key = _noext(path).casefold()
            self._path_holders.add(key, path)
            self.by_path[key] = min(self._path_holders[key], key=_by_len_then_path)
        self._refile(old, old_fields, page, fields)
        self._relink(old, page)
        self._linker_counts.pop(path, None)
        self.generation += 1

    def remove(self, path: str) -> None:
        """Drop one page (a no-op for an unknown path), in time proportional to that page."""
        page = self.pages.pop(path, None)
        if page is None:
            return
        fields = self.fields.pop(path)
        self.field_lengths = [total - n for total, n in zip(self.field_lengths, fields.lengths)]
        key = _noext(path).casefold()
        self._path_holders.discard(key, path)
        if key in self._path_holders:  # another page's path differs only in case: it takes over
            self.by_path[key] = min(self._path_holders[key], key=_by_len_then_path)
        else:
            self.by_path.pop(key, None)
        self._refile(page, fields, None, None)
        self._relink(page, None)
        self._linker_counts.pop(path, None)
        self.generation += 1

    def _refile(self, old: Page | None, old_fields: PageFields | None, new: Page | None,
                new_fields: PageFields | None) -> None:
        """Move one path's index entries from what ``old`` files to what ``new`` files."""
        path = (new or old).path  # type: ignore[union-attr]
        before = old_fields.vocabulary() if old_fields is not None else set()
        after = new_fields.vocabulary() if new_fields is not None else set()
        for token in before - after:
            if self.postings.discard(token, path):
                s = stem(token)
                group = self.stem_tokens.get(s)
                if group is not None:
                    group.discard(token)
                    if not group:
                        del self.stem_tokens[s]
        for token in after - before:
            if self.postings.add(token, path):
                self.stem_tokens.setdefault(stem(token), set()).add(token)
        before = (old_fields.title_set | old_fields.alias_set) if old_fields is not None else frozenset()
        after = (new_fields.title_set | new_fields.alias_set) if new_fields is not None else frozenset()
        for token in before - after:
            if self.name_postings.discard(token, path):
                i = bisect.bisect_left(self.sorted_name_tokens, token)
                if i < len(self.sorted_name_tokens) and self.sorted_name_tokens[i] == token:
                    del self.sorted_name_tokens[i]
        for token in after - before:
            if self.name_postings.add(token, path):
                bisect.insort(self.sorted_name_tokens, token)
        old_keys = (*_meta_tokens(old_fields), *_repeated(old_fields)) if old_fields is not None else _NO_KEYS
        new_keys = (*_meta_tokens(new_fields), *_repeated(new_fields)) if new_fields is not None else _NO_KEYS
        indexes = (self.tag_postings, self.heading_postings, self.path_postings, self.body_twice, self.body_thrice)
        for index, before, after in zip(indexes, old_keys, new_keys):
            _move_keys(index, path, before, after)
        for index, keys in (
            (self.by_stem, lambda p: {p.stem.casefold()}),
            (self.by_title, lambda p: {p.title.casefold()}),
            (self.by_alias, lambda p: {a.casefold() for a in p.aliases}),
            (self.linkers, _link_keys),
            (self.tag_pages, lambda p: set(p.tags)),
        ):
            before = keys(old) if old is not None else set()
            after = keys(new) if new is not None else set()
            if not _move_keys(index, path, before, after):
                continue
            if index is self.linkers and self._linker_counts:
                for key in before ^ after:
                    for holder in self.by_stem.get(key, ()):
                        self._linker_counts.pop(holder, None)

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

    def linker_count(self, page: Page) -> int:
        """How many other pages link to ``page`` by its file name (``linkers`` of its stem,
        itself left out); remembered until a link to that name comes or goes."""
        n = self._linker_counts.get(page.path)
        if n is None:
            linkers = self.linkers.get(page.stem.casefold())
            n = self._linker_counts[page.path] = len(linkers) - (page.path in linkers) if linkers else 0
        return n

    def page_keys(self, page: Page) -> set[str]:
        """The names a link can use to reach ``page``: file stem, title and aliases, casefolded."""
        return {page.stem.casefold(), page.title.casefold(), *(a.casefold() for a in page.aliases)}

    # --- link resolution ------------------------------------------------------------------

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

    def resolve_link(self, link: Link, source: str) -> Resolution:
        """Resolve one of ``source``'s links or typed edges."""
        return self.resolve(link.target, source, link.kind)

    # --- the graph ------------------------------------------------------------------------

    def outlinks(self, path: str) -> list[tuple[Link, Resolution]]:
        """The page's body links and typed edges, each with where it resolves, in page order."""
        page = self.pages.get(path)
        if page is None:
            return []
        return list(zip((*page.edges, *page.links), self.resolved_links(path)))

    def resolved_links(self, path: str) -> tuple[Resolution, ...]:
        """Where each of the page's typed edges, then body links, resolves (``outlinks`` order)."""
        return self._resolved().get(path, ())

    def outlink_targets(self, path: str) -> list[tuple[str, str]]:
        """``(kind, target path)`` of the page's links and edges that resolve to a page, in
        ``outlinks`` order, without unpacking the page's links."""
        self._resolved()
        flat = self._targets.get(path, ())
        return list(zip(flat[::2], flat[1::2]))

    def link_kinds(self, source: str, target: str) -> list[str]:
        """The kinds (``wiki``, ``embed``, ``md`` or a typed edge) of the links and edges of
        ``source`` that resolve to ``target``, in ``outlinks`` order; O(links of source) in C."""
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

    def outlink_paths(self, path: str) -> set[str]:
        """The pages the page's links and edges resolve to (a new set; ``outlink_targets``
        without the kinds)."""
        self._resolved()
        return set(self._targets.get(path, ())[1::2])

    def linking_pages(self, path: str) -> set[str]:
        """The pages with at least one link or edge that names ``path`` and resolves to it (itself
        included when it links to itself by name, not by ``[[#heading]]``); O(answer)."""
        self._resolved()
        return set(self._incoming.get(path, ()))

    def backlinks(self, path: str) -> list[tuple[str, Link]]:
        """Every (source path, link) that resolves to ``path``, sorted by source then position."""
        if path not in self.pages:
            return []
        self._resolved()
        out: list[tuple[str, Link]] = []
        for source in sorted(self._incoming.get(path, ())):
            spage = self.pages[source]
            for link, res in zip((*spage.edges, *spage.links), self._links.get(source, ())):  # type: ignore[union-attr]
                if res.path == path and res.via != "self":
                    out.append((source, link))
        return out

    # Link resolution for every page, kept current: resolve() answers are memoised by what they
    # depend on (the target text, Markdown or not, and the source's folder only for ./ ../ and
    # Markdown links); a change to any page's names or the set of paths clears the memo and
    # re-resolves the pages whose links could name that page (``linkers``), so an edit that
    # keeps a page's names costs its own links only.

    def _resolved(self) -> dict[str, tuple[Resolution, ...]]:
        if self._links is None and self._links_stored is not None:
            stored, self._links_stored = self._links_stored, None
            self._restore_links(stored)
        if self._links is None:
            self._links = {}
            self._targets = {}
            self._incoming = {}
            for path in self.pages:
                self._link_page(path)
        return self._links

    def _resolve_memo(self, target: str, source: str, kind: str) -> Resolution:
        t = target.strip().replace("\\", "/")
        md = kind == "md"
        where = source if not t else (posixpath.dirname(source) if md or t.startswith(("./", "../")) else None)
        key = (t, md, where)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self.resolve(target, source, kind)
        return found

    def _link_page(self, path: str) -> None:
        links = self._links
        assert links is not None
        old = links.pop(path, ())
        page = self.pages.get(path)
        kinds = link_kinds(page) if page is not None else ()
        new = tuple(self._resolve_memo(t, path, kind) for kind, t in kinds)
        self._targets.pop(path, None)
        if page is not None:
            links[path] = new
            self._targets[path] = tuple(x for (kind, _t), r in zip(kinds, new) if r.path is not None for x in (kind, r.path))
        # ``[[#Heading]]`` resolves to its own page ("self") but names no page: not a backlink.
        before = {r.path for r in old if r.path is not None and r.via != "self"}
        after = {r.path for r in new if r.path is not None and r.via != "self"}
        for target in before - after:
            holders = self._incoming.get(target)
            if holders is not None:
                holders.discard(path)
                if not holders:
                    del self._incoming[target]
        for target in after - before:
            self._incoming.setdefault(target, set()).add(path)

    def _relink(self, old: Page | None, new: Page | None) -> None:
        if self._links is None:
            if self._links_stored is None:
                return  # not built yet: it will be, from the pages as they are then
            self._resolved()  # a stored index must take this change too
        path = (new or old).path  # type: ignore[union-attr]
        affected = {path}
        if old is None or new is None or self.page_keys(old) != self.page_keys(new):
            self._memo.clear()
            for key in self.page_keys(old) if old is not None else ():
                affected.update(self.linkers.get(key, ()))
            for key in self.page_keys(new) if new is not None else ():
                affected.update(self.linkers.get(key, ()))
        for source in sorted(affected):
            self._link_page(source)

    def edge_targets(self, path: str, predicate: str) -> list[str]:
        """Resolved targets of one typed edge predicate of a page, unique, sorted by title."""
        page = self.pages.get(path)
        if page is None:
            return []
        found = {
            r.path
            for link in page.edges
            if link.kind == predicate and (r := self.resolve_link(link, path)).path is not None
        }
        return sorted(found, key=lambda p: (self.pages[p].title.casefold(), p))

    def name_tokens_with_prefix(self, prefix: str, limit: int = PREFIX_TOKENS) -> list[str]:
        """Title and alias tokens that start with ``prefix`` (sorted; at most ``limit``)."""
        i = bisect.bisect_left(self.sorted_name_tokens, prefix)
        out = []
        while i < len(self.sorted_name_tokens) and len(out) < limit:
            token = self.sorted_name_tokens[i]
            if not token.startswith(prefix):
                break
            out.append(token)
            i += 1
        return out


_LINKS = "(links)"  # the snapshot entry of the resolved-link index

INDEX_NAMES = (
    "postings", "name_postings", "tag_postings", "heading_postings", "path_postings", "body_twice", "body_thrice",
    "_path_holders", "by_stem", "by_title", "by_alias", "linkers", "tag_pages"
)
_NO_KEYS = (frozenset(),) * 5


def index_part(pairs: Iterable[tuple[Page, PageFields]]) -> dict[str, Any]:
    """What a group of pages (paths unique) adds to each index, for ``Vault.from_parts``.

    Plain data (dicts of lists of str, ints), so parse workers can compute it beside the pages
    and the cache can store it with them: ``{index name: {key: [path, ...]}, "stems": {stem:
    [token, ...]}, "lengths": [sums of PageFields.lengths]}``.
    """
    lists: dict[str, dict[str, list[str]]] = {name: {} for name in INDEX_NAMES}
    postings, names, holders = lists["postings"], lists["name_postings"], lists["_path_holders"]
    metas = lists["tag_postings"], lists["heading_postings"], lists["path_postings"]
    twice, thrice = lists["body_twice"], lists["body_thrice"]
    by_stem, by_title, by_alias = lists["by_stem"], lists["by_title"], lists["by_alias"]
    linkers, tag_pages = lists["linkers"], lists["tag_pages"]
    lengths = [0, 0, 0, 0, 0]
    for page, fields in pairs:
        path = page.path
        # ``fields.vocabulary()``: the body's tokens (distinct already, with their counts for
        # body_twice and body_thrice), then the other fields' tokens the body lacks
        counts = fields.body_counts
        for token, n in zip(counts.tokens, counts.counts):
            found = postings.get(token)
            if found is None:
                postings[token] = [path]
            else:
                found.append(path)
            if n >= 2:
                (twice if n == 2 else thrice).setdefault(token, []).append(path)
        named = fields.title_set | fields.alias_set
        for token in named.union(fields.tag_tokens, fields.tag_names, fields.file_tokens):
            if not counts.count(token):
                postings.setdefault(token, []).append(path)
        for token in named:
            names.setdefault(token, []).append(path)
        for meta, tokens in zip(metas, _meta_tokens(fields)):
            for token in tokens:
                meta.setdefault(token, []).append(path)
        holders.setdefault(_noext(path).casefold(), []).append(path)
        by_stem.setdefault(page.stem.casefold(), []).append(path)
        by_title.setdefault(page.title.casefold(), []).append(path)
        for key in {a.casefold() for a in page.aliases}:
            by_alias.setdefault(key, []).append(path)
        for key in _link_keys(page):
            linkers.setdefault(key, []).append(path)
        for tag in set(page.tags):
            tag_pages.setdefault(tag, []).append(path)
        lengths = [total + n for total, n in zip(lengths, fields.lengths)]
    stems: dict[str, list[str]] = {}
    for token in postings:
        stems.setdefault(stem(token), []).append(token)
    part: dict[str, Any] = dict(lists)
    part["stems"] = stems
    part["lengths"] = lengths
    return part


def _move_keys(index: PathIndex, path: str, before: AbstractSet[str], after: AbstractSet[str]) -> bool:
    """File ``path`` under the keys of ``after`` instead of those of ``before``; False when
    they are the same keys (nothing to do)."""
    if before == after:
        return False
    for key in before - after:
        index.discard(key, path)
    for key in after - before:
        index.add(key, path)
    return True


def _repeated(fields: PageFields) -> tuple[set[str], set[str]]:
    """A page's body tokens that occur twice, and three times or more (``body_twice``,
    ``body_thrice``)."""
    counts = fields.body_counts
    twice: set[str] = set()
    thrice: set[str] = set()
    for token, n in zip(counts.tokens, counts.counts):
        if n >= 2:
            (twice if n == 2 else thrice).add(token)
    return twice, thrice


def _meta_tokens(fields: PageFields) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The tokens of a page's tags, headings and path (``tag_postings``, ``heading_postings``,
    ``path_postings``): where a query term can earn points besides the title, the aliases and
    the body."""
    return fields.tag_names | fields.tag_tokens, fields.heading_set, fields.path_tokens


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
