"""Editing helpers of issue 21: daily notes (moment.js formats, relative days), block-id choices,
callout types, folding ranges, tag rename and tag completion outside code."""

from __future__ import annotations

from datetime import date

import pytest
from vaultkit import build_vault

from vaultlens.engine.complete import block_choices, block_id_change, callout_completion, daily_choices
from vaultlens.engine.dailynotes import asks_first, format_date, note_path, parse_date, relative_days
from vaultlens.engine.edits import EditError
from vaultlens.engine.fixes import quick_fixes
from vaultlens.engine.folding import folding_ranges
from vaultlens.engine.model import Span
from vaultlens.engine.page import parse_page
from vaultlens.engine.tags import rename_tag, tag_completion

DAY = date(2024, 7, 14)  # a Sunday


@pytest.mark.parametrize(
    ("fmt", "name"),
    [
        ("YYYY-MM-DD", "2024-07-14"),
        ("dddd, MMMM Do YYYY", "Sunday, July 14th 2024"),
        ("YY.M.D [daily]", "24.7.14 daily"),
        ("ddd DD MMM", "Sun 14 Jul"),
        ("YYYY/MM/YYYY-MM-DD", "2024/07/2024-07-14"),
        ("gggg-[W]ww", "2024-W29"),
        ("GGGG-[W]WW-E", "2024-W28-7"),
        ("DDDD Q", "196 3"),
    ],
)
def test_moment_formats(fmt: str, name: str):
    assert format_date(DAY, fmt) == name


def test_parse_date_reads_back_only_exact_names():
    assert parse_date("2024-07-14") == DAY
    assert parse_date("2024-7-14") is None
    assert parse_date("Sunday, July 14th 2024", "dddd, MMMM Do YYYY") == DAY
    assert parse_date("2024-07-14", "YYYY/MM/YYYY-MM-DD") == DAY  # a link names the file only
    assert parse_date("Ideas", "YYYY-MM-DD") is None
    assert parse_date("2024-02-30") is None


def test_relative_days():
    days = dict(relative_days(DAY))
    assert days["today"] == DAY and days["yesterday"] == date(2024, 7, 13) and days["tomorrow"] == date(2024, 7, 15)
    assert days["next monday"] == date(2024, 7, 15) and days["next sunday"] == date(2024, 7, 21)
    assert days["last friday"] == date(2024, 7, 12) and days["last sunday"] == date(2024, 7, 7)
    assert len(days) == 17
    assert note_path(DAY, "YYYY-MM-DD", "journal/") == "journal/2024-07-14.md"
    assert asks_first("today") and asks_first("next fr") and not asks_first("tom") and not asks_first("next")


def test_daily_choices_link_existing_notes_and_name_missing_ones():
    vault = build_vault({"journal/2024-07-13.md": "# y\n", "2024-07-15.md": "# a page named like a day\n"})
    found = {n.name: (n.target, exists) for n, exists in daily_choices(vault, "", DAY)}
    assert found == {}
    found = {n.name: (n.path, n.target, exists) for n, exists in daily_choices(vault, "yes", DAY, folder="journal")}
    assert found == {"yesterday": ("journal/2024-07-13.md", "2024-07-13", True)}
    # the bare name would lead to another page: the path is written instead
    [(note, exists)] = daily_choices(vault, "tomorrow", DAY, folder="journal")
    assert (note.target, exists) == ("journal/2024-07-15", False)


def test_daily_note_create_fix_uses_the_daily_folder():
    text = "[[2024-07-20]] [[Plain idea]]\n"
    vault = build_vault({"Home.md": text})
    fixes = quick_fixes(vault, "Home.md", Span(0, 0, 0, 40), new_page_folder="inbox", daily=("YYYY-MM-DD", "journal"))
    assert [f.change.creates for f in fixes] == [("journal/2024-07-20.md",), ("inbox/Plain idea.md",)]


PAGE = (
    "---\ntitle: P\n---\n# P\n\nFirst paragraph\ncontinues here.\n\n- item one\n- item two ^abc\n\n"
    "```\ncode\n```\n\n> quote\n\n| a | b |\n\nLast one.  \n"
)


