"""Diagnostics over stdio: pushed for the whole vault after the scan and for open buffers as
they change, pulled where the client can pull, shaped by the settings; and the quick fixes.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from e2e_support import change_doc, engine_vault, insert_at, open_doc, position, whole
from lsprotocol import types
from nav_support import (
    NAV_CAPABILITIES,
    apply_edit,
    capabilities,
    check_links_kept,
    codes,
    doc,
    eventually,
    files_of,
    start_nav_session,
)
from pytest_lsp import LanguageClient

from vaultlens.engine.scan import open_vault

ERROR, WARNING, INFO, HINT = (
    types.DiagnosticSeverity.Error,
    types.DiagnosticSeverity.Warning,
    types.DiagnosticSeverity.Information,
    types.DiagnosticSeverity.Hint,
)


def uri(vault: Path, rel: str) -> str:
    return (vault / rel).as_uri()


def by_code(client: LanguageClient, vault: Path, rel: str) -> dict[str, list[types.Diagnostic]]:
    out: dict[str, list[types.Diagnostic]] = {}
    for d in client.diagnostics.get(uri(vault, rel), []):
        out.setdefault(str(d.code), []).append(d)
    return out


async def test_the_whole_vault_after_the_scan(bare_client: LanguageClient, vault: Path):
    await start_nav_session(bare_client, vault)
    await eventually(lambda: uri(vault, "ai/rag/Reranking.md") in bare_client.diagnostics)
    await eventually(lambda: uri(vault, "projects/Index.md") in bare_client.diagnostics)
    yaml = by_code(bare_client, vault, "ai/rag/Reranking.md")["frontmatter-yaml"][0]
    assert yaml.severity == ERROR and yaml.source == "vaultlens"
    problem = engine_vault(vault).pages["ai/rag/Reranking.md"].problems[0]
    assert yaml.range.start.line == problem.line and problem.line > 0
    llm = by_code(bare_client, vault, "ai/Large Language Models.md")
    assert [d.severity for d in llm["unresolved-link"]] == [WARNING]
    assert "Speculative Decoding" in llm["unresolved-link"][0].message
    assert llm["alias-link"][0].severity == INFO
    daily = by_code(bare_client, vault, "daily/2025-06-01.md")
    assert daily["ambiguous-link"][0].severity == WARNING
    assert {loc.location.uri for loc in daily["ambiguous-link"][0].related_information} == {
        uri(vault, "garden/Index.md"),
        uri(vault, "projects/Index.md"),
    }
    dup = by_code(bare_client, vault, "garden/Index.md")["duplicate-title"][0]
    assert dup.severity == HINT and "projects/Index.md" in dup.message
    # a page with nothing wrong gets nothing
    assert not bare_client.diagnostics.get(uri(vault, "garden/Aphids.md"))


async def test_the_vault_push_waits_for_a_pause_but_never_starves(bare_client: LanguageClient, vault: Path):
    # The push after the scan is background work: while requests keep coming (every 50 ms, a
    # client that never pauses), answers do not wait behind it, and it still arrives.
    import time

    await start_nav_session(bare_client, vault)
    target = uri(vault, "ai/rag/Reranking.md")
    started = time.monotonic()
    while target not in bare_client.diagnostics:
        await bare_client.workspace_symbol_async(types.WorkspaceSymbolParams(query="rag"))
        await asyncio.sleep(0.05)
        assert time.monotonic() - started < 15, "the vault's diagnostics never came (they wait 2 s at most)"
    assert "frontmatter-yaml" in by_code(bare_client, vault, "ai/rag/Reranking.md")


async def test_edits_in_open_buffers_change_diagnostics_here_and_elsewhere(bare_client: LanguageClient, vault: Path):
    await start_nav_session(bare_client, vault)
    await eventually(lambda: uri(vault, "projects/Index.md") in bare_client.diagnostics)
    aphids, text = open_doc(bare_client, vault, "garden/Aphids.md")
    last = len(text.split("\n")) - 1
    change_doc(bare_client, aphids, 2, insert_at(last, 0, "See [[Ladybird Larvae]] and [[Tomatoes#Nope]].\n"))
    await eventually(lambda: [c for c, _ in codes(bare_client, aphids)] == ["missing-heading", "unresolved-link"])
    assert {line for _, line in codes(bare_client, aphids)} == {last}
    change_doc(bare_client, aphids, 3, whole(text))
    await eventually(lambda: codes(bare_client, aphids) == [])
    # renaming a heading in an unsaved buffer breaks a closed page's link to it, at once
    soil, soil_text = open_doc(bare_client, vault, "garden/Soil Health.md")
    tomatoes = uri(vault, "garden/Tomatoes.md")
    assert "missing-heading" not in [c for c, _ in codes(bare_client, tomatoes)]
    change_doc(bare_client, soil, 2, whole(soil_text.replace("## pH and Nutrients", "## Acidity")))
    await eventually(lambda: ("missing-heading", 23) in codes(bare_client, tomatoes))
    change_doc(bare_client, soil, 3, whole(soil_text))
    await eventually(lambda: ("missing-heading", 23) not in codes(bare_client, tomatoes))
    # a new page in a buffer resolves the links that named it
    llm = uri(vault, "ai/Large Language Models.md")
    assert "unresolved-link" in [c for c, _ in codes(bare_client, llm)]
    open_doc(bare_client, vault, "ai/Speculative Decoding.md", "# Speculative Decoding\n")
    await eventually(lambda: "unresolved-link" not in [c for c, _ in codes(bare_client, llm)])


async def test_settings_shape_the_diagnostics(bare_client: LanguageClient, vault: Path):
    options = {"diagnostics": {"unresolvedSeverity": "error", "scope": "open"}}
    await start_nav_session(bare_client, vault, options=options)
    page, _ = open_doc(bare_client, vault, "ai/Large Language Models.md")
    await eventually(lambda: page in bare_client.diagnostics)
    unresolved = [d for d in bare_client.diagnostics[page] if d.code == "unresolved-link"]
    assert [d.severity for d in unresolved] == [ERROR]
    assert set(bare_client.diagnostics) == {page}  # scope "open": closed pages get nothing
    # unresolved links off, the whole vault on: the rest stays, closed pages come in
    bare_client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"vaultlens": {"diagnostics.unresolvedSeverity": "off", "diagnostics": {"scope": "vault"}}}
        )
    )
    await eventually(lambda: uri(vault, "ai/rag/Reranking.md") in bare_client.diagnostics)
    await eventually(lambda: [c for c, _ in codes(bare_client, page)] == ["alias-link"])
    # diagnostics off: everything is cleared, and edits bring nothing back
    bare_client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"vaultlens": {"diagnostics": {"enabled": False}}})
    )
    await eventually(lambda: not any(bare_client.diagnostics.values()))
    change_doc(bare_client, page, 2, insert_at(0, 0, "[[Nowhere]]\n"))
    await bare_client.text_document_code_lens_async(types.CodeLensParams(text_document=doc(page)))  # a round trip
    assert not any(d.code != "link-suggestion" for ds in bare_client.diagnostics.values() for d in ds)


async def test_pull_model(bare_client: LanguageClient, vault: Path):
    pulled = capabilities(
        text_document=types.TextDocumentClientCapabilities(
            synchronization=NAV_CAPABILITIES.text_document.synchronization,
            diagnostic=types.DiagnosticClientCapabilities(related_document_support=False),
        )
    )
    result = await start_nav_session(bare_client, vault, caps=pulled)
    assert result.capabilities.diagnostic_provider is not None
    # closed pages are pushed after the scan ...
    page = uri(vault, "ai/Large Language Models.md")
    await eventually(lambda: uri(vault, "ai/rag/Reranking.md") in bare_client.diagnostics)
    assert bare_client.diagnostics[page]
    # ... an open one is pulled instead, and what was pushed for it is cleared
    open_doc(bare_client, vault, "ai/Large Language Models.md")
    await eventually(lambda: page in bare_client.diagnostics and len(bare_client.diagnostics[page]) == 0)
    report = await bare_client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=doc(page)))
    assert sorted(str(d.code) for d in report.items) == ["alias-link", "unresolved-link"]
    # a pull that names the last report's id is told nothing changed, until something does
    assert report.result_id
    again = await bare_client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=doc(page), previous_result_id=report.result_id))
    assert again.kind == "unchanged" and again.result_id == report.result_id
    change_doc(bare_client, page, 2, insert_at(0, 0, "[[Nowhere at all]]\n"))
    changed = await bare_client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=doc(page), previous_result_id=report.result_id))
    assert changed.kind == "full" and changed.result_id != report.result_id
    assert sorted(str(d.code) for d in changed.items) == ["alias-link", "unresolved-link", "unresolved-link"]


async def test_quick_fixes_create_page_and_relink(bare_client: LanguageClient, vault: Path):
    await start_nav_session(bare_client, vault)
    before, _ = open_vault(str(vault))
    before_files = files_of(vault)
    # the findings pushed after the scan (the code action quotes them back)
    await eventually(lambda: uri(vault, "garden/Soil Health.md") in bare_client.diagnostics)
    page, text = open_doc(bare_client, vault, "garden/Soil Health.md")
    at = position(text, "[[Mycorrhizal Networks]]", 3)
    actions = await bare_client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=doc(page),
            range=types.Range(start=at, end=at),
            context=types.CodeActionContext(diagnostics=list(bare_client.diagnostics.get(page, []))),
        )
    )
    create = [a for a in actions if a.title.startswith("Create page")]
    assert len(create) == 1 and create[0].is_preferred
    assert create[0].diagnostics and create[0].diagnostics[0].code == "unresolved-link"
    apply_edit(create[0].edit, {page: (1, text)})
    new_page = vault / "inbox" / "Mycorrhizal Networks.md"  # .obsidian/app.json's new-note folder
    assert new_page.read_text(encoding="utf-8") == "---\ntitle: Mycorrhizal Networks\n---\n"
    after = check_links_kept(vault, before, before_files, {}, created=("inbox/Mycorrhizal Networks.md",))
    assert after.resolve("Mycorrhizal Networks", "garden/Soil Health.md").path == "inbox/Mycorrhizal Networks.md"
    # ambiguous: one "Link to" per candidate; missing heading: the closest headings
    daily, daily_text = open_doc(bare_client, vault, "inbox/Vault Search Ideas.md")
    change_doc(bare_client, daily, 2, insert_at(0, 0, "[[Index]] [[Soil Health#Structur]] [[LLM]]\n"))
    lines = {"Index": 2, "Structur": 14, "LLM": 37}
    titles = {}
    for needle, col in lines.items():
        at = types.Position(line=0, character=col)
        actions = await bare_client.text_document_code_action_async(
            types.CodeActionParams(text_document=doc(daily), range=types.Range(start=at, end=at), context=types.CodeActionContext(diagnostics=[]))
        )
        titles[needle] = [a.title for a in actions]
        if needle == "Structur":
            edit = actions[0].edit.document_changes[0]
            assert edit.text_document.version == 2 and edit.edits[0].new_text == "Structure"
        if needle == "LLM":
            assert actions[0].edit.document_changes[0].edits[0].new_text == "[[Large Language Models|LLM]]"
    assert titles["Index"] == ["Link to garden/Index.md", "Link to projects/Index.md"]
    assert titles["Structur"][0] == "Link to heading “Structure”"
    assert titles["LLM"] == ["Link to “Large Language Models” by its name"]
