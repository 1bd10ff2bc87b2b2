"""One set of rules for a live vault: after disk events, the MCP server's live vault holds exactly
the pages a fresh load of the disk finds, with the same exclude globs (``lsp/live.py``).

The MCP server's ``LiveVault`` runs here in-process on real files, fed the vault-relative paths
its watcher delivers (a moved folder is named by the folder alone). ``vaultlens mcp`` itself
reads every page (no exclude, like the CLI); the language server passes its ``exclude`` setting
to the same code (``tests/e2e/test_lsp_sync.py`` drives that over LSP).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("mcp.server.mcpserver", reason="the mcp SDK (2.x) is not installed: pip install 'vaultlens[mcp]'")

from vaultlens.engine.scan import open_vault  # noqa: E402
from vaultlens.lsp.mcp_server import LiveVault  # noqa: E402

EXCLUDE = ("templates/", "*.draft.md")


def page(title: str, body: str = "") -> str:
    return f"# {title}\n\n{body}\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    (vault / "notes").mkdir(parents=True)
    (vault / "notes" / "Home.md").write_text(page("Home", "See [[Quokka]]."), encoding="utf-8")
    (vault / "templates").mkdir()
    (vault / "templates" / "Daily.md").write_text(page("Daily template"), encoding="utf-8")
    return vault


def staged_folder(tmp_path: Path) -> Path:
    """A folder made outside the vault, to be moved in whole (its pages get no event of their own)."""
    folder = tmp_path / "staging" / "zoo"
    (folder / "templates").mkdir(parents=True)
    (folder / "Quokka.md").write_text(page("Quokka", "Rottnest Island."), encoding="utf-8")
    (folder / "Wombat.draft.md").write_text(page("Wombat draft"), encoding="utf-8")
    (folder / "templates" / "Animal.md").write_text(page("Animal template"), encoding="utf-8")
    (folder / "deep").mkdir()
    (folder / "deep" / "Numbat.md").write_text(page("Numbat"), encoding="utf-8")
    return folder


def fresh(root: Path, exclude: tuple[str, ...] = ()) -> list[str]:
    """The pages a new load of the vault finds."""
    return sorted(open_vault(str(root), exclude=exclude)[0].pages)


def test_the_mcp_folder_rescan_honours_exclude(root: Path, tmp_path: Path):
    live = LiveVault(str(root), exclude=EXCLUDE)
    assert sorted(live.vault.pages) == fresh(root, EXCLUDE) == ["notes/Home.md"]

    os.rename(staged_folder(tmp_path), root / "zoo")
    live.apply({"zoo"})
    assert sorted(live.vault.pages) == fresh(root, EXCLUDE) == ["notes/Home.md", "zoo/Quokka.md", "zoo/deep/Numbat.md"]

    os.rename(root / "zoo", root / "zoology")  # a folder move names the old and the new folder
    live.apply({"zoo", "zoology"})
    assert sorted(live.vault.pages) == fresh(root, EXCLUDE)
    assert "zoology/Quokka.md" in live.vault.pages

    # single files follow the same rules: an excluded page written on disk stays out
    (root / "zoology" / "templates" / "Bird.md").write_text(page("Bird template"), encoding="utf-8")
    (root / "zoology" / "Emu.draft.md").write_text(page("Emu draft"), encoding="utf-8")
    (root / "zoology" / "Emu.md").write_text(page("Emu"), encoding="utf-8")
    live.apply({"zoology/templates/Bird.md", "zoology/Emu.draft.md", "zoology/Emu.md"})
    assert sorted(live.vault.pages) == fresh(root, EXCLUDE)
    assert "zoology/Emu.md" in live.vault.pages


def test_a_moved_folder_gives_the_pages_a_fresh_load_finds(root: Path, tmp_path: Path):
    """Without exclude (``vaultlens mcp`` as it runs): the folder's pages by the whole vault's
    rules, a page named like the vocabulary file and a link to a page elsewhere in the vault included."""
    live = LiveVault(str(root))
    folder = staged_folder(tmp_path)
    (folder / "_vocabulary.md").write_text(page("Zoo words"), encoding="utf-8")  # a page: not at the vault's top
    (folder / "Home.md").symlink_to(root / "notes" / "Home.md")  # inside the vault once moved in
    os.rename(folder, root / "zoo")
    live.apply({"zoo"})
    assert sorted(live.vault.pages) == fresh(root)
    assert {"zoo/_vocabulary.md", "zoo/Home.md", "templates/Daily.md"} <= set(live.vault.pages)

    os.rename(root / "zoo", root / "zoology")
    live.apply({"zoo", "zoology"})
    assert sorted(live.vault.pages) == fresh(root)
    assert not any(p.startswith("zoo/") for p in live.vault.pages)
