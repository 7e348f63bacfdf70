"""The audit trail's anchors kept outside the database: the trail's head, appended to a file in a folder away from
the database file after the first write of each UTC day and at every sign-off, publish and key change.

Whoever can rewrite the database file can rewrite everything in it, the heads kept with sign-offs included, and
(after deleting the keyring beside it) re-chain the trail with the unkeyed scheme or re-sign it under a keyring of
their own. An anchor kept elsewhere survives that: ``audit.verify_chain`` checks every anchor of the folder, so a
trail that no longer holds an anchored event with its anchored hash fails, whether events were deleted or
rewritten or the database file was replaced by an older copy. Only the events a running process wrote after its
newest anchor (at most ``INTERVAL`` ago, and fewer than ``EVERY_WRITES``) can go unnoticed; its close anchors them.

Where: ``<database file name>-<the first 16 hex digits of the SHA-256 of its absolute path>``, one folder per
database file, under ``HRI_ANCHOR_DIR``, by default under ``hri-console/anchors`` in the user's state folder
(``$XDG_STATE_HOME``, else ``~/.local/state``): outside the database's folder. A folder inside it is used, with a
warning (logged when an anchor is written, printed by ``audit verify``): whoever can replace the
database could replace the anchors with it.

The file ``anchors.jsonl`` holds one anchor per line, as ``python -m register audit anchor`` writes one
(``Anchor.as_dict``), with why it was written (``reason``: the action, or ``day``), the register's id
(``register``, migration 042) and the database file. It is only ever appended to: one ``write`` of a line through
an ``O_APPEND`` descriptor, flushed to disk.

Why these moments: the trail changes only when something is written, so the head right after a day's first write
pins every event before it, a write ``INTERVAL`` after the newest anchor pins what a console writing all day wrote
since, every ``EVERY_WRITES``-th write since the newest anchor pins a busy console's last writes sooner, and the head
when a process that wrote closes the register (a command, a stopped console) pins what it wrote
last: only a running process's writes of the last ``INTERVAL`` stay unpinned. That is at most one small append per
``INTERVAL`` of writing and one per writing process, and no work at all for reads or opening the register;
sign-offs, publishes and key changes are the moments a release or a rule rests on. Every other write costs one
comparison of dates in memory.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from register.db import audit
from register.db.audit import Anchor
from register.errors import InvalidAnchor
from register.settings import settings, state_home

ANCHOR_FILE = "anchors.jsonl"
# actions anchored at once: a checklist sign-off, a version of rules put in force (published at once, or approved
# by a second person), a label change or risk acceptance approved, the signing key rotated or declared lost
ANCHORED_SUFFIXES = (".sign", ".publish", ".approve")
ANCHORED_ACTIONS = frozenset({audit.ROTATION_ACTION, audit.KEY_LOST_ACTION})
DAY = "day"  # the reason of the anchor written after the first write of a UTC day
CLOSE = "close"  # the reason of the anchor written when a register that wrote since its newest anchor closes
INTERVAL_REASON = "interval"  # the reason of the anchor of a write INTERVAL after the newest anchor, the same day
INTERVAL = timedelta(minutes=15)  # a running console's writes stay unpinned at most this long (plus the write's)
WRITES_REASON = "writes"  # the reason of the anchor of the EVERY_WRITES-th write since the newest anchor
# a running console's writes since its newest anchor stay unpinned at most this many: one small append and fsync
# per this many writes (about 1% of a write's time at 25; measured in the commit that set it)
EVERY_WRITES = 25
_TAIL_BYTES = 8192  # enough for the newest line (a line is about 400 bytes)

log = logging.getLogger(__name__)

__all__ = ["ANCHOR_FILE", "AnchorFolder", "anchor_dir", "anchored_reason"]


def anchor_dir(database: Path) -> Path:
    """Where ``database`` keeps its anchors: a folder named from the file's name and its absolute path (another file,
    or the same name elsewhere, gets a folder of its own) under ``HRI_ANCHOR_DIR``, else under
    ``hri-console/anchors`` in the user's state folder."""
    configured = settings().anchor_dir
    root = Path(configured) if configured else state_home() / "hri-console" / "anchors"
    resolved = database.resolve()
    return root / f"{resolved.name}-{hashlib.sha256(str(resolved).encode()).hexdigest()[:16]}"


