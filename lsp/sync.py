"""Keeping the page graph live over LSP: the start-up scan, open buffers, files changed on disk,
settings.

The rules are ``lsp/live.py``'s, shared with the MCP server: the open buffer's text is the truth
for its page while it is open, and on close the page reverts to disk; every change re-parses only
that page and upserts it in one synchronous step on the event loop, so no request sees half an
update; folders are rescanned with the vault's exclude globs. This module turns LSP messages into
those updates and adds what only an editor needs: work-done progress for the start-up scan (which
loads the vault off the loop, from the persistent index where files are unchanged, and swaps it
in at once), diagnostics after each change, settings reloads, and following on disk the files of
an edit for clients that watch none.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
import os
import time
import uuid

from lsprotocol import types
from pygls.capabilities import get_capability

from vaultlens.engine.cache import CacheOptions
from vaultlens.engine.edits import Change
from vaultlens.engine.scan import PARALLEL_MIN_PAGES, load_vault, load_vocabulary, release_free_memory
from vaultlens.engine.vault import Vault
from vaultlens.engine.vocabulary import VOCABULARY_FILE

from . import idle
from .convert import uri_to_path
from .features import diagnostics as diagnostics_push
from .live import Applied, Effect
from .server import VaultServer, VaultState
from .settings import OBSIDIAN_APP_FILE, OBSIDIAN_DAILY_FILE, SETTINGS_FILE

log = logging.getLogger("vaultlens")
BATCH = 250
NAMES_SHARE = 10  # per cent of the start-up progress given to the names pass of a cold load
FOLLOW_SECONDS = 120.0  # how long to watch the files of an edit for a client that watches none
FOLLOW_EVERY = 0.5
FILE_OPERATIONS = types.FileOperationRegistrationOptions(
    filters=[
        types.FileOperationFilter(pattern=types.FileOperationPattern(glob="**/*.md")),
        types.FileOperationFilter(
            pattern=types.FileOperationPattern(glob="**/*", matches=types.FileOperationPatternKind.Folder)
        ),
    ]
)


def register(server: VaultServer) -> None:
    """Register the document-sync, file-watching and configuration handlers."""

    @server.feature(types.INITIALIZE)
    def initialize(ls: VaultServer, params: types.InitializeParams) -> None:
        ls.init_options = params.initialization_options
        folders = params.workspace_folders or []
        roots = [uri_to_path(f.uri) for f in folders]
        if not folders:
            if params.root_uri:
                roots = [uri_to_path(params.root_uri)]
            elif params.root_path:
                roots = [os.path.abspath(params.root_path)]
        for root in roots:
            if root and os.path.isdir(root):
                ls.add_vault(root)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: VaultServer, params: types.InitializedParams) -> None:
        idle.start_collector(ls)
        await _register_watchers(ls)
        await _pull_configuration(ls)
        for state in list(ls.vaults.values()):
            state.use_settings(*ls.settings_for(state.root))
            state.before_change()
            state.vault.label_first = state.settings.link_order == "label-first"
            ls.index_tasks.append(asyncio.create_task(index_vault(ls, state)))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: VaultServer, params: types.DidOpenTextDocumentParams) -> None:
        found = ls.state_for_uri(params.text_document.uri)
        if found is None:
            path = uri_to_path(params.text_document.uri)
            if path is None or not path.lower().endswith(".md"):
                return
            if any(path.startswith(root.rstrip(os.sep) + os.sep) for root in ls.vaults):
                return  # in a vault's folder, through a symbolic link that leads out of it: no page
            state = ls.add_vault(ls.root_for_loose_file(path))
            ls.index_tasks.append(asyncio.create_task(index_vault(ls, state)))
            found = ls.state_for_path(path)
            if found is None:
                return
        state, rel = found
        from_buffer(ls, state, rel, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: VaultServer, params: types.DidChangeTextDocumentParams) -> None:
        if ls.change_superseded:  # the buffer already has the text; the next change re-parses it
            return
        found = ls.state_for_uri(params.text_document.uri)
        if found is not None:
            from_buffer(ls, *found, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: VaultServer, params: types.DidSaveTextDocumentParams) -> None:
        found = ls.state_for_uri(params.text_document.uri)
        if found is not None:
            state, rel = found
            if rel == VOCABULARY_FILE:
                state.before_change()
                state.vault.set_vocabulary(load_vocabulary(state.root))
            elif rel == SETTINGS_FILE:
                _reload_settings(ls, state)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: VaultServer, params: types.DidCloseTextDocumentParams) -> None:
        found = ls.state_for_uri(params.text_document.uri)
        if found is None:
            return
        state, rel = found
        _after(ls, state, rel, state.buffer_closed(rel))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: VaultServer, params: types.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            _disk_event(ls, change.uri)

    @server.feature(types.WORKSPACE_DID_CREATE_FILES, FILE_OPERATIONS)
    def did_create_files(ls: VaultServer, params: types.CreateFilesParams) -> None:
        for f in params.files:
            _disk_event(ls, f.uri)

    @server.feature(types.WORKSPACE_DID_DELETE_FILES, FILE_OPERATIONS)
    def did_delete_files(ls: VaultServer, params: types.DeleteFilesParams) -> None:
        for f in params.files:
            _disk_event(ls, f.uri)

    @server.feature(types.WORKSPACE_DID_RENAME_FILES, FILE_OPERATIONS)
    def did_rename_files(ls: VaultServer, params: types.RenameFilesParams) -> None:
        for f in params.files:
            _disk_event(ls, f.old_uri)
            _disk_event(ls, f.new_uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: VaultServer, params: types.DidChangeConfigurationParams) -> None:
        settings = params.settings
        if isinstance(settings, dict) and settings:
            ls.client_settings = settings.get("vaultlens", settings)
        else:
            await _pull_configuration(ls)
        for state in ls.vaults.values():
            _reload_settings(ls, state)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_workspace_folders(ls: VaultServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for folder in params.event.removed:
            root = uri_to_path(folder.uri)
            if root:
                ls.vaults.pop(os.path.abspath(root), None)
        for folder in params.event.added:
            root = uri_to_path(folder.uri)
            if root and os.path.isdir(root):
                state = ls.add_vault(root)
                ls.index_tasks.append(asyncio.create_task(index_vault(ls, state)))


# --- the start-up scan ------------------------------------------------------------------------


async def index_vault(ls: VaultServer, state: VaultState) -> None:
    """Load the whole vault off the event loop (``engine.scan.load_vault``: the persistent index
    for unchanged pages, worker processes for the rest), then swap it in in one step on the loop.

    Open buffers and files changed on disk while it loaded are applied to the new vault before
    the swap, so no request ever sees a page go back in time. The updated persistent index is
    written afterwards, in the background.

    A cold load first hands over a names vault (every page by its frontmatter: ``engine.names``),
    swapped in the same way (``VaultSync.names_in``): workspace symbols, ``[[`` completion and
    go-to-definition of a link without a heading or block answer from it at once
    (``state.named``); whatever needs bodies, the link graph or tags waits for the full vault
    (``state.indexed``), and no diagnostic is published before it. One progress report covers
    both: the names pass as its first ``NAMES_SHARE`` per cent, the full parse the rest.

    A warm load is the persistent index as stored, before the files are listed
    (``load_vault(check_later=True)``): it is swapped in and ``state.named`` set at once, and
    reads (symbols, completion, hover, definition) answer from it; meanwhile the listing, begun
    with the load, is compared with it (``LoadedVault.check``) and the pages changed since are
    read again as disk events; only then is the vault indexed (``state.indexed``, the progress
    end, diagnostics, and the requests that wait for it: ``wiki/*``, references, edits).
    """
    if state.indexed.is_set() or not state.begin_load():
        return
    token = None
    prepared = False  # the idle preparation of the pages started (a warm load: at once)
    if get_capability(ls.client_capabilities, "window.work_done_progress", False):
        token = f"vaultlens-index-{uuid.uuid4().hex[:8]}"
        try:
            await ls.work_done_progress.create_async(token)
            ls.work_done_progress.begin(
                token, types.WorkDoneProgressBegin(title="Indexing vault", message=state.root, percentage=0)
            )
        except Exception:  # noqa: BLE001 - a client that refuses progress still gets an index
            token = None
    try:
        settings = state.settings
        loop = asyncio.get_running_loop()
        shown = [-1]

        named_at = [0]  # the share of the progress the names pass took (0: there was none)

        def report(done: int, total: int) -> None:  # on the loop
            share = named_at[0]
            percentage = share + (100 - share) * done // max(1, total)
            if token and percentage > shown[0]:
                shown[0] = percentage
                what = "pages read" if share else "pages"
                ls.work_done_progress.report(
                    token, types.WorkDoneProgressReport(message=f"{done}/{total} {what}", percentage=percentage)
                )

        def progress(done: int, total: int) -> None:  # in the loading thread
            loop.call_soon_threadsafe(report, done, total)

        def show_names(vault: Vault, started: float) -> None:  # on the loop
            if load_id != state.load_id or not state.names_in(vault, lambda rel: _buffer_text(ls, state, rel)):
                return  # superseded (settings changed meanwhile): that load's vault is not wanted
            state.named.set()
            named_at[0] = NAMES_SHARE
            log.info("names of %d pages in %s in %.2f s; reading their text", len(vault), state.root,
                     time.perf_counter() - started)
            if token and NAMES_SHARE > shown[0]:
                shown[0] = NAMES_SHARE
                ls.work_done_progress.report(
                    token, types.WorkDoneProgressReport(message=f"{len(vault)} pages by name; reading their text",
                                                        percentage=NAMES_SHARE)
                )

        def on_names(vault: Vault) -> None:  # in the loading thread
            loop.call_soon_threadsafe(show_names, vault, started)

        started = time.perf_counter()
        load_id = state.load_id
        cache = CacheOptions.from_env(settings.cache_enabled, settings.cache_location)
        loaded = await asyncio.to_thread(
            load_vault, state.root, exclude=state.exclude, link_order=settings.link_order, cache=cache,
            progress=progress, on_names=on_names, check_later=True, check_worker_from=PARALLEL_MIN_PAGES,
        )
        held = [state.vault] if state.partial else []  # the names vault, freed off the loop (below)
        state.swap_in(loaded.vault, lambda rel: _buffer_text(ls, state, rel))
        if held:
            ls.index_tasks.append(asyncio.ensure_future(asyncio.to_thread(_drop, held)))
        if loaded.unchecked:
            # The index as stored answers at once (what the names answer on a cold start) while
            # the files are listed, in a worker process from PARALLEL_MIN_PAGES pages (started with
            # the load: nothing shares the interpreter with the first requests); the pages changed
            # since it was stored are read again as disk events, before anything waiting for the
            # checked vault goes on. (Not after the first requests: a client that never paused
            # waited 2 s for its first definition.)
            state.named.set()
            idle.on_indexed(ls, state)  # decoding pages between requests: the same vault, checked in place
            prepared = True
            changed = await asyncio.to_thread(loaded.check)
            for i, rel in enumerate(changed):
                if load_id != state.load_id:
                    break  # superseded (settings changed meanwhile): that load reads the files anew
                state.disk_changed(rel)
                if i % 100 == 99:
                    await asyncio.sleep(0)  # a few hundred changed pages: keep answering meanwhile
        for warning in loaded.listing.warnings:
            log.warning("%s", warning)
        for warning in (*loaded.vault.vocabulary.warnings, *state.warnings):
            ls.window_log_message(types.LogMessageParams(type=types.MessageType.Warning, message=warning))
        log.info(
            "indexed %d pages in %s (%d from the persistent index, %d parsed)",
            len(state.vault), state.root, loaded.from_cache, loaded.parsed,
        )
        ls.index_tasks.append(asyncio.ensure_future(asyncio.to_thread(loaded.commit)))
    except Exception as exc:  # noqa: BLE001 - a bug in loading: say so, and keep serving what there is
        # (the task is kept in index_tasks, so asyncio would never report its exception)
        log.exception("indexing %s failed", state.root)
        ls.window_log_message(
            types.LogMessageParams(type=types.MessageType.Error, message=f"vaultlens: indexing {state.root} failed: {exc!r}\n{traceback.format_exc()}")
        )
    finally:
        state.end_load()
        state.indexed.set()
        state.named.set()
        if token:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=f"{len(state.vault)} pages indexed"))
        if not prepared:
            idle.on_indexed(ls, state)
        diagnostics_push.on_indexed(ls, state)


def _drop(held: list) -> None:
    """Free a vault that is live no more, in a thread: freeing a names vault's objects takes a
    while at 100,000 pages, which the event loop would spend not answering; then hand the memory
    back to the system."""
    held.clear()
    release_free_memory()


def _buffer_text(ls: VaultServer, state: VaultState, rel: str) -> str | None:
    for uri, doc in list(ls.workspace.text_documents.items()):
        found = ls.state_for_uri(uri)
        if found is not None and found[0] is state and found[1] == rel:
            return doc.source
    return None


# --- single pages -----------------------------------------------------------------------------


def from_buffer(ls: VaultServer, state: VaultState, rel: str, uri: str) -> None:
    """Re-parse the open buffer's text as the page (the buffer wins while open)."""
    _after(ls, state, rel, state.buffer_changed(rel, ls.workspace.get_text_document(uri).source))


def disk_changed(ls: VaultServer, state: VaultState, rel: str) -> None:
    """A file or folder of the vault changed on disk: update the index (``VaultSync.disk_changed``),
    then the diagnostics, or the settings when it was a settings file."""
    _after(ls, state, rel, state.disk_changed(rel))


def _after(ls: VaultServer, state: VaultState, rel: str, applied: Applied) -> None:
    if applied.effect is Effect.PAGE:
        diagnostics_push.on_page(ls, state, rel, applied.before)
    elif applied.effect is Effect.SETTINGS:
        _reload_settings(ls, state)


def _disk_event(ls: VaultServer, uri: str) -> None:
    path = uri_to_path(uri)
    found = ls.state_for_path(path) if path else None
    if found is not None:
        disk_changed(ls, *found)


def _reload_settings(ls: VaultServer, state: VaultState) -> None:
    settings, warnings = ls.settings_for(state.root)
    old = state.settings
    state.use_settings(settings, warnings)
    for warning in warnings:
        ls.window_log_message(types.LogMessageParams(type=types.MessageType.Warning, message=warning))
    if (settings.exclude, settings.link_order) != (old.exclude, old.link_order):
        state.indexed.clear()
        state.named.clear()
        state.forget_disk_pages(settings.exclude, settings.link_order == "label-first")
        ls.index_tasks.append(asyncio.create_task(index_vault(ls, state)))
    diagnostics_push.on_settings(ls, state)


async def _register_watchers(ls: VaultServer) -> None:
    if not get_capability(ls.client_capabilities, "workspace.did_change_watched_files.dynamic_registration", False):
        return
    watchers = [
        types.FileSystemWatcher(glob_pattern="**/*.md"),
        types.FileSystemWatcher(glob_pattern=f"**/{SETTINGS_FILE}"),
        types.FileSystemWatcher(glob_pattern=f"**/{OBSIDIAN_APP_FILE}"),
        types.FileSystemWatcher(glob_pattern=f"**/{OBSIDIAN_DAILY_FILE}"),
    ]
    try:
        await ls.client_register_capability_async(
            types.RegistrationParams(
                registrations=[
                    types.Registration(
                        id="vaultlens-watch",
                        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
                    )
                ]
            )
        )
    except Exception as exc:  # noqa: BLE001 - the server works without watchers
        log.warning("could not register file watchers: %s", exc)


async def _pull_configuration(ls: VaultServer) -> None:
    if not get_capability(ls.client_capabilities, "workspace.configuration", False):
        return
    try:
        result = await asyncio.wait_for(
            ls.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="vaultlens")])
            ),
            timeout=5,
        )
    except Exception as exc:  # noqa: BLE001 - configuration is optional
        log.info("workspace/configuration unavailable: %s", exc)
        return
    if result and isinstance(result[0], dict):
        ls.client_settings = result[0]


