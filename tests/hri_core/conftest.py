"""Fixtures of the hri_core tests: its command line run in this process."""

from __future__ import annotations

import pytest

from tests.helpers.cli import call_main
from tests.helpers.paths import REPO_ROOT


@pytest.fixture
def hri_core_cli(monkeypatch, capsys):
    """``hri_core_cli(*ARGS)``: ``python -m hri_core ARGS`` as ``hri_core.cli.main(ARGS)`` in this process, from
    the repo root (relative paths as a user types them); returns a ``CliResult`` (returncode, stdout, stderr)."""
    from hri_core.cli import main

    monkeypatch.chdir(REPO_ROOT)

    def run(*args: str):
        return call_main(main, args, capsys)

    return run
