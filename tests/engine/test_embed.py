"""The vector arm of ``--rank hybrid`` (``engine/embed.py``) with a stand-in encoder.

A deterministic bag-of-letters encoder takes the sentence model's place, so these tests need
numpy (the embeddings extra's dependency) but never the model; skipped without numpy. One test
runs the packaged model itself when the extra is installed.
"""

from __future__ import annotations

import pytest
from vaultkit import build_vault

import vaultlens.engine.embed
from vaultlens.engine.hybrid import hit_via
from vaultlens.engine.query import parse_query
from vaultlens.engine.search import search

np = pytest.importorskip("numpy")

FILES = {
    "Compost.md": "---\ntags: [garden]\n---\n# Compost\nCompost feeds the soil. Compost tea is a liquid.\n",
    "garden/Soil.md": "---\naliases: [Dirt]\n---\n## Feeding the soil\nAdd compost.\n",
    "notes/Tea.md": "---\ntitle: Compost Tea\n---\nSteep it. [[Compost]]\n",
    "Worms.md": "Worms eat scraps and make castings for the soil.\n",
}


def hybrid(vault, text: str, vectors=None, **options):
    options.setdefault("limit", 0)
    return search(vault, parse_query(text, rank="hybrid", **options), vectors)


def letters(texts: list[str]):
    """A deterministic stand-in for the sentence model: letter counts (a..z) per text."""
    out = np.zeros((len(texts), 26), dtype=np.float32)
    for i, text in enumerate(texts):
        for ch in text.lower():
            if "a" <= ch <= "z":
                out[i, ord(ch) - 97] += 1
    return out


def test_vector_arm_joins_the_fusion_and_says_so(tmp_path):
    vault = build_vault(FILES)
    index = vaultlens.engine.embed.VectorIndex("vault", encode=letters, directory=str(tmp_path))
    assert index.update(vault) > 0
    hits = hybrid(vault, "compost", index)
    vias = {m.via for h in hits for m in h.matched}
    assert vias == {"lexical", "vector"}
    assert any(m.term == "vector" for m in hits[0].matched)
    assert hit_via(hits[0].matched) == hits[0].via == "lexical+vector"


def test_vector_cache_is_reused_and_only_changed_pages_are_embedded(tmp_path):
    vault = build_vault(FILES)
    first = vaultlens.engine.embed.VectorIndex("vault", encode=letters, directory=str(tmp_path))
    embedded = first.update(vault)
    again = vaultlens.engine.embed.VectorIndex("vault", encode=letters, directory=str(tmp_path))
    assert again.update(vault) == 0
    changed = build_vault({**FILES, "Worms.md": "Worms, rewritten.\n"})
    assert 0 < again.update(changed) < embedded
    assert again.rank(changed, parse_query("worms"), 10)


def test_vector_arm_keeps_to_the_filters(tmp_path):
    vault = build_vault(FILES)
    index = vaultlens.engine.embed.VectorIndex("vault", encode=letters, directory=str(tmp_path))
    index.update(vault)
    found = index.rank(vault, parse_query("compost soil", folder="garden"), 10)
    assert found and all(p.startswith("garden/") for p in found)




def test_page_texts_are_the_page_and_each_section():
    page = build_vault({"p.md": "---\ntitle: Pods\n---\nintro\n## Export\nsends notes\n## Import\nreads\n"}).pages["p.md"]
    assert vaultlens.engine.embed.page_texts(page) == ["Pods\nintro", "Pods: Export\nsends notes", "Pods: Import\nreads"]


@pytest.mark.skipif(vaultlens.engine.embed.unavailable() is not None, reason="the embeddings extra is not installed")
def test_the_packaged_model_embeds_offline(tmp_path):
    vault = build_vault(FILES)
    index = vaultlens.engine.embed.VectorIndex("vault", directory=str(tmp_path))
    assert index.update(vault) > 0
    assert index.rank(vault, parse_query("earthworms"), 1) == ["Worms.md"]
