"""The store as the register's one gateway to DuckDB: read helpers, Arrow relations, row counts, the
retry of a conflicting write, and DuckDB's exceptions arriving as the register's own errors
(``DatabaseInUse`` for a file held by another process, ``WriteConflict``, ``DatabaseError``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pandas as pd
import pyarrow as pa
import pytest

from register import Actor, RegisterError, Store
from register.cli.common import render_error
from register.db.audit import verify_chain
from register.db.store import Change
from register.errors import DatabaseError, DatabaseInUse, NotFound, WriteConflict
from tests.helpers.actors import enrol
from tests.helpers.paths import REPO_ROOT

ALICE = Actor("Alice Example", "reviewer")

@pytest.fixture
def store(store):
    """The shared register, with accounts for this module's actors (the register re-reads them on every write)."""
    enrol(store, ALICE)
    return store



def add_sources(store: Store, *rows: tuple[str, str]) -> None:
    def fn(tx) -> Change:
        for source_id, title in rows:
            tx.execute("INSERT INTO sources (source_id, title) VALUES (?, ?)", [source_id, title])
        return Change("source", None)
    store.write(ALICE, "source.create", fn)


def audit_events(store: Store, action: str) -> int:
    return store.scalar("SELECT count(*) FROM audit_events WHERE action = ?", [action])


# --- read helpers -------------------------------------------------------------------------------------


def test_read_helpers_return_plain_python(store):
    add_sources(store, ("s-1", "first"), ("s-2", "second"))
    sql = "SELECT source_id, title FROM sources WHERE source_id >= ? ORDER BY source_id"

    assert store.scalar(sql, ["s-1"]) == "s-1"
    assert store.scalar(sql, ["s-9"]) is None
    assert store.one(sql, ["s-2"]) == {"source_id": "s-2", "title": "second"}
    assert store.one(sql, ["s-9"]) is None
    assert store.dicts(sql, ["s-1"]) == [{"source_id": "s-1", "title": "first"},
                                         {"source_id": "s-2", "title": "second"}]
    assert store.dicts(sql, ["s-9"]) == []
    frame = store.frame(sql, ["s-1"])
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == ["source_id", "title"] and frame["title"].tolist() == ["first", "second"]
    # named parameters ($name) as a dict
    assert store.scalar("SELECT title FROM sources WHERE source_id = $id", {"id": "s-2"}) == "second"


def test_row_is_the_row_a_caller_counts_on_and_not_found_names_what_is_missing(store):
    add_sources(store, ("s-1", "first"))
    sql = "SELECT source_id, title FROM sources WHERE source_id = ?"

    assert store.row(sql, ["s-1"], what="source s-1") == {"source_id": "s-1", "title": "first"}
    assert store.query_row(sql, ["s-1"], what="source s-1") == ("s-1", "first")
    with pytest.raises(NotFound) as raised:
        store.row(sql, ["s-9"], what="source s-9")
    assert str(raised.value) == "source s-9 does not exist" and raised.value.title == "Not found"
    with pytest.raises(NotFound, match=r"^scoring profile version 7 does not exist$"):
        store.query_row("SELECT * FROM scoring_profiles WHERE profile_version = ?", [7],
                        what="scoring profile version 7")
    with store.cursor() as cur:  # an operation's cursor, the same
        assert cur.row(sql, ["s-1"], what="source s-1")["title"] == "first"
        with pytest.raises(NotFound, match=r"^source s-9 does not exist$"):
            cur.query_row(sql, ["s-9"], what="source s-9")


def test_row_inside_a_write_refuses_the_write_with_not_found(store):
    def fn(tx) -> Change:
        tx.execute("INSERT INTO sources (source_id, title) VALUES ('t-1', 'one')")
        assert tx.row("SELECT title FROM sources WHERE source_id = 't-1'", what="source t-1") == {"title": "one"}
        tx.query_row("SELECT title FROM sources WHERE source_id = ?", ["t-9"], what="source t-9")
        return Change("source", None)

    with pytest.raises(NotFound, match=r"^source t-9 does not exist$"):
        store.write(ALICE, "source.create", fn)
    assert store.scalar("SELECT count(*) FROM sources WHERE source_id = 't-1'") == 0  # rolled back whole
    assert audit_events(store, "source.create") == 0


