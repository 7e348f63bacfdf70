"""A register killed (SIGKILL) before DuckDB checkpointed reopens with no network.

DuckDB replays the write-ahead log when it opens the file; the log of a fresh register holds the migrations'
``CREATE TABLE`` statements, whose ``CHECK (length(trim(reason)) > 0)`` the replay binds before DuckDB has loaded
its built-in functions. With automatic extension install on, DuckDB then tried to download ``core_functions``: with
no network the register did not open at all. Each case kills a process at another point (after some of the
migrations, after all of them, after the first write), always before a checkpoint, and reopens the file with the
extension repository pointing at a closed local port and an empty extension folder: nothing may be downloaded or
installed, and the register opens with everything committed before the kill.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from register import Store
from register.db import store as store_module
from register.db.offline import log_of
from tests.helpers.paths import REPO_ROOT

# nothing listens on the discard port: a download attempt fails at once ("Could not establish connection")
UNREACHABLE = "http://127.0.0.1:9"

# the child: apply the migrations numbered up to argv[2] (0: all), optionally write once, then die at once
_CHILD = """
import os, shutil, signal, sys
from pathlib import Path
from register.db import store as store_module
database, upto, write = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "write"
if upto:
    older = database.with_name("migrations")
    older.mkdir()
    for path in store_module.MIGRATIONS_DIR.glob("*.sql"):
        if int(path.name[:3]) <= upto:
            shutil.copy(path, older / path.name)
    store_module.MIGRATIONS_DIR = older
store = store_module.Store(database)
if write:
    from register import SYSTEM
    from register.scoring.profiles import ensure_default_profile
    ensure_default_profile(store, SYSTEM)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _killed_register(folder: Path, upto: int, write: bool) -> Path:
    """A register file left by a process killed after its migrations up to ``upto`` (0: all) and, with ``write``,
    one write: the file and its write-ahead log, never checkpointed."""
    folder.mkdir()
    database = folder / "killed.duckdb"
    child = subprocess.run([sys.executable, "-c", _CHILD, str(database), str(upto), "write" if write else "-"],
                           cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert database.with_name(database.name + ".wal").stat().st_size > 0, "killed before any checkpoint"
    return database


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """Every DuckDB database the register opens gets an unreachable extension repository and an empty extension
    folder (no extension installed earlier on this machine can stand in); returns that folder."""
    folder = tmp_path / "extensions"
    folder.mkdir()
    connect = store_module.duckdb.connect

    def offline_connect(database=":memory:", *args, config=None, **kwargs):
        cut_off = {"custom_extension_repository": UNREACHABLE, "autoinstall_extension_repository": UNREACHABLE,
                   "extension_directory": str(folder)}
        return connect(database, *args, config={**(config or {}), **cut_off}, **kwargs)

    monkeypatch.setattr(store_module.duckdb, "connect", offline_connect)
    return folder


LANDED = sorted(int(path.name[:3]) for path in store_module.MIGRATIONS_DIR.glob("*.sql"))


@pytest.mark.parametrize(("upto", "write"), [(20, False), (21, False), (0, False), (0, True)],
                         ids=["after-020", "after-021", "after-all", "after-first-write"])
def test_a_register_killed_before_its_checkpoint_reopens_offline(tmp_path, offline, upto, write):
    database = _killed_register(tmp_path / "killed", upto, write)
    store = Store(database)  # replays the log, applies the migrations the child did not
    try:
        assert [v for (v,) in store.query("SELECT version FROM schema_migrations ORDER BY version")] == LANDED
        if write:  # the write committed before the kill is there
            assert store.query("SELECT profile_version, status FROM scoring_profiles") == [(1, "active")]
        assert store.query("SELECT current_setting('autoinstall_known_extensions'), "
                           "current_setting('autoload_known_extensions')") == [(False, False)]
    finally:
        store.close()
    assert list(offline.iterdir()) == [], "nothing was downloaded or installed"


def test_a_live_log_is_not_a_crash(tmp_path):
    """A log beside the file while a process holds it is that process's: a second store in this process joins it
    (and reads its uncheckpointed writes); another process is told the file is in use, and nothing is replayed."""
    from register import SYSTEM
    from register.scoring.profiles import ensure_default_profile
    from tests.helpers.cli import run_module

    database = tmp_path / "live.duckdb"
    holder = Store(database)
    try:
        ensure_default_profile(holder, SYSTEM)
        assert log_of(database).exists()
        second = Store(database)
        assert second.query("SELECT profile_version FROM scoring_profiles") == [(1,)]
        second.close()
        blocked = run_module("register", "--db", database, "status")
        assert blocked.returncode == 1 and blocked.stderr.startswith(f"Database in use: {database} is open in")
    finally:
        holder.close()