# --- following the files of an edit -----------------------------------------------------------


def _stamp(path: str) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)  # as git: an edit that keeps size and mtime moves ctime


def follow_disk(ls: VaultServer, state: VaultState, change: Change) -> None:
    """Watch the files an edit touches for a while, for clients that report no file changes.

    Some editors (Neovim before 0.9) apply an edit to unopened files, save and rename them
    without ever telling the server. For those clients (no dynamic ``didChangeWatchedFiles``),
    the files of ``change`` are polled until the edit shows on disk (edited files changed,
    renamed files gone from the old path and present at the new one, created files present) or
    ``FOLLOW_SECONDS`` pass; each change goes through the same path as a watched-file event.
    """
    if get_capability(ls.client_capabilities, "workspace.did_change_watched_files.dynamic_registration", False):
        return
    goals: dict[str, str] = {e.path: "changed" for e in change.edits}
    for old, new in change.renames:
        goals[old], goals[new] = "gone", "present"
    for path in change.creates:
        goals[path] = "present"
    followed = state.followed_paths
    goals = {p: g for p, g in goals.items() if p not in followed}  # code actions are asked for again and again
    if goals:
        followed.update(goals)
        ls.index_tasks.append(asyncio.ensure_future(_follow(ls, state, goals)))


async def _follow(ls: VaultServer, state: VaultState, goals: dict[str, str]) -> None:
    stamps = {rel: _stamp(state.abs(rel)) for rel in goals}
    changed: set[str] = set()

    def reached(rel: str) -> bool:
        goal, stamp = goals[rel], stamps[rel]
        return stamp is None if goal == "gone" else stamp is not None if goal == "present" else rel in changed

    deadline = asyncio.get_running_loop().time() + FOLLOW_SECONDS
    try:
        while not all(reached(rel) for rel in goals) and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(FOLLOW_EVERY)
            for rel in sorted(goals):
                stamp = _stamp(state.abs(rel))
                if stamp != stamps[rel]:
                    stamps[rel] = stamp
                    changed.add(rel)
                    if rel not in state.open_docs:
                        disk_changed(ls, state, rel)
    finally:
        state.followed_paths.difference_update(goals)
