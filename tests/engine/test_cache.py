"""The persistent index and the compact page records: a warm load equals a cold one, always.

Every test works on a copy of a vault in tmp_path with the index in tmp_path too (the
session-wide VAULTLENS_CACHE_DIR of tests/conftest.py is overridden per test).
"""

from __future__ import annotations

import dataclasses
import marshal
import os
import pickle
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from vaultkit import vault_state, write_vault

from vaultlens.engine import cache, scan
from vaultlens.engine.cache import CacheOptions, cache_paths, open_cache
from vaultlens.engine.compact import (
    CompactPage, LazyFields, Unpacked, decode_fields, decode_page, encode_fields, encode_page, link_kinds,
    piped_links,
)
from vaultlens.engine.fields import page_fields
from vaultlens.engine.model import Page
from vaultlens.engine.scan import list_pages, load_pages, load_vault, open_vault
from vaultlens.engine.pathindex import SplitValues, positions, split_entry
from vaultlens.engine.vault import PathIndex

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "vault"


@pytest.fixture
def vault(tmp_path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".vaultlens"))
    old = time.time() - 3600  # older than the racy window
    for page in root.rglob("*.md"):
        os.utime(page, (old, old))
    return root


@pytest.fixture(params=["whole", "split"])
def options(request, tmp_path, monkeypatch) -> CacheOptions:
    """Where the index goes; with "split" every key -> paths entry is stored split (its values
    read key by key, ``pathindex.SplitValues``), as only the large ones are by default."""
    if request.param == "split":
        _split_everything(monkeypatch)
    return CacheOptions(True, str(tmp_path / "index"))


def _split_everything(monkeypatch) -> None:
    """Store every key -> paths entry split, however small."""
    monkeypatch.setattr(cache, "SPLIT_BYTES", 0)
    monkeypatch.setattr(cache, "SPLIT_MEAN", 0)


def fresh(root: Path):
    return open_vault(str(root), cache=CacheOptions(enabled=False))[0]


def load(root: Path, options: CacheOptions, **kw):
    loaded = load_vault(str(root), cache=options, **kw)
    loaded.commit()
    return loaded


# --- records ----------------------------------------------------------------------------------


def test_a_decoded_record_is_the_page_it_was_encoded_from():
    pages = load_pages(str(EXAMPLES), list_pages(str(EXAMPLES)).paths)
    unpacked = Unpacked(limit=2)  # smaller than the vault: pages are unpacked again and again
    compact = [decode_page(marshal.loads(marshal.dumps(encode_page(p))), unpacked) for p in pages]
    for _ in range(2):
        for page, c in zip(pages, compact):
            assert isinstance(c, CompactPage)
            assert c == page and page == c and hash(c) == hash(page)
            assert c.meta == page.meta and c.links == page.links and c.headings == page.headings
            assert type(pickle.loads(pickle.dumps(c))) is Page and pickle.loads(pickle.dumps(c)) == page
            assert dataclasses.replace(c, title="x") == dataclasses.replace(page, title="x")
    for page in pages:
        fields = page_fields(page)
        assert decode_fields(marshal.loads(marshal.dumps(encode_fields(fields))), {}) == fields


def test_link_targets_are_unmarshalled_when_first_read_and_shared_while_the_load_lasts():
    """A record holds a page's link targets and piped links marshalled (a request seldom reads
    them, and they were half of what a record took to decode): ``link_kinds`` and
    ``piped_links`` give what the page itself gives, and equal pairs of two pages decoded in one
    load become one object while its table lasts (``Unpacked.pairs``)."""
    pages = [p for p in load_pages(str(EXAMPLES), list_pages(str(EXAMPLES)).paths) if link_kinds(p)]
    unpacked = Unpacked()
    unpacked.pairs = {}
    compact = [decode_page(marshal.loads(marshal.dumps(encode_page(p))), unpacked) for p in pages]
    assert all(type(c._targets) is bytes for c in compact)  # not unmarshalled with the record
    for page, c in zip(pages, compact):
        assert link_kinds(c) == link_kinds(page) and link_kinds(c) is link_kinds(c)  # made once
        assert piped_links(c) == piped_links(page)
    pairs = [pair for c in compact for pair in link_kinds(c)]
    assert len(pairs) > len({*pairs})  # a pair more than one page has ...
    assert len({id(pair) for pair in pairs}) == len({*pairs})  # ... is one object
    alone = Unpacked()  # after the load: each page's own
    again = [decode_page(marshal.loads(marshal.dumps(encode_page(p))), alone) for p in pages]
    assert [link_kinds(c) for c in again] == [link_kinds(p) for p in pages]
    assert not any(c._piped for c in again if not piped_links(c))  # none: no blob either


