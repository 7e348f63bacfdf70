"""The one owner of the DuckDB database file: the register's gateway to its data.

Opens the file read-write once per process, applies the numbered SQL migrations in
``register/db/migrations`` (each recorded once, with its checksum), and hands every operation its own
cursor. Callers never see DuckDB: they read through the store's helpers (``scalar``, ``one``, ``row``,
``dicts``, ``frame``, ``query``) with bound parameters, and write through ``Store.write``: one
transaction per user action, serialised by a lock, retried once on a transaction conflict, with the
action's audit event appended in the same transaction. The function a write runs receives a
``Transaction``: the same read helpers plus ``execute`` and ``relation`` (an Arrow table readable as
a relation for the duration of a block).

DuckDB's exceptions do not leave this module: they become the register's own errors
(``register.errors``): ``DatabaseInUse`` when another process holds the file, ``WriteConflict`` for a
transaction conflict, ``DatabaseError`` for anything else. No other module imports duckdb.

DuckDB allows one read-write process per file: the embedded deployment is one Streamlit process per
database file, and while it runs the command line's commands are carried out inside it (``register.cli.handoff``).
DuckDB installs and loads no extension on its own (the register needs
only those built in), and the write-ahead log of a killed process is replayed before the file opens
(``register.db.offline.replay_log``): the register opens after any crash without a network.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

import duckdb

from register.db import audit
from register.db.anchors import AnchorFolder, anchor_dir
from register.db.keyring import Keyring
from register.db.offline import NO_AUTOMATIC_EXTENSIONS, Config, log_of, replay_log, require_built_in_extensions
from register.errors import (
    DatabaseError,
    DatabaseInUse,
    MigrationError,
    NotFound,
    PermissionDenied,
    RegisterError,
    WriteConflict,
)
from register.settings import MEMORY_SIZE, settings

__all__ = ["SYSTEM", "Actor", "Change", "Cursor", "Store", "Transaction", "account_problem", "database_path_from_env",
           "utc_now"]

log = logging.getLogger(__name__)
MIGRATIONS_DIR = Path(__file__).with_name("migrations")
_MIGRATION_NAME = re.compile(r"^(\d{3})_([a-z0-9_]+)\.sql$")
_RELATION_NAME = re.compile(r"^_?[a-z][a-z0-9_]*$")
_LOCK_HOLDER = re.compile(r"\(PID (\d+)\)")

Bindings = Sequence[Any] | dict[str, Any]  # ? placeholders, or $name ones


@dataclass(frozen=True)
class Actor:
    """Who acts: name and role are copied into every audit event as text.

    An Actor is a claim made when the user logged in; the register does not trust it: every write re-reads
    the account it names (``account_problem``), in the write's own transaction.
    """

    name: str
    role: str


SYSTEM = Actor("system", "system")


def account_problem(reader, actor: Actor) -> str | None:
    """Why ``actor`` may not act now, or None when it may (``reader``: a store, or a write's transaction).

    Every actor but the command line's ``system`` role (whoever runs commands against the database file
    already controls it) is an account of the ``users`` table: local, company identity provider (``oidc``)
    or demo. The account must exist, be enabled, hold the role the Actor claims (an Actor made before a
    role change, down or up, is stale) and, for a demo account, demo mode must be on.
    """
    if actor.role == SYSTEM.role:
        return None
    # fetch every row (at most one: username is the key): a half-read result would block the write's next
    # statements on the same cursor (DuckDB refuses e.g. registering a relation while one is pending)
    rows = reader.query("SELECT role, disabled, kind FROM users WHERE username = ?", [actor.name])
    if not rows:
        return f"{actor.name} has no account in this register"
    role, disabled, kind = rows[0]
    if disabled:
        return f"the account {actor.name} is disabled"
    if kind == "demo" and not settings().demo_mode:
        return f"{actor.name} is a demo account and demo mode is off"
    if role != actor.role:
        return f"the role of {actor.name} is now {role}, not {actor.role}: reload the page (or log in again)"
    return None


@dataclass
class Change:
    """What a write function returns: the entity it touched and its state before and after."""

    entity_type: str
    entity_id: str | None = None
    before: Any = None
    after: Any = None
    result: Any = None
    extra_events: list[tuple[str, str, str | None, Any, Any]] = field(default_factory=list)


def utc_now() -> datetime:
    return datetime.now(UTC)


# --- DuckDB's exceptions as the register's own ------------------------------------------------------


def _translated(error: duckdb.Error) -> DatabaseError:
    """The register's error for a DuckDB exception (the caller raises it ``from`` the original)."""
    if isinstance(error, duckdb.TransactionException):
        return WriteConflict(f"another write changed the same rows at the same moment ({error}); nothing of this "
                             "action was saved: try it again")
    return DatabaseError(f"{error} (a write is rolled back whole: nothing of it was saved)")


