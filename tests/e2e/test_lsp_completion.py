"""``[[`` completion: ranked pages with their breakdowns, headings after ``#``, blocks after ``#^``."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_support import (
    change_doc,
    complete,
    end_of,
    engine_vault,
    hover_text,
    position,
    whole,
)
from lsprotocol import types
from pytest_lsp import LanguageClient

from vaultlens.engine.complete import page_choices
from vaultlens.engine.page import parse_page
from vaultlens.engine.render import breakdown_table

pytestmark = pytest.mark.asyncio(loop_scope="module")  # one session for the module (conftest)

LIMIT = 50
SCRATCH = "inbox/Scratch.md"


def edit_of(item: types.CompletionItem) -> types.TextEdit:
    assert isinstance(item.text_edit, types.TextEdit)
    return item.text_edit


def target_of(new_text: str) -> str:
    """The link target in a completion's text (target-first vault: ``target|label]]``)."""
    return new_text.removesuffix("]]").split("|", 1)[0]


async def test_page_items_are_the_engine_choices_in_order(
    shared_client: LanguageClient, shared_vault: Path, buffers
):
    uri, _ = buffers(SCRATCH, "")
    engine = engine_vault(shared_vault)
    for version, typed in enumerate(
        ["RA", "rag", "graph r", "att", "compo", "zucchini", "Retrieval-Aug", ""], 2
    ):
        text = f"Draft notes.\nSee [[{typed}"
        change_doc(shared_client, uri, version, whole(text))
        cursor = end_of(text)
        result = await complete(shared_client, uri, cursor)
        engine.upsert(parse_page(SCRATCH, text))  # the server's view: disk plus this buffer
        choices = page_choices(engine, typed, LIMIT)
        assert result is not None and result.is_incomplete is True
        assert [i.label for i in result.items] == [c.label for c in choices], typed
        assert choices, typed
        for rank, (item, choice) in enumerate(zip(result.items, choices)):
            page = choice.hit.page
            assert item.kind == types.CompletionItemKind.File
            assert item.sort_text == f"{rank:05d}"
            assert item.filter_text.startswith(typed)
            assert item.label_details.description == page.path
            edit = edit_of(item)
            assert edit.range == types.Range(start=types.Position(line=1, character=6), end=cursor)
            assert edit.new_text == choice.insert + "]]"
            assert edit.new_text.endswith("]]") and not edit.new_text.endswith("]]]]")
            resolved = engine.resolve(target_of(edit.new_text))
            if page.path != SCRATCH:
                assert (resolved.path, resolved.ambiguous) == (page.path, False), edit.new_text
            doc = item.documentation
            assert isinstance(doc, types.MarkupContent) and doc.kind == types.MarkupKind.Markdown
            assert doc.value.startswith(
                f"**{page.title}** · score {choice.hit.score} · `{page.path}`"
            )
            if choice.hit.matched:
                assert breakdown_table(choice.hit.matched) in doc.value
        sort_texts = [i.sort_text for i in result.items]
        assert sort_texts == sorted(sort_texts) and len(set(sort_texts)) == len(sort_texts)


async def test_what_a_person_expects_to_be_offered(
    shared_client: LanguageClient, shared_vault: Path, buffers
):
    uri, _ = buffers(SCRATCH, "")

    async def offered(version: int, typed: str) -> list[tuple[str, str]]:
        text = f"See [[{typed}"
        change_doc(shared_client, uri, version, whole(text))
        result = await complete(shared_client, uri, end_of(text))
        return [(i.label, edit_of(i).new_text) for i in result.items]

    items = await offered(2, "rag")
    # "RAG" is exactly an alias of Retrieval-Augmented Generation: an exact alias match comes first
    assert items[0] == ("RAG", "Retrieval-Augmented Generation|RAG]]")
    assert ("Graph RAG", "graph-rag|Graph RAG]]") in items[:3]  # file graph-rag.md, titled Graph RAG
    items = await offered(3, "RA")
    assert ("RAG", "Retrieval-Augmented Generation|RAG]]") in items  # the alias, half typed
    assert ("Graph RAG", "graph-rag|Graph RAG]]") in items
    assert (await offered(4, "tom"))[0] == ("Tomatoes", "Tomatoes]]")
    assert (await offered(5, "compost heap"))[0] == ("Compost Heap", "Composting|Compost Heap]]")
    assert (await offered(6, "zucchini"))[0] == ("Courgettes", "Courgettes]]")