def test_path_index_changes_fold_into_its_tuples():
    index = PathIndex.from_lists({"a": ["p1", "p2"], "b": ["p1"]})
    assert index.add("a", "p3") is False and index.add("c", "p1") is True
    assert index.discard("b", "p1") is True and "b" not in index
    assert index.discard("a", "p1") is False
    assert sorted(index["a"]) == ["p2", "p3"] and index.count("a") == 2
    index.add("a", "p1")
    assert sorted(index.get("a")) == ["p1", "p2", "p3"] and dict(index.items()) == {"a": index["a"], "c": ("p1",)}


_PATHS = st.sampled_from(["p1", "p2", "p3", "p4"])


def _split_index(start: dict[str, set[str]], table: tuple[str, ...], model: dict[str, set[str]], damaged: list):
    """``start`` as a split entry's index reads it (``SplitValues``), from a region in memory
    (returned, to be damaged); made again from ``model`` (the pages as they are) when damaged."""
    position = positions(table)
    packed = {key: b"".join(position[p] for p in sorted(paths)) for key, paths in start.items()}
    region = bytearray(b"".join(packed.values()))
    places, starts, digests = split_entry(packed)
    rebuild = lambda name: ("paths", {k: tuple(sorted(v)) for k, v in model.items() if v})  # noqa: E731
    split = SplitValues("postings", lambda at, n: bytes(region[at : at + n]), 0, starts, digests, damaged.append, rebuild)
    return PathIndex.from_split(places, table, split), region


@settings(max_examples=150)
@given(
    st.dictionaries(st.sampled_from("abc"), st.sets(_PATHS, min_size=1), max_size=3),
    st.lists(st.tuples(st.sampled_from(["flip", "read", "list", "settle", "pack", "damage"]), st.sampled_from("abcd"), _PATHS)),
    st.booleans(),
)
# a damaged stored value read after a change to its key, filed and unfiled (rare draws)
@example({"a": {"p1"}}, [("damage", "a", "p1"), ("flip", "a", "p2"), ("read", "a", "p1")], True)
@example({"a": {"p1", "p2"}, "b": {"p1"}}, [("damage", "a", "p1"), ("flip", "a", "p1"), ("flip", "b", "p1"), ("list", "a", "p1")], True)
def test_a_path_index_reads_what_was_filed_whatever_the_order_of_reads_and_writes(start, steps, split):
    model = {key: set(paths) for key, paths in start.items()}
    table: tuple[str, ...] = tuple(sorted({p for paths in start.values() for p in paths}))
    damaged: list[str] = []
    if split:  # read from the index file key by key, checked, and made again when damaged
        index, region = _split_index(start, table, model, damaged)
    else:
        index, region = PathIndex.from_lists({key: sorted(paths) for key, paths in start.items()}), bytearray()
    for step, key, path in steps:
        if step == "damage":  # every byte still stored changed: a read of one is never believed
            region[:] = bytes(b ^ 0xFF for b in region)
            continue
        if step == "flip":  # file the path under the key, or unfile it when it is there
            held = model.setdefault(key, set())
            if path in held:
                held.discard(path)
                assert index.discard(key, path) is (not held)
            else:
                held.add(path)
                assert index.add(key, path) is (len(held) == 1)
            if not held:
                del model[key]
        elif step == "read":
            assert sorted(index.get(key, ())) == sorted(model.get(key, ()))
            assert (key in index) is (key in model) and index.count(key) == len(model.get(key, ()))
        elif step == "list":
            assert len(index) == len(model) and sorted(index) == sorted(model)
            assert {k: sorted(v) for k, v in index.items()} == {k: sorted(v) for k, v in sorted(model.items())}
        elif step == "settle":
            settled = index.settled()  # the plain dict a snapshot stores, the same contents
            assert sorted(settled) == sorted(model)
        else:  # packed against a table that grows (as a snapshot's does), kept packed, read back
            table = (*table, *sorted({p for held in model.values() for p in held} - set(table)))
            packed = index.packed(table, positions(table), adopt=key in "ab")
            again = PathIndex.from_packed(packed, table)
            assert {k: sorted(v) for k, v in again.items()} == {k: sorted(v) for k, v in model.items()}
    # (read in full only at "list" and here: a key left unread stays in the file, to be damaged)
    assert {k: sorted(v) for k, v in index.items()} == {k: sorted(v) for k, v in sorted(model.items())}
    assert all("does not match its digest" in what for what in damaged)


