"""Shared set-up for every test layer: the test helpers on ``sys.path``, hypothesis profiles.

The engine test helpers live in ``tests/engine/vaultkit.py``; this file puts that folder on
``sys.path`` so ``tests/property`` can import them too (the test folders are not packages).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
ENGINE_TESTS = Path(__file__).resolve().parent / "engine"

# The project itself is imported as installed (``vaultlens.engine``, ``vaultlens.lsp``: ``make
# test`` installs it editable); the repository root is kept off sys.path so that its folders'
# bare names (``engine``, ``lsp``) are not importable by accident.
for entry in ("", str(REPO_ROOT)):
    while entry in sys.path:
        sys.path.remove(entry)
if str(ENGINE_TESTS) not in sys.path:
    sys.path.insert(0, str(ENGINE_TESTS))

# Results carry a measured ``time`` (seconds) unless this says off: tests compare bytes.
os.environ.setdefault("VAULTLENS_TIMING", "off")

# The persistent index (engine/cache.py) of every vault a test opens, in-process or in a server
# or CLI subprocess (they inherit the environment), goes to one temporary folder per session:
# tests never write into examples/vault or ../shared.
if not os.environ.get("VAULTLENS_CACHE_DIR"):
    import atexit
    import shutil
    import tempfile

    _CACHE_DIR = tempfile.mkdtemp(prefix="vaultlens-test-index-")
    os.environ["VAULTLENS_CACHE_DIR"] = _CACHE_DIR
    os.environ["XDG_CACHE_HOME"] = _CACHE_DIR  # and the per-user index key (engine/cache.user_key)
    atexit.register(shutil.rmtree, _CACHE_DIR, True)

import pytest  # noqa: E402

# Plain asserts in the shared helpers report their values like asserts in test modules.
pytest.register_assert_rewrite("vaultkit")

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # pragma: no cover - hypothesis is a test dependency
    pass
else:
    # Derandomized and without the example database: the same examples on every machine and
    # every run, so CI never flakes. HYPOTHESIS_PROFILE=thorough searches far more widely.
    settings.register_profile(
        "vaultlens",
        derandomize=True,
        database=None,
        deadline=None,
        max_examples=60,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.register_profile("thorough", derandomize=False, deadline=None, max_examples=1000)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "vaultlens"))