def test_a_transaction_reads_what_it_wrote_before_commit(store):
    seen = {}

    def fn(tx) -> Change:
        written = tx.execute("INSERT INTO sources (source_id, title) VALUES ('t-1', 'one'), ('t-2', 'two')")
        changed = tx.execute("UPDATE sources SET title = upper(title) WHERE source_id LIKE 't-%'")
        seen.update(written=written, changed=changed, scalar=tx.scalar("SELECT count(*) FROM sources"),
                    one=tx.one("SELECT title FROM sources WHERE source_id = 't-2'"),
                    dicts=tx.dicts("SELECT source_id FROM sources ORDER BY source_id"),
                    frame=tx.frame("SELECT title FROM sources ORDER BY source_id")["title"].tolist(),
                    ddl=tx.execute("CREATE TEMP TABLE _scratch (x INTEGER)"))
        return Change("source", None)

    store.write(ALICE, "source.create", fn)
    assert seen == {"written": 2, "changed": 2, "scalar": 2, "one": {"title": "TWO"},
                    "dicts": [{"source_id": "t-1"}, {"source_id": "t-2"}], "frame": ["ONE", "TWO"], "ddl": None}


def test_stream_yields_every_row_in_batches(store):
    add_sources(store, *((f"s-{i:03d}", f"title {i}") for i in range(25)))
    with store.cursor() as cur:
        rows = list(cur.stream("SELECT source_id FROM sources ORDER BY source_id", batch_size=4))
    assert rows == [(f"s-{i:03d}",) for i in range(25)]


def test_an_arrow_table_is_a_relation_only_inside_its_block(store):
    table = pa.table({"source_id": ["a-1", "a-2", "a-3"], "title": ["x", "y", "z"]})
    attempts = []

    def fn(tx) -> Change:
        attempts.append(1)
        with tx.relation("_incoming", table) as name:
            assert name == "_incoming"
            tx.execute("INSERT INTO sources (source_id, title) SELECT source_id, title FROM _incoming "
                       "WHERE title <> 'y'")
        with pytest.raises(DatabaseError, match="_incoming"):
            tx.scalar("SELECT count(*) FROM _incoming")
        return Change("source", None)

    # the failed read above aborted DuckDB's transaction: the write rolls back whole, reporting that
    # failure (not a conflict with another writer, so it is not retried)
    with pytest.raises(DatabaseError, match="(?s)_incoming.*stopped at that failure") as raised:
        store.write(ALICE, "source.create", fn)
    assert not isinstance(raised.value, WriteConflict) and attempts == [1]
    assert store.scalar("SELECT count(*) FROM sources") == 0

    def ok(tx) -> Change:
        with tx.relation("_incoming", table):
            tx.execute("INSERT INTO sources (source_id, title) SELECT source_id, title FROM _incoming "
                       "WHERE title <> 'y'")
        return Change("source", None)

    store.write(ALICE, "source.create", ok)
    assert store.query("SELECT source_id FROM sources ORDER BY 1") == [("a-1",), ("a-3",)]


@pytest.mark.parametrize("name", ["Incoming", "_x; DROP TABLE sources", "1table", ""])
def test_a_relation_name_must_be_a_plain_identifier(store, name):
    with store.cursor() as cur, pytest.raises(ValueError, match="relation name"), \
            cur.relation(name, pa.table({"a": [1]})):
        pass


# --- DuckDB's errors as the register's ----------------------------------------------------------------


def test_a_failing_statement_is_a_database_error_and_the_write_rolls_back(store):
    events_before = store.scalar("SELECT count(*) FROM audit_events")

    def fn(tx) -> Change:
        tx.execute("INSERT INTO sources (source_id, title) VALUES ('dup', 'one')")
        tx.execute("INSERT INTO sources (source_id, title) VALUES ('dup', 'two')")
        return Change("source", "dup")

    with pytest.raises(DatabaseError) as raised:
        store.write(ALICE, "source.create", fn)
    assert isinstance(raised.value, RegisterError) and raised.value.title == "Database error"
    assert "duplicate key" in str(raised.value).lower() and "nothing of it was saved" in str(raised.value)
    assert not isinstance(raised.value, WriteConflict)
    assert store.scalar("SELECT count(*) FROM sources") == 0
    assert store.scalar("SELECT count(*) FROM audit_events") == events_before