def anchored_reason(action: str) -> str | None:
    """``action`` when its head is anchored at once (a sign-off, a publish, a key change), else None."""
    return action if action in ANCHORED_ACTIONS or action.endswith(ANCHORED_SUFFIXES) else None


@dataclass(frozen=True)
class PendingAnchor:
    """The head of a write not yet committed, and why it is anchored; written by ``AnchorFolder.keep``."""

    anchor: Anchor
    reason: str
    at: datetime


class AnchorFolder:
    """The anchor folder of one database file (``path`` None: a register that keeps none, e.g. a throwaway one)."""

    def __init__(self, path: Path | None, database: Path):
        self.path = path
        self.database = database
        self._at: datetime | None = None  # when the newest anchor was written (read from the file on the first write)
        self._register: str | None = None
        self._writes = 0  # writes this process made since the newest anchor it wrote
        self._warned = False

    @property
    def file(self) -> Path | None:
        return None if self.path is None else self.path / ANCHOR_FILE

    def warning(self) -> str | None:
        """Why this folder does not protect the trail as it should (it sits inside the database's folder), or None."""
        if self.path is None:
            return None
        folder = self.database.resolve().parent
        if not self.path.resolve().is_relative_to(folder):
            return None
        return (f"the audit anchor folder {self.path} is inside the database's folder {folder}: whoever can replace "
                "the database file can replace its anchors too; set HRI_ANCHOR_DIR to a folder elsewhere")

    # --- reading -------------------------------------------------------------------------------------------

    def read(self) -> list[Anchor]:
        """Every anchor of the folder, oldest first; none when there is no file yet. ``InvalidAnchor`` names the file
        and line that cannot be read (a damaged anchor file fails verification rather than being skipped)."""
        file = self.file
        if file is None:
            return []
        try:
            text = file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as error:
            raise InvalidAnchor(f"the anchor file {file} cannot be read ({error})") from error
        anchors = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except ValueError as error:
                raise InvalidAnchor(f"{file} line {number}: not a line of anchor JSON ({error})") from error
            why = data.get("reason") if isinstance(data, dict) else None
            source = f"anchor folder {file} line {number}" + (f" ({why})" if isinstance(why, str) else "")
            anchors.append(Anchor.from_dict(data, source))
        return anchors

    def newest(self) -> Anchor | None:
        """The anchor of the newest event (the last written among equals), or None when there is none."""
        anchors = self.read()
        return max(reversed(anchors), key=lambda anchor: anchor.seq) if anchors else None

    def keyed(self, register: str | None) -> Anchor | None:
        """The newest anchor of this register (or of none named) whose head was signed with a key: it shows that the
        trail was keyed. None when there is none, or the folder cannot be read."""
        try:
            anchors = self.read()
        except InvalidAnchor:
            return None
        signed = [a for a in anchors if a.key_id and (a.register is None or register is None or a.register == register)]
        return max(reversed(signed), key=lambda anchor: anchor.seq) if signed else None

    def _newest_time(self) -> datetime | None:
        """When the newest line was written (read from the file's end), or None."""
        file = self.file
        try:
            with open(file, "rb") as handle:  # type: ignore[arg-type]  # None only when anchors are off
                size = handle.seek(0, os.SEEK_END)
                handle.seek(max(0, size - _TAIL_BYTES))
                lines = handle.read().splitlines()
            written = json.loads(lines[-1])["anchored_at"] if lines else None
            return datetime.fromisoformat(written).astimezone(UTC) if isinstance(written, str) else None
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def recorded_problem(self, reader: Any, kept: list[Anchor]) -> str | None:
        """Why the folder's anchors fall short of the newest anchor the register recorded writing (migration 057):
        the anchor file was deleted or truncated, or the register is now read with another anchor folder. None when
        they hold it, when the register recorded none, or when the database was copied or moved to another path (a
        copy keeps its original's record; its own anchors start with its first write)."""
        if self.path is None:
            return None
        row = reader.query_one("SELECT seq, anchored_at, folder, database FROM audit_anchor_record WHERE id = 1")
        if row is None:
            return None
        seq, at, folder, database = row
        if database != str(self.database.resolve()):
            return None
        if folder != str(self.path):
            return (f"the register recorded an anchor of event {seq} in the anchor folder {folder} at {at}, but it is "
                    f"now checked against {self.path} (HRI_ANCHOR_DIR changed?): point HRI_ANCHOR_DIR back, or move "
                    "that folder's anchors here")
        if any(anchor.seq >= seq for anchor in kept):
            return None
        newest = max((anchor.seq for anchor in kept), default=None)
        holds = "no anchor" if newest is None else f"anchors up to event {newest} only"
        return (f"the register recorded an anchor of event {seq} written to {self.file} at {at}, but the folder holds "
                f"{holds}: the anchor file was deleted or truncated (or could not be written then: see the log)")

    # --- writing -------------------------------------------------------------------------------------------

    def at_close(self, reader: Any) -> PendingAnchor | None:
        """The head to anchor when the register closes after writes no anchor covers yet (``reader``: the store):
        the events a process wrote since its newest anchor are then pinned too, not only the day's first."""
        if self.path is None:
            return None
        if self._register is None:
            self._register = audit.register_id(reader)
        return PendingAnchor(audit.head(reader), CLOSE, datetime.now(UTC))

    def due(self, tx: Any, action: str) -> PendingAnchor | None:
        """The anchor a write of ``action`` leaves once it commits, read in its transaction ``tx`` after its audit
        events: the head when ``action`` is anchored at once, this is the first write of a UTC day, or the newest
        anchor is ``INTERVAL`` old or this is the ``EVERY_WRITES``-th write since it (a console writing all day pins its
        writes as it goes), else None."""
        if self.path is None:
            return None
        now = datetime.now(UTC)
        reason = anchored_reason(action)
        self._writes += 1
        if reason is None:
            if self._at is None:
                self._at = self._newest_time()
            if self._at is None or self._at.date() < now.date():
                reason = DAY
            elif now - self._at >= INTERVAL:
                reason = INTERVAL_REASON
            elif self._writes >= EVERY_WRITES:
                reason = WRITES_REASON
            else:
                return None
        if self._register is None:
            self._register = audit.register_id(tx)
        pending = PendingAnchor(audit.head(tx), reason, now)
        # recorded in the write's own transaction: a deleted or truncated anchor file is then told apart from a
        # register that never kept one (``recorded_problem``)
        tx.execute("INSERT OR REPLACE INTO audit_anchor_record (id, seq, anchored_at, folder, database) "
                   "VALUES (1, ?, ?, ?, ?)", [pending.anchor.seq, now, str(self.path), str(self.database.resolve())])
        return pending

    def keep(self, pending: PendingAnchor | None) -> None:
        """Append ``pending`` to the anchor file (after its write committed). A folder that cannot be written is
        logged, not raised: the write it anchors is saved already; the next day's first write tries again."""
        if pending is None or self.path is None:
            return
        self._at = max(pending.at, self._at or pending.at)
        self._writes = 0
        try:
            line = {**pending.anchor.as_dict(), "reason": pending.reason, "register": self._register,
                    "database": str(self.database.resolve())}
            self.path.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(self.path / ANCHOR_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(descriptor, (json.dumps(line, separators=(",", ":")) + "\n").encode())
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
        except (OSError, RuntimeError, ValueError) as error:  # the write it anchors is committed: never undo it
            log.warning("the audit anchor of event %s (%s) could not be written to %s: %s", pending.anchor.seq,
                        pending.reason, self.path, error)
        if not self._warned and (warning := self.warning()) is not None:
            self._warned = True
            log.warning(warning)
