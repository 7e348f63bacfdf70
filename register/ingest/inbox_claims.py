"""A file taken from the inbox, imported in parts for as long as it may still grow: no byte of it is lost.

Called by the watcher (``register.ingest.inbox``) for each claimed file (``.claimed/<id>/<name>``, a folder
of mode 0700 that only this process writes into, locked while it works on it). A writer's open handle
follows the file wherever it is renamed, so a file is imported from a snapshot of what it held at that
moment, never read while it changes:

- each part is a copy of the file's new bytes (``.claimed/<id>/.part/<name>``) imported by
  ``import_path``; the bytes are read through a descriptor opened with ``O_NOFOLLOW`` and checked by
  ``fstat`` (``inbox_entries.open_regular``);
- a JSON Lines file that ends in a line without its newline waits one more settle interval after it was
  taken (a writer paused in the middle of a line is given that long to finish it), then goes in whole, as
  one part. Of a file already partly imported, new complete lines go in once it settles and a line without
  its newline waits for a part of its own, a settle interval later: half a record is never imported while
  its writer may still finish it. A later part starts after the last line imported, its lines numbered as
  in the file (the copy starts with one empty line per line already imported: empty lines are not records);
- after each part the file is checked again (size and modification time, and the SHA-256 of the bytes
  read, re-read): bytes appended meanwhile are imported by a later part once the file has stopped
  changing again; a file whose imported bytes changed (rewritten, truncated) is imported again whole, as
  are CSV, Parquet and RAG result files that changed at all (one document: there is no "rest" to read).
  Records already stored count as unchanged, so nothing is stored twice;
- the file leaves ``.claimed/`` only once everything in it was imported, it has stopped changing for the
  settle interval and no process holds it open for writing (``inbox_entries.open_for_writing``).

What was done so far is kept beside the file (``.state.json``): a console that stops while holding a file
goes on from there when it starts again (the first part then finishes an interrupted batch, ``resume``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hri_core import HRIError
from register.access.permissions import Permission, authorize
from register.db.store import Actor, Store
from register.errors import ImportRejected, RegisterError
from register.ingest.files import FORMATS, check_file
from register.ingest.importer import import_path
from register.ingest.inbox_entries import ClaimLock, StatKey, open_for_writing, open_regular, refusal, stat_key
from register.ingest.rag_files import rag_kind
from register.ingest.reports import ImportReport

__all__ = ["LINES", "PART_FOLDER", "STATE", "WHOLE", "Claim", "Step"]

log = logging.getLogger(__name__)

LINES, WHOLE = "lines", "whole"  # JSON Lines, imported part by part; any other file, imported whole
STATE = ".state.json"
PART_FOLDER = ".part"
EMPTY_SHA256 = hashlib.sha256().hexdigest()
_BLOCK = 1 << 20


@dataclass(frozen=True)
class Part:
    """Bytes ``[start, end)`` of the file, copied to ``snapshot``; ``sha256`` is of the file's ``[0, end)``."""

    snapshot: Path
    start: int
    end: int
    lines: int  # newlines in [start, end)
    sha256: str


@dataclass(frozen=True)
class Step:
    """What one look did with a claim: ``outcome`` ("done" or "failed") once it is to be moved, else None."""

    outcome: str | None = None
    error: dict | None = None