# --- warm equals cold ---------------------------------------------------------------------------


def test_a_warm_load_equals_a_cold_one(vault, options):
    cold = load(vault, options)
    assert cold.parsed == len(cold.vault) and cold.from_cache == 0
    [index_file] = cache_paths(str(vault), options)[:1]
    assert os.path.exists(index_file)
    warm = load(vault, options)
    assert warm.from_cache == len(warm.vault) and warm.parsed == 0 and not warm.changed
    assert vault_state(warm.vault) == vault_state(cold.vault) == vault_state(fresh(vault))
    assert warm.vault.vocabulary == cold.vault.vocabulary


def test_changed_added_and_deleted_files_are_read_again(vault, options):
    load(vault, options)
    (vault / "garden" / "Composting.md").write_text("# Composting\n\nNow about [[Worms]] only.\n", encoding="utf-8")
    (vault / "New Page.md").write_text("---\ntitle: Brand New\n---\nLinks to [[Composting]].\n", encoding="utf-8")
    os.remove(vault / "Home.md")
    warm = load(vault, options)
    assert warm.parsed == 2 and warm.from_cache == len(warm.vault) - 2
    assert vault_state(warm.vault) == vault_state(fresh(vault))
    again = load(vault, options)  # and the rewritten index holds the new state
    assert again.parsed == 0 and vault_state(again.vault) == vault_state(fresh(vault))


@pytest.mark.parametrize("workers", ["1", "2"])  # the listing compared in this process, or in a worker
def test_a_load_checked_later_serves_the_index_then_names_every_changed_page(vault, options, monkeypatch, workers):
    monkeypatch.setenv("VAULTLENS_WORKERS", workers)
    monkeypatch.setattr(scan, "CHECK_WORKER_MIN_PAGES", 0)
    if workers == "2":  # the worker's answer, not a fallback in this process
        monkeypatch.setattr(scan, "compare_listing", None)
    load(vault, options)
    unchanged = load_vault(str(vault), cache=options, check_later=True)
    assert unchanged.unchecked and unchanged.parsed == 0
    assert vault_state(unchanged.vault) == vault_state(fresh(vault))
    assert unchanged.check() == () and not unchanged.unchecked and unchanged.commit() is None
    (vault / "garden" / "Composting.md").write_text("# Composting\n\nNow about [[Worms]] only.\n", encoding="utf-8")
    (vault / "New Page.md").write_text("---\ntitle: Brand New\n---\nLinks to [[Composting]].\n", encoding="utf-8")
    os.remove(vault / "Home.md")
    loaded = load_vault(str(vault), cache=options, check_later=True)
    assert loaded.unchecked and "Home.md" in loaded.vault.pages  # as stored, until checked
    changed = loaded.check()
    assert changed == ("Home.md", "New Page.md", "garden/Composting.md")
    for rel in changed:  # as the server applies them: disk events
        page = scan.load_page(str(vault), rel)
        loaded.vault.remove(rel) if page is None else loaded.vault.upsert(page)
    assert vault_state(loaded.vault) == vault_state(fresh(vault))
    assert loaded.commit() is not None  # the index stored again
    again = load(vault, options)
    assert again.parsed == 0 and not again.changed and vault_state(again.vault) == vault_state(fresh(vault))


