"""The page graph: outlinks, backlinks, typed edge targets, and one-page-at-a-time updates that
leave the vault exactly as a fresh build of the same pages would.
"""

from __future__ import annotations

import pytest
from vaultkit import brute_backlinks, build_vault, vault_state

from vaultlens.engine.page import parse_page
from vaultlens.engine.vault import Vault

FILES = {
    "Hub.md": (
        "---\n"
        "title: Hub Page\n"
        "aliases: [Centre]\n"
        "tags: [topic/graph]\n"
        "related: [[Leaf A]]\n"
        "sources:\n"
        '  - "[[Paper]]"\n'
        "depends_on: [Base, Leaf B]\n"
        "---\n"
        "Links to [[Leaf A]], [[leaf b|B]] and [[Missing]].\n"
    ),
    "leaves/Leaf A.md": "Back to [[Hub]] and [[Hub Page#Intro]] and [[Centre]].\n",
    "leaves/Leaf B.md": "---\nrelated: [[Hub Page]]\n---\nSee [[../Hub.md]] and [x](../Hub.md).\n",
    "refs/Paper.md": "---\ntitle: The Paper\n---\nCites nothing.\n",
    "Base.md": "[[Base]] links to itself.\n",
}


@pytest.fixture
def vault():
    return build_vault(FILES)


def test_outlinks_list_typed_edges_then_body_links(vault):
    got = [(link.kind, link.target, r.path, r.via) for link, r in vault.outlinks("Hub.md")]
    assert got == [
        ("sources", "Paper", "refs/Paper.md", "stem"),
        ("related", "Leaf A", "leaves/Leaf A.md", "stem"),
        ("depends_on", "Base", "Base.md", "stem"),
        ("depends_on", "Leaf B", "leaves/Leaf B.md", "stem"),
        ("wiki", "Leaf A", "leaves/Leaf A.md", "stem"),
        ("wiki", "leaf b", "leaves/Leaf B.md", "stem"),
        ("wiki", "Missing", None, None),
    ]
    assert vault.outlinks("nope.md") == []


def test_backlinks_by_stem_title_alias_path_and_typed_edges(vault):
    got = [(source, link.kind, link.raw) for source, link in vault.backlinks("Hub.md")]
    assert got == [
        ("leaves/Leaf A.md", "wiki", "[[Hub]]"),
        ("leaves/Leaf A.md", "wiki", "[[Hub Page#Intro]]"),
        ("leaves/Leaf A.md", "wiki", "[[Centre]]"),
        ("leaves/Leaf B.md", "related", "Hub Page"),  # unquoted [[…]] is a YAML list
        ("leaves/Leaf B.md", "wiki", "[[../Hub.md]]"),
        ("leaves/Leaf B.md", "md", "[x](../Hub.md)"),
    ]
    assert [s for s, _ in vault.backlinks("Base.md")] == ["Base.md", "Hub.md"]
    assert vault.backlinks("refs/Paper.md") == [("Hub.md", vault.pages["Hub.md"].edges[0])]
    assert vault.backlinks("nope.md") == []


def test_backlinks_equal_resolving_every_link(vault):
    for path in vault.pages:
        assert vault.backlinks(path) == brute_backlinks(vault, path), path


def test_edge_targets_per_predicate_sorted_by_title(vault):
    assert vault.edge_targets("Hub.md", "sources") == ["refs/Paper.md"]
    assert vault.edge_targets("Hub.md", "related") == ["leaves/Leaf A.md"]
    assert vault.edge_targets("Hub.md", "depends_on") == ["Base.md", "leaves/Leaf B.md"]
    assert vault.edge_targets("leaves/Leaf B.md", "related") == ["Hub.md"]
    assert vault.edge_targets("refs/Paper.md", "related") == []


def test_edge_targets_are_unique_and_ordered_by_title_not_path():
    vault = build_vault(
        {
            "S.md": "---\nrelated: [zeta, Alpha, alpha, Missing]\n---\n",
            "a/zeta.md": "---\ntitle: Aardvark\n---\n",
            "b/Alpha.md": "",
        }
    )
    assert vault.edge_targets("S.md", "related") == ["a/zeta.md", "b/Alpha.md"]


# --- incremental updates ---------------------------------------------------------------------


def run_ops(ops: list[tuple]) -> tuple[Vault, dict[str, str]]:
    """Apply ``ops`` to an empty vault one page at a time; return it and the final files.

    ``("upsert", path, text)``, ``("remove", path)``, ``("rename", old, new)``: a rename is what
    an editor reports, the old path removed and the same text upserted at the new one.
    """
    vault = Vault("vault")
    files: dict[str, str] = {}
    for op in ops:
        if op[0] == "upsert":
            vault.upsert(parse_page(op[1], op[2]))
            files[op[1]] = op[2]
        elif op[0] == "remove":
            vault.remove(op[1])
            files.pop(op[1], None)
        else:
            text = files.pop(op[1])
            vault.remove(op[1])
            vault.upsert(parse_page(op[2], text))
            files[op[2]] = text
    return vault, files


