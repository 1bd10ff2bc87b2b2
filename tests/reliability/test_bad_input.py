"""The bad-input catalogue against the engine: a vault of every kind of broken page still loads.

For each bad page (``badvault_support.catalogue``): ``engine.scan.open_vault`` indexes the rest
of the vault, the bad page itself is indexed (by title at least) and carries a problem with a
clear one-line message, which ``engine.diagnose`` turns into a diagnostic. Files that are not
pages, symbolic-link loops and links out of the vault are skipped (the latter with a warning);
unreadable files, files that vanish between listing and reading, and a ``_vocabulary.md`` that
is not a mapping are reported, never raised. The vault (with its 50 MB page) is written once
for the module.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import yaml
from badvault_support import (
    BAD_VOCABULARY,
    GOOD,
    N_LINKS,
    NOT_PAGES,
    ONE_LINE_BYTES,
    OTHER,
    PWNED,
    Bad,
    catalogue,
    root_user,
    write_bad_vault,
)

import vaultlens.engine.scan as scan
from vaultlens.engine.cache import CacheOptions
from vaultlens.engine.diagnose import Rules, diagnose
from vaultlens.engine.page import parse_page
from vaultlens.engine.scan import OutsideVault, load_page, load_vault, load_vocabulary, open_vault, read_bytes
from vaultlens.engine.vocabulary import parse_vocabulary

NO_CACHE = CacheOptions(enabled=False)
CATALOGUE = catalogue(Path("/nonexistent"))  # for parametrize ids; the data is the fixture's
LOAD_SECONDS = 20.0  # the whole bad vault, parsed cold (about 1 s on a laptop)


@pytest.fixture(scope="module")
def bad(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, tuple[Bad, ...]]:
    base = tmp_path_factory.mktemp("bad")
    root, outside = base / "vault", base / "outside"
    return root.resolve(), outside.resolve(), write_bad_vault(root, outside)


@pytest.fixture(scope="module")
def loaded(bad):
    root = bad[0]
    start = time.monotonic()
    vault, listing = open_vault(str(root), cache=NO_CACHE)
    assert time.monotonic() - start < LOAD_SECONDS
    return vault, listing


def _expected_code(b: Bad) -> str | None:
    if b.rel == "escaped-surrogates.md" and not getattr(yaml, "__with_libyaml__", False):
        return None  # the pure-Python loader accepts the escape (the value is cleaned instead)
    return b.code


@pytest.mark.parametrize("rel", [b.rel for b in CATALOGUE])
def test_each_bad_page_is_indexed_with_a_clear_problem(bad, loaded, rel):
    vault, listing = loaded
    b = next(b for b in bad[2] if b.rel == rel)
    assert rel in listing.paths and rel in vault.pages, b.why
    page = vault.pages[rel]
    assert page.title  # at least by title
    code = _expected_code(b)
    assert [p.code for p in page.problems] == ([code] if code else []), b.why
    for problem in page.problems:
        assert problem.message and "\n" not in problem.message and "Traceback" not in problem.message
        assert len(problem.message) < 200
    found = {f.code: f for f in diagnose(vault, rel, Rules())}
    if code:
        assert found[code].message == page.problems[0].message
        assert found[code].severity in ("error", "warning")
    # nothing that cannot be written as UTF-8 reaches the index
    for text in (page.title, page.body, *page.aliases, *page.tags, repr(page.meta)):
        text.encode("utf-8")


def test_the_good_pages_are_indexed_as_if_the_bad_ones_were_not_there(loaded):
    vault, _ = loaded
    assert vault.pages["Good.md"] == parse_page("Good.md", GOOD)
    assert vault.pages["Other.md"] == parse_page("Other.md", OTHER)
    resolved = [res.path for _, res in vault.outlinks("Good.md")]
    assert resolved == ["Other.md", "yaml/tab-indent.md", "Many Links.md"]
    linking = {source for source, _ in vault.backlinks("Good.md")}
    # every bad page that can still be read links back to Good
    assert {"nul.md", "invalid-utf8.md", "one-line.md", "Many Links.md", "yaml/python-tag.md"} <= linking
    assert "huge.md" not in linking  # indexed by title only


def test_the_heavy_pages_are_parsed_in_full_or_by_title(loaded):
    vault, _ = loaded
    many = vault.pages["Many Links.md"]
    assert len(many.links) == N_LINKS + 1 and many.links[-1].target == "Good"
    assert len(diagnose(vault, "Many Links.md", Rules())) == N_LINKS  # the 10,000 unresolved ones
    one = vault.pages["one-line.md"]
    assert [link.target for link in one.links] == ["Good", "Other"]
    assert one.links[1].span.start_line == 0 and one.links[1].span.start_char > ONE_LINE_BYTES - 40
    huge = vault.pages["huge.md"]
    assert (huge.title, huge.links, huge.body, huge.size) == ("huge", (), "", 50_000_000 + 14 - 50_000_000 % 14)


def test_brackets_that_do_not_close_are_text(loaded):
    vault, _ = loaded
    page = vault.pages["brackets.md"]
    assert [link.target for link in page.links] == ["Good", "unbalanced", "Other", "^", ".md", "Good"]


def test_yaml_is_loaded_safely(bad, loaded):
    _, outside, _ = bad
    page = loaded[0].pages["yaml/python-tag.md"]
    assert page.meta == {} and "python/object" in page.problems[0].message
    assert not (outside / PWNED).exists()


def test_what_is_not_a_page_is_not_indexed(loaded):
    vault, listing = loaded
    for rel in (*NOT_PAGES, "_vocabulary.md"):
        assert rel not in vault.pages and rel not in listing.paths


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_symbolic_links_loop_or_lead_out_and_are_not_followed_out(bad, loaded):
    vault, listing = loaded
    assert not any(p.startswith(("loop/", "escape/", "yaml/again/")) for p in listing.paths)
    assert "secret.md" not in vault.pages and "self-loop.md" not in vault.pages
    assert "Good Twin.md" in vault.pages  # a link that stays inside is a page like any other
    assert sorted(w for w in listing.warnings) == [
        "skipped escape: symbolic link leads outside the vault",
        "skipped secret.md: symbolic link leads outside the vault",
    ]
    assert all("TOPSECRET" not in page.body for page in vault.pages.values())
    # and reading one page by name never follows them out either
    root = str(bad[0])
    for rel in ("secret.md", "escape/Secret.md", "../outside/Secret.md", str(bad[1] / "Secret.md")):
        with pytest.raises(OutsideVault):
            read_bytes(root, rel)
        assert load_page(root, rel) is None
    assert load_page(root, "self-loop.md") is not None  # ELOOP: unreadable, reported on the page
    assert load_page(root, "Good Twin.md") == parse_page("Good Twin.md", GOOD)


def test_the_vocabulary_that_is_not_a_mapping_warns_in_one_line(bad, loaded):
    vault, _ = loaded
    assert vault.vocabulary.expansions == {}
    assert vault.vocabulary.warnings == (
        "_vocabulary.md:2: frontmatter is a list, not a mapping of keys (key: value lines)",
    )
    assert load_vocabulary(str(bad[0])) == parse_vocabulary(BAD_VOCABULARY)


@pytest.mark.parametrize(
    "text, warning",
    [
        (b"---\ngroups: 5\n---\n", "'groups' must be a list"),
        (b"---\ngroups: [1, x, [a], {variants: 3}]\n---\n", "group 1 is not a {canonical, variants} mapping"),
        (b"---\ngroups:\n  - canonical: \"oops\n---\n", "malformed YAML"),
        (b"---\njust text\n---\n", "not a mapping"),
        (b"\xff\xfe---\n", "not valid UTF-8"),
        (b"no frontmatter at all\n", "no 'groups' list"),
        (b"---\ngroups:\n  - canonical: car\n", "no closing ---"),
    ],
)
def test_a_vocabulary_of_any_shape_gives_warnings_not_exceptions(text, warning):
    vocabulary = parse_vocabulary(text)
    assert any(warning in w for w in vocabulary.warnings), vocabulary.warnings
    assert all("\n" not in w for w in vocabulary.warnings)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_a_vocabulary_that_links_out_of_the_vault_is_not_read(tmp_path):
    (tmp_path / "out.md").write_bytes(b"---\ngroups:\n  - canonical: car\n    variants: [auto]\n---\n")
    (tmp_path / "v").mkdir()
    os.symlink(tmp_path / "out.md", tmp_path / "v" / "_vocabulary.md")
    vocabulary = load_vocabulary(str(tmp_path / "v"))
    assert vocabulary.expansions == {} and "leads outside the vault" in vocabulary.warnings[0]


@pytest.mark.skipif(root_user(), reason="root reads files whatever their permissions")
def test_an_unreadable_file_is_a_page_with_a_problem(tmp_path):
    (tmp_path / "Good.md").write_text(GOOD)
    locked = tmp_path / "Locked.md"
    locked.write_text("# Locked\n")
    locked.chmod(0)
    try:
        vault, _ = open_vault(str(tmp_path), cache=NO_CACHE)
    finally:
        locked.chmod(0o644)
    assert [(p.code, p.message) for p in vault.pages["Locked.md"].problems] == [
        ("unreadable", "cannot read this file: Permission denied")
    ]
    assert "Good.md" in vault.pages


def test_a_read_that_fails_is_a_page_with_a_problem(tmp_path, monkeypatch):
    """What chmod 000 does for a user who is not root, injected where the engine reads."""
    (tmp_path / "Good.md").write_text(GOOD)
    (tmp_path / "Locked.md").write_text("# Locked\n")
    real = scan._read_listed

    def read(root: str, rel: str, size: int = -1) -> bytes:
        if rel == "Locked.md":
            raise PermissionError(13, "Permission denied", rel)
        return real(root, rel, size)

    monkeypatch.setattr(scan, "_read_listed", read)
    vault, _ = open_vault(str(tmp_path), cache=NO_CACHE)
    assert [(p.code, p.message) for p in vault.pages["Locked.md"].problems] == [
        ("unreadable", "cannot read this file: Permission denied")
    ]
    assert vault.pages["Good.md"] == parse_page("Good.md", GOOD)
    assert diagnose(vault, "Locked.md", Rules())[0].code == "unreadable"


def test_a_file_that_vanishes_between_listing_and_reading_is_left_out(tmp_path, monkeypatch):
    (tmp_path / "Good.md").write_text(GOOD)
    (tmp_path / "Other.md").write_text(OTHER)
    (tmp_path / "Gone.md").write_text("# Gone\n[[Good]]\n")
    real_list = scan.list_pages

    def list_then_delete(root, exclude=(), *, stats=False):
        listing = real_list(root, exclude, stats=stats)
        assert "Gone.md" in listing.paths
        os.remove(os.path.join(root, "Gone.md"))  # after listing, before reading
        return listing

    monkeypatch.setattr(scan, "list_pages", list_then_delete)
    loaded = load_vault(str(tmp_path), cache=NO_CACHE)
    assert sorted(loaded.vault.pages) == ["Good.md", "Other.md"]
    assert [s for s, _ in loaded.vault.backlinks("Good.md")] == ["Other.md"]
    assert load_page(str(tmp_path), "Gone.md") is None


def test_the_bad_vault_comes_back_equal_from_the_persistent_index(bad, tmp_path):
    root = str(bad[0])
    options = CacheOptions(enabled=True, location=str(tmp_path / "index"))
    first = load_vault(root, cache=options)
    assert first.parsed == len(first.listing.paths)
    assert first.commit() is not None
    again = load_vault(root, cache=options)
    assert again.from_cache == len(again.listing.paths) and again.parsed == 0
    for rel in first.listing.paths:
        assert again.vault.pages[rel] == first.vault.pages[rel], rel
