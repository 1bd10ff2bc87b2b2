"""One live vault: a vault's index kept current from its files and from the open editor buffers.

Both servers keep their vaults with this module: the language server (``lsp/sync.py``: buffers,
watched files, file operations, the start-up scan) and the MCP server (``lsp/mcp_server.py``: a
file watcher, or polling). It owns the rules the two must agree on:

- Which files are pages: ``engine.scan.list_pages`` with the vault's ``exclude`` globs, for the
  whole-vault load, every folder rescan and every single-file event alike.
- An open buffer wins over the disk: while a page is open, disk events for it are ignored; on
  close it reverts to what the disk holds.
- A whole vault loaded off the event loop is swapped in in one step, with the open buffers and
  the disk changes that arrived while it loaded applied to it first, so no answer ever sees a
  page go back in time.
- A cold load swaps in a names vault first (``engine.names``: every page by its frontmatter,
  no bodies; ``partial`` is then true), the same way, then the full vault; an edit or a disk
  change made in between reaches both.

Every update is one synchronous step; callers run it where no request can see half of it (the
language server's event loop, the MCP server's lock). Each public update first calls
``before_change`` (the language server's ``lsp/worker.py`` stops a search reading the vault there).

Must not: import pygls, lsprotocol or the MCP SDK (both servers import this), or talk to a client.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable
from dataclasses import dataclass, field

from vaultlens.engine.embed import BackgroundVectors
from vaultlens.engine.model import Page
from vaultlens.engine.page import parse_page
from vaultlens.engine.scan import confined_path, excluded, is_page_path, list_pages, load_page, load_vocabulary
from vaultlens.engine.vault import Vault
from vaultlens.engine.vocabulary import VOCABULARY_FILE, parse_vocabulary

from .settings import OBSIDIAN_APP_FILE, OBSIDIAN_DAILY_FILE, SETTINGS_FILE

SETTINGS_FILES = (SETTINGS_FILE, OBSIDIAN_APP_FILE, OBSIDIAN_DAILY_FILE)  # vault-relative files the settings are read from


class Effect(enum.Enum):
    """What one event did to the vault."""

    PAGE = "page"  # one page was re-read, added or removed (``Applied.before`` is what it was)
    FOLDER = "folder"  # a folder's pages were rescanned
    VOCABULARY = "vocabulary"  # the vault's vocabulary was read again
    SETTINGS = "settings"  # a settings file changed: the caller reloads its settings
    NONE = "none"  # nothing to do (an open page's file, a file that is no page)


@dataclass(frozen=True)
class Applied:
    """The outcome of one event: its effect, and for a page what the page was before."""

    effect: Effect
    before: Page | None = None


@dataclass(eq=False)
class VaultSync:
    """One vault's live index and the state that keeps it current.

    ``open_docs`` are the pages whose open buffer is their truth. ``loading`` is true from
    ``begin_load`` to ``end_load``; meanwhile the pages re-read from disk are remembered in
    ``changed_while_loading``, to be re-read again into the vault ``swap_in`` brings.
    """

    root: str  # absolute
    vault: Vault
    exclude: tuple[str, ...] = ()  # globs of files that are not pages (settings ``exclude``)
    open_docs: set[str] = field(default_factory=set)
    loading: bool = False
    partial: bool = False  # the live vault is a names vault (``names_in``): the full one is still loading
    load_id: int = 0  # counts the loads begun (and superseded): a names vault of an older load is not swapped in
    changed_while_loading: set[str] = field(default_factory=set)
    before_change: Callable[[], None] = field(default=lambda: None, repr=False)  # called before every update
    # the vector arm of rank hybrid, embedded in the background after each load (engine.embed)
    vectors: BackgroundVectors = field(default_factory=BackgroundVectors, repr=False, compare=False)

    # --- paths ------------------------------------------------------------------------------

    def rel(self, path: str) -> str | None:
        """The vault-relative POSIX path of an absolute path inside this vault, else None."""
        rel = os.path.relpath(path, self.root)
        if rel == "." or rel.startswith(".." + os.sep) or rel == ".." or os.path.isabs(rel):
            return None
        rel = rel.replace(os.sep, "/")
        try:  # through a symbolic link that leads out of the vault: not in it, never read
            confined_path(self.root, rel)
        except OSError:
            return None
        return rel

    def abs(self, rel: str) -> str:
        """The absolute path of a vault-relative path."""
        return os.path.join(self.root, *rel.split("/"))

    def is_page(self, rel: str) -> bool:
        """Whether the file ``rel`` is a page by the vault's rules (as ``list_pages`` decides)."""
        return is_page_path(rel) and not (self.exclude and excluded(rel, self.exclude))

    # --- open buffers -----------------------------------------------------------------------

    def buffer_changed(self, rel: str, text: str) -> Applied:
        """The open buffer's text is page ``rel`` until it closes (the vocabulary's, the vocabulary)."""
        self.before_change()
        if rel == VOCABULARY_FILE:
            self.vault.set_vocabulary(parse_vocabulary(text))
            return Applied(Effect.VOCABULARY)
        if not is_page_path(rel):
            return Applied(Effect.NONE)
        self.open_docs.add(rel)
        before = self.vault.get(rel)
        self.vault.upsert(parse_page(rel, text, label_first=self.vault.label_first))
        return Applied(Effect.PAGE, before)

    def buffer_closed(self, rel: str) -> Applied:
        """The buffer of ``rel`` closed: the page is the disk's again."""
        self.before_change()
        self.open_docs.discard(rel)
        if not is_page_path(rel):
            return Applied(Effect.NONE)
        before = self.vault.get(rel)
        self.reread(rel)
        return Applied(Effect.PAGE, before)

    # --- the disk ---------------------------------------------------------------------------

    def disk_changed(self, rel: str) -> Applied:
        """A file or folder at ``rel`` was created, changed, deleted or moved on disk."""
        self.before_change()
        if rel == VOCABULARY_FILE:
            self.vault.set_vocabulary(load_vocabulary(self.root))
            return Applied(Effect.VOCABULARY)
        if rel in SETTINGS_FILES:
            return Applied(Effect.SETTINGS)
        if rel in self.open_docs:
            return Applied(Effect.NONE)  # the buffer wins
        if is_page_path(rel):
            before = self.vault.get(rel)
            self.reread(rel)
            return Applied(Effect.PAGE, before)
        if not rel.lower().endswith(".md"):
            self.rescan_folder(rel)
            return Applied(Effect.FOLDER)
        return Applied(Effect.NONE)  # a .md file in a dot-folder: never a page

    def reread(self, rel: str) -> None:
        """Page ``rel`` as the disk holds it now: re-read, or removed when gone or excluded."""
        if self.loading:  # the vault being loaded may have read it before
            self.changed_while_loading.add(rel)
        page = load_page(self.root, rel, label_first=self.vault.label_first) if self.is_page(rel) else None
        if page is None:
            self.vault.remove(rel)
        else:
            self.vault.upsert(page)

    def rescan_folder(self, rel: str) -> None:
        """A folder appeared, vanished or moved (its events name only the folder, not its pages):
        drop its pages whose files are gone, read the pages the listing finds in it that the vault
        lacks. The listing is the whole vault's, so the rules are those of the start-up load."""
        prefix = rel.rstrip("/") + "/"
        for path in [p for p in self.vault.pages if p.startswith(prefix)]:
            if path not in self.open_docs and not os.path.exists(self.abs(path)):
                self.reread(path)
        if os.path.isdir(self.abs(rel)):
            for path in list_pages(self.root, self.exclude).paths:
                if path.startswith(prefix) and path not in self.vault.pages and path not in self.open_docs:
                    self.reread(path)

    # --- whole-vault loads ------------------------------------------------------------------

    def begin_load(self) -> bool:
        """Start a whole-vault load; False when one is already under way."""
        if self.loading:
            return False
        self.loading = True
        self.load_id += 1
        self.changed_while_loading = set()
        return True

    def swap_in(self, vault: Vault, buffer_text: Callable[[str], str | None] = lambda rel: None) -> None:
        """Make ``vault`` (freshly loaded from disk) the live vault, in one step.

        The open buffers' pages are carried over first (re-parsed from ``buffer_text(rel)`` when
        the link order changed), then the pages re-read from disk while it loaded are re-read.
        """
        self._carry_over(vault, buffer_text)
        self.changed_while_loading = set()
        self.partial = False
        self.vectors.kick(self.vault)  # nothing without the embeddings extra

    def names_in(self, vault: Vault, buffer_text: Callable[[str], str | None] = lambda rel: None) -> bool:
        """Make the names vault of the load under way (``engine.scan.load_vault``'s
        ``on_names``) the live vault until the full one is swapped in, as ``swap_in`` does;
        False (nothing done) when no load is under way any more.

        The pages re-read from disk meanwhile stay remembered (re-read into the full vault
        too); requests that need bodies, links or headings wait for it (``partial``)."""
        if not self.loading:
            return False
        self._carry_over(vault, buffer_text)
        self.partial = True
        return True

    def _carry_over(self, vault: Vault, buffer_text: Callable[[str], str | None]) -> None:
        self.before_change()
        old = self.vault
        for rel in sorted(self.open_docs):
            page = old.pages.get(rel)
            if page is not None and old.label_first == vault.label_first:
                vault.upsert(page, old.fields.get(rel))
            else:
                source = buffer_text(rel)
                if source is not None:
                    vault.upsert(parse_page(rel, source, label_first=vault.label_first))
        # Answers kept per generation (hovers, mentions) must not outlive the vault they came from.
        vault.generation = max(vault.generation, old.generation + 1)
        changed = self.changed_while_loading
        self.vault = vault
        for rel in sorted(changed - self.open_docs):
            self.reread(rel)

    def vector_arm(self):
        """The vector arm for ``rank="hybrid"`` once the background build has vectors, else None;
        a vault changed since the last build is re-embedded in the background."""
        return self.vectors.arm(self.vault)

    def end_load(self) -> None:
        """The load is over (swapped in or failed)."""
        self.loading = False

    def forget_disk_pages(self, exclude: tuple[str, ...], label_first: bool) -> None:
        """The rules for pages changed: keep only the open buffers' pages until a new load swaps
        in the vault read under the new rules (a load still running is superseded)."""
        self.before_change()
        self.exclude = exclude
        self.loading = False
        self.partial = False
        self.load_id += 1
        for path in list(self.vault.pages):
            if path not in self.open_docs:
                self.vault.remove(path)
        self.vault.label_first = label_first