def test_a_bad_read_is_a_database_error(store):
    with pytest.raises(DatabaseError, match="no_such_table"):
        store.frame("SELECT * FROM no_such_table")


# --- a transaction conflict is retried once ----------------------------------------------------------


def _conflicting_write(store: Store, attempts: list[int], conflicts: int):
    """A write that updates source 's' while, on its first ``conflicts`` attempts, another transaction
    (a second cursor, as a concurrent writer would be) holds an uncommitted update of the same row."""
    def fn(tx) -> Change:
        attempts.append(len(attempts) + 1)
        if len(attempts) <= conflicts:
            with store.cursor() as other:
                other.execute("BEGIN TRANSACTION")
                other.execute("UPDATE sources SET title = 'theirs' WHERE source_id = 's'")
                try:
                    tx.execute("UPDATE sources SET title = 'mine' WHERE source_id = 's'")
                finally:
                    other.execute("COMMIT")
        else:
            tx.execute("UPDATE sources SET title = 'mine' WHERE source_id = 's'")
        return Change("source", "s", None, {"title": "mine"}, result=len(attempts))
    return fn


def test_a_conflicting_write_is_retried_once_and_then_commits(store):
    add_sources(store, ("s", "original"))
    attempts: list[int] = []

    result = store.write(ALICE, "source.retitle", _conflicting_write(store, attempts, conflicts=1))

    assert attempts == [1, 2] and result == 2
    assert store.scalar("SELECT title FROM sources WHERE source_id = 's'") == "mine"
    assert audit_events(store, "source.retitle") == 1  # the failed attempt left no event
    assert verify_chain(store).ok


def test_a_write_that_conflicts_twice_fails_with_write_conflict_and_saves_nothing(store):
    add_sources(store, ("s", "original"))
    attempts: list[int] = []

    with pytest.raises(WriteConflict) as raised:
        store.write(ALICE, "source.retitle", _conflicting_write(store, attempts, conflicts=2))

    assert attempts == [1, 2]
    assert raised.value.title == "Changed at the same time" and "try it again" in str(raised.value)
    assert store.scalar("SELECT title FROM sources WHERE source_id = 's'") == "theirs"  # the other writer's
    assert audit_events(store, "source.retitle") == 0
    assert verify_chain(store).ok


# --- a database file held by another process -----------------------------------------------------------

_HOLDER = textwrap.dedent("""
    import sys
    from register import Store
    store = Store(sys.argv[1])
    print("ready", flush=True)
    sys.stdin.read()  # hold the file until the test closes our stdin
    store.close()
""")


@pytest.fixture
def held_database(tmp_path):
    """A database file opened read-write by another process for the duration of the test."""
    path = tmp_path / "held.duckdb"
    Store(path).close()
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path)], cwd=REPO_ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready", holder.stderr.read()
        yield path, holder.pid
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)


def test_opening_a_file_held_by_another_process_is_database_in_use(held_database):
    path, pid = held_database
    with pytest.raises(DatabaseInUse) as raised:
        Store(path)
    error = raised.value
    assert isinstance(error, RegisterError) and error.title == "Database in use"
    assert str(path) in str(error) and f"PID {pid}" in str(error)
    assert "--db" in str(error)  # says what to do


def test_a_missing_row_reaches_the_command_line_as_not_found_with_its_name(store, capsys):
    with pytest.raises(NotFound) as raised:
        store.row("SELECT * FROM scoring_profiles WHERE profile_version = ?", [7], what="scoring profile version 7")
    render_error(raised.value)
    assert capsys.readouterr().err == "Not found: scoring profile version 7 does not exist\n"


def test_render_error_goes_by_the_error_type_not_its_text(capsys):
    render_error(DatabaseInUse("var/hri.duckdb is open in another process"))
    render_error(RuntimeError('IO Error: Could not set lock on file "var/hri.duckdb"'))
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["Database in use: var/hri.duckdb is open in another process",
                     'Unexpected error: RuntimeError: IO Error: Could not set lock on file "var/hri.duckdb"']