def test_a_load_checked_later_without_an_index_is_a_checked_one(vault, options):
    cold = load_vault(str(vault), cache=options, check_later=True)
    assert not cold.unchecked and cold.parsed == len(cold.vault) and cold.check() == ()


def test_same_size_same_mtime_but_new_content_is_caught_by_ctime(vault, options):
    page = vault / "garden" / "Composting.md"
    load(vault, options)  # the index's scan time is now: every file is old, none is racy
    text = page.read_text(encoding="utf-8")
    st = os.stat(page)
    page.write_text(text.replace("compost", "kompost", 1), encoding="utf-8")
    os.utime(page, ns=(st.st_atime_ns, st.st_mtime_ns))  # size and mtime as before; ctime moved
    fixed = load(vault, options)
    assert fixed.parsed == 1 and vault_state(fixed.vault) == vault_state(fresh(vault))


def test_a_touched_file_is_reused_by_its_content_hash(vault, options):
    load(vault, options)
    os.utime(vault / "Home.md")
    warm = load(vault, options)
    assert warm.parsed == 0 and warm.changed  # same content: reused, and the new mtime stored
    assert not load(vault, options).changed


# --- records decoded on first use, parts out of line ----------------------------------------------

_BODY_TEXT = b"A heap should feel like a wrung-out sponge"  # in garden/Composting.md's body only


def _flip_in_place(path: Path, offset: int, length: int = 1) -> None:
    """Change ``length`` bytes at ``offset`` of the index file, in place (the same file, under
    a running vault)."""
    with open(path, "r+b") as fh:
        fh.seek(offset)
        data = fh.read(length)
        fh.seek(offset)
        fh.write(bytes(b ^ 0xFF for b in data))


def _dropped_then_rebuilt(vault: Path, options: CacheOptions, path: Path, pages: int) -> None:
    """The damaged index file is gone; the next start parses every page and stores it again."""
    assert not path.exists()
    assert load(vault, options).parsed == pages
    assert load(vault, options).parsed == 0


def _pages_in_order(vault, paths):
    """Each page and its fields read, in the order of ``paths``, as plain comparable data."""
    return {p: (vault.pages[p], vault.pages[p].body, vault.pages[p].links, vault.pages[p].headings,
                vault.pages[p].meta, vault.fields[p]) for p in paths}


@pytest.mark.timeout(120)
def test_lazily_decoded_pages_equal_eagerly_decoded_ones_in_any_order(vault, options):
    load(vault, options)
    eager = fresh(vault)
    paths = sorted(eager.pages)
    for order in (paths, paths[::-1], paths[1::2] + paths[::2]):
        warm = load(vault, options)
        assert warm.from_cache == len(paths) and not warm.changed
        fields = warm.vault.fields[order[0]]
        assert type(fields) is LazyFields  # a placeholder until read
        assert _pages_in_order(warm.vault, order) == _pages_in_order(eager, order)
        assert fields == eager.fields[order[0]] and eager.fields[order[0]] == fields
        assert type(pickle.loads(pickle.dumps(fields))).__name__ == "PageFields"
        assert type(pickle.loads(pickle.dumps(warm.vault.pages[order[0]]))) is Page
    assert vault_state(load(vault, options).vault) == vault_state(eager)


@pytest.mark.timeout(120)
def test_a_body_is_not_stored_in_the_tagged_records_and_a_damaged_one_is_never_used(vault, options, caplog):
    load(vault, options)
    path = Path(cache_paths(str(vault), options)[0])
    data = path.read_bytes()
    assert data.count(_BODY_TEXT) == 1  # once, in the chunk's region, not in its records
    at = data.index(_BODY_TEXT)
    path.write_bytes(data[:at] + b"B" + data[at + 1 :])  # the records and their tags are intact
    warm = load(vault, options)
    assert warm.from_cache == len(warm.vault)  # nothing read at the start shows it
    with caplog.at_level("WARNING", logger="vaultlens"):
        body = warm.vault.pages["garden/Composting.md"].body
    assert _BODY_TEXT.decode() in body and body == fresh(vault).pages["garden/Composting.md"].body
    assert any("does not match" in r.getMessage() for r in caplog.records)
    assert vault_state(warm.vault) == vault_state(fresh(vault))
    _dropped_then_rebuilt(vault, options, path, len(warm.vault))


