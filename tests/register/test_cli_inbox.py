"""``python -m register import`` while another process holds the database: with ``--via-inbox`` (or a yes at
a terminal's prompt) the files go to that process's inbox and the command prints its report, with the
exit code and JSON of a direct import.

The holder is a real second process (``tests.helpers.console_holder``: the database open read-write and
the inbox watched, as the console does); the command runs in this process.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from register import Store
from tests.helpers.intake import MIXED_CSV, MIXED_JSONL, outcome
from tests.helpers.paths import REPO_ROOT


class Holder:
    """A second process holding ``db`` (and watching its inbox unless ``poll`` is 0)."""

    def __init__(self, db, inbox, poll: float):
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.helpers.console_holder", str(db), str(inbox),
                                      str(poll)], cwd=REPO_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env={**os.environ, "HRI_INBOX_SETTLE_SECONDS": "0.2"})
        line = self.proc.stdout.readline()
        assert line.strip() == "ready", f"the holder did not start: {line!r}"

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(60)


@pytest.fixture
def held(tmp_path, register_cli):
    """``held(poll=0.2)``: the CLI runner, its database held by a second process watching its inbox."""
    holders = []

    def make(poll: float = 0.2):
        run = register_cli()
        holders.append(Holder(run.db, run.db.parent / "inbox", poll))
        return run

    yield make
    for holder in holders:
        holder.close()


def _direct(tmp_path, register_cli, *paths) -> tuple[int, dict]:
    """The same import into a database of its own, directly (the reference)."""
    run = register_cli()
    fresh = tmp_path / "direct.duckdb"
    result = run("--db", fresh, "import", *paths, "--json", "--quiet")
    store = Store(fresh)
    try:
        return result.returncode, outcome(json.loads(result.stdout), store)
    finally:
        store.close()


def test_via_inbox_reports_and_exits_as_a_direct_import(held, tmp_path, register_cli):
    code, expected = _direct(tmp_path, register_cli, MIXED_JSONL, MIXED_CSV)
    run = held()
    result = run("import", MIXED_JSONL, MIXED_CSV, "--via-inbox", "--json", "--wait", "120")
    assert result.returncode == code == 2, result.stderr
    assert "handing 2 file(s) to its inbox" in result.stderr
    report = json.loads(result.stdout)
    assert set(report) == {"batch_ids", *expected["counts"], "balanced", "batches", "quarantined_records", "notes",
                           "search_index"}
    got = outcome(report, store=None)
    assert {k: v for k, v in got.items() if k != "stored_quarantine"} == \
        {k: v for k, v in expected.items() if k != "stored_quarantine"}
    text = run("import", MIXED_JSONL, "--via-inbox", "--wait", "120")  # the text report, as a direct import prints
    assert text.returncode == 2 and "total: 8 records, 4 accepted, 4 quarantined" in text.stdout
    reports = list((run.db.parent / "inbox" / "done").glob("*.report.json"))
    assert len(reports) == 3 and {json.loads(p.read_text())["inbox"]["actor"] for p in reports} == {"inbox"}


def test_via_inbox_stores_the_same_quarantine_as_a_direct_import(tmp_path, register_cli):
    code, expected = _direct(tmp_path, register_cli, MIXED_JSONL)
    run = register_cli()
    holder = Holder(run.db, run.db.parent / "inbox", 0.2)
    try:
        result = run("import", MIXED_JSONL, "--via-inbox", "--json", "--wait", "120")
    finally:
        holder.close()
    assert result.returncode == code
    store = Store(run.db)
    try:
        assert outcome(json.loads(result.stdout), store) == expected
    finally:
        store.close()


def test_without_the_flag_and_without_a_terminal_it_fails_as_before(held):
    run = held()
    result = run("import", MIXED_JSONL)
    assert result.returncode == 1
    assert result.stderr.startswith("Database in use:") and "PID" in result.stderr
    assert not (run.db.parent / "inbox" / MIXED_JSONL.name).exists()


def test_at_a_terminal_it_asks_and_a_yes_hands_the_files_over(held, monkeypatch):
    run = held()
    answers = io.StringIO("y\n")
    answers.isatty = lambda: True
    monkeypatch.setattr(sys, "stdin", answers)
    result = run("import", MIXED_JSONL, "--wait", "120")
    assert result.returncode == 2, result.stderr
    assert "Hand the files to the running console's inbox" in result.stdout
    assert "total: 8 records, 4 accepted, 4 quarantined" in result.stdout


def test_at_a_terminal_a_no_leaves_the_files_alone(held, monkeypatch):
    run = held()
    answers = io.StringIO("n\n")
    answers.isatty = lambda: True
    monkeypatch.setattr(sys, "stdin", answers)
    result = run("import", MIXED_JSONL)
    assert result.returncode == 1 and "Database in use" in result.stderr
    assert not list((run.db.parent / "inbox").glob("*.jsonl"))


def test_no_watcher_means_no_handoff(held):
    run = held(poll=0)  # holds the database, watches nothing: no heartbeat
    result = run("import", MIXED_JSONL, "--via-inbox")
    assert result.returncode == 1
    assert "no console watches its inbox" in result.stderr
    assert not (run.db.parent / "inbox" / MIXED_JSONL.name).exists()


def test_a_refused_file_is_refused_before_anything_is_handed_over(held, tmp_path):
    run = held()
    png = tmp_path / "image.jsonl"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 32)
    result = run("import", MIXED_JSONL, png, "--via-inbox")
    assert result.returncode == 1 and result.stderr.startswith("File refused:")
    assert not list((run.db.parent / "inbox").glob("*.jsonl"))


def test_options_the_console_cannot_honour_are_refused(held):
    run = held()
    result = run("import", MIXED_JSONL, "--via-inbox", "--no-score")
    assert result.returncode == 1 and "cannot carry --no-score or --resume" in result.stderr
