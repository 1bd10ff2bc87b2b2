"""`make dist` builds a wheel and an sdist that install and run on their own, and what they
install lives under the one import name ``vaultlens``."""

from __future__ import annotations

import json
import tarfile
import zipfile
from pathlib import Path

import pytest
from installkit import clean_env, fresh_venv, run
from vaultlens.engine import __version__

pytestmark = pytest.mark.timeout(900)


def _only(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    assert len(found) == 1, (pattern, [p.name for p in folder.iterdir()])
    return found[0]


def test_make_dist_builds_a_wheel_and_an_sdist_of_this_version(dist: Path):
    wheel = _only(dist, "*.whl")
    sdist = _only(dist, "*.tar.gz")
    assert wheel.name == f"vaultlens-{__version__}-py3-none-any.whl"
    assert sdist.name == f"vaultlens-{__version__}.tar.gz"


def test_the_wheel_holds_only_the_vaultlens_package(dist: Path):
    with zipfile.ZipFile(_only(dist, "*.whl")) as whl:
        names = whl.namelist()
        top_level = whl.read(f"vaultlens-{__version__}.dist-info/top_level.txt").decode().split()
    assert {n.split("/")[0] for n in names} == {"vaultlens", f"vaultlens-{__version__}.dist-info"}
    assert top_level == ["vaultlens"]
    for module in (
        "vaultlens/engine/__init__.py",
        "vaultlens/lsp/__main__.py",
        "vaultlens/lsp/features/__init__.py",
        "vaultlens/lsp/mcp_server.py",
    ):
        assert module in names


def test_the_sdist_holds_what_a_build_needs(dist: Path):
    """The sdist alone builds the wheel (python -m build makes the wheel from the sdist, so the
    wheel above is the proof); here, that the sources it was built from are the repository's."""
    root = f"vaultlens-{__version__}/"
    with tarfile.open(_only(dist, "*.tar.gz")) as sdist:
        names = {m.name for m in sdist.getmembers()}
    for needed in (
        "pyproject.toml",
        "README.md",
        "PKG-INFO",
        "engine/__init__.py",
        "engine/cli.py",
        "lsp/__main__.py",
        "lsp/features/__init__.py",
    ):
        assert root + needed in names, needed


def test_the_wheel_installs_into_a_fresh_venv_and_answers_from_outside_the_checkout(
    dist: Path, clone: Path, tmp_path: Path
):
    venv_bin = fresh_venv(tmp_path / "venv")
    env = clean_env(tmp_path / "home", venv_bin)
    (tmp_path / "home").mkdir()
    run([str(venv_bin / "pip"), "install", "-q", str(_only(dist, "*.whl"))], cwd=tmp_path, env=env)
    elsewhere = tmp_path / "elsewhere"  # no engine/ or lsp/ folder here to import by accident
    elsewhere.mkdir()

    version = run([str(venv_bin / "vaultlens"), "--version"], cwd=elsewhere, env=env)
    assert version.stdout.strip() == f"vaultlens {__version__}"
    found = run(
        [
            str(venv_bin / "vaultlens"),
            "search",
            "graph rag",
            "--vault",
            str(clone / "examples" / "vault"),
            "--json",
        ],
        cwd=elsewhere,
        env=env,
    )
    assert json.loads(found.stdout)["hits"][0]["title"] == "Graph RAG"

    # What the installed distribution put in site-packages: the package and its dist-info only
    # (the console script goes to bin/), and no generic name is importable.
    probe = run(
        [
            str(venv_bin / "python"),
            "-c",
            """
import importlib.metadata as md, importlib.util as iu, json
files = md.distribution("vaultlens").files
print(json.dumps({
    "top": sorted({f.parts[0] for f in files if f.parts[0] != ".."}),
    "top_level": md.distribution("vaultlens").read_text("top_level.txt").split(),
    "engine": iu.find_spec("engine") is not None,
    "lsp": iu.find_spec("lsp") is not None,
}))
""",
        ],
        cwd=elsewhere,
        env=env,
    )
    seen = json.loads(probe.stdout)
    assert seen == {
        "top": ["vaultlens", f"vaultlens-{__version__}.dist-info"],
        "top_level": ["vaultlens"],
        "engine": False,
        "lsp": False,
    }
