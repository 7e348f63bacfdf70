"""The audit trail's anchors kept outside the database, and the register's own record of where keying began
(issue 34, class 5): where the anchor folder is, when an anchor is written, what ``verify_chain`` makes of the
folder, and that a keyed trail's keyring is never made again on its own."""

from __future__ import annotations

import hashlib
import json
import logging
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from register import SYSTEM, Store
from register.access.audit_keys import declare_key_lost, rotate_key
from register.db import anchors as anchors_module
from register.db.anchors import ANCHOR_FILE, anchored_reason
from register.db.audit import ANCHOR_FORMAT, head, key_check, keyings, register_id, verify_chain
from register.db.store import Change
from register.errors import AuditKeyError
from register.scoring.profiles import activate, create_draft
from tests.helpers.actors import ANN, enrol
from tests.helpers.templates import copy_database


def note(store: Store, i: int, action: str = "test.note") -> None:
    store.write(SYSTEM, action, lambda tx: Change("note", f"n-{i}", None, {"i": i}))


def lines(store: Store) -> list[dict]:
    file = store.anchors.path / ANCHOR_FILE
    return [json.loads(line) for line in file.read_text().splitlines()] if file.exists() else []


@pytest.fixture
def fresh(tmp_path):
    store = Store(tmp_path / "fresh.duckdb")
    yield store
    store.close()


def tomorrow(monkeypatch) -> None:
    """Let the anchor folder's clock read the same time tomorrow (a process that runs past midnight UTC)."""
    later = datetime.now(UTC) + timedelta(days=1)

    class Tomorrow(datetime):
        @classmethod
        def now(cls, tz=None):
            return later if tz is None else later.astimezone(tz)

    monkeypatch.setattr(anchors_module, "datetime", Tomorrow)


# --- where ------------------------------------------------------------------------------------------------------


def test_the_default_folder_is_under_the_state_folder_named_from_the_database(fresh, tmp_path):
    database = (tmp_path / "fresh.duckdb").resolve()
    digest = hashlib.sha256(str(database).encode()).hexdigest()[:16]
    state = Path(os.environ["XDG_STATE_HOME"])
    assert fresh.anchors.path == state / "hri-console" / "anchors" / f"fresh.duckdb-{digest}"
    assert not fresh.anchors.path.is_relative_to(tmp_path) and fresh.anchors.warning() is None
    other = Store(tmp_path / "sub" / "fresh.duckdb")
    try:
        assert other.anchors.path != fresh.anchors.path  # the same name elsewhere: a folder of its own
    finally:
        other.close()


def test_hri_anchor_dir_holds_the_folders_and_one_beside_the_database_draws_a_warning(tmp_path, monkeypatch,
                                                                                      caplog):
    monkeypatch.setenv("HRI_ANCHOR_DIR", str(tmp_path / "anchors"))
    store = Store(tmp_path / "beside.duckdb")
    try:
        assert store.anchors.path.parent == tmp_path / "anchors"
        assert store.anchors.path.name.startswith("beside.duckdb-")
        with caplog.at_level(logging.WARNING, logger="register.db.anchors"):
            note(store, 1)
        assert (store.anchors.path / ANCHOR_FILE).exists()
        assert "inside the database's folder" in store.anchors.warning()
        assert "set HRI_ANCHOR_DIR to a folder elsewhere" in caplog.text
    finally:
        store.close()


def test_a_throwaway_register_keeps_no_anchors(tmp_path):
    store = Store(tmp_path / "temp.duckdb", keep_anchors=False)
    try:
        note(store, 1)
        assert store.anchors.path is None and verify_chain(store).ok
        assert not (Path(os.environ["XDG_STATE_HOME"]) / "hri-console").exists()
    finally:
        store.close()


# --- when -------------------------------------------------------------------------------------------------------


def test_the_first_write_of_each_utc_day_is_anchored_and_no_other(fresh, monkeypatch):
    for i in range(5):
        note(fresh, i)
    (day,) = lines(fresh)
    assert (day["reason"], day["seq"], day["events"], day["format"]) == ("day", 1, 1, ANCHOR_FORMAT)
    assert day["register"] == register_id(fresh) and day["key_id"] and day["database"].endswith("fresh.duckdb")
    tomorrow(monkeypatch)
    note(fresh, 5)
    note(fresh, 6)
    assert [(a["reason"], a["seq"]) for a in lines(fresh)] == [("day", 1), ("day", 6)]


