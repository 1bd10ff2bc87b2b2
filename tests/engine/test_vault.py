"""``Vault``'s change counters: what callers may remember answers by."""

from __future__ import annotations

from vaultlens.engine.page import parse_page
from vaultlens.engine.vault import Vault


def test_the_graph_generation_moves_with_names_tags_and_links_not_with_prose():
    vault = Vault("/v")
    vault.upsert(parse_page("a.md", "# A\n\nSee [[B]].\n"))
    vault.upsert(parse_page("b.md", "# B\n\nText.\n"))
    graph = vault.graph_generation
    steps = [
        ("a.md", "# A\n\nMore prose first.\n\nSee [[B]].\n", False),  # the link moved, same target
        ("b.md", "# B\n\nOther text.\n", False),
        ("a.md", "# A\n\nMore prose first.\n\nSee [[B]] and [[C]].\n", True),  # a new target
        ("b.md", "# B\n\nOther text. #tagged\n", True),  # a new tag
        ("b.md", "---\naliases: [Bee]\n---\n# B\n\nOther text. #tagged\n", True),  # a new name
        ("c.md", "# C\n", True),  # a new page
    ]
    for path, text, moves in steps:
        generation = vault.generation
        vault.upsert(parse_page(path, text))
        assert vault.generation == generation + 1
        assert (vault.graph_generation != graph) is moves, (path, text)
        graph = vault.graph_generation
    vault.remove("c.md")
    assert vault.graph_generation != graph and vault.graph_generation == vault.generation
