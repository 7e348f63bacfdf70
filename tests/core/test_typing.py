"""The metric modules are typed strictly: ``mypy --strict`` on them must stay clean."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STRICT_MODULES = ("hri_core/agreement.py", "hri_core/ragmetrics.py")


@pytest.mark.slow
def test_mypy_strict_is_clean_on_the_metric_modules():
    pytest.importorskip("mypy", reason="mypy is pinned in requirements-dev.txt")
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", "/dev/null", *STRICT_MODULES],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Success: no issues found in 2 source files")
