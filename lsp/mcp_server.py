"""``vaultlens mcp``: the vault's engine as a Model Context Protocol server, for coding agents.

Owns the MCP wiring (tools, resources, transports) and keeping one live vault current while an
agent edits files. Each tool makes the engine call its CLI command makes and returns, as the
structured result, exactly the object ``vaultlens COMMAND … --json`` prints (``search`` defaults to
``hints`` and ``explain: summary``, see ``Param.mcp_default``); the text content is that same
object as compact JSON. Problems a caller can fix come back as tool errors (``isError``) carrying the
engine's message, the text the CLI prints after ``vaultlens: error:``.

Built on the official ``mcp`` SDK (2.x, ``mcp.server.mcpserver.MCPServer``), an optional extra:
``pip install 'vaultlens[mcp]'``. Never name a module here ``mcp.py``: it would shadow the SDK.

Must not: rank, boost, filter or reshape results (that is ``engine/``), or import pygls.
"""

from __future__ import annotations

import argparse
import functools
import inspect
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

from vaultlens.engine import __version__, results
from vaultlens.engine.cli import UsageError, resolve_vault
from vaultlens.engine.render import compact_dumps, dumps
from vaultlens.engine.scan import list_pages, open_vault, read_bytes
from vaultlens.engine.operation import Operation, Param, disk_source
from vaultlens.engine.ops import OPERATIONS, SEARCH, WRITES
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
[[wikilinks]] and #tags). Rankings are deterministic; a search hit lists the channels that gave
its score the most points (`explain: full` gives every point in `matched`), and `hints` say
whether the top hits answer the query (`sufficient`, `next_action`, `read`: the pages to read).
A good loop: `search` for the topic; `read` the best hits (level 0 or 1 to skim, 2 for
the whole file); follow `related` and `links` to neighbouring pages; use `grep` for exact strings
and `glob` to list pages by path. Pages are named by vault-relative path, title, alias or
[[link]]. Answers follow edits to the vault's files while the server runs. Each page is also a
resource, vault://<path>."""

READ_ONLY_NOTE = """
This server is read-only: no tool changes a file (start it with --allow-writes to offer the write tools)."""

WRITES_NOTE = """
Tools that WRITE to the vault: create_page, append_to_page, edit_page and add (every other tool
only reads). Each write stays inside the vault, is atomic, and is seen by the next search at once.
Pass back the `version` that `read` (or the previous write) returned: a page changed since is
refused, so read it again. Every write returns `links`, how each link you wrote resolves
(resolved, ambiguous, alias, unresolved with suggestions): fix the unresolved ones, or set
strict_links to refuse the write instead."""


