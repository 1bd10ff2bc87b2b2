"""vaultlens.engine.navigate, engine.tags and engine.locate: cursor targets, definition, references,
outlines, folds, tag completion and frontmatter spans."""

from __future__ import annotations

from vaultkit import build_vault

from vaultlens.engine.locate import anchor_span, frontmatter_aliases, frontmatter_tags, frontmatter_value, text_at
from vaultlens.engine.model import Span
from vaultlens.engine.navigate import definition, find_heading, folds, outline, references, target_at
from vaultlens.engine.tags import tag_completion

FILES = {
    "Home.md": (
        "---\ntitle: Home Page\ntags: [meta, garden/soil]\naliases:\n  - Start\n---\n"
        "# Home Page\n\nGo to [[Soil#pH and Nutrients|pH]], [[Soil#^ratio]], [s](Soil.md#ph-and-nutrients).\n"
        "Tagged #garden and #garden/soil, émoji 🙂 [[Soil]].\n"
    ),
    "Soil.md": (
        "---\ntags:\n  - garden\n---\n# Soil\n\nIntro.\n\n## pH and Nutrients\n\nKeep it neutral. ^ratio\n\n"
        "### Deeper\n\ntext\n\n\n## Structure\n\nSee [[#Structure]] and [[Home]].\n"
    ),
}


def at(text: str, needle: str, offset: int = 0) -> tuple[int, int]:
    index = text.index(needle) + offset
    line = text.count("\n", 0, index)
    start = text.rfind("\n", 0, index) + 1
    return line, len(text[start:index].encode("utf-16-le")) // 2


def texts(path: str) -> str | None:
    return FILES.get(path)


def test_targets_under_the_cursor():
    vault = build_vault(FILES)
    home = FILES["Home.md"]
    link = target_at(vault, "Home.md", *at(home, "[[Soil#pH", 2), home)
    assert link.kind == "link" and not link.anchor
    assert target_at(vault, "Home.md", *at(home, "#pH and", 2), home).anchor
    assert target_at(vault, "Home.md", *at(home, "# Home Page", 3), home).kind == "title"
    assert target_at(vault, "Home.md", *at(home, "Home Page\ntags", 2), home).kind == "title"
    tag = target_at(vault, "Home.md", *at(home, "garden/soil]", 2), home)
    assert (tag.kind, tag.tag) == ("tag", "garden/soil")
    assert target_at(vault, "Home.md", *at(home, "#garden and", 2), home).tag == "garden"
    assert target_at(vault, "Home.md", *at(home, "[[Soil]]", 3), home).link.target == "Soil"  # after an emoji
    assert target_at(vault, "Home.md", *at(home, "Go to", 1), home) is None
    soil = FILES["Soil.md"]
    assert target_at(vault, "Soil.md", *at(soil, "## Structure", 4), soil).kind == "heading"


def test_definition_lands_on_the_heading_or_block():
    vault = build_vault(FILES)
    home = FILES["Home.md"]
    soil_lines = FILES["Soil.md"].split("\n")
    jump = definition(vault, "Home.md", *at(home, "[[Soil#pH", 3), home)
    assert jump.path == "Soil.md" and soil_lines[jump.span.start_line] == "## pH and Nutrients"
    assert jump.origin.start_char == at(home, "[[Soil#pH")[1]
    block = definition(vault, "Home.md", *at(home, "[[Soil#^ratio", 3), home)
    assert soil_lines[block.span.start_line].endswith("^ratio")
    slugged = definition(vault, "Home.md", *at(home, "(Soil.md#", 2), home)
    assert slugged.span.start_line == jump.span.start_line
    assert definition(vault, "Home.md", *at(home, "[[Soil]]", 3), home).span == Span(0, 0, 0, 0)
    assert find_heading(vault.pages["Soil.md"], "pH and Nutrients#Deeper").text == "Deeper"


