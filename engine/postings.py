"""The search postings of a vault: which pages hold each token, field by field.

One part of ``Vault`` (``Vault.search_index``), fed one page at a time by ``upsert``/``remove``
(the keys a page gained or lost, nothing else) or built in bulk from ``lists_of`` parts. Search
and scoring read its containers through the vault's attributes of the same names.
"""

from __future__ import annotations

import bisect
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from .fields import PageFields
from .model import Page
from .pathindex import PathIndex, move_keys, path_index, piece, positions
from .text import stem

stem_word = stem.__wrapped__  # every token of a bulk build, once: not through stem's memo of recent words

PREFIX_TOKENS = 500  # name tokens a partial term expands to, at most
COUNTS_KEPT = 4  # ``counts_by_page`` answers kept (the terms asked most recently) ...
COUNTS_KEPT_MIN = 4096  # ... of terms held by at least this many pages (others are quick to make)
PREFIXES_KEPT = 32  # ``prefixed`` and ``starting`` answers kept (the prefixes asked most recently)

_NO_KEYS = (frozenset(),) * 5


class SearchIndex:
    """Token -> pages postings, per field, with what search bounds and expands terms by.

    - ``postings``: every token of every field -> pages; ``stem_tokens``: stem -> those tokens;
    - ``name_postings``: title and alias tokens only, and ``sorted_name_tokens`` (prefixes);
    - ``first_postings``: the first token of the title and of each alias (a name that starts
      with what is typed: prefix-phrase, without decoding the pages a prefix brings in);
    - ``tag_postings``, ``heading_postings``, ``path_postings``: one index per field (search's
      upper bounds: each channel bounds only the pages holding a query word there);
    - ``body_twice``, ``body_thrice``: body tokens -> the pages holding them twice, and three
      times or more (a term's postings by body count, so search bounds its holders without
      looking at their counts);
    - ``field_lengths``: sums of ``PageFields.lengths`` (BM25 average lengths).

    Every container is made once and changed in place: the vault's attributes refer to them.
    """

    LISTS = (
        "postings", "name_postings", "first_postings", "tag_postings", "heading_postings", "path_postings",
        "body_twice", "body_thrice",
    )  # its key -> paths indexes, in a snapshot and a bulk part

    def __init__(self) -> None:
        self.postings = PathIndex()
        # stem -> the tokens with it, sorted (a tuple: most stems have one or two tokens, and a
        # set of one costs 216 bytes); sets while a bulk build adds to them (``take``, ``finish``)
        self.stem_tokens: dict[str, tuple[str, ...]] = {}
        self.name_postings = PathIndex()
        self.first_postings = PathIndex()
        self.tag_postings = PathIndex()
        self.heading_postings = PathIndex()
        self.path_postings = PathIndex()
        self.body_twice = PathIndex()
        self.body_thrice = PathIndex()
        self.sorted_name_tokens: list[str] = []
        self.field_lengths = [0, 0, 0, 0, 0]
        self.path_table: tuple[str, ...] = ()  # what packed postings count positions in (a snapshot's)
        self._stemmed: set[str] = set()  # while built in bulk: the tokens whose stems ``take`` made
        self._counts: dict[str, dict[str, int]] = {}  # ``counts_by_page``'s kept, oldest first
        self._refiled = 0  # pages refiled so far: an answer made while one was refiled is not kept
        self._prefixes: dict[tuple[bool, str], Any] = {}  # ``prefixed``'s and ``starting``'s kept, oldest first
        self._renamed = 0  # pages refiled with other name tokens so far (as ``_refiled``, for ``_prefixes``)

    # --- in bulk ---------------------------------------------------------------------------

    @staticmethod
    def lists_of(pairs: Sequence[tuple[Page, PageFields]], position: Mapping[str, bytes] | None = None
                 ) -> dict[str, Any]:
        """What ``pairs`` add to each of its indexes, as plain data (see ``vault.index_part``).

        With ``position`` (path -> its position in the vault's path table, as bytes:
        ``pathindex.positions``), each key's paths are those positions joined, the packed form
        ``PathIndex.from_packed`` holds: a parse worker's part then travels as a few bytes a
        path, and merging parts is joining bytes.
        """
        lists: dict[str, dict[str, list[str]]] = {name: {} for name in SearchIndex.LISTS}
        postings, names, firsts = lists["postings"], lists["name_postings"], lists["first_postings"]
        metas = lists["tag_postings"], lists["heading_postings"], lists["path_postings"]
        twice, thrice = lists["body_twice"], lists["body_thrice"]
        lengths = [0, 0, 0, 0, 0]
        for page, fields in pairs:
            path = page.path
            if position is not None:
                path = position[path]
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
            named = {*fields.title_set, *fields.alias_set}
            for token in named.union(fields.tag_tokens, fields.tag_names, fields.file_tokens):
                if not counts.count(token):
                    postings.setdefault(token, []).append(path)
            for token in named:
                names.setdefault(token, []).append(path)
            for token in first_tokens(fields):
                firsts.setdefault(token, []).append(path)
            for meta, tokens in zip(metas, _meta_tokens(fields)):
                for token in tokens:
                    meta.setdefault(token, []).append(path)
            lengths = [total + n for total, n in zip(lengths, fields.lengths)]
        part: dict[str, Any] = dict(lists)
        if position is not None:
            join = b"".join
            for name in SearchIndex.LISTS:  # (most keys of a group are on one page of it)
                part[name] = {key: paths[0] if len(paths) == 1 else join(paths) for key, paths in lists[name].items()}
        part["lengths"] = lengths
        return part

    def take(self, pairs: Sequence[tuple[Page, PageFields]], part: dict[str, Any]) -> None:
        """While built in bulk: merge what of one part is not in ``LISTS``: its lengths, and
        the stems of the tokens no part before it had.

        Stems are made here, once per distinct token of the vault, rather than in each parse
        worker for every token of its groups: the Porter stemmer is pure Python (~20 us a word),
        and two workers see most of a vault's words each.
        """
        stems, seen = self.stem_tokens, self._stemmed
        for token in part["postings"]:
            if token not in seen:
                seen.add(token)
                s = stem_word(token)
                group = stems.get(s)
                if group is None:
                    stems[s] = {token}
                else:
                    group.add(token)
        self.field_lengths[:] = [total + n for total, n in zip(self.field_lengths, part["lengths"])]

    def finish(self, lists: dict[str, dict[str, Any]], table: tuple[str, ...] | None = None) -> None:
        """End a bulk build: the indexes of ``LISTS`` from every part's lists merged (taken
        over); with ``table``, the parts were packed against it (``lists_of``'s ``position``),
        a key's bytes grown in a ``bytearray`` when several parts held it (made bytes here)."""
        self.sorted_name_tokens[:] = sorted(lists["name_postings"])
        self._stemmed = set()
        stems = self.stem_tokens
        for s, group in stems.items():
            stems[s] = tuple(sorted(group))
        for name in self.LISTS:
            if table is None:
                setattr(self, name, PathIndex.from_lists(lists[name]))
            else:
                blobs = lists[name]
                for key, found in blobs.items():
                    if type(found) is not bytes:
                        blobs[key] = bytes(found)
                setattr(self, name, PathIndex.from_packed(blobs, table))
        if table is not None:
            self.path_table = table

    # --- snapshots -------------------------------------------------------------------------

    SNAPSHOT = (*LISTS, "stem_tokens", "sorted_name_tokens", "field_lengths", "path_table")

    def snapshot_pieces(self, paths: Iterable[str] = ()) -> Iterator[dict[str, Any]]:
        """Its indexes, one piece at a time, as plain data (``from_snapshot``).

        The postings are stored packed (``PathIndex.packed``): positions in ``path_table``,
        the paths of the snapshot this index was read from followed by ``paths`` it lacks
        (so keys that did not change are written as they were read), and kept so in memory.
        """
        table = self.path_table
        known = set(table)
        new = sorted(path for path in paths if path not in known)
        if new:
            table = self.path_table = (*table, *new)
        position = positions(table)
        yield {"path_table": ("value", tuple(map(sys.intern, table)))}  # one string a path when read (``cache``)
        for name in self.LISTS:
            try:
                packed = getattr(self, name).packed(table, position, adopt=True)
            except KeyError as exc:  # a path in no table: never, but never a broken file either
                raise ValueError(f"{name}: path {exc} not in the path table") from None
            yield {name: ("ids", packed)}
        for name in ("stem_tokens", "sorted_name_tokens", "field_lengths"):
            yield {name: ("value", getattr(self, name))}

    @classmethod
    def from_snapshot(cls, snapshot: dict[str, Any]) -> SearchIndex:
        """The index a ``snapshot_pieces`` wrote (every piece merged into one dict)."""
        index = cls()
        table = index.path_table = piece(snapshot, "path_table", "value")
        if not isinstance(table, tuple):
            raise ValueError("index snapshot with a path table of another kind")
        for name in cls.LISTS:
            setattr(index, name, path_index(snapshot, name, table))
        index.stem_tokens = piece(snapshot, "stem_tokens", "value")
        index.sorted_name_tokens = piece(snapshot, "sorted_name_tokens", "value")
        index.field_lengths = piece(snapshot, "field_lengths", "value")
        return index

    # --- one page at a time ----------------------------------------------------------------

    def upsert(self, path: str, old: PageFields | None, new: PageFields) -> None:
        """File the page at ``path`` under the keys of ``new`` instead of those of ``old``."""
        lengths = self.field_lengths
        if old is not None:
            lengths[:] = [total - n for total, n in zip(lengths, old.lengths)]
        lengths[:] = [total + n for total, n in zip(lengths, new.lengths)]
        self._refile(path, old, new)

    def remove(self, path: str, old: PageFields) -> None:
        """Unfile the page at ``path`` (whose fields were ``old``)."""
        lengths = self.field_lengths
        lengths[:] = [total - n for total, n in zip(lengths, old.lengths)]
        self._refile(path, old, None)

    def _refile(self, path: str, old: PageFields | None, new: PageFields | None) -> None:
        before = old.vocabulary() if old is not None else set()
        after = new.vocabulary() if new is not None else set()
        changed = before ^ after if self._counts else None  # what ``counts_by_page`` may forget
        for token in before - after:
            if self.postings.discard(token, path):
                s = stem(token)
                rest = tuple(t for t in self.stem_tokens.get(s, ()) if t != token)
                if rest:
                    self.stem_tokens[s] = rest
                else:
                    self.stem_tokens.pop(s, None)
        for token in after - before:
            if self.postings.add(token, path):
                s = stem(token)
                group = self.stem_tokens.get(s, ())
                if token not in group:
                    self.stem_tokens[s] = tuple(sorted((*group, token)))
        before = {*old.title_set, *old.alias_set} if old is not None else set()
        after = {*new.title_set, *new.alias_set} if new is not None else set()
        names = self.sorted_name_tokens
        for token in before - after:
            if self.name_postings.discard(token, path):
                i = bisect.bisect_left(names, token)
                if i < len(names) and names[i] == token:
                    del names[i]
        for token in after - before:
            if self.name_postings.add(token, path):
                bisect.insort(names, token)
        first_before = first_tokens(old) if old is not None else frozenset()
        first_after = first_tokens(new) if new is not None else frozenset()
        move_keys(self.first_postings, path, first_before, first_after)
        if before != after or first_before != first_after:  # what a kept prefix answer was made from
            self._renamed += 1
            self._prefixes.clear()
        old_keys = (*_meta_tokens(old), *_repeated(old)) if old is not None else _NO_KEYS
        new_keys = (*_meta_tokens(new), *_repeated(new)) if new is not None else _NO_KEYS
        indexes = (self.tag_postings, self.heading_postings, self.path_postings, self.body_twice, self.body_thrice)
        for index, before, after in zip(indexes, old_keys, new_keys):
            move_keys(index, path, before, after)
        if changed is not None:
            # a kept answer of a term whose holders or count tiers changed here is made again
            changed.update(old_keys[3] ^ new_keys[3], old_keys[4] ^ new_keys[4])
            for token in changed.intersection(self._counts):
                self._counts.pop(token, None)
        self._refiled += 1

    # --- reading ---------------------------------------------------------------------------

    def indexes(self) -> dict[str, Any]:
        """Every index it keeps, by name (for tests comparing two builds)."""
        return {name: getattr(self, name) for name in self.SNAPSHOT if name != "path_table"}

    def counts_by_page(self, term: str) -> dict[str, int]:
        """The pages holding ``term`` in any field, each with 1, 2 (twice in its body: in
        ``body_twice``) or 3 (three times or more: ``body_thrice``); read it, do not change it.
        The answers for the COUNTS_KEPT terms of at least COUNTS_KEPT_MIN pages asked most
        recently are kept until a page refiled gains or loses the term or changes its tier:
        as-you-type asks for the same words keystroke after keystroke ("on" at 100,000 pages:
        ~100,000 entries, ~8 ms to make), and typing in a page seldom moves a common word's tier."""
        kept = self._counts
        found = kept.pop(term, None)
        if found is not None:
            kept[term] = found  # (the most recent last)
            return found
        refiled = self._refiled
        counts = dict.fromkeys(self.postings.get(term, ()), 1)
        counts.update(dict.fromkeys(self.body_twice.get(term, ()), 2))
        counts.update(dict.fromkeys(self.body_thrice.get(term, ()), 3))
        if len(counts) >= COUNTS_KEPT_MIN and refiled == self._refiled:  # no page refiled meanwhile
            kept[term] = counts
            while len(kept) > COUNTS_KEPT:
                kept.pop(next(iter(kept)), None)
        return counts

    def prefixed(self, prefix: str) -> tuple[frozenset[str], bool]:
        """As-you-type: the pages with a title or alias token ``prefix`` expands to (the first
        ``PREFIX_TOKENS`` name tokens that start with it), and whether more tokens start with it
        (then any page may have one). Kept for the ``PREFIXES_KEPT`` prefixes asked most
        recently, until a page refiled changes its name tokens: one query asks it up to three
        times (its candidates, the names that match, the bounds), and typing asks the same
        letters again and again ("r" at 10,000 pages: 500 tokens, ~2,000 pages, ~0.4 ms)."""
        return self._kept((False, prefix))

    def starting(self, prefix: str) -> frozenset[str]:
        """The pages whose title or an alias has a first token that starts with ``prefix`` (every
        such token, from ``first_postings``: prefix-phrase); kept as ``prefixed`` is."""
        return self._kept((True, prefix))

    def _kept(self, key: tuple[bool, str]) -> Any:
        # each answer is kept with the count of renames it was made after: one put back by a
        # reader on another thread just after a rename cleared them is never believed
        kept, renamed = self._prefixes, self._renamed
        entry = kept.pop(key, None)
        if entry is not None and entry[0] == renamed:
            kept[key] = entry  # (the most recent last)
            return entry[1]
        first, prefix = key
        if first:
            tokens = self.name_tokens_with_prefix(prefix, len(self.sorted_name_tokens))
            found = frozenset(holders(self.first_postings, tokens))
        else:
            tokens = self.name_tokens_with_prefix(prefix)
            found = frozenset(holders(self.name_postings, tokens)), len(tokens) >= PREFIX_TOKENS
        if renamed == self._renamed:  # no page renamed meanwhile
            kept[key] = (renamed, found)
            for stale in list(kept)[:-PREFIXES_KEPT]:
                kept.pop(stale, None)
        return found

    def name_tokens_with_prefix(self, prefix: str, limit: int = PREFIX_TOKENS) -> list[str]:
        """Title and alias tokens that start with ``prefix`` (sorted; at most ``limit``)."""
        tokens = self.sorted_name_tokens
        i = bisect.bisect_left(tokens, prefix)
        out = []
        while i < len(tokens) and len(out) < limit:
            token = tokens[i]
            if not token.startswith(prefix):
                break
            out.append(token)
            i += 1
        return out


def holders(index: Mapping[str, Iterable[str]], words: Iterable[str]) -> set[str]:
    """The pages that hold any of ``words`` in ``index``."""
    found: set[str] = set()
    for word in words:
        found.update(index.get(word, ()))
    return found


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


def first_tokens(fields: PageFields) -> frozenset[str]:
    """The first token of the page's title and of each of its aliases (``first_postings``)."""
    title = fields.title_tokens
    return frozenset([*title[:1], *(alias[0] for alias in fields.alias_tokens if alias)])


def _meta_tokens(fields: PageFields) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The tokens of a page's tags, headings and path (``tag_postings``, ``heading_postings``,
    ``path_postings``): where a query term can earn points besides the title, the aliases and
    the body."""
    tags = frozenset((*fields.tag_names, *fields.tag_tokens))
    return tags, frozenset(fields.heading_set), frozenset(fields.path_tokens)
