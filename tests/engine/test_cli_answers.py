"""The command line's answers as issue 20 ("CLI and tool answers") and 25 ("Small ones") ask
for them: a real ``python -m vaultlens.lsp`` process on a vault folder the test writes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from vaultkit import write_vault

REPO_ROOT = Path(__file__).resolve().parents[2]

FILES = {
    ".obsidian/app.json": "{}",
    "Morning.md": "---\ntags: [rag]\nupdated: 2026-03-15T10:00:00\n---\nRetrieval notes written in the morning.\n",
    "Evening.md": "---\ntags: [rag]\nupdated: 2026-03-15T23:59:30Z\n---\nRetrieval notes written late.\n",
    "Next Day.md": "---\ntags: [rag]\nupdated: 2026-03-16T00:00:00\n---\nRetrieval notes the next day.\n",
    "Before.md": "---\ntags: [other]\nupdated: 2026-03-14T23:59:59\n---\nRetrieval notes the day before.\n",
    "Lines.md": "".join(f"retrieval line {n}\n" for n in range(11)),
}


def run(*args: str, stdin: str | None = None, env: dict[str, str] | None = None):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "vaultlens.lsp", *args], cwd=REPO_ROOT, capture_output=True, env=full_env,
        input=stdin.encode() if stdin is not None else None, timeout=60,
    )


@pytest.fixture(scope="module")
def vault(tmp_path_factory) -> Path:
    return write_vault(tmp_path_factory.mktemp("answers") / "dated", FILES)


def files(done) -> list[str]:
    assert done.returncode == 0, done.stderr
    return sorted(h["file"] for h in json.loads(done.stdout)["hits"])


# --- --until D: the whole day, inclusive -----------------------------------------------------


def test_until_a_date_means_the_whole_day(vault):
    same_day = run("search", "retrieval", "--since", "2026-03-15", "--until", "2026-03-15", "--vault", str(vault),
                   "--json")
    assert files(same_day) == ["Evening.md", "Morning.md"]
    until = run("search", "retrieval", "--until", "2026-03-15", "--vault", str(vault), "--json", "--no-cache")
    assert "Next Day.md" not in files(until) and {"Before.md", "Evening.md", "Morning.md"} <= set(files(until))


def test_before_operator_and_jsonl_key_mean_the_whole_day_too(vault):
    by_operator = run("search", "retrieval after:2026-03-15 before:2026-03-15", "--vault", str(vault), "--json")
    assert files(by_operator) == ["Evening.md", "Morning.md"]
    request = {"query": "retrieval", "since": "2026-03-15", "until": "2026-03-15"}
    done = run("jsonl", "--vault", str(vault), stdin=json.dumps(request) + "\n")
    assert sorted(h["file"] for h in json.loads(done.stdout)["hits"]) == ["Evening.md", "Morning.md"]


def test_until_with_a_time_is_that_instant(vault):
    done = run("search", "retrieval", "--since", "2026-03-15", "--until", "2026-03-15T10:00:00", "--vault",
               str(vault), "--json")
    assert files(done) == ["Morning.md"]


# --- text output ------------------------------------------------------------------------------


def test_hints_show_in_text_output(vault):
    done = run("search", "retrieval notes", "--hints", "--vault", str(vault))
    text = done.stdout.decode()
    assert done.returncode == 0 and re.search(r"^hints: next action \w+; sufficient (yes|no)", text, re.M), text
    assert "hints" not in run("search", "retrieval notes", "--vault", str(vault)).stdout.decode()


def test_grep_says_when_the_limit_cut_the_list(vault):
    done = run("grep", "retrieval line", "--limit", "5", "--vault", str(vault))
    assert done.returncode == 0 and len(done.stdout.decode().splitlines()) == 5
    assert done.stderr.decode() == "vaultlens: showing 5 of 11 matches (raise --limit to see more)\n"
    whole = run("grep", "retrieval line", "--vault", str(vault))
    assert whole.stderr == b"" and len(whole.stdout.decode().splitlines()) == 11


def test_plain_format_is_exactly_score_title_path(vault):
    done = run("search", "retrieval", "--format", "plain", "--vault", str(vault))
    lines = done.stdout.decode().splitlines()
    assert done.returncode == 0 and len(lines) == 5
    for line in lines:
        assert re.fullmatch(r"\d+(\.\d+)?  \[\[[^\]]+\]\]  \([^)]+\.md\)", line), line
    as_json = json.loads(run("search", "retrieval", "--format", "json", "--vault", str(vault)).stdout)
    assert lines == [f"{h['score']}  [[{h['title']}]]  ({h['file']})" for h in as_json["hits"]]


def test_text_columns_line_up_and_hybrid_labels_say_the_arms(vault):
    for extra in ((), ("--rank", "hybrid")):
        done = run("search", "retrieval notes", *extra, "--vault", str(vault), env={"VAULTLENS_EMBED_MODEL": ""})
        lines = done.stdout.decode().splitlines()
        assert len(lines) >= 4
        assert len({line.index("[[") for line in lines}) == 1, lines  # one column for titles
        labels = {line.split()[1] for line in lines}
        if extra:
            assert labels <= {"lexical", "vector", "lexical+vector"}, lines
            assert "strong" not in labels


def test_help_does_not_name_an_index_folder_in_the_vault():
    for command in ("search", "grep", "glob", "read", "related", "links", "jsonl"):
        text = run(command, "--help").stdout.decode()
        assert ".vaultlens/" not in text, command
        assert "user cache folder" in " ".join(text.split()), command


# --- a broken _vocabulary.md -----------------------------------------------------------------


@pytest.mark.parametrize("cache", ["--no-cache", None])
def test_a_broken_vocabulary_warns_on_stderr_and_search_goes_on(tmp_path, cache):
    root = write_vault(tmp_path / "v", {
        "Car.md": "Car maintenance.\n",
        "_vocabulary.md": "---\ngroups: [[[\n---\n",
    })
    cache_env = {"VAULTLENS_CACHE_DIR": str(tmp_path / "cache")}
    for _ in range(2):  # cold, then warm from the persistent index
        done = run("search", "car", "--vault", str(root), *([cache] if cache else []), env=cache_env)
        assert done.returncode == 0 and "[[Car]]" in done.stdout.decode()
        warning = done.stderr.decode()
        assert warning.startswith("vaultlens: warning: _vocabulary.md"), warning


# --- listing without a search word ----------------------------------------------------------


@pytest.mark.parametrize("argv", [("", "--tag", "rag"), ("tag:rag",)])
def test_a_filter_without_words_lists_its_pages_by_title(vault, argv):
    done = run("search", *argv, "--vault", str(vault), "--json")
    hits = json.loads(done.stdout)["hits"]
    assert [h["title"] for h in hits] == ["Evening", "Morning", "Next Day"]
    assert all(h["score"] == 0 and h["matched"] == [] for h in hits)
    assert json.loads(done.stdout)["query_plan"]["listed_by"] == "title"
    text = run("search", *argv, "--vault", str(vault)).stdout.decode()
    assert "listed  [[Evening]]" in text


def test_a_listing_by_time_is_newest_first_and_filters_combine(vault):
    done = run("search", "", "--tag", "rag", "--sort", "updated", "--vault", str(vault), "--json")
    assert [h["title"] for h in json.loads(done.stdout)["hits"]] == ["Next Day", "Evening", "Morning"]
    dated = run("search", "", "--since", "2026-03-15", "--until", "2026-03-15", "--vault", str(vault), "--json")
    assert [h["title"] for h in json.loads(dated.stdout)["hits"]] == ["Evening", "Morning"]


def test_nothing_at_all_lists_nothing_and_says_what_to_give(vault):
    done = run("search", "", "--vault", str(vault))
    assert done.returncode == 0 and done.stdout.decode().startswith("no pages match: give search words")


def test_a_listing_over_jsonl_is_the_same(vault):
    done = run("jsonl", "--vault", str(vault), stdin=json.dumps({"query": "", "tag": "rag", "limit": 2}) + "\n")
    assert [h["title"] for h in json.loads(done.stdout)["hits"]] == ["Evening", "Morning"]


# --- repeated scopes: any of them ------------------------------------------------------------


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> Path:
    return write_vault(tmp_path_factory.mktemp("scopes") / "v", {
        "alice/Plan.md": "the project plan\n", "bob/Plan B.md": "the project plan b\n",
        "carol/Plan C.md": "the project plan c\n",
    })


@pytest.mark.parametrize("argv", [
    ("project", "--folder", "alice", "--folder", "bob"),
    ("project path:alice path:bob",),
])
def test_repeated_folders_mean_any_of_them_and_the_plan_says_so(folders, argv):
    payload = json.loads(run("search", *argv, "--vault", str(folders), "--json").stdout)
    assert sorted(h["file"] for h in payload["hits"]) == ["alice/Plan.md", "bob/Plan B.md"]
    assert payload["query_plan"]["folders"] == ["alice", "bob"]
    assert payload["query_plan"]["folders_match"] == "any"


def test_a_list_of_folders_over_jsonl(folders):
    request = {"query": "project", "folder": ["carol", "bob"]}
    payload = json.loads(run("jsonl", "--vault", str(folders), stdin=json.dumps(request) + "\n").stdout)
    assert sorted(h["file"] for h in payload["hits"]) == ["bob/Plan B.md", "carol/Plan C.md"]
    bad = json.loads(run("jsonl", "--vault", str(folders), stdin='{"query": "p", "folder": [1]}\n').stdout)
    assert bad == {"error": '"folder" must be a string or a list of strings'}


# --- a name several pages share --------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_names(tmp_path_factory) -> Path:
    return write_vault(tmp_path_factory.mktemp("names") / "help", {
        "a/Templates.md": "A stub about templates.\n",
        "plugins/core/Templates.md": "# Templates\n\nThe core plugin.\n",
        "Home.md": "See [[plugins/core/Templates]].\n",
        "Other.md": "Also [[plugins/core/Templates|the plugin]] and [[Unique]].\n",
        "Unique.md": "Only one.\n",
    })


@pytest.mark.parametrize("command", ["read", "related", "links"])
def test_an_ambiguous_name_says_so_and_picks_the_best_linked_page(shared_names, command):
    payload = json.loads(run(command, "Templates", "--vault", str(shared_names), "--json").stdout)
    assert payload["page"] == "plugins/core/Templates.md"
    assert payload["ambiguous"] is True
    assert payload["candidates"] == [
        {"file": "plugins/core/Templates.md", "title": "Templates", "backlinks": 2},
        {"file": "a/Templates.md", "title": "Templates", "backlinks": 0},
    ]
    text = run(command, "Templates", "--vault", str(shared_names))
    assert text.returncode == 0
    assert "2 pages are named 'Templates': showing plugins/core/Templates.md" in text.stderr.decode()
    assert "a/Templates.md (0)" in text.stderr.decode()


@pytest.mark.parametrize("name", ["a/Templates.md", "a/Templates", "[[a/Templates]]"])
def test_a_path_picks_one_of_them_and_an_unshared_name_is_not_ambiguous(shared_names, name):
    payload = json.loads(run("read", name, "--vault", str(shared_names), "--json").stdout)
    assert payload["page"] == "a/Templates.md" and "ambiguous" not in payload
    unique = run("links", "Unique", "--vault", str(shared_names), "--json")
    assert "ambiguous" not in json.loads(unique.stdout) and unique.stderr == b""


def test_ambiguity_over_jsonl_is_the_same_object(shared_names):
    request = {"command": "links", "page": "Templates"}
    payload = json.loads(run("jsonl", "--vault", str(shared_names), stdin=json.dumps(request) + "\n").stdout)
    cli = json.loads(run("links", "Templates", "--vault", str(shared_names), "--json").stdout)
    assert payload == cli and payload["ambiguous"] is True
