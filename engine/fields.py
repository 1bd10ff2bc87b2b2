"""PageFields: a page's tokens per field, computed once per parse so a query only looks them up."""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from .model import Page
from .text import tokenize

LENGTH_FIELDS = ("title", "alias", "heading", "tag", "body")

Tokens = tuple[str, ...]  # a field's distinct tokens, in the order the page first has them


def distinct(tokens: Iterable[str]) -> Tokens:
    """``tokens`` without repeats, in first-seen order: a page's token "set" as a tuple. A
    frozenset of 1-4 tokens costs 216 bytes and of 5-18 728; the tuple 40 + 8 a token (at
    10,000 generated pages the fields' sets were ~2 KB a page, ~20 MB in all). A look-up scans
    it: these hold a few tokens (a title's, a path's, a page's tags or headings), and the
    order is the page's, not the process's string hashes."""
    return tuple(dict.fromkeys(tokens))


def holds_all(tokens: Tokens, words: Iterable[str]) -> bool:
    """Whether every one of ``words`` is among ``tokens`` (a field's distinct tokens)."""
    for word in words:
        if word not in tokens:
            return False
    return True


class BodyCounts(Mapping[str, int]):
    """How often each token occurs in a page's body: a read-only mapping, kept compact.

    The page's distinct tokens sorted (``tokens``), their counts beside them (``counts``:
    ``bytes`` when every count is below 256, else a tuple). A dict costs ~28 bytes an entry
    and this ~9: at 10,000 pages 43 MB against ~15 MB, and the persistent index reads it
    six times faster (a tuple of shared strings and a ``bytes``, not a dict to hash into).
    A look-up bisects (~0.2 µs, a dict takes 0.05): ``count`` is the quickest form.
    """

    __slots__ = ("tokens", "counts")

    def __init__(self, tokens: tuple[str, ...] = (), counts: bytes | tuple[int, ...] = b"") -> None:
        self.tokens = tokens
        self.counts = counts

    @classmethod
    def of(cls, tokens: Iterable[str]) -> BodyCounts:
        """The counts of a sequence of tokens."""
        found = Counter(tokens)
        keys = tuple(sorted(found))
        counts = [found[k] for k in keys]
        return cls(keys, bytes(counts) if not counts or max(counts) < 256 else tuple(counts))

    def count(self, token: str) -> int:
        """How often ``token`` occurs (0 when it does not); the quickest look-up (no call
        inside it: scoring asks it for every term of every page it scores)."""
        tokens = self.tokens
        i = bisect_left(tokens, token)
        return self.counts[i] if i < len(tokens) and tokens[i] == token else 0

    def _at(self, token: object) -> int:
        """Where ``token`` is in ``tokens``, or -1."""
        tokens = self.tokens
        i = bisect_left(tokens, token)  # type: ignore[type-var]
        return i if i < len(tokens) and tokens[i] == token else -1

    def get(self, token: str, default: int | None = None) -> int | None:  # type: ignore[override]
        i = self._at(token)
        return self.counts[i] if i >= 0 else default

    def __getitem__(self, token: str) -> int:
        i = self._at(token)
        if i < 0:
            raise KeyError(token)
        return self.counts[i]

    def __contains__(self, token: object) -> bool:
        return self._at(token) >= 0

    def isdisjoint(self, other: Iterable[str]) -> bool:
        """Whether none of ``other`` occurs in the body."""
        return not any(t in self for t in other)

    def __iter__(self) -> Iterator[str]:
        return iter(self.tokens)

    def __len__(self) -> int:
        return len(self.tokens)

    def total(self) -> int:
        """The number of tokens in the body."""
        return sum(self.counts)

    def __repr__(self) -> str:
        return f"BodyCounts({dict(zip(self.tokens, self.counts))!r})"


