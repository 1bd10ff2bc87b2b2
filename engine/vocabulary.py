"""Synonym groups from ``_vocabulary.md``: a term expands to the other members of its group.

The file's frontmatter holds ``groups: [{canonical: "automobile", variants: ["car", "auto"]}]``.
An absent file means exact matching only, silently; a malformed one gives warnings and exact
matching for whatever could not be read, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .page import parse_page
from .text import tokenize

VOCABULARY_FILE = "_vocabulary.md"


@dataclass(frozen=True)
class Vocabulary:
    """Synonym groups. ``expansions[term]`` is the other members of each group holding ``term``,
    each as a token tuple, sorted, without ``term`` itself."""

    expansions: dict[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def synonyms(self, term: str) -> tuple[tuple[str, ...], ...]:
        """The synonyms of one query term, as token sequences (empty when it has none)."""
        return self.expansions.get(term, ())


EMPTY = Vocabulary()


def parse_vocabulary(text: str | bytes) -> Vocabulary:
    """Read ``_vocabulary.md``; every problem becomes a warning, never an exception."""
    page = parse_page(VOCABULARY_FILE, text)
    warnings = [f"{VOCABULARY_FILE}:{p.line + 1}: {p.message}" for p in page.problems]
    groups = page.meta.get("groups")
    if groups is None:
        if not warnings:
            warnings.append(f"{VOCABULARY_FILE}: no 'groups' list in the frontmatter; synonyms are off")
        return Vocabulary({}, tuple(warnings))
    if not isinstance(groups, list):
        warnings.append(f"{VOCABULARY_FILE}: 'groups' must be a list of {{canonical, variants}}; synonyms are off")
        return Vocabulary({}, tuple(warnings))
    members_of: dict[str, set[tuple[str, ...]]] = {}
    for n, group in enumerate(groups, 1):
        members = _members(group)
        if members is None:
            warnings.append(f"{VOCABULARY_FILE}: group {n} is not a {{canonical, variants}} mapping; skipped")
            continue
        for member in members:
            if len(member) == 1:
                members_of.setdefault(member[0], set()).update(m for m in members if m != member)
    expansions = {term: tuple(sorted(others)) for term, others in sorted(members_of.items()) if others}
    return Vocabulary(expansions, tuple(warnings))


def _members(group: Any) -> list[tuple[str, ...]] | None:
    if not isinstance(group, dict):
        return None
    raw: list[Any] = [group.get("canonical")]
    variants = group.get("variants", [])
    raw.extend(variants if isinstance(variants, list) else [variants])
    members = []
    for item in raw:
        if isinstance(item, (str, int, float)) and not isinstance(item, bool):
            tokens = tuple(tokenize(str(item)))
            if tokens and tokens not in members:
                members.append(tokens)
    return members if members else None
