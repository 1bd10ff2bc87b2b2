"""Helpers for the install tests: a user's clean environment, running commands, fresh venvs.

These tests install vaultlens the ways README says, into fresh environments and a fresh home
folder, so they need the package index for the dependencies (CI and every developer machine
reach it). They are slow by the standards of this suite (a few seconds an install), hence the
long timeout in each module.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TEST_BIN = Path(sys.executable).parent  # the test venv's bin: its `vaultlens` console script

# Variables that would send an install somewhere other than the fresh home folder or venv.
_LEAKY = (
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "PYTHONHOME",
    "PIP_USER",
    "PIP_TARGET",
    "PIP_PREFIX",
    "PIPX_HOME",
    "PIPX_BIN_DIR",
    "PIPX_MAN_DIR",
    "PIPX_SHARED_LIBS",
    "UV_TOOL_DIR",
    "UV_TOOL_BIN_DIR",
    "UV_PROJECT_ENVIRONMENT",
)


def clean_env(home: Path, *bin_dirs: Path) -> dict[str, str]:
    """The environment of a user whose home is ``home``, with ``bin_dirs`` first on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in _LEAKY and not k.startswith("XDG_")}
    # Downloads are cached where the user's own pip and uv cache them (a cache changes no install).
    user_cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    env.setdefault("PIP_CACHE_DIR", str(user_cache / "pip"))
    env.setdefault("UV_CACHE_DIR", str(user_cache / "uv"))
    env["HOME"] = str(home)
    path = [str(d) for d in bin_dirs] + [
        p for p in env.get("PATH", "").split(os.pathsep) if p and Path(p) != TEST_BIN
    ]
    env["PATH"] = os.pathsep.join(path)
    return env


def run(
    cmd,
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    timeout: float = 600,
    shell=False,
    input: str | None = None,
) -> subprocess.CompletedProcess:
    """Run ``cmd``; fail the test with its output when it exits non-zero."""
    proc = subprocess.run(
        cmd,
        check=False,
        cwd=cwd,
        env=env,
        timeout=timeout,
        shell=shell,
        input=input,
        capture_output=True,
        text=True,
        executable="/bin/bash" if shell else None,
    )
    assert proc.returncode == 0, (
        f"{cmd!r} in {cwd} exited {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}"
        f"\n--- stderr\n{proc.stderr[-4000:]}"
    )
    return proc


def fresh_venv(where: Path) -> Path:
    """A new empty venv (from the interpreter running the tests); its bin folder."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, timeout=120)
    return where / "bin"


def script_python(script: Path) -> Path:
    """The interpreter a console script runs with (its shebang), so a test can look inside the
    environment that pipx, uv or pip made."""
    first = Path(os.path.realpath(script)).read_text(errors="replace").splitlines()[0]
    assert first.startswith("#!"), first
    return Path(first[2:].strip().split()[0])


# README's shell blocks

SHELLS = ("sh", "bash", "shell")


@dataclass(frozen=True)
class Command:
    line: int  # 1-based line in README.md
    code: str  # without its comment
    needs: str  # the `# needs …` reason, or ""


@dataclass(frozen=True)
class Block:
    line: int
    commands: tuple[Command, ...]
    needs: str


def split_comment(text: str) -> tuple[str, str]:
    """``code  # comment`` -> (code, comment), the first ``#`` outside quotes that starts a word."""
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1].isspace()):
            return text[:i].rstrip(), text[i + 1 :].strip()
    return text.rstrip(), ""


def _needs(comment: str) -> str:
    return comment[len("needs ") :] if comment.startswith("needs ") else ""


def shell_blocks(text: str) -> list[Block]:
    """The fenced ``sh``/``bash``/``shell`` blocks, each as its commands (continuation lines
    joined, blank and comment-only lines dropped)."""
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"^(`{3,})\s*(\S*)", lines[i])
        if not fence:
            i += 1
            continue
        start, ticks, lang = i + 1, fence.group(1), fence.group(2)
        body: list[tuple[int, str]] = []
        i += 1
        while i < len(lines) and not lines[i].startswith(ticks):
            body.append((i + 1, lines[i]))
            i += 1
        i += 1
        if lang not in SHELLS:
            continue
        block_needs = ""
        first = next((t for _, t in body if t.strip()), "")
        if first.lstrip().startswith("#"):
            block_needs = _needs(first.lstrip()[1:].strip())
        commands: list[Command] = []
        pending, pending_line = "", 0
        for number, raw in body:
            if not pending:
                pending_line = number
            if raw.rstrip().endswith("\\"):
                pending += raw.rstrip()[:-1] + " "
                continue
            code, comment = split_comment(pending + raw)
            pending = ""
            if code.strip():
                commands.append(Command(pending_line, code.strip(), _needs(comment)))
        blocks.append(Block(start, tuple(commands), block_needs))
    return blocks
