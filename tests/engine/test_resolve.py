"""Link resolution as Obsidian does it: path, file name, title, then alias (flagged); ambiguity,
unresolved links, links that climb out of the vault, attachments; Dendron link order detection.
"""

from __future__ import annotations

import pytest
from vaultkit import build_vault, write_vault

from vaultlens.engine.page import parse_page
from vaultlens.engine.scan import detect_label_first, list_pages, load_pages, load_vault, open_vault
from vaultlens.engine.vault import Vault

VAULT = {
    "Top.md": "top",
    "Deep.md": "root deep",
    "notes/graph-rag.md": "---\ntitle: Graph RAG\n---\n",
    "notes/sub/deep.md": "deep in notes",
    "notes/sub/Sibling.md": "sibling",
    "other/deep.md": "other deep",
    "a/b/Note.md": "x",
    "a/c/note.md": "y",
    "zz/Alias Holder.md": "---\naliases: [Nick, Deep]\n---\n",
    "titles/t1.md": "---\ntitle: Shared Title\n---\n",
    "titles/t2.md": "---\ntitle: shared title\n---\n",
    "etc/passwd.md": "inside the vault",
    "dendron.topic.lookup.md": "dendron note",
    "v1.2 notes.md": "dotted name",
    "Some Page.md": "spaced name",
    "notes/Some Page.md": "spaced name in notes",
}


@pytest.fixture(scope="module")
def vault():
    return build_vault(VAULT)


# (target, linking page, kind) -> (path, via, candidates)
CASES = [
    # by vault-relative path, with or without .md, any case
    ("notes/sub/deep", "Top.md", "wiki", ("notes/sub/deep.md", "path", ("notes/sub/deep.md",))),
    ("notes/sub/deep.md", "Top.md", "wiki", ("notes/sub/deep.md", "path", ("notes/sub/deep.md",))),
    ("NOTES/Sub/DEEP", "Top.md", "wiki", ("notes/sub/deep.md", "path", ("notes/sub/deep.md",))),
    ("/notes/sub/deep", "Top.md", "wiki", ("notes/sub/deep.md", "path", ("notes/sub/deep.md",))),
    # ./ and ../ relative to the linking page
    ("./deep", "notes/sub/Sibling.md", "wiki", ("notes/sub/deep.md", "path", ("notes/sub/deep.md",))),
    ("../graph-rag", "notes/sub/Sibling.md", "wiki", ("notes/graph-rag.md", "path", ("notes/graph-rag.md",))),
    ("../../other/deep.md", "notes/sub/Sibling.md", "wiki", ("other/deep.md", "path", ("other/deep.md",))),
    ("./missing", "notes/sub/Sibling.md", "wiki", (None, None, ())),
    # a partial path matches as a suffix of whole path segments
    ("sub/deep", "Top.md", "wiki", ("notes/sub/deep.md", "path", ("notes/sub/deep.md",))),
    ("b/note", "Top.md", "wiki", ("a/b/Note.md", "path", ("a/b/Note.md",))),
    ("ub/deep", "Top.md", "wiki", (None, None, ())),
    # by file name, case-insensitively; ambiguity: shortest path, then lexicographic
    ("deep", "Top.md", "wiki", ("Deep.md", "stem", ("Deep.md", "other/deep.md", "notes/sub/deep.md"))),
    ("DEEP", "notes/sub/Sibling.md", "wiki", ("Deep.md", "stem", ("Deep.md", "other/deep.md", "notes/sub/deep.md"))),
    ("note", "Top.md", "wiki", ("a/b/Note.md", "stem", ("a/b/Note.md", "a/c/note.md"))),
    ("v1.2 notes", "Top.md", "wiki", ("v1.2 notes.md", "stem", ("v1.2 notes.md",))),
    ("dendron.topic.lookup", "Top.md", "wiki", ("dendron.topic.lookup.md", "stem", ("dendron.topic.lookup.md",))),
    # by frontmatter title, case-insensitively (slug files)
    ("Graph RAG", "Top.md", "wiki", ("notes/graph-rag.md", "title", ("notes/graph-rag.md",))),
    ("graph rag", "Top.md", "wiki", ("notes/graph-rag.md", "title", ("notes/graph-rag.md",))),
    ("Shared Title", "Top.md", "wiki", ("titles/t1.md", "title", ("titles/t1.md", "titles/t2.md"))),
    # by alias, only as a last resort, and said so
    ("nick", "Top.md", "wiki", ("zz/Alias Holder.md", "alias", ("zz/Alias Holder.md",))),
    # unresolved links stay unresolved
    ("Nowhere", "Top.md", "wiki", (None, None, ())),
    # Markdown links: relative to the linking page's folder first, then the vault root
    ("Some Page.md", "notes/graph-rag.md", "md", ("notes/Some Page.md", "path", ("notes/Some Page.md",))),
    ("Some Page.md", "Top.md", "md", ("Some Page.md", "path", ("Some Page.md",))),
    ("../Deep.md", "notes/graph-rag.md", "md", ("Deep.md", "path", ("Deep.md",))),
    ("Sibling.md", "notes/graph-rag.md", "md", ("notes/sub/Sibling.md", "stem", ("notes/sub/Sibling.md",))),
]


