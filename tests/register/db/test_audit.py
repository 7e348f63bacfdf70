"""The audit trail is hash-chained: a fresh chain verifies, and every kind of tampering is found at the
right event (DOMAIN.md section 7; ARCHITECTURE.md "Testing layers")."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from register import Actor, Store
from register.db.audit import GENESIS_HASH, ChainReport, event_hash, verify_chain
from register.db.store import Change
from tests.helpers.actors import enrol

ALICE = Actor("Alice Example", "reviewer")
EVENTS = 6  # whatever the store fixture wrote (the default profile), then source writes up to six

@pytest.fixture
def store(store):
    """The shared register, with accounts for this module's actors (the register re-reads them on every write)."""
    enrol(store, ALICE)
    return store



@pytest.fixture
def chained(store: Store) -> Store:
    """A register with exactly EVENTS audit events: the fixture's own, then sources."""
    start = store.query_one("SELECT count(*) FROM audit_events")[0]
    assert 1 <= start < EVENTS
    for i in range(start, EVENTS):
        def fn(cur, i=i) -> Change:
            cur.execute("INSERT INTO sources (source_id, title) VALUES (?, ?)", [f"s-{i}", f"title {i}"])
            return Change("source", f"s-{i}", None, {"title": f"title {i}"})
        store.write(ALICE, "source.create", fn)
    assert store.query_one("SELECT count(*) FROM audit_events")[0] == EVENTS
    return store


def tamper(store: Store, *statements: tuple[str, list]) -> None:
    """Change audit rows behind the trail's back, as someone with file access could."""
    with store.cursor() as cur:
        for sql, params in statements:
            cur.execute(sql, params)


def event_row(store: Store, seq: int) -> tuple:
    return store.query_one(
        "SELECT seq, occurred_at, actor_name, actor_role, action, entity_type, entity_id, before, after, "
        "prev_hash, hash FROM audit_events WHERE seq = ?", [seq])


def test_a_fresh_database_chain_verifies(chained):
    report = verify_chain(chained)
    assert (report.ok, report.events, report.first_bad_seq, report.reason) == (True, EVENTS, None, None)
    first = event_row(chained, 1)
    assert first[9] == GENESIS_HASH
    # every event links to its predecessor's hash
    rows = chained.query("SELECT prev_hash, hash FROM audit_events ORDER BY seq")
    assert [prev for prev, _ in rows[1:]] == [h for _, h in rows[:-1]]


def test_an_empty_chain_verifies_with_no_events(tmp_path):
    store = Store(tmp_path / "empty.duckdb")
    try:
        assert verify_chain(store) == ChainReport(ok=True, events=0)
    finally:
        store.close()


def test_edited_after_text_is_detected_at_that_event(chained):
    tamper(chained, ("UPDATE audit_events SET after = ? WHERE seq = 4", ['{"title":"something else"}']))
    report = verify_chain(chained)
    assert (report.ok, report.events, report.first_bad_seq) == (False, EVENTS, 4)
    assert "edited" in report.reason


@pytest.mark.parametrize("column, value", [
    ("actor_name", "Mallory"),
    ("actor_role", "admin"),
    ("action", "source.delete"),
    ("entity_id", "s-99"),
    ("before", '{"title":"old"}'),
])
def test_any_edited_field_is_detected_at_that_event(chained, column, value):
    tamper(chained, (f"UPDATE audit_events SET {column} = ? WHERE seq = 3", [value]))
    report = verify_chain(chained)
    assert (report.ok, report.first_bad_seq) == (False, 3)


def test_edited_time_is_detected_at_that_event(chained):
    tamper(chained, ("UPDATE audit_events SET occurred_at = occurred_at + INTERVAL 1 SECOND WHERE seq = 5", []))
    report = verify_chain(chained)
    assert (report.ok, report.first_bad_seq) == (False, 5)


def test_a_deleted_middle_row_is_detected_at_the_next_event(chained):
    tamper(chained, ("DELETE FROM audit_events WHERE seq = 3", []))
    report = verify_chain(chained)
    assert (report.ok, report.events, report.first_bad_seq) == (False, EVENTS - 1, 4)
    assert "event 3 is missing" in report.reason