OPS = [
    ("upsert", "A.md", "---\ntitle: Alpha\naliases: [First]\ntags: [x/y]\n---\n[[B]] [[Gamma]] [[First]] #inline"),
    ("upsert", "B.md", "---\nrelated: [[A]]\n---\nback to [[Alpha]] and [[C]]"),
    ("upsert", "dir/C.md", "---\ntitle: Gamma\n---\n[[A]] words words"),
    ("upsert", "A.md", "---\ntitle: Alpha Two\ntags: [x/z]\n---\n[[dir/C]] [[Nowhere]]"),  # replace A
    ("rename", "dir/C.md", "dir/D.md"),  # links by stem "C" break, links by title "Gamma" keep working
    ("upsert", "C.md", "a new C at the root"),  # [[C]] now resolves again, to another page
    ("remove", "B.md"),
    ("remove", "B.md"),  # removing twice is a no-op
    ("upsert", "Dir/d.md", "same path as dir/D.md but for case"),
    ("remove", "Dir/d.md"),  # dir/D.md keeps its path key
    ("upsert", "Dir/d.md", "back again"),
    ("remove", "dir/D.md"),  # and now Dir/d.md keeps it
    ("upsert", "B.md", "---\nsources: [Alpha Two, Gamma]\n---\nB is back [[C]]"),
    ("remove", "never-existed.md"),
]


def test_incremental_updates_equal_a_fresh_build_after_every_step():
    for n in range(1, len(OPS) + 1):
        vault, files = run_ops(OPS[:n])
        fresh = build_vault(files)
        assert vault_state(vault) == vault_state(fresh), f"after {OPS[n - 1]}"
        for path in vault.pages:
            assert vault.backlinks(path) == brute_backlinks(vault, path)


def test_removing_every_page_empties_every_index():
    vault, _ = run_ops(OPS)
    for path in list(vault.pages):
        vault.remove(path)
    assert vault_state(vault) == vault_state(Vault("vault"))


def test_a_link_to_a_page_that_appears_later_becomes_resolved():
    vault = build_vault({"Src.md": "[[Later]] and [[later note|x]] and [[Titled Later]]"})
    assert [r.path for _, r in vault.outlinks("Src.md")] == [None, None, None]
    vault.upsert(parse_page("notes/Later.md", "I arrived"))
    vault.upsert(parse_page("later note.md", "---\ntitle: Titled Later\n---\n"))
    assert [r.path for _, r in vault.outlinks("Src.md")] == ["notes/Later.md", "later note.md", "later note.md"]
    assert [s for s, _ in vault.backlinks("notes/Later.md")] == ["Src.md"]
    assert [s for s, _ in vault.backlinks("later note.md")] == ["Src.md", "Src.md"]


def test_a_link_to_a_removed_page_becomes_unresolved():
    vault = build_vault({"Src.md": "[[Gone]]", "Gone.md": "", "Keep.md": "[[Src]]"})
    assert vault.outlinks("Src.md")[0][1].path == "Gone.md"
    vault.remove("Gone.md")
    assert vault.outlinks("Src.md")[0][1].path is None
    assert vault.backlinks("Gone.md") == []
    assert [s for s, _ in vault.backlinks("Src.md")] == ["Keep.md"]


def test_a_renamed_page_keeps_links_by_title_and_loses_links_by_old_name():
    vault = build_vault({"Src.md": "[[old-name]] [[Nice Title]]", "old-name.md": "---\ntitle: Nice Title\n---\n"})
    text = "---\ntitle: Nice Title\n---\n"
    vault.remove("old-name.md")
    vault.upsert(parse_page("new-name.md", text))
    assert [(l.target, r.path) for l, r in vault.outlinks("Src.md")] == [("old-name", None), ("Nice Title", "new-name.md")]


def test_ambiguity_is_resolved_again_when_the_shorter_page_goes():
    vault = build_vault({"Src.md": "[[Same]]", "a/Same.md": "", "long/folder/same.md": ""})
    assert vault.outlinks("Src.md")[0][1].candidates == ("a/Same.md", "long/folder/same.md")
    vault.remove("a/Same.md")
    r = vault.outlinks("Src.md")[0][1]
    assert (r.path, r.candidates) == ("long/folder/same.md", ("long/folder/same.md",))


def test_upsert_replaces_a_page_and_its_tokens():
    vault = build_vault({"P.md": "apple banana #fruit"})
    vault.upsert(parse_page("P.md", "cherry"))
    assert "apple" not in vault.postings and "cherry" in vault.postings
    assert vault.tag_pages == {}
    assert vault_state(vault) == vault_state(build_vault({"P.md": "cherry"}))
