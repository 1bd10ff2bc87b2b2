"""What a vault ships cannot choose where vaultlens writes, cannot lie through the index, cannot
hang it with a FIFO, and a full disk or a stale file costs the index, never an answer.

Every vault here is written by the test the way an attacker (or an accident) would ship it:
a ``.vaultlens.toml`` moving the cache, a committed ``.vaultlens -> ../other-repo`` symlink, a
forged index whose manifest names the real files while its records hold other text, FIFOs
where pages, ``_vocabulary.md`` and the index file should be, a new-page folder that is a
symlink out, an edit that keeps size and mtime.
"""

from __future__ import annotations

import errno
import hashlib
import io
import logging
import marshal
import os
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from vaultlens.engine import cache as cache_mod
from vaultlens.engine.cache import CacheOptions, cache_paths
from vaultlens.engine.compact import schema_version
from vaultlens.engine.cli import main
from vaultlens.engine.fixes import quick_fixes
from vaultlens.engine.model import Span
from vaultlens.engine.scan import _WORKER_CODE, load_vault, open_vault
from vaultlens.lsp.settings import load_vault_settings

PAGES = {
    "Home.md": "# Home\n\nWe keep a compost heap. See [[Garden]] and [[plans/Shed]].\n",
    "Garden.md": "# Garden\n\nThe compost feeds the beds.\n",
}
OLD = time.time() - 3600  # outside the racy window: trusted by stat


def make_vault(root: Path, pages: dict[str, str] = PAGES) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in pages.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
        os.utime(root / rel, (OLD, OLD))
    return root


@pytest.fixture
def user_cache(tmp_path, monkeypatch) -> Path:
    """This user's own cache folder (XDG), with nothing from the environment moving it."""
    home = tmp_path / "usercache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    monkeypatch.delenv("VAULTLENS_CACHE_DIR", raising=False)
    monkeypatch.delenv("VAULTLENS_CACHE", raising=False)
    cache_mod._KEYS.clear() if hasattr(cache_mod, "_KEYS") else None
    return home / "vaultlens"


def hits(root: Path, word: str, options: CacheOptions) -> list[str]:
    loaded = load_vault(str(root), cache=options)
    loaded.commit()
    return [h.path for h in loaded.vault.search(word).hits] if hasattr(loaded.vault, "search") else _grep(loaded, word)


def _grep(loaded, word: str) -> list[str]:
    from vaultlens.engine.retrieve import grep

    return sorted({m["file"] for m in grep(loaded.vault, word)["matches"]})


# --- 1. settings inside the vault never choose where vaultlens writes ------------------------


def test_a_vaults_own_settings_cannot_move_the_index_or_write_through_a_symlink(tmp_path, user_cache):
    other = tmp_path / "other-repo"
    other.mkdir()
    (other / "README").write_text("someone else's repository\n")
    elsewhere = tmp_path / "elsewhere"
    vault = make_vault(tmp_path / "cloned")
    (vault / ".vaultlens.toml").write_text(f'[cache]\nlocation = "{elsewhere}"\n')
    os.symlink("../other-repo", vault / ".vaultlens")  # committed in the cloned repository

    settings, warnings = load_vault_settings(str(vault))
    assert settings.cache_location == "user"
    assert any("location" in w and "ignored" in w for w in warnings)
    for location in (settings.cache_location, "vault"):  # and the old in-vault option
        load_vault(str(vault), cache=CacheOptions.from_env(True, location)).commit()
    assert not elsewhere.exists()
    assert sorted(p.name for p in other.iterdir()) == ["README"]  # no .gitignore, no index
    assert list(user_cache.glob("*.vlc"))  # it went to this user's cache


# --- 2. a forged index is never believed ------------------------------------------------------