@dataclass(frozen=True, slots=True)
class PageFields:
    """Casefolded tokens of a page's title, aliases, tags, headings, path and body.

    ``tag_names`` holds every tag and every segment of a hierarchical tag (``a/b`` gives
    ``a/b``, ``a`` and ``b``); ``tag_tokens`` the letter/digit tokens of all tags.
    ``heading_tokens`` is one token tuple per heading, in page order (``heading_set`` their union).
    Each ``*_set``, ``tag_*``, ``path_tokens`` and ``leaf_tokens`` is a field's distinct tokens
    as a tuple (``Tokens``, ``distinct``): test them with ``in`` and ``holds_all``.
    ``path_tokens`` are the tokens of the vault-relative path without ``.md``: folder names and
    the segments of a dotted (Dendron) file name, ``a/b.c.md`` -> ``a``, ``b``, ``c``;
    ``file_tokens`` are the tokens of the file name (``b``, ``c``) and ``leaf_tokens`` those of
    its last dotted segment (``c``: a Dendron note's own name, below its parents).
    ``lengths`` counts tokens per field in ``LENGTH_FIELDS`` order (for BM25's length
    normalisation; the vault keeps their sums).
    """

    title_tokens: tuple[str, ...]
    title_set: Tokens
    alias_tokens: tuple[tuple[str, ...], ...]
    alias_set: Tokens
    tag_names: Tokens
    tag_tokens: Tokens
    body_counts: BodyCounts
    heading_set: Tokens
    heading_tokens: tuple[tuple[str, ...], ...] = ()
    path_tokens: Tokens = ()
    file_tokens: tuple[str, ...] = ()
    leaf_tokens: Tokens = ()
    lengths: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)
    ascii_names: bool = True  # title, file name and aliases are ASCII (no diacritics to fold)

    def vocabulary(self) -> set[str]:
        """Every token this page contributes to the vault's inverted index.

        The file name's tokens are in (a Dendron hierarchy lives there), folder names are not:
        a folder holds many pages, and a page matched by its folder alone is not worth listing.
        """
        return (
            set(self.title_set).union(self.alias_set, self.tag_tokens, self.tag_names, self.body_counts.tokens, self.file_tokens)
        )


def page_fields(page: Page) -> PageFields:
    """Tokenize each field of ``page`` once."""
    title_tokens = tuple(tokenize(page.title))
    alias_tokens = tuple(tuple(tokenize(a)) for a in page.aliases)
    names: list[str] = []
    words: list[str] = []
    for tag in page.tags:
        names.append(tag)
        names.extend(s for s in tag.split("/") if s)
        words.extend(tokenize(tag))
    tag_names, tag_tokens = distinct(names), distinct(words)
    heading_tokens = tuple(t for t in (tuple(tokenize(h.text)) for h in page.headings) if t)
    noext = page.path[:-3] if page.path.lower().endswith(".md") else page.path
    body_counts = BodyCounts.of(tokenize(page.body))
    # A file named after its title (the common case) shares the title's token tuple, and a
    # title without a repeated word is its own distinct tokens: one object instead of two or
    # three equal ones (marshal keeps the sharing).
    title_set = distinct(title_tokens)
    if title_set == title_tokens:
        title_set = title_tokens
    file_tokens = tuple(tokenize(page.stem))
    if file_tokens == title_tokens:
        file_tokens = title_tokens
    leaf_tokens = distinct(tokenize(page.stem.rsplit(".", 1)[-1]))
    if leaf_tokens == title_set:
        leaf_tokens = title_set
    return PageFields(
        title_tokens=title_tokens,
        title_set=title_set,
        alias_tokens=alias_tokens,
        alias_set=distinct(t for a in alias_tokens for t in a),
        tag_names=tag_names,
        tag_tokens=tag_tokens,
        body_counts=body_counts,
        heading_set=distinct(t for h in heading_tokens for t in h),
        heading_tokens=heading_tokens,
        path_tokens=distinct(tokenize(noext)),
        file_tokens=file_tokens,
        leaf_tokens=leaf_tokens,
        lengths=(
            len(title_tokens),
            sum(map(len, alias_tokens)),
            sum(map(len, heading_tokens)),
            len(tag_tokens),
            body_counts.total(),
        ),
        ascii_names=page.title.isascii() and page.stem.isascii() and all(a.isascii() for a in page.aliases),
    )
