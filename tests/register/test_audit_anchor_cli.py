"""``python -m register audit anchor`` / ``audit verify --anchor`` / ``audit rotate-key`` (issue 10, section 2).

An anchor is the trail's head (sequence number, hash, event count, time) kept outside the database: verify
with it exits 1 once the trail no longer holds the anchored event with that hash (the newest event deleted,
the newest 25, all of them) and 0 while the trail only grew. A checklist sign-off records the head at
signing time and serves as an anchor too (``--anchor signoff:ID``).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from register import SYSTEM, Actor, Store
from register.db.store import Change
from register.governance import checklist as chk
from tests.helpers.paths import REPO_ROOT
from tests.helpers.pdf import pdf_stream_text

DATA = REPO_ROOT / "tests" / "data" / "import"


@pytest.fixture
def cli(register_cli):
    return register_cli("Olive Operator")


def tamper(db: Path, sql: str, params: list) -> None:
    store = Store(db)
    try:
        with store.cursor() as cur:
            cur.execute(sql, params)
    finally:
        store.close()


def events(db: Path) -> int:
    store = Store(db)
    try:
        return store.scalar("SELECT count(*) FROM audit_events")
    finally:
        store.close()


def notes(db: Path, count: int) -> None:
    """``count`` more audited writes (as any command would make), written through the register's gateway."""
    store = Store(db)
    try:
        for i in range(count):
            store.write(SYSTEM, "test.note", lambda tx, i=i: Change("note", f"n-{i}"))
    finally:
        store.close()


@pytest.fixture
def anchored(cli, tmp_path):
    """A trail of more than 25 events and an anchor file of its head."""
    assert cli("init").returncode == 0
    assert cli("import", str(DATA / "responses.jsonl")).returncode == 0
    notes(cli.db, 25)
    anchor = tmp_path / "head.json"
    result = cli("audit", "anchor", "--out", anchor)
    assert result.returncode == 0 and str(anchor) in result.stdout
    return cli, anchor


def test_audit_anchor_prints_the_head_as_json(cli):
    assert cli("init").returncode == 0
    result = cli("audit", "anchor")
    assert result.returncode == 0
    head = json.loads(result.stdout)
    total = events(cli.db)
    assert (head["seq"], head["events"]) == (total, total) and total >= 1
    assert len(head["hash"]) == 64 and datetime.fromisoformat(head["time"]).tzinfo is not None
    assert head["key_id"] and head["anchored_at"]


def test_an_intact_trail_that_has_grown_verifies_against_the_anchor(anchored):
    cli, anchor = anchored
    assert cli("users", "add", "later", "--role", "viewer").returncode == 0
    result = cli("audit", "verify", "--anchor", anchor)
    assert result.returncode == 0, result.stderr
    seq = json.loads(anchor.read_text())["seq"]
    assert f"anchor {anchor}: event {seq} still has hash" in result.stdout


@pytest.mark.parametrize("deleted", [1, 25, "all"])
def test_a_truncated_trail_fails_against_the_anchor(anchored, deleted):
    cli, anchor = anchored
    seq = json.loads(anchor.read_text())["seq"]
    keep = 0 if deleted == "all" else seq - deleted
    tamper(cli.db, "DELETE FROM audit_events WHERE seq > ?", [keep])
    plain = cli("audit", "verify")
    # each command that wrote anchored the head at its end in the anchor folder: even the last events' deletion is
    # found without --anchor (before, only the day's first write was anchored and a short cut went unnoticed)
    assert plain.returncode == 1 and "anchor folder" in plain.stderr and "no longer in the trail" in plain.stderr
    result = cli("audit", "verify", "--anchor", anchor)
    assert result.returncode == 1 and "verifies" not in result.stdout and "no longer in the trail" in result.stderr


def test_an_unreadable_anchor_file_is_an_error_not_a_pass(anchored, tmp_path):
    cli, _ = anchored
    bad = tmp_path / "bad.json"
    bad.write_text('{"seq": 3}')
    result = cli("audit", "verify", "--anchor", bad)
    assert result.returncode == 1 and result.stderr.startswith("Invalid audit anchor:")
    missing = cli("audit", "verify", "--anchor", tmp_path / "nowhere.json")
    assert missing.returncode == 1 and "cannot be read as an anchor file" in missing.stderr


def _signed_run(cli) -> int:
    """A checklist run recorded by the operator and signed by the reviewer account rita; its sign-off id."""
    assert cli("users", "add", "rita", "--role", "reviewer").returncode == 0
    assert cli("checklist", "run", "--record").returncode == 0
    store = Store(cli.db)
    try:
        run = store.scalar("SELECT max(run_id) FROM checklist_runs")
        return chk.sign(store, Actor("rita", "reviewer"), run, {c.no: {"decision": "pass"} for c in chk.CHECKS})
    finally:
        store.close()


