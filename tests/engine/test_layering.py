"""The wall between engine and protocol: no engine module imports pygls, lsprotocol or the servers.

And the one import name: every module of the repository imports the project as ``vaultlens.*``
(or relatively), never as the bare folder names ``engine`` / ``lsp``, which are not installed.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ENGINE = REPO / "engine"
FORBIDDEN = {"pygls", "lsprotocol", "lsp", "vaultlens.lsp"}
BARE = {"engine", "lsp"}  # the repository's folders; installed, they are vaultlens.engine and vaultlens.lsp


def forbidden_imports(source: str, filename: str = "<test>") -> list[tuple[int, str]]:
    """(line, module) for every import in ``source`` whose root module is forbidden."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: stays inside the engine package
                continue
            names = [node.module or ""]
        else:
            continue
        found.extend((node.lineno, name) for name in names if _root(name) & FORBIDDEN)
    return found


def _root(name: str) -> set[str]:
    parts = name.split(".")
    return {parts[0], ".".join(parts[:2])}


def bare_imports(source: str, filename: str = "<test>") -> list[tuple[int, str]]:
    """(line, module) for every absolute import of ``engine`` or ``lsp`` by their folder names."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        else:
            continue
        found.extend((node.lineno, name) for name in names if name.split(".")[0] in BARE)
    return found


def engine_files() -> list[Path]:
    return sorted(ENGINE.rglob("*.py"))


def test_engine_folder_is_found():
    names = {p.name for p in engine_files()}
    assert {"page.py", "vault.py", "scoring.py", "search.py", "cli.py"} <= names


@pytest.mark.parametrize("path", engine_files(), ids=lambda p: str(p.relative_to(ENGINE)))
def test_engine_module_imports_no_protocol(path: Path):
    assert forbidden_imports(path.read_text(encoding="utf-8"), str(path)) == []


@pytest.mark.parametrize(
    "source, expected",
    [
        ("import pygls", [(1, "pygls")]),
        ("import os\nfrom lsprotocol import types", [(2, "lsprotocol")]),
        ("from vaultlens.lsp.server import run", [(1, "vaultlens.lsp.server")]),
        ("def f():\n    import pygls.server as s", [(2, "pygls.server")]),
        ("import json, lsp.convert", [(1, "lsp.convert")]),
        ("from vaultlens.engine import search", []),
        ("from . import lsp\nfrom .lsp import x\nimport lspx\nimport pyglsx", []),
    ],
)
def test_checker_catches_every_import_form(source, expected):
    assert forbidden_imports(source) == expected


def project_files() -> list[Path]:
    return sorted(p for folder in ("engine", "lsp", "tests", "benchmarks") for p in (REPO / folder).rglob("*.py"))


@pytest.mark.parametrize("path", project_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_module_imports_the_bare_folder_names(path: Path):
    assert bare_imports(path.read_text(encoding="utf-8"), str(path)) == []


def test_bare_import_checker():
    assert bare_imports("import engine.scan\nfrom lsp import server\nfrom vaultlens.lsp import x\nfrom .engine import y") == [
        (1, "engine.scan"), (2, "lsp")]
