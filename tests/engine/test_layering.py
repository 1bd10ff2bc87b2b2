"""The wall between engine and protocol: no engine module imports pygls, lsprotocol or lsp."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "engine"
FORBIDDEN = {"pygls", "lsprotocol", "lsp"}


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
        found.extend((node.lineno, name) for name in names if name.split(".")[0] in FORBIDDEN)
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
        ("from lsp.server import run", [(1, "lsp.server")]),
        ("def f():\n    import pygls.server as s", [(2, "pygls.server")]),
        ("import json, lsp.convert", [(1, "lsp.convert")]),
        ("from . import lsp\nfrom .lsp import x\nimport lspx\nimport pyglsx", []),
    ],
)
def test_checker_catches_every_import_form(source, expected):
    assert forbidden_imports(source) == expected
