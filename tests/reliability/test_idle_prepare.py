"""The idle preparation (``lsp/idle.py``): a warm start's stored indexes are read in the short
pauses a client leaves (``read_quiet``: the pause asked grows with the index), never while it
keeps the server busy; the converter's hooks for every message class the server reads or
writes are made ahead of the first message of each kind (``prepare_protocol``).

Driven with a stand-in for the server's three signals (time since the last message, a message
waiting, a request running), which is all the scheduler reads; the vault and the protocol are
real."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from vaultlens.engine.cache import CacheOptions
from vaultlens.engine.scan import load_vault
from vaultlens.engine.vault import INDEX_NAMES, REQUESTED_INDEXES
from vaultlens.lsp import idle
from vaultlens.lsp.app import build_server
from vaultlens.lsp.server import SENT, TYPING

NAMES = (*INDEX_NAMES, "by_path")  # every stored index; the idle preparation reads REQUESTED_INDEXES


class _Worker:
    def busy(self) -> bool:
        return False


class _Server:
    """What the idle preparation reads of a ``VaultServer``."""

    def __init__(self, quiet: float) -> None:
        self.quiet = quiet
        self.worker = _Worker()

    def quiet_for(self) -> float:
        return self.quiet

    def input_pending(self) -> bool:
        return False


class _State:
    def __init__(self, vault) -> None:
        self.vault = vault


@pytest.fixture
def warm_vault(tmp_path):
    """A vault as a warm start leaves it: every index as stored."""
    for i in range(30):
        (tmp_path / f"p{i}.md").write_text(
            f"---\naliases: [alias {i}]\n---\n# Page {i}\n\nriver [[p{(i + 1) % 30}]] {'stone ' * i}#tag{i % 3}\n",
            encoding="utf-8")
    options = CacheOptions(location=str(tmp_path / "cache"))
    load_vault(str(tmp_path), cache=options).commit()
    return load_vault(str(tmp_path), cache=options).vault


def test_an_unread_index_gives_its_stored_size_until_read(warm_vault, tmp_path):
    sizes = {name: warm_vault.unread_index(name) for name in NAMES}
    assert all(size > 0 for size in sizes.values()), sizes
    warm_vault.prepare_index("by_title")
    assert warm_vault.unread_index("by_title") == 0
    assert warm_vault.unread_index("postings") == sizes["postings"]  # the others stay as stored
    built = load_vault(str(tmp_path), cache=CacheOptions(enabled=False)).vault
    assert [built.unread_index(name) for name in NAMES] == [0] * len(NAMES)  # built in memory


def test_the_quiet_asked_before_a_read_grows_with_the_index_and_is_bounded():
    asked = [idle.read_quiet(size) for size in (0, 10_000, 400_000, 2_000_000, 3_000_000, 10**9)]
    assert asked == sorted(asked)
    assert asked[0] == asked[2] == idle.PREPARE_QUIET  # most indexes at 10,000 pages: a short pause
    assert idle.PREPARE_QUIET < asked[3] < idle.IDLE
    assert asked[-1] == idle.IDLE


async def test_a_short_pause_reads_the_small_stored_indexes_and_a_busy_client_none(warm_vault, monkeypatch):
    monkeypatch.setattr(idle, "PAUSE", 0.001)
    server = _Server(quiet=0.0)  # a message just came, and they keep coming
    task = asyncio.ensure_future(idle.prepare_vault(server, _State(warm_vault)))  # type: ignore[arg-type]
    try:
        await asyncio.sleep(0.05)
        assert all(warm_vault.unread_index(name) > 0 for name in REQUESTED_INDEXES)  # none read meanwhile
        # a pause longer than PREPARE_QUIET and shorter than IDLE: enough for indexes this small
        server.quiet = (idle.PREPARE_QUIET + idle.IDLE) / 2
        await asyncio.wait_for(task, 5)
        assert [name for name in NAMES if warm_vault.unread_index(name)] == ["_path_holders"]
    finally:
        task.cancel()


async def test_a_pause_then_unpacks_the_name_keys_and_decodes_every_page_fields_first(warm_vault, monkeypatch):
    from vaultlens.engine.compact import _get_fields_chunk, _get_page_chunk
    from vaultlens.engine.vault import PREPARED_KEYS

    def waiting(get, of) -> list[str]:  # pages (or fields) still as stored
        out = []
        for path in warm_vault.sorted_paths():
            try:
                get(of[path])
            except AttributeError:
                continue
            out.append(path)
        return out

    paths = warm_vault.sorted_paths()
    for name in PREPARED_KEYS:
        warm_vault.prepare_index(name)
        assert warm_vault.packed_keys(name)  # a warm start leaves them packed
    seen: list[tuple[str, object]] = []  # (step, fields and pages still waiting then)
    for step in ("prepare_key", "prepare", "prepare_page"):
        method = getattr(warm_vault, step)

        def spy(*args, step=step, method=method):  # noqa: ANN002, ANN202
            if not seen or seen[-1][0] != step:
                seen.append((step, (len(waiting(_get_fields_chunk, warm_vault.fields)),
                                    len(waiting(_get_page_chunk, warm_vault.pages)))))
            return method(*args)

        monkeypatch.setattr(warm_vault, step, spy)
    monkeypatch.setattr(idle, "PAUSE", 0.001)
    server = _Server(quiet=idle.IDLE)
    await asyncio.wait_for(idle.prepare_vault(server, _State(warm_vault)), 5)  # type: ignore[arg-type]
    assert [step for step, _ in seen] == ["prepare_key", "prepare", "prepare_page"]
    assert dict(seen)["prepare_page"] == (0, len(paths))  # every page's fields first, then the pages
    assert all(not warm_vault.packed_keys(name) for name in PREPARED_KEYS)
    assert waiting(_get_fields_chunk, warm_vault.fields) == waiting(_get_page_chunk, warm_vault.pages) == []


async def test_a_large_index_waits_for_a_longer_pause(warm_vault, monkeypatch):
    monkeypatch.setattr(idle, "PAUSE", 0.001)
    largest = max(REQUESTED_INDEXES, key=warm_vault.unread_index)
    # a slower reader: the largest index now asks for IDLE of quiet, the smaller ones for less
    monkeypatch.setattr(idle, "READ_QUIET", warm_vault.unread_index(largest) / idle.IDLE / 1000)
    server = _Server(quiet=idle.IDLE * 0.9)
    task = asyncio.ensure_future(idle.prepare_vault(server, _State(warm_vault)))  # type: ignore[arg-type]
    try:
        await asyncio.sleep(0.1)
        assert warm_vault.unread_index(largest) > 0  # read last (smallest first), and not in this pause
        assert any(warm_vault.unread_index(name) == 0 for name in REQUESTED_INDEXES if name != largest)
        server.quiet = idle.IDLE
        await asyncio.wait_for(task, 5)
        assert warm_vault.unread_index(largest) == 0
    finally:
        task.cancel()


def _made(makers) -> list[tuple[str, type]]:
    """``(hook kind, class)`` of each hook maker (``ProtocolBase.hook_makers``)."""
    return [(maker.args[0].__name__, maker.args[1]) for maker in makers]


def test_hooks_are_made_for_each_message_class_once_the_typing_ones_first():
    server = build_server()
    typing_first, rest = server.protocol.hook_makers(TYPING, SENT)
    made = _made(typing_first) + _made(rest)
    assert len(made) == len(set(made))
    read = [kind for how, kind in made if how == "get_structure_hook"]
    written = [kind for how, kind in made if how == "get_unstructure_hook"]
    # what the client sends, with what its fields hold; what the server answers and sends
    for kind in (types.CompletionRequest, types.CompletionParams, types.CompletionContext, types.Position,
                 types.DidChangeTextDocumentNotification, types.RenameRequest, types.ConfigurationResponse):
        assert kind in read, kind
    for kind in (types.CompletionResponse, types.CompletionList, types.CompletionItem, types.TextEdit,
                 types.HoverResponse, types.MarkupContent, types.PublishDiagnosticsNotification,
                 types.RegistrationRequest, types.WorkspaceEdit):
        assert kind in written, kind
    assert types.PublishDiagnosticsNotification not in read  # the server sends it, never reads it
    assert read.index(types.CompletionRequest) < read.index(types.RenameRequest)
    assert written.index(types.CompletionResponse) < written.index(types.RenameResponse)


def test_making_every_hook_leaves_the_same_messages_read_and_written():
    message = {"jsonrpc": "2.0", "id": 7, "method": "textDocument/completion",
               "params": {"textDocument": {"uri": "file:///v/a.md"}, "position": {"line": 3, "character": 4},
                          "context": {"triggerKind": 1}}}
    answer = types.CompletionResponse(id=7, result=types.CompletionList(is_incomplete=True, items=[
        types.CompletionItem(label="A", text_edit=types.TextEdit(
            range=types.Range(types.Position(3, 2), types.Position(3, 4)), new_text="[[A]]"))]))
    plain = build_server().protocol
    prepared = build_server().protocol
    for makers in prepared.hook_makers(TYPING, SENT):
        for make in makers:
            make()
    assert prepared.structure(message) == plain.structure(message)
    assert prepared._converter.unstructure(answer) == plain._converter.unstructure(answer)


async def test_the_protocol_is_prepared_in_pauses_the_typing_part_before_the_pages(monkeypatch):
    monkeypatch.setattr(idle, "PAUSE", 0.001)
    server = build_server()
    made: list[str] = []
    monkeypatch.setattr(type(server.protocol), "hook_makers", lambda self, first, sent: (
        iter([lambda: made.append("typing")] * 3), iter([lambda: made.append("rest")] * 3)))
    quiet = [0.0]
    monkeypatch.setattr(server, "quiet_for", lambda: quiet[0])
    pages = asyncio.get_running_loop().create_future()  # the vault's preparation, still running
    task = asyncio.ensure_future(idle.prepare_protocol(server, pages))
    try:
        await asyncio.sleep(0.05)
        assert made == []  # messages keep coming
        quiet[0] = idle.PREPARE_QUIET
        await asyncio.sleep(0.05)
        assert made == ["typing"] * 3  # the rest waits for the pages
        pages.set_result(None)
        await asyncio.wait_for(task, 5)
        assert made == ["typing"] * 3 + ["rest"] * 3
    finally:
        task.cancel()