# The tools' result objects (their output schemas) are declared in engine/results.py.


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
        # the vector arm (VaultSync.vectors): built in the background from now on
        if self.vectors.reason is not None:
            log.info("rank hybrid runs its lexical arms only: %s", self.vectors.reason)
        self.vectors.kick(self.vault)
        self._stamps: dict[str, tuple[int, int]] = self._stat_all() if poll else {}
        self._root_id = self._root_identity()  # (device, inode) of the folder read, None when gone

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(self.vault, *args, **kwargs)`` on the current vault."""
        self.vectors.touch()  # a request: the background vector build goes on one thread for now
        async with self.lock:
            await self._check_root()
            if self.polling:
                await anyio.to_thread.run_sync(self._poll)
            return await anyio.to_thread.run_sync(
                functools.partial(fn, self.vault, *args, **kwargs)
            )

    def vector_arm(self, vault: Vault) -> Any:
        """The vector arm of ``rank="hybrid"`` (engine.embed.BackgroundVectors): the index as
        soon as the background build has vectors, else None (lexical arms only); a changed
        vault is re-embedded in the background (changed pages only)."""
        return self.vectors.arm(vault)

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

    # --- the vault folder itself --------------------------------------------------------------

    def _root_identity(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.root)
        except OSError:
            return None
        return (st.st_dev, st.st_ino) if os.path.isdir(self.root) else None

    async def _check_root(self) -> None:
        """Notice the vault folder deleted, or deleted and made again (a sync tool, ``git clone``
        over it, a restore): a watcher on the old folder sees nothing more, so the vault is read
        afresh and, from then on, checked for changes before each call (polling). Under the lock."""
        now = await anyio.to_thread.run_sync(self._root_identity)
        if now == self._root_id:
            return
        before, self._root_id = self._root_id, now
        if now is None:
            log.warning("the vault folder %s is gone: answering from an empty vault until it is back", self.root)
            self.swap_in(Vault.from_pages([], self.root, label_first=self.vault.label_first))
            self._stamps = {}
            return
        log.warning(
            "the vault folder %s was %s: reading it again, then checking it for changes before each call",
            self.root, "made again" if before is None else "replaced",
        )
        self.stop()  # the watcher watches the folder that is gone
        vault, _listing = await anyio.to_thread.run_sync(
            functools.partial(open_vault, self.root, exclude=self.exclude)
        )
        self.swap_in(vault)
        self._stamps = await anyio.to_thread.run_sync(self._stat_all)
        self.polling = True

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
            if self._root_identity() is None:  # the folder went away: _check_root takes over
                self.polling = True
                return
            self._stamps = await anyio.to_thread.run_sync(self._stat_all)
            # the watcher may have missed changes before it failed: read the vault afresh
            vault, _listing = await anyio.to_thread.run_sync(
                functools.partial(open_vault, self.root, exclude=self.exclude)
            )
            self.swap_in(vault)
            self.polling = True

    def _stat_all(self) -> dict[str, tuple[int, int]]:
        stamps: dict[str, tuple[int, int, int, int]] = {}
        if self._root_identity() is None:
            return stamps
        for rel in (*list_pages(self.root, self.exclude).paths, VOCABULARY_FILE):
            try:
                st = os.stat(os.path.join(self.root, rel))
            except OSError:
                continue
            stamps[rel] = (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)  # ctime: an edit keeping size and mtime
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


def run_operation(
    vault: Vault, op: Operation, arguments: dict[str, Any], vectors: Callable[[Vault], Any] | None = None
) -> dict[str, Any]:
    """``op`` on ``vault`` as ``vaultlens NAME --json`` runs it: page files read from disk.

    ``vectors(vault)`` gives the vector arm for ``rank="hybrid"`` (None runs its lexical arms only).
    """
    arm = (lambda: vectors(vault)) if vectors is not None else None
    return op.run(disk_source(vault, vault.root or "", arm), **arguments)


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
    """The result object as structured content, and as compact JSON text for clients that read only text."""
    return CallToolResult(
        content=[TextContent(type="text", text=compact_dumps(payload))], structured_content=payload
    )


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


async def _answer(live: LiveVault, op: Operation, arguments: dict[str, Any]) -> CallToolResult:
    try:
        return _ok(await live.call(run_operation, op, arguments, live.vector_arm))
    except ValueError as exc:  # the engine's message for the caller (the CLI's after "error:")
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


def _write_annotations(op: Operation) -> ToolAnnotations:
    """A write tool changes the vault: ``edit_page`` may replace text; ``add`` reads the web."""
    return ToolAnnotations(
        title=op.title,
        read_only_hint=False,
        destructive_hint=op.name == "edit_page",
        idempotent_hint=False,
        open_world_hint=op.name == "add",
    )


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


def _annotation(param: Param) -> Any:
    """The type an MCP argument is validated as, with its schema (description, bounds, values)."""
    kind: Any = {list: list[str], dict: dict[str, str]}.get(param.kind, param.kind)
    if param.repeatable:
        kind = str | list[str]  # one value, or several meaning "any of"
    field: dict[str, Any] = {"description": param.help}
    if param.minimum is not None:
        field["ge"] = param.minimum
    if param.choices and param.checked_by_run:
        field["json_schema_extra"] = {"enum": list(param.choices)}  # shown; ``run`` says what is wrong
    elif param.choices:
        kind = Literal[param.choices]  # type: ignore[valid-type]
    if not param.required and param.agent_default is None:
        kind = kind | None
    return Annotated[kind, Field(**field)]


def tool_function(live: LiveVault, op: Operation) -> Callable[..., Any]:
    """An async function the SDK can make ``op``'s tool from: its signature (one keyword per
    parameter, typed, described, with the MCP default) gives the input schema, its return
    annotation the output schema."""

    async def tool(**arguments: Any) -> CallToolResult:
        return await _answer(live, op, arguments)

    params = [
        inspect.Parameter(
            p.name, inspect.Parameter.KEYWORD_ONLY, annotation=_annotation(p),
            default=inspect.Parameter.empty if p.required else p.agent_default,
        )
        for p in op.params
    ]
    returns = Annotated[CallToolResult, getattr(results, op.result)]
    tool.__name__ = tool.__qualname__ = op.name
    tool.__doc__ = op.description
    tool.__signature__ = inspect.Signature(params, return_annotation=returns)  # type: ignore[attr-defined]
    tool.__annotations__ = {p.name: p.annotation for p in params} | {"return": returns}
    return tool


def build_server(
    live: LiveVault, *, log_level: Literal["INFO", "WARNING"] = "WARNING", allow_writes: bool = False
) -> VaultMCPServer:
    """The MCP server over ``live``: a read-only tool per operation, page resources, a search
    template; with ``allow_writes``, the write tools of ``engine/ops.py`` ``WRITES`` too."""
    instructions = INSTRUCTIONS + (WRITES_NOTE if allow_writes else READ_ONLY_NOTE)
    server = VaultMCPServer(
        live, name="vaultlens", version=__version__, instructions=instructions, log_level=log_level
    )
    for op in OPERATIONS:
        server.add_tool(tool_function(live, op), name=op.name, title=op.title, annotations=_annotations(op.title))
    for op in WRITES if allow_writes else ():
        server.add_tool(tool_function(live, op), name=op.name, title=op.title, annotations=_write_annotations(op))

    @server.resource(
        SCHEME + "search/{query}",
        name="search",
        title="Search results",
        description="The `search` tool's result object for a query (default options), as JSON.",
        mime_type="application/json",
    )
    async def search_resource(query: str) -> str:
        try:
            payload = await live.call(run_operation, SEARCH, {**SEARCH.defaults(), "query": query})
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
    access = parser.add_mutually_exclusive_group()
    access.add_argument(
        "--allow-writes", dest="allow_writes", action="store_true",
        help="also offer the write tools (create_page, append_to_page, edit_page, add), confined to the vault",
    )
    access.add_argument(
        "--read-only", dest="allow_writes", action="store_false",
        help="offer only the tools that read (the default)",
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
    """``vaultlens mcp [--vault DIR] [--http HOST:PORT] [--poll] [-v] [--allow-writes | --read-only]``;
    returns the exit status."""
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
    server = build_server(live, log_level="INFO" if args.verbose else "WARNING", allow_writes=args.allow_writes)
    if args.http:
        sys.stderr.write(f"vaultlens: serving {root} at http://{args.http[0]}:{args.http[1]}/mcp\n")
    try:
        anyio.run(serve, live, server, args.http)
    except KeyboardInterrupt:
        pass
    return 0
