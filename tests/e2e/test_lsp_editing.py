"""Editing features over stdio (issue 21): extract to a new page, inlay hints, semantic tokens
and workspace diagnostics, against the real server.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_support import open_doc, write_vault
from lsprotocol import types
from nav_support import NAV_CAPABILITIES, apply_edit, capabilities, doc, start_nav_session
from pytest_lsp import LanguageClient

from vaultlens.engine.scan import open_vault

pytestmark = pytest.mark.timeout(60)

GARDEN = (
    "# Garden\n\nIntro with [[#Watering]] and [[Nowhere]].\n\n"
    "## Soil 🙂 care\n\nFeed with [[Compost]] and [[./Compost|local]], see [[#Watering]]. #soil/ph\n"
    "Also [md](Compost.md).\n\n### Depth\n\nDig deep. ^deep\n\n"
    "## Watering\n\nOften. ^tip Back to [[#Depth]] and [[2024-03-01-plan]].\n"
)
FILES = {
    "notes/Garden.md": GARDEN,
    "notes/Compost.md": "---\naliases: [Humus]\n---\n# Compost\n\nSee [[Garden#Soil 🙂 care]], [[Garden#^deep]] and [g](Garden.md#depth).\n",
    "Other.md": "Read [[notes/Garden#Depth|depth]], [[Garden#Soil 🙂 care]] and [[Humus]].\n",
    "plans/2024-03-01-plan.md": "---\ntitle: Spring plan\n---\nPlant.\n",
    ".obsidian/app.json": '{"newFileLocation": "folder", "newFileFolderPath": "inbox"}',
}

EDITING = capabilities(
    text_document=types.TextDocumentClientCapabilities(
        synchronization=NAV_CAPABILITIES.text_document.synchronization,
        code_action=types.CodeActionClientCapabilities(
            code_action_literal_support=types.ClientCodeActionLiteralOptions(
                code_action_kind=types.ClientCodeActionKindOptions(
                    value_set=[types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorExtract]
                )
            ),
            disabled_support=True,
        ),
        inlay_hint=types.InlayHintClientCapabilities(),
        semantic_tokens=types.SemanticTokensClientCapabilities(
            requests=types.ClientSemanticTokensRequestOptions(range=True, full=True),
            token_types=["wikilink", "tag", "blockId"],
            token_modifiers=["unresolved", "aliasOnly", "ambiguous", "embed"],
            formats=[types.TokenFormat.Relative],
        ),
        diagnostic=types.DiagnosticClientCapabilities(related_document_support=False),
    )
)


def targets(vault) -> list[tuple[str, str, str | None, str | None]]:
    """(source, kind, anchor, resolved path) of every link, sorted."""
    out = []
    for path in vault.sorted_paths():
        for link in (*vault.pages[path].edges, *vault.pages[path].links):
            out.append((path, link.kind, link.heading or link.block, vault.resolve_link(link, path).path))
    return sorted(out, key=repr)


async def test_extract_a_section_to_a_new_page_keeps_every_link(bare_client: LanguageClient, tmp_path: Path):
    root = write_vault(tmp_path / "vault", FILES)
    await start_nav_session(bare_client, root, caps=EDITING)
    uri, text = open_doc(bare_client, root, "notes/Garden.md")
    at = types.Position(line=4, character=3)  # on "## Soil 🙂 care"
    actions = await bare_client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=doc(uri), range=types.Range(start=at, end=at),
            context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.RefactorExtract]),
        )
    )
    assert [a.title for a in actions] == ["Extract section to a new page “Soil 🙂 care” (inbox/Soil 🙂 care.md)"]
    edit = actions[0].edit
    assert isinstance(edit.document_changes[0], types.CreateFile)
    apply_edit(edit, {uri: (1, text)})
    after, _ = open_vault(str(root))
    assert (root / "inbox" / "Soil 🙂 care.md").read_text(encoding="utf-8") == (
        "## Soil 🙂 care\n\nFeed with [[Compost]] and [[../notes/Compost|local]], see [[Garden#Watering]]. #soil/ph\n"
        "Also [md](../notes/Compost.md).\n\n### Depth\n\nDig deep. ^deep\n"
    )
    assert (root / "notes/Garden.md").read_text(encoding="utf-8") == (
        "# Garden\n\nIntro with [[#Watering]] and [[Nowhere]].\n\n[[Soil 🙂 care]]\n\n"
        "## Watering\n\nOften. ^tip Back to [[Soil 🙂 care#Depth]] and [[2024-03-01-plan]].\n"
    )
    # every link still resolves: the same pages, the moved anchors at the new page
    new = "inbox/Soil 🙂 care.md"
    assert targets(after) == sorted([
        ("Other.md", "wiki", "Depth", new), ("Other.md", "wiki", "Soil 🙂 care", new), ("Other.md", "wiki", None, "notes/Compost.md"),
        ("notes/Compost.md", "wiki", "Soil 🙂 care", new), ("notes/Compost.md", "wiki", "deep", new), ("notes/Compost.md", "md", "depth", new),
        ("notes/Garden.md", "wiki", "Watering", "notes/Garden.md"), ("notes/Garden.md", "wiki", None, None),
        ("notes/Garden.md", "wiki", None, new), ("notes/Garden.md", "wiki", "Depth", new), ("notes/Garden.md", "wiki", None, "plans/2024-03-01-plan.md"),
        (new, "wiki", None, "notes/Compost.md"), (new, "wiki", None, "notes/Compost.md"), (new, "wiki", "Watering", "notes/Garden.md"),
        (new, "md", None, "notes/Compost.md"),
    ], key=repr)
    # a cursor off any heading offers nothing; a selection that cuts a link is refused with a reason
    off = types.Position(line=2, character=1)
    none = await bare_client.text_document_code_action_async(
        types.CodeActionParams(text_document=doc(uri), range=types.Range(start=off, end=off),
                               context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.RefactorExtract]))
    )
    assert not none


async def test_inlay_hints_and_semantic_tokens(bare_client: LanguageClient, tmp_path: Path):
    root = write_vault(tmp_path / "vault", FILES)
    await start_nav_session(bare_client, root, caps=EDITING)
    uri, text = open_doc(bare_client, root, "notes/Garden.md")
    whole = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=20, character=0))
    hints = await bare_client.text_document_inlay_hint_async(types.InlayHintParams(text_document=doc(uri), range=whole))
    assert [(h.position.line, h.position.character, h.label) for h in hints] == [
        (4, 15, "2 backlinks"),  # "## Soil 🙂 care": the emoji is two UTF-16 units
        (9, 9, "2 backlinks"),  # "### Depth": Other.md and the Markdown link of Compost.md
        (15, 54, "Spring plan"),  # after [[2024-03-01-plan]]
    ]
    tokens = await bare_client.text_document_semantic_tokens_full_async(types.SemanticTokensParams(text_document=doc(uri)))
    legend = ["wikilink", "tag", "blockId"], ["unresolved", "aliasOnly", "ambiguous", "embed"]
    assert decode(tokens.data, legend) == [
        (2, 11, 13, "wikilink", ()), (2, 29, 11, "wikilink", ("unresolved",)),
        (6, 10, 11, "wikilink", ()), (6, 26, 19, "wikilink", ()), (6, 51, 13, "wikilink", ()), (6, 66, 8, "tag", ()),
        (11, 10, 5, "blockId", ()),  # "^tip" mid-line is no block id
        (15, 20, 10, "wikilink", ()), (15, 35, 19, "wikilink", ()),
    ]
    other, _ = open_doc(bare_client, root, "Other.md")
    some = await bare_client.text_document_semantic_tokens_range_async(
        types.SemanticTokensRangeParams(text_document=doc(other), range=types.Range(
            start=types.Position(line=0, character=40), end=types.Position(line=0, character=80)))
    )
    assert decode(some.data, legend) == [(0, 35, 23, "wikilink", ()), (0, 63, 9, "wikilink", ("aliasOnly",))]


def decode(data: list[int], legend: tuple[list[str], list[str]]) -> list[tuple[int, int, int, str, tuple[str, ...]]]:
    """The relative integer stream as (line, UTF-16 column, length, type, modifiers)."""
    out, line, col = [], 0, 0
    for i in range(0, len(data), 5):
        dl, dc, length, kind, bits = data[i : i + 5]
        line, col = line + dl, (col + dc if dl == 0 else dc)
        mods = tuple(name for bit, name in enumerate(legend[1]) if bits & (1 << bit))
        out.append((line, col, length, legend[0][kind], mods))
    return out


async def test_workspace_diagnostics_with_result_ids(bare_client: LanguageClient, tmp_path: Path):
    root = write_vault(tmp_path / "vault", FILES)
    result = await start_nav_session(bare_client, root, caps=EDITING)
    assert result.capabilities.diagnostic_provider.workspace_diagnostics
    first = await bare_client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[]))
    reports = {item.uri: item for item in first.items}
    garden = (root / "notes/Garden.md").as_uri()
    other = (root / "Other.md").as_uri()
    assert sorted(reports) == sorted([garden, other])  # pages without findings are left out
    assert [d.code for d in reports[garden].items] == ["unresolved-link"]
    assert [d.code for d in reports[other].items] == ["alias-link"]
    previous = [types.PreviousResultId(uri=u, value=r.result_id) for u, r in reports.items()]
    again = await bare_client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=previous))
    assert all(item.kind == "unchanged" for item in again.items) and len(again.items) == 2
    # fix the broken link on disk: that page reports again (now empty), the other stays unchanged
    (root / "notes/Garden.md").write_text(GARDEN.replace("[[Nowhere]]", "[[Compost]]"), encoding="utf-8")
    bare_client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=garden, type=types.FileChangeType.Changed)]))
    for _ in range(100):
        third = await bare_client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=previous))
        kinds = {item.uri: item.kind for item in third.items}
        if kinds.get(garden) == "full":
            break
    assert kinds == {garden: "full", other: "unchanged"}
    assert [list(item.items) for item in third.items if item.uri == garden] == [[]]
    # closed pages are no longer pushed once the client pulls the workspace
    assert not bare_client.diagnostics.get(other)


def test_the_settings_of_the_editing_features():
    from vaultlens.lsp.settings import Settings, merge

    settings, warnings = merge(Settings(), {
        "inlayHints": {"headingBacklinks": False, "linkTitles": "all"},
        "semanticTokens": {"enabled": False}, "extract": {"leaves": "embed"},
    }, "test")
    assert warnings == []
    assert (settings.inlay_heading_backlinks, settings.inlay_link_titles, settings.semantic_tokens_enabled,
            settings.extract_leaves) == (False, "all", False, "embed")
    _, warnings = merge(Settings(), {"inlayHints": {"linkTitles": "some"}, "extract": {"leaves": "copy"}}, "test")
    assert len(warnings) == 2 and "one of off, slugs, all" in warnings[0]


async def test_settings_turn_hints_and_tokens_off_and_extract_leaves_an_embed(bare_client: LanguageClient, tmp_path: Path):
    root = write_vault(tmp_path / "vault", FILES)
    options = {"inlayHints": {"headingBacklinks": False, "linkTitles": "off"}, "semanticTokens": {"enabled": False},
               "extract": {"leaves": "embed"}, "newPageFolder": ""}
    await start_nav_session(bare_client, root, caps=EDITING, options=options)
    uri, text = open_doc(bare_client, root, "notes/Garden.md")
    whole = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=20, character=0))
    assert not await bare_client.text_document_inlay_hint_async(types.InlayHintParams(text_document=doc(uri), range=whole))
    assert await bare_client.text_document_semantic_tokens_full_async(types.SemanticTokensParams(text_document=doc(uri))) is None
    # a selection of whole lines, all code actions asked for: the extract action is among them
    selection = types.Range(start=types.Position(line=11, character=0), end=types.Position(line=12, character=0))
    actions = await bare_client.text_document_code_action_async(
        types.CodeActionParams(text_document=doc(uri), range=selection, context=types.CodeActionContext(diagnostics=[]))
    )
    extract = [a for a in actions if a.kind == types.CodeActionKind.RefactorExtract]
    assert [a.title for a in extract] == ["Extract selection to a new page “Dig deep” (Dig deep.md)"]
    apply_edit(extract[0].edit, {uri: (1, text)})
    assert (root / "Dig deep.md").read_text(encoding="utf-8") == "Dig deep. ^deep\n"
    assert "### Depth\n\n![[Dig deep]]\n\n## Watering" in (root / "notes/Garden.md").read_text(encoding="utf-8")
    after, _ = open_vault(str(root))
    compost = after.pages["notes/Compost.md"]
    assert [after.resolve_link(link, "notes/Compost.md").path for link in compost.links] == [
        "notes/Garden.md", "Dig deep.md", "notes/Garden.md"]
