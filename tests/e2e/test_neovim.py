"""The Neovim plugin (editors/nvim) in a real headless Neovim against the real server.

Runs tests/nvim/test_nvim.lua in ``nvim --headless -u NONE`` with the plugin on the runtime path,
on a private copy of examples/vault (and, for choosing the vault folder, a copy without
``.obsidian/``, a Dendron-style workspace and a page in a stand-in home folder), with the server started as ``python -m vaultlens.lsp lsp`` from this
checkout. The Lua script checks completion, search, hover and related pages and exits non-zero on
any failure. Skips when ``nvim`` (or the one named by $VAULTLENS_NVIM) is not installed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "tests" / "nvim" / "test_nvim.lua"
PLUGIN = REPO / "editors" / "nvim"
NVIM = shutil.which(os.environ.get("VAULTLENS_NVIM", "nvim"))


def nvim_version(nvim: str) -> tuple[int, int]:
    out = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=30).stdout
    found = re.search(r"NVIM v(\d+)\.(\d+)", out)
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


@pytest.mark.skipif(NVIM is None, reason="nvim is not installed (.ci/run installs Debian's neovim)")
def test_neovim_plugin(tmp_path: Path) -> None:
    assert NVIM is not None
    if nvim_version(NVIM) < (0, 7):
        pytest.skip("the plugin needs Neovim 0.7 or newer")
    vault = tmp_path / "vault"
    shutil.copytree(REPO / "examples" / "vault", vault)
    # A plain notes folder: the example vault without .obsidian/ (and no .git above /tmp).
    plain = tmp_path / "plain"
    shutil.copytree(REPO / "examples" / "vault", plain, ignore=shutil.ignore_patterns(".obsidian"))
    # A Dendron workspace: dendron.yml at the top, the notes (dotted hierarchy) in notes/.
    dendron = tmp_path / "dendron"
    (dendron / "notes").mkdir(parents=True)
    (dendron / "dendron.yml").write_text("version: 5\nworkspace:\n  vaults:\n    - fsPath: notes\n", encoding="utf-8")
    for name, title, body in [
        ("root", "Root", "The garden notes: [[garden]]."),
        ("garden", "Garden", "Vegetables: [[Tomatoes|garden.tomatoes]] and [[Compost|garden.compost]]."),
        ("garden.tomatoes", "Tomatoes", "Tomatoes want sun, deep watering and rich compost."),
        ("garden.compost", "Compost", "Compost turns kitchen scraps into humus for the beds."),
    ]:
        (dendron / "notes" / f"{name}.md").write_text(
            f"---\nid: {name}\ntitle: {title}\n---\n\n{body}\n", encoding="utf-8"
        )
    # A page right in the home folder: no marker, and home is never taken as a vault.
    home = tmp_path / "home"
    home.mkdir()
    (home / "todo.md").write_text("# To do\n\n- water the tomatoes\n", encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        "VAULTLENS_TEST_VAULT": str(vault.resolve()),
        "VAULTLENS_TEST_PLAIN": str(plain.resolve()),
        "VAULTLENS_TEST_DENDRON": str(dendron.resolve()),
        "VAULTLENS_TEST_HOME": str(home.resolve()),
        "VAULTLENS_TEST_PYTHON": sys.executable,
        # Keep Neovim's log, state and cache files out of the user's home.
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    cmd = [
        NVIM,
        "--headless",
        "-u",
        "NONE",
        "-i",
        "NONE",
        "--cmd",
        f"set rtp^={PLUGIN}",
        "-c",
        f"luafile {SCRIPT}",
    ]
    proc = subprocess.run(
        cmd,
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"headless Neovim test failed (exit {proc.returncode}):\n{output}"
    assert re.search(r"nvim: \d+ passed, 0 failed", output), output
    assert "FAIL" not in output, output