@pytest.mark.timeout(120)
def test_records_changed_after_the_start_are_not_believed(vault, options):
    load(vault, options)
    warm = load(vault, options)  # placeholders only: no page decoded yet
    _flip_in_place(Path(cache_paths(str(vault), options)[0]), 20)
    assert vault_state(warm.vault) == vault_state(fresh(vault))  # the chunk's pages parsed again


def _first_record(vault: Path, options: CacheOptions) -> tuple[Path, int, str]:
    """The vault's index file (stored here), the offset of the middle of its first page's
    record, and that page's path."""
    from vaultlens.engine.compact import _ENTRY

    load(vault, options)
    path = Path(cache_paths(str(vault), options)[0])
    stored = open_cache([str(path)])
    chunk = stored.chunks[0]
    raw, base = stored.read_records(chunk)
    stored.close()
    offset, length, _digest = _ENTRY.unpack_from(raw, 0)
    return path, base + offset + length // 2, chunk.paths[0]


@pytest.mark.timeout(120)
def test_a_record_changed_after_the_start_is_not_believed_when_only_its_fields_are_read(vault, options):
    path, at, first = _first_record(vault, options)
    warm = load(vault, options).vault
    _flip_in_place(path, at)
    expected = fresh(vault)
    assert warm.fields[first] == expected.fields[first]  # its fields first: parsed again, page and all
    assert warm.pages[first] == expected.pages[first]
    assert vault_state(warm) == vault_state(expected)


@pytest.mark.timeout(120)
def test_a_record_changed_after_its_fields_were_read_is_not_believed_for_its_page(vault, options):
    path, at, first = _first_record(vault, options)
    warm = load(vault, options).vault
    expected = fresh(vault)
    assert warm.fields[first] == expected.fields[first]  # decoded alone, from the record as stored
    _flip_in_place(path, at)  # then the record changes under it
    assert warm.pages[first] == expected.pages[first]  # the page: parsed again
    assert warm.fields[first] == expected.fields[first]
    assert vault_state(warm) == vault_state(expected)


@pytest.mark.timeout(120)
def test_a_warm_start_decodes_only_the_pages_that_are_read(vault, options):
    from vaultlens.engine.compact import _get_fields_chunk, _get_page_chunk

    def waiting(v, get=_get_page_chunk, of="pages") -> list[str]:  # pages (or fields) not decoded yet
        out = []
        for path in v.sorted_paths():
            try:
                get(getattr(v, of)[path])
            except AttributeError:
                continue
            out.append(path)
        return out

    load(vault, options)
    warm = load(vault, options).vault
    paths = warm.sorted_paths()
    assert len(paths) > 3 and waiting(warm) == paths == waiting(warm, _get_fields_chunk, "fields")
    assert warm.pages[paths[1]].title == fresh(vault).pages[paths[1]].title
    assert waiting(warm) == [paths[0], *paths[2:]]  # its chunk's other pages are left as they are
    assert waiting(warm, _get_fields_chunk, "fields") == [paths[0], *paths[2:]]  # a page's fields come with it
    # the fields alone (what ranking bounds most pages by): the page waits for a read of its own
    assert warm.fields[paths[0]] == fresh(vault).fields[paths[0]]
    assert waiting(warm) == [paths[0], *paths[2:]] and waiting(warm, _get_fields_chunk, "fields") == paths[2:]
    assert warm.pages[paths[0]] == fresh(vault).pages[paths[0]]
    assert waiting(warm) == paths[2:]
    assert warm.fields[paths[2]].title_set == fresh(vault).fields[paths[2]].title_set
    assert warm.pages[paths[2]].body == fresh(vault).pages[paths[2]].body  # the rest, once its fields are in
    assert waiting(warm) == paths[3:]
    assert vault_state(warm) == vault_state(fresh(vault))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", ["postings", "linkers", "by_path", "(links)"])
