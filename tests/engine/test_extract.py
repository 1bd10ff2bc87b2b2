"""vaultlens.engine.extract: a selection or a section moves to a new page, a link stays in its
place, and every link of the vault still resolves (to the new page where its anchor moved).

Each case plans the extraction, applies the change to the files (a tiny editor that takes
multi-line edits), re-parses the vault and compares every link before and after.
"""

from __future__ import annotations

import pytest
from vaultkit import build_vault

from vaultlens.engine.edits import Change, EditError
from vaultlens.engine.extract import extract_page
from vaultlens.engine.model import Span
from vaultlens.engine.text import index_of_utf16
from vaultlens.engine.vault import Vault


def apply(files: dict[str, str], change: Change) -> dict[str, str]:
    """The files after ``change``: creates (never over a file), then text edits on the old text."""
    out = dict(files)
    for path in change.creates:
        assert path not in out, f"created over {path}"
        out[path] = ""
    by_path: dict[str, list] = {}
    for edit in change.edits:
        by_path.setdefault(edit.path, []).append(edit)
    for path, edits in by_path.items():
        text = out[path]
        lines = text.split("\n")

        def offset(line: int, col: int) -> int:
            return sum(len(x) + 1 for x in lines[:line]) + index_of_utf16(lines[line] if line < len(lines) else "", col)

        spans = sorted(((offset(e.span.start_line, e.span.start_char), offset(e.span.end_line, e.span.end_char), e.new_text)
                        for e in edits), reverse=True)
        for (a, _, _), (_, d, _) in zip(spans, spans[1:]):
            assert d <= a, "overlapping edits"
        for a, b, new in spans:
            text = text[:a] + new + text[b:]
        out[path] = text
    return out


def links_of(vault: Vault) -> dict[str, list[tuple[str, str | None, str | None, str | None, str | None]]]:
    return {
        p: [(link.kind, link.label, link.heading, link.block, vault.resolve_link(link, p).path)
            for link in (*vault.pages[p].edges, *vault.pages[p].links)]
        for p in vault.sorted_paths()
    }


def check_extract(files: dict[str, str], path: str, span: Span, **options) -> tuple[dict[str, str], str]:
    """Plan, apply, re-index; every link that resolved still resolves, and the moved ones (and
    the links to a moved anchor) reach the new page. Returns the new files and the new path."""
    before = build_vault(files)
    plan = extract_page(before, path, span, files.get, **options)
    assert plan is not None
    after_files = apply(files, plan.change)
    after = build_vault(after_files)
    new = plan.path
    assert sorted(after.pages) == sorted([*before.pages, new])
    old_map, new_map = links_of(before), links_of(after)
    for source, links in old_map.items():
        if source == path:
            continue
        got = new_map[source]
        assert len(got) == len(links)
        for (k, label, h, b, target), (k2, label2, h2, b2, target2) in zip(links, got):
            assert (k, label, h, b) == (k2, label2, h2, b2)
            if target is not None:
                moved = target == path and target2 == new
                assert target2 == target or moved, (source, target, target2)
    # the old page's links and the new page's, taken together, are the old page's links plus the one left behind
    combined = sorted(repr((k, label, h, b)) for k, label, h, b, _ in new_map[path] + new_map[new])
    expected = sorted([repr((k, label, h, b)) for k, label, h, b, _ in old_map[path]]
                      + [repr(("embed" if options.get("embed") else "wiki", None, None, None))])
    assert combined == expected
    # where they lead: the same pages, the old page's own ones to the old or the new page
    old_targets = sorted(str(t) for *_, t in old_map[path] if t not in (None, path))
    new_targets = sorted(str(t) for *_, t in new_map[path] + new_map[new] if t not in (None, path, new))
    assert new_targets == old_targets
    unresolved_before = sum(t is None for links in old_map.values() for *_, t in links)
    unresolved_after = sum(t is None for links in new_map.values() for *_, t in links)
    assert unresolved_after == unresolved_before
    return after_files, new


