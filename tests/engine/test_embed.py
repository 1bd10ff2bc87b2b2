"""The vector arm of ``--rank hybrid`` (``engine/embed.py``) with a stand-in encoder.

A deterministic bag-of-letters encoder takes the sentence model's place, so these tests need
numpy (the embeddings extra's dependency) but never the model; skipped without numpy. One test
runs the packaged model itself when the extra is installed.
"""

from __future__ import annotations

import os

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
    written = os.stat(again.path).st_mtime_ns
    os.utime(again.path, ns=(written - 10**9, written - 10**9))  # a second older, to see a rewrite
    assert again.update(vault) == 0
    assert os.stat(again.path).st_mtime_ns == written - 10**9  # nothing new: the file is not rewritten
    assert again.rank(vault, parse_query("compost"), 10)  # the pages' keys were still taken in
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


def _reference_encode(folder: str, ids: list[int]) -> np.ndarray:
    """BERT as written in the papers, in float64, one text, no batching, no padding, with the
    exact erf (math.erf): what the fast float32 encoder must agree with."""
    import math

    from vaultlens.engine.minilm import HEADS, read_safetensors

    w = {k: v.astype(np.float64) for k, v in read_safetensors(f"{folder}/model.safetensors").items()}

    def norm(x, name):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * w[name + ".weight"] + w[name + ".bias"]

    def dense(x, name):
        return x @ w[name + ".weight"].T + w[name + ".bias"]

    erf = np.vectorize(math.erf)
    n = len(ids)
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
    x = norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
    layer = 0
    while f"encoder.layer.{layer}.attention.self.query.weight" in w:
        p = f"encoder.layer.{layer}."
        q, k, v = (dense(x, p + f"attention.self.{m}").reshape(n, HEADS, -1).transpose(1, 0, 2) for m in ("query", "key", "value"))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        context = (scores @ v).transpose(1, 0, 2).reshape(n, -1)
        x = norm(dense(context, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        up = dense(x, p + "intermediate.dense")
        x = norm(dense(0.5 * up * (1 + erf(up / math.sqrt(2))), p + "output.dense") + x, p + "output.LayerNorm")
        layer += 1
    return x.mean(0)


@pytest.mark.skipif(vaultlens.engine.embed.unavailable() is not None, reason="the embeddings extra is not installed")
def test_the_fast_encoder_equals_a_float64_reference_of_the_model():
    from vaultlens.engine.minilm import MiniLM

    folder = vaultlens.engine.embed.model_folder()
    model = MiniLM(folder)
    texts = [
        "compost",
        "How do I set a priority on a task?",
        "Garden: Feeding the soil\n" + "Worms eat kitchen scraps and make castings for the beds. " * 12,
    ]
    fast = model.encode(texts, batch_tokens=64, workers=2)  # batched, padded, two threads
    for text, row, ids in zip(texts, fast, model.token_ids(texts)):
        ref = _reference_encode(folder, ids)
        unit, ref_unit = row / np.linalg.norm(row), ref / np.linalg.norm(ref)
        assert np.abs(unit - ref_unit).max() < 1e-5, text
        assert np.abs(row - ref).max() < 1e-4 * np.abs(ref).max(), text


def test_the_in_place_gelu_and_layer_norm_equal_their_readable_forms():
    from vaultlens.engine.minilm import _gelu, _gelu_inplace, _layer_norm, _layer_norm_inplace

    rng = np.random.default_rng(17)
    x = (rng.standard_normal((50, 1536)) * 3).astype(np.float32)
    y = x.copy()
    _gelu_inplace(y, np.empty_like(y), np.empty_like(y))
    assert np.abs(y - _gelu(x)).max() < 1e-6
    weight, bias = rng.standard_normal(1536).astype(np.float32), rng.standard_normal(1536).astype(np.float32)
    z = _layer_norm_inplace(x.copy(), weight, bias)
    assert np.abs(z - _layer_norm(x, weight, bias)).max() < 1e-5


@pytest.mark.skipif(vaultlens.engine.embed.unavailable() is not None, reason="the embeddings extra is not installed")
def test_encoding_on_two_threads_gives_the_same_bytes():
    from vaultlens.engine.minilm import MiniLM

    model = MiniLM(vaultlens.engine.embed.model_folder())
    texts = [f"page {i}: " + "tasks and due dates " * (i % 7) for i in range(40)]
    assert model.encode(texts, batch_tokens=128, workers=2).tobytes() == model.encode(texts, batch_tokens=128).tobytes()


@pytest.mark.skipif(vaultlens.engine.embed.unavailable() is not None, reason="the embeddings extra is not installed")
@pytest.mark.timeout(120)
def test_the_memory_mapped_weights_give_the_vectors_of_the_packed_ones():
    """A one-shot query runs on the model file's memory map (nothing copied); bulk encoding
    packs the dense weights first. Both give the same bytes, and a query does not pack."""
    from vaultlens.engine.minilm import MiniLM

    folder = vaultlens.engine.embed.model_folder()
    mapped, packed = MiniLM(folder), MiniLM(folder)
    query = "how do I set a priority on a task?"
    first = mapped.encode([query])
    assert not mapped._packed and isinstance(mapped.word, np.memmap)
    packed._pack()
    assert all(a.flags.c_contiguous for layer in packed.layers for a in layer if isinstance(a, np.ndarray))
    assert first.tobytes() == packed.encode([query]).tobytes()
    texts = [f"page {i}: " + "tasks and due dates " * (i % 9) for i in range(60)]  # past one batch of tokens
    assert mapped.encode(texts).tobytes() == MiniLM(folder).encode(texts).tobytes() and mapped._packed


@pytest.mark.skipif(vaultlens.engine.embed.unavailable() is not None, reason="the embeddings extra is not installed")
def test_the_encoder_gives_the_vectors_of_sentence_transformers_on_pytorch():
    """tests/data/minilm_reference.json: the same model folder encoded by sentence-transformers
    on PyTorch (its ``made_with`` says which), one text at a time, unit length (the folder's
    Normalize module); the last text is past the model's 256 word pieces, so truncation is
    checked too."""
    import json
    from pathlib import Path

    from vaultlens.engine.minilm import MAX_TOKENS, MiniLM

    ref = json.loads((Path(__file__).parents[1] / "data" / "minilm_reference.json").read_text(encoding="utf-8"))
    assert ref["max_seq_length"] == MAX_TOKENS
    model = MiniLM(vaultlens.engine.embed.model_folder())
    assert len(model.token_ids(ref["texts"])[-1]) == MAX_TOKENS
    fast = model.encode(ref["texts"], workers=2)
    unit = fast / np.linalg.norm(fast, axis=1, keepdims=True)
    for text, row, expected in zip(ref["texts"], unit, np.asarray(ref["vectors"], dtype=np.float64)):
        assert np.abs(row - expected).max() < 2e-6, text[:40]  # float32 rounding: 2.5e-7 measured


@pytest.mark.skipif(not hasattr(__import__("os"), "setpriority"), reason="no per-thread priority here")
def test_background_encoding_threads_are_niced_and_the_callers_thread_is_not():
    import os
    import sys
    import threading

    from vaultlens.engine.minilm import _on_threads

    me = threading.get_native_id()
    before = os.getpriority(os.PRIO_PROCESS, me)
    seen = {}

    def run(chunk):
        tid = threading.get_native_id()
        seen[chunk] = (tid, os.getpriority(os.PRIO_PROCESS, tid))

    _on_threads(run, [1, 2, 3, 4], workers=2, nice=5)
    assert os.getpriority(os.PRIO_PROCESS, me) == before
    assert sorted(seen) == [1, 2, 3, 4] and all(tid != me for tid, _ in seen.values())
    if sys.platform == "linux":
        assert {nice for _, nice in seen.values()} == {min(19, before + 5)}

    def fail(chunk):
        raise ValueError(chunk)

    with pytest.raises(ValueError):
        _on_threads(fail, [1, 2], workers=2, nice=0)


def test_while_requests_arrive_one_thread_embeds():
    from vaultlens.engine.minilm import _on_threads

    def threads_used(pause):
        seen = []

        def run(chunk):
            seen.append(__import__("threading").get_ident())
            __import__("time").sleep(0.01)  # long enough that a second free worker takes chunks

        _on_threads(run, list(range(12)), 2, 0, pause)
        return len(seen), len(set(seen))

    assert threads_used(lambda: True) == (12, 1)  # busy all along: the first worker alone, every chunk done
    assert threads_used(lambda: False) == (12, 2)  # quiet: both workers
    assert threads_used(None) == (12, 2)


def test_background_vectors_are_busy_while_requests_arrive(monkeypatch):
    monkeypatch.delenv("VAULTLENS_VECTORS", raising=False)
    background = vaultlens.engine.embed.BackgroundVectors(make_index=lambda v: None)
    assert not background.busy()  # nothing heard yet
    background.touch()
    assert background.busy()
    background._touched -= vaultlens.engine.embed.QUIET  # QUIET seconds later
    assert not background.busy()
    background.quiet_for = lambda: 0.2  # the language server's transport heard a message 0.2 s ago
    assert background.busy()
    background.arm()  # a hybrid search asks for the arm: a request too
    background.quiet_for = lambda: float("inf")
    assert background.busy()
