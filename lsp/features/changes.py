"""Shared wiring for the navigation and editing features: page texts, engine changes as
WorkspaceEdits, locations, and waiting for the index. (Following an edit's files on disk, for
clients that report no file changes, is ``lsp/sync.py``'s ``follow_disk``: it is sync.)

Must not: decide what to edit or rank anything; this module only translates.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcException
from pygls.workspace import TextDocument

from vaultlens.engine.edits import Change
from vaultlens.engine.navigate import Location
from vaultlens.engine.scan import read_bytes

from ..convert import path_to_uri, to_lsp_range, uri_to_path
from ..server import VaultServer, VaultState

REQUEST_FAILED = -32803  # LSP ErrorCodes.RequestFailed
INDEX_WAIT_SECONDS = 60


class RequestFailed(JsonRpcException):
    """A request the server refuses, with a sentence the editor shows to the user."""

    CODE = REQUEST_FAILED
    MESSAGE = "Request failed"


async def wait_indexed(state: VaultState, seconds: float = INDEX_WAIT_SECONDS) -> bool:
    """Wait for the vault's start-up scan; False when it did not finish in time."""
    return await _wait(state.indexed, seconds)


async def wait_named(state: VaultState, seconds: float = INDEX_WAIT_SECONDS) -> bool:
    """Wait for every page's names (a cold start's names vault, or the full vault); False when
    they did not come in time."""
    return await _wait(state.named, seconds)


async def _wait(event: asyncio.Event, seconds: float) -> bool:
    if event.is_set():
        return True
    try:
        await asyncio.wait_for(event.wait(), seconds)
    except asyncio.TimeoutError:
        return False
    return True


def open_documents(ls: VaultServer, state: VaultState) -> dict[str, TextDocument]:
    """The open buffers of this vault, by vault-relative path."""
    out: dict[str, TextDocument] = {}
    for doc in list(ls.workspace.text_documents.values()):
        path = uri_to_path(doc.uri)
        rel = state.rel(path) if path else None
        if rel is not None and rel in state.open_docs:
            out[rel] = doc
    return out


def texts_for(
    ls: VaultServer, state: VaultState, docs: dict[str, TextDocument] | None = None
) -> Callable[[str], str | None]:
    """A page's current text by vault-relative path: the open buffer's, else the disk's
    (``docs``: ``open_documents``, when the caller has it at hand: it resolves every buffer's path)."""
    if docs is None:
        docs = open_documents(ls, state)

    def text_of(rel: str) -> str | None:
        doc = docs.get(rel)
        if doc is not None:
            return doc.source
        try:
            data = read_bytes(state.root, rel)
        except OSError:
            return None
        return data.decode("utf-8", errors="replace").removeprefix("\ufeff")

    return text_of


def document_text(ls: VaultServer, uri: str) -> str:
    """The text of the document a request is about (the buffer, as the editor has it)."""
    return ls.workspace.get_text_document(uri).source


def uri_of(state: VaultState, rel: str, docs: dict[str, TextDocument] | None = None) -> str:
    """The URI of a vault page (an open buffer's own URI when it is open)."""
    if docs is not None and rel in docs:
        return docs[rel].uri
    return path_to_uri(state.abs(rel))


def to_location(state: VaultState, location: Location, docs: dict[str, TextDocument] | None = None) -> types.Location:
    """An engine location as an LSP location."""
    return types.Location(uri=uri_of(state, location.path, docs), range=to_lsp_range(location.span))


def _operations(ls: VaultServer) -> set[str]:
    return set(get_capability(ls.client_capabilities, "workspace.workspace_edit.resource_operations", None) or [])


def applies_document_changes(ls: VaultServer) -> bool:
    """Whether the client applies ``documentChanges`` (versioned edits, file operations).

    File operations exist only inside ``documentChanges``, so a client that lists any
    ``resourceOperations`` applies them too (Neovim lists them and never sets ``documentChanges``).
    """
    declared = get_capability(ls.client_capabilities, "workspace.workspace_edit.document_changes", False)
    return bool(declared) or bool(_operations(ls))


