"""`vaultlens search` and `vaultlens jsonl` as a user runs them: a real process on a real folder.

Each test starts ``python -m vaultlens.lsp …`` (the console script's module) from the repository root.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from vaultkit import write_vault

from vaultlens.engine.cli import find_vault

REPO_ROOT = Path(__file__).resolve().parents[2]

FILES = {
    ".obsidian/app.json": "{}",
    "Café Crème.md": "---\ntitle: Café Crème\ntype: recipe\ntags: [drinks/coffee]\n---\nMilk foam on café.\n",
    "notes/Coffee Beans.md": "---\naliases: [Beans]\nrelated: [[Café Crème]]\n---\nRoast the coffee beans.\n",
    "notes/Tea.md": "---\nrelated: [[Coffee Beans]]\n---\nNot coffee at all. ☕ coffee coffee coffee\n",
    "archive/Old.md": "coffee, once\n",
    "_vocabulary.md": "---\ngroups:\n  - canonical: coffee\n    variants: [java]\n---\n",
}


def run(*args: str, stdin: str | None = None, env: dict[str, str] | None = None, cwd: Path = REPO_ROOT):
    full_env = dict(os.environ)
    full_env.pop("PYTHONHASHSEED", None)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "vaultlens.lsp", *args],
        cwd=cwd,
        input=stdin.encode("utf-8") if stdin is not None else None,
        capture_output=True,
        env=full_env,
        timeout=60,
    )


@pytest.fixture(scope="module")
def vault(tmp_path_factory) -> Path:
    return write_vault(tmp_path_factory.mktemp("cli") / "coffee-vault", FILES)


def test_json_output_keys_in_order(vault):
    done = run("search", "coffee", "--vault", str(vault), "--json")
    assert (done.returncode, done.stderr) == (0, b"")
    payload = json.loads(done.stdout.decode("utf-8"))
    assert list(payload) == ["command", "vault", "query", "hits"]
    assert (payload["command"], payload["vault"], payload["query"]) == ("search", "coffee-vault", "coffee")
    assert payload["hits"], "coffee is in every page"
    for hit in payload["hits"]:
        assert list(hit) == ["title", "wikilink", "file", "type", "score", "snippet", "matched"]
        assert hit["score"] == sum(m["points"] for m in hit["matched"])
        for m in hit["matched"]:
            keys = [k for k in ("channel", "term", "field", "via", "hits", "points") if k in m]
            assert list(m) == keys and {"channel", "term", "hits", "points"} <= set(m)
    order = [(-h["score"], h["title"].casefold(), h["file"]) for h in payload["hits"]]
    assert order == sorted(order)
    assert [h["file"] for h in payload["hits"]] == ["notes/Coffee Beans.md", "Café Crème.md", "notes/Tea.md", "archive/Old.md"]


def test_json_is_utf8_not_escaped(vault):
    done = run("search", "café", "--vault", str(vault), "--json")
    assert "Café Crème".encode("utf-8") in done.stdout
    assert b"\\u00e9" not in done.stdout
    hit = json.loads(done.stdout)["hits"][0]
    assert (hit["title"], hit["file"], hit["type"]) == ("Café Crème", "Café Crème.md", "recipe")


def test_text_output_is_one_line_per_hit(vault):
    as_json = json.loads(run("search", "coffee", "--vault", str(vault), "--json").stdout)
    done = run("search", "coffee", "--vault", str(vault))
    assert done.returncode == 0
    lines = done.stdout.decode("utf-8").splitlines()
    assert len(lines) == len(as_json["hits"])
    for line, hit in zip(lines, as_json["hits"]):
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)  (strong|good  |weak  )  \[\[(.+)\]\]  \((.+)\)", line)
        assert m, line
        assert (float(m.group(1)), m.group(3), m.group(4)) == (hit["score"], hit["title"], hit["file"])
    # the relative match label: the top hit is always strong, the rest by their share of its score
    top = as_json["hits"][0]["score"]
    for line, hit in zip(lines, as_json["hits"]):
        ratio = hit["score"] / top
        want = "strong" if ratio >= 0.75 else "good" if ratio >= 0.4 else "weak"
        assert f"  {want}" in line


def test_filters_limit_and_graph_flags(vault):
    def files(*flags: str) -> list[str]:
        done = run("search", "coffee", "--vault", str(vault), "--json", *flags)
        assert done.returncode == 0, done.stderr
        return [h["file"] for h in json.loads(done.stdout)["hits"]]

    assert files("--folder", "notes/") == ["notes/Coffee Beans.md", "notes/Tea.md"]
    assert files("--tag", "drinks") == ["Café Crème.md"]
    assert files("--type", "recipe") == ["Café Crème.md"]
    assert files("--limit", "1") == ["notes/Coffee Beans.md"]
    assert files("--folder", "../") == []
    assert "Café Crème.md" in files("--graph", "--folder", "notes") + files("--graph")


def test_folder_outside_the_vault_reads_nothing(tmp_path):
    root = write_vault(tmp_path / "vault", {"in.md": "unrelated"})
    write_vault(tmp_path / "outside", {"secret.md": "kiwi kiwi"})
    done = run("search", "kiwi", "--vault", str(root), "--folder", "../outside", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["hits"] == []


def test_missing_vault_is_exit_2_with_one_line(tmp_path):
    done = run("search", "coffee", "--vault", str(tmp_path / "nope"))
    assert done.returncode == 2
    assert done.stdout == b""
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("vaultlens: error:") and "nope" in lines[0]


def test_vault_that_is_a_file_is_exit_2(tmp_path):
    (tmp_path / "file.md").write_text("x")
    done = run("search", "x", "--vault", str(tmp_path / "file.md"))
    assert done.returncode == 2 and len(done.stderr.decode().splitlines()) == 1


@pytest.mark.parametrize(
    "args",
    [
        ("search", "coffee", "--bogus"),
        ("search", "coffee", "--limit", "0"),
        ("search", "coffee", "--limit", "many"),
        ("search",),
        ("frobnicate",),
        (),
    ],
)
def test_bad_flags_are_exit_2_with_one_line(vault, args):
    done = run(*args, "--vault", str(vault)) if args[:1] == ("search",) else run(*args)
    assert done.returncode == 2, done.stdout
    assert done.stdout == b""
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("vaultlens: error:"), lines


def test_no_hits_is_not_an_error(vault):
    text = run("search", "zzzunknownzzz", "--vault", str(vault))
    assert (text.returncode, text.stdout, text.stderr) == (0, b"no pages match\n", b"")
    plain = run("search", "zzzunknownzzz", "--vault", str(vault), "--format", "plain")
    assert (plain.returncode, plain.stdout, plain.stderr) == (0, b"", b"")  # scripts read no lines
    as_json = run("search", "zzzunknownzzz", "--vault", str(vault), "--json")
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["hits"] == []


def test_output_is_byte_identical_across_hash_seeds_locales_and_file_order(tmp_path):
    # Two copies of the vault, files written in opposite orders (directory order may differ).
    first = write_vault(tmp_path / "one" / "vault", FILES)
    second = write_vault(tmp_path / "two" / "vault", dict(reversed(list(FILES.items()))))
    outputs = set()
    for root, seed, lang in [(first, "1", "C"), (second, "2", "C"), (first, "12345", "C.UTF-8")]:
        done = run(
            "search", "coffee café beans", "--vault", str(root), "--json", "--graph", "--limit", "50",
            env={"PYTHONHASHSEED": seed, "LANG": lang, "LC_ALL": lang, "PYTHONIOENCODING": ""},
        )
        assert done.returncode == 0, done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1
    assert "Café".encode("utf-8") in outputs.pop()


def test_jsonl_answers_requests_and_survives_bad_ones(vault):
    requests = [
        json.dumps({"query": "coffee"}),
        "not json at all",
        "",
        json.dumps(["query", "coffee"]),
        json.dumps({"limit": 2}),
        json.dumps({"query": "coffee", "limit": 0}),
        json.dumps({"query": "coffee", "folder": 5}),
        json.dumps({"query": "coffee", "tag": ["drinks"]}),
        json.dumps({"query": "roast coffee", "folder": "notes", "limit": 1}),
        json.dumps({"query": "coffee", "graph": True, "limit": 50}),
    ]
    done = run("jsonl", "--vault", str(vault), stdin="\n".join(requests) + "\n")
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.decode("utf-8").splitlines()]
    assert len(answers) == len([r for r in requests if r])
    assert [list(a) for a in answers[1:7]] == [["error"]] * 6
    assert all(isinstance(a["error"], str) and a["error"] for a in answers[1:7])
    search = json.loads(run("search", "coffee", "--vault", str(vault), "--json").stdout)
    assert answers[0] == search
    assert [h["file"] for h in answers[7]["hits"]] == ["notes/Coffee Beans.md"]
    graph = json.loads(run("search", "coffee", "--vault", str(vault), "--json", "--graph", "--limit", "50").stdout)
    assert answers[8] == graph


def test_find_vault_walks_up_to_the_obsidian_folder(tmp_path):
    root = write_vault(tmp_path / "v", {".obsidian/app.json": "{}", "a/b/page.md": ""})
    assert find_vault(str(root / "a" / "b")) == str(root)
    plain = write_vault(tmp_path / "plain", {"a/page.md": ""})
    assert find_vault(str(plain / "a")) == str(plain / "a")


def test_default_vault_is_the_nearest_obsidian_ancestor(vault):
    env = {"PYTHONPATH": str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = run("search", "roast", "--json", env=env, cwd=vault / "notes")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["vault"] == "coffee-vault"
    assert [h["file"] for h in payload["hits"]] == ["notes/Coffee Beans.md"]


def test_a_search_answered_from_the_index_prints_the_checked_vaults_answer(tmp_path):
    root = write_vault(tmp_path / "v", FILES)
    cache = tmp_path / "index"
    env = {"VAULTLENS_CACHE_DIR": str(cache)}
    assert run("search", "roast", "--vault", str(root), "--json", env=env).returncode == 0  # the index stored
    [stored] = cache.glob("*.vlc")
    written = stored.stat().st_mtime_ns
    (root / "notes" / "Coffee Beans.md").write_text("---\naliases: [Beans]\n---\nGrind them.\n", encoding="utf-8")
    (root / "Roasting.md").write_text("# Roasting\n\nRoast slowly.\n", encoding="utf-8")
    done = run("search", "roast", "--vault", str(root), "--json", env=env)
    assert done.returncode == 0, done.stderr
    files = [hit["file"] for hit in json.loads(done.stdout)["hits"]]
    assert files == ["Roasting.md"]  # not the stored "Roast the coffee beans."
    [again] = cache.glob("*.vlc")
    assert again.stat().st_mtime_ns != written  # and the index holds the change now
    plain = run("search", "roast", "--vault", str(root), "--json", "--no-cache", env=env)
    assert run("search", "roast", "--vault", str(root), "--json", env=env).stdout == plain.stdout == done.stdout
