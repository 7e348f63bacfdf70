"""The store: migrations applied once and never edited, one transaction per write with its audit event,
and threads that each take their own cursor (ARCHITECTURE.md, "One owner for the database")."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from register import Actor, MigrationError, Store
from register.db import store as store_module
from register.db.audit import verify_chain
from register.db.store import Change
from tests.helpers.actors import enrol

ALICE = Actor("Alice Example", "reviewer")
BOB = Actor("Bob Example", "annotator")

@pytest.fixture
def store(store):
    """The shared register, with accounts for this module's actors (the register re-reads them on every write)."""
    enrol(store, ALICE, BOB)
    return store



def landed_migrations() -> list[str]:
    """The migration files shipped with the register, in the order they apply."""
    return sorted(path.name for path in store_module.MIGRATIONS_DIR.glob("*.sql"))


def schema_snapshot(store: Store) -> tuple[list[tuple], list[tuple]]:
    """The recorded migrations and every table with its columns (name, type, nullability)."""
    migrations = store.query("SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version")
    columns = store.query(
        "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
        "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position")
    return migrations, columns


def table_names(store: Store) -> set[str]:
    return {row[0] for row in store.query("SELECT table_name FROM information_schema.tables "
                                          "WHERE table_schema = 'main'")}


def audit_count(store: Store) -> int:
    return store.query_one("SELECT count(*) FROM audit_events")[0]


def add_source(source_id: str, title: str = "a title") -> Callable[[Any], Change]:
    """A write function inserting one source row."""
    def fn(cur) -> Change:
        cur.execute("INSERT INTO sources (source_id, title) VALUES (?, ?)", [source_id, title])
        return Change("source", source_id, None, {"title": title}, result=source_id)
    return fn


# --- migrations -------------------------------------------------------------------------------------


def test_migrations_apply_once_and_a_second_open_changes_nothing(tmp_path):
    path = tmp_path / "register.duckdb"
    first = Store(path)
    try:
        assert first.applied_migrations == landed_migrations()
        assert first.applied_migrations[0] == "001_initial.sql"
        before = schema_snapshot(first)
        tables_before = table_names(first)
    finally:
        first.close()
    assert {"schema_migrations", "responses", "claims", "scores", "audit_events"} <= tables_before
    assert [(v, n) for v, n, _, _ in before[0]] == [(int(n[:3]), n) for n in landed_migrations()]

    second = Store(path)
    try:
        assert second.applied_migrations == []
        assert schema_snapshot(second) == before  # same rows (applied_at too) and same columns
        assert table_names(second) == tables_before
    finally:
        second.close()


def test_migration_checksum_recorded_matches_the_file(tmp_path):
    import hashlib

    store = Store(tmp_path / "register.duckdb")
    try:
        (checksum,) = store.query_one("SELECT checksum FROM schema_migrations WHERE version = 1")
    finally:
        store.close()
    text = (store_module.MIGRATIONS_DIR / "001_initial.sql").read_text(encoding="utf-8")
    assert checksum == hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def migrations_copy(tmp_path, monkeypatch):
    """The real migrations copied to a temp folder that the store reads instead."""
    folder = tmp_path / "migrations"
    shutil.copytree(store_module.MIGRATIONS_DIR, folder)
    monkeypatch.setattr(store_module, "MIGRATIONS_DIR", folder)
    return folder


def test_an_edited_landed_migration_is_refused(tmp_path, migrations_copy):
    path = tmp_path / "register.duckdb"
    Store(path).close()
    landed = migrations_copy / "001_initial.sql"
    data = bytearray(landed.read_bytes())
    at = data.index(b"Never edit")
    data[at] = ord("n")  # one byte, inside a comment: the SQL would still run the same
    landed.write_bytes(bytes(data))

    with pytest.raises(MigrationError) as raised:
        Store(path)
    assert "001_initial.sql" in str(raised.value)
    assert "changed after it was applied" in str(raised.value)


def test_an_edit_that_only_appends_whitespace_is_still_refused(tmp_path, migrations_copy):
    path = tmp_path / "register.duckdb"
    Store(path).close()
    landed = migrations_copy / "001_initial.sql"
    landed.write_bytes(landed.read_bytes() + b"\n")

    with pytest.raises(MigrationError, match=r"001_initial\.sql"):
        Store(path)


