"""``vaultlens add`` (engine/capture.py): saved pages served on 127.0.0.1, read as a person would.

The engine tests call ``engine.capture``; the command-line tests run ``python -m vaultlens.lsp add``
as a real process against a local HTTP server (never the internet).
"""

from __future__ import annotations

import http.server
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from vaultkit import write_vault

from vaultlens.engine import capture, writes
from vaultlens.engine.scan import open_vault

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "data" / "capture"
ENV = {**os.environ, "PYTHONPATH": str(REPO), "VAULTLENS_TIMING": "off", "VAULTLENS_CACHE": "0"}

VAULT = {
    "garden/Composting.md": "# Composting\n\nTurn the heap.\n",
    "garden/Thermophilic composting.md": "---\naliases: [hot heap]\n---\n# Thermophilic composting\n",
    "projects/LoRa.md": "# LoRa\n\nLong-range radio.\n",
}


class Handler(http.server.BaseHTTPRequestHandler):
    """The fixtures, and the ways a fetch goes wrong."""

    def log_message(self, *args) -> None:  # quiet
        pass

    def send(self, code: int, ctype: str, data: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - the http.server spelling
        path = self.path.split("?")[0]
        if path.endswith(".html") and (FIXTURES / path.lstrip("/")).is_file():
            self.send(200, "text/html; charset=utf-8", (FIXTURES / path.lstrip("/")).read_bytes())
        elif path == "/notes.md":
            self.send(200, "text/markdown", "---\ntags: [radio]\n---\n# Radio notes\n\nLoRa beats Wi-Fi here.\n".encode())
        elif path == "/missing":
            self.send(404, "text/html", b"<h1>Not found</h1>")
        elif path == "/big":
            self.send(200, "text/plain", b"x" * 5000)
        elif path == "/image.png":
            self.send(200, "image/png", b"\x89PNG\r\n\x1a\n\x00\x00\x00")
        elif path == "/to-ftp":
            self.send(302, "text/plain", b"", {"Location": "ftp://127.0.0.1/file"})
        elif path == "/moved":
            self.send(301, "text/plain", b"", {"Location": "/blog-post.html"})
        else:
            self.send(404, "text/plain", b"no")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    write_vault(tmp_path / "vault", VAULT)
    return tmp_path / "vault"


def cap_of(root: Path, ref: str, **kw) -> capture.Capture:
    vault, _ = open_vault(str(root))
    return capture.capture(vault, str(root), capture.load(ref, capture.MAX_BYTES), fetched="2026-01-02T03:04:05Z", **kw)


def body_of(cap: capture.Capture) -> str:
    return writes.split_frontmatter(cap.text)[1]


# --- the pages, as a person reads them ---------------------------------------------------------


@pytest.mark.timeout(30)
def test_a_docs_page_keeps_headings_tables_code_lists_and_links_and_drops_the_chrome(root: Path, server: str):
    pytest.importorskip("readability")
    cap = cap_of(root, server + "/docs-page.html")
    body = body_of(cap)
    assert cap.title == "Configuring the Retry Policy" and cap.path == "inbox/configuring-the-retry-policy.md"
    for heading in ("## Settings", "## An example", "## Caveats"):
        assert "\n" + heading + "\n" in body
    assert "| `attempts` | 3 | How many times a read is tried in all. |" in body
    assert "```\nfrom gardenkit import Client, RetryPolicy\n\nclient = Client(" in body  # the blank line kept
    assert "- A policy with `attempts = 1` never retries." in body and "1. Start with the defaults." in body
    assert f"[Caching]({server}/caching.html)" in body  # made absolute: it still leads somewhere
    for chrome in ("Search docs", "Previous", "Built with Sphinx", "Changelog", "gtag"):
        assert chrome not in body
    assert (cap.meta["type"], cap.meta["usage"]) == ("reference", "facts to look up")


@pytest.mark.timeout(30)
def test_a_blog_post_drops_comments_and_share_buttons_and_suggests_links(root: Path, server: str):
    pytest.importorskip("readability")
    cap = cap_of(root, server + "/blog-post.html")
    body = body_of(cap)
    assert cap.title == "Why We Moved Our Compost Sensors to LoRa"
    assert "| LoRa (SF9) | 99.2% | 11 months |" in body and "uint16_t heap_id;" in body
    assert "> Turning the heap" in body
    for chrome in ("Accept all", "Tweet", "Great write-up", "You might also like", "Privacy"):
        assert chrome not in body
    assert [c["file"] for c in cap.related] == ["projects/LoRa.md", "garden/Thermophilic composting.md"]
    assert cap.meta["related"] == ["[[LoRa]]", "[[Thermophilic composting]]"]
    assert "[[" not in body  # suggestions are never put into the text


@pytest.mark.timeout(30)
def test_a_wiki_article_is_a_definition_and_a_policy_page_a_policy(root: Path, server: str):
    pytest.importorskip("readability")
    wiki = cap_of(root, server + "/wiki-article.html")
    assert wiki.title == "Hot composting" and wiki.meta["type"] == "definition"
    assert "\n## Method\n" in body_of(wiki) and "[edit]" not in body_of(wiki)
    assert "[\\[1\\]](" in body_of(wiki)  # a citation link, not a wikilink to "1"
    policy = cap_of(root, server + "/policy-page.html")
    assert policy.meta["type"] == "policy" and "must" in policy.why.lower() or "oblige" in policy.why
    assert "Seed swap" not in body_of(policy) and "## 3. Prohibited" in body_of(policy)


def test_provenance_frontmatter(root: Path, server: str):
    cap = cap_of(root, server + "/notes.md")
    meta = cap.meta
    assert list(meta)[:7] == ["title", "source", "fetched", "provenance", "content_hash", "type", "usage"]
    assert meta["source"] == server + "/notes.md" and meta["fetched"] == "2026-01-02T03:04:05Z"
    assert meta["provenance"] == "inferred" and meta["tags"] == ["radio"]
    assert meta["content_hash"] == capture.content_hash(body_of(cap)[1:])
    assert cap.title == "Radio notes" and body_of(cap) == "\nLoRa beats Wi-Fi here.\n"


@pytest.mark.parametrize("path, message", [
    ("/missing", "HTTP 404"),
    ("/big", "over the 1000-byte limit"),
    ("/image.png", "binary content (image/png)"),
    ("/to-ftp", "redirects to a ftp: URL"),
])
def test_fetch_problems_are_one_clear_error(server: str, path: str, message: str):
    with pytest.raises(capture.CaptureError, match=re.escape(message)):
        capture.fetch(server + path, max_bytes=1000)


def test_a_network_error_is_one_clear_error():
    with pytest.raises(capture.CaptureError, match="cannot fetch"):
        capture.fetch("http://127.0.0.1:9/", timeout=5)


def test_infer_type_rules():
    assert capture.infer_type("Known issues", "It may crash.")[0] == "caveat"
    assert capture.infer_type("What is mulch?", "Mulch covers soil.")[0] == "definition"
    assert capture.infer_type("Notes", "You must. You shall. It is prohibited.")[0] == "policy"
    assert capture.infer_type("Retry Policy", "Set attempts to 3.")[0] == "reference"  # names it, obliges nobody


def test_update_replaces_an_unedited_capture_and_refuses_an_edited_one(root: Path, server: str):
    vault, _ = open_vault(str(root))
    first = capture.capture(vault, str(root), capture.load(server + "/notes.md", 10_000))
    capture.write_capture(vault, str(root), first)
    again = capture.capture(vault, str(root), capture.load(server + "/notes.md", 10_000))
    assert again.path == "inbox/radio-notes-2.md"  # never over the first
    same = capture.capture(vault, str(root), capture.load(server + "/notes.md", 10_000), update=True)
    assert same.replaces == first.path
    capture.write_capture(vault, str(root), same)
    page = root / first.path
    page.write_text(page.read_text() + "My own note.\n")
    with pytest.raises(capture.CaptureError, match="was edited since it was captured"):
        capture.capture(vault, str(root), capture.load(server + "/notes.md", 10_000), update=True)


def test_the_capture_folder_setting_and_obsidian_new_note_folder(root: Path):
    assert capture.capture_settings(str(root)) == capture.CaptureSettings("inbox", capture.MAX_BYTES)
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "app.json").write_text('{"newFileLocation": "folder", "newFileFolderPath": "Notes/"}')
    assert capture.capture_settings(str(root)).folder == "Notes"
    (root / ".vaultlens.toml").write_text('[capture]\nfolder = "clips"\nmax_bytes = 2000\n')
    assert capture.capture_settings(str(root)) == capture.CaptureSettings("clips", 2000)


