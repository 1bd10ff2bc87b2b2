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


class ChannelPoints(TypedDict):
    """One of a hit's top channels at ``explain: summary``, with the points it gave in all."""

    channel: str
    points: int | float


class SearchHit(TypedDict):
    """A ranked page: ``matched`` at ``explain: full`` (the default of ``vaultlens search``),
    ``channels`` at ``summary`` (the MCP tools' default), neither at ``none``."""

    title: str
    wikilink: str
    file: str
    type: NotRequired[str | None]  # at summary/none only when the page has a frontmatter type
    score: int | float
    snippet: str
    matched: NotRequired[list[ScoreMatch]]
    channels: NotRequired[list[ChannelPoints]]  # explain summary: the top channels, points summed


class RelatedHit(TypedDict):
    """A related page, with the one-sentence reason the editor's hover shows."""

    title: str
    wikilink: str
    file: str
    type: str | None
    score: int | float
    snippet: str
    matched: list[ScoreMatch]
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
    time: NotRequired[float]  # seconds, measured: left out with no_timing / VAULTLENS_TIMING=off


class GlobResult(TypedDict):
    """What `vaultlens glob --json` prints."""

    command: Literal["glob"]
    vault: str
    pattern: str
    files: list[str]
    matches: list[str]  # the same paths, by OpenViking's name
    count: int
    time: NotRequired[float]  # seconds, measured: left out with no_timing / VAULTLENS_TIMING=off


class ReadResult(TypedDict):
    """What `vaultlens read --json` prints."""

    command: Literal["read"]
    vault: str
    page: str
    title: str
    level: int
    content: str
    version: NotRequired[str]  # the page text's hash: a write tool must be given it back
    ambiguous: NotRequired[bool]  # the name named several pages: this is the best-linked
    candidates: NotRequired[list[dict[str, Any]]]  # each {file, title, backlinks}, the chosen first
    time: NotRequired[float]  # seconds, measured: left out with no_timing / VAULTLENS_TIMING=off


class RelatedResult(TypedDict):
    """What `vaultlens related --json` prints."""

    command: Literal["related"]
    vault: str
    page: str
    hits: list[RelatedHit]
    ambiguous: NotRequired[bool]
    candidates: NotRequired[list[dict[str, Any]]]
    time: NotRequired[float]  # seconds, measured: left out with no_timing / VAULTLENS_TIMING=off


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
    time: NotRequired[float]  # seconds, measured: left out with no_timing / VAULTLENS_TIMING=off


class WrittenLink(TypedDict):
    """One link in written text and where it leads (engine/writes.py ``link_entry``)."""

    target: str
    kind: str
    line: int
    column: int
    status: Literal["resolved", "ambiguous", "alias", "unresolved", "attachment"]
    file: str | None
    via: NotRequired[str]
    candidates: NotRequired[list[str]]  # ambiguous: every page it could mean
    suggestions: NotRequired[list[dict[str, str]]]  # unresolved: {file, title, link}, best first
    title: NotRequired[str]
    fix: NotRequired[str]  # alias: the link written so that Obsidian follows it


class WriteResult(TypedDict):
    """What `create_page`, `append_to_page` and `edit_page` return."""

    command: str
    vault: str
    path: str
    version: str | None  # the page's new version (pass it to the next write)
    written: bool
    links: list[WrittenLink]
    link_summary: dict[str, int]
    title: NotRequired[str]


class AddResult(WriteResult):
    """What `vaultlens add --json` prints and the `add` tool returns."""

    replaced: bool
    source: str
    type: str
    usage: str
    why: str  # the rule that chose `type`
    related: list[dict[str, Any]]  # candidate links: {title, file, via, name, mentions, link}
    frontmatter: dict[str, Any]
    content: str  # the whole page as (to be) written


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
