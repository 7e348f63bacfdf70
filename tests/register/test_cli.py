"""``python -m register`` end to end against a temp database (``HRI_DB``): the commands through
``register.cli.main`` in this process, and in subprocesses where the process is the point (the
``__main__`` entry point's exit codes, a second process finding the database locked)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

from register import Store
from tests.helpers.cli import run_module
from tests.helpers.paths import REPO_ROOT

DATA = REPO_ROOT / "tests" / "data" / "import"


@pytest.fixture
def run(register_cli):
    """Run ``python -m register ARGS`` (in this process) on a temp database, acting as 'Casey CLI'."""
    return register_cli("Casey CLI")


def query(db: Path, sql: str) -> list[tuple]:
    store = Store(db)
    try:
        return store.query(sql)
    finally:
        store.close()


def test_init_twice_is_idempotent_and_audit_verifies(run):
    first, second = run("init"), run("init")
    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    assert "applied 001_initial.sql" in first.stdout and "active scoring profile v1" in first.stdout
    assert "schema up to date" in second.stdout
    verify = run("audit", "verify")
    assert verify.returncode == 0 and "audit trail verifies: 1 events" in verify.stdout
    assert query(run.db, "SELECT count(*), min(status) FROM scoring_profiles") == [(1, "active")]
    assert query(run.db, "SELECT actor_name, actor_role, action FROM audit_events") == \
        [("Casey CLI", "system", "profile.create_default")]


def test_import_prints_the_report_and_exits_2_when_records_are_quarantined(run):
    assert run("init").returncode == 0
    bad = run("import", str(DATA / "unknown_label.jsonl"), str(DATA / "responses.csv"))
    assert bad.returncode == 2, bad.stderr
    assert "batch 1 unknown_label.jsonl (jsonl): 3 records: 2 accepted" in bad.stdout
    assert "unknown_label.jsonl line 2 response_id=bad-label: claims[1].labels[0]: unknown value 'HALLUCINATED'" \
        in bad.stdout
    assert "total: 6 records, 5 accepted, 1 quarantined" in bad.stdout
    assert "responses.csv: done, 3 records, 3 scored" in bad.stderr  # progress goes to stderr
    good = run("import", str(DATA / "responses.jsonl"))
    assert good.returncode == 0, good.stderr
    assert "0 new, 0 new revisions, 3 unchanged" in good.stdout

    listed = run("quarantine", "list", "--json")
    assert listed.returncode == 0 and '"location": "line 2"' in listed.stdout and '"status": "open"' in listed.stdout
    status = run("status")
    assert "responses: 5" in status.stdout and "open_quarantine: 1" in status.stdout
    assert "active_profile_version: 1" in status.stdout


def test_audit_verify_exits_0_on_a_used_database_and_1_naming_a_tampered_event(run):
    assert run("init").returncode == 0
    assert run("import", str(DATA / "responses.jsonl")).returncode == 0
    assert run("rescore", "--as-of", "2026-12-01T00:00:00Z").returncode == 0
    ok = run("audit", "verify")
    assert ok.returncode == 0, ok.stderr
    events = query(run.db, "SELECT count(*) FROM audit_events")[0][0]
    assert f"audit trail verifies: {events} events" in ok.stdout

    store = Store(run.db)
    with store.cursor() as cur:  # tamper outside the register's API, as an attacker would
        cur.execute("UPDATE audit_events SET actor_name = 'someone else' WHERE seq = 3")
    store.close()
    broken = run("audit", "verify")
    assert broken.returncode == 1
    assert broken.stderr.startswith("Audit trail does not verify: first broken event 3 of")


def test_export_writes_one_row_per_current_score(run, tmp_path):
    assert run("init").returncode == 0
    assert run("import", str(DATA / "responses.jsonl"), str(DATA / "duplicate_ids.jsonl")).returncode == 0
    target = tmp_path / "out" / "scores.csv"
    exported = run("export", str(target))
    assert exported.returncode == 0, exported.stderr
    scores = query(run.db, "SELECT count(*) FROM scores WHERE is_current")[0][0]
    assert scores == 5
    with target.open(newline="") as handle:
        assert len(list(csv.DictReader(handle))) == scores
    assert f"wrote {scores} score row(s)" in exported.stdout
    as_parquet = run("export", str(tmp_path / "scores.bin"), "--format", "parquet")
    assert as_parquet.returncode == 0 and (tmp_path / "scores.bin").read_bytes()[:4] == b"PAR1"


def test_quarantine_export_and_demo_are_idempotent_commands(run, tmp_path):
    assert run("init").returncode == 0
    assert run("import", str(DATA / "malformed_json.jsonl")).returncode == 2
    target = tmp_path / "q.jsonl"
    exported = run("quarantine", "export", str(target))
    assert exported.returncode == 0 and len(target.read_text().splitlines()) == 1

    first = run("demo", "--synthetic", "20")
    assert first.returncode == 0, first.stderr
    assert "20 synthetic" in first.stdout
    counts = query(run.db, "SELECT (SELECT count(*) FROM responses), (SELECT count(*) FROM import_batches), "
                           "(SELECT count(*) FROM audit_events)")
    second = run("demo", "--synthetic", "20")
    assert second.returncode == 0 and "0 file(s) imported" in second.stdout
    assert query(run.db, "SELECT (SELECT count(*) FROM responses), (SELECT count(*) FROM import_batches), "
                         "(SELECT count(*) FROM audit_events)") == counts
    assert query(run.db, "SELECT count(*) FROM responses WHERE response_id IN ('paper-table-v', 'syn-0000020')") \
        == [(2,)]


def test_errors_render_once_as_title_and_message_with_exit_codes(run, tmp_path):
    """Through ``python -m register`` in a subprocess: the exit codes are what a shell sees."""
    assert run("init").returncode == 0
    picture = tmp_path / "picture.jsonl"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    refused = run_module("register", "import", picture)
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines()[-1] == \
        "File refused: picture.jsonl is not a JSONL text file: it looks like a PNG image"
    usage = run_module("register", "frobnicate")
    assert usage.returncode == 64 and "Usage error" in usage.stderr


def test_a_second_process_finds_the_database_in_use(run):
    """DuckDB lets one process hold a database file read-write: while this process holds it (as the app
    would), an import in another process exits 1 with one readable line (no traceback) and writes nothing."""
    assert run("init").returncode == 0
    holder = Store(run.db)
    try:
        blocked = run_module("register", "import", DATA / "responses.jsonl")
    finally:
        holder.close()
    assert blocked.returncode == 1 and blocked.stdout == ""
    (line,) = blocked.stderr.strip().splitlines()
    assert line.startswith(f"Database in use: {run.db} is open in another process (PID {os.getpid()})")
    assert "try again once it has finished, or choose another database file with --db or HRI_DB" in line
    assert line.endswith(f"(no console of this database listens at {run.db}.handoff/socket: a running console would "
                         "carry the command out itself)")
    assert "stop" not in line  # nobody is asked to stop the console (or anything else)
    assert query(run.db, "SELECT (SELECT count(*) FROM responses), (SELECT count(*) FROM audit_events)") == [(0, 1)]


def test_keep_view_keeps_an_older_versions_view_and_refuses_one_kept_already(run):
    from register import SYSTEM
    from register.readmodels import version_views
    from tests.helpers.profiles import publish_versions

    assert run("init").returncode == 0
    assert run("import", str(DATA / "responses.jsonl")).returncode == 0
    store = Store(run.db)
    try:
        publish_versions(store)
        store.write(SYSTEM, "test.setup", lambda cur: version_views.forget(cur, 1) or _no_change())
        assert version_views.kept(store) == [2]
    finally:
        store.close()
    kept = run("keep-view", "1")
    assert kept.returncode == 0, kept.stderr
    assert kept.stdout.strip() == "profile version 1: its view is kept"
    assert query(run.db, "SELECT profile_version FROM kept_version_views ORDER BY run_id") == [(2,), (1,)]
    again = run("keep-view", "1")
    assert again.returncode != 0 and "the view of profile version 1 is kept already" in again.stderr


def _no_change():
    from register.db.store import Change

    return Change("test", None)
