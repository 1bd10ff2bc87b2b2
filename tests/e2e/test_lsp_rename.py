"""Renames and page creation never lose data: each returned WorkspaceEdit is applied to a copy
of a vault (as an editor would, open buffers included), the copy is re-indexed, and every link
that resolved before must resolve to the same (renamed) page, with nothing else changed.

The shared vault (obsidian-tasks, from ``../shared``) is skipped cleanly when absent.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

import pytest
from e2e_support import SHARED, change_doc, copy_vault, engine_vault, insert_at, open_doc, position
from lsprotocol import types
from nav_support import apply_edit, capabilities, check_links_kept, doc, files_of, start_nav_session
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient


TASKS = SHARED / "vaults" / "obsidian-tasks"


@pytest.fixture
def tasks_vault(tmp_path: Path) -> Path:
    if not TASKS.is_dir():
        pytest.skip(f"{TASKS} is not here (the shared checkout sits next to the repo)")
    return copy_vault(TASKS, tmp_path / "obsidian-tasks")


@contextmanager
def no_cache():
    """Re-index from the files themselves (never from vaultlens' persistent index)."""
    old = os.environ.get("VAULTLENS_CACHE")
    os.environ["VAULTLENS_CACHE"] = "0"
    try:
        yield
    finally:
        if old is None:
            del os.environ["VAULTLENS_CACHE"]
        else:
            os.environ["VAULTLENS_CACHE"] = old


def snapshot(root: Path, buffers: dict[str, str] | None = None):
    """The vault as the server sees it (disk + buffers) and its files with the buffers saved."""
    with no_cache():
        vault = engine_vault(root, buffers)
    files = files_of(root)
    for rel, text in (buffers or {}).items():
        files[rel] = text.encode("utf-8")
    return vault, files


def check(root: Path, before, files, moves, **kw):
    with no_cache():
        return check_links_kept(root, before, files, moves, **kw)


async def prepare(client: LanguageClient, uri: str, at: types.Position):
    return await client.text_document_prepare_rename_async(types.PrepareRenameParams(text_document=doc(uri), position=at))


async def rename(client: LanguageClient, uri: str, at: types.Position, name: str) -> types.WorkspaceEdit:
    return await client.text_document_rename_async(types.RenameParams(text_document=doc(uri), position=at, new_name=name))


def line_of(root: Path, rel: str, needle: str) -> int:
    return next(i for i, line in enumerate((root / rel).read_text(encoding="utf-8").split("\n")) if needle in line)


# --- the shared vault -------------------------------------------------------------------------


async def test_rename_a_page_from_a_link_with_an_unsaved_buffer(bare_client: LanguageClient, tasks_vault: Path):
    await start_nav_session(bare_client, tasks_vault)
    # an unsaved buffer links the page too: its edit must be versioned and kept
    intro_uri, intro = open_doc(bare_client, tasks_vault, "Introduction.md")
    change_doc(bare_client, intro_uri, 2, insert_at(0, 0, "Also [[Custom Filters#Summary|the summary]].\n"))
    buffer = "Also [[Custom Filters#Summary|the summary]].\n" + intro
    before, files = snapshot(tasks_vault, {"Introduction.md": buffer})
    source_uri, source = open_doc(bare_client, tasks_vault, "Advanced/Daily Agenda.md")
    at = position(source, "[[Custom Filters|custom filtering]]", 4)
    prepared = await prepare(bare_client, source_uri, at)
    assert prepared.placeholder == "Custom Filters"
    assert (prepared.range.start.character, prepared.range.end.character) == (at.character - 2, at.character - 2 + len("Custom Filters"))
    edit = await rename(bare_client, source_uri, at, "Custom Filter Expressions")
    renames = [c for c in edit.document_changes if isinstance(c, types.RenameFile)]
    assert len(renames) == 1 and edit.document_changes[0] is renames[0]  # before any text edit
    versioned = [c for c in edit.document_changes if isinstance(c, types.TextDocumentEdit) and c.text_document.uri == intro_uri]
    assert versioned and versioned[0].text_document.version == 2
    saved = apply_edit(edit, {intro_uri: (2, buffer), source_uri: (1, source)})
    assert saved[intro_uri].startswith("Also [[Custom Filter Expressions#Summary|the summary]].\n")
    new = "Scripting/Custom Filter Expressions.md"
    h1 = line_of(tasks_vault, new, "# Custom Filter Expressions")
    after = check(tasks_vault, before, files, {"Scripting/Custom Filters.md": new}, changed_lines={new: {h1}})
    assert after.pages[new].headings[0].text == "Custom Filter Expressions"
    assert len(after.backlinks(new)) == len(before.backlinks("Scripting/Custom Filters.md"))


async def test_will_rename_files_moves_a_page_and_a_folder(bare_client: LanguageClient, tasks_vault: Path):
    result = await start_nav_session(bare_client, tasks_vault)
    assert result.capabilities.workspace.file_operations.will_rename is not None
    before, files = snapshot(tasks_vault)
    moves_on_disk = [
        ("Queries/Filters.md", "Reference/Filter Reference.md"),
        ("How To", "Guides"),
    ]
    edit = await bare_client.workspace_will_rename_files_async(
        types.RenameFilesParams(
            files=[types.FileRename(old_uri=(tasks_vault / a).as_uri(), new_uri=(tasks_vault / b).as_uri()) for a, b in moves_on_disk]
        )
    )
    assert edit is not None and not any(isinstance(c, (types.RenameFile, types.CreateFile)) for c in edit.document_changes)
    apply_edit(edit)
    for a, b in moves_on_disk:  # the editor renames the files after applying the edit
        (tasks_vault / a).rename(tasks_vault / b)
    moves = {"Queries/Filters.md": "Reference/Filter Reference.md"}
    moves |= {p: "Guides/" + p[len("How To/") :] for p in before.pages if p.startswith("How To/")}
    after = check(tasks_vault, before, files, moves)
    assert len(after.backlinks("Reference/Filter Reference.md")) == len(before.backlinks("Queries/Filters.md")) > 10


async def test_rename_a_heading_rewrites_its_links(bare_client: LanguageClient, tasks_vault: Path):
    await start_nav_session(bare_client, tasks_vault)
    before, files = snapshot(tasks_vault)
    page_uri, page = open_doc(bare_client, tasks_vault, "Queries/Filters.md")
    at = position(page, "Filters for Task Statuses\n", 3)
    prepared = await prepare(bare_client, page_uri, at)
    assert prepared.placeholder == "Filters for Task Statuses"
    edit = await rename(bare_client, page_uri, at, "Filters for Statuses")
    touched = {c.text_document.uri for c in edit.document_changes}
    assert len(touched) > 3
    apply_edit(edit, {page_uri: (1, page)})
    line = line_of(tasks_vault, "Queries/Filters.md", "## Filters for Statuses")
    check(
        tasks_vault, before, files, {},
        headings={("Queries/Filters.md", "Filters for Task Statuses"): "Filters for Statuses"},
        changed_lines={"Queries/Filters.md": {line}},
    )


async def test_create_page_from_an_unsaved_link(bare_client: LanguageClient, tasks_vault: Path):
    await start_nav_session(bare_client, tasks_vault, options={"newPageFolder": "Drafts"})
    uri, text = open_doc(bare_client, tasks_vault, "Introduction.md")
    change_doc(bare_client, uri, 2, insert_at(0, 0, "See [[Task Lists: A Primer]].\n"))
    buffer = "See [[Task Lists: A Primer]].\n" + text
    before, files = snapshot(tasks_vault, {"Introduction.md": buffer})
    at = types.Position(line=0, character=8)
    actions = await bare_client.text_document_code_action_async(
        types.CodeActionParams(text_document=doc(uri), range=types.Range(start=at, end=at), context=types.CodeActionContext(diagnostics=[]))
    )
    create = next(a for a in actions if a.title.startswith("Create page"))
    apply_edit(create.edit, {uri: (2, buffer)})
    (tasks_vault / "Introduction.md").write_text(buffer, encoding="utf-8")  # the editor saves the buffer
    new = "Drafts/Task Lists A Primer.md"  # ':' cannot be in a file name: the title keeps it
    assert (tasks_vault / new).read_text(encoding="utf-8") == '---\ntitle: "Task Lists: A Primer"\n---\n'
    after = check(tasks_vault, before, files, {}, created=(new,))
    assert after.resolve("Task Lists: A Primer", "Introduction.md").path == new


# --- the example vault: titles, Markdown links, relative links ---------------------------------


async def test_rename_a_frontmatter_title_keeps_the_file(bare_client: LanguageClient, vault: Path):
    await start_nav_session(bare_client, vault)
    before, files = snapshot(vault)
    home_uri, home = open_doc(bare_client, vault, "Home.md")
    at = position(home, "[[Graph RAG]]", 3)
    assert (await prepare(bare_client, home_uri, at)).placeholder == "Graph RAG"
    edit = await rename(bare_client, home_uri, at, "Graph Retrieval")
    assert not any(isinstance(c, types.RenameFile) for c in edit.document_changes)
    apply_edit(edit, {home_uri: (1, home)})
    page = "ai/rag/graph-rag.md"
    text = (vault / page).read_text(encoding="utf-8")
    assert "title: Graph Retrieval\n" in text and "\n# Graph Retrieval\n" in text
    changed = {line_of(vault, page, "title: Graph Retrieval"), line_of(vault, page, "# Graph Retrieval")}
    after = check(vault, before, files, {}, changed_lines={page: changed})
    assert "[[Graph Retrieval]]" in (vault / "Home.md").read_text(encoding="utf-8")
    assert after.pages[page].title == "Graph Retrieval"


async def test_rename_through_a_markdown_link_and_move_a_page(bare_client: LanguageClient, vault: Path):
    await start_nav_session(bare_client, vault)
    before, files = snapshot(vault)
    uri, text = open_doc(bare_client, vault, "projects/Garden Planner Bot.md")
    at = position(text, "(../garden/Soil%20Health.md)", 12)
    assert (await prepare(bare_client, uri, at)).placeholder == "Soil Health"
    edit = await rename(bare_client, uri, at, "Soil Care (notes)")
    apply_edit(edit, {uri: (1, text)})
    assert "(../garden/Soil%20Care%20%28notes%29.md)" in (vault / "projects/Garden Planner Bot.md").read_text(encoding="utf-8")
    new = "garden/Soil Care (notes).md"
    check(vault, before, files, {"garden/Soil Health.md": new}, changed_lines={new: {line_of(vault, new, "# Soil Care")}})
    # a page moved one folder up: its own relative links follow it
    before, files = snapshot(vault)
    old, moved = "ai/rag/graph-rag.md", "ai/graph-rag.md"
    edit = await bare_client.workspace_will_rename_files_async(
        types.RenameFilesParams(files=[types.FileRename(old_uri=(vault / old).as_uri(), new_uri=(vault / moved).as_uri())])
    )
    apply_edit(edit)
    (vault / old).rename(vault / moved)
    assert "[[./rag/Chunking Strategies]]" in (vault / moved).read_text(encoding="utf-8")
    check(vault, before, files, {old: moved})


async def test_refuses_a_client_that_cannot_apply_the_edit(bare_client: LanguageClient, vault: Path):
    plain = capabilities(workspace=types.WorkspaceClientCapabilities(workspace_edit=types.WorkspaceEditClientCapabilities()))
    await start_nav_session(bare_client, vault, caps=plain)
    uri, text = open_doc(bare_client, vault, "Home.md")
    at = position(text, "[[Composting]]", 3)
    with pytest.raises(JsonRpcException, match="documentChanges"):
        await prepare(bare_client, uri, at)
    with pytest.raises(JsonRpcException, match="Nothing was changed"):
        await rename(bare_client, uri, at, "Compost Heaps")
    assert (vault / "garden/Composting.md").exists()


async def test_a_client_that_lists_resource_operations_applies_document_changes(bare_client: LanguageClient, vault: Path):
    """Neovim lists resourceOperations but never sets documentChanges: it still gets the edit."""
    neovim = capabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(
                resource_operations=[types.ResourceOperationKind.Rename, types.ResourceOperationKind.Create]
            ),
        )
    )
    await start_nav_session(bare_client, vault, caps=neovim)
    before, files = snapshot(vault)
    uri, text = open_doc(bare_client, vault, "Home.md")
    edit = await rename(bare_client, uri, position(text, "[[Composting]]", 3), "Compost Heaps")
    apply_edit(edit, {uri: (1, text)})
    new = "garden/Compost Heaps.md"
    check(vault, before, files, {"garden/Composting.md": new}, changed_lines={new: {line_of(vault, new, "# Compost Heaps")}})
