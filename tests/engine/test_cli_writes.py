"""``vaultlens create-page``, ``append-to-page`` and ``edit-page`` as a user runs them: real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from vaultkit import write_vault

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO), "VAULTLENS_TIMING": "off", "VAULTLENS_CACHE": "0"}

pytestmark = pytest.mark.timeout(120)


def run(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vaultlens.lsp", *args, "--vault", str(root)],
                          capture_output=True, text=True, env=ENV, cwd=str(REPO), timeout=60)


def test_create_append_edit_on_the_command_line(tmp_path: Path):
    write_vault(tmp_path, {"Compost.md": "# Compost\n", "Soil.md": "# Soil\n"})
    made = run(tmp_path, "create-page", "Worms", "--body", "Feed [[Compost]] to [[Wrms]].", "--folder", "animals",
               "--frontmatter", "type=concept", "--tags", "soil")
    assert made.returncode == 0, made.stderr
    assert made.stdout.startswith("wrote animals/Worms.md  (sha256:")
    assert "[[Compost]] -> Compost.md" in made.stdout and "[[Wrms]] unresolved" in made.stdout
    assert "links: 1 unresolved" in made.stderr
    assert (tmp_path / "animals" / "Worms.md").read_text() == (
        "---\ntype: concept\ntags:\n- soil\n---\nFeed [[Compost]] to [[Wrms]].\n")
    read = json.loads(run(tmp_path, "read", "Worms", "--json").stdout)
    appended = run(tmp_path, "append-to-page", "Worms", "More [[Soil]].", "--heading", "Notes", "--json")
    assert json.loads(appended.stdout)["links"][0]["file"] == "Soil.md"
    stale = run(tmp_path, "edit-page", "Worms", "Wrms", "Worms", "--version", read["version"])
    assert stale.returncode == 2 and "changed since it was read" in stale.stderr
    now = json.loads(run(tmp_path, "read", "Worms", "--json").stdout)["version"]
    done = run(tmp_path, "edit-page", "Worms", "[[Wrms]]", "worms", "--version", now, "--strict-links")
    assert done.returncode == 0, done.stderr
    outside = run(tmp_path, "create-page", "Out", "--path", "../out.md")
    assert outside.returncode == 2 and "outside the vault" in outside.stderr
    assert not (tmp_path.parent / "out.md").exists()
    strict = run(tmp_path, "create-page", "Broken", "--body", "[[Nowhere]]", "--strict-links")
    assert strict.returncode == 2 and "strict_links" in strict.stderr and not (tmp_path / "Broken.md").exists()