def test_references():
    vault = build_vault(FILES)
    home, soil = FILES["Home.md"], FILES["Soil.md"]
    on_link = references(vault, "Home.md", *at(home, "[[Soil]]", 3), include_declaration=False, texts=texts)
    assert [(loc.path, loc.span.start_line) for loc in on_link] == [("Home.md", 8)] * 3 + [("Home.md", 9)]
    heading = references(vault, "Soil.md", *at(soil, "## pH", 3), include_declaration=True, texts=texts)
    assert [loc.path for loc in heading] == ["Soil.md", "Home.md", "Home.md"]  # declaration, [[..#pH]], md slug
    structure = references(vault, "Soil.md", *at(soil, "## Structure", 3), include_declaration=False, texts=texts)
    assert [(loc.path, loc.span.start_line) for loc in structure] == [("Soil.md", 19)]  # [[#Structure]]
    title = references(vault, "Home.md", *at(home, "# Home", 3), include_declaration=True, texts=texts)
    assert title[0].span == frontmatter_value(home, "title") and title[1].path == "Soil.md"
    tags = references(vault, "Home.md", *at(home, "#garden and", 2), include_declaration=True, texts=texts)
    # #garden and everything below it: inline in Home, frontmatter in both pages
    assert sorted((loc.path, loc.span.start_line) for loc in tags) == [
        ("Home.md", 2), ("Home.md", 9), ("Home.md", 9), ("Soil.md", 2)
    ]


def test_outline_and_folds():
    page = build_vault(FILES).pages["Soil.md"]
    (top,) = outline(page)
    assert top.heading.text == "Soil" and [c.heading.text for c in top.children] == ["pH and Nutrients", "Structure"]
    ph = top.children[0]
    assert [c.heading.text for c in ph.children] == ["Deeper"]
    assert (ph.span.start_line, ph.span.end_line) == (8, 14)  # trailing blank lines are not the section's
    assert [(f.start_line, f.end_line, f.kind) for f in folds(page)] == [
        (0, 3, "frontmatter"), (4, 19, "section"), (8, 14, "section"), (12, 14, "section"), (17, 19, "section")
    ]


def test_tag_completion_contexts_and_ranking():
    vault = build_vault(FILES)
    lines = ["x #gar", "`#gar", "# heading", "a#gar", "#"]
    found = tag_completion(vault, "New.md", lines, 0, 6)
    assert [c.tag for c in found.choices] == ["garden", "garden/soil"]  # 2 pages, then 1
    assert (found.start, found.end, found.frontmatter) == (3, 6, False)
    assert tag_completion(vault, "New.md", lines, 1, 5) is None  # inline code
    assert tag_completion(vault, "New.md", lines, 2, 1) is None  # a heading's '# '
    assert tag_completion(vault, "New.md", lines, 3, 5) is None  # not after a space
    assert len(tag_completion(vault, "New.md", lines, 4, 1).choices) == 3  # all, most used first
    front = ["---", "tags:", "  - #so", "title: x", "---"]
    found = tag_completion(vault, "New.md", front, 2, 7)
    assert found.frontmatter and [c.tag for c in found.choices] == ["garden/soil"] and found.start == 4
    assert tag_completion(vault, "New.md", front, 3, 8) is None  # not the tags key


def test_frontmatter_spans():
    home = FILES["Home.md"]
    assert text_at(home, frontmatter_value(home, "title")) == "Home Page"
    assert [t.name for t in frontmatter_tags(home)] == ["meta", "garden/soil"]
    assert [(name, text_at(home, span)) for name, span in frontmatter_aliases(home)] == [("Start", "Start")]
    assert text_at('---\ntitle: "Quoted: yes"\n---\n', frontmatter_value('---\ntitle: "Quoted: yes"\n---\n', "title")) == "Quoted: yes"
    vault = build_vault(FILES)
    link = vault.pages["Home.md"].links[0]
    assert text_at(home, anchor_span(link)) == "pH and Nutrients"
