"""Frozen data that the engine passes around: spans, links, headings, pages, matches, hits.

Positions are 0-based lines and 0-based UTF-16 code-unit columns (what LSP counts), so the
language server can hand them to a client unchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Span:
    """A range in a document: 0-based lines, 0-based UTF-16 columns, end exclusive."""

    start_line: int
    start_char: int
    end_line: int
    end_char: int

    def contains(self, line: int, char: int) -> bool:
        """Whether the position (line, UTF-16 column) lies within this span (end inclusive)."""
        if line < self.start_line or line > self.end_line:
            return False
        if line == self.start_line and char < self.start_char:
            return False
        if line == self.end_line and char > self.end_char:
            return False
        return True


@dataclass(frozen=True, slots=True)
class Link:
    """One link written in a page.

    ``kind`` is ``wiki`` (``[[T]]``), ``embed`` (``![[T]]``), ``md`` (``[x](T.md)``) or a typed
    frontmatter edge (``sources``, ``related``, ``depends_on``). ``target`` is the page part as
    written (no ``#heading``, no ``|label``); ``heading`` and ``block`` are the anchor parts.
    ``span`` covers the whole link text; ``target_span`` only the page part (for renames).
    """

    kind: str
    target: str
    heading: str | None
    block: str | None
    label: str | None
    span: Span
    target_span: Span
    raw: str


@dataclass(frozen=True, slots=True)
class Heading:
    """A Markdown heading: level 1-6, its text, and its line's span."""

    level: int
    text: str
    span: Span


@dataclass(frozen=True, slots=True)
class Tag:
    """An inline ``#tag`` (name without ``#``, as written) and where it stands."""

    name: str
    span: Span


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong with a page that a person should see: a diagnostic, not an exception."""

    code: str
    message: str
    line: int


def path_stem(path: str) -> str:
    """A page's ``stem`` (its file name without ``.md``) from its path: what ``Page.stem`` holds,
    known without reading the page."""
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


@dataclass(frozen=True, slots=True)
class Page:
    """One parsed page. Built once by ``page.parse_page`` and never mutated.

    ``tags`` are casefolded, without ``#``, sorted and unique (frontmatter and inline).
    ``body`` is the text after the frontmatter; ``body_line`` is the document line it starts on.
    ``meta`` is the frontmatter as JSON-safe data (empty when missing or malformed).
    """

    path: str
    title: str
    stem: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    type: str | None
    created: str | None
    updated: str | None
    links: tuple[Link, ...]
    edges: tuple[Link, ...]
    headings: tuple[Heading, ...]
    blocks: tuple[tuple[str, int], ...]
    inline_tags: tuple[Tag, ...]
    body: str
    body_line: int
    problems: tuple[Problem, ...]
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    size: int = 0


@dataclass(frozen=True, slots=True)
class Match:
    """One scoring site: which channel fired, for which term, how often, worth how many points.

    ``field`` names the page field for body/synonym/stem/prefix components; ``via`` says through
    what the match was made (the synonym, the stemmed token, the seed page of a graph edge).
    Both are ``""`` where the channel already says it all.
    """

    channel: str
    term: str
    hits: int
    points: int | float
    field: str = ""
    via: str = ""

    def to_json(self) -> dict[str, Any]:
        """The wire form: channel, term, [field], [via], hits, points."""
        out: dict[str, Any] = {"channel": self.channel, "term": self.term}
        if self.field:
            out["field"] = self.field
        if self.via:
            out["via"] = self.via
        out["hits"] = self.hits
        out["points"] = self.points
        return out


@dataclass(frozen=True, slots=True)
class Hit:
    """A ranked page: its score is the sum of its matches' points, by construction.

    ``via`` is set by ``--rank hybrid`` only: which kinds of arm found the page (``lexical``,
    ``vector`` or ``lexical+vector``); empty in the default ranking.
    """

    page: Page
    matched: tuple[Match, ...]
    score: int | float
    snippet: str
    via: str = ""


def fast_constructor(cls: type) -> Callable[..., Any]:
    """A constructor for a frozen, slotted dataclass taking every field positionally, that sets
    the slots directly: the dataclass's own ``__init__`` goes through ``object.__setattr__``
    once per field, which made building spans, links and headings a sixth of parsing a page.
    The objects are the same (equal, same hash); the parser uses these (``engine/page.py``).
    """
    names = [f.name for f in dataclasses.fields(cls)]
    setters = {f"_set{i}": cls.__dict__[name].__set__ for i, name in enumerate(names)}
    body = "".join(f"    _set{i}(obj, {name})\n" for i, name in enumerate(names))
    source = f"def make({', '.join(names)}):\n    obj = _new(_cls)\n{body}    return obj\n"
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls, **setters}
    exec(source, namespace)  # noqa: S102 - our own field names, nothing from outside
    make = namespace["make"]
    make.__name__ = make.__qualname__ = f"make_{cls.__name__.lower()}"
    return make
