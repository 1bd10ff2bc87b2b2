"""Keeping the page graph live: the start-up scan, open buffers, files changed on disk, settings.

The open buffer's text is the truth for its page while it is open; on close the page reverts to
disk. Every change re-parses only that page and upserts it in one synchronous step on the event
loop, so no request sees half an update. The start-up scan loads the vault off the loop (from
the persistent index where files are unchanged), reports work-done progress, and swaps the new
vault in at once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid

from lsprotocol import types
from pygls.capabilities import get_capability

from vaultlens.engine.cache import CacheOptions
from vaultlens.engine.page import parse_page
from vaultlens.engine.scan import is_page_path, list_pages, load_page, load_vault, load_vocabulary
from vaultlens.engine.vault import Vault
from vaultlens.engine.vocabulary import VOCABULARY_FILE

from .convert import uri_to_path
from .features import diagnostics as diagnostics_push
from .server import VaultServer, VaultState
from .settings import SETTINGS_FILE

log = logging.getLogger("vaultlens")
BATCH = 250
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
        await _register_watchers(ls)
        await _pull_configuration(ls)
        for state in list(ls.vaults.values()):
            state.settings, state.warnings = ls.settings_for(state.root)
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
        _from_buffer(ls, state, rel, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: VaultServer, params: types.DidChangeTextDocumentParams) -> None:
        if ls.change_superseded:  # the buffer already has the text; the next change re-parses it
            return
        found = ls.state_for_uri(params.text_document.uri)
        if found is not None:
            _from_buffer(ls, *found, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: VaultServer, params: types.DidSaveTextDocumentParams) -> None:
        found = ls.state_for_uri(params.text_document.uri)
        if found is not None:
            state, rel = found
            if rel == VOCABULARY_FILE:
                state.vault.set_vocabulary(load_vocabulary(state.root))
            elif rel == SETTINGS_FILE:
                _reload_settings(ls, state)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: VaultServer, params: types.DidCloseTextDocumentParams) -> None:
        found = ls.state_for_uri(params.text_document.uri)
        if found is None:
            return
        state, rel = found
        state.open_docs.discard(rel)
        if is_page_path(rel):
            before = state.vault.get(rel)
            _from_disk(state, rel)
            diagnostics_push.on_page(ls, state, rel, before)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: VaultServer, params: types.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            path = uri_to_path(change.uri)
            found = ls.state_for_path(path) if path else None
            if found is None:
                continue
            state, rel = found
            _disk_changed(ls, state, rel)

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
    """
    if state.indexed.is_set() or getattr(state, "_indexing", False):
        return
    state._indexing = True  # type: ignore[attr-defined]
    state._changed_while_indexing = set()  # type: ignore[attr-defined]
    token = None
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

        def report(done: int, total: int) -> None:  # on the loop
            percentage = 100 * done // max(1, total)
            if token and percentage > shown[0]:
                shown[0] = percentage
                ls.work_done_progress.report(
                    token, types.WorkDoneProgressReport(message=f"{done}/{total} pages", percentage=percentage)
                )

        def progress(done: int, total: int) -> None:  # in the loading thread
            loop.call_soon_threadsafe(report, done, total)

        cache = CacheOptions.from_env(
            getattr(settings, "cache_enabled", True), getattr(settings, "cache_location", "user")
        )
        loaded = await asyncio.to_thread(
            load_vault, state.root, exclude=settings.exclude, link_order=settings.link_order, cache=cache,
            progress=progress,
        )
        for warning in loaded.listing.warnings:
            log.warning("%s", warning)
        _swap_in(ls, state, loaded.vault)
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
            types.LogMessageParams(type=types.MessageType.Error, message=f"vaultlens: indexing {state.root} failed: {exc!r}")
        )
    finally:
        state._indexing = False  # type: ignore[attr-defined]
        state.indexed.set()
        if token:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=f"{len(state.vault)} pages indexed"))
        diagnostics_push.on_indexed(ls, state)