def test_a_new_numbered_migration_is_applied_on_the_next_open(tmp_path, migrations_copy):
    path = tmp_path / "register.duckdb"
    Store(path).close()
    landed = landed_migrations()
    version = int(landed[-1][:3]) + 1
    name = f"{version:03d}_test_notes.sql"
    (migrations_copy / name).write_text("CREATE TABLE test_notes (note_id INTEGER, body VARCHAR);\n",
                                        encoding="utf-8")
    store = Store(path)
    try:
        assert store.applied_migrations == [name]
        assert "test_notes" in table_names(store)
        assert [r[:2] for r in store.query("SELECT version, name FROM schema_migrations ORDER BY version")] == [
            (int(n[:3]), n) for n in [*landed, name]]
    finally:
        store.close()


def test_a_badly_named_migration_file_is_refused(tmp_path, migrations_copy):
    (migrations_copy / "2_Notes.sql").write_text("SELECT 1;\n", encoding="utf-8")
    with pytest.raises(MigrationError, match=r"2_Notes\.sql"):
        Store(tmp_path / "register.duckdb")


# --- writes ------------------------------------------------------------------------------------------


def test_a_failing_write_rolls_back_everything(store):
    events_before = audit_count(store)
    sources_before = store.query_one("SELECT count(*) FROM sources")[0]

    def fn(cur) -> Change:
        cur.execute("INSERT INTO sources (source_id, title) VALUES ('s-1', 'first')")
        cur.execute("INSERT INTO sources (source_id, title) VALUES ('s-2', 'second')")
        assert cur.scalar("SELECT count(*) FROM sources") == sources_before + 2
        raise ValueError("the user's action failed half-way")

    with pytest.raises(ValueError, match="half-way"):
        store.write(ALICE, "source.create", fn)

    assert store.query_one("SELECT count(*) FROM sources")[0] == sources_before
    assert audit_count(store) == events_before
    # the store is usable afterwards: the next write commits normally
    assert store.write(ALICE, "source.create", add_source("s-3")) == "s-3"
    assert store.query("SELECT source_id FROM sources") == [("s-3",)]
    assert audit_count(store) == events_before + 1


def test_a_write_failing_in_sql_rolls_back_its_earlier_statements(store):
    events_before = audit_count(store)

    def fn(cur) -> Change:
        cur.execute("INSERT INTO sources (source_id, title) VALUES ('dup', 'one')")
        cur.execute("INSERT INTO sources (source_id, title) VALUES ('dup', 'two')")  # primary key clash
        return Change("source", "dup")

    with pytest.raises(Exception, match="(?i)duplicate|constraint"):
        store.write(ALICE, "source.create", fn)
    assert store.query_one("SELECT count(*) FROM sources WHERE source_id = 'dup'")[0] == 0
    assert audit_count(store) == events_before


def test_every_write_appends_exactly_one_audit_event_with_actor_as_text(store):
    before = audit_count(store)
    result = store.write(ALICE, "source.create", add_source("contract-2024-07", "Supplier contract"))
    assert result == "contract-2024-07"
    rows = store.query("SELECT seq, actor_name, actor_role, action, entity_type, entity_id, before, after "
                       "FROM audit_events WHERE seq > ? ORDER BY seq", [before])
    assert rows == [(before + 1, "Alice Example", "reviewer", "source.create", "source", "contract-2024-07",
                     None, '{"title":"Supplier contract"}')]
    types = dict(store.query("SELECT column_name, data_type FROM information_schema.columns "
                             "WHERE table_name = 'audit_events' AND column_name IN ('actor_name', 'actor_role')"))
    assert types == {"actor_name": "VARCHAR", "actor_role": "VARCHAR"}

    store.write(BOB, "source.create", add_source("price-list-2024"))
    assert audit_count(store) == before + 2
    assert store.query_one("SELECT actor_name, actor_role FROM audit_events ORDER BY seq DESC LIMIT 1") == (
        "Bob Example", "annotator")


