"""Fixtures for the end-to-end tests: a copied vault and the real server behind pytest-lsp.

``client`` is a session on a private copy of ``examples/vault``, already indexed; each test
gets its own server process and its own copy: for tests that change files on disk.
``bare_client`` is a started server with no session yet, for tests that bring their own vault.
``shared_client`` (on ``shared_vault``) is one session for all the tests of a module, which
saves a server start per test. Such a module runs its tests in the module's event loop
(``pytestmark = pytest.mark.asyncio(loop_scope="module")``) and leaves no state behind: it
never writes to disk and opens buffers only through ``buffers``, which closes them after each
test, so every page is the disk's again.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the helpers module sits next to this file (any import mode)
    sys.path.insert(0, str(HERE))

from e2e_support import EXAMPLE_VAULT, SERVER, copy_vault, open_doc, start_session
from e2e_support import bare_client, client  # noqa: F401 - fixtures: a session on ``vault``, a bare server


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A server answer that breaks the client's declared capabilities fails the test."""
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(
                pytest.mark.filterwarnings("error::pytest_lsp.checks.LspSpecificationWarning")
            )


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A private copy of the bundled example vault (33 pages)."""
    return copy_vault(EXAMPLE_VAULT, tmp_path / "vault")


@pytest.fixture(scope="module")
def shared_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the example vault for one module's tests (never written to)."""
    return copy_vault(EXAMPLE_VAULT, tmp_path_factory.mktemp("shared") / "vault")


@pytest_lsp.fixture(config=SERVER, scope="module")
async def shared_client(lsp_client: LanguageClient, shared_vault: Path):
    """One session on ``shared_vault`` for a whole module (see the module docstring)."""
    await start_session(lsp_client, shared_vault)
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def buffers(
    shared_client: LanguageClient, shared_vault: Path
) -> Iterator[Callable[..., tuple[str, str]]]:
    """``open(rel, text=None) -> (uri, text)``: didOpen a page of ``shared_vault`` for this test.

    Every buffer is closed when the test ends, passed or failed, and its page reverts to the
    disk (or disappears, for a page that exists only as a buffer).
    """
    opened: list[str] = []

    def open_buffer(rel: str, text: str | None = None) -> tuple[str, str]:
        uri, text = open_doc(shared_client, shared_vault, rel, text)
        opened.append(uri)
        return uri, text

    yield open_buffer
    for uri in opened:
        shared_client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
