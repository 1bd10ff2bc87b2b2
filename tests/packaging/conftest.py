"""Fixtures for the install tests: a clean copy of the checkout, its `make dist`, pipx and uv."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from installkit import REPO, clean_env, run


@pytest.fixture(scope="session")
def clone(tmp_path_factory) -> Path:
    """The checkout's files as a user would have them (tracked and new files, not the ignored
    .venv, caches or dist/), copied so that builds and installs never write into the checkout."""
    dest = tmp_path_factory.mktemp("clone") / "vaultlens"
    try:
        listed = (
            subprocess.run(
                [
                    "git",
                    "-C",
                    str(REPO),
                    "ls-files",
                    "-z",
                    "--cached",
                    "--others",
                    "--exclude-standard",
                ],
                capture_output=True,
                check=True,
                timeout=60,
            )
            .stdout.decode()
            .split("\0")
        )
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("the install tests copy the checkout with git, which is not available here")
    for name in filter(None, listed):
        src = REPO / name
        if src.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    return dest


@pytest.fixture(scope="session")
def dist(clone: Path, tmp_path_factory) -> Path:
    """``make dist`` in the clone (the README's command); returns its dist/ folder."""
    home = tmp_path_factory.mktemp("home-dist")
    run(["make", "dist"], cwd=clone, env=clean_env(home), timeout=600)
    return clone / "dist"


@pytest.fixture(scope="session")
def tools(tmp_path_factory) -> Path:
    """A venv holding pipx and uv from the package index; its bin folder."""
    venv = tmp_path_factory.mktemp("tools") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    proc = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "pipx", "uv"],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        pytest.skip(
            f"pipx and uv could not be installed from the package index: {proc.stderr[-500:]}"
        )
    return venv / "bin"