def forge(index_file: Path, old: bytes, new: bytes) -> None:
    """Rewrite the index the way a forger can: the same manifests (the real files' stats and
    hashes), records and snapshot holding other text, every checksum recomputed. The forger has
    no user key, so a keyed tag is made with a key of its own."""
    data = index_file.read_bytes()
    magic = data[:8]
    tag_len = len(data) - 8  # find the trailer size: CRC-32 (old) or a tag
    for size in (struct.calcsize("<QII8s"), struct.calcsize("<QI32s8s")):
        offset, length = struct.unpack("<QI", data[-size:-size + 12])
        if offset + length == len(data) - size:
            tag_len = size
            break
    trailer = data[-tag_len:]
    offset, length = struct.unpack("<QI", trailer[:12])
    header = marshal.loads(data[offset:offset + length])

    def sign(blob: bytes, like):
        return zlib.crc32(blob) if isinstance(like, int) else hashlib.blake2b(blob, digest_size=len(like), key=b"forger").digest()

    out = bytearray(magic)
    chunks = []
    for off, ln, check, manifest in header["chunks"]:
        blob = data[off:off + ln].replace(old, new)
        chunks.append((len(out), len(blob), sign(blob, check), manifest))
        out += blob
    pieces = []
    for off, ln, check, *names in header["snapshot"] or ():  # (names: what the piece holds)
        blob = data[off:off + ln].replace(old, new)
        pieces.append((len(out), len(blob), sign(blob, check), *names))
        out += blob
    header = dict(header, chunks=chunks, snapshot=pieces or None)
    raw = marshal.dumps(header)
    head_check = trailer[12:-8]
    if len(head_check) == 4:
        tail = struct.pack("<QII8s", len(out), len(raw), zlib.crc32(raw), magic)
    else:
        tail = struct.pack(f"<QI{len(head_check)}s8s", len(out), len(raw), sign(raw, head_check), magic)
    index_file.write_bytes(bytes(out) + raw + tail)


def test_a_forged_index_is_rejected_logged_and_rebuilt(tmp_path, user_cache, caplog):
    vault = make_vault(tmp_path / "vault")
    options = CacheOptions(True, "user")
    assert _grep_hits(vault, "compost", options) == ["Garden.md", "Home.md"]
    [index_file] = [Path(p) for p in cache_paths(str(vault), options) if os.path.exists(p)]
    forge(index_file, b"compost", b"kompost")
    with caplog.at_level(logging.INFO, logger="vaultlens"):
        assert _grep_hits(vault, "kompost", options) == []  # text that is in no file
    assert any("ignored" in r.getMessage() for r in caplog.records)
    assert _grep_hits(vault, "compost", options) == ["Garden.md", "Home.md"]
    loaded = load_vault(str(vault), cache=options)
    assert loaded.parsed == 0  # rebuilt: the next start reads this user's own file again


def _grep_hits(root: Path, word: str, options: CacheOptions) -> list[str]:
    loaded = load_vault(str(root), cache=options)
    loaded.commit()
    return _grep(loaded, word)


# --- 4. "Create page" never through a symlink out of the vault -------------------------------


