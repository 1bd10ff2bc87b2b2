"""Fixtures for the end-to-end tests: a copied vault and the real server behind pytest-lsp.

``client`` is a session on a private copy of ``examples/vault``, already indexed; each test
gets its own server process and its own copy, so tests that edit never share state.
``bare_client`` is a started server with no session yet, for tests that bring their own vault.
``ro_client`` (on ``ro_vault``) is one session shared by the tests of a module that only read;
such a module runs its tests in the module's event loop (``pytest.mark.asyncio(loop_scope="module")``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the helpers module sits next to this file (any import mode)
    sys.path.insert(0, str(HERE))

from e2e_support import EXAMPLE_VAULT, SERVER, copy_vault, start_session  # noqa: E402


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A server answer that breaks the client's declared capabilities fails the test."""
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.filterwarnings("error::pytest_lsp.checks.LspSpecificationWarning"))


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A private copy of the bundled example vault (33 pages)."""
    return copy_vault(EXAMPLE_VAULT, tmp_path / "vault")


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, vault: Path):
    """A session on the copied example vault, indexed."""
    await start_session(lsp_client, vault)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def bare_client(lsp_client: LanguageClient):
    """A running server without a session: the test calls ``start_session`` itself."""
    yield
    await lsp_client.shutdown_session()  # a no-op when no session was started


@pytest.fixture(scope="module")
def ro_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the example vault shared by one module's read-only tests."""
    return copy_vault(EXAMPLE_VAULT, tmp_path_factory.mktemp("ro") / "vault")


@pytest_lsp.fixture(config=SERVER, scope="module")
async def ro_client(lsp_client: LanguageClient, ro_vault: Path):
    """A session on ``ro_vault`` shared by one module: its tests must not change any state."""
    await start_session(lsp_client, ro_vault)
    yield
    await lsp_client.shutdown_session()