def test_extra_events_are_appended_in_the_same_transaction(store):
    before = audit_count(store)

    def fn(cur) -> Change:
        cur.execute("INSERT INTO sources (source_id) VALUES ('s-x')")
        return Change("source", "s-x", None, {"id": "s-x"},
                      extra_events=[("source.note", "source", "s-x", None, {"note": "linked"})])

    store.write(ALICE, "source.create", fn)
    assert store.query("SELECT seq, action, actor_name FROM audit_events WHERE seq > ? ORDER BY seq", [before]) == [
        (before + 1, "source.create", "Alice Example"), (before + 2, "source.note", "Alice Example")]
    assert verify_chain(store).ok


def test_two_threads_writing_at_once_both_succeed_and_the_chain_verifies(store):
    before = audit_count(store)
    per_thread = 25
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def worker(actor: Actor, prefix: str) -> None:
        try:
            barrier.wait()
            for i in range(per_thread):
                store.write(actor, "source.create", add_source(f"{prefix}-{i}"))
        except BaseException as error:  # collected and asserted on in the main thread
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(ALICE, "a")), threading.Thread(target=worker, args=(BOB, "b"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert errors == [], errors[:1]

    assert store.query_one("SELECT count(*) FROM sources")[0] == 2 * per_thread
    assert dict(store.query("SELECT actor_name, count(*) FROM audit_events WHERE seq > ? GROUP BY actor_name",
                            [before])) == {"Alice Example": per_thread, "Bob Example": per_thread}
    seqs = [r[0] for r in store.query("SELECT seq FROM audit_events ORDER BY seq")]
    assert seqs == list(range(1, before + 2 * per_thread + 1))
    report = verify_chain(store)
    assert (report.ok, report.events, report.first_bad_seq) == (True, before + 2 * per_thread, None)


def test_reads_from_several_threads_at_once(store):
    for i in range(20):
        store.write(ALICE, "source.create", add_source(f"s-{i:02d}", f"title {i}"))
    expected_ids = [(f"s-{i:02d}",) for i in range(20)]
    barrier = threading.Barrier(8)

    def reader(n: int) -> tuple[list[tuple], tuple, int]:
        barrier.wait()
        rows = ids = None
        for _ in range(30):
            ids = store.query("SELECT source_id FROM sources ORDER BY source_id")
            rows = store.query_one("SELECT title FROM sources WHERE source_id = ?", [f"s-{n:02d}"])
        return ids, rows, n

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(reader, range(8)))
    for ids, title, n in results:
        assert ids == expected_ids
        assert title == (f"title {n}",)


def test_reads_while_another_thread_writes(store):
    stop = threading.Event()
    seen: list[int] = []
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            while not stop.is_set():
                seen.append(store.query_one("SELECT count(*) FROM sources")[0])
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for thread in threads:
        thread.start()
    try:
        for i in range(30):
            store.write(ALICE, "source.create", add_source(f"w-{i}"))
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    assert errors == [], errors[:1]
    assert seen and all(0 <= n <= 30 for n in seen)
    assert store.query_one("SELECT count(*) FROM sources")[0] == 30
    assert verify_chain(store).ok


def test_a_watched_statement_reports_its_progress_and_its_result(tmp_path):
    """``Cursor.execute_watched``: DuckDB's estimate of a running statement reaches the caller's thread, the
    statement's row count comes back, and a failing statement raises the register's error there."""
    from register.errors import DatabaseError

    store = Store(tmp_path / "watched.duckdb")
    heard: list[tuple[float, str]] = []
    try:
        with store.cursor() as cur:
            count = cur.execute_watched(
                "CREATE TEMP TABLE t AS SELECT i % 100003 AS k, count(*) AS n FROM range(20000000) r(i) GROUP BY 1",
                (), lambda fraction: heard.append((fraction, threading.current_thread().name)), every=0.02)
            assert count == 100003
            assert heard and all(0.0 <= f <= 1.0 for f, _ in heard)
            assert {name for _, name in heard} == {threading.current_thread().name}  # told in the caller's thread
            with pytest.raises(DatabaseError):
                cur.execute_watched("SELECT * FROM no_such_table", (), lambda fraction: None, every=0.02)
    finally:
        store.close()