# --- the command, as a real process --------------------------------------------------------------


def add(root: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "vaultlens.lsp", "add", *args, "--vault", str(root)], input=stdin,
        capture_output=True, text=True, env=ENV, cwd=str(REPO), timeout=60,
    )


@pytest.mark.timeout(120)
def test_cli_shows_the_page_and_asks_before_writing(root: Path, server: str):
    url = server + "/notes.md"
    no = add(root, url, stdin="n\n")
    assert no.returncode == 1 and "Write inbox/radio-notes.md? [y/N]" in no.stderr
    assert "# Radio notes" not in no.stdout and "title: Radio notes" in no.stdout
    assert not (root / "inbox").exists()
    yes = add(root, url, stdin="y\n")
    assert yes.returncode == 0 and "wrote inbox/radio-notes.md" in yes.stdout
    assert "suggested links" in yes.stdout and "[[LoRa]]" in yes.stdout
    text = (root / "inbox" / "radio-notes.md").read_text()
    assert "provenance: inferred" in text and "related:\n- '[[LoRa]]'\n" in text
    assert "[[LoRa]] beats" not in text  # never turned into a link in the text
    found = subprocess.run([sys.executable, "-m", "vaultlens.lsp", "search", "radio notes", "--vault", str(root)],
                           capture_output=True, text=True, env=ENV, cwd=str(REPO), timeout=60)
    assert "inbox/radio-notes.md" in found.stdout.splitlines()[0]