def test_a_snapshot_piece_damaged_after_the_start_is_made_again_and_the_file_dropped(vault, options, caplog, name):
    load(vault, options)
    path = Path(cache_paths(str(vault), options)[0])
    stored = open_cache([str(path)])
    piece = stored.snapshot[stored.snapshot_names.index((name,))]
    stored.close()
    warm = load(vault, options)  # nothing of the piece read yet
    _flip_in_place(path, piece.offset + piece.length // 2)
    with caplog.at_level("WARNING", logger="vaultlens"):
        if name == "by_path":  # read by a link only its path resolves
            assert warm.vault.link_index.by_path == fresh(vault).link_index.by_path
        assert vault_state(warm.vault) == vault_state(fresh(vault))
    assert any("snapshot piece" in r.getMessage() for r in caplog.records)
    _dropped_then_rebuilt(vault, options, path, len(warm.vault))


@pytest.mark.timeout(120)
def test_a_split_value_damaged_after_the_start_is_never_used_and_the_file_dropped(vault, tmp_path, caplog, monkeypatch):
    _split_everything(monkeypatch)
    options = CacheOptions(True, str(tmp_path / "index"))  # (split either way: not the fixture's two kinds)
    load(vault, options)
    path = Path(cache_paths(str(vault), options)[0])
    stored = open_cache([str(path)])
    kind, (base, places, starts, _digests) = marshal.loads(stored.read(stored.snapshot[stored.snapshot_names.index(("postings",))]))["postings"]
    stored.close()
    assert kind == "split"
    word = "compost"  # a word of several pages: its positions, damaged in place under the running vault
    start, end = SplitValues("postings", None, base, starts, b"").starts[places[word] : places[word] + 2]
    warm = load(vault, options)
    _flip_in_place(path, base + start, end - start)
    warm.vault.upsert(fresh(vault).pages["garden/Composting.md"])  # a change before the read is kept too
    with caplog.at_level("WARNING", logger="vaultlens"):
        assert sorted(warm.vault.postings[word]) == sorted(fresh(vault).postings[word])
        assert vault_state(warm.vault) == vault_state(fresh(vault))
    assert any("does not match its digest" in r.getMessage() for r in caplog.records)
    _dropped_then_rebuilt(vault, options, path, len(warm.vault))


@pytest.mark.timeout(120)
def test_a_file_read_whole_at_load_reads_its_split_entries_too(vault, options, monkeypatch):
    load(vault, options)
    monkeypatch.setattr(scan, "LAZY_BODIES", False)  # as on Windows: every piece read at the load
    monkeypatch.setattr(cache, "LAZY_BODIES", False)
    warm = load(vault, options)
    assert warm.from_cache == len(warm.vault)
    assert vault_state(warm.vault) == vault_state(fresh(vault))


@pytest.mark.timeout(120)
def test_a_cold_load_reads_parts_back_from_the_file_it_wrote(vault, options):
    cold = load_vault(str(vault), cache=options, workers=1)
    page = cold.vault.pages["garden/Composting.md"]
    assert _BODY_TEXT.decode() in page.body
    cold.commit()
    assert vault_state(cold.vault) == vault_state(fresh(vault))
    assert load(vault, options).parsed == 0


@pytest.mark.parametrize("damage", ["truncate", "garbage", "flip", "empty"])
def test_a_damaged_index_is_ignored_and_rebuilt(vault, options, damage):
    load(vault, options)
    path = Path(cache_paths(str(vault), options)[0])
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(b"\0" * len(data))
    elif damage == "flip":
        path.write_bytes(data[:100] + bytes([data[100] ^ 0xFF]) + data[101:])
    else:
        path.write_bytes(b"")
    again = load(vault, options)
    assert vault_state(again.vault) == vault_state(fresh(vault))
    assert load(vault, options).parsed == 0  # rebuilt


def test_an_index_of_another_schema_is_ignored(vault, options, monkeypatch):
    load(vault, options)
    monkeypatch.setattr("vaultlens.engine.cache.schema_version", lambda: "another version")
    assert open_cache(cache_paths(str(vault), options)) is None
    assert load(vault, options).parsed == len(fresh(vault))


def test_an_unwritable_location_falls_back_to_the_user_cache(vault, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the index folder would go")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    options = CacheOptions(True, str(blocker / "sub"))
    load(vault, options)
    assert list((tmp_path / "xdg" / "vaultlens").glob("*.vlc"))
    assert load(vault, options).parsed == 0


def test_nowhere_to_write_means_no_index_and_no_error(vault, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker / "xdg"))
    options = CacheOptions(True, str(blocker / "sub"))
    assert load(vault, options).parsed == len(fresh(vault))
    assert load(vault, options).parsed == len(fresh(vault))


def test_the_old_vault_location_writes_nothing_in_the_vault(vault):
    assert load(vault, CacheOptions(True, "vault")).commit is not None
    assert not (vault / ".vaultlens").exists()


def test_disabled_means_nothing_is_written(vault, tmp_path, monkeypatch):
    monkeypatch.setenv("VAULTLENS_CACHE", "0")
    monkeypatch.setenv("VAULTLENS_CACHE_DIR", str(tmp_path / "index"))
    open_vault(str(vault))
    assert not (tmp_path / "index").exists()
    assert CacheOptions.from_env().enabled is False


def test_the_cli_no_cache_flag(vault, tmp_path):
    env = {**os.environ, "VAULTLENS_CACHE_DIR": str(tmp_path / "index"), "PYTHONPATH": str(REPO)}
    run = lambda *extra: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "vaultlens.lsp", "search", "compost", "--vault", str(vault), "--json", *extra],
        capture_output=True, text=True, env=env, check=True,
    ).stdout
    plain = run("--no-cache")
    assert not (tmp_path / "index").exists()
    assert run() == plain == run()  # written, then read: the same bytes out
    assert list((tmp_path / "index").glob("*.vlc"))


