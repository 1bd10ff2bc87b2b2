"""The engine's only disk I/O: list a vault's pages in sorted order and read them.

Dot-folders (``.obsidian``, ``.git``, ``.trash``, ...) are skipped, and so is ``_vocabulary.md``
(configuration, not a page). Symbolic links are followed only while they stay inside the vault,
and each real directory is walked once, so link loops end.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable
from dataclasses import dataclass

from .model import Page, Problem
from .page import parse_page
from .vault import Vault
from .vocabulary import VOCABULARY_FILE, Vocabulary, parse_vocabulary

MAX_READ_BYTES = 64_000_000  # beyond this a page is not even read (parse_page indexes it by title)


@dataclass(frozen=True)
class Listing:
    """A vault's page paths (vault-relative, POSIX, sorted) and what could not be walked."""

    paths: tuple[str, ...]
    warnings: tuple[str, ...]


def is_page_path(rel: str) -> bool:
    """Whether a vault-relative path names a page (a ``.md`` file outside dot-folders)."""
    parts = rel.split("/")
    if any(p.startswith(".") for p in parts) or not rel.lower().endswith(".md"):
        return False
    return rel != VOCABULARY_FILE


def excluded(rel: str, globs: Iterable[str]) -> bool:
    """Whether ``rel`` matches any exclude glob (``fnmatch``; ``dir/`` excludes a folder)."""
    for pattern in globs:
        p = pattern.strip()
        if not p:
            continue
        if p.endswith("/"):
            if rel.startswith(p) or ("/" + p) in ("/" + rel):
                return True
        elif fnmatch.fnmatchcase(rel, p) or fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], p):
            return True
    return False


def list_pages(root: str, exclude: Iterable[str] = ()) -> Listing:
    """Every page under ``root``, sorted by path, confined to the vault."""
    exclude = tuple(exclude)
    real_root = os.path.realpath(root)
    seen_dirs: set[str] = set()
    paths: list[str] = []
    warnings: list[str] = []
    stack = [("", real_root)]
    while stack:
        rel_dir, real_dir = stack.pop()
        if real_dir in seen_dirs:
            continue
        seen_dirs.add(real_dir)
        try:
            entries = sorted(os.scandir(os.path.join(root, rel_dir) if rel_dir else root), key=lambda e: e.name)
        except OSError as exc:
            warnings.append(f"cannot list {rel_dir or '.'}: {exc.strerror or exc}")
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_symlink():
                    target = os.path.realpath(entry.path)
                    if target != real_root and not target.startswith(real_root + os.sep):
                        warnings.append(f"skipped {rel}: symbolic link leads outside the vault")
                        continue
                is_dir = entry.is_dir()
                is_file = entry.is_file()
            except OSError:
                continue
            if is_dir:
                if not excluded(rel + "/", exclude):
                    stack.append((rel, os.path.realpath(entry.path)))
            elif is_file and is_page_path(rel) and not excluded(rel, exclude):
                paths.append(rel)
    paths.sort()
    return Listing(tuple(paths), tuple(warnings))


def read_bytes(root: str, rel: str) -> bytes:
    """A page's bytes (raises OSError when it is gone or unreadable)."""
    full = os.path.join(root, rel)
    with open(full, "rb") as fh:
        return fh.read(MAX_READ_BYTES + 1)


def load_page(root: str, rel: str, *, label_first: bool = False) -> Page | None:
    """Read and parse one page; None when the file vanished, a bare page when unreadable."""
    try:
        data = read_bytes(root, rel)
    except FileNotFoundError:
        return None
    except OSError as exc:
        page = parse_page(rel, b"", label_first=label_first)
        problem = Problem("unreadable", f"cannot read this file: {exc.strerror or exc}", 0)
        return _with_problem(page, problem)
    return parse_page(rel, data, label_first=label_first)


def load_pages(root: str, rels: Iterable[str], *, label_first: bool = False) -> list[Page]:
    """Read and parse pages in the given order, dropping files that vanished meanwhile."""
    out = []
    for rel in rels:
        page = load_page(root, rel, label_first=label_first)
        if page is not None:
            out.append(page)
    return out


def load_vocabulary(root: str) -> Vocabulary:
    """The vault's ``_vocabulary.md``; an absent file is an empty vocabulary, silently."""
    try:
        data = read_bytes(root, VOCABULARY_FILE)
    except FileNotFoundError:
        return Vocabulary()
    except OSError as exc:
        return Vocabulary({}, (f"{VOCABULARY_FILE}: cannot read: {exc.strerror or exc}",))
    return parse_vocabulary(data)


def _with_problem(page: Page, problem: Problem) -> Page:
    from dataclasses import replace

    return replace(page, problems=page.problems + (problem,))


def open_vault(root: str, *, exclude: Iterable[str] = (), link_order: str = "auto") -> tuple[Vault, Listing]:
    """Read a whole vault from disk: pages, vocabulary and the link order it is written in.

    ``link_order`` is ``target-first`` (Obsidian: ``[[target|label]]``), ``label-first``
    (Dendron: ``[[label|target]]``) or ``auto``: whichever reading resolves more piped links.
    """
    listing = list_pages(root, exclude)
    pages = load_pages(root, listing.paths)
    label_first = link_order == "label-first"
    if label_first:
        pages = load_pages(root, listing.paths, label_first=True)
    vault = Vault.from_pages(pages, root, label_first=label_first)
    if link_order == "auto" and detect_label_first(vault):
        vault = Vault.from_pages(load_pages(root, listing.paths, label_first=True), root, label_first=True)
    vault.set_vocabulary(load_vocabulary(root))
    return vault, listing


def detect_label_first(vault: Vault) -> bool:
    """Whether piped links read as ``[[label|target]]`` resolve clearly more often (Dendron).

    Counts the piped links where only one side resolves: labels often repeat a title, so links
    where both sides resolve say nothing about the order.
    """
    only_target = only_label = 0
    for path in vault.sorted_paths():
        for link in vault.pages[path].links:
            if link.kind != "wiki" or not link.label:
                continue
            left = vault.resolve(link.target, path).path is not None
            other = link.label.split("#", 1)[0]
            if other.startswith("dendron://"):
                other = other[len("dendron://") :].split("/", 1)[-1]
            right = bool(other) and vault.resolve(other, path).path is not None
            if left and not right:
                only_target += 1
            elif right and not left:
                only_label += 1
    return only_label > 2 * only_target and only_label >= 3
