"""The keyed audit trail: events are HMAC-signed under a key kept outside the database file, so someone who
can write the database file but not read the keyring can neither forge an event nor edit one and re-chain
the rest; old unkeyed trails keep verifying; a lost keyring stops writes with a clear way out; rotation
keeps old keys verifiable; anchors catch truncation (issue 10, section 2)."""

from __future__ import annotations

import json
import os
import stat
from datetime import UTC, datetime, timedelta

import pytest

from register import SYSTEM, Store
from register.access.audit_keys import declare_key_lost, rotate_key
from register.db.audit import GENESIS_HASH, Anchor, event_hash, event_mac, head, verify_chain
from register.db.store import Change
from register.errors import AuditKeyError, InvalidAnchor

FIELDS = ("seq, occurred_at, actor_name, actor_role, action, entity_type, entity_id, before, after, prev_hash, "
          "hash, key_id")


def note(store: Store, i: int) -> None:
    """One audited write (a note event), as any service function would make."""
    store.write(SYSTEM, "test.note", lambda tx: Change("note", f"n-{i}", None, {"i": i}))


def rows(store: Store) -> list[tuple]:
    return store.query(f"SELECT {FIELDS} FROM audit_events ORDER BY seq")


def tamper(store: Store, *statements: tuple[str, list]) -> None:
    """Change audit rows behind the register's back, as someone with write access to the database file could."""
    with store.cursor() as cur:
        for sql, params in statements:
            cur.execute(sql, params)


def rechain_unkeyed(store: Store, start: int, *, edit: dict | None = None) -> None:
    """What a forger without the key can do: edit event ``start`` (``edit``: column -> value), then recompute
    every hash from there on with the unkeyed SHA-256 (key_id NULL), each linked to the one before."""
    columns = FIELDS.split(", ")
    events = [dict(zip(columns, row, strict=True)) for row in rows(store)]
    prev = GENESIS_HASH if start == 1 else events[start - 2]["hash"]
    statements = []
    for event in events[start - 1:]:
        if event["seq"] == start and edit:
            event.update(edit)
        digest = event_hash(prev, event["seq"], event["occurred_at"], event["actor_name"], event["actor_role"],
                            event["action"], event["entity_type"], event["entity_id"], event["before"],
                            event["after"])
        statements.append(("UPDATE audit_events SET actor_name = ?, after = ?, prev_hash = ?, hash = ?, "
                           "key_id = NULL WHERE seq = ?",
                           [event["actor_name"], event["after"], prev, digest, event["seq"]]))
        prev = digest
    tamper(store, *statements)


@pytest.fixture
def trail(tmp_path) -> Store:
    """A fresh register with 10 signed events."""
    store = Store(tmp_path / "trail.duckdb")
    for i in range(10):
        note(store, i)
    yield store
    store.close()


# --- keying ----------------------------------------------------------------------------------------


def test_the_first_write_creates_a_private_keyring_beside_the_database(tmp_path):
    store = Store(tmp_path / "fresh.duckdb")
    try:
        assert not store.keyring.path.exists()  # opening and migrating writes no event
        note(store, 1)
        assert store.keyring.path == tmp_path / "fresh.duckdb.audit-key"
        assert stat.S_IMODE(store.keyring.path.stat().st_mode) == 0o600
        keyring = json.loads(store.keyring.path.read_text())
        (seq, at, name, role, action, etype, eid, before, after, prev, digest, key_id), = rows(store)
        assert key_id == keyring["first_key"] and key_id in keyring["keys"]
        secret = bytes.fromhex(keyring["keys"][key_id]["secret"])
        assert digest == event_mac(secret, key_id, prev, seq, at, name, role, action, etype, eid, before, after)
        assert digest != event_hash(prev, seq, at, name, role, action, etype, eid, before, after)
        assert verify_chain(store).ok
    finally:
        store.close()


def test_hri_audit_keyring_puts_the_keyring_elsewhere(tmp_path, monkeypatch):
    elsewhere = tmp_path / "secrets" / "hri.keyring"
    monkeypatch.setenv("HRI_AUDIT_KEYRING", str(elsewhere))
    store = Store(tmp_path / "db" / "hri.duckdb")
    try:
        note(store, 1)
        assert elsewhere.exists() and not (tmp_path / "db" / "hri.duckdb.audit-key").exists()
        assert verify_chain(store).ok
    finally:
        store.close()