@dataclass
class Claim:
    """A claimed file, how far it was imported and what its parts did (see the module docstring)."""

    path: Path
    lock: ClaimLock
    received_at: datetime
    resumed: bool = False  # taken up from a process that stopped: its first part finishes an interrupted batch
    offset: int = 0  # bytes imported (JSON Lines: up to the end of the last line imported)
    lines: int = 0  # lines in [0, offset)
    sha256: str = EMPTY_SHA256  # of the file's bytes [0, offset)
    mode: str | None = None
    parts: int = 0
    report: ImportReport = field(default_factory=ImportReport)
    key: StatKey | None = None
    quiet_since: float = 0.0  # monotonic time since when the file has not changed
    last_import: float = field(default_factory=time.monotonic)  # when the last part ended (or the file was taken)
    resume_next: bool = False
    verified: StatKey | None = None  # the file's stat when its bytes [0, offset) were last found unchanged

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def folder(self) -> Path:
        return self.path.parent

    # --- kept beside the file ---

    def save(self) -> None:
        """Write what was done so far (whole or not at all), for a console that starts again."""
        state = {"name": self.name, "received_at": self.received_at.isoformat(), "offset": self.offset,
                 "lines": self.lines, "sha256": self.sha256, "mode": self.mode, "parts": self.parts,
                 "report": self.report.as_dict()}
        partial = self.folder / f"{STATE}.partial"
        partial.write_text(json.dumps(state, default=str), encoding="utf-8")
        os.replace(partial, self.folder / STATE)

    @classmethod
    def taken_up(cls, path: Path, lock: ClaimLock) -> Claim:
        """The claim of a process that stopped: from its saved state, or from the start (a file claimed before
        states were kept); its first part finishes the batch that was interrupted, if any."""
        claim = cls(path, lock, datetime.now(UTC), resumed=True, resume_next=True)
        try:
            state = json.loads((path.parent / STATE).read_text(encoding="utf-8"))
            if state.get("name") != path.name:
                raise ValueError("the state is another file's")
            claim.received_at = datetime.fromisoformat(state["received_at"])
            claim.offset, claim.lines, claim.sha256 = int(state["offset"]), int(state["lines"]), str(state["sha256"])
            claim.mode = state["mode"] if state.get("mode") in (LINES, WHOLE) else None
            claim.parts = int(state["parts"])
            claim.report = ImportReport.from_dict(state["report"])
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError) as error:  # from the start: stored records count unchanged
            log.warning("inbox: the state of %s cannot be read (%s); importing it from its start", path, error)
            claim = cls(path, lock, claim.received_at, resumed=True, resume_next=True)
        try:  # unchanged since its modification time (as far as this process can tell): counted as settling since
            info = os.lstat(path)
            claim.key = stat_key(info)
            claim.quiet_since = time.monotonic() - max(0.0, time.time() - info.st_mtime)
        except FileNotFoundError:
            pass
        return claim

    def note(self, text: str) -> None:
        self.report.notes.append(f"{self.name}: {text}")

    # --- one look ---

    def step(self, store: Store, actor: Actor, settle: float) -> Step:
        """Import what is ready; say when the file is to be moved (done, or failed with the error)."""
        while True:
            now = time.monotonic()
            try:
                info = os.lstat(self.path)
            except FileNotFoundError:
                return _failed("File error", f"{self.name} disappeared from {self.folder.name} before it was "
                                             "imported whole")
            problem = refusal(info)
            if problem is not None:
                return _failed(ImportRejected.title, f"{self.name} is {problem}: refused unread")
            key = stat_key(info)
            if key != self.key:
                self.key, self.quiet_since = key, now
                return Step()
            if now - self.quiet_since < settle or open_for_writing([self.path]):
                return Step()  # still changing, or a writer holds it open: look again later
            try:
                if self.parts and self.offset == info.st_size:
                    if key == self.verified or self._unchanged():
                        return Step("done")
                    continue  # rewritten since its last part, to the same size: imported again whole
                tail_ready = now - max(self.last_import, self.quiet_since) >= settle
                imported = self._import_next(store, actor, info, tail_ready=tail_ready)
            except (RegisterError, HRIError, OSError, ValueError) as error:
                return _failed(getattr(error, "title", "File error"), str(error))
            except Exception as error:  # noqa: BLE001 - the watcher must outlive any one file; it goes to failed/
                log.exception("inbox: importing %s failed unexpectedly", self.name)
                return _failed("Unexpected error", f"{type(error).__name__}: {error}")
            if not imported:
                return Step()

    def _import_next(self, store: Store, actor: Actor, info: os.stat_result, *, tail_ready: bool) -> bool:
        """Copy the next part and import it, then check the file again. False when there is nothing to import
        yet (a line without its newline, not yet given its settle interval)."""
        authorize(store, actor, Permission.IMPORT, entity_type="inbox", entity_id=self.name)  # before any read
        fd = open_regular(self.path, info)
        try:
            if self.parts == 0:
                check_file(self.path)  # refuse (type, size, content) before copying a byte
            if self.mode is None:
                self.mode = _mode_of(self.path)
            part = self._copy_part(fd, os.fstat(fd).st_size, tail_ready=tail_ready)
            if part is None:
                return False
            try:
                # the index to the console's background catch-up (the watcher runs in its process)
                report = import_path(store, actor, part.snapshot, resume=self.resume_next, defer_index=None)
            finally:
                shutil.rmtree(part.snapshot.parent, ignore_errors=True)
            self.resume_next = False
            self.parts += 1
            self.report.extend(report)
            self._check_after(fd, part)
        finally:
            os.close(fd)
        self.last_import = time.monotonic()
        self.save()
        return True

    def _copy_part(self, fd: int, size: int, *, tail_ready: bool) -> Part | None:
        """The bytes to import next, copied from the open file (the bytes imported before checked unchanged)."""
        digest = hashlib.sha256()
        start = self.offset if self.mode == LINES else 0
        if start and (size < start or _sha256_of(fd, start, digest) != self.sha256):
            self._start_over("the bytes imported before changed (rewritten or truncated)")
            digest, start = hashlib.sha256(), 0
        folder = self.folder / PART_FOLDER
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(mode=0o700)
        snapshot = folder / self.name
        upto_newline, newlines, last_newline = digest.copy(), 0, start
        position = start
        with snapshot.open("wb") as out:
            if self.mode == LINES:
                out.write(b"\n" * self.lines)  # the file's line numbers (empty lines are not records)
            while position < size and (block := os.pread(fd, min(_BLOCK, size - position), position)):
                out.write(block)
                cut = block.rfind(b"\n")
                if cut >= 0:
                    digest.update(block[:cut + 1])
                    upto_newline, last_newline = digest.copy(), position + cut + 1
                    digest.update(block[cut + 1:])
                    newlines += block.count(b"\n")
                else:
                    digest.update(block)
                position += len(block)
        end, sha256 = position, digest.hexdigest()
        if self.mode == LINES and last_newline < end:  # it ends in a line without its newline
            if not self.parts and not tail_ready:  # nothing imported yet: the whole file waits, then goes in as one
                shutil.rmtree(folder, ignore_errors=True)
                return None
            if self.parts and (last_newline > start or not tail_ready):  # the lines before it go in; the line waits
                end, sha256 = last_newline, upto_newline.hexdigest()
                os.truncate(snapshot, self.lines + end - start)
        if end == start and (self.parts or end < size):
            shutil.rmtree(folder, ignore_errors=True)
            return None  # nothing new (an empty file is still imported once, as zero records)
        return Part(snapshot, start, end, newlines, sha256)

    def _check_after(self, fd: int, part: Part) -> None:
        """After a part: the bytes it read must still be the file's (then the next part starts after them); if
        they changed while they were imported, the file is imported again whole when it settles."""
        before = os.fstat(fd)
        if _sha256_of(fd, part.end, hashlib.sha256()) != part.sha256:
            self._start_over("it changed while it was imported")
            return
        self.verified, size = stat_key(before), before.st_size
        if self.mode == LINES:
            self.offset, self.lines, self.sha256 = part.end, self.lines + part.lines, part.sha256
            if size > part.end and part.start < part.end:
                self.note(f"lines {self.lines - part.lines + 1} to {self.lines} imported; the bytes after them are "
                          "imported once the file stops changing")
        else:
            self.offset, self.sha256 = part.end, part.sha256
            if size != part.end:
                self.note("it grew while it was imported: imported again whole once it stops changing "
                          "(records already stored count as unchanged)")

    def _unchanged(self) -> bool:
        """Whether the file's bytes [0, offset) are still those imported (else it starts over)."""
        fd = open_regular(self.path)
        try:
            before = os.fstat(fd)
            if _sha256_of(fd, self.offset, hashlib.sha256()) == self.sha256:
                self.verified = stat_key(before)
                return True
        finally:
            os.close(fd)
        self._start_over("it was rewritten after it was imported")
        return False

    def _start_over(self, why: str) -> None:
        self.note(f"{why}: imported again from its start (records already stored count as unchanged)")
        self.offset, self.lines, self.sha256 = 0, 0, EMPTY_SHA256

    # --- the end ---

    def final_sha256(self) -> tuple[str | None, int | None]:
        """SHA-256 and size of the file as it is moved (None for what is not a regular file: never read)."""
        try:
            fd = open_regular(self.path)
        except (OSError, RegisterError):
            return None, None
        try:
            size = os.fstat(fd).st_size
            if self.offset == size and self.mode is not None:
                return self.sha256, size
            return _sha256_of(fd, size, hashlib.sha256()), size
        finally:
            os.close(fd)

    def body(self, step: Step) -> dict[str, Any]:
        """The report of the file: what its parts did, and the error that failed it, if any."""
        if step.error is None:
            return self.report.as_dict()
        if not self.parts:
            return {"error": step.error}
        return {**self.report.as_dict(), "error": step.error}


def _failed(title: str, message: str) -> Step:
    return Step("failed", {"title": title, "message": message})


def _mode_of(path: Path) -> str:
    """JSON Lines are imported line by line (``LINES``); CSV, Parquet, RAG results and the rest whole."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt != "jsonl":
        return WHOLE
    try:
        return WHOLE if rag_kind(path, fmt) else LINES
    except (RegisterError, RecursionError, ValueError):
        return WHOLE  # the importer says what is wrong with it


def _sha256_of(fd: int, size: int, digest: Any) -> str:
    """SHA-256 of the open file's bytes ``[0, size)`` (fewer if it is shorter now), added to ``digest``."""
    position = 0
    while position < size and (block := os.pread(fd, min(_BLOCK, size - position), position)):
        digest.update(block)
        position += len(block)
    return digest.hexdigest() if position == size else "short"
