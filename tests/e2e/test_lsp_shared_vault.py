"""A real-world vault (obsidian-tasks docs, 118 pages) from ``../shared``: search and completion."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from e2e_support import (
    SHARED,
    change_doc,
    cli_flags,
    cli_search,
    complete,
    copy_vault,
    end_of,
    engine_vault,
    open_doc,
    start_session,
    whole,
    wiki_search,
)
from lsprotocol import types
from pytest_lsp import LanguageClient

from vaultlens.engine.complete import page_choices
from vaultlens.engine.page import parse_page

SOURCE = SHARED / "vaults" / "obsidian-tasks"
DEV_SET = SHARED / "eval" / "obsidian-tasks-dev.jsonl"


@pytest.fixture
def tasks_vault(tmp_path: Path) -> Path:
    if not SOURCE.is_dir():
        pytest.skip(f"{SOURCE} is not here (the shared checkout sits next to the repo)")
    return copy_vault(SOURCE, tmp_path / "obsidian-tasks")


def dev_queries(n: int) -> list[str]:
    """The first ``n`` known-item queries of the dev set (fixed ones if it is missing)."""
    if not DEV_SET.is_file():
        return ["due date", "recurring tasks", "ON_HOLD"][:n]
    lines = DEV_SET.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["query"] for line in lines[:n]]


async def test_search_and_completion_on_obsidian_tasks(
    tasks_vault: Path, bare_client: LanguageClient
):
    await start_session(bare_client, tasks_vault)

    cases = [{"query": q} for q in dev_queries(3)] + [
        {"query": "due date", "folder": "Queries", "limit": 3},
        {"query": "recurring", "graph": True, "limit": 15},
        {"query": "status", "tag": "nonexistent-tag"},
    ]
    expected = await asyncio.gather(
        *(cli_search(tasks_vault, c["query"], *cli_flags(c)) for c in cases)
    )
    for params, cli in zip(cases, expected):
        assert cli["hits"] or params.get("tag"), params  # the cases do find something
        got = await wiki_search(bare_client, params)
        assert got == cli, params
        assert json.dumps(got) == json.dumps(cli), params

    scratch = "Scratch.md"
    uri, _ = open_doc(bare_client, tasks_vault, scratch, "")
    engine = engine_vault(tasks_vault)
    tops: list[tuple[str, str]] = []
    for version, typed in enumerate(["Filt", "recurring ta", "due"], 2):
        text = f"Notes\n- see [[{typed}"
        change_doc(bare_client, uri, version, whole(text))
        result = await complete(bare_client, uri, end_of(text))
        tops.append((typed, result.items[0].label))
        engine.upsert(parse_page(scratch, text))  # the server's view: disk plus the open buffer
        choices = page_choices(engine, typed, 50)
        assert choices, typed
        assert [(i.label, i.text_edit.new_text) for i in result.items] == [
            (c.label, c.insert + "]]") for c in choices
        ]
        assert all(
            i.text_edit.range.start == types.Position(line=1, character=8) for i in result.items
        )
        for choice in choices:  # every offered link leads to its page
            if choice.hit.page.path != scratch:
                assert engine.resolve(choice.target).path == choice.hit.page.path
    # what a person expects at the top
    first = dict(tops)
    assert (first["Filt"], first["recurring ta"]) == ("Filters", "Recurring Tasks")

    text = "see [[Filters#"
    change_doc(bare_client, uri, 10, whole(text))
    result = await complete(bare_client, uri, end_of(text))
    page = engine.pages["Queries/Filters.md"]
    assert [i.label for i in result.items] == [h.text for h in page.headings if h.text]
    assert len(result.items) > 10
