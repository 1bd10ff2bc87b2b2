"""vaultlens.engine.annotate: semantic tokens (wikilinks with how they resolve, tags, block ids)
and inlay hints (heading backlink counts, titles after slug links), in UTF-16 columns."""

from __future__ import annotations

from vaultkit import build_vault

from vaultlens.engine.annotate import TOKEN_MODIFIERS, TOKEN_TYPES, inlay_hints, semantic_tokens

FILES = {
    "Garden.md": "# Garden\n\n## Soil 🙂 care\n\nSee [[Compost]], [[Nowhere]], [[C]], [[Twin]] and ![[2023-01-05-xyz]] #tag/sub ^blk1\n"
                 "`[[Not a link]]` and [[Compost|#not-a-tag]]\n",
    "Compost.md": "---\naliases: [C]\n---\n# Compost\n\n[[Garden#Soil 🙂 care]], [[Garden#soil 🙂 care|x]] and [[Garden]].\n",
    "Other.md": "[[Garden#Soil 🙂 care]] [[Garden#Nowhere]] [[Compost Notes]] [[compost]]\n",
    "a/Twin.md": "", "b/Twin.md": "",
    "2023-01-05-xyz.md": "---\ntitle: A day\n---\nbody\n",
    "Compost Notes.md": "---\ntitle: Heap\n---\n",
}


def test_tokens_mark_how_each_link_resolves_in_utf16_columns():
    vault = build_vault(FILES)
    got = [(t.span.start_line, t.span.start_char, t.span.end_char, t.type, t.modifiers) for t in semantic_tokens(vault, "Garden.md")]
    assert got == [
        (4, 4, 15, "wikilink", ()),
        (4, 17, 28, "wikilink", ("unresolved",)),
        (4, 30, 35, "wikilink", ("aliasOnly",)),
        (4, 37, 45, "wikilink", ("ambiguous",)),
        (4, 50, 69, "wikilink", ("embed",)),
        (4, 70, 78, "tag", ()),
        (4, 79, 84, "blockId", ()),
        (5, 21, 43, "wikilink", ()),  # a tag-looking label inside a link is the link's
    ]
    assert set(TOKEN_TYPES) == {"wikilink", "tag", "blockId"} and "unresolved" in TOKEN_MODIFIERS
    assert semantic_tokens(vault, "Garden.md") == semantic_tokens(build_vault(dict(reversed(FILES.items()))), "Garden.md")


def test_inlay_hints_count_heading_backlinks_and_name_slug_links():
    vault = build_vault(FILES)
    hints = inlay_hints(vault, "Garden.md")
    assert [(h.line, h.char, h.label, h.kind) for h in hints] == [
        (2, 15, "3 backlinks", "backlinks"),  # two pages, three links; [[Garden]] names no heading
        (4, 69, "A day", "title"),  # ![[2023-01-05-xyz]]; [[Compost]] reads as its title already
    ]
    assert "Compost.md, Other.md" in hints[0].tooltip
    assert inlay_hints(vault, "Garden.md", 3, 10, backlinks=True) == hints[1:]  # a range of lines
    assert [h.label for h in inlay_hints(vault, "Other.md", titles="all")] == ["Heap"]  # [[Compost Notes]] -> Heap
    assert inlay_hints(vault, "Other.md", titles="slugs") == ()  # a name with spaces is no slug
    assert inlay_hints(vault, "Garden.md", backlinks=False, titles="off") == ()
