"""The result objects' shapes: what ``vaultlens NAME --json`` prints for each operation of
``engine/ops.py`` (``Operation.result`` names its class here). The MCP tools publish them as
output schemas; only the MCP server imports this module (pydantic needs ``typing_extensions``'
TypedDict before Python 3.12, and the command line does not pay for loading it).
"""

from __future__ import annotations

from typing import Any, Literal

from typing_extensions import NotRequired, TypedDict

# Only the documented keys, each required key one the engine always writes. Keys the engine adds
# later pass through unvalidated, so a new field never breaks a client.


class ScoreMatch(TypedDict):
    """One scoring site: the channel (a weights key), the term and the points it gave."""

    channel: str
    term: str
    hits: int
    points: int | float
    field: NotRequired[str]
    via: NotRequired[str]


class SearchHit(TypedDict):
    """A ranked page."""

    title: str
    wikilink: str
    file: str
    type: str | None
    score: int | float
    snippet: str
    matched: list[ScoreMatch]


class RelatedHit(SearchHit):
    """A related page, with the one-sentence reason the editor's hover shows."""

    reasons: str


class SearchResult(TypedDict):
    """What `vaultlens search --json` prints."""

    command: Literal["search"]
    vault: str
    query: str
    hits: list[SearchHit]
    query_plan: NotRequired[dict[str, Any]]
    hints: NotRequired[dict[str, Any]]
    time: NotRequired[float]  # seconds, measured: left out with no_timing / VAULTLENS_TIMING=off


class GrepMatch(TypedDict):
    file: str
    line: int
    column: int
    content: str


class GrepResult(TypedDict):
    """What `vaultlens grep --json` prints."""

    command: Literal["grep"]
    vault: str
    pattern: str
    matches: list[GrepMatch]
    count: int
    truncated: bool
    reason: NotRequired[str]


class GlobResult(TypedDict):
    """What `vaultlens glob --json` prints."""

    command: Literal["glob"]
    vault: str
    pattern: str
    files: list[str]
    matches: list[str]  # the same paths, by OpenViking's name
    count: int


class ReadResult(TypedDict):
    """What `vaultlens read --json` prints."""

    command: Literal["read"]
    vault: str
    page: str
    title: str
    level: int
    content: str
    ambiguous: NotRequired[bool]  # the name named several pages: this is the best-linked
    candidates: NotRequired[list[dict[str, Any]]]  # each {file, title, backlinks}, the chosen first


class RelatedResult(TypedDict):
    """What `vaultlens related --json` prints."""

    command: Literal["related"]
    vault: str
    page: str
    hits: list[RelatedHit]
    ambiguous: NotRequired[bool]
    candidates: NotRequired[list[dict[str, Any]]]


class LinksResult(TypedDict):
    """What `vaultlens links --json` prints."""

    command: Literal["links"]
    vault: str
    page: str
    outgoing: list[dict[str, Any]]
    incoming: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    ambiguous: NotRequired[bool]
    candidates: NotRequired[list[dict[str, Any]]]


class Mention(TypedDict):
    """One unlinked mention: where, the text as written, the name it matched (title or alias)."""

    file: str
    line: int
    column: int
    text: str
    name: str
    via: str
    context: str


class MentionsResult(TypedDict):
    """What `vaultlens mentions --json` prints."""

    command: Literal["mentions"]
    vault: str
    page: str
    title: str
    mentions: list[Mention]
    count: int
    ambiguous: NotRequired[bool]
    candidates: NotRequired[list[dict[str, Any]]]
