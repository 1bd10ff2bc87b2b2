"""``vaultlens mcp``: the vault's engine as a Model Context Protocol server, for coding agents.

Owns the MCP wiring (tools, resources, transports) and keeping one live vault current while an
agent edits files. Each tool makes the engine call its CLI command makes and returns, as the
structured result, exactly the object ``vaultlens COMMAND … --json`` prints; the text content is
that same JSON. Problems a caller can fix come back as tool errors (``isError``) carrying the
engine's message, the text the CLI prints after ``vaultlens: error:``.

Built on the official ``mcp`` SDK (2.x, ``mcp.server.mcpserver.MCPServer``), an optional extra:
``pip install 'vaultlens[mcp]'``. Never name a module here ``mcp.py``: it would shadow the SDK.

Must not: rank, boost, filter or reshape results (that is ``engine/``), or import pygls.
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import quote, unquote

import anyio
import anyio.to_thread
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import CallToolResult, Resource, TextContent, ToolAnnotations
from pydantic import Field, ValidationError
from typing_extensions import NotRequired, TypedDict

from vaultlens.engine import __version__, retrieve
from vaultlens.engine.cli import UsageError, resolve_vault
from vaultlens.engine.query import RANKS, parse_query
from vaultlens.engine.render import dumps, search_payload
from vaultlens.engine.retrieve import RetrievalError
from vaultlens.engine.scan import list_pages, open_vault, read_bytes
from vaultlens.engine.search import search
from vaultlens.engine.vault import Vault
from vaultlens.engine.vocabulary import VOCABULARY_FILE

from .live import VaultSync

log = logging.getLogger("vaultlens.mcp")
T = TypeVar("T")

SCHEME = "vault://"
PAGE_MIME = "text/markdown"
WATCH_DEBOUNCE_MS = 400  # watchfiles: at most this long gathering one burst of changes
WATCH_STEP_MS = 20  # ... and a burst ends after this long without a new change

INSTRUCTIONS = """\
vaultlens answers questions about one Obsidian-style Markdown vault (pages with YAML frontmatter,
[[wikilinks]] and #tags). Rankings are deterministic and every point of a score is explained in
`matched`. A good loop: `search` for the topic; `read` the best hits (level 0 or 1 to skim, 2 for
the whole file); follow `related` and `links` to neighbouring pages; use `grep` for exact strings
and `glob` to list pages by path. Pages are named by vault-relative path, title, alias or
[[link]]. Answers follow edits to the vault's files while the server runs. Each page is also a
resource, vault://<path>."""


# --- the result objects, as output schemas ---------------------------------------------------
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
    count: int


class ReadResult(TypedDict):
    """What `vaultlens read --json` prints."""

    command: Literal["read"]
    vault: str
    page: str
    title: str
    level: int
    content: str


class RelatedResult(TypedDict):
    """What `vaultlens related --json` prints."""

    command: Literal["related"]
    vault: str
    page: str
    hits: list[RelatedHit]


class LinksResult(TypedDict):
    """What `vaultlens links --json` prints."""

    command: Literal["links"]
    vault: str
    page: str
    outgoing: list[dict[str, Any]]
    incoming: list[dict[str, Any]]
    edges: list[dict[str, Any]]


# --- the live vault ----------------------------------------------------------------------------


class LiveVault(VaultSync):
    """One vault, read once, then kept current page by page from change events, by the rules of
    ``lsp.live.VaultSync`` (the language server's too; no buffer is ever open here).

    Every engine call and every update runs under one lock, in a worker thread, so no answer
    sees half an update and a long grep never stalls the protocol loop. Changes come from a
    ``watchfiles`` watcher (inotify, FSEvents, ReadDirectoryChangesW: no work while the vault is
    idle); without one, each call first compares file sizes and modification times. ``exclude``
    globs name files that are not pages; ``vaultlens mcp`` gives none: like the CLI, it reads
    every page.
    """

    def __init__(self, root: str, *, poll: bool = False, exclude: Sequence[str] = ()) -> None:
        exclude = tuple(exclude)
        # as the CLI opens it: same pages, same link order
        super().__init__(root, open_vault(root, exclude=exclude)[0], exclude)
        self.lock = anyio.Lock()
        self.polling = poll
        self._stop: anyio.Event | None = None
        # engine.embed.VectorIndex once opened; False when the embeddings extra is missing
        self._vectors: Any = None
        self._vectors_seen: tuple[int, int] | None = None  # (vault object, generation) embedded
        self._stamps: dict[str, tuple[int, int]] = self._stat_all() if poll else {}

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(self.vault, *args, **kwargs)`` on the current vault."""
        async with self.lock:
            if self.polling:
                await anyio.to_thread.run_sync(self._poll)
            return await anyio.to_thread.run_sync(
                functools.partial(fn, self.vault, *args, **kwargs)
            )

    def vector_arm(self, vault: Vault) -> Any:
        """The vector arm of ``rank="hybrid"`` (engine.embed), as the CLI's: opened on first use,
        re-embedding only changed pages when the vault changed; None without the embeddings extra."""
        from vaultlens.engine import embed

        if self._vectors is None:
            reason = embed.unavailable()
            if reason is not None:
                log.warning("rank hybrid runs its lexical arms only: %s", reason)
            self._vectors = False if reason is not None else embed.open_vectors(vault) or False
        elif self._vectors and self._vectors_seen != (id(vault), vault.generation):
            self._vectors.update(vault)
        self._vectors_seen = (id(vault), vault.generation)
        return self._vectors or None

    # --- applying changes -------------------------------------------------------------------

    def apply(self, rels: set[str]) -> None:
        """Apply change events: the files or folders at these vault-relative paths changed."""
        for rel in sorted(rels):
            self.disk_changed(rel)

    def relative(self, path: str) -> str | None:
        """A watcher's absolute path as a vault-relative POSIX path; None outside or in dot-folders."""
        rel = os.path.relpath(path, self.root)
        if rel == "." or rel.startswith(".." + os.sep) or rel == "..":
            return None
        rel = rel.replace(os.sep, "/")
        if any(part.startswith(".") for part in rel.split("/")):
            return None  # .obsidian/workspace.json changes all the time and holds no pages
        return rel

    # --- watching ---------------------------------------------------------------------------

    async def watch(self) -> None:
        """Apply change events as they come; switch to polling when the OS watcher is unavailable."""
        if self.polling:
            return
        try:
            from watchfiles import awatch
        except ImportError:
            log.warning(
                "watchfiles is not installed: checking the vault for changes before each call"
            )
            await self._start_polling()
            return
        self._stop = anyio.Event()
        try:
            async for changes in awatch(
                self.root,
                watch_filter=lambda _change, path: self.relative(path) is not None,
                debounce=WATCH_DEBOUNCE_MS,
                step=WATCH_STEP_MS,
                stop_event=self._stop,
            ):
                rels = {
                    rel for _change, path in changes if (rel := self.relative(path)) is not None
                }
                async with self.lock:
                    await anyio.to_thread.run_sync(self.apply, rels)
        except Exception as exc:  # noqa: BLE001 - e.g. the inotify watch limit: answers must stay current
            log.warning(
                "cannot watch %s (%s): checking for changes before each call instead",
                self.root,
                exc,
            )
            await self._start_polling()

    def stop(self) -> None:
        """End ``watch`` within one step (its thread does not notice a cancellation)."""
        if self._stop is not None:
            self._stop.set()

    async def _start_polling(self) -> None:
        async with self.lock:
            self._stamps = await anyio.to_thread.run_sync(self._stat_all)
            # the watcher may have missed changes before it failed: read the vault afresh
            vault, _listing = await anyio.to_thread.run_sync(
                functools.partial(open_vault, self.root, exclude=self.exclude)
            )
            self.swap_in(vault)
            self.polling = True

    def _stat_all(self) -> dict[str, tuple[int, int]]:
        stamps = {}
        for rel in (*list_pages(self.root, self.exclude).paths, VOCABULARY_FILE):
            try:
                st = os.stat(os.path.join(self.root, rel))
            except OSError:
                continue
            stamps[rel] = (st.st_mtime_ns, st.st_size)
        return stamps

    def _poll(self) -> None:
        stamps = self._stat_all()
        changed = {
            rel
            for rel in stamps.keys() | self._stamps.keys()
            if stamps.get(rel) != self._stamps.get(rel)
        }
        self._stamps = stamps
        if changed:
            self.apply(changed)


# --- what each tool runs (on the vault, in a worker thread) ------------------------------------


def search_result(
    vault: Vault,
    text: str,
    *,
    type: str | None = None,
    folder: str | None = None,
    tag: str | None = None,
    graph: bool = False,
    limit: int = 10,
    prefix: bool = False,
    rank: str = "default",
    since: str | None = None,
    until: str | None = None,
    time_field: str = "updated",
    min_score: float | None = None,
    where: dict[str, str] | None = None,
    hints: bool = False,
    context: str | None = None,
    vectors: Callable[[Vault], Any] | None = None,
) -> dict[str, Any]:
    """As ``vaultlens search --json``: parse_query, search, search_payload.

    ``vectors(vault)`` gives the vector arm for ``rank="hybrid"`` (None runs its lexical arms only).
    """
    from vaultlens.engine.scan import file_mtime

    root = vault.root or ""
    query = parse_query(
        text, type=type, folder=folder, tag=tag, graph=graph, limit=limit, prefix=prefix, rank=rank,
        since=since, until=until, time_field=time_field, min_score=min_score, where=where, hints=hints,
        context=context,
        mtime_of=lambda rel: file_mtime(root, rel),
    )
    arm = vectors(vault) if vectors is not None and query.rank == "hybrid" else None
    return search_payload(vault, query, search(vault, query, arm))


def grep_result(vault: Vault, pattern: str, **kwargs: Any) -> dict[str, Any]:
    """As ``vaultlens grep --json``, frontmatter lines read as the CLI reads them."""
    from vaultlens.engine.cli import _frontmatter_lines

    if kwargs.pop("frontmatter"):
        kwargs["frontmatter"] = _frontmatter_lines(vault.root or "", vault.sorted_paths())
    return retrieve.grep(vault, pattern, **kwargs)


def read_result(vault: Vault, page: str, level: int) -> dict[str, Any]:
    """As ``vaultlens read --json``: level 2 is the whole file from disk."""
    full = None
    if level == 2:
        found = retrieve.find_page(vault, page)
        try:
            full = read_bytes(vault.root or "", found.path).decode("utf-8", errors="replace")
        except OSError as exc:
            raise RetrievalError(f"cannot read {found.path}: {exc.strerror or exc}") from None
    return retrieve.read(vault, page, level, full)


def page_text(vault: Vault, path: str) -> str | None:
    """A page's file as on disk (None for no such page or an unreadable file)."""
    if path not in vault.pages:
        return None
    try:
        return read_bytes(vault.root or "", path).decode("utf-8", errors="replace")
    except OSError:
        return None


def page_uri(path: str) -> str:
    """``vault://<path>``, percent-encoded (spaces and all) so any client accepts it."""
    return SCHEME + quote(path, safe="/")


def page_path(vault: Vault, uri: str) -> str | None:
    """The page a ``vault://`` URI names (case-insensitively as a last resort: some clients
    lowercase the part before the first ``/``, which URL parsers take for a host)."""
    if not uri.startswith(SCHEME):
        return None
    path = unquote(uri[len(SCHEME) :])
    if path in vault.pages:
        return path
    folded = path.casefold()
    return next((p for p in vault.sorted_paths() if p.casefold() == folded), None)


def argument_errors(error: ValidationError) -> str:
    """A schema violation as one line naming each argument, as '"limit": input should be greater
    than or equal to 1 (got 0)' or '"query" is required'."""
    out = []
    for e in error.errors():
        name = ".".join(str(part) for part in e["loc"])
        if e["type"] == "missing":
            out.append(f'"{name}" is required')
        else:
            out.append(f'"{name}": {e["msg"][0].lower()}{e["msg"][1:]} (got {e.get("input")!r})')
    return "; ".join(out)


def _ok(payload: dict[str, Any]) -> CallToolResult:
    """The result object as structured content, and as JSON text for clients that read only text."""
    return CallToolResult(
        content=[TextContent(type="text", text=dumps(payload))], structured_content=payload
    )


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


async def _answer(
    live: LiveVault, fn: Callable[..., dict[str, Any]], *args: Any, **kwargs: Any
) -> CallToolResult:
    try:
        return _ok(await live.call(fn, *args, **kwargs))
    except (
        ValueError
    ) as exc:  # RetrievalError, and parse_query's bad filters (as `vaultlens jsonl`)
        return _error(str(exc))


# --- the server ------------------------------------------------------------------------------


def _annotations(title: str) -> ToolAnnotations:
    """Every tool only reads this one vault: safe to call freely and to repeat."""
    return ToolAnnotations(
        title=title,
        read_only_hint=True,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=False,
    )


PageName = Annotated[
    str,
    Field(
        description="The page: a vault-relative path (ai/rag/graph-rag.md), a title, an alias or a [[link]]."
    ),
]


class VaultMCPServer(MCPServer):
    """MCPServer whose resources are the live vault's pages (the SDK's resource list is static)."""

    def __init__(self, live: LiveVault, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.live = live

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Arguments outside a tool's schema are tool errors that say which, in the CLI's words."""
        tool = next((t for t in await self.list_tools() if t.name == name), None)
        unknown = (
            sorted(set(arguments) - set(tool.input_schema.get("properties", {}))) if tool else []
        )
        if unknown:
            accepted = ", ".join(tool.input_schema["properties"])  # type: ignore[union-attr]
            return _error(f"unknown argument(s): {', '.join(unknown)} (accepted: {accepted})")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                return _error(argument_errors(exc.__cause__))
            raise

    async def list_resources(self) -> list[Resource]:
        def pages(vault: Vault) -> list[Resource]:
            return [
                Resource(
                    uri=page_uri(path),
                    name=path,
                    title=vault.pages[path].title,
                    mime_type=PAGE_MIME,
                )
                for path in vault.sorted_paths()
            ]

        return await self.live.call(pages) + await super().list_resources()

    async def read_resource(self, uri: Any, context: Any = None) -> Any:
        def text(vault: Vault) -> str | None:
            path = page_path(vault, str(uri))
            return page_text(vault, path) if path else None

        found = await self.live.call(text)
        if found is not None:
            return [ReadResourceContents(content=found, mime_type=PAGE_MIME)]
        return await super().read_resource(uri, context)


def build_server(
    live: LiveVault, *, log_level: Literal["INFO", "WARNING"] = "WARNING"
) -> VaultMCPServer:
    """The MCP server over ``live``: six read-only tools, page resources, a search template."""
    server = VaultMCPServer(
        live, name="vaultlens", version=__version__, instructions=INSTRUCTIONS, log_level=log_level
    )

    @server.tool(
        name="search", title="Search the vault", annotations=_annotations("Search the vault")
    )
    async def search(
        query: Annotated[
            str,
            Field(description="Words to look for, as a person would type them (e.g. 'graph rag')."),
        ],
        type: Annotated[
            str | None,
            Field(
                description="Only pages whose frontmatter `type` is exactly this (e.g. 'concept')."
            ),
        ] = None,
        folder: Annotated[
            str | None,
            Field(description="Only pages under this vault-relative folder (e.g. 'ai/rag')."),
        ] = None,
        tag: Annotated[
            str | None,
            Field(description="Only pages with this tag; a parent tag 'ai' also matches 'ai/rag'."),
        ] = None,
        graph: Annotated[
            bool,
            Field(
                description="Also rank pages reached from the keyword hits over typed edges (sources, related, depends_on)."
            ),
        ] = False,
        limit: Annotated[int, Field(ge=1, description="At most this many hits.")] = 10,
        prefix: Annotated[
            bool,
            Field(
                description="As-you-type matching: the last word may be the start of a title word."
            ),
        ] = False,
        rank: Annotated[
            Literal[RANKS],  # type: ignore[valid-type]
            Field(
                description="'default': the explained channel ranking. 'hybrid': fused with BM25F and, where "
                "the embeddings extra is installed, sentence-embedding similarity (reciprocal rank fusion); "
                "try it when default finds little for a paraphrased question."
            ),
        ] = "default",
        since: Annotated[
            str | None,
            Field(description="Only pages updated at or after this: a relative span (30m, 2h, 7d, 4w) or an ISO date/time (no zone = UTC)."),
        ] = None,
        until: Annotated[
            str | None,
            Field(description="Only pages updated at or before this (same forms as `since`)."),
        ] = None,
        time_field: Annotated[
            Literal["updated", "created"],
            Field(description="Which page time `since`/`until` read: frontmatter updated or created (else the file's modification time)."),
        ] = "updated",
        min_score: Annotated[float | None, Field(description="Only hits scoring at least this.")] = None,
        where: Annotated[
            dict[str, str] | None,
            Field(description="Frontmatter equality filters, all must hold: {key: value}; a list field matches when it holds the value."),
        ] = None,
        hints: Annotated[
            bool,
            Field(description="Add `hints` for an agent loop: sufficient, max_score, next_action (synthesize | refine | expand | broaden), suggested_queries, related_ids, gap_keywords."),
        ] = True,
        context: Annotated[
            str | None,
            Field(description="The page the agent is working on (path, title, alias or [[link]]): hits one link away from it get a context-edge point, and the result's query_plan names it."),
        ] = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        """Rank the vault's pages for a query, best first, with every point of every score explained.

        Start here to find the notes about a topic. Each hit has its title, [[wikilink]], file,
        frontmatter type, score, a snippet and `matched`: one entry per scoring site (its channel,
        such as title-term, tag-term or body-term; the query term; the points), and the score is
        their sum. Filters combine with AND. Same vault and query, same answer. Then `read` a
        hit, or follow `related`/`links` to the pages around it.
        """
        return await _answer(
            live,
            search_result,
            query,
            type=type,
            folder=folder,
            tag=tag,
            graph=graph,
            limit=limit,
            prefix=prefix,
            rank=rank,
            since=since,
            until=until,
            time_field=time_field,
            min_score=min_score,
            where=where,
            hints=hints,
            context=context,
            vectors=live.vector_arm,
        )

    @server.tool(name="read", title="Read a page", annotations=_annotations("Read a page"))
    async def read(
        page: PageName,
        level: Annotated[
            int,
            Field(
                description="0: abstract (frontmatter summary/description, else the first paragraph, at most 400 "
                "characters); 1: overview (the heading outline with each section's first sentence); 2: the "
                "whole file as on disk, frontmatter included.",
                json_schema_extra={"enum": [0, 1, 2]},
            ),
        ] = 1,
    ) -> Annotated[CallToolResult, ReadResult]:
        """Read one page at a chosen level of detail: 0 abstract, 1 overview (default), 2 full text.

        Skim with 0 or 1 to decide whether a page matters before spending context on level 2.
        The result names the page's path and title.
        """
        return await _answer(live, read_result, page, level)

    @server.tool(name="related", title="Related pages", annotations=_annotations("Related pages"))
    async def related(
        page: PageName,
        limit: Annotated[int, Field(ge=1, description="At most this many pages.")] = 10,
    ) -> Annotated[CallToolResult, RelatedResult]:
        """The pages most related to a page, best first, each with `reasons` (one sentence) and its score breakdown.

        Evidence: links in either direction, typed frontmatter edges, shared tags, pages cited
        together, shared link targets and title words. Use it to widen an answer beyond keyword hits.
        """
        return await _answer(live, retrieve.related_payload, page, limit)

    @server.tool(name="links", title="Links of a page", annotations=_annotations("Links of a page"))
    async def links(page: PageName) -> Annotated[CallToolResult, LinksResult]:
        """A page's outgoing links, incoming links (backlinks) and typed edges, with 1-based line and column.

        Outgoing links give the file each resolves to (null when it resolves to no page). Typed
        edges are frontmatter relations (sources, related, depends_on) with a direction.
        """
        return await _answer(live, retrieve.links, page)

    @server.tool(name="grep", title="Grep page text", annotations=_annotations("Grep page text"))
    async def grep(
        pattern: Annotated[
            str,
            Field(description="A regular expression (Python `regex` syntax), matched per line."),
        ],
        ignore_case: Annotated[bool, Field(description="Match without regard to case.")] = False,
        folder: Annotated[
            str | None, Field(description="Only pages under this vault-relative folder.")
        ] = None,
        exclude: Annotated[
            list[str],
            Field(
                description="Skip pages whose path starts with any of these prefixes (e.g. 'daily/')."
            ),
        ] = [],  # noqa: B006 - pydantic copies defaults
        frontmatter: Annotated[
            bool, Field(description="Search the YAML frontmatter lines too.")
        ] = False,
        limit: Annotated[
            int, Field(ge=1, description="At most this many matches listed (`count` has them all).")
        ] = 100,
    ) -> Annotated[CallToolResult, GrepResult]:
        """Lines of page text matching a regular expression, in path then line order (1-based line and column).

        Use it for exact strings, names, code or identifiers that ranked `search` may not put
        first. The work is bounded in time: a pattern too slow to finish gives `truncated: true`
        and a `reason`.
        """
        return await _answer(
            live,
            grep_result,
            pattern,
            ignore_case=ignore_case,
            folder=folder,
            exclude=tuple(exclude),
            limit=limit,
            frontmatter=frontmatter,
        )

    @server.tool(
        name="glob", title="Find pages by path", annotations=_annotations("Find pages by path")
    )
    async def glob(
        pattern: Annotated[
            str,
            Field(
                description="A glob over vault-relative paths: '**/*.md', 'ai/*' (pages directly in ai/), 'ai/**'."
            ),
        ],
        limit: Annotated[
            int | None, Field(ge=1, description="At most this many paths (`count` has them all).")
        ] = None,
    ) -> Annotated[CallToolResult, GlobResult]:
        """Vault-relative paths of the pages matching a glob, sorted: list a folder or find a file by name."""
        return await _answer(live, retrieve.glob, pattern, limit or 0)

    @server.resource(
        SCHEME + "search/{query}",
        name="search",
        title="Search results",
        description="The `search` tool's result object for a query (default options), as JSON.",
        mime_type="application/json",
    )
    async def search_resource(query: str) -> str:
        try:
            payload = await live.call(search_result, query)
        except ValueError as exc:
            raise ResourceError(str(exc)) from None
        return dumps(payload)

    return server


# --- the command -----------------------------------------------------------------------------


def _host_port(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT such as 127.0.0.1:8765, got {text!r}")
    return host.strip("[]"), int(port)


def build_parser() -> argparse.ArgumentParser:
    """``vaultlens mcp``'s arguments."""
    from vaultlens.engine.cli import _Parser

    parser = _Parser(
        prog="vaultlens mcp",
        description="Serve a vault to AI agents over the Model Context Protocol (stdio unless --http).",
    )
    parser.add_argument(
        "--vault",
        metavar="DIR",
        help="the vault (default: nearest folder holding .obsidian/, else .)",
    )
    parser.add_argument(
        "--http",
        metavar="HOST:PORT",
        type=_host_port,
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (no authentication: keep it on 127.0.0.1)",
    )
    parser.add_argument(
        "--poll",
        action="store_true",
        help="check the vault for changed files before each call instead of watching it (network drives)",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="log each call's problems on stderr"
    )
    return parser


async def serve(live: LiveVault, server: VaultMCPServer, http: tuple[str, int] | None) -> None:
    """Run the transport until the client goes away, with the watcher beside it."""
    async with anyio.create_task_group() as tg:
        tg.start_soon(live.watch)
        try:
            if http is None:
                await server.run_stdio_async()
            else:
                await server.run_streamable_http_async(host=http[0], port=http[1])
        finally:
            live.stop()
            tg.cancel_scope.cancel()


def run(argv: Sequence[str]) -> int:
    """``vaultlens mcp [--vault DIR] [--http HOST:PORT] [--poll] [-v]``; returns the exit status."""
    try:
        args = build_parser().parse_args(list(argv))
        root = resolve_vault(args.vault)
    except UsageError as exc:
        sys.stderr.write(f"vaultlens: error: {exc}\n")
        return 2
    if args.http and args.http[0] not in ("127.0.0.1", "localhost", "::1"):
        sys.stderr.write(
            f"vaultlens: warning: {args.http[0]} is not loopback: anyone who can reach it can read the vault\n"
        )
    live = LiveVault(root, poll=args.poll)
    server = build_server(live, log_level="INFO" if args.verbose else "WARNING")
    if args.http:
        sys.stderr.write(f"vaultlens: serving {root} at http://{args.http[0]}:{args.http[1]}/mcp\n")
    try:
        anyio.run(serve, live, server, args.http)
    except KeyboardInterrupt:
        pass
    return 0
