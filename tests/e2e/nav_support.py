"""Helpers for the navigation and editing e2e tests: a client that can apply edits, an applier
for the server's WorkspaceEdits, and a check that a vault's links survived an edit.

``apply_edit`` plays the editor: it creates and renames files and applies each document's
text edits, to the open buffer when the edit is versioned (then "saves" it) and to the file
on disk otherwise. It refuses edits a careful editor would refuse (a version that does not
match the buffer, an unversioned edit of an open buffer, overlapping edits).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from e2e_support import CAPABILITIES, wait_indexed
from lsprotocol import types
from pygls.uris import to_fs_path
from pytest_lsp import LanguageClient

from vaultlens.engine.scan import open_vault
from vaultlens.engine.text import index_of_utf16
from vaultlens.engine.vault import Vault

# The e2e client plus what navigation and editing need, as VS Code declares it.
NAV_CAPABILITIES = types.ClientCapabilities(
    general=CAPABILITIES.general,
    window=CAPABILITIES.window,
    workspace=types.WorkspaceClientCapabilities(
        configuration=True,
        workspace_folders=True,
        apply_edit=True,
        did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
        symbol=types.WorkspaceSymbolClientCapabilities(),
        workspace_edit=types.WorkspaceEditClientCapabilities(
            document_changes=True,
            resource_operations=[
                types.ResourceOperationKind.Create,
                types.ResourceOperationKind.Rename,
                types.ResourceOperationKind.Delete,
            ],
        ),
        file_operations=types.FileOperationClientCapabilities(will_rename=True, did_rename=True),
    ),
    text_document=types.TextDocumentClientCapabilities(
        synchronization=CAPABILITIES.text_document.synchronization,
        completion=CAPABILITIES.text_document.completion,
        hover=CAPABILITIES.text_document.hover,
        definition=types.DefinitionClientCapabilities(link_support=False),
        references=types.ReferenceClientCapabilities(),
        document_symbol=types.DocumentSymbolClientCapabilities(hierarchical_document_symbol_support=True),
        folding_range=types.FoldingRangeClientCapabilities(line_folding_only=True),
        code_lens=types.CodeLensClientCapabilities(),
        code_action=types.CodeActionClientCapabilities(
            code_action_literal_support=types.ClientCodeActionLiteralOptions(
                code_action_kind=types.ClientCodeActionKindOptions(value_set=[types.CodeActionKind.QuickFix])
            )
        ),
        rename=types.RenameClientCapabilities(prepare_support=True),
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(related_information=True),
    ),
)


def capabilities(**changes: Any) -> types.ClientCapabilities:
    """NAV_CAPABILITIES with parts replaced, e.g. ``workspace=...`` or ``text_document=...``."""
    import attrs

    return attrs.evolve(NAV_CAPABILITIES, **changes)


async def start_nav_session(
    client: LanguageClient, *roots: Path, caps: types.ClientCapabilities = NAV_CAPABILITIES, options: Any = None
) -> types.InitializeResult:
    """``initialize`` + ``initialized`` with these capabilities, then wait for the index."""
    folders = [types.WorkspaceFolder(uri=r.as_uri(), name=r.name) for r in roots]
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=caps, root_uri=roots[0].as_uri(), workspace_folders=folders, initialization_options=options
        )
    )
    await wait_indexed(client, list(roots))
    return result


def doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


async def eventually(check: Callable[[], Any], timeout: float = 10.0) -> Any:
    """Poll ``check`` until it returns something truthy (server notifications arrive async)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = check()
        if value:
            return value
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


def codes(client: LanguageClient, uri: str) -> list[tuple[str, int]]:
    """(code, line) of the problems last pushed for a document (link suggestions, which are no
    problem, left out: tests/e2e/test_lsp_mentions.py checks those)."""
    return sorted((str(d.code), d.range.start.line) for d in client.diagnostics.get(uri, [])
                  if d.code != "link-suggestion")


# --- applying a WorkspaceEdit -----------------------------------------------------------------


