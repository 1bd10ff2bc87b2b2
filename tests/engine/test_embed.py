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


# --- the background build of long-lived processes ---------------------------------------------


def test_background_vectors_are_handed_out_once_built_and_follow_the_vault(tmp_path):
    vault = build_vault(FILES)
    made = []

    def make(v):
        made.append(v.root)
        return vaultlens.engine.embed.VectorIndex("vault", encode=letters, directory=str(tmp_path))

    background = vaultlens.engine.embed.BackgroundVectors(make_index=make)
    assert background.reason is None
    background.kick(vault)
    assert background.wait(30)
    index = background.arm(vault)
    assert index is not None and background.error is None
    assert {m.via for h in hybrid(vault, "compost", index) for m in h.matched} == {"lexical", "vector"}
    # a changed vault is re-embedded in the background, with the same index (the model loads once)
    vault.upsert(build_vault({"Moles.md": "Moles dig tunnels.\n"}).pages["Moles.md"])
    assert background.arm(vault) is index  # the old vectors answer meanwhile
    assert background.wait(30)
    assert "Moles.md" in index.keys and len(made) == 1


def test_background_vectors_without_the_extra_do_nothing(monkeypatch):
    monkeypatch.setattr(vaultlens.engine.embed, "unavailable", lambda: "no extra here")
    background = vaultlens.engine.embed.BackgroundVectors()
    background.kick(build_vault(FILES))
    assert background.reason == "no extra here"
    assert background.arm() is None and background.wait(1)


def test_background_vectors_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("VAULTLENS_VECTORS", "off")
    background = vaultlens.engine.embed.BackgroundVectors()
    assert background.reason is not None
    background.kick(build_vault(FILES))
    assert background.arm() is None


def test_safetensors_are_read_by_name_shape_and_type(tmp_path):
    import json
    import struct

    from vaultlens.engine.minilm import read_safetensors

    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([7, 8], dtype=np.int64)
    header = {
        "__metadata__": {"format": "pt"},
        "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
        "b": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]},
    }
    raw = json.dumps(header).encode()
    path = tmp_path / "t.safetensors"
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + a.tobytes() + b.tobytes())
    tensors = read_safetensors(str(path))
    assert sorted(tensors) == ["a", "b"]
    assert (tensors["a"] == a).all() and (tensors["b"] == b).all()


def test_gelu_uses_an_erf_within_its_stated_error():
    import math

    from vaultlens.engine.minilm import _erf

    xs = np.linspace(-4, 4, 801, dtype=np.float32)
    # 1.5e-7 in exact arithmetic (A&S 7.1.26), plus float32 rounding
    assert max(abs(float(e) - math.erf(float(x))) for x, e in zip(xs, _erf(xs))) < 5e-7


@pytest.mark.skipif(vaultlens.engine.embed.unavailable() is not None, reason="the embeddings extra is not installed")
def test_the_numpy_encoder_batches_by_length_without_changing_a_vector():
    from vaultlens.engine.minilm import MiniLM

    model = MiniLM(vaultlens.engine.embed.model_folder())
    texts = ["compost", "how do I feed the soil with compost tea", "worms"]
    together = model.encode(texts, batch_tokens=64)
    alone = np.stack([model.encode([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-5)
    unit = together / np.linalg.norm(together, axis=1, keepdims=True)
    assert unit[0] @ unit[2] < unit[0] @ unit[1]  # compost is nearer the compost question than worms