def _swap_in(ls: VaultServer, state: VaultState, vault: Vault) -> None:
    """Make ``vault`` the state's vault, with the open buffers and the disk changes that arrived
    while it was loading applied first (one synchronous step on the event loop)."""
    old = state.vault
    for rel in sorted(state.open_docs):
        page = old.pages.get(rel)
        if page is not None and old.label_first == vault.label_first:
            vault.upsert(page, old.fields.get(rel))
        else:
            source = _buffer_text(ls, state, rel)
            if source is not None:
                vault.upsert(parse_page(rel, source, label_first=vault.label_first))
    changed = getattr(state, "_changed_while_indexing", set())
    state.vault = vault
    for rel in sorted(changed - state.open_docs):
        _from_disk(state, rel)
    state._changed_while_indexing = set()  # type: ignore[attr-defined]


def _buffer_text(ls: VaultServer, state: VaultState, rel: str) -> str | None:
    for uri, doc in list(ls.workspace.text_documents.items()):
        found = ls.state_for_uri(uri)
        if found is not None and found[0] is state and found[1] == rel:
            return doc.source
    return None


# --- single pages -----------------------------------------------------------------------------


def _from_buffer(ls: VaultServer, state: VaultState, rel: str, uri: str) -> None:
    """Re-parse the open buffer's text as the page (the buffer wins while open)."""
    if rel == VOCABULARY_FILE:
        from vaultlens.engine.vocabulary import parse_vocabulary

        state.vault.set_vocabulary(parse_vocabulary(ls.workspace.get_text_document(uri).source))
        return
    if not is_page_path(rel):
        return
    state.open_docs.add(rel)
    doc = ls.workspace.get_text_document(uri)
    before = state.vault.get(rel)
    state.vault.upsert(parse_page(rel, doc.source, label_first=state.vault.label_first))
    diagnostics_push.on_page(ls, state, rel, before)


def _from_disk(state: VaultState, rel: str) -> None:
    if getattr(state, "_indexing", False):  # the vault being loaded may have read it before
        state._changed_while_indexing.add(rel)  # type: ignore[attr-defined]
    page = load_page(state.root, rel, label_first=state.vault.label_first)
    if page is None:
        state.vault.remove(rel)
    else:
        state.vault.upsert(page)


def _disk_changed(ls: VaultServer, state: VaultState, rel: str) -> None:
    if rel == VOCABULARY_FILE:
        state.vault.set_vocabulary(load_vocabulary(state.root))
    elif rel == SETTINGS_FILE or rel == ".obsidian/app.json":
        _reload_settings(ls, state)
    elif is_page_path(rel) and rel not in state.open_docs:
        before = state.vault.get(rel)
        _from_disk(state, rel)
        diagnostics_push.on_page(ls, state, rel, before)
    elif not rel.lower().endswith(".md") and rel not in state.open_docs:
        # a folder was deleted or renamed: drop the pages that no longer exist under it
        prefix = rel.rstrip("/") + "/"
        for path in [p for p in state.vault.pages if p.startswith(prefix)]:
            if not os.path.exists(state.abs(path)):
                state.vault.remove(path)
        if os.path.isdir(state.abs(rel)):
            listing = list_pages(state.root, state.settings.exclude)
            for path in listing.paths:
                if path.startswith(prefix) and path not in state.vault.pages:
                    _from_disk(state, path)


def _disk_event(ls: VaultServer, uri: str) -> None:
    path = uri_to_path(uri)
    found = ls.state_for_path(path) if path else None
    if found is not None:
        _disk_changed(ls, *found)


def _reload_settings(ls: VaultServer, state: VaultState) -> None:
    settings, warnings = ls.settings_for(state.root)
    old = state.settings
    state.settings = settings
    for warning in warnings:
        ls.window_log_message(types.LogMessageParams(type=types.MessageType.Warning, message=warning))
    if (settings.exclude, settings.link_order) != (old.exclude, old.link_order):
        state.indexed.clear()
        state._indexing = False  # type: ignore[attr-defined]
        for path in list(state.vault.pages):
            if path not in state.open_docs:
                state.vault.remove(path)
        state.vault.label_first = settings.link_order == "label-first"
        ls.index_tasks.append(asyncio.create_task(index_vault(ls, state)))
    diagnostics_push.on_settings(ls, state)


async def _register_watchers(ls: VaultServer) -> None:
    if not get_capability(ls.client_capabilities, "workspace.did_change_watched_files.dynamic_registration", False):
        return
    watchers = [
        types.FileSystemWatcher(glob_pattern="**/*.md"),
        types.FileSystemWatcher(glob_pattern=f"**/{SETTINGS_FILE}"),
        types.FileSystemWatcher(glob_pattern="**/.obsidian/app.json"),
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
