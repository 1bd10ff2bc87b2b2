"""Editing features over stdio: daily-note, block-reference and callout completion, folding
ranges, tag rename and tag references. Each edit the server returns is applied as an editor
would, and the vault is indexed again to check what changed."""

from __future__ import annotations

import asyncio

from datetime import date
from pathlib import Path

import pytest
from e2e_support import change_doc, complete, end_of, engine_vault, open_doc, position, whole, write_vault
from lsprotocol import types
from nav_support import apply_edit, doc, start_nav_session
from pytest_lsp import LanguageClient

from vaultlens.engine.dailynotes import format_date, relative_days

pytestmark = pytest.mark.timeout(120)

FILES = {
    "Home.md": "# Home\n\nStart here. #proj/alpha\n",
    "Ideas.md": (
        "---\ntags: [proj, misc]\n---\n# Ideas\n\nCompost needs air\nand water.\n\n"
        "- turn the pile ^turn\n- add leaves\n\n```\n#proj in code\n```\n\nSee #proj and #proj/alpha/beta, not #project.\n"
    ),
    "Log.md": "---\ntags:\n  - proj/alpha\n---\n[[Ideas]] #Proj\n",
    "journal/2020-01-01.md": "# Old day\n",
}


def apply_text_edits(text: str, edits: list[types.TextEdit]) -> str:
    lines = text.split("\n")
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        assert e.range.start.line == e.range.end.line
        row = lines[e.range.start.line]
        lines[e.range.start.line] = row[: e.range.start.character] + e.new_text + row[e.range.end.character :]
    return "\n".join(lines)


def with_item(text: str, item: types.CompletionItem) -> str:
    assert isinstance(item.text_edit, types.TextEdit)
    return apply_text_edits(text, [item.text_edit, *(item.additional_text_edits or [])])


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = write_vault(tmp_path / "vault", FILES)
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "daily-notes.json").write_text('{"format": "YYYY-MM-DD", "folder": "journal"}', encoding="utf-8")
    return root


async def test_daily_notes_complete_to_the_vault_format_and_get_a_create_fix(bare_client: LanguageClient, vault: Path):
    today = date.today()  # what the server reads: the local date
    days = dict(relative_days(today))
    (vault / "journal" / f"{format_date(days['yesterday'])}.md").write_text("# yesterday\n", encoding="utf-8")
    await start_nav_session(bare_client, vault)
    uri, text = open_doc(bare_client, vault, "Home.md")
    for version, (typed, name) in enumerate(
        [("today", "today"), ("yesterday", "yesterday"), ("tomorrow", "tomorrow"), ("next mon", "next monday"), ("last fri", "last friday")], 2
    ):
        buffer = text + f"Plan: [[{typed}"
        change_doc(bare_client, uri, version, whole(buffer))
        result = await complete(bare_client, uri, end_of(buffer))
        assert result is not None
        item = result.items[0]
        assert item.label == name, [i.label for i in result.items]
        assert item.text_edit.new_text == f"{format_date(days[name])}]]"
        assert f"journal/{format_date(days[name])}.md" in item.detail
    # part of a word is more often a page: the daily note comes after the pages that match
    buffer = text + "Plan: [[Ho"
    change_doc(bare_client, uri, 8, whole(buffer))
    result = await complete(bare_client, uri, end_of(buffer))
    assert [i.label for i in sorted(result.items, key=lambda i: i.sort_text)][:1] == ["Home"]
    buffer = text + "Plan: [[tod"
    change_doc(bare_client, uri, 9, whole(buffer))
    result = await complete(bare_client, uri, end_of(buffer))
    ordered = sorted(result.items, key=lambda i: i.sort_text)
    assert ordered[-1].label == "today" and ordered[-1].text_edit.new_text == f"{format_date(today)}]]"
    # a missing daily note: the unresolved link's quick fix creates it in journal/
    buffer = text + f"Plan: [[{format_date(days['tomorrow'])}]]\n"
    change_doc(bare_client, uri, 10, whole(buffer))
    at = position(buffer, format_date(days["tomorrow"]))
    actions = await bare_client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=doc(uri), range=types.Range(start=at, end=at), context=types.CodeActionContext(diagnostics=[])
        )
    )
    creates = [a for a in actions or [] if a.title.startswith("Create page")]
    assert creates and f"journal/{format_date(days['tomorrow'])}.md" in creates[0].title
    apply_edit(creates[0].edit, {uri: (10, buffer)})
    assert (vault / "journal" / f"{format_date(days['tomorrow'])}.md").is_file()
    after = engine_vault(vault, {"Home.md": buffer})
    link = after.pages["Home.md"].links[-1]
    assert after.resolve_link(link, "Home.md").path == f"journal/{format_date(days['tomorrow'])}.md"