def test_a_new_process_reads_the_day_from_the_folder(fresh, tmp_path):
    note(fresh, 1)
    fresh.close()
    again = Store(tmp_path / "fresh.duckdb")
    try:
        note(again, 2)  # the same day: the folder's newest anchor is today's
        assert len(lines(again)) == 1
    finally:
        again.close()


def test_sign_offs_publishes_approvals_and_key_changes_are_anchored_at_once(fresh):
    note(fresh, 1)
    note(fresh, 2, "checklist.sign")
    note(fresh, 3, "evidence_rules.publish")
    note(fresh, 4, "authority_rules.approve")
    note(fresh, 5, "evidence_rules.propose")  # proposing puts nothing in force
    rotate_key(fresh, SYSTEM)
    assert [(a["reason"], a["seq"]) for a in lines(fresh)] == [
        ("day", 1), ("checklist.sign", 2), ("evidence_rules.publish", 3), ("authority_rules.approve", 4),
        ("audit.key_rotated", 6)]


@pytest.mark.parametrize("action", ["profile.publish", "rubric.publish", "mitigation_policy.publish",
                                    "use_cases.publish", "authority_rules.publish", "judge_policy.publish",
                                    "evidence_rules.publish", "scoring_profile.approve", "judge_policy.approve",
                                    "label_change.approve", "risk_acceptance.approve", "checklist.sign",
                                    "audit.key_rotated", "audit.key_lost"])
def test_every_publish_and_approval_of_the_register_is_anchored(action):
    assert anchored_reason(action) == action


def test_a_profile_publish_leaves_its_head_in_the_folder(store):
    enrol(store, ANN)
    draft = create_draft(store, ANN, {})
    activate(store, SYSTEM, draft, "a test")
    newest = store.anchors.newest()
    assert newest is not None and newest.source.endswith("(profile.publish)")
    assert (newest.seq, newest.hash) == (head(store).seq, head(store).hash)


def test_a_folder_that_cannot_be_written_does_not_fail_the_write(tmp_path, monkeypatch, caplog):
    (tmp_path / "blocked").write_text("a file where the folder should be")
    monkeypatch.setenv("HRI_ANCHOR_DIR", str(tmp_path / "blocked"))
    store = Store(tmp_path / "db" / "x.duckdb")
    try:
        with caplog.at_level(logging.WARNING, logger="register.db.anchors"):
            note(store, 1)
            note(store, 2)
        assert store.scalar("SELECT count(*) FROM audit_events") == 2
        assert caplog.text.count("could not be written") == 1  # once a day, not at every write
    finally:
        store.close()


# --- what verification makes of the folder -----------------------------------------------------------------------


def test_verification_checks_every_anchor_of_the_folder_and_names_the_newest(fresh):
    note(fresh, 1)
    note(fresh, 2, "checklist.sign")
    note(fresh, 3)
    report = verify_chain(fresh)
    assert (report.ok, report.anchors, report.kept, report.newest.seq) == (True, 0, 2, 2)
    # an anchor of event 1 with another hash, appended after the newest (as a rolled-back register's next day
    # would): not the newest, still checked
    wrong = {**lines(fresh)[0], "hash": "f" * 64}
    with open(fresh.anchors.path / ANCHOR_FILE, "a") as handle:
        handle.write(json.dumps(wrong) + "\n")
    report = verify_chain(fresh)
    assert (report.ok, report.first_bad_seq) == (False, 1) and "line 3 (day)" in report.reason


def test_a_damaged_anchor_file_fails_verification(fresh):
    note(fresh, 1)
    with open(fresh.anchors.path / ANCHOR_FILE, "a") as handle:
        handle.write("{not json\n")
    report = verify_chain(fresh)
    assert not report.ok and "line 2: not a line of anchor JSON" in report.reason
    assert verify_chain(fresh, anchor_folder=False).ok


def test_the_anchors_of_another_register_fail_verification(fresh):
    note(fresh, 1)
    with fresh.cursor() as cur:
        cur.execute("UPDATE register_identity SET register_id = 'another'")
    report = verify_chain(fresh)
    assert not report.ok and "an anchor of another register" in report.reason
    assert f"move the anchor folder {fresh.anchors.path} away" in report.reason


