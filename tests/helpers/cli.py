"""The command-line runner shared by the register CLI tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def make_cli(tmp_path: Path, actor: str):
    """A runner of ``python -m register ARGS`` from the repo root, on ``tmp_path/cli.duckdb`` (HRI_DB), acting as
    ``actor`` (HRI_ACTOR); ``runner.db`` is the database path."""
    env = {**os.environ, "HRI_DB": str(tmp_path / "cli.duckdb"), "HRI_ACTOR": actor}

    def _run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "register", *args], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=300)
    _run.db = tmp_path / "cli.duckdb"
    return _run
