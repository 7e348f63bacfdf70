"""The isolation every test gets (``tests/conftest.py``) survives a test's own ``monkeypatch.undo()``: before, the
undo dropped it, and a command run afterwards wrote audit anchors to the user's real state folder, where a later
run of the same temp path found them ("an anchor of another register")."""

from __future__ import annotations

import os

from register.db import anchors


def test_a_tests_monkeypatch_undo_keeps_its_temp_database_and_state_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("HRI_ACTOR", "someone")
    monkeypatch.undo()
    assert "HRI_ACTOR" not in os.environ
    assert os.environ["HRI_DB"] == str(tmp_path / "hri.duckdb")
    state = tmp_path.with_name(tmp_path.name + "-state")
    assert os.environ["XDG_STATE_HOME"] == str(state)
    assert os.environ["HRI_CONSOLE_WARMUP"] == "0"
    assert str(anchors.anchor_dir(tmp_path / "x.duckdb")).startswith(str(state))  # not the user's own
