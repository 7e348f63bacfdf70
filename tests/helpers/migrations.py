"""A database as an older version of the register left it: opened with only some of today's migrations."""

from __future__ import annotations

import shutil
from pathlib import Path

from register.db import store as store_mod


def migrations_before(tmp_path: Path, monkeypatch, version: int, *, also: tuple[int, ...] = ()) -> None:
    """Make ``Store`` apply only the migrations numbered below ``version``, plus those numbered in ``also`` (what
    today's writers need that the test's older database would not otherwise have), until ``monkeypatch.undo()``;
    a Store opened after that applies the rest."""
    older = tmp_path / f"migrations-before-{version:03d}"
    older.mkdir()
    for path in store_mod.MIGRATIONS_DIR.glob("*.sql"):
        number = int(path.name[:3])
        if number < version or number in also:
            shutil.copy(path, older / path.name)
    monkeypatch.setattr(store_mod, "MIGRATIONS_DIR", older)