def _apply_text_edits(text: str, edits: list[types.TextEdit]) -> str:
    bom = text.startswith("\ufeff")
    body = text[1:] if bom else text
    lines = body.splitlines(keepends=True) or [""]
    if body.endswith(("\n", "\r")):
        lines.append("")

    def offset(pos: types.Position) -> int:
        before = sum(len(line) for line in lines[: pos.line])
        line = lines[pos.line] if pos.line < len(lines) else ""
        content = line.rstrip("\r\n")
        return before + index_of_utf16(content, pos.character)

    spans = sorted(((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits), reverse=True)
    for (a, _b, _), (_c, d, _) in zip(spans, spans[1:]):
        assert d <= a, "overlapping edits"
    for a, b, new in spans:
        body = body[:a] + new + body[b:]
    return ("\ufeff" if bom else "") + body


def apply_edit(edit: types.WorkspaceEdit, buffers: dict[str, tuple[int, str]] | None = None) -> dict[str, str]:
    """Apply a WorkspaceEdit as an editor would, then save: returns the new text of every
    buffer it edited (by URI). ``buffers`` maps open documents' URIs to (version, text)."""
    buffers = dict(buffers or {})
    saved: dict[str, str] = {}
    assert edit.changes is None, "the server must send documentChanges"
    for change in edit.document_changes or []:
        if isinstance(change, types.CreateFile):
            path = Path(to_fs_path(change.uri))
            assert not path.exists(), f"CreateFile over an existing file: {path}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("", encoding="utf-8")
        elif isinstance(change, types.RenameFile):
            old, new = Path(to_fs_path(change.old_uri)), Path(to_fs_path(change.new_uri))
            assert old.exists() and not new.exists(), (old, new)
            new.parent.mkdir(parents=True, exist_ok=True)
            old.rename(new)
        elif isinstance(change, types.DeleteFile):
            raise AssertionError("the server must never delete a file")
        else:
            uri = change.text_document.uri
            path = Path(to_fs_path(uri))
            if uri in buffers:
                version, text = buffers[uri]
                assert change.text_document.version == version, "edit of an open buffer must carry its version"
            else:
                assert change.text_document.version is None, f"versioned edit for a closed file {uri}"
                text = path.read_text(encoding="utf-8")
            new_text = _apply_text_edits(text, list(change.edits))
            path.write_text(new_text, encoding="utf-8")
            if uri in buffers:
                buffers[uri] = (buffers[uri][0], new_text)
                saved[uri] = new_text
    return saved


# --- checking that links survived -------------------------------------------------------------


def link_map(vault: Vault) -> dict[str, list[tuple[str, str | None, str | None, str | None, str | None]]]:
    """Per page: for each link and typed edge in order, (kind, label, heading, block, resolved path)."""
    out = {}
    for path in vault.sorted_paths():
        page = vault.pages[path]
        out[path] = [
            (link.kind, link.label, link.heading, link.block, vault.resolve_link(link, path).path)
            for link in (*page.edges, *page.links)
        ]
    return out


def skeleton(vault: Vault, root: Path, path: str, extra_lines: set[int] = frozenset()) -> str:
    """A page's text on disk with every link (and the given whole lines) blanked: what an edit
    of links must leave alone."""
    return _skeleton_text(vault, (root / path).read_text(encoding="utf-8"), path, extra_lines)


def files_of(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (dot-folders included, vaultlens' own index cache not), by POSIX
    relative path."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.relative_to(root).as_posix().startswith(".vaultlens/")
    }


def check_links_kept(
    root: Path,
    before: Vault,
    before_files: dict[str, bytes],
    moves: dict[str, str],
    *,
    headings: dict[tuple[str, str], str] | None = None,
    changed_lines: dict[str, set[int]] | None = None,
    created: tuple[str, ...] = (),
) -> Vault:
    """Re-index ``root`` and check the edit kept the vault whole.

    Every link that resolved before resolves to the same page (through ``moves``) with the
    same kind, label and block, and the same heading (or its new name, per ``headings``:
    (page, old heading) -> new); no other text changed (outside links, and outside
    ``changed_lines`` per new path); files other than pages are byte-identical; the only new
    pages are ``created``.
    """
    after, _ = open_vault(str(root))
    headings = headings or {}
    changed_lines = changed_lines or {}
    old_map, new_map = link_map(before), link_map(after)
    expected_paths = sorted([*(moves.get(p, p) for p in before.pages), *created])
    assert sorted(after.pages) == expected_paths
    for path, links in old_map.items():
        new_path = moves.get(path, path)
        got = new_map[new_path]
        assert len(got) == len(links), f"{path}: links added or lost"
        for (kind, label, heading, block, target), (kind2, label2, heading2, block2, target2) in zip(links, got):
            assert (kind, label, block) == (kind2, label2, block2), (path, kind, label, block, kind2, label2, block2)
            if target is not None:
                assert target2 == moves.get(target, target), (path, target, target2)
                renamed = headings.get((target, heading or "")) if heading else None
                assert heading2 == (renamed or heading), (path, heading, heading2)
    for path in before.pages:
        new_path = moves.get(path, path)
        old_skeleton = _skeleton_text(before, before_files[path].decode("utf-8"), path, changed_lines.get(new_path, set()))
        new_skeleton = skeleton(after, root, new_path, changed_lines.get(new_path, set()))
        assert old_skeleton == new_skeleton, f"text outside links changed in {path}"
    now = files_of(root)
    for rel, data in before_files.items():
        if rel in before.pages:
            continue
        assert now.get(rel) == data, f"{rel} changed"
    return after


def _skeleton_text(vault: Vault, text: str, path: str, extra_lines: set[int]) -> str:
    lines = text.split("\n")
    page = vault.pages[path]
    spans = sorted(((link.span.start_line, link.span.start_char, link.span.end_char) for link in (*page.edges, *page.links)), reverse=True)
    for line, a, b in spans:
        content = lines[line]
        lines[line] = content[: index_of_utf16(content, a)] + "\0" + content[index_of_utf16(content, b) :]
    for line in extra_lines:
        lines[line] = "\0"
    return "\n".join(lines)