# --- where keying began ----------------------------------------------------------------------------------------


def test_the_first_signed_event_records_the_keyring_in_the_register(fresh):
    note(fresh, 1)
    data = fresh.keyring.load()
    (keying,) = keyings(fresh)
    assert (keying.keyed_after, keying.first_key) == (data.keyed_after, data.first_key)
    assert keying.key_check == key_check(data.secret(data.first_key))
    rotate_key(fresh, SYSTEM)  # a rotation is signed with the old key: the same keyring
    assert len(keyings(fresh)) == 1


def test_a_declared_loss_records_the_new_keyring(fresh):
    note(fresh, 1)
    fresh.keyring.path.unlink()
    new_key, _ = declare_key_lost(fresh, SYSTEM)
    assert [k.first_key for k in keyings(fresh)][-1] == new_key
    note(fresh, 2)
    assert verify_chain(fresh).ok


def test_a_keyed_trail_missing_its_keyring_is_never_keyed_again_on_its_own(fresh):
    note(fresh, 1)
    fresh.keyring.path.unlink()
    with fresh.cursor() as cur:  # even were every event unsigned again
        cur.execute("UPDATE audit_events SET key_id = NULL")
    with pytest.raises(AuditKeyError, match="keyed after event 0"):
        note(fresh, 2)
    with fresh.cursor() as cur:  # and the register's record gone: the anchor folder shows the trail was keyed
        cur.execute("DELETE FROM audit_keying")
    with pytest.raises(AuditKeyError, match="anchor folder"):
        note(fresh, 3)
    assert not fresh.keyring.path.exists()


def test_an_older_register_recovers_where_keying_began_from_its_trail(fresh, tmp_path):
    """A register keyed before migration 042: the migration finds the first signed event and each declared loss."""
    note(fresh, 1)
    fresh.keyring.path.unlink()
    declare_key_lost(fresh, SYSTEM)
    note(fresh, 2)
    before = [(k.keyed_after, k.first_key) for k in keyings(fresh)]
    with fresh.cursor() as cur:  # the register as it was before 042
        for sql in ("DROP TABLE audit_keying", "DROP TABLE register_identity",
                    "DELETE FROM schema_migrations WHERE version = 42"):
            cur.execute(sql)
    fresh.close()
    upgraded = Store(tmp_path / "fresh.duckdb")
    try:
        assert [(k.keyed_after, k.first_key, k.key_check) for k in keyings(upgraded)] == [
            (*pair, None) for pair in before]
        report = verify_chain(upgraded, anchor_folder=False)  # a new register id: the old anchors name another
        assert report.ok, report.reason
    finally:
        upgraded.close()


def test_a_write_after_an_unsigned_head_of_a_keyed_trail_is_refused(fresh):
    note(fresh, 1)
    note(fresh, 2)
    with fresh.cursor() as cur:  # the newest event made unsigned, the keyring still in place
        cur.execute("UPDATE audit_events SET key_id = NULL WHERE seq = 2")
    with pytest.raises(AuditKeyError, match="newest event 2 is not signed"):
        note(fresh, 3)


@pytest.mark.parametrize("change, reason", [
    ("secret", "holds another secret under audit key"),
    ("head", "was made when the trail ended at event 7"),
])
def test_a_keyring_that_is_not_the_recorded_one_fails_verification(fresh, change, reason):
    note(fresh, 1)
    keyring = json.loads(fresh.keyring.path.read_text())
    if change == "secret":  # the same key id, another secret
        keyring["keys"][keyring["first_key"]]["secret"] = "ab" * 32
    else:
        keyring["keyed_after"] = {"seq": 7, "hash": "c" * 64}
    fresh.keyring.path.write_text(json.dumps(keyring))
    report = verify_chain(fresh)
    assert (report.ok, report.first_bad_seq) == (False, 1) and reason in report.reason


