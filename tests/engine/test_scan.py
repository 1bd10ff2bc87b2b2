"""scan: which files are pages, in what order, and what a vault folder loads into."""

from __future__ import annotations

import os

import pytest
from vaultkit import write_vault

from vaultlens.engine import scan
from vaultlens.engine.scan import is_page_path, list_pages, load_vocabulary, open_vault


@pytest.mark.parametrize(
    "rel, is_page",
    [
        ("Note.md", True),
        ("a/b/Deep Note.md", True),
        ("UPPER.MD", True),
        ("_vocabulary.md", False),
        ("sub/_vocabulary.md", True),
        (".obsidian/workspace.md", False),
        (".trash/old.md", False),
        ("a/.git/x.md", False),
        ("a/.hidden/x.md", False),
        (".dotfile.md", False),
        ("image.png", False),
        ("notes.txt", False),
        ("md", False),
    ],
)
def test_is_page_path(rel, is_page):
    assert is_page_path(rel) is is_page


def test_list_pages_is_sorted_and_skips_what_is_not_a_page(tmp_path):
    files = {
        "b.md": "",
        "A.md": "",
        "z/y/x.md": "",
        "a b/c.md": "",
        "_vocabulary.md": "---\ngroups: []\n---\n",
        ".obsidian/app.md": "",
        ".trash/gone.md": "",
        "pic.png": "",
        "notes.txt": "",
    }
    listing = list_pages(str(write_vault(tmp_path, files)))
    assert listing.paths == ("A.md", "a b/c.md", "b.md", "z/y/x.md")
    assert listing.warnings == ()


def test_list_pages_excludes_globs(tmp_path):
    write_vault(tmp_path, {"keep.md": "", "templates/t.md": "", "drafts/d.md": "", "x.draft.md": ""})
    listing = list_pages(str(tmp_path), exclude=["templates/", "*.draft.md", "drafts/*"])
    assert listing.paths == ("keep.md",)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_symbolic_links_stay_inside_the_vault_and_loops_end(tmp_path):
    outside = write_vault(tmp_path / "outside", {"secret.md": "secret"})
    root = write_vault(tmp_path / "vault", {"in/page.md": "page"})
    os.symlink(outside, root / "escape")
    os.symlink(root / "in", root / "alias-of-in")
    os.symlink(root, root / "in" / "loop")
    listing = list_pages(str(root))
    assert "escape/secret.md" not in listing.paths
    assert any("escape" in w for w in listing.warnings)
    assert "in/page.md" in listing.paths
    assert len(listing.paths) == len(set(listing.paths)) <= 3


def test_vocabulary_file_absent_is_silent(tmp_path):
    vocabulary = load_vocabulary(str(tmp_path))
    assert (vocabulary.expansions, vocabulary.warnings) == ({}, ())


def test_open_vault_loads_pages_and_vocabulary(tmp_path):
    root = write_vault(
        tmp_path / "v",
        {
            "Car.md": "a car",
            "_vocabulary.md": "---\ngroups:\n  - canonical: automobile\n    variants: [car]\n---\n",
            "bad.md": b"\xff\xfe broken [[Car]]",
        },
    )
    vault, listing = open_vault(str(root))
    assert sorted(vault.pages) == ["Car.md", "bad.md"] == list(listing.paths)
    assert vault.vocabulary.synonyms("car") == (("automobile",),)
    assert vault.root == str(root)
    assert [p.code for p in vault.pages["bad.md"].problems] == ["invalid-utf8"]
    assert [s for s, _ in vault.backlinks("Car.md")] == ["bad.md"]


@pytest.mark.parametrize("length", [0, 1, 100, 65_535, 65_536, 65_537, 300_000])
def test_a_listed_page_is_read_whole_whatever_size_the_listing_saw(tmp_path, monkeypatch, length):
    # the size from the listing only sizes the first read: a file that grew or shrank since is
    # still read to its end, and never past the most a page may hold
    data = bytes(i % 251 for i in range(length))
    (tmp_path / "a.md").write_bytes(data)
    for seen in (-1, length, max(0, length - 7), length + 7, 0):
        assert scan._read_listed(str(tmp_path), "a.md", seen) == data
    monkeypatch.setattr(scan, "MAX_READ_BYTES", 50)
    for seen in (-1, length, 10, 49, 50, 51):
        assert scan._read_listed(str(tmp_path), "a.md", seen) == data[:51]
