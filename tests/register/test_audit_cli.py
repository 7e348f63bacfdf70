"""The audit trail at the command line and as the audit page reads it.

``python -m register audit verify`` exits 0 on an intact chain and 1 naming the first broken event
after an edit, a deletion or a reordering done behind the register's back; ``users`` commands work
and are audited; the page's filters bind every value (injection strings are only ever data).
"""

from __future__ import annotations

import csv
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from register import SYSTEM, Actor, Store
from register.db.audit import EVENT_COLUMNS, EventFilter, search_events, verify_chain, write_events_csv
from register.db.export import FORMULA_PREFIXES
from register.db.store import Change
from tests.helpers.actors import enrol
from tests.helpers.paths import REPO_ROOT

DATA = REPO_ROOT / "tests" / "data" / "import"


@pytest.fixture
def cli(register_cli):
    """Run ``python -m register ARGS`` (in this process) on a temp database, acting as 'Olive Operator'."""
    return register_cli("Olive Operator")


@pytest.fixture
def trail(cli):
    """A database with an import and users, so at least 7 audit events, written through the CLI."""
    assert cli("init").returncode == 0
    assert cli("import", str(DATA / "responses.jsonl")).returncode == 0
    assert cli("users", "bootstrap").returncode == 0
    assert cli("users", "add", "rita", "--role", "reviewer").returncode == 0
    ok = cli("audit", "verify")
    assert ok.returncode == 0, ok.stderr
    events = int(ok.stdout.split("verifies: ")[1].split()[0])
    assert events >= 7
    return cli, events


def tamper(db: Path, *statements: tuple[str, list]) -> None:
    store = Store(db)
    try:
        with store.cursor() as cur:
            for sql, params in statements:
                cur.execute(sql, params)
    finally:
        store.close()


def test_an_intact_trail_verifies(trail):
    cli, events = trail
    result = cli("audit", "verify")
    assert result.returncode == 0 and f"audit trail verifies: {events:,} events" in result.stdout


def test_an_edited_event_is_named(trail):
    cli, _ = trail
    tamper(cli.db, ("UPDATE audit_events SET actor_name = 'Mallory' WHERE seq = 5", []))
    result = cli("audit", "verify")
    assert result.returncode == 1
    assert "first broken event 5 of" in result.stderr and "edited" in result.stderr
    assert result.stderr.startswith("Audit trail does not verify:")


def test_a_recomputed_hash_does_not_hide_an_edit(trail):
    """Editing an event and recomputing its hash (the unkeyed SHA-256 anyone can compute) is found at that event:
    its hash is an HMAC under the keyring's key."""
    from register.db.audit import event_hash

    cli, _ = trail
    store = Store(cli.db)
    try:
        seq, at, name, role, action, etype, eid, before, after, prev = store.query_one(
            "SELECT seq, occurred_at, actor_name, actor_role, action, entity_type, entity_id, before, after, prev_hash "
            "FROM audit_events WHERE seq = 3")
        forged = event_hash(prev, seq, at, "Mallory", role, action, etype, eid, before, after)
        with store.cursor() as cur:
            cur.execute("UPDATE audit_events SET actor_name = 'Mallory', hash = ? WHERE seq = 3", [forged])
    finally:
        store.close()
    result = cli("audit", "verify")
    assert result.returncode == 1 and "first broken event 3 of" in result.stderr and "signed hash" in result.stderr


def test_a_deleted_event_is_named(trail):
    cli, events = trail
    tamper(cli.db, ("DELETE FROM audit_events WHERE seq = 4", []))
    result = cli("audit", "verify")
    assert result.returncode == 1
    assert f"first broken event 5 of {events - 1}" in result.stderr and "missing" in result.stderr


def test_deleting_the_newest_event_is_caught_by_the_anchor_its_command_left(trail):
    """A truncated tail still chains, so only an anchor catches it: the command that wrote the newest event anchored
    the head when it closed the register (register.db.anchors), and the anchor folder is checked without asking."""
    cli, events = trail
    tamper(cli.db, ("DELETE FROM audit_events WHERE seq = ?", [events]))
    result = cli("audit", "verify")
    assert result.returncode == 1 and "verifies" not in result.stdout
    assert "anchor folder" in result.stderr and f"which ends at event {events - 1}" in result.stderr


def test_reordered_events_are_named(trail):
    cli, _ = trail
    tamper(cli.db,
           ("UPDATE audit_events SET seq = -1 WHERE seq = 3", []),
           ("UPDATE audit_events SET seq = 3 WHERE seq = 6", []),
           ("UPDATE audit_events SET seq = 6 WHERE seq = -1", []))
    result = cli("audit", "verify")
    assert result.returncode == 1 and "first broken event 3 of" in result.stderr


def test_cli_writes_are_recorded_as_the_operator_with_the_system_role(trail):
    cli, _ = trail
    store = Store(cli.db)
    try:
        rows = store.query("SELECT DISTINCT actor_name, actor_role FROM audit_events "
                           "WHERE action IN ('import.start', 'user.create')")
    finally:
        store.close()
    assert rows == [("Olive Operator", "system")]


