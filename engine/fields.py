"""PageFields: a page's tokens per field, computed once per parse so a query only looks them up."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .model import Page
from .text import tokenize


@dataclass(frozen=True, slots=True)
class PageFields:
    """Casefolded tokens of a page's title, aliases, tags and body.

    ``tag_names`` holds every tag and every segment of a hierarchical tag (``a/b`` gives
    ``a/b``, ``a`` and ``b``); ``tag_tokens`` the letter/digit tokens of all tags.
    """

    title_tokens: tuple[str, ...]
    title_set: frozenset[str]
    alias_tokens: tuple[tuple[str, ...], ...]
    alias_set: frozenset[str]
    tag_names: frozenset[str]
    tag_tokens: frozenset[str]
    body_counts: dict[str, int]
    heading_set: frozenset[str]

    def vocabulary(self) -> set[str]:
        """Every token this page contributes to the vault's inverted index."""
        return set(self.title_set) | self.alias_set | self.tag_tokens | self.tag_names | self.body_counts.keys()


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
    heading_set = frozenset(t for h in page.headings for t in tokenize(h.text))
    return PageFields(
        title_tokens=title_tokens,
        title_set=frozenset(title_tokens),
        alias_tokens=alias_tokens,
        alias_set=frozenset(t for a in alias_tokens for t in a),
        tag_names=frozenset(tag_names),
        tag_tokens=frozenset(tag_tokens),
        body_counts=dict(Counter(tokenize(page.body))),
        heading_set=heading_set,
    )