def _in_use(path: Path, error: duckdb.IOException) -> DatabaseInUse:
    holder = _LOCK_HOLDER.search(str(error))
    who = f"another process (PID {holder.group(1)})" if holder else "another process"
    return DatabaseInUse(f"{path} is open in {who}, and DuckDB lets one process at a time write to a file: try "
                         "again once it has finished, or choose another database file with --db or HRI_DB")


# --- the cursor every operation gets ---------------------------------------------------------------


class Cursor:
    """One operation's DuckDB cursor behind the register's API: bound parameters in, plain Python out.

    Parameters are a sequence (``?`` placeholders) or a dict (``$name`` placeholders, see
    ``register.db.sql.Params``). Never shared across threads: each operation takes its own.
    """

    def __init__(self, raw: duckdb.DuckDBPyConnection):
        self._raw = raw
        self._failure: DatabaseError | None = None  # the first failed statement of this cursor

    def _raise(self, error: duckdb.Error) -> NoReturn:
        """Raise the register's error for ``error``. After a failed statement DuckDB refuses every
        further one of the transaction ("aborted"): that is the first failure again, not a new conflict."""
        if isinstance(error, duckdb.TransactionException) and self._failure is not None:
            first = self._failure
            raise type(first)(f"{first} (this transaction stopped at that failure)") from error
        self._failure = _translated(error)
        raise self._failure from error

    def _run(self, sql: str, params: Bindings) -> duckdb.DuckDBPyConnection:
        try:
            return self._raw.execute(sql, _bind(params))
        except duckdb.Error as error:
            self._raise(error)

    def _fetch(self, fetch: Callable[[], Any]) -> Any:
        try:
            return fetch()
        except duckdb.Error as error:
            self._raise(error)

    # --- statements ---

    def execute(self, sql: str, params: Bindings = ()) -> int | None:
        """Run one statement; the number of rows it wrote (INSERT, UPDATE, DELETE, COPY, CREATE ... AS),
        or None when it reports none."""
        self._run(sql, params)
        count = self._raw.rowcount
        return None if count < 0 else count

    def execute_watched(self, sql: str, params: Bindings = (), on_progress: Callable[[float], None] | None = None,
                        every: float = 0.5) -> int | None:
        """``execute``, telling ``on_progress`` DuckDB's own estimate of how far the statement is (0..1) every
        ``every`` seconds while it runs. The statement runs in a worker thread and ``on_progress`` is called
        from this one, so a Streamlit page can move its progress bar during a statement of many seconds."""
        if on_progress is None:
            return self.execute(sql, params)
        self._raw.execute("SET enable_progress_bar = true")
        self._raw.execute("SET enable_progress_bar_print = false")
        outcome: dict[str, Any] = {}

        def work() -> None:
            try:
                outcome["count"] = self.execute(sql, params)
            except BaseException as error:  # handed to the calling thread, raised there
                outcome["error"] = error

        worker = threading.Thread(target=work, name="duckdb-statement", daemon=True)
        worker.start()
        while worker.is_alive():
            worker.join(every)
            done = self._raw.query_progress() if worker.is_alive() else -1.0
            if done >= 0:
                on_progress(min(1.0, done / 100.0))
        if "error" in outcome:
            raise outcome["error"]
        return outcome.get("count")

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement once per parameter row (small batches; bulk data goes through ``relation``)."""
        try:
            self._raw.executemany(sql, [list(r) for r in rows])
        except duckdb.Error as error:
            self._raise(error)

    def insert_values(self, insert: str, row: str, rows: Sequence[Sequence[Any]], *, chunk: int = 200) -> None:
        """``insert`` (``INSERT INTO t (a, b)``) ``VALUES`` with one ``row`` (``(?, ?)``) per parameter row, a
        ``chunk`` of rows per statement: one multi-row statement costs DuckDB far less than a statement per row
        (``executemany``), and a chunk keeps its parameter list modest."""
        for start in range(0, len(rows), chunk):
            part = rows[start:start + chunk]
            self.execute(f"{insert} VALUES {', '.join([row] * len(part))}", [value for r in part for value in r])

    @contextmanager
    def relation(self, name: str, table: Any) -> Iterator[str]:
        """An Arrow table (or pandas frame) readable in SQL as ``name`` for the duration of the block.

        ``name`` is an identifier chosen by the caller's code (lower case, digits, underscores), never
        user text; it is checked.
        """
        if not _RELATION_NAME.match(name):
            raise ValueError(f"{name!r} is not a relation name (lower case letters, digits and underscores)")
        try:
            self._raw.register(name, table)
        except duckdb.Error as error:
            self._raise(error)
        try:
            yield name
        finally:
            self._raw.unregister(name)

    # --- reads ---

    def query(self, sql: str, params: Bindings = ()) -> list[tuple]:
        """Every row, as tuples."""
        return self._fetch(self._run(sql, params).fetchall)

    def query_one(self, sql: str, params: Bindings = ()) -> tuple | None:
        """The first row as a tuple, or None when there is none."""
        return self._fetch(self._run(sql, params).fetchone)

    def scalar(self, sql: str, params: Bindings = ()) -> Any:
        """The first column of the first row, or None when there is no row."""
        row = self.query_one(sql, params)
        return None if row is None else row[0]

    def one(self, sql: str, params: Bindings = ()) -> dict[str, Any] | None:
        """The first row as ``{column: value}``, or None when there is none."""
        result = self._run(sql, params)
        row = self._fetch(result.fetchone)
        return None if row is None else dict(zip(_columns(result), row, strict=True))

    def row(self, sql: str, params: Bindings = (), *, what: str) -> dict[str, Any]:
        """The first row as ``{column: value}``, for a row the caller counts on (a record by its key, a row it
        just wrote, an aggregate's one row): ``NotFound`` ("``what`` does not exist") when there is none."""
        found = self.one(sql, params)
        if found is None:
            raise _not_found(what)
        return found

    def query_row(self, sql: str, params: Bindings = (), *, what: str) -> tuple:
        """``row`` as a tuple: the first row, or ``NotFound`` ("``what`` does not exist") when there is none."""
        found = self.query_one(sql, params)
        if found is None:
            raise _not_found(what)
        return found

    def dicts(self, sql: str, params: Bindings = ()) -> list[dict[str, Any]]:
        """Every row as ``{column: value}``."""
        result = self._run(sql, params)
        columns = _columns(result)
        return [dict(zip(columns, row, strict=True)) for row in self._fetch(result.fetchall)]

    def frame(self, sql: str, params: Bindings = ()):
        """Every row as a pandas DataFrame (for pages, exports and aggregates)."""
        return self._fetch(self._run(sql, params).df)

    def arrow(self, sql: str, params: Bindings = ()) -> Any:
        """Every row as a pyarrow Table (columnar: for staging bulk data between statements)."""
        try:  # a relation, not a DB-API result: DuckDB hands its columns to Arrow without a row copy
            relation = self._raw.sql(sql, params=_bind(params) or None)
        except duckdb.Error as error:
            self._raise(error)
        return self._fetch(relation.to_arrow_table)

    def stream(self, sql: str, params: Bindings = (), *, batch_size: int = 1000) -> Iterator[tuple]:
        """Rows as tuples, fetched ``batch_size`` at a time (memory bounded by a batch, not the result)."""
        result = self._run(sql, params)
        while rows := self._fetch(lambda: result.fetchmany(batch_size)):
            yield from rows


class Transaction(Cursor):
    """What a ``Store.write`` function receives: a ``Cursor`` inside the write's one transaction.

    Everything it executes commits together with the action's audit event, or not at all.
    """


def _not_found(what: str) -> NotFound:
    return NotFound(f"{what} does not exist")


def _columns(result: duckdb.DuckDBPyConnection) -> list[str]:
    return [d[0] for d in result.description or ()]


def _bind(params: Bindings) -> list[Any] | dict[str, Any]:
    """Positional parameters as a list; named ones (``$name``) as a dict."""
    return params if isinstance(params, dict) else list(params)


# --- the store --------------------------------------------------------------------------------------


def keyring_path(database: Path, configured: str | Path | None = None) -> Path:
    """Where a database's audit keyring lives: ``configured``, else ``HRI_AUDIT_KEYRING``, else beside the
    database file as ``<file>.audit-key``."""
    chosen = configured or settings().audit_keyring
    return Path(chosen) if chosen else database.with_name(database.name + ".audit-key")


# DuckDB checkpoints (writes its tables' blocks from the write-ahead log) once the log passes this size. Its
# default, 16 MB, is about one import chunk: every chunk's commit rewrote the table's last row group, a cost
# that grew with the table (an import's CPU per response rose with the database). Committing to the log and
# checkpointing every few hundred MB keeps commits cheap; the log is replayed on the next open after a crash.
_CHECKPOINT_THRESHOLD = "512MB"
_MEMORY_LIMIT = re.compile(MEMORY_SIZE)


def _checked_limit(limit: str) -> str:
    """``limit`` if it is a DuckDB memory size (as the settings' pattern), else ValueError."""
    if not _MEMORY_LIMIT.match(limit):
        raise ValueError(f"{limit!r} is not a memory size such as 600MB or 4GB")
    return limit


class Store:
    """Connection owner. Thread-safe: each call takes its own cursor; writes are serialised.

    ``keyring``: the audit trail's keys (``register.db.keyring``), at ``audit_keyring`` if given, else
    as ``keyring_path`` says; created on the first write. ``anchors``: the folder that keeps the trail's anchors
    outside the database (``register.db.anchors``), where ``anchor_dir`` says;
    ``keep_anchors=False`` for a throwaway register that keeps none. DuckDB's buffers are bounded by
    ``memory_limit``, else ``HRI_MEMORY_LIMIT`` (read when the Store opens; the console passes
    ``HRI_CONSOLE_MEMORY_LIMIT``).
    """

    def __init__(self, path: str | Path, *, audit_keyring: str | Path | None = None, memory_limit: str | None = None,
                 keep_anchors: bool = True):
        limit = None if memory_limit is None else _checked_limit(memory_limit).strip()
        self.path = Path(path)
        self.keyring = Keyring(keyring_path(self.path, audit_keyring))
        self.anchors = AnchorFolder(anchor_dir(self.path) if keep_anchors else None, self.path)
        self._unanchored = False  # a write committed since the newest anchor this process wrote
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # config, not an SQL string: the validated setting reaches DuckDB as a value
        config: Config = {"memory_limit": settings().memory_limit.strip(),
                           "checkpoint_threshold": _CHECKPOINT_THRESHOLD, **NO_AUTOMATIC_EXTENSIONS}
        try:
            if log_of(self.path).exists():
                replay_log(self.path, config)
            self._conn = duckdb.connect(str(self.path), config=config)
        except duckdb.IOException as error:
            if "lock" in str(error).lower():  # DuckDB says "Could not set lock on file"
                raise _in_use(self.path, error) from error
            raise DatabaseError(f"cannot open the database file {self.path}: {error}") from error
        except duckdb.Error as error:
            raise DatabaseError(f"cannot open the database file {self.path}: {error}") from error
        require_built_in_extensions(self._conn, self.path)
        self._conn.execute("SET TimeZone = 'UTC'")
        if limit is not None:
            # set after opening, not as the connection's config: DuckDB refuses a second connection to a file this
            # process has open under another config (a test's store beside the console's). The value is matched
            # against the memory-size pattern first: SET takes no bound parameter.
            self._conn.execute(f"SET memory_limit = '{limit}'")
        self._write_lock = threading.RLock()
        self.applied_migrations = self._migrate()

    def close(self) -> None:
        """Close the database; after writes that no anchor covers yet, anchor the trail's head first
        (``register.db.anchors``: what this process wrote cannot then be deleted unnoticed)."""
        if self._unanchored:
            self._unanchored = False
            try:
                self.anchors.keep(self.anchors.at_close(self))
            except RegisterError as error:  # a closing register still closes: the next write's anchor follows
                log.warning("the audit trail's head was not anchored at close: %s", error)
        self._conn.close()

    # --- reads ------------------------------------------------------------------------------

    @contextmanager
    def cursor(self) -> Iterator[Cursor]:
        """A fresh cursor for one operation of several statements (a temp table, a stream), closed afterwards."""
        raw = self._conn.cursor()
        try:
            raw.execute("SET TimeZone = 'UTC'")
            yield Cursor(raw)
        finally:
            raw.close()

    def query(self, sql: str, params: Bindings = ()) -> list[tuple]:
        """Run a read query with bound parameters and fetch every row as tuples."""
        with self.cursor() as cur:
            return cur.query(sql, params)

    def query_one(self, sql: str, params: Bindings = ()) -> tuple | None:
        """The first row as a tuple, or None."""
        with self.cursor() as cur:
            return cur.query_one(sql, params)

    def scalar(self, sql: str, params: Bindings = ()) -> Any:
        """The first column of the first row, or None when there is no row."""
        with self.cursor() as cur:
            return cur.scalar(sql, params)

    def one(self, sql: str, params: Bindings = ()) -> dict[str, Any] | None:
        """The first row as ``{column: value}``, or None."""
        with self.cursor() as cur:
            return cur.one(sql, params)

    def row(self, sql: str, params: Bindings = (), *, what: str) -> dict[str, Any]:
        """The first row as ``{column: value}``, or ``NotFound`` ("``what`` does not exist")."""
        with self.cursor() as cur:
            return cur.row(sql, params, what=what)

    def query_row(self, sql: str, params: Bindings = (), *, what: str) -> tuple:
        """The first row as a tuple, or ``NotFound`` ("``what`` does not exist")."""
        with self.cursor() as cur:
            return cur.query_row(sql, params, what=what)

    def dicts(self, sql: str, params: Bindings = ()) -> list[dict[str, Any]]:
        """Every row as ``{column: value}``."""
        with self.cursor() as cur:
            return cur.dicts(sql, params)

    def frame(self, sql: str, params: Bindings = ()):
        """Every row as a pandas DataFrame (for pages, exports and aggregates)."""
        with self.cursor() as cur:
            return cur.frame(sql, params)

    # --- writes -----------------------------------------------------------------------------

    def write(self, actor: Actor, action: str, fn: Callable[[Transaction], Change], *,
              as_account: bool = True) -> Any:
        """Run ``fn(transaction)`` in one transaction and append its audit event(s) in the same one.

        First, in that transaction, the actor's account is re-read (``account_problem``): a disabled
        account, a changed role or an unknown name is refused with ``PermissionDenied`` and audited as
        ``denied``, and ``fn`` does not run. ``as_account=False`` is for the events that record what
        happened *to* an account rather than an action *by* it (a failed login, a session's end, a
        refusal): they are written whatever the account's state.

        Retried once on a transaction conflict (``WriteConflict``, raised when the retry conflicts
        too). Any other error rolls everything back and propagates. Returns ``Change.result``. Once committed, a
        sign-off, a publish, a key change and the first write of a UTC day leave the trail's head in the anchor
        folder (``register.db.anchors``).
        """
        with self._write_lock:
            for attempt in (1, 2):
                raw = self._conn.cursor()
                tx = Transaction(raw)
                try:
                    tx.execute("SET TimeZone = 'UTC'")
                    tx.execute("BEGIN TRANSACTION")
                    if as_account and (problem := account_problem(tx, actor)) is not None:
                        raise _Refused(problem)
                    change = fn(tx)
                    audit.append_events(tx, actor, [(action, change.entity_type, change.entity_id, change.before,
                                                     change.after), *change.extra_events],
                                        keyring=self.keyring, anchors=self.anchors)
                    anchor = self.anchors.due(tx, action)  # None for most writes: a comparison of dates
                    tx.execute("COMMIT")
                    self.anchors.keep(anchor)
                    self._unanchored = anchor is None
                    return change.result
                except WriteConflict:
                    _rollback(raw)
                    if attempt == 2:
                        raise
                except _Refused as refused:
                    _rollback(raw)
                    refusal = Change("user", actor.name, None, {"attempted": action, "reason": refused.reason})
                    self.write(actor, "denied", _returning(refusal), as_account=False)
                    raise PermissionDenied(f"{refused.reason}; nothing was saved") from None
                except BaseException:
                    _rollback(raw)
                    raise
                finally:
                    raw.close()
        raise RegisterError("unreachable")  # pragma: no cover

    # --- migrations -------------------------------------------------------------------------

    def _migrate(self) -> list[str]:
        """Apply every migration not yet recorded; refuse if a recorded one was edited since."""
        with self._write_lock:
            cur = self._conn.cursor()
            try:
                cur.execute(
                    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                    "name VARCHAR NOT NULL, checksum VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL)"
                )
                recorded = {v: (n, c) for v, n, c in cur.execute(
                    "SELECT version, name, checksum FROM schema_migrations").fetchall()}
                applied = []
                for path in sorted(MIGRATIONS_DIR.glob("*.sql")):
                    match = _MIGRATION_NAME.match(path.name)
                    if not match:
                        raise MigrationError(f"migration file {path.name!r} is not named NNN_name.sql")
                    version = int(match.group(1))
                    sql = path.read_text(encoding="utf-8")
                    checksum = hashlib.sha256(sql.encode()).hexdigest()
                    if version in recorded:
                        if recorded[version][1] != checksum:
                            raise MigrationError(
                                f"migration {path.name} changed after it was applied; "
                                "add a new numbered migration instead of editing a landed one")
                        continue
                    cur.execute("BEGIN TRANSACTION")
                    try:
                        cur.execute(sql)
                        cur.execute("INSERT INTO schema_migrations VALUES (?, ?, ?, ?)",
                                    [version, path.name, checksum, utc_now()])
                        cur.execute("COMMIT")
                    except duckdb.Error as error:
                        cur.execute("ROLLBACK")
                        raise MigrationError(f"migration {path.name} failed: {error}") from error
                    applied.append(path.name)
                return applied
            except duckdb.Error as error:
                raise _translated(error) from error
            finally:
                cur.close()


class _Refused(Exception):
    """Internal: the actor's account may not act (``account_problem``); becomes ``PermissionDenied``."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _returning(change: Change) -> Callable[[Transaction], Change]:
    """A write function that changes nothing and returns ``change`` (an event that records an outcome)."""
    return lambda _tx: change


def _rollback(raw: duckdb.DuckDBPyConnection) -> None:
    # nothing may be open (the failure came before BEGIN), or DuckDB already ended it
    with suppress(duckdb.Error):
        raw.execute("ROLLBACK")


def database_path_from_env() -> Path:
    """The database file: ``HRI_DB`` if set, else ``var/hri.duckdb`` under the working directory."""
    return settings().db