def test_closing_after_writes_pins_them_so_deleting_them_fails_verification(tmp_path):
    """The gap the day's anchor left: events written after the newest anchor could be deleted unnoticed. A register
    that wrote since its newest anchor anchors its head when it closes (a command's end, a stopped console)."""
    db = tmp_path / "closing.duckdb"
    store = Store(db)
    for i in range(4):
        note(store, i)
    last = store.scalar("SELECT max(seq) FROM audit_events")
    store.close()
    reopened = Store(db)
    try:
        assert [(a["reason"], a["seq"]) for a in lines(reopened)] == [("day", 1), ("close", last)]
        with reopened.cursor() as cur:  # behind the register's back, as whoever holds the file could
            cur.execute("DELETE FROM audit_events WHERE seq > ?", [last - 2])
        report = verify_chain(reopened)
        assert not report.ok and "close" in report.reason, report
    finally:
        reopened.close()
    only_read = Store(db)
    only_read.close()
    assert [a["reason"] for a in lines(only_read)] == ["day", "close"]  # a register that only read adds none


def test_a_register_that_wrote_nothing_since_its_anchor_adds_none_at_close(fresh):
    note(fresh, 1)  # the day's anchor covers it
    fresh.close()
    assert [a["reason"] for a in lines(fresh)] == ["day"]


def test_a_process_writing_all_day_anchors_its_head_every_interval(fresh, monkeypatch):
    note(fresh, 1)
    note(fresh, 2)  # minutes later: nothing new
    assert [a["reason"] for a in lines(fresh)] == ["day"]
    later = datetime.now(UTC) + anchors_module.INTERVAL + timedelta(seconds=1)

    class Later(datetime):
        @classmethod
        def now(cls, tz=None):
            return later if tz is None else later.astimezone(tz)

    monkeypatch.setattr(anchors_module, "datetime", Later)
    note(fresh, 3)
    note(fresh, 4)
    expected = "interval" if later.date() == datetime.now(UTC).date() else "day"  # an interval across midnight
    assert [(a["reason"], a["seq"]) for a in lines(fresh)] == [("day", 1), (expected, 3)]


def test_a_running_register_anchors_its_head_every_so_many_writes(fresh):
    """A console's writes within the interval could be deleted unseen until it closed: every ``EVERY_WRITES``-th
    write since the newest anchor anchors the head too, so at most that many writes stay unpinned."""
    every = anchors_module.EVERY_WRITES
    for i in range(2 * every + 1):
        note(fresh, i)
    assert [(a["reason"], a["seq"]) for a in lines(fresh)] == [("day", 1), ("writes", every + 1),
                                                                ("writes", 2 * every + 1)]
    with fresh.cursor() as cur:  # behind the register's back: the newest pinned event deleted
        cur.execute("DELETE FROM audit_events WHERE seq = ?", [2 * every + 1])
    report = verify_chain(fresh)
    assert not report.ok and "writes" in report.reason, report


# --- a deleted anchor file (migration 057) ------------------------------------------------------------------------


def test_a_deleted_or_truncated_anchor_file_fails_verification_naming_the_recorded_anchor(fresh):
    note(fresh, 1)
    note(fresh, 2, "checklist.sign")
    assert verify_chain(fresh).ok
    file = fresh.anchors.path / ANCHOR_FILE
    first, _second = file.read_text().splitlines()
    file.write_text(first + "\n")  # truncated: the sign-off's anchor gone
    report = verify_chain(fresh)
    assert not report.ok and "recorded an anchor of event 2" in report.reason
    assert "anchors up to event 1 only" in report.reason
    file.unlink()  # deleted: before migration 057 this read as "no anchor kept yet" and verified
    report = verify_chain(fresh)
    assert not report.ok and "holds no anchor: the anchor file was deleted or truncated" in report.reason


def test_another_anchor_folder_is_named_and_a_copied_register_starts_its_own(fresh, tmp_path, monkeypatch):
    note(fresh, 1)
    recorded = str(fresh.anchors.path)
    fresh.close()
    monkeypatch.setenv("HRI_ANCHOR_DIR", str(tmp_path / "elsewhere"))
    moved_dir = Store(tmp_path / "fresh.duckdb")
    try:
        report = verify_chain(moved_dir)
        assert not report.ok and f"anchor folder {recorded}" in report.reason and "HRI_ANCHOR_DIR" in report.reason
    finally:
        moved_dir.close()
    monkeypatch.delenv("HRI_ANCHOR_DIR")
    copied = Store(copy_database(tmp_path / "fresh.duckdb", tmp_path / "copy.duckdb"))
    try:
        assert verify_chain(copied).ok  # a copy keeps its original's record; its own anchors begin with its writes
        note(copied, 2)
        assert verify_chain(copied).ok and verify_chain(copied).kept == 1
    finally:
        copied.close()
