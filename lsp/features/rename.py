"""Renames: ``textDocument/prepareRename`` + ``textDocument/rename`` (a page, from a link to it or
from its title; a heading; a tag, with the tags below it, across the vault) and ``workspace/willRenameFiles`` (files or folders renamed in the
editor). Each answer is one WorkspaceEdit that keeps every link resolving to the same page.

The client must apply versioned ``documentChanges`` (and file renames, when the file is
renamed); otherwise the request is refused with a message, so nothing is half-applied. The
server never writes a file.

Must not: decide what to rewrite; ``engine.edits`` does.
"""

from __future__ import annotations

import os

from lsprotocol import types

from vaultlens.engine.edits import EditError, RenameSubject, move_pages, rename, rename_subject
from vaultlens.engine.model import Span
from vaultlens.engine.tags import rename_tag, tag_at

from ..convert import to_lsp_range, uri_to_path
from ..server import VaultServer, VaultState
from ..sync import FILE_OPERATIONS, follow_disk
from .changes import (
    RequestFailed,
    document_text,
    require_edit_support,
    state_and_page,
    texts_for,
    to_workspace_edit,
    wait_indexed,
)


async def _subject(ls: VaultServer, uri: str, position: types.Position) -> tuple[VaultState, RenameSubject] | None:
    found = state_and_page(ls, uri)
    if found is None:
        return None
    state, rel = found
    if not await wait_indexed(state):
        raise RequestFailed("vaultlens is still indexing the vault; try the rename again in a moment.")
    subject = rename_subject(state.vault, rel, position.line, position.character, document_text(ls, uri))
    return (state, subject) if subject is not None else None


async def _tag(ls: VaultServer, uri: str, position: types.Position) -> tuple[VaultState, str, Span] | None:
    """The tag under the cursor (inline or in the frontmatter ``tags``), or None."""
    found = state_and_page(ls, uri)
    if found is None:
        return None
    state, rel = found
    tag = tag_at(state.vault, rel, position.line, position.character, document_text(ls, uri))
    if tag is None:
        return None
    if not await wait_indexed(state):
        raise RequestFailed("vaultlens is still indexing the vault; try the rename again in a moment.")
    return state, tag[0], tag[1]


def _moves(state: VaultState, files: list[types.FileRename]) -> dict[str, str]:
    """Vault-relative (old, new) page paths for renamed files and folders of this vault."""
    moves: dict[str, str] = {}
    for f in files:
        old, new = uri_to_path(f.old_uri), uri_to_path(f.new_uri)
        old_rel = state.rel(old) if old else None
        new_rel = state.rel(new) if new else None
        if old_rel is None or new_rel is None:
            continue
        if old_rel in state.vault.pages:
            moves[old_rel] = new_rel
            continue
        prefix = old_rel.rstrip("/") + "/"  # a folder: every page under it moves
        for path in state.vault.pages:
            if path.startswith(prefix):
                moves[path] = new_rel.rstrip("/") + "/" + path[len(prefix) :]
    return moves


def register(server: VaultServer) -> None:
    """Register ``textDocument/prepareRename``, ``textDocument/rename`` and ``workspace/willRenameFiles``."""

    @server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
    async def prepare_rename(
        ls: VaultServer, params: types.PrepareRenameParams
    ) -> types.PrepareRenamePlaceholder | None:
        tag = await _tag(ls, params.text_document.uri, params.position)
        if tag is not None:
            require_edit_support(ls)
            _state, name, span = tag
            return types.PrepareRenamePlaceholder(range=to_lsp_range(span), placeholder=name.lstrip("#"))
        found = await _subject(ls, params.text_document.uri, params.position)
        if found is None:
            return None
        _state, subject = found
        require_edit_support(ls, renames_file=subject.renames_file)
        return types.PrepareRenamePlaceholder(range=to_lsp_range(subject.span), placeholder=subject.placeholder)

    @server.feature(types.TEXT_DOCUMENT_RENAME)
    async def rename_symbol(ls: VaultServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
        tag = await _tag(ls, params.text_document.uri, params.position)
        if tag is not None:
            require_edit_support(ls)
            state, name, _span = tag
            try:
                change = rename_tag(state.vault, name, params.new_name, texts_for(ls, state))
            except EditError as exc:
                raise RequestFailed(str(exc)) from None
            return to_workspace_edit(ls, state, change)
        found = await _subject(ls, params.text_document.uri, params.position)
        if found is None:
            raise RequestFailed("Nothing to rename here: put the cursor on a link, a heading, a tag or the page's title.")
        state, subject = found
        require_edit_support(ls, renames_file=subject.renames_file)
        try:
            change = rename(state.vault, subject, params.new_name, texts_for(ls, state))
        except EditError as exc:
            raise RequestFailed(str(exc)) from None
        require_edit_support(ls, change)
        for _old, new in change.renames:
            if os.path.exists(state.abs(new)):
                raise RequestFailed(f"{new} already exists on disk; choose another name. Nothing was changed.")
        follow_disk(ls, state, change)
        return to_workspace_edit(ls, state, change)

    @server.feature(types.WORKSPACE_WILL_RENAME_FILES, FILE_OPERATIONS)
    async def will_rename_files(ls: VaultServer, params: types.RenameFilesParams) -> types.WorkspaceEdit | None:
        edits: list = []
        for root in sorted(ls.vaults):
            state = ls.vaults[root]
            moves = _moves(state, params.files)
            if not moves:
                continue
            if not await wait_indexed(state):
                raise RequestFailed("vaultlens is still indexing the vault; links were not updated.")
            try:
                change = move_pages(state.vault, moves, texts_for(ls, state))
            except EditError as exc:
                raise RequestFailed(str(exc)) from None
            if change.edits:
                require_edit_support(ls, change)
                follow_disk(ls, state, change)
                edits += to_workspace_edit(ls, state, change).document_changes or []
        return types.WorkspaceEdit(document_changes=edits) if edits else None