@pytest.mark.timeout(120)
def test_cli_dry_run_json_and_stdin(root: Path, server: str):
    dry = add(root, server + "/notes.md", "--dry-run", "--json")
    result = json.loads(dry.stdout)
    assert dry.returncode == 0 and result["written"] is False and result["path"] == "inbox/radio-notes.md"
    assert result["related"][0]["file"] == "projects/LoRa.md" and not (root / "inbox").exists()
    piped = add(root, "-", "--yes", "--json", "--slug", "From Pipe", "--folder", "clips",
                stdin="Plain words about Composting.\nMore.\n")
    result = json.loads(piped.stdout)
    assert piped.returncode == 0 and result["path"] == "clips/from-pipe.md" and result["source"] == "stdin"
    assert (root / "clips" / "from-pipe.md").read_text() == result["content"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("path, message", [
    ("/missing", "HTTP 404"), ("/image.png", "binary content"), ("/to-ftp", "ftp: URL"), ("/big", "byte limit"),
])
def test_cli_fetch_problems_exit_2_with_one_line_and_write_nothing(root: Path, server: str, path: str, message: str):
    done = add(root, server + path, "--yes", "--max-bytes", "1000")
    assert done.returncode == 2 and message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith("vaultlens: error: ")
    assert not (root / "inbox").exists()


@pytest.mark.timeout(60)
def test_cli_add_of_a_local_html_file(root: Path):
    pytest.importorskip("readability")
    done = add(root, str(FIXTURES / "policy-page.html"), "--yes")
    assert done.returncode == 0, done.stderr
    text = (root / "inbox" / "plot-allocation-policy.md").read_text()
    assert "type: policy" in text and f"source: {FIXTURES / 'policy-page.html'}" in text


@pytest.mark.timeout(120)
def test_add_user_writes_to_that_users_folder_and_only_that_user_searches_it(root: Path, server: str):
    """``add --user alice`` (issue 22): the page lands in users/alice/ (the vault's [users]
    folder), ``search --user alice`` finds it, ``--user bob`` does not; ``update`` for bob never
    replaces alice's capture of the same URL."""
    (root / ".vaultlens.toml").write_text('[users]\nfolder = "people"\n')
    done = add(root, server + "/notes.md", "--yes", "--json", "--user", "alice")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["path"] == "people/alice/radio-notes.md"
    nested = add(root, "-", "--yes", "--json", "--user", "alice", "--folder", "clips", stdin="Plain words.\n")
    assert json.loads(nested.stdout)["path"] == "people/alice/clips/captured-page.md"

    def search(user: str) -> list[str]:
        out = subprocess.run([sys.executable, "-m", "vaultlens.lsp", "search", "radio notes", "--json", "--user", user,
                              "--vault", str(root)], capture_output=True, text=True, env=ENV, cwd=str(REPO), timeout=60)
        return [hit["file"] for hit in json.loads(out.stdout)["hits"]]

    assert "people/alice/radio-notes.md" in search("alice")
    assert "people/alice/radio-notes.md" not in search("bob")
    vault, _ = open_vault(str(root))
    bobs = capture.capture(vault, str(root), capture.load(server + "/notes.md", 10_000), update=True, user="bob")
    assert bobs.replaces is None and bobs.path == "people/bob/radio-notes.md"
    alices = capture.capture(vault, str(root), capture.load(server + "/notes.md", 10_000), update=True, user="alice")
    assert alices.replaces == "people/alice/radio-notes.md"
    bad = add(root, server + "/notes.md", "--yes", "--user", "../eve")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
