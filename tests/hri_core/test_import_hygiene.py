"""hri_core is the pure layer: importing it (or its CLI) must not drag in the UI or the database stack.

Checked in a fresh interpreter, because this test session itself may already have imported them.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.helpers.paths import REPO_ROOT

FORBIDDEN = ("streamlit", "duckdb", "pandas", "plotly", "pandera")

PROBE = """
import json, sys
for name in sys.argv[1:]:
    __import__(name)
print(json.dumps(sorted(sys.modules)))
"""


def loaded_modules(*imports: str) -> set[str]:
    proc = subprocess.run([sys.executable, "-c", PROBE, *imports], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout))


@pytest.mark.parametrize("imports", [("hri_core",), ("hri_core", "hri_core.cli")])
def test_hri_core_imports_no_ui_or_database_stack(imports):
    modules = loaded_modules(*imports)
    assert set(imports) <= modules  # the probe really imported what it claims
    offending = sorted(m for m in modules if m.split(".")[0] in FORBIDDEN)
    assert offending == []


def test_probe_detects_a_forbidden_import():
    # guards the guard: the same probe does see a forbidden package when one is imported
    assert "duckdb" in loaded_modules("hri_core", "duckdb")