def test_block_choices_existing_ids_then_paragraphs_with_fresh_ids():
    vault = build_vault({"P.md": PAGE, "Home.md": "x\n"})
    choices = block_choices(vault, "Home.md", "P", "")
    assert [(c.text, c.new, c.line) for c in choices] == [
        ("item two", False, 9),
        ("First paragraph continues here.", True, 6),
        ("item one", True, 8),
        ("Last one.", True, 19),
    ]
    assert choices == block_choices(vault, "Home.md", "P", "")  # deterministic
    ids = [c.block_id for c in choices]
    assert len(set(ids)) == len(ids) and ids[0] == "abc"
    assert [c.text for c in block_choices(vault, "Home.md", "P", "ITEM")] == ["item two", "item one"]
    # in its own page, the block under the cursor is not offered
    assert "First paragraph continues here." not in [c.text for c in block_choices(vault, "P.md", "", "", 5)]
    last = choices[-1]
    change = block_id_change(PAGE, "P.md", last.line, last.col, last.block_id)
    [edit] = change.edits
    assert (edit.span, edit.new_text) == (Span(19, 9, 19, 9), f" ^{last.block_id}")
    assert block_id_change(PAGE.replace("Last one.", f"Last one. ^{last.block_id}"), "P.md", 19, 9, last.block_id).edits == ()
    with pytest.raises(EditError):
        block_id_change(PAGE.replace("Last one.", "Last one, edited."), "P.md", 19, 9, last.block_id)


def test_two_equal_paragraphs_get_different_ids():
    vault = build_vault({"P.md": "Same words.\n\nSame words.\n"})
    a, b = block_choices(vault, "X.md", "P", "")
    assert a.block_id != b.block_id


def test_callout_completion():
    found = callout_completion("> [!wa", 6)
    assert found is not None and found.choices == (("warning", "warning"),) and (found.start, found.end) == (4, 6)
    nested = callout_completion("> > [!]", 6)
    assert nested is not None and nested.closed and len(nested.choices) == 27
    assert ("tldr", "abstract") in nested.choices and ("cite", "quote") in nested.choices
    assert callout_completion("text [!no", 9) is None


def test_folding_ranges_add_code_and_callouts():
    text = "---\ntitle: F\n---\n# F\n\n> [!tip] Try\n> this\n\n```\ncode\n```\n\n## Sub\nbody\n"
    page = parse_page("F.md", text)
    assert [(f.start_line, f.end_line, f.kind) for f in folding_ranges(page)] == [
        (0, 2, "frontmatter"), (3, 13, "section"), (5, 6, "callout"), (8, 10, "code"), (12, 13, "section"),
    ]


TAGGED = {
    "A.md": "---\ntags: [proj/a, other]\n---\nSee #proj and #proj/a/b, #projx, `#proj`.\n",
    "B.md": "---\ntags:\n  - proj\n---\n[[A]] #Proj/c\n",
}


def test_rename_tag_with_children_frontmatter_and_inline():
    vault = build_vault(TAGGED)
    change = rename_tag(vault, "proj", "#work", TAGGED.get)
    assert [(e.path, e.span.start_line, e.new_text) for e in change.edits] == [
        ("A.md", 1, "work/a"), ("A.md", 3, "#work"), ("A.md", 3, "#work/a/b"), ("B.md", 2, "work"), ("B.md", 4, "#work/c"),
    ]
    for bad in ("", "12", "a b", "proj/x"):
        with pytest.raises(EditError):
            rename_tag(vault, "proj", bad, TAGGED.get)
    stale = {**TAGGED, "B.md": TAGGED["B.md"].replace("#Proj/c", "#Prox/c")}
    with pytest.raises(EditError):
        rename_tag(vault, "proj", "work", stale.get)


def test_tag_completion_is_not_offered_in_code():
    vault = build_vault(TAGGED)
    lines = ["> ```", "> #pr", "> ```", "`` a ` #pr ``", "`x` #pr"]
    assert tag_completion(vault, None, lines, 1, 5) is None  # a fence inside a quote
    assert tag_completion(vault, None, lines, 3, 11) is None  # a double-backtick code span
    found = tag_completion(vault, None, lines, 4, 7)
    assert found is not None and found.choices[0].tag.startswith("proj")