def test_a_sign_off_records_the_head_and_serves_as_an_anchor(cli):
    assert cli("init").returncode == 0
    signoff = _signed_run(cli)
    store = Store(cli.db)
    try:
        recorded = store.one("SELECT audit_seq, audit_hash, audit_events FROM checklist_signoffs "
                             "WHERE signoff_id = ?", [signoff])
        sign_event = store.one("SELECT seq, prev_hash FROM audit_events WHERE action = 'checklist.sign'")
    finally:
        store.close()
    # the head the signer saw: the event just before the sign-off's own
    assert (recorded["audit_seq"] + 1, recorded["audit_hash"]) == (sign_event["seq"], sign_event["prev_hash"])
    assert cli("users", "add", "later", "--role", "viewer").returncode == 0
    assert cli("audit", "verify", "--anchor", f"signoff:{signoff}").returncode == 0
    tamper(cli.db, "DELETE FROM audit_events WHERE seq >= ?", [recorded["audit_seq"]])
    result = cli("audit", "verify", "--anchor", f"signoff:{signoff}")
    assert result.returncode == 1 and f"sign-off {signoff}: the anchored event" in result.stderr


def test_an_unknown_sign_off_is_an_error(cli):
    assert cli("init").returncode == 0
    result = cli("audit", "verify", "--anchor", "signoff:99")
    assert result.returncode == 1 and "no checklist sign-off 99" in result.stderr


def test_the_release_report_records_the_audit_head_of_each_sign_off(cli):
    from register.governance import report

    assert cli("init").returncode == 0
    signoff = _signed_run(cli)
    store = Store(cli.db)
    try:
        run, seq, digest = store.query_one("SELECT run_id, audit_seq, audit_hash FROM checklist_signoffs "
                                           "WHERE signoff_id = ?", [signoff])
        md = report.report_markdown(store, run)
        pdf = report.report_pdf(store, run)
    finally:
        store.close()
    assert f"audit head at signing: event {seq} of {seq} events, hash {digest}" in md
    line = next(line for line in md.splitlines() if line.startswith(f"- sign-off {signoff}: `"))
    anchor = json.loads(line.split("`")[1])
    assert (anchor["seq"], anchor["hash"]) == (seq, digest)
    # the PDF's page content (fpdf2 deflates it) carries the same hash
    assert digest.encode() in pdf_stream_text(pdf)


def test_the_release_report_prints_the_anchor_folders_newest_anchor(cli):
    from register.governance import report

    assert cli("init").returncode == 0
    signoff = _signed_run(cli)
    assert cli("users", "add", "later", "--role", "viewer").returncode == 0  # the head moves on, the anchor stays
    store = Store(cli.db)
    try:
        run = store.scalar("SELECT run_id FROM checklist_signoffs WHERE signoff_id = ?", [signoff])
        newest = store.anchors.newest()
        md = report.report_markdown(store, run)
        pdf = report.report_pdf(store, run)
    finally:
        store.close()
    # the sign-off anchored its head; the command after it anchored its own at its end, the newest
    assert newest is not None and newest.source.endswith("(close)")
    assert any(a.source.endswith("(checklist.sign)") for a in store.anchors.read())
    line = next(line for line in md.splitlines() if line.startswith("- the anchor folder "))
    assert str(store.anchors.path) in line
    anchor = json.loads(line.split("`")[-2])
    assert (anchor["seq"], anchor["hash"]) == (newest.seq, newest.hash)
    assert newest.hash.encode() in pdf_stream_text(pdf)


def test_rotate_key_keeps_the_trail_verifiable(cli):
    assert cli("init").returncode == 0
    result = cli("audit", "rotate-key")
    assert result.returncode == 0 and "rotated the audit key" in result.stdout
    assert cli("users", "add", "after", "--role", "viewer").returncode == 0
    assert cli("audit", "verify").returncode == 0
    keyring = json.loads(Path(str(cli.db) + ".audit-key").read_text())
    assert len(keyring["keys"]) == 2


def test_a_lost_keyring_stops_writes_until_the_loss_is_declared(cli):
    assert cli("init").returncode == 0
    Path(str(cli.db) + ".audit-key").unlink()
    verify = cli("audit", "verify")
    assert verify.returncode == 1 and "there is no keyring" in verify.stderr
    refused = cli("users", "add", "someone", "--role", "viewer")
    assert refused.returncode == 1 and refused.stderr.startswith("Audit key unavailable:")
    declared = cli("audit", "rotate-key", "--lost")
    assert declared.returncode == 0 and "lost" in declared.stdout
    assert cli("users", "add", "someone", "--role", "viewer").returncode == 0
    result = cli("audit", "verify")
    assert result.returncode == 0 and "signed with a key declared lost" in result.stdout
