"""Unlinked mentions and link suggestions over stdio: the lens, the hover's count, the hint
diagnostics, "Link mention" and "Link all mentions" applied as an editor would (versioned
buffers), then the vault re-indexed from disk: every link still resolves where it did, each
new link resolves to the page, and the text reads the same.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from e2e_support import EXAMPLE_VAULT, copy_vault, hover_text, open_doc, position
from lsprotocol import types
from nav_support import apply_edit, doc, eventually, start_nav_session
from pytest_lsp import LanguageClient

from vaultlens.engine.scan import open_vault

SOIL = "garden/Soil Health.md"
CHUNKING = "ai/rag/Chunking Strategies.md"
WATERING = "garden/Watering Schedule.md"
_WIKI = re.compile(r"\[\[([^\]|]*)(?:\|([^\]]*))?\]\]")


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return copy_vault(EXAMPLE_VAULT, tmp_path / "vault")


def shown(text: str) -> str:
    """The text as a reader sees it: each wikilink as its label (or target)."""
    return _WIKI.sub(lambda m: m.group(2) or m.group(1), text)


def resolved(vault) -> dict[str, Counter]:
    return {p: Counter(vault.resolve_link(l, p).path for l in (*vault.pages[p].edges, *vault.pages[p].links))
            for p in vault.pages}


def check_linked(root: Path, before_vault, before_files: dict[str, str], target: str, added: dict[str, int]) -> None:
    """Re-index ``root``: the edited pages gained ``added`` links to ``target``, lost none, and
    read the same; every other page is unchanged."""
    after, _ = open_vault(str(root))
    old, new = resolved(before_vault), resolved(after)
    assert sorted(after.pages) == sorted(before_vault.pages)
    for path in before_vault.pages:
        want = old[path] + Counter({target: added.get(path, 0)})
        assert new[path] == want, path
        text = (root / path).read_text(encoding="utf-8")
        assert shown(text) == shown(before_files[path]) if path in added else text == before_files[path], path


def files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in root.rglob("*.md")}


async def actions(client: LanguageClient, uri: str, at: types.Position, diagnostics=()) -> list[types.CodeAction]:
    got = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=doc(uri), range=types.Range(start=at, end=at),
        context=types.CodeActionContext(diagnostics=list(diagnostics))))
    return [a for a in got or [] if isinstance(a, types.CodeAction)]


async def test_lens_and_command_count_the_unlinked_mentions(bare_client: LanguageClient, vault: Path):
    await start_nav_session(bare_client, vault)
    uri, _ = open_doc(bare_client, vault, SOIL)
    lenses = await bare_client.text_document_code_lens_async(types.CodeLensParams(text_document=doc(uri)))
    titles = [lens.command.title for lens in lenses]
    assert "1 unlinked mention" in titles
    lens = lenses[titles.index("1 unlinked mention")]
    assert lens.command.command == "vaultlens.showMentions"
    listed = await bare_client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="vaultlens.showMentions", arguments=[uri]))
    assert [(Path(l.uri if isinstance(l, types.Location) else l["uri"]).name) for l in listed] == ["Chunking%20Strategies.md"]
    # the hover on a link to the page counts its backlinks, not its mentions (the lens does)
    comp_uri, comp = open_doc(bare_client, vault, "garden/Composting.md")
    text = await hover_text(bare_client, comp_uri, position(comp, "[[Soil Health]] covers", 3))
    assert re.search(r"\d+ backlinks?\b", text) and "unlinked mention" not in text


async def test_suggestion_diagnostic_and_link_mention_keep_every_link(bare_client: LanguageClient, vault: Path):
    await start_nav_session(bare_client, vault)
    before_vault, _ = open_vault(str(vault))
    before = files(vault)
    uri, text = open_doc(bare_client, vault, WATERING)
    found = await eventually(lambda: [d for d in bare_client.diagnostics.get(uri, []) if d.code == "link-suggestion"])
    at = position(text, "Courgettes and squash")
    hint = next(d for d in found if d.range.start == at)
    assert hint.severity == types.DiagnosticSeverity.Hint and "Courgettes" in hint.message
    offered = await actions(bare_client, uri, at, [hint])
    link = next(a for a in offered if a.title == "Link mention to [[Courgettes]]")
    assert list(link.diagnostics) == [hint] and link.is_preferred
    apply_edit(link.edit, {uri: (1, text)})
    assert "- **[[Courgettes]] and squash**" in (vault / WATERING).read_text(encoding="utf-8")
    check_linked(vault, before_vault, before, "garden/Courgettes.md", {WATERING: 1})


async def test_link_all_mentions_from_the_page_itself(bare_client: LanguageClient, vault: Path):
    await start_nav_session(bare_client, vault)
    # a second mention, in an unsaved buffer: its edit must carry the buffer's version
    (vault / "inbox" / "Soil notes.md").write_text("Notes on soil health, and SOIL HEALTH again.\n", encoding="utf-8")
    before_vault, _ = open_vault(str(vault))
    before = files(vault)
    chunk_uri, chunk = open_doc(bare_client, vault, CHUNKING)
    soil_uri, soil = open_doc(bare_client, vault, SOIL)
    bare_client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=(vault / "inbox" / "Soil notes.md").as_uri(), type=types.FileChangeType.Created)]))

    async def offered() -> list[types.CodeAction]:
        return [a for a in await actions(bare_client, soil_uri, types.Position(line=0, character=0))
                if a.title.startswith("Link all")]

    for _ in range(50):
        got = await offered()
        if got and got[0].title.startswith("Link all 3 "):
            break
    assert got[0].title == "Link all 3 mentions of [[Soil Health]] (2 pages)"
    edit = got[0].edit
    assert all(isinstance(c, types.TextDocumentEdit) for c in edit.document_changes)
    apply_edit(edit, {chunk_uri: (1, chunk)})
    assert (vault / "inbox" / "Soil notes.md").read_text(encoding="utf-8") == (
        "Notes on [[soil health]], and [[SOIL HEALTH]] again.\n")  # names resolve in any case
    check_linked(vault, before_vault, before, SOIL, {CHUNKING: 1, "inbox/Soil notes.md": 2})


async def test_suggestions_are_off_with_the_setting(bare_client: LanguageClient, vault: Path):
    await start_nav_session(bare_client, vault, options={"diagnostics": {"linkSuggestions": "off"}})
    uri, text = open_doc(bare_client, vault, WATERING)
    open_doc(bare_client, vault, "garden/Composting.md", "[[Nowhere]]\n")  # a problem is still pushed
    await eventually(lambda: bare_client.diagnostics.get((vault / "garden/Composting.md").as_uri()))
    assert not [d for d in bare_client.diagnostics.get(uri, []) if d.code == "link-suggestion"]
    # the quick fix is still there on demand
    offered = await actions(bare_client, uri, position(text, "Courgettes and squash"))
    assert "Link mention to [[Courgettes]]" in [a.title for a in offered]


async def test_an_open_page_s_suggestions_follow_another_page_s_new_title(bare_client: LanguageClient, vault: Path):
    await start_nav_session(bare_client, vault)
    uri, text = open_doc(bare_client, vault, WATERING)
    at = position(text, "soaker hose")

    def hints_at() -> list[types.Diagnostic]:
        return [d for d in bare_client.diagnostics.get(uri, []) if d.code == "link-suggestion" and d.range.start == at]

    await eventually(lambda: [d for d in bare_client.diagnostics.get(uri, []) if d.code == "link-suggestion"])
    assert not hints_at()  # no page is named so yet
    other = "inbox/Vault Search Ideas.md"
    other_uri, other_text = open_doc(bare_client, vault, other)
    renamed = "---\ntitle: Soaker Hose\n---\n" + other_text
    bare_client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=other_uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=renamed)]))
    found = await eventually(hints_at)
    assert "Soaker Hose" in found[0].message
    bare_client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=other_uri, version=3),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=other_text)]))
    await eventually(lambda: not hints_at())  # and gone with the name