async def test_items_carry_the_score_breakdown(
    shared_client: LanguageClient, shared_vault: Path, buffers
):
    text = "See [[graph rag"
    uri, _ = buffers(SCRATCH, text)
    result = await complete(shared_client, uri, end_of(text))
    top = result.items[0]
    assert top.label == "Graph RAG"
    doc = top.documentation.value
    assert "| channel | term | field | hits | points |" in doc
    assert "| title-phrase | (title) |  | 1 | 10 |" in doc
    assert "| title-term | graph |  | 1 | 5 |" in doc
    [choice] = page_choices(engine_vault(shared_vault, {SCRATCH: text}), "graph rag", 1)
    assert top.detail == f"{choice.hit.score} · ai/rag/graph-rag.md"
    assert doc.startswith(f"**Graph RAG** · score {choice.hit.score} · `ai/rag/graph-rag.md`")


async def test_no_doubled_brackets_inside_an_existing_link(
    shared_client: LanguageClient, shared_vault: Path, buffers
):
    cases = [
        # (buffer, cursor after this prefix, label to pick, expected text after applying the edit)
        (
            "See [[rag]] here.",
            "See [[rag",
            "RAG",
            "See [[Retrieval-Augmented Generation|RAG]] here.",
        ),
        ("See [[rag]] here.", "See [[rag", "Graph RAG", "See [[graph-rag|Graph RAG]] here."),
        ("A [[Tom|my tomatoes]] bed.", "A [[Tom", "Tomatoes", "A [[Tomatoes|my tomatoes]] bed."),
        (
            "On [[rag#Pipeline]].",
            "On [[rag",
            "RAG",
            "On [[Retrieval-Augmented Generation#Pipeline]].",
        ),
        ("[[tom]] and [[att", "[[tom]] and [[att", "Attention", "[[tom]] and [[Attention]]"),
        ("[[att and [[Tomatoes]]", "[[att", "Attention", "[[Attention]] and [[Tomatoes]]"),
    ]
    uri, _ = buffers(SCRATCH, "")
    for version, (text, prefix, label, expected) in enumerate(cases, 2):
        change_doc(shared_client, uri, version, whole(text))
        result = await complete(shared_client, uri, types.Position(line=0, character=len(prefix)))
        [item] = [i for i in result.items if i.label == label]
        edit = edit_of(item)
        assert edit.range.end.character == len(prefix)
        applied = (
            text[: edit.range.start.character] + edit.new_text + text[edit.range.end.character :]
        )
        assert applied == expected, text


async def test_an_accepted_item_links_to_its_page(
    shared_client: LanguageClient, shared_vault: Path, buffers
):
    """Apply the edit in the buffer: the server then resolves the new link to the offered page."""
    text = "Reading list: [[RA"
    uri, _ = buffers(SCRATCH, text)
    result = await complete(shared_client, uri, end_of(text))
    [item] = [i for i in result.items if i.label == "RAG"]
    edit = edit_of(item)
    change_doc(
        shared_client,
        uri,
        2,
        types.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text),
    )
    new_text = "Reading list: [[Retrieval-Augmented Generation|RAG]]"
    shown = await hover_text(shared_client, uri, position(new_text, "[[Retrieval", 3))
    assert shown.startswith(
        "### Retrieval-Augmented Generation\n\n`ai/rag/Retrieval-Augmented Generation.md`"
    )


async def test_columns_are_utf16(shared_client: LanguageClient, shared_vault: Path, buffers):
    text = "🌱☕ [[tom"  # the seedling takes two UTF-16 units, the coffee one
    uri, _ = buffers(SCRATCH, text)
    result = await complete(shared_client, uri, types.Position(line=0, character=9))
    edit = edit_of(result.items[0])
    assert (result.items[0].label, edit.new_text) == ("Tomatoes", "Tomatoes]]")
    assert edit.range == types.Range(
        start=types.Position(line=0, character=6), end=types.Position(line=0, character=9)
    )