@pytest.mark.parametrize("target, source, kind, expected", CASES, ids=[f"{c[0]}<-{c[1]}" for c in CASES])
def test_resolve(vault, target, source, kind, expected):
    r = vault.resolve(target, source, kind)
    assert (r.path, r.via, r.candidates) == expected
    assert r.ambiguous == (len(expected[2]) > 1)
    assert not r.attachment


def test_stem_beats_title_and_title_beats_alias():
    vault = build_vault(
        {
            "x/Target.md": "---\ntitle: Something Else\n---\n",
            "y/slug.md": "---\ntitle: Target\naliases: [Other Name]\n---\n",
            "z/third.md": "---\ntitle: Other Name\n---\n",
        }
    )
    assert (vault.resolve("target").path, vault.resolve("target").via) == ("x/Target.md", "stem")
    assert (vault.resolve("other name").path, vault.resolve("other name").via) == ("z/third.md", "title")


def test_alias_resolution_records_every_candidate():
    vault = build_vault({"b/Long Name.md": "---\naliases: [Short]\n---\n", "a/Other.md": "---\naliases: [short]\n---\n"})
    r = vault.resolve("Short")
    assert (r.path, r.via, r.candidates) == ("a/Other.md", "alias", ("a/Other.md", "b/Long Name.md"))


@pytest.mark.parametrize(
    "target, source, kind",
    [
        ("../../etc/passwd", "Top.md", "wiki"),
        ("../etc/passwd", "Top.md", "wiki"),
        ("../../../../etc/passwd", "notes/sub/Sibling.md", "wiki"),
        ("..", "Top.md", "wiki"),
        ("../", "notes/graph-rag.md", "wiki"),
    ],
)
def test_links_that_climb_out_of_the_vault_never_resolve(vault, target, source, kind):
    r = vault.resolve(target, source, kind)
    assert r.path is None and r.via is None and r.candidates == ()


@pytest.mark.parametrize(
    "target, source", [("../../etc/passwd.md", "Top.md"), ("../../../etc/passwd.md", "notes/graph-rag.md")]
)
def test_markdown_links_that_climb_out_never_resolve_by_path(vault, target, source):
    # A Markdown link falls back to the file name, as [x](Sibling.md) from another folder does;
    # what it reaches is a page of the vault, never the path outside it.
    r = vault.resolve(target, source, "md")
    assert r.via != "path"
    assert r.path is None or r.path in vault.pages


def test_a_climbing_link_that_stays_inside_resolves(vault):
    # notes/sub/ -> ../../ is the vault root, so etc/passwd.md here is a page of the vault.
    assert vault.resolve("../../etc/passwd", "notes/sub/Sibling.md").path == "etc/passwd.md"


@pytest.mark.parametrize("target", ["pic.png", "folder/diagram.PNG", "paper.pdf", "clip.mp4", "board.canvas"])
def test_attachments_are_flagged_not_pages(target):
    vault = build_vault({"pic.png.md": "a page oddly named", "Top.md": ""})
    r = vault.resolve(target, "Top.md")
    assert (r.path, r.attachment) == (None, True)


def test_empty_target_is_the_page_itself(vault):
    r = vault.resolve("", "notes/graph-rag.md")
    assert (r.path, r.via) == ("notes/graph-rag.md", "self")


def test_page_links_resolve_through_their_target_part():
    vault = build_vault(
        {
            "Src.md": "[[Dest#Part]] [[Dest#^blk]] ![[Dest]] [[dest|shown]] [[Missing]] [d](Dest.md#part) ![[img.png]]",
            "Dest.md": "# Part\ntext ^blk",
        }
    )
    got = [(link.raw, r.path, r.via, r.attachment) for link, r in vault.outlinks("Src.md")]
    assert got == [
        ("[[Dest#Part]]", "Dest.md", "stem", False),
        ("[[Dest#^blk]]", "Dest.md", "stem", False),
        ("![[Dest]]", "Dest.md", "stem", False),
        ("[[dest|shown]]", "Dest.md", "stem", False),
        ("[[Missing]]", None, None, False),
        ("[d](Dest.md#part)", "Dest.md", "path", False),
        ("![[img.png]]", None, None, True),
    ]


def test_resolution_of_paths_differing_only_in_case_is_exact_then_deterministic():
    files = {"d/Mixed.md": "upper", "d/mixed.md": "lower"}
    forward = build_vault(files)
    backward = build_vault(files, order=list(reversed(files)))
    for vault in (forward, backward):
        assert vault.resolve("d/Mixed").path == "d/Mixed.md"
        assert vault.resolve("d/mixed").path == "d/mixed.md"
        assert vault.resolve("d/MIXED").path == "d/Mixed.md"
    # Removing one of them hands its path key to the other.
    forward.remove("d/Mixed.md")
    assert forward.resolve("d/MIXED").path == "d/mixed.md"
    assert forward.by_path == build_vault({"d/mixed.md": "lower"}).by_path


