"""The VS Code extension (editors/vscode) in a real VS Code-compatible host, driven by Playwright.

The host is Eclipse Theia with its VS Code extension support (editors/vscode/e2e-host, built by
.ci/run: ``npm ci`` and ``theia build``). The test unpacks the extension's .vsix into a plugins
folder beside a tiny fixture that declares the ``markdown`` language for ``.md`` (the host has no
built-in extensions), opens a private copy of examples/vault whose workspace settings point
``vaultlens.server.path`` at this checkout's ``vaultlens``, starts the host on a free loopback port
and runs editors/vscode/e2e/drive.js: open a page, ``[[compan`` completion, a hover on a link,
"Search wiki" and picking a hit. Screenshots are kept in this test's tmp folder, ``shots/``
(``/tmp/pytest-of-$USER/pytest-current/test_vscode_extension_in_theia0/shots``), or in
$VAULTLENS_E2E_SHOTS when set. Skips when the host, the .vsix or Chromium is missing, except under
CI=true, where .ci/run has built them and a missing piece is a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXT = REPO / "editors" / "vscode"
HOST = EXT / "e2e-host"
DRIVER = EXT / "e2e" / "drive.js"
MARKDOWN_FIXTURE = EXT / "e2e" / "markdown-language"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
VAULTLENS = Path(sys.executable).with_name("vaultlens")


def missing() -> str | None:
    if not (HOST / "lib" / "backend" / "main.js").is_file():
        return "the Theia host is not built (.ci/run: npm ci && npx theia build in editors/vscode/e2e-host)"
    if not list(EXT.glob("vaultlens-*.vsix")):
        return "no .vsix in editors/vscode (.ci/run: npx vsce package)"
    if not os.access(CHROMIUM, os.X_OK):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    if shutil.which("node") is None:
        return "node is not installed"
    return None


@pytest.mark.timeout(240)
def test_vscode_extension_in_theia(tmp_path: Path) -> None:
    why = missing()
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    vsix = sorted(EXT.glob("vaultlens-*.vsix"))[-1]
    vault = tmp_path / "vault"
    shutil.copytree(REPO / "examples" / "vault", vault)
    settings = '{\n  "vaultlens.server.path": "%s"\n}\n' % VAULTLENS
    for folder in (".vscode", ".theia"):
        (vault / folder).mkdir()
        (vault / folder / "settings.json").write_text(settings)
    plugins = tmp_path / "plugins"
    with zipfile.ZipFile(vsix) as z:
        z.extractall(plugins / "vaultlens")
    shutil.copytree(MARKDOWN_FIXTURE, plugins / "markdown-language")
    config = tmp_path / "theia-config"
    config.mkdir()
    (config / "settings.json").write_text('{\n  "security.workspace.trust.enabled": false\n}\n')
    shots = Path(os.environ.get("VAULTLENS_E2E_SHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    log = (tmp_path / "theia.log").open("w")
    env = dict(os.environ, THEIA_CONFIG_DIR=str(config))
    host = subprocess.Popen(
        ["node", str(HOST / "lib" / "backend" / "main.js"), str(vault), "--hostname=127.0.0.1",
         "--port=0", f"--plugins=local-dir:{plugins}"],
        cwd=HOST, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        url = None
        deadline = time.monotonic() + 60
        while url is None and time.monotonic() < deadline and host.poll() is None:
            time.sleep(0.5)
            found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", (tmp_path / "theia.log").read_text())
            url = found.group(1) if found else None
        assert url, "Theia did not start:\n" + (tmp_path / "theia.log").read_text()[-3000:]
        run = subprocess.run(
            ["node", str(DRIVER), url, str(vault), str(shots)],
            capture_output=True, text=True, timeout=200,
        )
        print(run.stdout)
        print(f"screenshots: {shots}")
        assert run.returncode == 0, run.stdout + run.stderr + "\n--- theia log tail ---\n" + (tmp_path / "theia.log").read_text()[-3000:]
    finally:
        host.terminate()
        try:
            host.wait(timeout=20)
        except subprocess.TimeoutExpired:
            host.kill()
            host.wait(timeout=20)
        log.close()
    assert (shots / "2-completion.png").is_file()
