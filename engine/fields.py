"""PageFields: a page's tokens per field, computed once per parse so a query only looks them up."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .model import Page
from .text import tokenize

LENGTH_FIELDS = ("title", "alias", "heading", "tag", "body")


@dataclass(frozen=True, slots=True)
class PageFields:
    """Casefolded tokens of a page's title, aliases, tags, headings, path and body.

    ``tag_names`` holds every tag and every segment of a hierarchical tag (``a/b`` gives
    ``a/b``, ``a`` and ``b``); ``tag_tokens`` the letter/digit tokens of all tags.
    ``heading_tokens`` is one token tuple per heading, in page order (``heading_set`` their union).
    ``path_tokens`` are the tokens of the vault-relative path without ``.md``: folder names and
    the segments of a dotted (Dendron) file name, ``a/b.c.md`` -> ``a``, ``b``, ``c``;
    ``file_tokens`` are the tokens of the file name (``b``, ``c``) and ``leaf_tokens`` those of
    its last dotted segment (``c``: a Dendron note's own name, below its parents).
    ``lengths`` counts tokens per field in ``LENGTH_FIELDS`` order (for BM25's length
    normalisation; the vault keeps their sums).
    """

    title_tokens: tuple[str, ...]
    title_set: frozenset[str]
    alias_tokens: tuple[tuple[str, ...], ...]
    alias_set: frozenset[str]
    tag_names: frozenset[str]
    tag_tokens: frozenset[str]
    body_counts: dict[str, int]
    heading_set: frozenset[str]
    heading_tokens: tuple[tuple[str, ...], ...] = ()
    path_tokens: frozenset[str] = frozenset()
    file_tokens: tuple[str, ...] = ()
    leaf_tokens: frozenset[str] = frozenset()
    lengths: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)

    def vocabulary(self) -> set[str]:
        """Every token this page contributes to the vault's inverted index.

        The file name's tokens are in (a Dendron hierarchy lives there), folder names are not:
        a folder holds many pages, and a page matched by its folder alone is not worth listing.
        """
        return (
            set(self.title_set) | self.alias_set | self.tag_tokens | self.tag_names | self.body_counts.keys()
            | set(self.file_tokens)
        )


def page_fields(page: Page) -> PageFields:
    """Tokenize each field of ``page`` once."""
    title_tokens = tuple(tokenize(page.title))
    alias_tokens = tuple(tuple(tokenize(a)) for a in page.aliases)
    tag_names: set[str] = set()
    tag_tokens: set[str] = set()
    for tag in page.tags:
        tag_names.add(tag)
        tag_names.update(s for s in tag.split("/") if s)
        tag_tokens.update(tokenize(tag))
    heading_tokens = tuple(t for t in (tuple(tokenize(h.text)) for h in page.headings) if t)
    noext = page.path[:-3] if page.path.lower().endswith(".md") else page.path
    body_counts = dict(Counter(tokenize(page.body)))
    return PageFields(
        title_tokens=title_tokens,
        title_set=frozenset(title_tokens),
        alias_tokens=alias_tokens,
        alias_set=frozenset(t for a in alias_tokens for t in a),
        tag_names=frozenset(tag_names),
        tag_tokens=frozenset(tag_tokens),
        body_counts=body_counts,
        heading_set=frozenset(t for h in heading_tokens for t in h),
        heading_tokens=heading_tokens,
        path_tokens=frozenset(tokenize(noext)),
        file_tokens=tuple(tokenize(page.stem)),
        leaf_tokens=frozenset(tokenize(page.stem.rsplit(".", 1)[-1])),
        lengths=(
            len(title_tokens),
            sum(map(len, alias_tokens)),
            sum(map(len, heading_tokens)),
            len(tag_tokens),
            sum(body_counts.values()),
        ),
    )
