"""The vault's resolved-link index stays equal to resolving every link afresh, whatever changes.

``Vault`` resolves every link once (memoised by what an answer depends on) and then keeps the
answers current page by page; these sequences build the index first, then add, replace, rename
and remove pages, and compare after every step with ``Vault.resolve`` and a brute-force scan; at the end, the
vault's snapshot (each part's own pieces) read back equals a fresh build.
"""

from __future__ import annotations

import marshal
from unittest.mock import patch

from hypothesis import given, settings
from test_properties import apply_op, ops, parts_state
from vaultkit import brute_backlinks, build_vault, vault_state

from vaultlens.engine import links
from vaultlens.engine.compact import MARSHAL_VERSION
from vaultlens.engine.pathindex import PathIndex
from vaultlens.engine.page import parse_page
from vaultlens.engine.vault import Vault


def check_links(vault: Vault) -> None:
    for path, page in vault.pages.items():
        links = (*page.edges, *page.links)
        assert vault.resolved_links(path) == tuple(vault.resolve_link(link, path) for link in links)
        assert vault.backlinks(path) == [
            (s, link) for s, link in brute_backlinks(vault, path) if vault.resolve_link(link, s).via != "self"
        ]
        assert vault.linking_pages(path) == {s for s, _ in vault.backlinks(path)}
        expected = [(link.kind, r.path) for link, r in vault.outlinks(path) if r.path is not None]
        assert vault.outlink_targets(path) == expected
        for target in {*vault.pages, "nothing.md"}:
            assert vault.link_kinds(path, target) == [kind for kind, p in expected if p == target]


def _stored_copy(vault: Vault) -> Vault:
    """The vault read back from its snapshot, as a warm start reads it (links restored on first read)."""
    snapshot = marshal.loads(marshal.dumps(vault.snapshot(), MARSHAL_VERSION))
    return Vault.from_snapshot([(p, vault.fields[p.path]) for p in vault.pages.values()], snapshot, "vault")


@settings(max_examples=80)
@given(ops)
def test_the_link_index_follows_every_change(sequence):
    vault = Vault("vault")
    vault.resolved_links("nothing yet")  # build it now, so every step below updates it
    files: dict[str, str] = {}
    for step in sequence:
        apply_op(vault, files, *step)
        check_links(vault)
    fresh = build_vault(files)
    assert vault_state(vault) == vault_state(fresh) and parts_state(vault) == parts_state(fresh)
    # What each part writes of itself to a snapshot reads back as the same vault, link index too.
    stored = _stored_copy(vault)
    assert parts_state(stored) == parts_state(fresh)
    check_links(stored)


def test_a_heading_link_to_its_own_page_is_not_a_backlink():
    vault = build_vault({"A.md": "[[#Top]] and [[A]]\n# Top\n"})
    assert [r.via for r in vault.resolved_links("A.md")] == ["self", "stem"]
    assert [s for s, _ in vault.backlinks("A.md")] == ["A.md"]  # only [[A]]


@settings(max_examples=80)
@given(ops, ops)
def test_changes_before_the_stored_links_are_read_reach_them(first, then):
    """A warm start's link index holds every link's resolution as stored, restored when first
    read; the changes made before that (the first edits) are applied on restoring it."""
    files: dict[str, str] = {}
    for op, path, text in first:
        if op == "upsert":
            files[path] = text
        else:
            files.pop(path, None)
    built = build_vault(files)
    built.resolved_links("nothing yet")
    vault = _stored_copy(built)
    assert vault.link_index._links is None  # not restored yet: every change below is applied later
    for step in then:
        apply_op(vault, files, *step)
    assert vault.link_index._links is None
    check_links(vault)
    fresh = build_vault(files)
    assert vault_state(vault) == vault_state(fresh) and parts_state(vault) == parts_state(fresh)