async def test_daily_note_format_setting_and_moment_tokens(bare_client: LanguageClient, vault: Path):
    (vault / ".obsidian" / "daily-notes.json").unlink()
    await start_nav_session(bare_client, vault, options={"dailyNoteFormat": "dddd, MMMM Do YYYY", "dailyNoteFolder": "days"})
    uri, text = open_doc(bare_client, vault, "Home.md")
    buffer = text + "[[today"
    change_doc(bare_client, uri, 2, whole(buffer))
    result = await complete(bare_client, uri, end_of(buffer))
    name = format_date(date.today(), "dddd, MMMM Do YYYY")
    assert result.items[0].label == "today" and result.items[0].text_edit.new_text == f"{name}]]"
    assert f"days/{name}.md" in result.items[0].detail


async def test_a_changed_daily_notes_file_is_read_again(bare_client: LanguageClient, vault: Path):
    await start_nav_session(bare_client, vault)
    uri, text = open_doc(bare_client, vault, "Home.md")
    buffer = text + "[[today"
    change_doc(bare_client, uri, 2, whole(buffer))
    result = await complete(bare_client, uri, end_of(buffer))
    assert f"journal/{format_date(date.today())}.md" in result.items[0].detail
    settings = vault / ".obsidian" / "daily-notes.json"
    settings.write_text('{"format": "YYYY.MM.DD", "folder": "days"}', encoding="utf-8")
    bare_client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=settings.as_uri(), type=types.FileChangeType.Changed)]))
    name = format_date(date.today(), "YYYY.MM.DD")
    for version in range(3, 60):
        change_doc(bare_client, uri, version, whole(buffer))
        result = await complete(bare_client, uri, end_of(buffer))
        if result.items and result.items[0].text_edit.new_text == f"{name}]]":
            break
        await asyncio.sleep(0.1)
    assert result.items[0].label == "today" and result.items[0].text_edit.new_text == f"{name}]]"
    assert f"days/{name}.md" in result.items[0].detail


async def test_block_reference_in_this_page_adds_the_id_in_the_same_edit(bare_client: LanguageClient, vault: Path):
    await start_nav_session(bare_client, vault)
    uri, text = open_doc(bare_client, vault, "Ideas.md")
    buffer = text + "\nBack to [[#^"
    change_doc(bare_client, uri, 2, whole(buffer))
    result = await complete(bare_client, uri, end_of(buffer))
    labels = [i.label for i in result.items]
    assert labels[0] == "turn"  # the existing id first
    assert "Compost needs air and water." in labels and "add leaves" in labels
    item = result.items[labels.index("Compost needs air and water.")]
    assert item.command is None and len(item.additional_text_edits) == 1
    new = with_item(buffer, item)
    block_id = item.text_edit.new_text.removesuffix("]]")
    assert new.endswith(f"Back to [[#^{block_id}]]")
    assert f"and water. ^{block_id}\n" in new
    # the id is deterministic and unique in the page, and the link now resolves to it
    again = await complete(bare_client, uri, end_of(buffer))
    assert [i.text_edit.new_text for i in again.items] == [i.text_edit.new_text for i in result.items]
    assert len({i.text_edit.new_text for i in result.items}) == len(result.items)
    page = engine_vault(vault, {"Ideas.md": new}).pages["Ideas.md"]
    assert (block_id, 6) in page.blocks


