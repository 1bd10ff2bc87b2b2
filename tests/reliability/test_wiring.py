"""The wiring of ``vaultlens.lsp``, read from its source files with ``ast`` (nothing is imported):

- no import cycles: the import graph of the package's modules (every import, in function bodies
  and ``TYPE_CHECKING`` blocks too) has none; features import the server's types
  (``lsp/server.py``) and ``lsp/app.py`` imports the features;
- pygls' private names (the ``_names`` pygls defines) appear only in ``lsp/pygls_compat.py``,
  whose version check warns on a pygls it was not written for;
- no module imports another one's private name;
- the per-vault state is declared: every ``state.X`` is a field or method of ``VaultState``.
"""

from __future__ import annotations

import ast
import importlib.util
import logging
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LSP = REPO / "lsp"
PACKAGE = "vaultlens.lsp"
COMPAT = LSP / "pygls_compat.py"


def lsp_files() -> list[Path]:
    return sorted(LSP.rglob("*.py"))


def module_of(path: Path, top: Path = LSP, package: str = PACKAGE) -> str:
    parts = path.relative_to(top).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((package, *parts))


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


# --- import cycles ----------------------------------------------------------------------------


def imported_modules(source: str, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``source`` (module ``module``) imports, anywhere in it."""
    base = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                origin = f"{anchor}.{node.module}" if node.module else anchor
            else:
                origin = node.module or ""
            # ``from pkg import mod`` imports the module pkg.mod; ``from mod import name``, mod
            targets = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in known else origin for a in node.names]
        else:
            continue
        found.update(t for t in targets if t in known and t != module)
    return found


def import_graph(top: Path = LSP, package: str = PACKAGE) -> dict[str, set[str]]:
    files = {module_of(p, top, package): p for p in sorted(top.rglob("*.py"))}
    known = set(files)
    return {
        name: imported_modules(path.read_text(encoding="utf-8"), name, path.name == "__init__.py", known)
        for name, path in files.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a path a -> ... -> a) per strongly connected group of modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph.get(node, ()):
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_path_through(graph, group) for group in groups]


def _path_through(graph: dict[str, set[str]], group: list[str]) -> list[str]:
    """A cycle inside ``group`` from its first module back to it (breadth first)."""
    start, members = group[0], set(group)
    came: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt_frontier = []
        for node in frontier:
            for nxt in sorted(graph[node] & members):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came[path[-1]])
                    return [start, *reversed(path[:-1]), start] if node != start else [start, start]
                if nxt not in came:
                    came[nxt] = node
                    nxt_frontier.append(nxt)
        frontier = nxt_frontier
    return group


def test_the_graph_sees_the_package():
    graph = import_graph()
    assert f"{PACKAGE}.server" in graph[f"{PACKAGE}.features.search"]
    assert {f"{PACKAGE}.sync", f"{PACKAGE}.features.rename"} <= graph[f"{PACKAGE}.app"]
    assert f"{PACKAGE}.live" in graph[f"{PACKAGE}.mcp_server"]


def test_the_lsp_package_has_no_import_cycles():
    found = cycles(import_graph())
    assert found == [], "import cycles: " + "; ".join(" -> ".join(c) for c in found)


def test_the_cycle_finder_finds_cycles(tmp_path: Path):
    files = {
        "__init__.py": "",
        "server.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .transport import X\n",
        "transport.py": "def f():\n    from . import server\n",
        "app.py": "from .features import search\nfrom . import server",
        "features/__init__.py": "",
        "features/search.py": "from ..app import build_server\n",
        "alone.py": "import os\nfrom pkg import alone\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.app"] == {"pkg.features.search", "pkg.server"}
    assert graph["pkg.alone"] == set()  # a module importing itself is no edge
    assert sorted(cycles(graph)) == [
        ["pkg.app", "pkg.features.search", "pkg.app"],
        ["pkg.server", "pkg.transport", "pkg.server"],
    ]


# --- pygls' private names -----------------------------------------------------------------------


def pygls_private_names() -> set[str]:
    """Every private name pygls defines: its functions, methods and classes, the attributes it
    assigns (``self._x = ...``) and its module-level and class-level names."""
    spec = importlib.util.find_spec("pygls")
    assert spec is not None and spec.submodule_search_locations
    names: set[str] = set()
    for path in Path(spec.submodule_search_locations[0]).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return {name for name in names if is_private(name)}


def pygls_private_uses(source: str, private: set[str]) -> list[tuple[int, str]]:
    """(line, name) for every use in ``source`` of a pygls private name: an attribute read or
    written, a method of that name (an override), or a private import from pygls."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in private:
            found.append((node.lineno, node.attr))
        elif isinstance(node, ast.ClassDef):
            found.extend(
                (item.lineno, item.name)
                for item in node.body
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in private
            )
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "pygls":
            parts = (node.module or "").split(".")
            found.extend((node.lineno, name) for name in [*parts, *(a.name for a in node.names)] if is_private(name))
        elif isinstance(node, ast.Import):
            found.extend(
                (node.lineno, alias.name)
                for alias in node.names
                if alias.name.split(".")[0] == "pygls" and any(is_private(p) for p in alias.name.split("."))
            )
    return sorted(found)


@pytest.fixture(scope="module")
def private() -> set[str]:
    return pygls_private_names()


@pytest.mark.parametrize("path", [p for p in lsp_files() if p != COMPAT], ids=lambda p: str(p.relative_to(LSP)))
def test_pygls_private_names_are_used_only_in_pygls_compat(path: Path, private: set[str]):
    assert pygls_private_uses(path.read_text(encoding="utf-8"), private) == [], (
        f"{path.relative_to(REPO)} uses pygls' private names: move that use to lsp/pygls_compat.py"
    )


def test_pygls_compat_is_where_they_are(private: set[str]):
    used = {name for _, name in pygls_private_uses(COMPAT.read_text(encoding="utf-8"), private)}
    assert {"_send_data", "_execute_handler", "_request_futures", "_source", "_create_text_document"} <= used


def test_the_private_name_checker(private: set[str]):
    source = (
        "from pygls.protocol import _private\n"
        "import pygls._internal\n"
        "class P(Base):\n"
        "    def _send_data(self, data):\n"
        "        return self._request_futures, self._mine\n"
        "    def _mine(self): ...\n"
        "x = params._asdict()\n"
    )
    assert pygls_private_uses(source, private | {"_private"}) == [
        (1, "_private"), (2, "pygls._internal"), (4, "_send_data"), (5, "_request_futures")]


def test_the_pygls_version_is_checked(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch):
    from pygls.protocol import JsonRPCProtocol

    from vaultlens.lsp.pygls_compat import TESTED, check_pygls, installed_pygls

    assert check_pygls() is None, f"pygls {installed_pygls()} is not one lsp/pygls_compat.py was tested with"
    assert check_pygls("2.1.3") is None and (2, 1) in TESTED
    with caplog.at_level(logging.WARNING, logger="vaultlens"):
        warning = check_pygls("2.2.0")
    assert warning is not None and "pygls 2.2.0" in warning and "2.1" in warning
    assert [r.getMessage() for r in caplog.records] == [warning]
    assert check_pygls("3.0.1") is not None
    monkeypatch.delattr(JsonRPCProtocol, "_send_data")  # a pygls where an overridden method is gone
    with pytest.raises(RuntimeError, match="JsonRPCProtocol._send_data"):
        check_pygls("2.1.1")


# --- private names between modules -----------------------------------------------------------


def private_imports(source: str, module: str, is_package: bool, known: set[str]) -> list[tuple[int, str]]:
    """(line, name) for each private name ``source`` imports from another module of the package,
    or reads from one it imported whole (``sync._disk_changed``). (Names imported from
    ``vaultlens.engine`` are the engine's affair, outside this check.)"""
    base = module if is_package else module.rpartition(".")[0]
    tree = ast.parse(source)
    found, modules = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            anchor = base
            for _ in range(max(node.level - 1, 0)):
                anchor = anchor.rpartition(".")[0]
            origin = (f"{anchor}.{node.module}" if node.module else anchor) if node.level else node.module or ""
            if origin != PACKAGE and not origin.startswith(PACKAGE + "."):
                continue
            for alias in node.names:
                if f"{origin}.{alias.name}" in known:
                    modules.add(alias.asname or alias.name)
                elif is_private(alias.name):
                    found.append((node.lineno, alias.name))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules and is_private(node.attr):
            found.append((node.lineno, f"{node.value.id}.{node.attr}"))
    return sorted(found)


@pytest.mark.parametrize("path", lsp_files(), ids=lambda p: str(p.relative_to(LSP)))
def test_no_module_imports_another_modules_private_name(path: Path):
    known = {module_of(p) for p in lsp_files()}
    assert private_imports(path.read_text(encoding="utf-8"), module_of(path), path.name == "__init__.py", known) == []


def test_the_private_import_checker():
    known = {"vaultlens.lsp", "vaultlens.lsp.sync", "vaultlens.lsp.features", "vaultlens.lsp.features.changes"}
    source = (
        "from ..sync import _disk_changed, disk_changed\n"
        "from .. import sync\n"
        "from vaultlens.lsp.sync import _swap_in\n"
        "def f():\n"
        "    sync._from_disk(1)\n"
        "from vaultlens.engine.cli import _Parser\n"
    )
    assert private_imports(source, "vaultlens.lsp.features.changes", False, known) == [
        (1, "_disk_changed"), (3, "_swap_in"), (5, "sync._from_disk")]


# --- declared state ---------------------------------------------------------------------------


def state_attributes(source: str) -> list[tuple[int, str]]:
    """(line, attribute) for every ``state.X`` in ``source`` (the features' name for a VaultState)."""
    return sorted(
        (node.lineno, node.attr)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "state"
    )


@pytest.mark.parametrize("path", lsp_files(), ids=lambda p: str(p.relative_to(LSP)))
def test_the_vault_state_is_declared(path: Path):
    """Every ``state.X`` a module reads or writes is a field, method or property of VaultState
    (lsp/server.py, on lsp/live.py's VaultSync): nothing is kept through ``__dict__`` or ``getattr``."""
    from dataclasses import fields

    from vaultlens.lsp.server import VaultState

    declared = {f.name for f in fields(VaultState)} | set(dir(VaultState))
    source = path.read_text(encoding="utf-8")
    assert [(line, name) for line, name in state_attributes(source) if name not in declared] == []
    assert "__dict__" not in source
