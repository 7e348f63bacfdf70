"""A fresh register for a Hypothesis example: a copy of a migrated file, not a migration per example.

Migrating a new file applies every migration (about a third of a second); a property test that builds a throwaway
register per drawn example paid that dozens of times. ``fresh_store(path)`` copies this process's migrated file
(built once, on first use, by ``Store`` itself) to ``path`` and gives the copy an id of its own (migration 042's
``register_identity``: each register's anchors name it), so the copy is what migrating ``path`` would have made,
but for the migrations' timestamps.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

import duckdb

from register import Store
from tests.helpers.templates import copy_database

_MIGRATED: list[Path] = []  # this process's migrated file, once built


def _migrated() -> Path:
    if not _MIGRATED:
        folder = Path(tempfile.mkdtemp(prefix="hri-fresh-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        path = folder / "migrated.duckdb"
        Store(path, keep_anchors=False).close()  # migrated, nothing written: no keyring, no anchor
        _MIGRATED.append(path)
    return _MIGRATED[0]


def fresh_store(path: Path) -> Store:
    """A ``Store`` on ``path`` (which must not exist) holding a freshly migrated register with its own id."""
    if path.exists():
        raise FileExistsError(f"fresh_store: {path} exists")
    copy_database(_migrated(), path)
    with duckdb.connect(str(path)) as conn:
        conn.execute("UPDATE register_identity SET register_id = CAST(gen_random_uuid() AS VARCHAR)")
    return Store(path)
