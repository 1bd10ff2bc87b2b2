"""The vault's resolved-link index stays equal to resolving every link afresh, whatever changes.

``Vault`` resolves every link once (memoised by what an answer depends on) and then keeps the
answers current page by page; these sequences build the index first, then add, replace, rename
and remove pages, and compare after every step with ``Vault.resolve`` and a brute-force scan; at the end, the
vault's snapshot (each part's own pieces) read back equals a fresh build.
"""

from __future__ import annotations

import marshal

from hypothesis import given, settings
from test_properties import apply_op, ops, parts_state
from vaultkit import brute_backlinks, build_vault, vault_state

from vaultlens.engine.compact import MARSHAL_VERSION
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
