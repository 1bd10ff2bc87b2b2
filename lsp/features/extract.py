""""Extract to a new page" (code action kind ``refactor.extract``), offered by
``textDocument/codeAction`` (``lsp/features/actions.py`` calls ``extract_actions``).

On a selection, or with the cursor on a heading (its section), the action moves the text to a
new page in the new-page folder (``newPageFolder``, else Obsidian's new-note folder) and leaves
``[[New page]]`` in its place (``extract.leaves`` = ``embed``: ``![[New page]]``). One versioned
WorkspaceEdit: CreateFile, the new page's text, the old page's edit and the links retargeted.
Offered only to editors that apply versioned edits and create files.

Must not: decide what moves or how links change; ``engine.extract`` does.
"""

from __future__ import annotations

import os

from lsprotocol import types
from pygls.capabilities import get_capability

from vaultlens.engine.edits import EditError
from vaultlens.engine.extract import extract_page
from vaultlens.engine.model import Span
from vaultlens.engine.scan import OutsideVault, confined_path

from ..server import VaultServer, VaultState
from ..sync import follow_disk
from .changes import can_create_files, texts_for, to_workspace_edit

KIND = types.CodeActionKind.RefactorExtract


def wanted(only: list[str] | None) -> bool:
    """Whether a code-action request filtered by ``only`` asks for extract actions."""
    return not only or any(KIND.value == kind or KIND.value.startswith(kind + ".") for kind in only)


def extract_actions(ls: VaultServer, state: VaultState, rel: str, params: types.CodeActionParams) -> list[types.CodeAction]:
    """The extract action for the requested range, or none (nothing to move there, an editor
    that cannot create files, a name that would land outside the vault)."""
    if not wanted(params.context.only) or not can_create_files(ls):
        return []
    r = params.range
    try:
        plan = extract_page(
            state.vault,
            rel,
            Span(r.start.line, r.start.character, r.end.line, r.end.character),
            texts_for(ls, state),
            folder=state.settings.create_folder,
            embed=state.settings.extract_leaves == "embed",
            taken=lambda path: os.path.lexists(state.abs(path)),
        )
    except EditError as exc:  # shown greyed out with the reason, where the editor can
        if not get_capability(ls.client_capabilities, "text_document.code_action.disabled_support", False):
            return []
        return [types.CodeAction(title="Extract to a new page", kind=KIND, disabled=types.CodeActionDisabled(reason=str(exc)))]
    if plan is None:
        return []
    try:
        confined_path(state.root, plan.path)
    except OutsideVault:
        return []  # the new-page folder is a symbolic link out of the vault: never offered
    follow_disk(ls, state, plan.change)  # the page appears on disk if the action is taken
    what = "section" if plan.what == "section" else "selection"
    return [
        types.CodeAction(
            title=f"Extract {what} to a new page “{plan.title}” ({plan.path})",
            kind=KIND,
            edit=to_workspace_edit(ls, state, plan.change),
        )
    ]