def test_a_forged_event_appended_with_a_correct_sha256_is_detected(trail):
    """The attack of issue 10: append an event whose (unkeyed) hash is computed correctly."""
    last = rows(trail)[-1]
    at = last[1] + timedelta(seconds=1)
    forged = [11, at, "Mallory", "admin", "profile.publish", "scoring_profile", "2", None, None]
    tamper(trail, (f"INSERT INTO audit_events ({FIELDS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                   [*forged, last[10], event_hash(last[10], *forged)]))
    report = verify_chain(trail)
    assert (report.ok, report.first_bad_seq) == (False, 11)
    assert "not signed" in report.reason


def test_a_forged_event_claiming_the_key_id_is_detected(trail):
    """Copying the key id does not help: the forger cannot compute the HMAC without the secret."""
    last = rows(trail)[-1]
    forged = [11, last[1] + timedelta(seconds=1), "Mallory", "admin", "user.create", "user", "m", None, None]
    guessed = event_mac(b"\0" * 32, last[11], last[10], *forged)
    tamper(trail, (f"INSERT INTO audit_events ({FIELDS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [*forged, last[10], guessed, last[11]]))
    report = verify_chain(trail)
    assert (report.ok, report.first_bad_seq) == (False, 11) and "signed hash" in report.reason


def test_a_middle_edit_with_every_later_hash_recomputed_is_detected(trail):
    rechain_unkeyed(trail, 4, edit={"actor_name": "Mallory"})
    report = verify_chain(trail)
    assert (report.ok, report.first_bad_seq) == (False, 4)


def test_a_middle_edit_re_signed_with_a_guessed_key_is_detected(trail):
    columns = FIELDS.split(", ")
    events = [dict(zip(columns, row, strict=True)) for row in rows(trail)]
    prev, statements = events[2]["hash"], []
    for event in events[3:]:
        after = '{"i":99}' if event["seq"] == 4 else event["after"]
        digest = event_mac(os.urandom(32), event["key_id"], prev, event["seq"], event["occurred_at"],
                           event["actor_name"], event["actor_role"], event["action"], event["entity_type"],
                           event["entity_id"], event["before"], after)
        statements.append(("UPDATE audit_events SET after = ?, prev_hash = ?, hash = ? WHERE seq = ?",
                           [after, prev, digest, event["seq"]]))
        prev = digest
    tamper(trail, *statements)
    report = verify_chain(trail)
    assert (report.ok, report.first_bad_seq) == (False, 4) and "signed hash" in report.reason


def test_rewriting_the_whole_trail_unkeyed_is_detected(trail):
    """A downgrade: every event recomputed with the old scheme. The keyring says the trail was keyed from
    the start, so every unsigned event is refused."""
    rechain_unkeyed(trail, 1)
    report = verify_chain(trail)
    assert (report.ok, report.first_bad_seq) == (False, 1) and "not signed" in report.reason


# --- a trail from before keying ------------------------------------------------------------------------


def legacy_events(store: Store, count: int) -> None:
    """Events as the register wrote them before migration 006: plain SHA-256, key_id NULL."""
    prev, at, statements = GENESIS_HASH, datetime(2026, 1, 5, 9, 0, tzinfo=UTC), []
    for seq in range(1, count + 1):
        fields = [seq, at + timedelta(minutes=seq), "olive", "system", "import.chunk", "import_batch", "1", None,
                  json.dumps({"accepted": seq}, separators=(",", ":"))]
        digest = event_hash(prev, *fields)
        statements.append((f"INSERT INTO audit_events ({FIELDS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                           [*fields, prev, digest]))
        prev = digest
    tamper(store, *statements)


@pytest.fixture
def upgraded(tmp_path) -> Store:
    """A database with 5 unkeyed events from before keying, then 3 written since (signed)."""
    store = Store(tmp_path / "old.duckdb")
    legacy_events(store, 5)
    assert not store.keyring.path.exists()
    report = verify_chain(store)
    assert (report.ok, report.events, report.unsigned) == (True, 5, 5)  # an unkeyed trail keeps verifying
    for i in range(3):
        note(store, i)
    yield store
    store.close()


def test_an_unkeyed_trail_keeps_verifying_and_new_events_are_signed(upgraded):
    keyring = json.loads(upgraded.keyring.path.read_text())
    assert keyring["keyed_after"] == {"seq": 5, "hash": rows(upgraded)[4][10]}
    assert [row[11] for row in rows(upgraded)] == [None] * 5 + [keyring["first_key"]] * 3
    report = verify_chain(upgraded)
    assert (report.ok, report.events, report.unsigned) == (True, 8, 5)


def test_an_unsigned_event_after_keying_is_refused(upgraded):
    rechain_unkeyed(upgraded, 7)
    report = verify_chain(upgraded)
    assert (report.ok, report.first_bad_seq) == (False, 7) and "not signed" in report.reason


def test_an_edit_of_an_old_unkeyed_event_recomputed_up_to_the_keyed_ones_is_detected(upgraded):
    """The old events are pinned: the keyring recorded event 5's hash when the trail was keyed."""
    columns = FIELDS.split(", ")
    events = [dict(zip(columns, row, strict=True)) for row in rows(upgraded)]
    prev, statements = events[1]["hash"], []
    for event in events[2:5]:
        after = '{"accepted":0}' if event["seq"] == 3 else event["after"]
        digest = event_hash(prev, event["seq"], event["occurred_at"], event["actor_name"], event["actor_role"],
                            event["action"], event["entity_type"], event["entity_id"], event["before"], after)
        statements.append(("UPDATE audit_events SET after = ?, prev_hash = ?, hash = ? WHERE seq = ?",
                           [after, prev, digest, event["seq"]]))
        prev = digest
    statements.append(("UPDATE audit_events SET prev_hash = ? WHERE seq = 6", [prev]))
    tamper(upgraded, *statements)
    report = verify_chain(upgraded)
    assert (report.ok, report.first_bad_seq) == (False, 5) and "recorded when the trail was keyed" in report.reason


def test_deleting_the_signed_events_of_an_upgraded_trail_is_detected(upgraded):
    tamper(upgraded, ("DELETE FROM audit_events WHERE seq > 3", []))
    report = verify_chain(upgraded)
    assert not report.ok and "events were deleted" in report.reason


# --- the keyring: lost, unsafe, rotated ------------------------------------------------------------------


def test_a_lost_keyring_fails_verification_and_refuses_writes(trail):
    saved = trail.keyring.path.read_bytes()
    trail.keyring.path.unlink()
    report = verify_chain(trail)
    assert (report.ok, report.first_bad_seq) == (False, 1)
    assert "there is no keyring at" in report.reason and "rotate-key --lost" in report.reason
    with pytest.raises(AuditKeyError, match="restore the keyring"):
        note(trail, 99)
    assert len(rows(trail)) == 10  # the refused write left nothing behind
    assert not trail.keyring.path.exists()  # and made no new keyring behind the operator's back
    trail.keyring.path.write_bytes(saved)
    os.chmod(trail.keyring.path, 0o600)
    note(trail, 11)
    assert verify_chain(trail).ok


def test_a_keyring_open_to_other_users_is_refused(trail):
    os.chmod(trail.keyring.path, 0o644)
    with pytest.raises(AuditKeyError, match="chmod 600"):
        note(trail, 99)
    report = verify_chain(trail)
    assert not report.ok and "chmod 600" in report.reason


def test_rotation_signs_new_events_with_the_new_key_and_keeps_the_old_one(trail):
    old = rows(trail)[-1][11]
    old_key, new_key = rotate_key(trail, SYSTEM)
    assert old_key == old and new_key != old
    note(trail, 11)
    events = rows(trail)
    rotation, after = events[-2], events[-1]
    assert (rotation[4], rotation[11], json.loads(rotation[8])) == ("audit.key_rotated", old, {"new_key": new_key})
    assert after[11] == new_key
    assert set(json.loads(trail.keyring.path.read_text())["keys"]) == {old, new_key}
    assert verify_chain(trail).ok


def test_after_a_rotation_an_event_forged_with_the_old_key_is_refused(trail):
    """Whoever stole the old key cannot sign events after the rotation with it."""
    rotate_key(trail, SYSTEM)
    keyring = json.loads(trail.keyring.path.read_text())
    old = keyring["first_key"]
    last = rows(trail)[-1]
    forged = [last[0] + 1, last[1] + timedelta(seconds=1), "Mallory", "admin", "user.create", "user", "m", None,
              None]
    digest = event_mac(bytes.fromhex(keyring["keys"][old]["secret"]), old, last[10], *forged)
    tamper(trail, (f"INSERT INTO audit_events ({FIELDS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [*forged, last[10], digest, old]))
    report = verify_chain(trail)
    assert (report.ok, report.first_bad_seq) == (False, last[0] + 1) and "was due" in report.reason


def test_an_old_key_removed_from_the_keyring_fails_its_events(trail):
    rotate_key(trail, SYSTEM)
    keyring = json.loads(trail.keyring.path.read_text())
    del keyring["keys"][keyring["first_key"]]
    keyring["first_key"] = next(iter(keyring["keys"]))
    trail.keyring.path.write_text(json.dumps(keyring))
    report = verify_chain(trail)
    assert (report.ok, report.first_bad_seq) == (False, 1) and "not in the keyring" in report.reason


def test_declaring_a_lost_key_lets_writes_continue_and_says_what_cannot_be_checked(trail):
    trail.keyring.path.unlink()
    new_key, lost = declare_key_lost(trail, SYSTEM)
    assert lost == [rows(trail)[0][11]] and new_key not in lost
    note(trail, 11)
    events = rows(trail)
    assert [e[11] for e in events[-2:]] == [new_key, new_key] and events[-2][4] == "audit.key_lost"
    report = verify_chain(trail)
    assert (report.ok, report.events, report.unverifiable) == (True, 12, 10)
    # the lost key's events can no longer be checked in content, but still in order and number
    tamper(trail, ("DELETE FROM audit_events WHERE seq = 5", []))
    assert verify_chain(trail).first_bad_seq == 6


def test_declaring_a_key_lost_is_refused_while_the_keyring_has_every_key(trail):
    with pytest.raises(AuditKeyError, match="nothing is lost"):
        declare_key_lost(trail, SYSTEM)


# --- anchors ---------------------------------------------------------------------------------------------


def test_an_anchor_holds_while_the_trail_grows(trail):
    anchor = head(trail)
    assert (anchor.seq, anchor.events, anchor.hash) == (10, 10, rows(trail)[-1][10])
    for i in range(3):
        note(trail, 20 + i)
    report = verify_chain(trail, anchors=[anchor])
    assert (report.ok, report.events, report.anchors) == (True, 13, 1)


@pytest.mark.parametrize("deleted", [1, 5, 10])
def test_an_anchor_catches_truncation(trail, deleted):
    anchor = head(trail)
    tamper(trail, ("DELETE FROM audit_events WHERE seq > ?", [10 - deleted]))
    assert verify_chain(trail, anchor_folder=False).ok  # what remains chains: only an anchor tells
    # the anchor folder holds the head after the day's first write (event 1): it tells once that event is gone
    assert verify_chain(trail).ok == (deleted < 10)
    report = verify_chain(trail, anchors=[anchor])
    assert (report.ok, report.first_bad_seq) == (False, 10) and "no longer in the trail" in report.reason


def test_an_anchor_of_an_earlier_head_catches_a_deleted_tail_after_it(trail):
    early = head(trail)
    for i in range(25):
        note(trail, 100 + i)
    late = head(trail)
    tamper(trail, ("DELETE FROM audit_events WHERE seq > 10", []))
    assert verify_chain(trail, anchors=[early], anchor_folder=False).ok
    assert not verify_chain(trail, anchors=[early, late], anchor_folder=False).ok
    # the folder's own anchor of the 25th write since the newest one catches it without being given one
    assert not verify_chain(trail, anchors=[early]).ok


def test_an_anchor_round_trips_through_json_and_refuses_garbage(trail):
    anchor = head(trail)
    again = Anchor.from_dict(json.loads(json.dumps(anchor.as_dict())), "file")
    assert (again.seq, again.hash, again.events, again.time) == (anchor.seq, anchor.hash, anchor.events, anchor.time)
    for bad in ([], {"seq": -1, "hash": anchor.hash}, {"seq": 3, "hash": "abc"}, {"seq": "3", "hash": anchor.hash},
                {"seq": 3, "hash": anchor.hash, "time": "yesterday"}):
        with pytest.raises(InvalidAnchor):
            Anchor.from_dict(bad, "file")


# --- many events in one write -------------------------------------------------------------------------------


def many_notes(store: Store, count: int) -> None:
    """One write with ``count`` extra events (a register import's row events), more than one insert holds."""
    extra = [("test.row", "note", f"row-{i}", None, {"i": i}) for i in range(count)]
    store.write(SYSTEM, "test.import", lambda tx: Change("note", "import", None, {"rows": count},
                                                         extra_events=extra))


def test_a_write_of_many_events_chains_them_in_order_under_one_key(trail):
    first = rows(trail)[-1][0] + 1
    many_notes(trail, 450)
    events = rows(trail)[first - 1:]
    assert [e[0] for e in events] == list(range(first, first + 451))
    assert [e[6] for e in events] == ["import"] + [f"row-{i}" for i in range(450)]
    assert all(e[9] == before[10] for before, e in zip(events, events[1:], strict=False))  # each links the one before
    assert {e[11] for e in events} == {rows(trail)[first - 2][11]}
    assert verify_chain(trail).ok


def test_after_a_rotation_a_write_of_many_events_is_signed_with_the_new_key(trail):
    _, new_key = rotate_key(trail, SYSTEM)
    many_notes(trail, 250)
    assert {e[11] for e in rows(trail)[-251:]} == {new_key}
    assert verify_chain(trail).ok
    # an edit of one of them, re-chained without the key, is caught
    rechain_unkeyed(trail, rows(trail)[-100][0], edit={"after": '{"i": -1}'})
    assert not verify_chain(trail).ok
