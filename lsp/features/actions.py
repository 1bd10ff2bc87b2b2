"""``textDocument/codeAction``: quick fixes for the links in the requested range.

"Create page" (an unresolved link; the page goes to ``newPageFolder``, else the Obsidian
new-note folder), "Link to <path>" (each page an ambiguous link matches), "Link to <Title> by
its name" (a link that only resolves through an alias) and the closest existing headings or
blocks for a broken anchor. Each action carries its WorkspaceEdit and the diagnostic it fixes.

Must not: decide which fixes apply; ``engine.fixes`` does.
"""

from __future__ import annotations

import os

from lsprotocol import types

from vaultlens.engine.fixes import quick_fixes
from vaultlens.engine.model import Span
from vaultlens.engine.scan import OutsideVault, confined_path

from ..server import VaultServer
from ..sync import follow_disk
from . import extract, mentions
from .changes import can_create_files, document_text, state_and_page, to_workspace_edit, wait_indexed


def register(server: VaultServer) -> None:
    """Register ``textDocument/codeAction``."""

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, extract.KIND]),
    )
    async def code_action(ls: VaultServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        found = state_and_page(ls, params.text_document.uri)
        if found is None:
            return None
        state, rel = found
        if params.context.only and not any(
            kind == types.CodeActionKind.QuickFix or types.CodeActionKind.QuickFix.value.startswith(kind)
            for kind in params.context.only
        ):
            if not extract.wanted(params.context.only):
                return None
            await wait_indexed(state)
            return extract.extract_actions(ls, state, rel, params)
        await wait_indexed(state)
        r = params.range
        fixes = quick_fixes(
            state.vault,
            rel,
            Span(r.start.line, r.start.character, r.end.line, r.end.character),
            new_page_folder=state.settings.create_folder,
            text=document_text(ls, params.text_document.uri),
            create=can_create_files(ls),
            daily=state.settings.daily_note,
        )
        out = []
        for fix in fixes:
            if any(os.path.lexists(state.abs(path)) for path in fix.change.creates):
                continue  # a file the index does not hold (excluded, not a page): never overwrite it
            if not all(_inside(state, path) for path in fix.change.creates):
                continue  # its folder resolves outside the vault (a symbolic link): never offered
            diagnostics = [
                d for d in params.context.diagnostics
                if d.code == fix.code and (d.range.start.line, d.range.start.character) == (fix.span.start_line, fix.span.start_char)
            ]
            if fix.change.creates:
                follow_disk(ls, state, fix.change)  # the page appears on disk if the action is taken
            out.append(
                types.CodeAction(
                    title=fix.title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=diagnostics or None,
                    is_preferred=fix.preferred or None,
                    edit=to_workspace_edit(ls, state, fix.change),
                )
            )
        out += extract.extract_actions(ls, state, rel, params)  # refactor.extract (lsp/features/extract.py)
        return out + mentions.code_actions(ls, state, rel, params)


def _inside(state, rel: str) -> bool:
    """Whether ``rel`` resolves inside the vault, every symbolic link on the way followed."""
    try:
        confined_path(state.root, rel)
    except OutsideVault:
        return False
    return True
