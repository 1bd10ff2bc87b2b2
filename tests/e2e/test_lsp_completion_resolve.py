"""``completionItem/resolve``: a client that resolves ``documentation`` gets it for the item shown.

VS Code declares ``resolveSupport.properties = ["documentation", "detail", "additionalTextEdits"]``
and asks for the documentation of the item it shows; the server then leaves it (and the page's
snippet) out of the list and gives, on resolve, the very text a client without resolve gets in
the list (``test_lsp_completion.py``'s client).
"""

from __future__ import annotations

import copy
from pathlib import Path

from e2e_support import CAPABILITIES, complete, end_of, engine_vault, open_doc, wait_indexed
from lsprotocol import types
from pytest_lsp import LanguageClient

from vaultlens.engine.complete import page_choices
from vaultlens.engine.render import breakdown_table

def resolving() -> types.ClientCapabilities:
    capabilities = copy.deepcopy(CAPABILITIES)
    item = capabilities.text_document.completion.completion_item
    item.resolve_support = types.ClientCompletionItemResolveOptions(properties=["documentation", "detail"])
    return capabilities


async def test_documentation_comes_with_resolve(bare_client: LanguageClient, vault: Path):
    result = await bare_client.initialize_session(
        types.InitializeParams(capabilities=resolving(), root_uri=vault.as_uri(),
                               workspace_folders=[types.WorkspaceFolder(uri=vault.as_uri(), name=vault.name)])
    )
    assert result.capabilities.completion_provider.resolve_provider is True
    await wait_indexed(bare_client, [vault])
    text = "See [[graph rag"
    uri, _ = open_doc(bare_client, vault, "inbox/Scratch.md", text)
    found = await complete(bare_client, uri, end_of(text))
    pages = [item for item in found.items if item.kind == types.CompletionItemKind.File]
    assert pages and all(item.documentation is None for item in pages)
    assert pages[0].label == "Graph RAG"
    choices = page_choices(engine_vault(vault, {"inbox/Scratch.md": text}), "graph rag", 50)  # with snippets: what the list held before
    assert [c.hit.page.path for c in choices][: len(pages)] == [item.label_details.description for item in pages]
    for item, choice in list(zip(pages, choices))[:5]:
        resolved = await bare_client.completion_item_resolve_async(item)
        hit = choice.hit
        want = f"**{hit.page.title}** · score {hit.score} · `{hit.page.path}`"
        if hit.matched:
            want += "\n\n" + breakdown_table(hit.matched)
        if hit.snippet:
            want += "\n\n> " + hit.snippet
        assert resolved.documentation.kind == types.MarkupKind.Markdown
        assert resolved.documentation.value == want, hit.page.path
        assert resolved.label == item.label and resolved.detail == item.detail
    assert "| title-phrase | (title) |  | 1 | 10 |" in (await bare_client.completion_item_resolve_async(pages[0])).documentation.value
