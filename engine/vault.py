"""Vault: pages by path, their fields, inverted indexes, link resolution and the link graph.

Updated one page at a time: ``upsert(page)`` and ``remove(path)`` cost time proportional to
that page (its tokens, names and links), never to the vault. Link resolution is computed when
asked, from name indexes, so a link's target is always right after any page appears,
disappears or is renamed; ``linkers`` finds the pages whose links could point at a page by name.
"""

from __future__ import annotations

import bisect
import posixpath
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

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


class Vault:
    """The live index of one vault. Mutated only through ``upsert``/``remove``/``set_vocabulary``."""

    def __init__(self, root: str | None = None, *, label_first: bool = False) -> None:
        self.root = root
        self.label_first = label_first
        self.pages: dict[str, Page] = {}
        self.fields: dict[str, PageFields] = {}
        self.vocabulary: Vocabulary = EMPTY
        self.postings: dict[str, set[str]] = {}
        self.stem_tokens: dict[str, set[str]] = {}
        self.name_postings: dict[str, set[str]] = {}  # title and alias tokens only
        self.sorted_name_tokens: list[str] = []
        self.by_path: dict[str, str] = {}  # casefolded path without .md -> the first of _path_holders
        self._path_holders: dict[str, set[str]] = {}  # pages whose paths differ only in case
        self.by_stem: dict[str, set[str]] = {}
        self.by_title: dict[str, set[str]] = {}
        self.by_alias: dict[str, set[str]] = {}
        self.linkers: dict[str, set[str]] = {}
        self.tag_pages: dict[str, set[str]] = {}
        self.generation = 0  # bumped on every change: callers may cache per generation

    # --- building ------------------------------------------------------------------------

    @classmethod
    def from_pages(cls, pages: Iterable[Page], root: str | None = None, *, label_first: bool = False) -> Vault:
        """A vault holding ``pages`` (their order does not matter)."""
        vault = cls(root, label_first=label_first)
        for page in pages:
            vault.upsert(page)
        return vault

    def set_vocabulary(self, vocabulary: Vocabulary) -> None:
        """Replace the synonym groups; takes effect on the next query."""
        self.vocabulary = vocabulary
        self.generation += 1

    def upsert(self, page: Page) -> None:
        """Add or replace one page, in time proportional to that page."""
        if page.path in self.pages:
            self.remove(page.path)
        path = page.path
        fields = page_fields(page)
        self.pages[path] = page
        self.fields[path] = fields
        for token in fields.vocabulary():
            holders = self.postings.get(token)
            if holders is None:
                holders = self.postings[token] = set()
                self.stem_tokens.setdefault(stem(token), set()).add(token)
            holders.add(path)
        for token in fields.title_set | fields.alias_set:
            holders = self.name_postings.get(token)
            if holders is None:
                holders = self.name_postings[token] = set()
                bisect.insort(self.sorted_name_tokens, token)
            holders.add(path)
        key = _noext(path).casefold()
        holders = self._path_holders.setdefault(key, set())
        holders.add(path)
        self.by_path[key] = min(holders, key=_by_len_then_path)
        for key, index in self._name_keys(page):
            index.setdefault(key, set()).add(path)
        for key in self._link_keys(page):
            self.linkers.setdefault(key, set()).add(path)
        for tag in page.tags:
            self.tag_pages.setdefault(tag, set()).add(path)
        self.generation += 1

    def remove(self, path: str) -> None:
        """Drop one page (a no-op for an unknown path), in time proportional to that page."""
        page = self.pages.pop(path, None)
        if page is None:
            return
        fields = self.fields.pop(path)
        for token in fields.vocabulary():
            holders = self.postings.get(token)
            if holders is None:
                continue
            holders.discard(path)
            if not holders:
                del self.postings[token]
                s = stem(token)
                group = self.stem_tokens.get(s)
                if group is not None:
                    group.discard(token)
                    if not group:
                        del self.stem_tokens[s]
        for token in fields.title_set | fields.alias_set:
            holders = self.name_postings.get(token)
            if holders is None:
                continue
            holders.discard(path)
            if not holders:
                del self.name_postings[token]
                i = bisect.bisect_left(self.sorted_name_tokens, token)
                if i < len(self.sorted_name_tokens) and self.sorted_name_tokens[i] == token:
                    del self.sorted_name_tokens[i]
        key = _noext(path).casefold()
        _discard(self._path_holders, key, path)
        if key in self._path_holders:  # another page's path differs only in case: it takes over
            self.by_path[key] = min(self._path_holders[key], key=_by_len_then_path)
        else:
            self.by_path.pop(key, None)
        for key, index in self._name_keys(page):
            _discard(index, key, path)
        for key in self._link_keys(page):
            _discard(self.linkers, key, path)
        for tag in page.tags:
            _discard(self.tag_pages, tag, path)
        self.generation += 1

    def _name_keys(self, page: Page) -> Iterator[tuple[str, dict[str, set[str]]]]:
        yield page.stem.casefold(), self.by_stem
        yield page.title.casefold(), self.by_title
        for alias in page.aliases:
            yield alias.casefold(), self.by_alias

    @staticmethod
    def _link_keys(page: Page) -> set[str]:
        keys: set[str] = set()
        for link in page.links:
            keys.update(link_keys(link.target))
        for link in page.edges:
            keys.update(link_keys(link.target))
        return keys

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
        ext = posixpath.splitext(base)[1].lower()
        if ext and ext != ".md" and not _is_plausible_name_ext(ext):
            return Resolution(None, None, (), attachment=True)
        noext = _noext(t)
        source_dir = posixpath.dirname(source) if source else ""

        if "/" in noext or kind == "md":
            tries = []
            if noext.startswith(("./", "../")) or kind == "md":
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
        return [(link, self.resolve_link(link, path)) for link in (*page.edges, *page.links)]

    def backlinks(self, path: str) -> list[tuple[str, Link]]:
        """Every (source path, link) that resolves to ``path``, sorted by source then position."""
        page = self.pages.get(path)
        if page is None:
            return []
        keys = self.page_keys(page)
        sources: set[str] = set()
        for key in keys:
            sources.update(self.linkers.get(key, ()))
        out: list[tuple[str, Link]] = []
        for source in sorted(sources):
            spage = self.pages[source]
            for link in (*spage.edges, *spage.links):
                if keys.isdisjoint(link_keys(link.target)):
                    continue
                if self.resolve_link(link, source).path == path:
                    out.append((source, link))
        return out

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

    def name_tokens_with_prefix(self, prefix: str, limit: int = 500) -> list[str]:
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


def _discard(index: dict[str, set[str]], key: str, path: str) -> None:
    holders = index.get(key)
    if holders is not None:
        holders.discard(path)
        if not holders:
            del index[key]


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
