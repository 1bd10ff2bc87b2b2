"""Nothing a request or a page says makes vaultlens read outside the vault, and nothing hangs it.

The vault sits next to a folder ``outside`` holding ``Secret.md`` (``TOPSECRET``); the vault has
a symbolic link to that page and one to the folder, and a page whose links climb out
(``[[../../etc/passwd]]``, ``[x](../../../etc/passwd)``, ``![[../outside/Secret]]``, a typed edge).
Through the CLI (``engine.cli.main`` in-process) and through the server's ``wiki/*`` requests:
PAGE arguments, ``folder``, grep's ``--exclude``, glob patterns (``../../*``, absolute paths) and
document URIs never reach ``outside``; links that climb out resolve to nothing; a buffer opened
on the symbolic link and then closed is not re-read through it. A catastrophic regex is cut
short and a catastrophic glob is matched in linear time.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import badvault_support  # noqa: F401 - puts tests/e2e (e2e_support) on sys.path
import pytest
from e2e_support import open_doc, position, start_session, to_plain, wiki_search
from e2e_support import bare_client, client  # noqa: F401 - fixtures: a session on ``vault``, a bare server
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from vaultlens.engine.cli import main
from vaultlens.engine.retrieve import Glob, glob, grep
from vaultlens.engine.scan import open_vault

SECRET = "TOPSECRET"
HOME = """---
title: Home
sources: ["[[../outside/Secret]]", "../../etc/passwd"]
---
# Home

