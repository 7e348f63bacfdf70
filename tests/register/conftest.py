"""Fixtures of the register tests: the register's command line run in this process."""

from __future__ import annotations

import pytest

from tests.helpers.cli import call_main


@pytest.fixture
def register_cli(tmp_path, monkeypatch, capsys):
    """``register_cli(actor=None)``: a runner of ``python -m register ARGS`` as ``register.cli.main(ARGS)`` in this
    process, on ``tmp_path/cli.duckdb`` (HRI_DB), acting as ``actor`` (HRI_ACTOR; else the login name). Each call
    returns a ``CliResult`` (returncode, stdout, stderr); ``runner.db`` is the database path."""
    from register.cli import main

    def make(actor: str | None = None):
        db = tmp_path / "cli.duckdb"
        monkeypatch.setenv("HRI_DB", str(db))
        if actor is not None:
            monkeypatch.setenv("HRI_ACTOR", actor)

        def run(*args: str):
            return call_main(main, args, capsys)

        run.db = db
        return run

    return make
