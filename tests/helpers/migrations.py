"""A database as an older version of the register left it: opened with only some of today's migrations."""

from __future__ import annotations

import shutil
from pathlib import Path

from register.db import store as store_mod

# what every writer of today reads whatever the test's older database was: the decision columns (033), the held
# label changes the review queue reads (034), the approval steps the rules in force are read through (035), the
# risk acceptances the review queue reads (036), the follow-ups of held changes (037), the accounts' session
# generation every read of an account selects (038), the publishes a full rescore completes (040), the audit
# trail's record of its keying and the register's id, read by every write's audit event (042), the API tokens that
# disabling an account or resetting its password revokes (043)
TODAYS_WRITERS_NEED = (33, 34, 35, 36, 37, 38, 40, 42, 43, 55, 56, 57)


def migrations_before(tmp_path: Path, monkeypatch, version: int, *, also: tuple[int, ...] = ()) -> None:
    """Make ``Store`` apply only the migrations numbered below ``version``, plus those numbered in ``also`` (what
    today's writers need that the test's older database would not otherwise have; ``TODAYS_WRITERS_NEED`` always),
    until ``monkeypatch.undo()``;
    a Store opened after that applies the rest."""
    older = tmp_path / f"migrations-before-{version:03d}"
    older.mkdir()
    for path in store_mod.MIGRATIONS_DIR.glob("*.sql"):
        number = int(path.name[:3])
        if number < version or number in also or number in TODAYS_WRITERS_NEED:
            shutil.copy(path, older / path.name)
    monkeypatch.setattr(store_mod, "MIGRATIONS_DIR", older)
