"""score_page: every point a page earns for a query, recorded as a Match as it is earned.

The score of a hit is the sum of its matches' points and nothing else, so the explanation
cannot disagree with the ranking. Pure: reads the page, its fields and the vault's indexes.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .fields import PageFields
from .model import Match, Page
from .query import Query
from .text import stem
from .vault import Vault
from .weights import BODY_CAP, CHANNEL_RANK, FIELDS, POINTS, PREFIX_ALIAS, SYNONYM_MINOR


def contains_sequence(haystack: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    """Whether ``needle`` occurs contiguously in ``haystack``."""
    n = len(needle)
    if n == 0 or n > len(haystack):
        return False
    if n == 1:
        return needle[0] in haystack
    first = needle[0]
    for i in range(len(haystack) - n + 1):
        if haystack[i] == first and haystack[i : i + n] == needle:
            return True
    return False


def _starts_with_typed(haystack: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    """Whether ``haystack`` begins with ``needle``, its last token only typed in part."""
    n = len(needle)
    return 0 < n <= len(haystack) and haystack[: n - 1] == needle[:-1] and haystack[n - 1].startswith(needle[-1])


@lru_cache(maxsize=4096)
def _phrase_pattern(tokens: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"(?<![^\W_])" + r"[\W_]+".join(map(re.escape, tokens)) + r"(?![^\W_])")


def _field_has_sequence(field: str, seq: tuple[str, ...], page: Page, f: PageFields) -> bool:
    """Whether a synonym (a token sequence) occurs in one field of the page."""
    if field == "title":
        return contains_sequence(f.title_tokens, seq)
    if field == "alias":
        return any(contains_sequence(a, seq) for a in f.alias_tokens)
    if field == "tag":
        return len(seq) == 1 and seq[0] in f.tag_names
    if not all(t in f.body_counts for t in seq):
        return False
    return len(seq) == 1 or _phrase_pattern(seq).search(page.body.casefold()) is not None


def _field_tokens(field: str, f: PageFields):
    if field == "title":
        return f.title_set
    if field == "alias":
        return f.alias_set
    if field == "tag":
        return f.tag_tokens
    return f.body_counts.keys()


def score_page(page: Page, fields: PageFields, query: Query, vault: Vault) -> list[Match]:
    """The matches of one page for a query (unsorted; empty when nothing matched)."""
    found: list[Match] = []
    seq = query.tokens
    if seq:
        if contains_sequence(fields.title_tokens, seq):
            found.append(Match("title-phrase", "", 1, POINTS["title-phrase"]))
        else:
            for alias, tokens in zip(page.aliases, fields.alias_tokens):
                if contains_sequence(tokens, seq):
                    found.append(Match("title-phrase", alias, 1, POINTS["title-phrase"]))
                    break

    partial = query.partial
    if partial and not found:
        # As-you-type: "retrieval aug" is on its way to the title "Retrieval-Augmented Generation",
        # and "filt" to "Filters" more than to "Combining Filters".
        phrase = next(
            (term for term, tokens in (("", fields.title_tokens), *zip(page.aliases, fields.alias_tokens))
             if _starts_with_typed(tokens, seq)),
            None,
        )
        if phrase is not None:
            found.append(Match("prefix-phrase", phrase, 1, POINTS["prefix-phrase"]))

    vocabulary = vault.vocabulary
    for term in query.terms:
        exact: set[str] = set()
        if term in fields.title_set:
            exact.add("title")
            found.append(Match("title-term", term, 1, POINTS["title-term"]))
        if term in fields.alias_set:
            exact.add("alias")
            if "title" not in exact:
                found.append(Match("alias-term", term, 1, POINTS["alias-term"]))
        if term in fields.tag_names:
            exact.add("tag")
            found.append(Match("tag-term", term, 1, POINTS["tag-term"]))
        count = fields.body_counts.get(term, 0)
        if count:
            exact.add("body")
            found.append(Match("body-term", term, count, POINTS["body-term"] * min(count, BODY_CAP), "body"))

        by_synonym: set[str] = set()
        for synonym in vocabulary.synonyms(term):
            for field in FIELDS:
                if field in exact or field in by_synonym:
                    continue
                if _field_has_sequence(field, synonym, page, fields):
                    by_synonym.add(field)
                    points = POINTS["synonym-term"] if field in ("title", "alias") else SYNONYM_MINOR
                    found.append(Match("synonym-term", term, 1, points, field, " ".join(synonym)))

        variants = vault.stem_tokens.get(stem(term))
        if variants:
            for field in FIELDS:
                if field in exact or field in by_synonym:
                    continue
                tokens = _field_tokens(field, fields)
                shared = sorted(t for t in variants if t != term and t in tokens)
                if shared:
                    found.append(Match("stem-term", term, len(shared), POINTS["stem-term"], field, shared[0]))

    if partial and partial not in fields.title_set:
        title_hit = next((t for t in fields.title_tokens if t.startswith(partial)), None)
        if title_hit is not None:
            found.append(Match("prefix-term", partial, 1, POINTS["prefix-term"], "title", title_hit))
        elif partial not in fields.alias_set:
            alias_hit = next((t for a in fields.alias_tokens for t in a if t.startswith(partial)), None)
            if alias_hit is not None:
                found.append(Match("prefix-term", partial, 1, PREFIX_ALIAS, "alias", alias_hit))
    return found


def order_matches(matches: list[Match]) -> tuple[Match, ...]:
    """Components sorted by points desc, then channel order, then term, field and via."""
    return tuple(
        sorted(matches, key=lambda m: (-m.points, CHANNEL_RANK[m.channel], m.term, m.field, m.via))
    )


def candidates(vault: Vault, query: Query) -> set[str]:
    """Pages that can score for the query, from the inverted indexes (never every page)."""
    found: set[str] = set()
    postings = vault.postings
    for term in query.terms:
        found.update(postings.get(term, ()))
        for synonym in vault.vocabulary.synonyms(term):
            found.update(postings.get(synonym[0], ()))
        for variant in vault.stem_tokens.get(stem(term), ()):
            found.update(postings.get(variant, ()))
    partial = query.partial
    if partial:
        for token in vault.name_tokens_with_prefix(partial):
            found.update(vault.name_postings.get(token, ()))
    return found