def test_users_commands(cli):
    assert cli("init").returncode == 0
    boot = cli("users", "bootstrap")
    assert boot.returncode == 0 and "One-time password" in boot.stdout
    password = boot.stdout.strip().splitlines()[-1].strip()
    again = cli("users", "bootstrap")
    assert again.returncode == 0 and "accounts exist" in again.stdout and password not in again.stdout
    assert cli("users", "add", "rita", "--role", "reviewer", "--name", "Rita R").returncode == 0
    assert cli("users", "set-role", "rita", "annotator").returncode == 0
    assert cli("users", "disable", "rita").returncode == 0
    listing = cli("users", "list").stdout
    assert "rita\tannotator\tdisabled\tRita R" in listing and "admin\tadmin\tactive" in listing
    refused = cli("users", "disable", "admin")
    assert refused.returncode == 1 and "last enabled admin" in refused.stderr
    bad_role = cli("users", "add", "x1", "--role", "root")
    assert bad_role.returncode == 64


# --- the audit page's query --------------------------------------------------------------------

INJECTIONS = ["' OR '1'='1", "x'); DROP TABLE audit_events; --", "%", "_", "\\", "Robert'); --"]


@pytest.fixture
def events(store):
    enrol(store, *(Actor(name, "reviewer") for name in ["alice", "bob", "O'Brien", "' OR '1'='1"]))
    for i, name in enumerate(["alice", "bob", "O'Brien", "' OR '1'='1"]):
        store.write(Actor(name, "reviewer"), f"test.action{i % 2}", lambda cur, i=i: Change("thing", f"t-{i}"))
    return store


def test_search_filters_by_actor_action_entity_and_time(events):
    frame, total = search_events(events, EventFilter(actor="BOB"))
    assert total == 1 and list(frame["actor_name"]) == ["bob"]
    frame, total = search_events(events, EventFilter(actions=("test.action1",)))
    assert set(frame["actor_name"]) == {"bob", "' OR '1'='1"}
    frame, total = search_events(events, EventFilter(entity_type="thing", entity_id="t-2"))
    assert list(frame["actor_name"]) == ["O'Brien"]
    now = datetime.now(UTC)
    assert search_events(events, EventFilter(since=now + timedelta(hours=1)))[1] == 0
    assert search_events(events, EventFilter(until=now + timedelta(hours=1)))[1] == \
        events.query_one("SELECT count(*) FROM audit_events")[0]
    frame, _ = search_events(events, EventFilter())
    assert list(frame["seq"]) == sorted(frame["seq"], reverse=True)  # newest first


@pytest.mark.parametrize("text", INJECTIONS)
def test_injection_strings_in_filters_are_only_data(events, text):
    total_before = events.query_one("SELECT count(*) FROM audit_events")[0]
    for f in (EventFilter(actor=text), EventFilter(actions=(text,)), EventFilter(entity_type=text),
              EventFilter(entity_id=text)):
        frame, total = search_events(events, f)
        expected = [n for (n,) in events.query("SELECT actor_name FROM audit_events")
                    if f.actor and f.actor.lower() in n.lower()] if f.actor else []
        assert total == len(expected)
    assert events.query_one("SELECT count(*) FROM audit_events")[0] == total_before  # nothing dropped
    assert verify_chain(events).ok


def test_the_literal_injection_actor_is_found_literally(events):
    frame, total = search_events(events, EventFilter(actor="' OR '1'='1"))
    assert total == 1 and list(frame["actor_name"]) == ["' OR '1'='1"]


def _csv(path) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle))


def test_the_csv_export_is_the_list_written_by_duckdb_with_formulas_escaped(events, tmp_path):
    hostile = Actor('=HYPERLINK("http://x","y")', "reviewer")
    enrol(events, hostile)
    events.write(hostile, "test.action0", lambda cur: Change("thing", "+t-9"))
    frame, total = search_events(events, EventFilter(), limit=100_000)
    written = write_events_csv(events, EventFilter(), tmp_path / "audit.csv")
    rows = _csv(written.path)
    assert rows[0] == list(EVENT_COLUMNS) and written.rows == total == len(rows) - 1
    assert [int(r[0]) for r in rows[1:]] == list(frame["seq"])  # newest first, as the page lists them
    event = next(dict(zip(rows[0], r, strict=True)) for r in rows[1:] if r[6] == "'+t-9")
    assert event["actor_name"] == "'" + hostile.name
    assert not [v for r in rows[1:] for v in r if v.startswith(FORMULA_PREFIXES)]
    assert [r[2] for r in _csv(write_events_csv(events, EventFilter(actor="BOB"), tmp_path / "b.csv").path)[1:]] \
        == ["bob"]
    literal = write_events_csv(events, EventFilter(actor="' OR '1'='1"), tmp_path / "c.csv")
    assert literal.rows == 1 and _csv(literal.path)[1][2] == "' OR '1'='1"
    assert write_events_csv(events, EventFilter(), tmp_path / "d.csv", limit=2).rows == 2


def test_the_system_actor_is_a_constant():
    assert (SYSTEM.name, SYSTEM.role) == ("system", "system")
