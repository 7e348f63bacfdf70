"""Opening a register's DuckDB file offline, after any crash: no automatic extensions, the log replayed first.

Called by ``register.db.store.Store`` when it opens a file. DuckDB installs or loads no extension on its own here:
with automatic install on, replaying a killed process's write-ahead log downloaded one, and without a network the
register did not open.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from register.errors import DatabaseError

__all__ = ["NO_AUTOMATIC_EXTENSIONS", "REQUIRED_EXTENSIONS", "Config", "log_of", "replay_log",
           "require_built_in_extensions"]

Config = dict[str, str | bool | int | float | list[str]]  # a DuckDB database's configuration

# DuckDB installs or loads no extension on its own: with automatic install on, replaying a killed process's log
# downloaded one (and without a network the register did not open). What the register's SQL needs is built into
# the duckdb wheel and loaded when DuckDB starts: ``REQUIRED_EXTENSIONS``, checked on every open.
NO_AUTOMATIC_EXTENSIONS = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
# the functions (trim, list_*, ...), time zones (TIMESTAMPTZ arithmetic, SET TimeZone), JSON, and Parquet files
REQUIRED_EXTENSIONS = ("core_functions", "icu", "json", "parquet")


def log_of(database: Path) -> Path:
    """DuckDB's write-ahead log of ``database``: ``<file>.wal`` beside it, present until a checkpoint."""
    return database.with_name(database.name + ".wal")


def replay_log(database: Path, config: Config) -> None:
    """Replay the write-ahead log a killed process left beside ``database`` into the file, and remove the log.

    DuckDB replays the log while it opens the file, before it loads its built-in extensions, and the replay binds
    some statements again: an ``ALTER TABLE`` of a table with ``CHECK (length(trim(reason)) > 0)`` (migration
    021 onwards) needs ``trim`` from ``core_functions``. Opened directly with automatic loading off, such a file
    does not open. Attached to an in-memory database, whose built-in extensions are loaded already, it replays;
    the checkpoint writes everything into the file. A log this process holds open (another ``Store`` on the same
    file) is live, not a crash's: DuckDB refuses the second attach and the open joins the first.
    """
    recovery = duckdb.connect(":memory:", config=config)
    try:
        recovery.execute("ATTACH ? AS recovering", [str(database)])
        recovery.execute("CHECKPOINT recovering")
        recovery.execute("DETACH recovering")
    except duckdb.ResourceInUseException:
        return
    except duckdb.IOException:
        raise  # another process holds the file (the caller says so) or it cannot be read
    except duckdb.Error as error:
        raise DatabaseError(f"cannot replay the write-ahead log {log_of(database).name} of {database} (the "
                            f"writes of a process that stopped before a checkpoint): {error}. The register "
                            "downloads no DuckDB extension; the file and its log are unchanged") from error
    finally:
        recovery.close()


def require_built_in_extensions(conn: duckdb.DuckDBPyConnection, database: Path) -> None:
    """``DatabaseError`` naming the ``REQUIRED_EXTENSIONS`` this duckdb build has not loaded (none is fetched)."""
    loaded = {name for (name,) in conn.execute("SELECT extension_name FROM duckdb_extensions() WHERE loaded")
              .fetchall()}
    missing = [name for name in REQUIRED_EXTENSIONS if name not in loaded]
    if missing:
        conn.close()
        raise DatabaseError(f"cannot open {database}: this duckdb build lacks the built-in extension(s) "
                            f"{', '.join(missing)} the register needs, and the register downloads none: install "
                            "the duckdb version pinned in requirements.txt")