Climbing: [[../../etc/passwd]], [[../outside/Secret]], [x](../../../etc/passwd.md), [y](../outside/Secret.md),
![[../outside/Secret]], [z](/etc/passwd.md), [[/etc/passwd]], [[escape/Secret]], [[secret]].
Inside: [[Notes/Inside]].
"""
LONG = "a" * 60
FILES = {
    "Home.md": HOME,
    "Notes/Inside.md": "# Inside\n\nplain words\n",
    f"{LONG}.md": "# Long\n\n" + "a" * 5000 + "\n",
}
ESCAPES = [  # how a person or an agent might name the secret page
    "../outside/Secret.md", "../outside/Secret", "[[../outside/Secret]]", "secret.md", "secret", "[[secret]]",
    "escape/Secret.md", "escape/Secret", "/etc/passwd", "../../../../../../etc/passwd", "[[../../etc/passwd]]",
]
ESCAPING_GLOBS = ["../*", "../../*", "../outside/*", "/etc/*", "/**", "escape/*", "**/../*", "**/Secret*"]
# Each would backtrack exponentially as a regex on the page of 60 a's; none matches a page.
CATASTROPHIC_GLOBS = ["**a" * 40 + "b", "*a" * 40 + "b", "**/" * 300 + "b", "*" * 998 + "b", "[a]*" * 200 + "b"]
CATASTROPHIC_REGEX = r"(a|aa)+b"  # on the line of 5,000 a's


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "Secret.md").write_text(f"# Secret\n\n{SECRET} outside the vault\n", encoding="utf-8")
    root = tmp_path / "vault"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    if hasattr(os, "symlink"):
        os.symlink(outside / "Secret.md", root / "secret.md")
        os.symlink(outside, root / "escape")
    return root.resolve()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert SECRET not in out and SECRET not in err, argv
    assert "Traceback" not in err
    return code, out, err


# --- the CLI --------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["read"], ["read", "--level", "0"], ["read", "--level", "2"], ["related"], ["links"]])
def test_cli_page_arguments_never_name_a_file_outside(vault, capsys, command):
    for name in (*ESCAPES, str(vault.parent / "outside" / "Secret.md")):
        code, out, err = run(capsys, command[0], name, *command[1:], "--vault", str(vault), "--json")
        assert code == 2 and out == "", name
        assert err.startswith("vaultlens: error: no page matches") and err.count("\n") == 1, err


@pytest.mark.parametrize(
    "flags",
    [[], ["--folder", "../outside"], ["--folder", "/"], ["--folder", str(Path("/").resolve())], ["--folder", "escape"],
     ["--exclude", "../"], ["--exclude", "/"], ["--frontmatter"], ["-i", "--folder", "..", "--exclude", "../.."]],
)
def test_cli_grep_never_reads_outside(vault, capsys, flags):
    code, out, _ = run(capsys, "grep", "(?i)topsecret|outside the vault", *flags, "--vault", str(vault), "--json")
    assert code == 0 and json.loads(out)["count"] == 0


def test_cli_grep_folder_outside_matches_nothing_and_exclude_outside_excludes_nothing(vault, capsys):
    _, out, _ = run(capsys, "grep", ".", "--folder", "../outside", "--vault", str(vault), "--json")
    assert json.loads(out)["count"] == 0
    _, everything, _ = run(capsys, "grep", ".", "--vault", str(vault), "--json")
    _, excluded, _ = run(capsys, "grep", ".", "--exclude", "../..", "--vault", str(vault), "--json")
    assert json.loads(excluded)["count"] == json.loads(everything)["count"] > 0


def test_cli_glob_patterns_only_list_vault_pages(vault, capsys):
    pages = sorted(FILES)
    for pattern in ESCAPING_GLOBS + [str(vault / "*"), str(vault.parent / "outside" / "*")]:
        code, out, _ = run(capsys, "glob", pattern, "--vault", str(vault), "--json")
        assert code == 0 and json.loads(out)["files"] == [], pattern
    _, out, _ = run(capsys, "glob", "**", "--vault", str(vault), "--json")
    assert json.loads(out)["files"] == pages


def test_cli_search_folder_outside_finds_nothing(vault, capsys):
    for folder in ("../outside", "/", "..", "escape", str(vault.parent / "outside")):
        code, out, _ = run(capsys, "search", "topsecret outside", "--folder", folder, "--vault", str(vault), "--json")
        assert code == 0 and json.loads(out)["hits"] == [], folder


def test_links_that_climb_out_resolve_to_nothing(vault, capsys):
    code, out, _ = run(capsys, "links", "Home", "--vault", str(vault), "--json")
    payload = json.loads(out)
    resolved = {(o["target"], o["file"]) for o in payload["outgoing"]}
    assert resolved == {
        ("../../etc/passwd", None), ("../outside/Secret", None), ("../../../etc/passwd.md", None),
        ("../outside/Secret.md", None), ("/etc/passwd.md", None), ("/etc/passwd", None), ("escape/Secret", None),
        ("secret", None), ("Notes/Inside", "Notes/Inside.md"),
    }
    assert {(e["target"], e["file"]) for e in payload["edges"]} == {
        ("../outside/Secret", None), ("../../etc/passwd", None)
    }
    # and reading the page by a climbing link, at every level, never follows it
    for level in ("0", "1", "2"):
        code, out, _ = run(capsys, "read", "[[../outside/Secret]]", "--level", level, "--vault", str(vault))
        assert code == 2 and out == ""


def test_engine_never_indexes_what_a_symbolic_link_points_out_to(vault):
    opened, listing = open_vault(str(vault))
    assert sorted(opened.pages) == sorted(FILES)
    assert len(listing.warnings) == 2
    assert all(SECRET not in page.body for page in opened.pages.values())


# --- what cannot hang ------------------------------------------------------------------------


def test_a_catastrophic_glob_is_matched_in_linear_time(vault):
    opened, _ = open_vault(str(vault))
    start = time.monotonic()
    for pattern in CATASTROPHIC_GLOBS:
        assert glob(opened, pattern)["files"] == []
    assert glob(opened, "*a" * 30)["files"] == [f"{LONG}.md"]  # 30 a's among the 60
    assert time.monotonic() - start < 2.0
    matcher = Glob("**a" * 300 + "b")
    start = time.monotonic()
    assert not any(matcher.matches("a" * 200 + f"/{i}.md") for i in range(1000))
    assert time.monotonic() - start < 3.0


@pytest.mark.parametrize(
    "pattern, path, expected",
    [
        ("**/*.md", "a/b/c.md", True), ("**/*.md", "c.md", True), ("*.md", "a/c.md", False), ("a/**", "a/b/c", True),
        ("a/**/c", "a/c", True), ("a/**/c", "a/x/y/c", True), ("a/*/c", "a/x/y/c", False), ("?.md", "/.md", False),
        ("[ab]*", "b/x", False), ("[!a]x", "bx", True), ("[!a]x", "ax", False), ("*", "", True), ("", "", True),
        ("**a**a**b", "xaya/zb", True), ("*a*a*b", "xaya/zb", False), ("./a.md", "a.md", True), ("[", "[", True),
    ],
)
def test_glob_semantics(pattern, path, expected):
    assert Glob(pattern).matches(path) is expected


def test_a_catastrophic_regex_is_cut_short(vault):
    opened, _ = open_vault(str(vault))
    start = time.monotonic()
    out = grep(opened, CATASTROPHIC_REGEX)
    assert time.monotonic() - start < 5.0
    assert out["truncated"] is True and out["reason"]


# --- the server ------------------------------------------------------------------------------




async def request(client: LanguageClient, method: str, params: dict) -> dict:
    result = to_plain(await client.protocol.send_request_async(method, params))
    assert SECRET not in json.dumps(result), (method, params)
    return result


async def refused(client: LanguageClient, method: str, params: dict, message: str) -> None:
    with pytest.raises(JsonRpcInvalidParams) as caught:
        await client.protocol.send_request_async(method, params)
    assert message in str(caught.value) and SECRET not in str(caught.value), (method, params)


async def test_wiki_requests_stay_inside_the_vault(client: LanguageClient, vault: Path):
    outside = vault.parent / "outside"
    for name in (*ESCAPES, str(outside / "Secret.md")):
        for level in (0, 1, 2):
            await refused(client, "wiki/read", {"page": name, "level": level}, "no page matches")
        await refused(client, "wiki/links", {"page": name}, "no page matches")
    for uri in (
        (outside / "Secret.md").as_uri(), "file:///etc/passwd", (vault / "../outside/Secret.md").as_uri(),
        (vault / "escape" / "Secret.md").as_uri(), (vault / "secret.md").as_uri(),  # through the links out
    ):
        await refused(client, "wiki/related", {"uri": uri}, "is not inside any open vault")
        await refused(client, "wiki/grep", {"pattern": ".", "uri": uri}, "is not inside any open vault")
    for folder in ("../outside", "/", "..", "escape"):
        assert (await request(client, "wiki/grep", {"pattern": "(?i)topsecret|outside", "folder": folder}))["count"] == 0
        assert (await wiki_search(client, {"query": "topsecret outside", "folder": folder}))["hits"] == []
    for exclude in (["../"], ["/"], "../.."):
        assert (await request(client, "wiki/grep", {"pattern": "(?i)topsecret", "exclude": exclude}))["count"] == 0
    assert (await request(client, "wiki/grep", {"pattern": "(?i)topsecret", "frontmatter": True}))["count"] == 0
    for pattern in ESCAPING_GLOBS + [str(outside / "*")]:
        assert (await request(client, "wiki/glob", {"pattern": pattern}))["files"] == [], pattern
    links = await request(client, "wiki/links", {"page": "Home"})
    assert [o["file"] for o in links["outgoing"] if o["file"]] == ["Notes/Inside.md"]

    # definition on a climbing link goes nowhere
    home_uri, home = open_doc(client, vault, "Home.md")
    lines = home.split("\n")
    for needle in ("[[../../etc/passwd", "[y](../outside", "![[../outside", "[[escape/Secret"):
        line = next(i for i, text in enumerate(lines) if needle in text)
        col = lines[line].index(needle) + 3
        found = await client.text_document_definition_async(
            types.DefinitionParams(
                text_document=types.TextDocumentIdentifier(uri=home_uri), position=types.Position(line=line, character=col)
            )
        )
        assert not found, needle


async def test_a_buffer_on_a_symbolic_link_out_is_not_read_back_from_disk(client: LanguageClient, vault: Path):
    # the editor may open the link (its text is the client's): it is not a page of this vault,
    # and neither closing it nor a file-watcher event for it makes the server read through it
    uri, _ = open_doc(client, vault, "secret.md", "# Shown by the editor\n")
    await refused(client, "wiki/read", {"page": "secret.md", "level": 2}, "no page matches")
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(uri=uri, type=types.FileChangeType.Changed),
                types.FileEvent(uri=(vault / "escape" / "Secret.md").as_uri(), type=types.FileChangeType.Created),
                types.FileEvent(uri=(vault / "escape").as_uri(), type=types.FileChangeType.Created),
            ]
        )
    )
    await refused(client, "wiki/read", {"page": "secret.md"}, "no page matches")
    await refused(client, "wiki/read", {"page": "escape/Secret.md"}, "no page matches")
    assert (await request(client, "wiki/grep", {"pattern": "(?i)topsecret"}))["count"] == 0
    assert (await request(client, "wiki/glob", {"pattern": "**"}))["files"] == sorted(FILES)


async def test_catastrophic_patterns_do_not_hang_the_server(client: LanguageClient):
    start = time.monotonic()
    for pattern in CATASTROPHIC_GLOBS:
        assert (await request(client, "wiki/glob", {"pattern": pattern}))["files"] == []
    out = await request(client, "wiki/grep", {"pattern": CATASTROPHIC_REGEX})
    assert out["truncated"] is True
    assert time.monotonic() - start < 10.0
    assert (await request(client, "wiki/glob", {"pattern": "Home*"}))["files"] == ["Home.md"]  # still serving


async def test_requests_about_a_document_behind_a_link_out_read_nothing_through_it(client: LanguageClient, vault: Path):
    """A request may name a document the client never opened; the server must not read it from
    disk when its path leads out of the vault (here through the symbolic links)."""
    (vault.parent / "outside" / "Secret.md").write_text(f"# {SECRET} heading\n\n[[Home {SECRET}\n#{SECRET}", encoding="utf-8")
    for uri in ((vault / "escape" / "Secret.md").as_uri(), (vault / "secret.md").as_uri()):
        doc = types.TextDocumentIdentifier(uri=uri)
        for line, character in ((0, 4), (2, 16), (3, 10)):
            at = types.Position(line=line, character=character)
            answers = [
                await client.text_document_completion_async(types.CompletionParams(text_document=doc, position=at)),
                await client.text_document_hover_async(types.HoverParams(text_document=doc, position=at)),
                await client.text_document_definition_async(types.DefinitionParams(text_document=doc, position=at)),
            ]
            assert SECRET not in repr(answers), (uri, line)
        outline = await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=doc))
        assert SECRET not in repr(outline)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
async def test_opening_a_link_out_in_a_subfolder_makes_no_vault_of_the_subfolder(bare_client, vault: Path):
    os.symlink(vault.parent / "outside" / "Secret.md", vault / "Notes" / "secret.md")
    await start_session(bare_client, vault)
    open_doc(bare_client, vault, "Notes/secret.md", "# Shown by the editor\n")
    inside, text = open_doc(bare_client, vault, "Notes/Inside.md", "# Inside\n\nBack [[Home]].\n")
    found = await bare_client.text_document_definition_async(
        types.DefinitionParams(text_document=types.TextDocumentIdentifier(uri=inside), position=position(text, "Home"))
    )
    assert [to_plain_uri(loc) for loc in (found if isinstance(found, list) else [found])] == [(vault / "Home.md").as_uri()]
    assert (await request(bare_client, "wiki/glob", {"pattern": "**"}))["files"] == sorted(FILES)


def to_plain_uri(location) -> str:
    return getattr(location, "uri", None) or location.target_uri


def test_settings_files_behind_a_symlink_out_of_the_vault_are_not_read(tmp_path: Path):
    from vaultlens.lsp.settings import Settings, load_vault_settings

    root, outside = tmp_path / "vault", tmp_path / "outside"
    (root / ".obsidian").mkdir(parents=True)
    outside.mkdir()
    (outside / "settings.toml").write_text("limit = 3\n", encoding="utf-8")
    (outside / "app.json").write_text('{"newFileLocation": "folder", "newFileFolderPath": "x"}', encoding="utf-8")
    (root / ".vaultlens.toml").symlink_to(outside / "settings.toml")
    (root / ".obsidian" / "app.json").symlink_to(outside / "app.json")
    settings, warnings = load_vault_settings(str(root))
    assert settings == Settings()
    assert len(warnings) == 2 and all("not read" in w and "outside the vault" in w for w in warnings)
    # the same files inside the vault are read
    for link in (root / ".vaultlens.toml", root / ".obsidian" / "app.json"):
        target = link.resolve()
        link.unlink()
        link.write_bytes(target.read_bytes())
    settings, warnings = load_vault_settings(str(root))
    assert (settings.limit, settings.new_note_folder, warnings) == (3, "x", [])