async def test_block_reference_in_another_page_applies_a_versioned_edit(bare_client: LanguageClient, vault: Path):
    applied: list[types.ApplyWorkspaceEditParams] = []

    @bare_client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        applied.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    await start_nav_session(bare_client, vault)
    uri, text = open_doc(bare_client, vault, "Home.md")
    buffer = text + "See [[Ideas#^leav"
    change_doc(bare_client, uri, 2, whole(buffer))
    result = await complete(bare_client, uri, end_of(buffer))
    assert [i.label for i in result.items] == ["add leaves"]
    item = result.items[0]
    assert item.additional_text_edits is None and item.command.command == "vaultlens.addBlockId"
    block_id = item.text_edit.new_text.removesuffix("]]")
    await bare_client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=item.command.command, arguments=item.command.arguments)
    )
    assert len(applied) == 1
    changes = applied[0].edit.document_changes
    assert len(changes) == 1 and changes[0].text_document.version is None  # Ideas.md is not open
    apply_edit(applied[0].edit)
    new = (vault / "Ideas.md").read_text(encoding="utf-8")
    assert new == FILES["Ideas.md"].replace("- add leaves\n", f"- add leaves ^{block_id}\n")
    vault_after = engine_vault(vault, {"Home.md": with_item(buffer, item)})
    link = vault_after.pages["Home.md"].links[-1]
    assert link.block == block_id and vault_after.resolve_link(link, "Home.md").path == "Ideas.md"
    assert any(b == block_id for b, _ in vault_after.pages["Ideas.md"].blocks)


async def test_callout_completion_and_folding(bare_client: LanguageClient, vault: Path):
    await start_nav_session(bare_client, vault)
    text = "---\ntitle: F\n---\n# F\n\n> [!tip] Try\n> this\n> and that\n\n```\ncode\n```\n\n## Sub\nbody\n"
    uri, _ = open_doc(bare_client, vault, "Fold.md", text)
    buffer = text + "> [!wa"
    change_doc(bare_client, uri, 2, whole(buffer))
    result = await complete(bare_client, uri, end_of(buffer))
    assert [i.label for i in result.items] == ["warning"]
    assert with_item(buffer, result.items[0]).endswith("> [!warning]")
    buffer = text + "> [!"
    change_doc(bare_client, uri, 3, whole(buffer))
    labels = [i.label for i in (await complete(bare_client, uri, end_of(buffer))).items]
    for name in ("note", "summary", "tldr", "hint", "important", "check", "done", "faq", "caution", "attention",
                 "fail", "missing", "error", "bug", "example", "cite"):
        assert name in labels
    change_doc(bare_client, uri, 4, whole(text))
    folds = await bare_client.text_document_folding_range_async(types.FoldingRangeParams(text_document=doc(uri)))
    assert sorted((f.start_line, f.end_line) for f in folds) == [(0, 2), (3, 14), (5, 7), (9, 11), (13, 14)]


async def test_tag_rename_and_references(bare_client: LanguageClient, vault: Path):
    await start_nav_session(bare_client, vault)
    uri, text = open_doc(bare_client, vault, "Ideas.md")
    at = position(text, "#proj and", 2)
    refs = await bare_client.text_document_references_async(
        types.ReferenceParams(text_document=doc(uri), position=at, context=types.ReferenceContext(include_declaration=True))
    )
    found = sorted((r.uri.rsplit("/", 1)[-1], r.range.start.line) for r in refs)
    assert found == [("Home.md", 2), ("Ideas.md", 1), ("Ideas.md", 15), ("Ideas.md", 15), ("Log.md", 2), ("Log.md", 4)]
    prepared = await bare_client.text_document_prepare_rename_async(types.PrepareRenameParams(text_document=doc(uri), position=at))
    assert prepared.placeholder == "proj"
    edit = await bare_client.text_document_rename_async(types.RenameParams(text_document=doc(uri), position=at, new_name="work"))
    ideas = [c for c in edit.document_changes if c.text_document.uri == uri]
    assert ideas and ideas[0].text_document.version == 1
    saved = apply_edit(edit, {uri: (1, text)})
    assert saved[uri] == FILES["Ideas.md"].replace("[proj,", "[work,").replace("See #proj and #proj/alpha", "See #work and #work/alpha")
    assert (vault / "Log.md").read_text(encoding="utf-8") == FILES["Log.md"].replace("proj/alpha", "work/alpha").replace("#Proj", "#work")
    assert (vault / "Home.md").read_text(encoding="utf-8") == FILES["Home.md"].replace("#proj/alpha", "#work/alpha")
    after = engine_vault(vault)
    assert "proj" not in after.tag_pages and "project" in after.tag_pages
    assert sorted(after.tag_pages["work/alpha"]) == ["Home.md", "Log.md"]