def test_a_deleted_middle_row_with_renumbered_successors_is_detected(chained):
    """Closing the gap in seq does not help: each event's hash covers its seq and its predecessor."""
    tamper(chained, ("DELETE FROM audit_events WHERE seq = 3", []),
           *[("UPDATE audit_events SET seq = ? WHERE seq = ?", [s - 1, s]) for s in range(4, EVENTS + 1)])
    report = verify_chain(chained)
    assert (report.ok, report.events, report.first_bad_seq) == (False, EVENTS - 1, 3)


def test_swapped_rows_are_detected_at_the_first_swapped_position(chained):
    fifth = event_row(chained, 5)
    tamper(chained,
           ("UPDATE audit_events SET seq = -1 WHERE seq = 2", []),
           ("UPDATE audit_events SET seq = 2 WHERE seq = 5", []),
           ("UPDATE audit_events SET seq = 5 WHERE seq = -1", []))
    assert event_row(chained, 2)[1:] == fifth[1:]  # the swap took: seq 2 now holds the fifth event
    report = verify_chain(chained)
    assert (report.ok, report.events, report.first_bad_seq) == (False, EVENTS, 2)


def test_swapped_neighbours_are_detected(chained):
    tamper(chained,
           ("UPDATE audit_events SET seq = -1 WHERE seq = 3", []),
           ("UPDATE audit_events SET seq = 3 WHERE seq = 4", []),
           ("UPDATE audit_events SET seq = 4 WHERE seq = -1", []))
    report = verify_chain(chained)
    assert (report.ok, report.first_bad_seq) == (False, 3)


def _forge(store: Store, at_seq: int, prev_hash: str) -> None:
    """Shift events at_seq.. up by one and insert a forged event at at_seq whose own hash is correct."""
    last = store.query_one("SELECT max(seq) FROM audit_events")[0]
    shifts = [("UPDATE audit_events SET seq = ? WHERE seq = ?", [s + 1, s]) for s in range(last, at_seq - 1, -1)]
    at = datetime(2026, 11, 15, 8, 0, tzinfo=UTC)
    forged = [at_seq, at, "Alice Example", "reviewer", "source.delete", "source", "s-1", None, None]
    digest = event_hash(prev_hash, *forged)
    tamper(store, *shifts, (
        "INSERT INTO audit_events (seq, occurred_at, actor_name, actor_role, action, entity_type, entity_id, "
        "before, after, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        forged + [prev_hash, digest]))


def test_a_forged_event_linked_to_its_predecessor_is_detected_at_itself(chained):
    """The forger reads event 3's hash and links to it correctly with a correct SHA-256; the forged event is
    not signed with the keyring's key, so it is found at its own place (no longer at the displaced event 4)."""
    _forge(chained, 4, event_row(chained, 3)[10])
    forged = event_row(chained, 4)
    assert forged[4] == "source.delete"
    assert forged[10] == event_hash(forged[9], *forged[:9])  # the forged row verifies on its own
    report = verify_chain(chained)
    assert (report.ok, report.events, report.first_bad_seq) == (False, EVENTS + 1, 4)
    assert "not signed" in report.reason


def test_a_forged_event_not_linked_to_its_predecessor_is_detected_at_itself(chained):
    """Its own hash is recomputed, but over a previous hash that is not event 3's."""
    _forge(chained, 4, event_row(chained, 5)[9])  # reuses a later event's prev_hash
    report = verify_chain(chained)
    assert (report.ok, report.events, report.first_bad_seq) == (False, EVENTS + 1, 4)
    assert "does not link" in report.reason


def test_verification_reports_only_the_first_of_several_breaks(chained):
    tamper(chained,
           ("UPDATE audit_events SET after = '{}' WHERE seq = 5", []),
           ("UPDATE audit_events SET after = '{}' WHERE seq = 2", []))
    assert verify_chain(chained).first_bad_seq == 2


def test_writes_after_tampering_do_not_repair_the_chain(chained):
    tamper(chained, ("UPDATE audit_events SET actor_name = 'Mallory' WHERE seq = 2", []))

    def fn(cur) -> Change:
        cur.execute("INSERT INTO sources (source_id) VALUES ('later')")
        return Change("source", "later")

    chained.write(ALICE, "source.create", fn)
    report = verify_chain(chained)
    assert (report.ok, report.events, report.first_bad_seq) == (False, EVENTS + 1, 2)
