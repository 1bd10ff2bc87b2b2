"""vaultlens.engine.complete: what a cursor in ``[[…`` asks for, and what accepting a choice inserts."""

from __future__ import annotations

import pytest

from vaultlens.engine.complete import link_context, page_choices
from vaultlens.engine.page import parse_page
from vaultlens.engine.vault import Vault


def vault_of(files: dict[str, str]) -> Vault:
    return Vault.from_pages(parse_page(path, text) for path, text in files.items())


def after(line: str, prefix: str) -> int:
    """The UTF-16 column right after ``prefix`` (ASCII lines here)."""
    assert line.startswith(prefix)
    return len(prefix)


@pytest.mark.parametrize(
    ("line", "prefix", "kind", "typed", "closed", "tail"),
    [
        ("See [[tom", "See [[tom", "page", "tom", False, ""),
        ("See [[tom]] now", "See [[tom", "page", "tom", True, ""),
        ("A [[Tom|my tomatoes]] bed", "A [[Tom", "page", "Tom", True, "|my tomatoes"),
        ("On [[rag#Pipeline]].", "On [[rag", "page", "rag", True, "#Pipeline"),
        (
            "[[att and [[Tomatoes]]",
            "[[att",
            "page",
            "att",
            False,
            "",
        ),  # the ]] belongs to the next link
        ("[[Attention#mul]]", "[[Attention#mul", "heading", "mul", True, ""),
        ("[[Composting#^gr", "[[Composting#^gr", "block", "gr", False, ""),
    ],
)
def test_link_context(line, prefix, kind, typed, closed, tail):
    ctx = link_context(line, after(line, prefix))
    assert (ctx.kind, ctx.typed, ctx.closed, ctx.tail) == (kind, typed, closed, tail)


@pytest.mark.parametrize(
    ("line", "col"), [("plain", 3), ("[[Tomatoes]] x", 14), ("[[Tomatoes|lab", 14)]
)
def test_no_link_context(line, col):
    assert link_context(line, col) is None


VAULT = {
    "ai/Retrieval-Augmented Generation.md": "---\naliases: [Storage Tips, RAG]\n---\nBody.\n",
    "garden/Tomatoes.md": "Red.\n",
}


@pytest.mark.parametrize(
    ("line", "prefix", "label", "inserted"),
    [
        ("See [[rag", "See [[rag", "RAG", "Retrieval-Augmented Generation|RAG]]"),
        ("See [[rag]] now", "See [[rag", "RAG", "Retrieval-Augmented Generation|RAG"),
        ("See [[rag|my label]]", "See [[rag", "RAG", "Retrieval-Augmented Generation"),
        ("See [[rag#Pipeline]]", "See [[rag", "RAG", "Retrieval-Augmented Generation"),
        ("A [[Tom|my tomatoes]] bed", "A [[Tom", "Tomatoes", "Tomatoes"),
    ],
)
def test_page_text_never_doubles_brackets_or_labels(line, prefix, label, inserted):
    vault = vault_of(VAULT)
    ctx = link_context(line, after(line, prefix))
    [choice] = [c for c in page_choices(vault, ctx.typed, 10) if c.label == label]
    assert ctx.page_text(choice) == inserted


def test_the_alias_shown_is_the_one_that_matched_as_a_word():
    """ "rag" is inside "Storage" but is not a word of it: the alias "RAG" is the one shown."""
    vault = vault_of(VAULT)
    for typed in ("rag", "ra"):
        [choice] = [c for c in page_choices(vault, typed, 10) if c.hit.page.path.startswith("ai/")]
        assert (choice.label, choice.alias, choice.insert) == (
            "RAG",
            "RAG",
            "Retrieval-Augmented Generation|RAG",
        )