def test_create_page_is_not_offered_into_a_folder_that_is_a_symlink_out(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    vault = make_vault(tmp_path / "vault")
    os.symlink(str(outside), vault / "plans")  # "plans/" looks inside; it resolves outside
    loaded, _ = open_vault(str(vault), cache=CacheOptions(enabled=False))
    text = PAGES["Home.md"]
    line = text.splitlines().index(next(ln for ln in text.splitlines() if "[[plans/Shed]]" in ln))
    col = text.splitlines()[line].index("[[plans/Shed]]") + 3
    fixes = quick_fixes(loaded, "Home.md", Span(line, col, line, col))
    assert not [f for f in fixes if f.change.creates], [f.change.creates for f in fixes]
    fixes = quick_fixes(loaded, "Home.md", Span(line, col, line, col), new_page_folder="plans")
    assert not [f for f in fixes if f.change.creates]


# --- 7. a FIFO never hangs anything -----------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifos_as_pages_vocabulary_and_index_file_never_hang_the_cli(tmp_path, user_cache):
    vault = make_vault(tmp_path / "vault")
    os.mkfifo(vault / "_vocabulary.md")
    os.mkfifo(vault / "Trap.md")
    cache_dir = tmp_path / "cachedir"
    cache_dir.mkdir()
    options = CacheOptions(True, str(cache_dir))
    os.mkfifo(cache_paths(str(vault), options)[0])
    env = dict(os.environ, VAULTLENS_CACHE_DIR=str(cache_dir), XDG_CACHE_HOME=str(user_cache.parent))
    for args in (["search", "compost"], ["read", "Trap.md"], ["read", "_vocabulary.md"]):
        proc = subprocess.run([sys.executable, "-m", "vaultlens.lsp", *args, "--vault", str(vault)],
                              capture_output=True, text=True, timeout=60, env=env)
        assert "Traceback" not in proc.stderr
        if args[0] == "search":
            assert proc.returncode == 0 and "Garden" in proc.stdout


# --- 8. a full disk costs the index, never an answer ------------------------------------------


class _FullDisk(io.RawIOBase):
    def __init__(self, fd: int) -> None:
        self.fd = fd

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def fileno(self) -> int:
        return self.fd

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        super().close()


def test_a_full_cache_disk_means_no_index_one_message_and_answers(tmp_path, user_cache, monkeypatch, capsys, caplog):
    vault = make_vault(tmp_path / "vault")
    monkeypatch.setattr(cache_mod.os, "fdopen", lambda fd, *a, **k: _FullDisk(fd))
    with caplog.at_level(logging.INFO, logger="vaultlens"):
        assert main(["search", "compost", "--vault", str(vault)]) == 0
    assert "Garden" in capsys.readouterr().out
    messages = [r.getMessage() for r in caplog.records if "No space" in r.getMessage()]
    assert len(messages) == 1 and "without a stored index" in messages[0]
    assert not list(user_cache.glob(".index-*.tmp"))  # nothing half-written left behind


# --- 10. an edit that keeps size and mtime is seen --------------------------------------------


def test_an_edit_keeping_size_and_mtime_is_seen_by_the_cli(tmp_path, user_cache, capsys):
    vault = make_vault(tmp_path / "vault")
    assert main(["search", "compost", "--vault", str(vault)]) == 0
    capsys.readouterr()
    page = vault / "Garden.md"
    st = os.stat(page)
    page.write_text(PAGES["Garden.md"].replace("compost", "mulchy!"), encoding="utf-8")  # same size
    os.utime(page, ns=(st.st_atime_ns, st.st_mtime_ns))  # `touch -d` back: size and mtime as before
    assert main(["grep", "mulchy", "--vault", str(vault)]) == 0
    assert "Garden" in capsys.readouterr().out


# --- tidy: temp files of killed writers, orphaned workers -------------------------------------


def test_temp_files_of_killed_writers_are_cleaned_at_start_only_ours_only_old(tmp_path, user_cache):
    vault = make_vault(tmp_path / "vault")
    load_vault(str(vault), cache=CacheOptions(True, "user")).commit()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = user_cache / f".index-{dead.pid}-abc123.tmp"  # a writer killed a minute ago
    live = user_cache / f".index-{os.getppid()}-def456.tmp"  # a writer still running
    other = user_cache / "notes.tmp"  # not ours
    for f in (stale, live, other):
        f.write_bytes(b"x" * 1000)
        os.utime(f, (time.time() - 60, time.time() - 60))
    (vault / "Home.md").write_text(PAGES["Home.md"] + "more\n")  # a change: the index is written again
    load_vault(str(vault), cache=CacheOptions(True, "user")).commit()
    assert not stale.exists() and live.exists() and other.exists()


def test_a_parse_worker_whose_parent_died_exits_quietly(tmp_path):
    vault = make_vault(tmp_path / "vault")
    proc = subprocess.Popen([sys.executable, "-I", "-c", _WORKER_CODE], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the parent is gone: nobody reads the reply
    request = marshal.dumps((str(vault), ["Home.md", "Garden.md"], [None, None], False, None, "pages",
                             schema_version()))
    proc.stdin.write(len(request).to_bytes(8, "little") + request)
    proc.stdin.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def _ask_worker(request: tuple) -> tuple:
    proc = subprocess.Popen([sys.executable, "-I", "-c", _WORKER_CODE], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    data = marshal.dumps(request)
    out, _ = proc.communicate(len(data).to_bytes(8, "little") + data, timeout=60)
    return marshal.loads(out[8 : 8 + int.from_bytes(out[:8], "little")])


@pytest.mark.timeout(120)
def test_a_parse_worker_of_another_install_says_so_and_the_pages_are_parsed_here(tmp_path, monkeypatch, caplog):
    """A server started before vaultlens was upgraded starts its parse workers from the new
    install: their records would not decode in it. A worker asked for another index schema
    answers so, and its groups are parsed in-process: the same vault, a warning, no crash."""
    from vaultlens.engine import scan

    vault = make_vault(tmp_path / "vault", {f"p{i}.md": f"# Page {i}\n\nriver [[p{i + 1}]]\n" for i in range(300)})
    request = (str(vault), ["p1.md", "p2.md"], [None, None], False, None, "pages")
    assert _ask_worker((*request, schema_version()))[0] is True  # the same install: records
    refused = _ask_worker((*request, "an older one"))
    assert refused[0] is False and "another vaultlens install" in refused[1]
    expected = load_vault(str(vault), cache=CacheOptions(enabled=False), workers=0).vault
    monkeypatch.setattr(scan, "schema_version", lambda: "an older one")  # this process is the other install
    with caplog.at_level(logging.WARNING, logger="vaultlens"):
        got = load_vault(str(vault), cache=CacheOptions(enabled=False), workers=2).vault
    assert sum("another vaultlens install" in r.getMessage() for r in caplog.records) >= 1
    assert sorted(got.pages) == sorted(expected.pages)
    assert all(got.pages[p] == expected.pages[p] and got.fields[p] == expected.fields[p] for p in expected.pages)
