"""The one owner of the DuckDB database file.

Opens the file read-write once per process, applies the numbered SQL migrations in
``register/db/migrations`` (each recorded once, with its checksum), and hands every operation its own
cursor. Writes go through ``Store.write``: one transaction per user action, serialised by a lock,
retried once on a transaction conflict, with the action's audit event appended in the same
transaction. No other module imports duckdb.

DuckDB allows one read-write process per file: the embedded deployment is one Streamlit process per
database file, and admin commands run while it is stopped (or inside it).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb

from register.db import audit
from register.errors import MigrationError, RegisterError
from register.settings import settings

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
_MIGRATION_NAME = re.compile(r"^(\d{3})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True)
class Actor:
    """Who acts: name and role are copied into every audit event as text."""

    name: str
    role: str


SYSTEM = Actor("system", "system")


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
    return datetime.now(timezone.utc)


class Store:
    """Connection owner. Thread-safe: each call takes its own cursor; writes are serialised."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = duckdb.connect(str(self.path))
        self._conn.execute("SET TimeZone = 'UTC'")
        self._write_lock = threading.RLock()
        self.applied_migrations = self._migrate()

    def close(self) -> None:
        self._conn.close()

    # --- reads ------------------------------------------------------------------------------

    @contextmanager
    def cursor(self) -> Iterator[Any]:
        """A fresh cursor for one operation, closed afterwards (never shared across threads)."""
        cur = self._conn.cursor()
        try:
            cur.execute("SET TimeZone = 'UTC'")
            yield cur
        finally:
            cur.close()

    def query(self, sql: str, params: Sequence[Any] | dict = ()) -> list[tuple]:
        """Run a read query with bound parameters and fetch every row."""
        with self.cursor() as cur:
            return cur.execute(sql, _bind(params)).fetchall()

    def query_one(self, sql: str, params: Sequence[Any] | dict = ()) -> tuple | None:
        with self.cursor() as cur:
            return cur.execute(sql, _bind(params)).fetchone()

    def query_df(self, sql: str, params: Sequence[Any] | dict = ()):
        """Run a read query and return a pandas DataFrame (for pages and exports)."""
        with self.cursor() as cur:
            return cur.execute(sql, _bind(params)).df()

    # --- writes -----------------------------------------------------------------------------

    def write(self, actor: Actor, action: str, fn: Callable[[Any], Change]) -> Any:
        """Run ``fn(cursor)`` in one transaction and append its audit event(s) in the same one.

        Retried once on a transaction conflict. Returns ``Change.result``.
        """
        with self._write_lock:
            for attempt in (1, 2):
                cur = self._conn.cursor()
                try:
                    cur.execute("SET TimeZone = 'UTC'")
                    cur.execute("BEGIN TRANSACTION")
                    change = fn(cur)
                    audit.append_event(cur, actor, action, change.entity_type, change.entity_id,
                                       change.before, change.after)
                    for extra in change.extra_events:
                        audit.append_event(cur, actor, *extra)
                    cur.execute("COMMIT")
                    return change.result
                except duckdb.TransactionException:
                    cur.execute("ROLLBACK")
                    if attempt == 2:
                        raise
                except BaseException:
                    try:
                        cur.execute("ROLLBACK")
                    except duckdb.Error:
                        pass
                    raise
                finally:
                    cur.close()
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
            finally:
                cur.close()


def database_path_from_env() -> Path:
    """The database file: ``HRI_DB`` if set, else ``var/hri.duckdb`` under the working directory."""
    return settings().db


def _bind(params: Sequence[Any] | dict) -> list[Any] | dict:
    """Positional parameters as a list; named ones (``$name``) as a dict."""
    return params if isinstance(params, dict) else list(params)
