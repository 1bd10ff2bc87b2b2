"""engine/writes.py: create, append, edit; the links report; confinement; stale versions; atomicity."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from vaultkit import write_vault

from vaultlens.engine import writes
from vaultlens.engine.query import parse_query
from vaultlens.engine.scan import OutsideVault, open_vault
from vaultlens.engine.search import search

FILES = {
    "garden/Composting.md": "---\naliases: [compost heap]\n---\n# Composting\n\nTurn the heap.\n\n## Notes\n\nold note\n\n## Later\n\nlater\n",
    "garden/Tomatoes.md": "# Tomatoes\n\nFeed with [[Composting]].\n",
    "a/Soil.md": "# Soil\n",
    "b/Soil.md": "# Soil\n",
}


def open_(root: Path):
    vault, _ = open_vault(str(root))
    return vault


@pytest.fixture
def root(tmp_path: Path) -> Path:
    write_vault(tmp_path, FILES)
    return tmp_path


def by_target(result):
    return {e["target"]: e for e in result["links"]}


def test_create_reports_every_kind_of_link_and_is_searchable_at_once(root: Path):
    vault = open_(root)
    body = "See [[Composting]], [[compost heap]], [[Soil]] and [[Tomatos]].\n"
    result = writes.create_page(vault, str(root), "Mulching", body=body, folder="garden", tags=["garden"])
    assert result["path"] == "garden/Mulching.md" and result["written"]
    links = by_target(result)
    assert links["Composting"]["status"] == "resolved" and links["Composting"]["file"] == "garden/Composting.md"
    assert links["compost heap"]["status"] == "alias" and links["compost heap"]["fix"] == "[[Composting|compost heap]]"
    assert links["Soil"]["status"] == "ambiguous" and links["Soil"]["candidates"] == ["a/Soil.md", "b/Soil.md"]
    assert links["Tomatos"]["status"] == "unresolved"
    assert links["Tomatos"]["suggestions"][0]["file"] == "garden/Tomatoes.md"
    assert result["link_summary"] == {"resolved": 1, "ambiguous": 1, "alias": 1, "unresolved": 1, "attachment": 0}
    text = (root / "garden" / "Mulching.md").read_text()
    assert text == "---\ntags:\n- garden\n---\n" + body
    assert result["version"] == writes.page_version(text)
    hits = search(vault, parse_query("mulching"))
    assert hits and hits[0].page.path == "garden/Mulching.md"


def test_strict_links_refuses_and_writes_nothing(root: Path):
    vault = open_(root)
    with pytest.raises(writes.WriteError, match=r"Tomatos.*did you mean \[\[Tomatoes\]\]"):
        writes.create_page(vault, str(root), "Mulching", body="[[Tomatos]]\n", strict_links=True)
    assert not (root / "Mulching.md").exists()
    assert "Mulching.md" not in vault.pages


def test_create_never_overwrites_nor_duplicates_a_name(root: Path):
    vault = open_(root)
    with pytest.raises(writes.WriteError, match="already exists"):
        writes.create_page(vault, str(root), "Composting", body="x")
    with pytest.raises(writes.WriteError, match="already exists"):
        writes.create_page(vault, str(root), "Other", path="garden/Tomatoes.md")
    assert (root / "garden/Tomatoes.md").read_text() == FILES["garden/Tomatoes.md"]


def test_a_self_link_and_a_title_that_needs_frontmatter(root: Path):
    vault = open_(root)
    result = writes.create_page(vault, str(root), "A/B: notes", body="Back to [[A/B: notes]].\n")
    assert result["path"] == "A B notes.md"
    assert (root / "A B notes.md").read_text().startswith("---\ntitle: 'A/B: notes'\n---\n")


@pytest.mark.parametrize("path", ["../out.md", "/tmp/out.md", "a/../../out.md", ".obsidian/x.md", "a/.git/x.md"])
def test_paths_outside_the_vault_are_refused(root: Path, path: str):
    vault = open_(root)
    with pytest.raises((OutsideVault, writes.WriteError)):
        writes.create_page(vault, str(root), "Out", path=path)
    assert not (root.parent / "out.md").exists()


def test_a_symlinked_folder_is_never_written_through(root: Path, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    os.symlink(outside, root / "linked")
    os.symlink(root / "garden", root / "inner")  # even one that stays inside
    vault = open_(root)
    for folder in ("linked", "inner", "linked/deeper"):
        with pytest.raises(OutsideVault):
            writes.create_page(vault, str(root), "Escape", folder=folder)
    assert list(outside.iterdir()) == []
    os.symlink(outside / "target.md", root / "garden" / "Link.md")
    with pytest.raises(OutsideVault):
        writes.write_text(str(root), "garden/Link.md", "x", create=False)
    assert not (outside / "target.md").exists()


@pytest.mark.skipif(not writes._HAS_DIR_FD, reason="no dir_fd calls on this platform")
def test_a_folder_swapped_for_a_link_after_the_checks_is_not_written_through(root: Path, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    os.symlink(outside, root / "swapped")  # as if made between confined_target and the write
    with pytest.raises(OutsideVault):
        writes._open_folder(str(root), ["swapped"], "swapped/x.md")
    assert list(outside.iterdir()) == []


def test_append_under_a_heading_made_when_missing(root: Path):
    vault = open_(root)
    r1 = writes.append_to_page(vault, str(root), "Composting", "new note with [[Tomatoes]]", heading="Notes")
    text = (root / "garden/Composting.md").read_text()
    assert "## Notes\n\nold note\n\nnew note with [[Tomatoes]]\n\n## Later\n" in text
    assert [(e["target"], e["status"], e["line"]) for e in r1["links"]] == [("Tomatoes", "resolved", 12)]
    writes.append_to_page(vault, str(root), "garden/Composting.md", "a question", heading="### Questions",
                          version=r1["version"])
    assert (root / "garden/Composting.md").read_text().endswith("later\n\n### Questions\n\na question\n")
    with pytest.raises(writes.WriteError, match="changed since it was read"):
        writes.append_to_page(vault, str(root), "Composting", "stale", version=r1["version"])


def test_edit_replaces_one_exact_span_of_the_version_read(root: Path):
    vault = open_(root)
    rel = "garden/Tomatoes.md"
    version = writes.page_version((root / rel).read_text())
    with pytest.raises(writes.WriteError, match="version.*required"):
        writes.edit_page(vault, str(root), rel, "Feed", "Water")
    with pytest.raises(writes.WriteError, match="is not in"):
        writes.edit_page(vault, str(root), rel, "nothing like this", "x", version=version)
    (root / rel).write_text("# Tomatoes\n\nFeed with [[Composting]]. Feed well.\n")
    with pytest.raises(writes.WriteError, match="changed since it was read"):
        writes.edit_page(vault, str(root), rel, "Feed", "Water", version=version)
    version = writes.page_version((root / rel).read_text())
    with pytest.raises(writes.WriteError, match="2 times"):
        writes.edit_page(vault, str(root), rel, "Feed", "Water", version=version)
    result = writes.edit_page(vault, str(root), rel, "Feed well.", "See [[Mulch]].", version=version)
    assert (root / rel).read_text() == "# Tomatoes\n\nFeed with [[Composting]]. See [[Mulch]].\n"
    assert [(e["target"], e["status"]) for e in result["links"]] == [("Mulch", "unresolved")]
    assert result["version"] == writes.page_version((root / rel).read_text())


@pytest.mark.parametrize("name", ["../garden/Tomatoes.md", "garden/../../x.md", "/etc/hosts", ".."])
def test_a_page_named_outside_the_vault_is_refused(root: Path, name: str):
    with pytest.raises(OutsideVault):
        writes.append_to_page(open_(root), str(root), name, "x")


def test_an_ambiguous_page_name_is_refused_for_writes(root: Path):
    vault = open_(root)
    with pytest.raises(writes.WriteError, match="names 2 pages"):
        writes.append_to_page(vault, str(root), "Soil", "x")


def test_a_failed_write_leaves_no_temporary_file(root: Path, monkeypatch):
    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        writes.write_text(str(root), "garden/Tomatoes.md", "new", create=False)
    assert (root / "garden/Tomatoes.md").read_text() == FILES["garden/Tomatoes.md"]
    assert [p.name for p in (root / "garden").iterdir() if p.name.startswith(".")] == []