async def test_headings_after_hash(shared_client: LanguageClient, shared_vault: Path, buffers):
    uri, _ = buffers(SCRATCH, "")
    text = "See [[Attention#"
    change_doc(shared_client, uri, 2, whole(text))
    result = await complete(shared_client, uri, end_of(text))
    assert result.is_incomplete is True
    assert [(i.label, i.detail) for i in result.items] == [
        ("Attention", "#"),
        ("Scaled Dot-Product Attention", "##"),
        ("Why divide by the square root", "###"),
        ("Multi-Head Attention", "##"),
        ("Cost", "##"),
    ]
    assert [i.sort_text for i in result.items] == ["00000", "00001", "00002", "00003", "00004"]
    assert all(i.kind == types.CompletionItemKind.Reference for i in result.items)
    edit = edit_of(result.items[3])
    assert edit.range == types.Range(start=types.Position(line=0, character=16), end=end_of(text))
    assert edit.new_text == "Multi-Head Attention]]"

    text = "See [[Attention#head]] now"
    change_doc(shared_client, uri, 3, whole(text))
    result = await complete(shared_client, uri, position(text, "]]"))
    assert [(i.label, i.filter_text, edit_of(i).new_text) for i in result.items] == [
        ("Multi-Head Attention", "headMulti-Head Attention", "Multi-Head Attention")
    ]
    assert edit_of(result.items[0]).range.start.character == 16

    # an alias resolves too, and `[[#` offers the page's own headings
    text = "See [[Self-Attention#cost"
    change_doc(shared_client, uri, 4, whole(text))
    assert [i.label for i in (await complete(shared_client, uri, end_of(text))).items] == ["Cost"]
    own = (shared_vault / "ai" / "Attention.md").read_text(encoding="utf-8")
    own_uri, _ = buffers("ai/Attention.md")
    change_doc(shared_client, own_uri, 2, whole(own + "\nBack to [[#Mul"))
    result = await complete(shared_client, own_uri, end_of(own + "\nBack to [[#Mul"))
    assert [i.label for i in result.items] == ["Multi-Head Attention"]


async def test_blocks_after_hash_caret(shared_client: LanguageClient, shared_vault: Path, buffers):
    uri, _ = buffers(SCRATCH, "")
    text = "Ratio: [[Composting#^"
    change_doc(shared_client, uri, 2, whole(text))
    result = await complete(shared_client, uri, end_of(text))
    item, *paragraphs = result.items  # the existing id first, then paragraphs without one
    assert paragraphs and all(p.detail.startswith("new block id ^") for p in paragraphs)
    assert item.label == "green-brown-ratio"
    assert item.detail.startswith("Aim for roughly two to three parts brown to one part green")
    assert item.sort_text == "00000"
    edit = edit_of(item)
    assert edit.range == types.Range(start=types.Position(line=0, character=21), end=end_of(text))
    assert edit.new_text == "green-brown-ratio]]"

    text = "Ratio: [[Composting#^gr]]"
    change_doc(shared_client, uri, 3, whole(text))
    item = (await complete(shared_client, uri, position(text, "]]"))).items[0]
    assert (item.label, item.filter_text, edit_of(item).new_text) == (
        "green-brown-ratio",
        "grgreen-brown-ratio",
        "green-brown-ratio",
    )

    text = "Why: [[Attention#^"
    change_doc(shared_client, uri, 4, whole(text))
    assert [i.label for i in (await complete(shared_client, uri, end_of(text))).items][:1] == [
        "scaling-factor"
    ]


async def test_nothing_to_complete_outside_an_open_link(
    shared_client: LanguageClient, shared_vault: Path, buffers
):
    uri, _ = buffers(SCRATCH, "")
    for version, (text, col) in enumerate(
        [
            ("plain words", 5),
            ("[[Tomatoes]] done", 17),
            ("[[Tomatoes|my lab", 17),
            ("a [single bracket", 9),
        ],
        2,
    ):
        change_doc(shared_client, uri, version, whole(text))
        assert await complete(shared_client, uri, types.Position(line=0, character=col)) is None, (
            text
        )
    # an unresolved target has no headings to offer
    change_doc(shared_client, uri, 10, whole("[[Quantum Gardening#"))
    result = await complete(shared_client, uri, types.Position(line=0, character=20))
    assert result is not None and list(result.items) == []