# --- workers and link order ------------------------------------------------------------------------


def test_worker_processes_parse_the_same_vault(vault, options, monkeypatch):
    monkeypatch.setattr(scan, "GROUP_PAGES", 5)
    in_process = load_vault(str(vault), cache=CacheOptions(enabled=False), workers=1).vault
    parallel = load_vault(str(vault), cache=options, workers=2)
    assert parallel.parsed == len(in_process)
    assert vault_state(parallel.vault) == vault_state(in_process)
    parallel.commit()
    assert vault_state(load(vault, options).vault) == vault_state(in_process)


def test_a_dendron_vault_is_detected_and_cached_label_first(tmp_path, options):
    files = {f"n{i}.md": f"---\ntitle: Note {i}\n---\nsee [[next one|n{i + 1}]] and [[back|n{i - 1}]]" for i in range(1, 8)}
    root = write_vault(tmp_path / "dendron", files)
    cold = load(root, options)
    assert cold.vault.label_first is True
    warm = load(root, options)
    assert warm.vault.label_first is True and warm.parsed == 0
    assert vault_state(warm.vault) == vault_state(cold.vault)
    forced = load(root, CacheOptions(True, options.location), link_order="target-first")
    assert forced.vault.label_first is False and forced.parsed == len(files)


def test_a_forced_link_order_does_not_stick_to_later_automatic_loads(tmp_path, options):
    # `--link-order target-first` once on a Dendron vault stores target-first records; the next
    # automatic load of the unchanged vault must still detect label-first, not inherit the force.
    files = {f"n{i}.md": f"---\ntitle: Note {i}\n---\nsee [[next one|n{i + 1}]] and [[back|n{i - 1}]]" for i in range(1, 8)}
    root = write_vault(tmp_path / "dendron", files)
    forced = load(root, options, link_order="target-first")
    assert forced.vault.label_first is False
    auto = load(root, options)
    assert auto.vault.label_first is True
    assert vault_state(auto.vault) == vault_state(load_vault(str(root), cache=CacheOptions(enabled=False)).vault)
    again = load(root, options)  # the detected order is what is stored now: nothing parsed
    assert again.vault.label_first is True and again.parsed == 0