def test_dendron_cross_vault_prefix_is_dropped():
    vault = build_vault(
        {"a.b.md": "", "Src.md": "[[Label|dendron://my-vault/a.b]]"},
        label_first=True,
    )
    (link, r), = vault.outlinks("Src.md")
    assert (link.target, r.path) == ("a.b", "a.b.md")


# --- Dendron link order ----------------------------------------------------------------------

DENDRON = {
    "root.md": "# Root\nSee [[Lookup|dendron.topic.lookup]] and [[Commands|dendron.ref.commands]].\n",
    "dendron.topic.lookup.md": "Go to [[The Root|root]] or [[Cmds|dendron.ref.commands]].\n",
    "dendron.ref.commands.md": "Back to [[How lookup works|dendron.topic.lookup]].\n",
    "dendron.topic.md": "[[dendron.topic.lookup]] has no pipe.\n",
}

OBSIDIAN = {
    "Root.md": "See [[Lookup|the lookup page]] and [[Commands|all commands]] and [[Topic|topics]].\n",
    "Lookup.md": "Go to [[Root|home]].\n",
    "Commands.md": "Back to [[Lookup|looking up]].\n",
    "Topic.md": "",
}


def read_target_first(root) -> Vault:
    """A vault read from disk the Obsidian way, as open_vault reads it before detecting."""
    listing = list_pages(str(root))
    return Vault.from_pages(load_pages(str(root), listing.paths), str(root))


def test_detect_label_first_on_a_dendron_vault(tmp_path):
    vault = read_target_first(write_vault(tmp_path, DENDRON))
    assert [r.path for _, r in vault.outlinks("root.md")] == [None, None]  # read the wrong way round
    assert detect_label_first(vault) is True


def test_detect_label_first_on_an_obsidian_vault(tmp_path):
    assert detect_label_first(read_target_first(write_vault(tmp_path, OBSIDIAN))) is False


def test_labels_that_repeat_titles_do_not_flip_the_order():
    # Both sides resolve on every link: that says nothing about the order.
    files = {"A.md": "[[B|C]] [[C|A]] [[A|B]]", "B.md": "", "C.md": ""}
    assert detect_label_first(build_vault(files)) is False


def test_open_vault_reads_a_dendron_vault_label_first(tmp_path):
    root = write_vault(tmp_path / "dendron", DENDRON)
    vault, listing = open_vault(str(root))
    assert vault.label_first is True
    assert listing.paths == tuple(sorted(DENDRON))
    got = {(link.target, r.path) for link, r in vault.outlinks("root.md")}
    assert got == {("dendron.topic.lookup", "dendron.topic.lookup.md"), ("dendron.ref.commands", "dendron.ref.commands.md")}


def test_open_vault_keeps_obsidian_order_and_honours_an_explicit_setting(tmp_path):
    root = write_vault(tmp_path / "obsidian", OBSIDIAN)
    assert open_vault(str(root))[0].label_first is False
    forced, _ = open_vault(str(root), link_order="label-first")
    assert forced.label_first is True
    assert [link.target for link in forced.pages["Lookup.md"].links] == ["home"]
    dendron = write_vault(tmp_path / "dendron", DENDRON)
    assert open_vault(str(dendron), link_order="target-first")[0].label_first is False


def test_the_memoised_resolution_follows_a_rename_before_the_link_index_is_built():
    vault = build_vault({"A.md": "[[Old]]", "Old.md": "x"})
    assert vault.resolve_memoised("Old", "A.md").path == "Old.md"  # detect_label_first's way
    vault.remove("Old.md")
    vault.upsert(parse_page("New.md", "---\naliases: [Old]\n---\n"))
    assert vault.resolve_memoised("Old", "A.md") == vault.resolve("Old", "A.md")
    assert [r.path for r in vault.resolved_links("A.md")] == ["New.md"]


def test_the_link_order_found_does_not_depend_on_how_the_vault_was_parsed(tmp_path):
    # detect_label_first looks at the links as written: a vault parsed label-first (as a stored
    # index holds it) gets the answer a target-first parse gets, both ways.
    for files, expected in ((DENDRON, True), (OBSIDIAN, False)):
        root = write_vault(tmp_path / str(expected), files)
        listing = list_pages(str(root))
        for label_first in (False, True):
            pages = load_pages(str(root), listing.paths, label_first=label_first)
            vault = Vault.from_pages(pages, str(root), label_first=label_first)
            assert detect_label_first(vault) is expected, (expected, label_first)


def test_a_stored_index_from_a_smaller_vault_does_not_fix_the_link_order(tmp_path, monkeypatch):
    # A Dendron vault indexed while it held few pages, then grown: the order found on the grown
    # vault is the one a fresh load finds, whatever the stored index said.
    monkeypatch.setenv("VAULTLENS_CACHE_DIR", str(tmp_path / "cache"))
    root = write_vault(tmp_path / "vault", dict(list(DENDRON.items())[:3]))
    first = load_vault(str(root))
    assert first.vault.label_first is True
    first.commit()
    write_vault(root, DENDRON)  # one page more: the stored pages are read as they were stored
    grown = load_vault(str(root))
    assert grown.vault.label_first is True
    assert open_vault(str(root))[0].label_first is True