@settings(max_examples=80)
@given(ops, ops)
def test_stored_links_restored_part_by_part_between_changes_equal_a_fresh_build(first, then):
    """The stored links come in parts (the resolutions, ``LINK_PART_ROWS`` a part, then the
    pages' links, ``LINK_PART_PAGES`` pages a part: here 2 and 2) that idle time
    restores one at a time (``Vault.prepare_links``) while pages change; whatever part the
    changes fall between, the restored links equal a fresh build's, and a reader arriving
    midway restores the rest."""
    files: dict[str, str] = {}
    for op, path, text in first:
        if op == "upsert":
            files[path] = text
        else:
            files.pop(path, None)
    built = build_vault(files)
    built.resolved_links("nothing yet")
    with patch.object(links, "LINK_PART_PAGES", 2), patch.object(links, "LINK_PART_ROWS", 2):
        vault = _stored_copy(built)
    parts = len(vault.link_index._parts)
    rows = len({id(r) for path in built.pages for r in built.resolved_links(path)})  # as numbered
    assert parts == -(-rows // 2) + max(1, -(-len(files) // 2))  # the resolutions' parts, then the pages'
    calls = 0
    for i, step in enumerate(then):
        apply_op(vault, files, *step)
        if i % 2 == 0 and calls < parts:
            calls += 1
            assert vault.prepare_links() == (calls < parts)  # True while parts are left
    assert (vault.link_index._links is None) == (calls < parts)
    check_links(vault)  # the first reader: the parts left, then the pages changed since
    assert not vault.prepare_links()
    fresh = build_vault(files)
    assert vault_state(vault) == vault_state(fresh) and parts_state(vault) == parts_state(fresh)


def test_a_damaged_part_of_the_stored_links_is_resolved_again(caplog):
    built = build_vault({"A.md": "[[B]]\n", "B.md": "[[A]] [[C]]\n", "C.md": "text\n"})
    built.resolved_links("nothing yet")
    with patch.object(links, "LINK_PART_PAGES", 1):
        snapshot = marshal.loads(marshal.dumps(built.snapshot(), MARSHAL_VERSION))
    assert snapshot["(links)"] == ("links", 4)  # the resolutions, then a part per page
    snapshot["(links)/2"] = ("value", ("pages", "not a part"))
    vault = Vault.from_snapshot([(p, built.fields[p.path]) for p in built.pages.values()], snapshot, "vault")
    assert vault.prepare_links() and vault.prepare_links()  # the resolutions, A.md's links
    assert not vault.prepare_links()  # B.md's part is damaged: every link resolved from the pages
    assert "damaged" in caplog.text
    check_links(vault)
    assert parts_state(vault) == parts_state(built)


def test_stored_linker_counts_are_used_and_a_damaged_entry_counts_them_again(caplog):
    files = {"A.md": "[[B]] [[C]]", "B.md": "[[C]]", "C.md": "[[C]] [[A]]", "D.md": "no links"}
    vault = build_vault(files)
    expected = {path: vault.linker_count(page) for path, page in vault.pages.items()}
    assert expected == {"A.md": 1, "B.md": 1, "C.md": 2, "D.md": 0}  # C's own link left out
    stored = _stored_copy(vault)
    with patch.object(PathIndex, "peek", side_effect=AssertionError("counted, not read")):
        assert {path: stored.linker_count(page) for path, page in stored.pages.items()} == expected
    snapshot = marshal.loads(marshal.dumps(vault.snapshot(), MARSHAL_VERSION))
    snapshot[links._COUNTS] = ("counts", (b"\x00", (1, 2)))  # one path, two counts
    damaged = Vault.from_snapshot([(p, vault.fields[p.path]) for p in vault.pages.values()], snapshot, "vault")
    assert {path: damaged.linker_count(page) for path, page in damaged.pages.items()} == expected
    assert "linker_counts" in caplog.text


class _Undecoded:
    """A page that must not be read (a warm start's page left as stored)."""

    def __getattr__(self, name):
        raise AssertionError(f"page read for {name}")


def test_stored_title_keys_are_used_and_a_damaged_entry_reads_the_pages(caplog):
    """A warm start orders tied pages by the title keys stored with the index, without reading
    a page; a page changed since gives its own; a damaged entry is logged and every key comes
    from its page."""
    files = {"a.md": "---\ntitle: Zebra Notes\n---\n", "b.md": "---\ntitle: Ärger\n---\n", "c.md": "plain", "d.md": "x"}
    vault = build_vault(files)
    expected = {path: page.title.casefold() for path, page in vault.pages.items()}
    assert expected["a.md"] == "zebra notes" and expected["b.md"] == "ärger"
    stored = _stored_copy(vault)
    kept = dict(stored.pages)
    stored.pages.update((path, _Undecoded()) for path in kept)
    assert {path: stored.title_key(path) for path in kept} == expected
    stored.pages.update(kept)
    stored.upsert(parse_page("c.md", "---\ntitle: Changed Now\n---\n"))
    stored.remove("d.md")
    stored.upsert(parse_page("e.md", "---\ntitle: New Page\n---\n"))
    assert {path: stored.title_key(path) for path in stored.pages} == {
        "a.md": "zebra notes", "b.md": "ärger", "c.md": "changed now", "e.md": "new page"}
    again = _stored_copy(stored)  # written from the stored keys and the changed pages
    assert again.page_store.indexes()["title_keys"] == stored.page_store.indexes()["title_keys"]
    snapshot = marshal.loads(marshal.dumps(vault.snapshot(), MARSHAL_VERSION))
    snapshot["title_keys"] = ("titles", ("one",))  # fewer than the path table
    damaged = Vault.from_snapshot([(p, vault.fields[p.path]) for p in vault.pages.values()], snapshot, "vault")
    assert {path: damaged.title_key(path) for path in damaged.pages} == expected
    assert "title_keys" in caplog.text



def test_stored_link_parts_name_pages_by_their_place_in_the_path_table():
    """The stored parts of the resolved links hold a page's path as its position in the path
    table, never as a string; restored, the links, targets and linkers are the built ones."""
    files = {
        "A.md": "[[B]] [[notes/C]] [[#Top]] [[Missing]] [[pic.png]]\n# Top\n",
        "B.md": "---\nrelated:\n  - \"[[A]]\"\n---\n[[A]] [[C]]",
        "notes/C.md": "[[A]] [[B|the b]] [[Top]]",
    }
    built = build_vault(files)
    built.resolved_links("nothing yet")
    snapshot = marshal.loads(marshal.dumps(built.snapshot(), MARSHAL_VERSION))
    parts = {name: entry for name, entry in snapshot.items() if links.is_link_part(name)}
    assert len(parts) == 2  # the resolutions, the pages
    stored = marshal.dumps(parts, MARSHAL_VERSION)
    assert not any(path.encode() in stored for path in files)
    vault = Vault.from_snapshot([(p, built.fields[p.path]) for p in built.pages.values()], snapshot, "vault")
    index, fresh = vault.link_index, built.link_index
    for path in files:
        assert index.resolved_links(path) == fresh.resolved_links(path)
        assert index.outlink_targets(path) == fresh.outlink_targets(path)
        assert index.linking_pages(path) == fresh.linking_pages(path)
        assert index.link_kinds(path, "A.md") == fresh.link_kinds(path, "A.md")
    assert index.linking_pages("A.md") == {"B.md", "notes/C.md"}
