"""`make run`, the quickstart's first command: a readable result and the next step, no JSON wall."""

from __future__ import annotations

import subprocess
from pathlib import Path

from installkit import REPO, TEST_BIN


def test_make_run_shows_a_readable_result_and_the_next_steps(tmp_path: Path):
    stamp = tmp_path / "installed"
    stamp.touch()  # the test venv is the Makefile's set-up; run the recipe itself with it
    done = subprocess.run(["make", "-s", "run", f"BIN={TEST_BIN}", f"STAMP={stamp}"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) < 30, done.stdout
    assert not any(line.lstrip().startswith(("{", "}", '"')) for line in lines), done.stdout
    assert any("[[" in line and "(" in line for line in lines)  # ranked hits, as lines
    steps = done.stdout[done.stdout.index("Next:"):]
    assert "search your own vault" in steps and "--vault" in steps
    assert f'export PATH="{TEST_BIN}:$PATH"' in steps
    assert "Editors" in steps
