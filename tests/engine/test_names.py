"""The names pass of a cold start (``engine.names``): every page's names from its frontmatter
alone, the same names the full parse finds; and a load that hands over a names vault still
returns the same vault as one that does not."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vaultkit import vault_state, write_vault

from vaultlens.engine import names
from vaultlens.engine.cache import CacheOptions
from vaultlens.engine.page import parse_page
from vaultlens.engine.scan import list_pages, load_vault, names_vault

NAMES = ("path", "title", "stem", "aliases")


def same_names(path: str, data: bytes) -> None:
    full = parse_page(path, data)
    head = names.names_page(path, data[: names.HEAD_BYTES] if len(data) > names.HEAD_BYTES else data, len(data))
    if len(data) > names.HEAD_BYTES and not names.frontmatter_text(data[: names.HEAD_BYTES]):
        head = names.names_page(path, data, len(data))  # what read_head does: the whole file
    assert head.body == "" and not head.links and not head.headings and not head.edges
    if any(p.code in ("frontmatter-yaml", "frontmatter-not-mapping") for p in full.problems):
        return  # YAML the full parse cannot read: it finds no names there; the names pass may (documented)
    for name in NAMES:
        assert getattr(head, name) == getattr(full, name), (name, data[:200])
    assert not head.tags and head.type is None  # they come with the body


CASES = [
    b"# Just a heading\n\nbody [[Link]]\n",
    b"---\ntitle: Garden\naliases: [Plot, \"Yard\"]\ntags: [a, b/c]\n---\n# Other\n#inline\n",
    b"\xef\xbb\xbf---\r\ntitle: \"BOM and CRLF\"\r\naliases:\r\n  - one\r\n---\r\nbody\r\n",
    b"---\ntitle: Unclosed\nno end here\n",
    b"---\ntitle: dots\n...\nbody\n",
    b"---\n---\n",
    b"---\ntitle: [weird: yaml\n---\n",
    b"---\r\ntitle: old mac\r---\r",
    b"---\ntitle: Big\nnote: " + b"x" * 40_000 + b"\n---\nbody\n",
    b"---\ntitle: Edges\nrelated:\n  - \"[[Compost]]\"\ndepends_on: [[Soil]]\n---\n",
    "---\ntitle: Ünïcödé ✓\naliases: [Çà]\n---\n".encode(),
    b"---\ntitle: bad \xff utf8\n---\n",
    b"-- -\ntitle: not frontmatter\n---\n",
]


@pytest.mark.parametrize("data", CASES)
def test_a_names_page_has_the_names_the_full_parse_finds(data: bytes):
    same_names("notes/Some Page.md", data)


line = st.text(st.sampled_from("ab T:-[],\"' #é"), max_size=30)  # structure, no YAML anchors or tags
front = st.lists(st.one_of(
    st.sampled_from(["title: T", "aliases: [a, b]", "aliases:", "  - x", "- y", "tags: t1 t2", "type: k", "---",
                     "...", "related: \"[[P]]\"", "title:", "", "  more", "note: |", "  block", "# c"]), line), max_size=8)


@settings(max_examples=200, deadline=None)
@given(front, st.sampled_from(["\n", "\r\n", "\r"]), st.booleans())
def test_any_frontmatter_gives_the_full_parse_names(lines, newline, bom):
    data = ("\ufeff" if bom else "") + newline.join(["---", *lines, "---", "# H", "body"])
    same_names("a.md", data.encode("utf-8", errors="surrogatepass"))


def test_read_head_reads_past_its_first_bytes_only_for_a_long_frontmatter(tmp_path: Path):
    short = b"---\ntitle: S\n---\n" + b"word " * 10_000
    long = b"---\ntitle: L\nnote: " + b"y" * 30_000 + b"\n---\nbody\n"
    (tmp_path / "s.md").write_bytes(short)
    (tmp_path / "l.md").write_bytes(long)
    head = names.read_head(str(tmp_path / "s.md"), len(short))
    assert short.startswith(head) and len(head) <= names.HEAD_BYTES  # whole lines of the first bytes
    assert names.frontmatter_text(head) == b"---\ntitle: S\n---"
    assert names.read_head(str(tmp_path / "l.md"), len(long)) == long
    assert names.read_head(str(tmp_path / "gone.md"), 10) is None


FILES = {
    "Compost.md": "---\ntitle: Compost heap\naliases: [Heap]\ntags: [soil]\n---\n# Compost\n\nSee [[Soil]] #garden\n",
    "Soil.md": "# Soil\n\n## Texture\n\nClay and [[Compost heap|compost]].\n",
    "deep/Notes.md": "---\nrelated:\n  - \"[[Soil]]\"\n---\nplain [[Missing]]\n",
}


def test_names_vault_answers_names_and_the_load_is_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = write_vault(tmp_path / "v", FILES)
    listing = list_pages(str(root), stats=True)
    early = names_vault(str(root), listing, False)
    assert sorted(early.pages) == sorted(listing.paths)
    assert early.pages["Compost.md"].title == "Compost heap" and early.pages["Compost.md"].aliases == ("Heap",)
    assert early.pages["Soil.md"].title == "Soil"  # no frontmatter: its file name
    assert early.resolve("Heap").path == "Compost.md"  # links by name resolve as in the full vault
    assert not early.pages["Soil.md"].headings and early.pages["Soil.md"].body == ""

    off = CacheOptions(enabled=False)
    seen = []
    plain = load_vault(str(root), cache=off, workers=1)
    assert not seen
    monkeypatch.setenv("VAULTLENS_TEST_SLOW_BODIES", "0.001")  # a names pass for a 3-page vault
    handed = load_vault(str(root), cache=off, workers=1, on_names=seen.append)
    assert len(seen) == 1 and sorted(seen[0].pages) == sorted(listing.paths)
    assert vault_state(handed.vault) == vault_state(plain.vault)


def test_a_warm_load_hands_over_no_names_vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = write_vault(tmp_path / "v", FILES)
    options = CacheOptions(enabled=True, location=str(tmp_path / "cache"))
    monkeypatch.setenv("VAULTLENS_TEST_SLOW_BODIES", "0.001")
    seen = []
    load_vault(str(root), cache=options, workers=1, on_names=seen.append).commit()
    assert len(seen) == 1
    load_vault(str(root), cache=options, workers=1, on_names=seen.append)
    assert len(seen) == 1


def test_the_full_pages_share_what_they_hold_alike_with_the_names_vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Both vaults are held until the full one is swapped in: equal names are kept once, not twice.
    root = write_vault(tmp_path / "v", FILES)
    monkeypatch.setenv("VAULTLENS_TEST_SLOW_BODIES", "0.001")
    seen = []
    handed = load_vault(str(root), cache=CacheOptions(enabled=False), workers=1, on_names=seen.append)
    for path in ("Compost.md", "Soil.md", "deep/Notes.md"):
        full, early = handed.vault.fields[path], seen[0].fields[path]
        assert full.title_set is early.title_set and full.path_tokens is early.path_tokens
        assert full.title_tokens is early.title_tokens and full.alias_set is early.alias_set
    names_pass = list_pages(str(root), stats=True)
    assert vault_state(handed.vault) == vault_state(load_vault(str(root), cache=CacheOptions(enabled=False), workers=1).vault)
    assert sorted(seen[0].pages) == sorted(names_pass.paths)