FILES = {
    "notes/Garden.md": (
        "---\ntitle: Garden\n---\n# Garden\n\nIntro with [[#Watering]].\n\n"
        "## Soil 🙂 care\n\nFeed with [[Compost]] and [[./Compost|local]], see [[#Watering]] and [[#Depth]].\n"
        "Also [md](Compost.md) and [[#^tip]].\n\n### Depth\n\nDig deep. ^deep\n\n"
        "## Watering\n\nOften. ^tip\n\nBack to [[#Soil 🙂 care]] and [[Garden#Depth]].\n"
    ),
    "notes/Compost.md": "# Compost\n\nSee [[Garden#Soil 🙂 care]], [[Garden#^deep]], [g](Garden.md#depth) and [[Garden#Watering]].\n",
    "Other.md": "Read [[notes/Garden#Depth|depth]] and [[Garden]].\n",
}


def test_a_section_moves_with_its_subsections_and_every_link_follows():
    after, new = check_extract(FILES, "notes/Garden.md", Span(7, 0, 7, 0), folder="inbox")
    assert new == "inbox/Soil 🙂 care.md"
    page = after[new]
    assert page.startswith("## Soil 🙂 care\n\nFeed with [[Compost]] and [[../notes/Compost|local]], see [[Garden#Watering]] and [[#Depth]].\n")
    assert "Also [md](../notes/Compost.md) and [[Garden#^tip]].\n\n### Depth\n\nDig deep. ^deep\n" in page
    garden = after["notes/Garden.md"]
    assert "Intro with [[#Watering]].\n\n[[Soil 🙂 care]]\n\n## Watering\n" in garden
    assert "Back to [[Soil 🙂 care#Soil 🙂 care]] and [[Soil 🙂 care#Depth]].\n" in garden
    compost = after["notes/Compost.md"]
    assert compost == (
        "# Compost\n\nSee [[Soil 🙂 care#Soil 🙂 care]], [[Soil 🙂 care#^deep]], "
        "[g](../inbox/Soil%20🙂%20care.md#depth) and [[Garden#Watering]].\n"
    )
    assert after["Other.md"] == "Read [[inbox/Soil 🙂 care#Depth|depth]] and [[Garden]].\n"


def test_a_selection_becomes_an_embed_named_from_its_first_line():
    files = {"A.md": "# A\n\nKeep this.\n- **Plan** for [[B|the b]] later\n- second\nTail.\n", "B.md": "# B\n"}
    after, new = check_extract(files, "A.md", Span(3, 0, 5, 0), embed=True)
    assert new == "Plan for the b later.md"
    assert after[new] == "- **Plan** for [[B|the b]] later\n- second\n"
    assert after["A.md"] == "# A\n\nKeep this.\n![[Plan for the b later]]\nTail.\n"


def test_a_name_collision_gets_a_new_name_and_no_file_is_overwritten():
    files = {"A.md": "# A\n\n## B\n\ntext\n", "B.md": "# B\n", "x/B 2.md": "other\n"}
    after, new = check_extract(files, "A.md", Span(2, 0, 2, 0), taken=lambda rel: rel == "B 3.md")
    assert new == "B 4.md"
    assert after["A.md"] == "# A\n\n[[B 4]]\n"


def test_a_partial_line_selection_and_a_name_with_file_breaking_characters():
    files = {"A.md": "# A\n\nBefore: what is a/b? After.\n"}
    after, new = check_extract(files, "A.md", Span(2, 8, 2, 20))
    assert new == "what is a b.md"
    assert after[new] == "---\ntitle: what is a/b?\n---\nwhat is a/b?\n"
    assert after["A.md"] == "# A\n\nBefore: [[what is a b]] After.\n"


def test_nothing_to_extract_and_refusals():
    vault = build_vault(FILES)
    texts = FILES.get
    assert extract_page(vault, "notes/Garden.md", Span(5, 2, 5, 2), texts) is None  # a cursor off a heading
    assert extract_page(vault, "notes/Garden.md", Span(3, 0, 3, 0), texts) is None  # the title heading
    assert extract_page(vault, "notes/Garden.md", Span(0, 0, 1, 3), texts) is None  # the frontmatter
    with pytest.raises(EditError, match="cuts the link"):
        extract_page(vault, "notes/Garden.md", Span(5, 0, 5, 15), texts)
    stale = dict(FILES, **{"notes/Garden.md": FILES["notes/Garden.md"].replace("Intro with", "Intro")})
    with pytest.raises(EditError, match="changed since it was indexed"):
        extract_page(vault, "notes/Garden.md", Span(7, 0, 7, 0), stale.get)