def require_edit_support(ls: VaultServer, change: Change | None = None, *, renames_file: bool = False) -> None:
    """Refuse (with a message for the user) when the client cannot apply ``change`` whole:
    versioned ``documentChanges``, and the file operations it creates or renames."""
    if not applies_document_changes(ls):
        raise RequestFailed(
            "vaultlens refuses this edit: the editor cannot apply versioned document changes "
            "(workspace.workspaceEdit.documentChanges), so links in open buffers could be lost. Nothing was changed."
        )
    operations = _operations(ls)
    if (renames_file or (change is not None and change.renames)) and types.ResourceOperationKind.Rename not in operations:
        raise RequestFailed(
            "vaultlens refuses this rename: the editor cannot rename files in a workspace edit "
            '(workspace.workspaceEdit.resourceOperations lacks "rename"). Nothing was changed.'
        )
    if change is not None and change.creates and types.ResourceOperationKind.Create not in operations:
        raise RequestFailed(
            "vaultlens cannot create the page: the editor cannot create files in a workspace edit "
            '(workspace.workspaceEdit.resourceOperations lacks "create").'
        )


def can_create_files(ls: VaultServer) -> bool:
    """Whether the client applies versioned edits and CreateFile operations."""
    return applies_document_changes(ls) and types.ResourceOperationKind.Create in _operations(ls)


def to_workspace_edit(ls: VaultServer, state: VaultState, change: Change) -> types.WorkspaceEdit:
    """A change as ``documentChanges``: creates, then renames, then one versioned edit per page
    (the open buffer's version, null for a file on disk or a renamed page)."""
    docs = open_documents(ls, state)
    if not applies_document_changes(ls) and not change.creates and not change.renames:
        # a plain quick fix for a client without documentChanges: unversioned edits
        changes: dict[str, list[types.TextEdit]] = {}
        for edit in change.edits:
            changes.setdefault(uri_of(state, edit.path, docs), []).append(
                types.TextEdit(range=to_lsp_range(edit.span), new_text=edit.new_text)
            )
        return types.WorkspaceEdit(changes=changes)
    out: list[Any] = []
    for rel in change.creates:
        # ignoreIfExists: never truncate a file that appeared meanwhile (some clients would)
        out.append(
            types.CreateFile(uri=path_to_uri(state.abs(rel)), options=types.CreateFileOptions(ignore_if_exists=True))
        )
    by_path: dict[str, list[types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit]] = {}
    for edit in change.edits:
        by_path.setdefault(edit.path, []).append(types.TextEdit(range=to_lsp_range(edit.span), new_text=edit.new_text))
    # Renames come before the text edits: a client that cannot rename stops there (failure
    # handling "abort"/"transactional") with nothing applied, instead of keeping links already
    # rewritten to a file that was never renamed. A renamed page's edits then name its new URI,
    # unversioned: the buffer moved with the file, and its old version labels the old URI.
    moved = dict(change.renames)
    for old, new in change.renames:
        out.append(types.RenameFile(old_uri=uri_of(state, old, docs), new_uri=path_to_uri(state.abs(new))))
    created = set(change.creates)
    for rel in sorted(by_path, key=lambda p: (p not in created, p)):
        doc = docs.get(rel)
        if rel in moved:
            identifier = types.OptionalVersionedTextDocumentIdentifier(uri=path_to_uri(state.abs(moved[rel])), version=None)
        else:
            identifier = types.OptionalVersionedTextDocumentIdentifier(
                uri=uri_of(state, rel, docs), version=doc.version if doc is not None else None
            )
        out.append(types.TextDocumentEdit(text_document=identifier, edits=by_path[rel]))
    return types.WorkspaceEdit(document_changes=out)


def state_and_page(ls: VaultServer, uri: str) -> tuple[VaultState, str] | None:
    """The vault and vault-relative path of a document, when it is a page of a vault."""
    found = ls.state_for_uri(uri)
    if found is None:
        return None
    state, rel = found
    return (state, rel) if state.vault.get(rel) is not None else None
