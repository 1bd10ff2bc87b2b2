"""vaultlens.engine.edits: renames and moves keep every link, in its own style; nothing else changes.

Each case builds a vault from files, plans a change, applies it to the files (a tiny editor),
re-parses, and checks that every link that resolved before resolves to the same (moved) page.
"""

from __future__ import annotations

import pytest
from vaultkit import build_vault

from vaultlens.engine.edits import (
    Change,
    EditError,
    create_page,
    md_encode,
    move_pages,
    rename,
    rename_heading,
    rename_page,
    rename_subject,
    yaml_scalar,
)
from vaultlens.engine.text import index_of_utf16
from vaultlens.engine.vault import Vault


def apply(files: dict[str, str], change: Change) -> dict[str, str]:
    """The files after ``change``: creates, then text edits (spans on the old text), then renames."""
    out = dict(files)
    for path in change.creates:
        assert path not in out
        out[path] = ""
    by_path: dict[str, list] = {}
    for edit in change.edits:
        by_path.setdefault(edit.path, []).append(edit)
    for path, edits in by_path.items():
        lines = out[path].split("\n")
        for edit in sorted(edits, key=lambda e: (e.span.start_line, e.span.start_char), reverse=True):
            assert edit.span.start_line == edit.span.end_line
            line = lines[edit.span.start_line]
            a, b = index_of_utf16(line, edit.span.start_char), index_of_utf16(line, edit.span.end_char)
            lines[edit.span.start_line] = line[:a] + edit.new_text + line[b:]
        out[path] = "\n".join(lines)
    for old, new in change.renames:
        assert new not in out
        out[new] = out.pop(old)
    return out


def resolved(vault: Vault) -> dict[str, list[tuple[str, str | None, str | None, str | None]]]:
    return {
        p: [(link.kind, link.label, link.block, vault.resolve_link(link, p).path) for link in (*vault.pages[p].edges, *vault.pages[p].links)]
        for p in vault.sorted_paths()
    }


def check_kept(files: dict[str, str], change: Change, moves: dict[str, str], *, label_first: bool = False) -> dict[str, str]:
    before = build_vault(files, label_first=label_first)
    after_files = apply(files, change)
    after = build_vault(after_files, label_first=label_first)
    old, new = resolved(before), resolved(after)
    assert sorted(new) == sorted(moves.get(p, p) for p in old)
    for path, links in old.items():
        got = new[moves.get(path, path)]
        assert len(got) == len(links)
        for (kind, label, block, target), (kind2, label2, block2, target2) in zip(links, got):
            assert (kind, label, block) == (kind2, label2, block2)
            if target is not None:
                assert target2 == moves.get(target, target), (path, target, target2)
    return after_files


def texts_of(files: dict[str, str]):
    return lambda path: files.get(path)


FILES = {
    "notes/Alpha.md": "# Alpha\n\nSee [[Beta]], [[Beta#Part one|part]], [[beta.md]] and ![[Beta#^blk]].\n",
    "notes/Beta.md": "---\naliases: [B]\n---\n# Beta\n\n## Part one\n\nText ^blk\n\nSelf: [[#Part one]] and [[Beta#Part one]].\n",
    "other/Gamma.md": (
        "---\nrelated:\n  - \"[[Beta]]\"\nsources: [[notes/Beta]]\n---\n"
        "Links: [[notes/Beta]], [[../notes/Beta]], [md](../notes/Beta.md#part-one), [angle](<../notes/Beta.md>), [[B]].\n"
    ),
    "Delta é.md": "Émoji 🙂 then [[Beta|β]] and [[Alpha]].\n",
    "notes/Epsilon.md": "Relative [[./Beta]] and [x](Beta.md).\n",
}


def test_rename_a_page_keeps_every_link_in_its_style():
    vault = build_vault(FILES)
    change = rename_page(vault, "notes/Beta.md", "Beta Two", texts_of(FILES), name="stem")
    assert change.renames == (("notes/Beta.md", "notes/Beta Two.md"),)
    after = check_kept(FILES, change, {"notes/Beta.md": "notes/Beta Two.md"})
    assert after["notes/Alpha.md"] == (
        "# Alpha\n\nSee [[Beta Two]], [[Beta Two#Part one|part]], [[Beta Two.md]] and ![[Beta Two#^blk]].\n"
    )
    assert after["notes/Beta Two.md"].startswith("---\naliases: [B]\n---\n# Beta Two\n")
    assert "Self: [[#Part one]] and [[Beta Two#Part one]]." in after["notes/Beta Two.md"]
    gamma = after["other/Gamma.md"]
    assert '  - "[[Beta Two]]"\nsources: [[notes/Beta Two]]' in gamma
    assert "[[notes/Beta Two]], [[../notes/Beta Two]], [md](../notes/Beta%20Two.md#part-one)" in gamma
    assert "[angle](<../notes/Beta Two.md>)" in gamma and "[[B]]" in gamma  # the alias still works
    assert after["Delta é.md"] == "Émoji 🙂 then [[Beta Two|β]] and [[Alpha]].\n"
    assert after["notes/Epsilon.md"] == "Relative [[./Beta Two]] and [x](Beta%20Two.md).\n"


def test_rename_a_heading_rewrites_anchors_in_each_style():
    vault = build_vault(FILES)
    heading = vault.pages["notes/Beta.md"].headings[1]
    change = rename_heading(vault, "notes/Beta.md", heading, "Part 1", texts_of(FILES))
    after = check_kept(FILES, change, {})
    assert "[[Beta#Part 1|part]]" in after["notes/Alpha.md"]
    assert "## Part 1\n" in after["notes/Beta.md"] and "Self: [[#Part 1]] and [[Beta#Part 1]]." in after["notes/Beta.md"]
    assert "[md](../notes/Beta.md#part-1)" in after["other/Gamma.md"]  # the slug style is kept


