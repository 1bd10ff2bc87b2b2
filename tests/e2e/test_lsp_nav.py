"""Navigation over stdio on a copy of examples/vault: definition, references, outline, folding,
code lenses and tag completion, including links typed in unsaved buffers.

One server session for the module; every buffer a test opens is closed again by ``buffers``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import pytest_lsp
from e2e_support import (
    EXAMPLE_VAULT,
    SERVER,
    SHARED,
    change_doc,
    complete,
    copy_vault,
    engine_vault,
    insert_at,
    open_doc,
    position,
    rel_of,
)
from lsprotocol import types
from nav_support import codes, doc, eventually, start_nav_session
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def nav_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_vault(EXAMPLE_VAULT, tmp_path_factory.mktemp("nav") / "vault")


@pytest_lsp.fixture(config=SERVER, scope="module")
async def nav(lsp_client: LanguageClient, nav_vault: Path):
    await start_nav_session(lsp_client, nav_vault)
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def buffers(nav: LanguageClient, nav_vault: Path) -> Iterator[Callable[..., tuple[str, str]]]:
    opened: list[str] = []

    def open_buffer(rel: str, text: str | None = None) -> tuple[str, str]:
        uri, text = open_doc(nav, nav_vault, rel, text)
        opened.append(uri)
        return uri, text

    yield open_buffer
    for uri in opened:
        nav.text_document_did_close(types.DidCloseTextDocumentParams(text_document=doc(uri)))


async def definition(client: LanguageClient, uri: str, at: types.Position) -> types.Location | None:
    result = await client.text_document_definition_async(types.DefinitionParams(text_document=doc(uri), position=at))
    assert result is None or isinstance(result, types.Location)
    return result


async def references(client: LanguageClient, uri: str, at: types.Position, declaration: bool = False) -> list[tuple[str, int, int]]:
    result = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=doc(uri), position=at, context=types.ReferenceContext(include_declaration=declaration)
        )
    )
    return [(loc.uri, loc.range.start.line, loc.range.start.character) for loc in result or []]


def where(root: Path, found: list[tuple[str, int, int]]) -> list[tuple[str, int]]:
    return [(rel_of(root, uri), line) for uri, line, _ in found]


async def test_definition_of_every_link_form(nav: LanguageClient, nav_vault: Path, buffers):
    cases = [
        # (page, text at the cursor, target page, target line: the heading or block, 0 for the page)
        ("garden/Tomatoes.md", "[[Soil Health#pH", "garden/Soil Health.md", "## pH and Nutrients"),
        ("garden/Tomatoes.md", "[my compost notes](Composting.md)", "garden/Composting.md", None),
        ("garden/Tomatoes.md", "related: [[Soil Health]]", "garden/Soil Health.md", None),
        ("ai/Transformers.md", "[[Attention#^scaling-factor]]", "ai/Attention.md", "^scaling-factor"),
        ("projects/Garden Planner Bot.md", "![[Chunking Strategies#Heading-aware", "ai/rag/Chunking Strategies.md", "Heading-aware chunking"),
        ("projects/Team Wiki Search.md", "(../ai/Evaluation%20Metrics.md)", "ai/Evaluation Metrics.md", None),
        ("ai/rag/graph-rag.md", "[[./Chunking Strategies]]", "ai/rag/Chunking Strategies.md", None),
    ]
    for rel, needle, target, anchor in cases:
        uri, text = buffers(rel)
        offset = 12 if needle.startswith("related") else 3
        found = await definition(nav, uri, position(text, needle, offset))
        assert found is not None, (rel, needle)
        assert rel_of(nav_vault, found.uri) == target
        target_text = (nav_vault / target).read_text(encoding="utf-8").split("\n")
        expected = 0 if anchor is None else next(i for i, line in enumerate(target_text) if anchor in line)
        assert found.range.start.line == expected, (rel, needle)
    uri, text = buffers("daily/2025-06-01.md")
    assert await definition(nav, uri, position(text, "Quantum Gardening", 2)) is None  # unresolved
    assert await definition(nav, uri, types.Position(line=0, character=0)) is None  # not a link


async def test_references_from_a_link_and_from_the_title(nav: LanguageClient, nav_vault: Path, buffers):
    engine = engine_vault(nav_vault)
    expected = sorted({(s, link.span.start_line) for s, link in engine.backlinks("garden/Soil Health.md")})
    uri, text = buffers("garden/Tomatoes.md")
    on_link = where(nav_vault, await references(nav, uri, position(text, "[[Soil Health#pH", 3)))
    assert on_link == expected and len(on_link) > 5
    # on the page's own title heading: the same backlinks; the declaration is the title
    soil_uri, soil = buffers("garden/Soil Health.md")
    at_title = position(soil, "# Soil Health", 3)
    assert where(nav_vault, await references(nav, soil_uri, at_title)) == expected
    with_title = where(nav_vault, await references(nav, soil_uri, at_title, declaration=True))
    assert with_title[0] == ("garden/Soil Health.md", at_title.line) and with_title[1:] == expected


async def test_references_of_a_heading(nav: LanguageClient, nav_vault: Path, buffers):
    uri, text = buffers("garden/Soil Health.md")
    found = where(nav_vault, await references(nav, uri, position(text, "## pH and Nutrients", 4)))
    assert found == [("garden/Tomatoes.md", 23)]
    # from the #heading part of a link: the same list
    tomatoes_uri, tomatoes = buffers("garden/Tomatoes.md")
    assert where(nav_vault, await references(nav, tomatoes_uri, position(tomatoes, "#pH and", 2))) == found
    structure = where(nav_vault, await references(nav, uri, position(text, "## Structure", 4), declaration=True))
    assert structure[0][0] == "garden/Soil Health.md" and ("inbox/Vault Search Ideas.md", 23) in structure


async def test_references_of_a_tag_inline_and_in_frontmatter(nav: LanguageClient, nav_vault: Path, buffers):
    uri, text = buffers("garden/Tomatoes.md")
    found = where(nav_vault, await references(nav, uri, position(text, "\n#garden/vegetables", 2), declaration=True))
    pages = {p for p, _ in found}
    engine = engine_vault(nav_vault)
    assert pages == set(engine.tag_pages["garden/vegetables"])
    assert ("garden/Tomatoes.md", 5) in found  # the frontmatter list item
    assert ("garden/Tomatoes.md", text.count("\n", 0, text.index("\n#garden/vegetables") + 1)) in found
    without = where(nav_vault, await references(nav, uri, position(text, "\n#garden/vegetables", 2)))
    assert len(without) == len(found) - 1  # the occurrence under the cursor is the declaration
    # from the frontmatter item itself, with the parent tag's children included
    garden = where(nav_vault, await references(nav, uri, position(text, "  - garden/vegetables", 5), declaration=True))
    assert garden == found


async def test_backlinks_from_an_unsaved_buffer_and_the_code_lens(nav: LanguageClient, nav_vault: Path, buffers):
    soil_uri, _ = buffers("garden/Soil Health.md")
    lens = await nav.text_document_code_lens_async(types.CodeLensParams(text_document=doc(soil_uri)))
    count = int(lens[0].command.title.split()[0])
    engine = engine_vault(nav_vault)
    assert count == len({s for s, _ in engine.backlinks("garden/Soil Health.md") if s != "garden/Soil Health.md"})
    assert lens[0].range.start.line == 0 and lens[0].command.command == "vaultlens.showReferences"
    assert len(lens[0].command.arguments[2]) == len(engine.backlinks("garden/Soil Health.md"))
    # a link typed into a buffer that has never been saved counts at once
    uri, text = buffers("people/Ravi Desai.md")
    change_doc(nav, uri, 2, insert_at(len(text.split("\n")) - 1, 0, "More in [[Soil Health]].\n"))
    lens = await nav.text_document_code_lens_async(types.CodeLensParams(text_document=doc(soil_uri)))
    assert lens[0].command.title == f"{count + 1} backlinks"
    tomatoes_uri, tomatoes = buffers("garden/Tomatoes.md")
    found = where(nav_vault, await references(nav, tomatoes_uri, position(tomatoes, "related: [[Soil", 12)))
    assert ("people/Ravi Desai.md", len(text.split("\n")) - 1) in found
    shown = await nav.workspace_execute_command_async(
        types.ExecuteCommandParams(command="vaultlens.showReferences", arguments=lens[0].command.arguments)
    )
    assert len(shown) == len(found)


async def test_outline_and_folding(nav: LanguageClient, nav_vault: Path, buffers):
    uri, text = buffers("garden/Tomatoes.md")
    symbols = await nav.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=doc(uri)))
    assert [s.name for s in symbols] == ["Tomatoes"]
    top = symbols[0]
    assert [c.name for c in top.children] == ["Sowing and planting", "Training", "Feeding and watering", "Problems"]
    lines = text.split("\n")
    assert top.range.end.line == max(i for i, line in enumerate(lines) if line.strip())
    for child in top.children:
        assert top.range.start.line < child.range.start.line <= child.range.end.line <= top.range.end.line
        assert child.selection_range.start.line == child.range.start.line
    folds = await nav.text_document_folding_range_async(types.FoldingRangeParams(text_document=doc(uri)))
    assert (folds[0].start_line, folds[0].end_line, folds[0].kind) == (0, lines.index("---", 1), types.FoldingRangeKind.Imports)
    assert {(f.start_line, f.end_line) for f in folds[1:]} == {
        (s.range.start.line, s.range.end.line) for s in [top, *top.children]
    }


async def test_tag_completion_ranked_by_use(nav: LanguageClient, nav_vault: Path, buffers):
    engine = engine_vault(nav_vault)
    uri, text = buffers("inbox/Vault Search Ideas.md")
    last = len(text.split("\n")) - 1
    change_doc(nav, uri, 2, insert_at(last, 0, "Also #gar"))
    result = await complete(nav, uri, types.Position(line=last, character=len("Also #gar")))
    tags = [item.text_edit.new_text for item in result.items]
    counts = {t: len(p) for t, p in engine.tag_pages.items()}
    assert tags and all(t.startswith("garden") for t in tags)
    assert [counts[t] for t in tags] == sorted((counts[t] for t in tags), reverse=True)
    assert set(tags) == {t for t in counts if t.startswith("gar")}
    assert result.items[0].text_edit.range.start.character == len("Also #")
    assert result.items[0].label.startswith("#")
    # in the frontmatter tags list, inserted without '#'
    uri2, text2 = buffers("garden/Aphids.md")
    change_doc(nav, uri2, 2, insert_at(1, 0, "tags: [ai, gar\n"))
    result = await complete(nav, uri2, types.Position(line=1, character=len("tags: [ai, gar")))
    assert result.items and result.items[0].text_edit.new_text in ("garden", "garden/soil")
    assert result.items[0].text_edit.range.start.character == len("tags: [ai, ")
    assert not result.items[0].label.startswith("#")
    # a heading's '# ' and inline code are not tags
    change_doc(nav, uri, 3, insert_at(last, 0, "`#gar` "))
    assert await complete(nav, uri, types.Position(line=last, character=len("`#gar"))) is None


# --- the shared vault ---------------------------------------------------------------------------

TASKS = SHARED / "vaults" / "obsidian-tasks"


@pytest.mark.asyncio(loop_scope="function")
async def test_navigation_on_obsidian_tasks(bare_client: LanguageClient, tmp_path: Path):
    if not TASKS.is_dir():
        pytest.skip(f"{TASKS} is not here (the shared checkout sits next to the repo)")
    root = copy_vault(TASKS, tmp_path / "obsidian-tasks")
    await start_nav_session(bare_client, root)
    engine = engine_vault(root)
    uri, text = open_doc(bare_client, root, "Getting Started/Statuses.md")
    needle = next(line for line in text.split("\n") if "[[Filters#" in line)
    link = needle[needle.index("[[Filters#") :].split("]]")[0]
    heading = link.split("#", 1)[1].split("|")[0]
    found = await definition(bare_client, uri, position(text, link, 3))
    target_lines = (root / "Queries/Filters.md").read_text(encoding="utf-8").split("\n")
    assert rel_of(root, found.uri) == "Queries/Filters.md" and target_lines[found.range.start.line].endswith(heading)
    backlinks = sorted((s, ln.span.start_line) for s, ln in engine.backlinks("Queries/Filters.md"))
    assert where(root, await references(bare_client, uri, position(text, link, 3))) == backlinks
    filters_uri, filters = open_doc(bare_client, root, "Queries/Filters.md")
    symbols = await bare_client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=doc(filters_uri)))
    assert [s.name for s in symbols] == ["Filters"] and len(symbols[0].children) > 5
    lens = await bare_client.text_document_code_lens_async(types.CodeLensParams(text_document=doc(filters_uri)))
    assert lens[0].command.title == f"{len({s for s, _ in backlinks if s != 'Queries/Filters.md'})} backlinks"
    # a clean vault has nothing to say; a broken link typed in a buffer is reported at once
    assert not any(d.code != "link-suggestion" for ds in bare_client.diagnostics.values() for d in ds)
    change_doc(bare_client, uri, 2, insert_at(0, 0, "[[Filters#No Such Heading]] [[Statuses Overview]]\n"))
    await eventually(lambda: codes(bare_client, uri) == [("missing-heading", 0), ("unresolved-link", 0)])
