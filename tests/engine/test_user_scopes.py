"""Per-user scopes (issue 22): a vault with two users, alice and bob, each with a folder under
``users/`` and a Dendron-style ``user.<id>.*`` page, beside shared pages. The engine's search
operation, then the real CLI and ``jsonl`` processes (``wiki/search`` and MCP take the same
parameter: tests/e2e/test_operations.py runs it on all four surfaces)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from vaultkit import write_vault

from vaultlens.engine.operation import disk_source
from vaultlens.engine.ops import OPERATIONS
from vaultlens.engine.scan import load_vault
from vaultlens.engine.users import page_owner, user_folder

REPO_ROOT = Path(__file__).resolve().parents[2]
SEARCH = next(op for op in OPERATIONS if op.name == "search")
FILES = {
    ".obsidian/app.json": "{}",
    "Garden.md": "# Garden\n\nShared garden plans: compost and beds.\n",
    "Tools.md": "# Tools\n\nThe shared garden tools.\n",
    "users/alice/Garden diary.md": "# Garden diary\n\nAlice's garden: compost every week.\n",
    "users/bob/Garden log.md": "# Garden log\n\nBob's garden: compost in spring.\n",
    "user.alice.ideas.md": "# Ideas\n\nAlice's garden ideas.\n",
    "user.bob.ideas.md": "# Ideas\n\nBob's garden ideas.\n",
}
SHARED = {"Garden.md", "Tools.md"}
ALICE = {"users/alice/Garden diary.md", "user.alice.ideas.md"}
BOB = {"users/bob/Garden log.md", "user.bob.ideas.md"}


def run(*args: str, stdin: str | None = None):
    return subprocess.run(
        [sys.executable, "-m", "vaultlens.lsp", *args], cwd=REPO_ROOT, capture_output=True, env=dict(os.environ),
        input=stdin.encode() if stdin is not None else None, timeout=60,
    )


@pytest.fixture()
def vault(tmp_path: Path) -> Path:
    return write_vault(tmp_path / "two-users", FILES)


def found(root: Path, **args) -> set[str]:
    result = SEARCH.run(disk_source(load_vault(str(root)).vault, str(root)), query="garden", limit=50, **args)
    return {h["file"] for h in result["hits"]}


def test_a_user_searches_the_shared_pages_and_their_own(vault: Path):
    assert found(vault) == SHARED | ALICE | BOB  # default: users' pages are included, as before
    assert found(vault, user="alice") == SHARED | ALICE
    assert found(vault, user="BOB") == SHARED | BOB  # ids compare without case
    assert found(vault, user="carol") == SHARED


def test_the_vault_setting_names_the_folder_and_may_leave_users_out(vault: Path):
    (vault / ".vaultlens.toml").write_text('[users]\nfolder = "people"\ninclude = false\n')
    (vault / "people" / "alice").mkdir(parents=True)
    (vault / "people" / "alice" / "Plot.md").write_text("# Plot\n\nAlice's garden plot.\n")
    # users/ is no longer the users' folder: its pages are shared now; user.<id>.* still counts
    assert found(vault) == SHARED | {"users/alice/Garden diary.md", "users/bob/Garden log.md"}
    assert found(vault, user="alice") == found(vault) | {"user.alice.ideas.md", "people/alice/Plot.md"}
    assert user_folder(str(vault), "alice") == "people/alice"


def test_the_scope_is_a_filter_before_scoring_and_is_in_the_query_plan(vault: Path):
    result = SEARCH.run(disk_source(load_vault(str(vault)).vault, str(vault)), query="compost", user="alice")
    assert {h["file"] for h in result["hits"]} == {"Garden.md", "users/alice/Garden diary.md"}
    assert result["query_plan"]["users"] == {"user": "alice", "folder": "users", "left_out": "other users' pages"}
    listing = SEARCH.run(disk_source(load_vault(str(vault)).vault, str(vault)), query="", folder="users", user="bob")
    assert {h["file"] for h in listing["hits"]} == {"users/bob/Garden log.md"}
    plain = SEARCH.run(disk_source(load_vault(str(vault)).vault, str(vault)), query="compost")
    assert "users" not in plain.get("query_plan", {})


def test_cli_and_jsonl_take_user(vault: Path):
    out = run("search", "garden", "--vault", str(vault), "--user", "bob", "--limit", "50", "--json")
    assert out.returncode == 0, out.stderr
    assert {h["file"] for h in json.loads(out.stdout)["hits"]} == SHARED | BOB
    out = run("jsonl", "--vault", str(vault), stdin=json.dumps({"query": "garden", "user": "alice", "limit": 50}) + "\n")
    assert out.returncode == 0, out.stderr
    assert {h["file"] for h in json.loads(out.stdout.splitlines()[0])["hits"]} == SHARED | ALICE


@pytest.mark.parametrize("bad", ["../bob", "a/b", ".hidden", "", "two words"])
def test_a_user_id_is_one_name(vault: Path, bad: str):
    with pytest.raises(ValueError, match='"user" must be a user id'):
        found(vault, user=bad)
    out = run("search", "garden", "--vault", str(vault), "--user", bad)
    assert out.returncode == 2 and b"must be a user id" in out.stderr


def test_page_owner_and_user_folder():
    assert page_owner("users/alice/a.md") == "alice"
    assert page_owner("users/a.md") is None  # a page in the users' folder itself is shared
    assert page_owner("notes/user.bob.todo.md") == "bob"
    assert page_owner("user.md") is None and page_owner("username.alice.md") is None
    assert page_owner("people/x/a.md", "people") == "x" and page_owner("users/x/a.md", "people") is None
    with pytest.raises(ValueError):
        user_folder("/nonexistent", "../x")
