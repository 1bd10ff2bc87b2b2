"""Every command in README.md's shell blocks runs as written, on the bundled examples/vault.

A block's commands run in order in a copy of the checkout, with a fresh home folder, so `cd`,
`~` and `$PWD` mean what they would for a new user in their clone. `vaultlens` is the test
venv's console script. The README's placeholder `/path/to/vault` stands for examples/vault.

What README marks with a `# needs …` comment (a whole block when the comment is its first line,
else the line) is left out: that is something CI does not have (an editor, a client, PyTorch).
Besides that, the only command left out is `make test` (below). Install commands run as
written too, each into a fresh home folder (pipx, uv) or a fresh venv (pip), and then the
installed `vaultlens` must print its version and answer a search from outside the checkout.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest
from installkit import (
    REPO,
    TEST_BIN,
    Block,
    clean_env,
    fresh_venv,
    run,
    script_python,
    shell_blocks,
)
from vaultlens.engine import __version__

pytestmark = pytest.mark.timeout(900)

README = REPO / "README.md"
PLACEHOLDERS = {"/path/to/vault": "examples/vault"}  # relative to the clone, where commands run
LEFT_OUT = {
    "make test": "it is the command that runs this test (CI runs it through .ci/run)",
}
INSTALLERS = ("pipx install", "uv tool install", "pip install")


BLOCKS = shell_blocks(README.read_text(encoding="utf-8"))


def test_readme_has_its_commands_and_is_short():
    """The extraction finds what README shows (a parser that finds nothing would pass
    everything), and README stays a page a newcomer reads (issue 18: about 300 lines)."""
    codes = [c.code for b in BLOCKS for c in b.commands]
    assert "make run" in codes and "make test" in codes and "pipx install ." in codes
    assert sum(c.startswith("vaultlens ") for c in codes) >= 8
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 300


def _substitute(code: str) -> str:
    for placeholder, value in PLACEHOLDERS.items():
        code = code.replace(placeholder, value)
    return code


def _check_installed(vaultlens: Path, clone: Path, env: dict[str, str], where: Path, code: str):
    """The `vaultlens` an install made answers from outside the checkout (and has the extra the
    command asked for)."""
    outside = where / "elsewhere"
    outside.mkdir(exist_ok=True)
    assert vaultlens.exists(), f"{code!r} left no {vaultlens}"
    version = run([str(vaultlens), "--version"], cwd=outside, env=env)
    assert version.stdout.strip() == f"vaultlens {__version__}"
    found = run(
        [
            str(vaultlens),
            "search",
            "graph rag",
            "--vault",
            str(clone / "examples" / "vault"),
            "--json",
        ],
        cwd=outside,
        env=env,
    )
    assert json.loads(found.stdout)["hits"][0]["title"] == "Graph RAG"
    if "[mcp]" in code:
        run([str(script_python(vaultlens)), "-c", "import mcp, watchfiles"], cwd=outside, env=env)


def _install(code: str, clone: Path, cwd: Path, tmp: Path, tools: Path):
    home = tmp / "home"
    home.mkdir()
    if code.startswith("pip install"):
        venv_bin = fresh_venv(tmp / "venv")  # "the virtual environment you have active"
        env = clean_env(home, venv_bin)
        env["VIRTUAL_ENV"] = str(venv_bin.parent)
        installed = venv_bin / "vaultlens"
    else:
        env = clean_env(home, tools)
        installed = home / ".local" / "bin" / "vaultlens"
    run(code, cwd=cwd, env=env, shell=True)
    _check_installed(installed, clone, clean_env(home, installed.parent), tmp, code)


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _mcp_server(code: str, cwd: Path, env: dict[str, str]):
    """`vaultlens mcp …` serves until stopped: over stdio it must answer `initialize`, over
    --http it must listen; then it is stopped."""
    http = re.search(r"--http\s+([\d.]+):(\d+)", code)
    if not http:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "readme-test", "version": "0"},
            },
        }
        proc = run(code, cwd=cwd, env=env, shell=True, timeout=60, input=json.dumps(init) + "\n")
        answer = json.loads(proc.stdout.splitlines()[0])
        assert answer["result"]["serverInfo"]["name"] == "vaultlens", answer
        return
    host, port = http.group(1), int(http.group(2))
    if not _free(port):
        pytest.skip(f"port {port} of README's --http example is taken on this machine")
    proc = subprocess.Popen(
        ["bash", "-c", "exec " + code],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, f"{code!r} exited {proc.returncode}: {proc.stderr.read()}"
            try:
                socket.create_connection((host, port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, f"{code!r} did not listen on {host}:{port}"
                time.sleep(0.2)
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"README.md:{b.line}" for b in BLOCKS])
def test_readme_block_runs(block: Block, clone: Path, tmp_path: Path, request):
    if block.needs:
        pytest.skip(f"needs {block.needs}")
    home = tmp_path / "home"
    home.mkdir()
    env = clean_env(home, TEST_BIN)
    cwd = clone
    ran = 0
    for n, command in enumerate(block.commands):
        code = _substitute(command.code)
        if command.needs or code in LEFT_OUT:
            continue
        ran += 1
        if code.startswith("cd "):
            cwd = (cwd / code[3:].strip()).resolve()
        elif code.startswith(INSTALLERS):
            tools = request.getfixturevalue("tools") if not code.startswith("pip ") else None
            if "dist/" in code:
                request.getfixturevalue("dist")  # `make dist` earlier in the block, once a session
            where = tmp_path / f"install-{n}"
            where.mkdir()
            _install(code, clone, cwd, where, tools)
        elif code == "make dist":
            request.getfixturevalue("dist")
        elif code == "make run":
            # The Makefile's set-up (a venv with the package) is what the test venv is; run the
            # recipe itself with that venv.
            stamp = tmp_path / "installed"
            stamp.touch()
            run(["make", "run", f"BIN={TEST_BIN}", f"STAMP={stamp}"], cwd=cwd, env=env)
        elif code.startswith("vaultlens mcp"):
            _mcp_server(code, cwd, env)
        else:
            run(code, cwd=cwd, env=env, shell=True, timeout=120)
    if not ran:
        pytest.skip("every command of this block is marked or left out")
