"""The Neovim plugin (editors/nvim) in a real headless Neovim against the real server.

Runs tests/nvim/test_nvim.lua in ``nvim --headless -u NONE`` with the plugin on the runtime path,
on a private copy of examples/vault, with the server started as ``python -m vaultlens.lsp lsp`` from this
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
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        "VAULTLENS_TEST_VAULT": str(vault.resolve()),
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
