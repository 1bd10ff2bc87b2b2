"""The editors tell a user who lacks the server README's install command, and it works.

vaultlens is on no package index, so `pip install vaultlens` fails; README says to install from
the clone (`pipx install .` in its top folder). The Neovim plugin lives in that clone, so its
"server not found" message gives the same command with the clone's path for `.`, to run from
anywhere; the VS Code extension's README and setting description give README's commands.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from installkit import REPO, clean_env, run, shell_blocks

pytestmark = pytest.mark.timeout(900)

NVIM = os.environ.get("VAULTLENS_NVIM", "nvim")
OWN_DOCS = (  # CHANGELOG.md may quote the claims it removed
    "README.md",
    "docs",
    "editors/vscode/README.md",
    "editors/vscode/package.json",
    "editors/nvim",
)


def readme_install_commands() -> list[str]:
    """The commands of README's install block (the one with `pipx install .`), in order."""
    for block in shell_blocks((REPO / "README.md").read_text(encoding="utf-8")):
        codes = [c.code for c in block.commands]
        if "pipx install ." in codes:
            return codes
    raise AssertionError("README has no block with `pipx install .`")


def nvim_lua(plugin: Path, expr: str) -> str:
    """What a Lua expression of the plugin at ``plugin`` gives in a headless Neovim."""
    if shutil.which(NVIM) is None:
        pytest.skip(f"{NVIM} is not installed")
    proc = subprocess.run(
        [
            NVIM,
            "--headless",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "--cmd",
            f"set rtp^={plugin}",
            "-c",
            f"lua io.stdout:write({expr})",
            "-c",
            "qa!",
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_no_text_claims_a_package_on_the_index():
    claim = re.compile(r"pipx? install (-U )?['\"]?vaultlens\b|pipx upgrade vaultlens")
    for name in OWN_DOCS:
        root = REPO / name
        for path in [root] if root.is_file() else sorted(root.rglob("*")):
            if path.is_file() and path.suffix in (".md", ".json", ".lua"):
                found = claim.search(path.read_text(encoding="utf-8"))
                assert found is None, f"{path.relative_to(REPO)}: {found.group(0)!r}"


def test_the_neovim_message_gives_readmes_command_for_its_clone_and_it_works(
    clone: Path, tools: Path, tmp_path: Path
):
    first = readme_install_commands()[0]
    assert first == "pipx install ."
    message = nvim_lua(clone / "editors" / "nvim", "require('vaultlens').missing_message()")
    assert "was not found" in message, message
    command = re.search(r"`([^`]+)`", message).group(1)
    assert shlex.split(command) == [str(clone) if w == "." else w for w in shlex.split(first)]

    # Run as the message says, from somewhere that is not the clone, as a user with no vaultlens.
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir()
    elsewhere.mkdir()
    run(command, cwd=elsewhere, env=clean_env(home, tools), shell=True)
    vaultlens = home / ".local" / "bin" / "vaultlens"
    found = run(
        [str(vaultlens), "search", "graph rag", "--vault", str(clone / "examples/vault"), "--json"],
        cwd=elsewhere,
        env=clean_env(home),
    )
    assert json.loads(found.stdout)["hits"][0]["title"] == "Graph RAG"


def test_a_plugin_copied_out_of_its_clone_says_where_to_run_readmes_command(tmp_path: Path):
    copy = tmp_path / "nvim"
    shutil.copytree(REPO / "editors" / "nvim", copy)
    message = nvim_lua(copy, "require('vaultlens').missing_message()")
    assert f"`{readme_install_commands()[0]}` in the top folder of your vaultlens clone" in message
    in_clone = nvim_lua(REPO / "editors" / "nvim", "(require('vaultlens').install_command())")
    assert shlex.split(in_clone) == ["pipx", "install", str(REPO)]


def test_the_vscode_extension_documents_readmes_commands():
    commands = readme_install_commands()[:3]  # pipx, uv, pip: the three routes
    assert [c.split()[0] for c in commands] == ["pipx", "uv", "pip"]
    package = json.loads((REPO / "editors/vscode/package.json").read_text(encoding="utf-8"))
    described = package["contributes"]["configuration"]["properties"]["vaultlens.server.path"][
        "markdownDescription"
    ]
    readme = (REPO / "editors/vscode/README.md").read_text(encoding="utf-8")
    for command in commands:
        assert f"`{command}`" in described, (command, described)
        assert command in readme, command