def test_moving_pages_rewrites_paths_and_relative_links():
    vault = build_vault(FILES)
    moves = {"notes/Epsilon.md": "archive/Epsilon.md", "notes/Beta.md": "archive/deep/Beta.md"}
    change = move_pages(vault, moves, texts_of(FILES))
    assert change.renames == ()  # the editor moves the files itself
    files = dict(FILES)
    after = check_kept(files, Change(change.creates, change.edits, tuple(moves.items())), moves)
    assert after["archive/Epsilon.md"] == "Relative [[./deep/Beta]] and [x](deep/Beta.md).\n"
    assert "[[Beta]]" in after["notes/Alpha.md"]  # the file name did not change
    assert "[[archive/deep/Beta]], [[../archive/deep/Beta]], [md](../archive/deep/Beta.md#part-one)" in after["other/Gamma.md"]


def test_a_new_name_that_would_capture_other_links_rewrites_them():
    files = {
        "a/Target.md": "# Target\n",
        "b/Other.md": "---\ntitle: Shared Name\n---\nbody\n",
        "c/Linker.md": "[[Target]] and [[Shared Name]]\n",
    }
    vault = build_vault(files)
    # after the rename, "Shared Name" would resolve to the renamed file by name (file names win
    # over titles): the link that meant b/Other.md must be rewritten to keep meaning it
    change = rename_page(vault, "a/Target.md", "Shared Name", texts_of(files), name="stem")
    after = check_kept(files, change, {"a/Target.md": "a/Shared Name.md"})
    assert after["c/Linker.md"] == "[[Shared Name]] and [[Other]]\n"


def test_title_rename_of_a_slug_page_keeps_the_file():
    files = {
        "graph-rag.md": "---\ntitle: Graph RAG\n---\n# Graph RAG\n\n## Costs\n",
        "Home.md": "[[Graph RAG]], [[graph-rag]], [[Graph RAG#Costs]]\n",
    }
    vault = build_vault(files)
    subject = rename_subject(vault, "Home.md", 0, 3, files["Home.md"])
    assert (subject.kind, subject.placeholder, subject.renames_file) == ("page", "Graph RAG", False)
    change = rename(vault, subject, "Graph: Retrieval", texts_of(files))
    after = check_kept(files, change, {})
    assert after["graph-rag.md"] == '---\ntitle: "Graph: Retrieval"\n---\n# Graph: Retrieval\n\n## Costs\n'
    assert after["Home.md"] == "[[Graph: Retrieval]], [[graph-rag]], [[Graph: Retrieval#Costs]]\n"
    with pytest.raises(EditError, match="file name"):
        rename_page(vault, "graph-rag.md", "a: b", texts_of(files), name="stem")


def test_label_first_vaults_keep_their_order():
    files = {"Root.md": "[[the label|a.b]] and [[a.b]]\n", "a.b.md": "# a.b\n"}
    vault = build_vault(files, label_first=True)
    change = rename_page(vault, "a.b.md", "a.c", texts_of(files), name="stem")
    after = check_kept(files, change, {"a.b.md": "a.c.md"}, label_first=True)
    assert after["Root.md"] == "[[the label|a.c]] and [[a.c]]\n"


def test_refusals_and_stale_text():
    vault = build_vault(FILES)
    with pytest.raises(EditError, match="wikilinks"):
        rename_page(vault, "notes/Beta.md", "Be|ta", texts_of(FILES))
    with pytest.raises(EditError, match="already exists"):
        rename_page(vault, "notes/Beta.md", "Alpha", texts_of(FILES), name="stem")
    stale = dict(FILES, **{"notes/Alpha.md": "changed on disk\n"})
    with pytest.raises(EditError, match="has changed since it was indexed"):
        rename_page(vault, "notes/Beta.md", "Beta Two", texts_of(stale), name="stem")
    assert rename_page(vault, "notes/Beta.md", "Beta", texts_of(FILES), name="stem") == Change()


def test_create_page_and_helpers():
    files = {"src/Page.md": "[[New: Idea]] [[sub/Deep]] [x](./Rel%20Page.md)\n"}
    vault = build_vault(files)
    links = vault.pages["src/Page.md"].links
    path, change = create_page(vault, "src/Page.md", links[0], "inbox")
    assert path == "inbox/New Idea.md" and change.creates == (path,)
    assert change.edits[0].new_text == '---\ntitle: "New: Idea"\n---\n'
    assert create_page(vault, "src/Page.md", links[1], "inbox")[0] == "sub/Deep.md"
    assert create_page(vault, "src/Page.md", links[2], "inbox")[0] == "src/Rel Page.md"
    after = build_vault(apply(files, change))
    assert after.resolve_link(links[0], "src/Page.md").path == "inbox/New Idea.md"
    assert md_encode("a b(c)#d%e") == "a%20b%28c%29%23d%25e"
    assert yaml_scalar("plain") == "plain" and yaml_scalar("yes") == '"yes"' and yaml_scalar("a: b") == '"a: b"'


def test_a_title_written_over_several_lines_is_not_touched():
    files = {"slug.md": "---\ntitle: >-\n  Folded\n  Title\n---\nbody\n", "Home.md": "[[Folded Title]]\n"}
    vault = build_vault(files)
    assert vault.pages["slug.md"].title == "Folded Title"
    with pytest.raises(EditError, match="by hand"):
        rename_page(vault, "slug.md", "New", texts_of(files), name="title")
