"""The inbox: files dropped into a folder are imported by the process that holds the database.

DuckDB lets one process write a database file, and while the console runs that process is the
console's. So the console watches a folder (``HRI_INBOX``, default ``inbox/`` beside the database
file): ``InboxWatcher`` is one background thread per process and folder (``start_watcher``), polling
every ``HRI_INBOX_POLL_SECONDS``; files are imported in the order they arrived.

What is taken, and when (``register.ingest.inbox_entries``). Entries are judged by ``lstat``, never
by what they point at. A regular file is taken once it has stopped changing -- its size, modification
time and inode the same for ``HRI_INBOX_SETTLE_SECONDS`` -- and no process holds it open for writing
(seen through ``/proc`` on Linux, for processes of the console's user): a writer that pauses, even in the
middle of a line, is waited for. A symbolic link, a hard link (a file with a second name, possibly
outside the inbox), a folder, a FIFO, a socket or a device is refused unread: moved to ``failed/`` as it
is, with a report naming what it is, and audited (``inbox.refused``). Hidden files (a leading dot) and
names ending in ``.partial``, ``.part``, ``.tmp`` or ``~`` are never touched, so a writer that copies
under such a name and renames when done is never seen half written.

Each file taken is claimed first (renamed into ``.claimed/<unique>/``, a folder of its own of mode 0700
that this process locks while it works on it: of two watchers only one wins the rename), then imported
from snapshots of its bytes by ``register.ingest.importer.import_path`` under the system actor
``inbox`` -- the same importer, checks, quarantine and report as ``python -m register import``.
A writer's handle follows the file into ``.claimed/``: bytes appended while (or after) it was imported
are imported by a later part, a half-written last line is never a record, and the file stays claimed
until it has stopped changing again (``register.ingest.inbox_claims``). Then it is moved to ``done/``
(imported, possibly with quarantined records) or ``failed/`` (refused or failed: nothing of it, or only
its committed chunks and earlier parts, was stored), with its JSON report beside it as
``<name>.report.json``: the CLI's ``--json`` report (all parts together) plus an ``inbox`` section
(file, SHA-256, bytes, received, finished, where it was moved, parts). A name already taken in
``done/`` or ``failed/`` gets a UTC time prefix. A claim of a process that stopped (its lock gone) is
taken up where it stood, its interrupted batch finished (``resume=True``).

The watcher writes a heartbeat (``.watcher.json``: PID, time, poll interval) at every look.
``python -m register import`` finding the database held reads it (``watcher_alive``), hands its files
over (``hand_off``: copied under a hidden name, then linked in under their own name, never
overwriting a file waiting there) and waits for their reports (``wait_for_reports``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import stat
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from register.access.permissions import SYSTEM_ROLE
from register.db.store import Actor, Change, Store
from register.errors import ImportRejected, RegisterError
from register.ingest import inbox_entries
from register.ingest.inbox_claims import PART_FOLDER, STATE, Claim, Step
from register.ingest.inbox_entries import LOCK_NAME, Settling, lock_claim, refusal, stat_key
from register.settings import settings

__all__ = ["INBOX_ACTOR", "Handoff", "Inbox", "InboxResult", "InboxWatcher", "hand_off", "inbox_for",
           "start_watcher", "wait_for_reports", "watcher_alive"]

log = logging.getLogger(__name__)

INBOX_ACTOR = Actor("inbox", SYSTEM_ROLE)
IGNORED_SUFFIXES = (".partial", ".part", ".tmp", "~")
REPORT_SUFFIX = ".report.json"
HEARTBEAT = ".watcher.json"
CLAIMED = ".claimed"
_HASH_BLOCK = 1 << 20

_WATCHERS: dict[Path, InboxWatcher] = {}  # the running watcher of each folder in this process
_WATCHERS_LOCK = threading.Lock()
_HELD: set[Path] = set()                  # claim folders the watchers of this process hold
_HELD_LOCK = threading.Lock()


def inbox_for(database: Path) -> Path:
    """The inbox folder of a database file: ``HRI_INBOX``, else ``inbox/`` beside the database file."""
    configured = settings().inbox
    return Path(configured) if configured else Path(database).parent / "inbox"


def _now() -> datetime:
    return datetime.now(UTC)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _write_json(path: Path, data: dict) -> None:
    """Write JSON whole or not at all: a reader never sees half a report."""
    partial = path.with_name(f".{path.name}.{uuid.uuid4().hex}.partial")
    partial.write_text(json.dumps(data, indent=2, default=str, ensure_ascii=False), encoding="utf-8")
    os.replace(partial, path)


@dataclass(frozen=True)
class Inbox:
    """The folder and its two outcome folders."""

    root: Path

    @property
    def done(self) -> Path:
        return self.root / "done"

    @property
    def failed(self) -> Path:
        return self.root / "failed"

    @property
    def claimed(self) -> Path:
        return self.root / CLAIMED

    def ensure(self) -> Inbox:
        """Create the folders; ``RegisterError`` when one of the inbox's own is not a folder (a link put in
        its place would send files elsewhere)."""
        self.root.mkdir(parents=True, exist_ok=True)
        for folder in (self.done, self.failed, self.claimed):
            with contextlib.suppress(FileExistsError):  # something else of that name: refused below
                folder.mkdir(exist_ok=True)
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                raise RegisterError(f"{folder} is not a folder (a link or a file): the inbox will not move files "
                                    "into it; remove it")
        return self

    def entries(self) -> list[tuple[Path, os.stat_result]]:
        """Every entry at the top of the inbox with its ``lstat``, in the order they arrived (modification
        time, then name): hidden names, names of files still being copied and the inbox's own folders left out."""
        if not self.root.is_dir():
            return []
        found = []
        with os.scandir(self.root) as scan:
            for entry in scan:
                if entry.name.startswith(".") or entry.name.endswith(IGNORED_SUFFIXES) or \
                        entry.name in ("done", "failed"):
                    continue
                with _suppress_missing():
                    info = entry.stat(follow_symlinks=False)
                    found.append((info.st_mtime_ns, entry.name, Path(entry.path), info))
        return [(path, info) for _, _, path, info in sorted(found, key=lambda item: item[:2])]

    def waiting(self) -> list[Path]:
        """Files waiting at the top of the inbox in the order they arrived (regular files only: anything else
        is refused, not imported); a later file may revise a record of an earlier one."""
        return [path for path, info in self.entries() if refusal(info) is None]

    def reports(self, since: float = 0.0) -> list[Path]:
        """Report files in done/ and failed/ written at or after ``since`` (a ``time.time()``), oldest first."""
        found = []
        for folder in (self.done, self.failed):
            if folder.is_dir():
                for entry in folder.iterdir():
                    if entry.name.endswith(REPORT_SUFFIX) and not entry.name.startswith("."):
                        with _suppress_missing():
                            mtime = entry.stat().st_mtime
                            if mtime >= since:
                                found.append((mtime, entry))
        return [entry for _, entry in sorted(found)]


class _suppress_missing:
    """A file listed a moment ago may be gone (moved by the watcher): skip it."""

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        return kind is not None and issubclass(kind, FileNotFoundError)


@dataclass(frozen=True)
class InboxResult:
    """What the watcher did with one file."""

    name: str
    outcome: str  # "done" or "failed"
    moved_to: Path
    report_path: Path
    report: dict


def _free_name(folder: Path, name: str) -> Path:
    """``folder/name``, or with a UTC time prefix when that name is taken (reports sit beside their files)."""
    target = folder / name
    if not os.path.lexists(target) and not os.path.lexists(target.with_name(name + REPORT_SUFFIX)):
        return target
    return folder / f"{_now():%Y%m%dT%H%M%S%fZ}-{name}"


class InboxWatcher:
    """One thread that imports the inbox's files as they arrive (see the module docstring).

    ``poll_once`` is one look (called by the thread, or directly by a test); ``start``/``stop`` run
    and end the thread. ``settle_seconds`` (default ``HRI_INBOX_SETTLE_SECONDS``) is how long a file must
    stay unchanged to be taken. ``on_import(result)`` is called after each file (the console clears its
    cached reads there).
    """

    def __init__(self, store: Store, root: Path, *, poll_seconds: float = 2.0, settle_seconds: float | None = None,
                 actor: Actor = INBOX_ACTOR, on_import: Callable[[InboxResult], None] | None = None):
        if poll_seconds <= 0:
            raise ValueError(f"poll_seconds must be > 0, got {poll_seconds}")
        settle = settings().inbox_settle_seconds if settle_seconds is None else settle_seconds
        if settle < 0:
            raise ValueError(f"settle_seconds must be >= 0, got {settle}")
        self.store = store
        self.inbox = Inbox(Path(root))
        self.poll_seconds = poll_seconds
        self.settle_seconds = settle
        self.actor = actor
        self.on_import = on_import
        self.results: list[InboxResult] = []
        self._settling = Settling(settle)
        self._claims: dict[Path, Claim] = {}  # claim folder -> the file this watcher holds there
        self._refused: set[tuple[str, tuple]] = set()  # entries refused but not movable: reported once
        self._first_look = True
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._look = threading.Lock()  # one look at a time, even when a test calls poll_once beside the thread

    # --- one look ---

    def poll_once(self) -> list[InboxResult]:
        """Write the heartbeat; take up claims nobody holds; refuse what is not a regular file; claim the files
        that have stopped changing; import what is ready of every claim and move the finished ones."""
        with self._look:
            self.inbox.ensure()
            self._heartbeat()
            self._take_up_leftovers()
            results: list[InboxResult] = []
            now = time.monotonic()
            entries = self.inbox.entries()
            self._settling.forget_all_but(path.name for path, _ in entries)
            settled = [(path, info) for path, info in entries if self._settling.settled(path.name, info, now)]
            regular = [path for path, info in settled if refusal(info) is None]
            writing = inbox_entries.open_for_writing(regular) if regular else set()
            for path, info in settled:
                problem = refusal(info)
                if problem is not None:
                    results.extend(self._refuse(path, info, problem))
                elif path not in writing:  # a writer holds it open: however long it pauses, it is not done
                    self._claim(path, info, self._settling.since(path.name))
            for claim in list(self._claims.values()):
                step = claim.step(self.store, self.actor, self.settle_seconds)
                if step.outcome is not None:
                    results.append(self._finish(claim, step))
            return results

    def _heartbeat(self) -> None:
        _write_json(self.inbox.root / HEARTBEAT, {"pid": os.getpid(), "at": time.time(),
                                                  "poll_seconds": self.poll_seconds,
                                                  "database": str(self.store.path)})

    def _claim(self, path: Path, info: os.stat_result, quiet_since: float) -> None:
        """Move the file out of the inbox into a locked folder of its own (nothing when another watcher won)."""
        folder = self.inbox.claimed / uuid.uuid4().hex
        with _HELD_LOCK:
            _HELD.add(folder)  # not a leftover for another watcher of this process, even before it is locked
        folder.mkdir(mode=0o700)
        lock = lock_claim(folder)  # before the file arrives: a claim is never seen unlocked with its file
        target = folder / path.name
        try:
            if lock is None:
                raise RegisterError(f"cannot lock {folder}")
            os.rename(path, target)
        except (FileNotFoundError, RegisterError):  # another watcher took it first
            if lock is not None:
                lock.release()
            shutil.rmtree(folder, ignore_errors=True)
            with _HELD_LOCK:
                _HELD.discard(folder)
            return
        claim = Claim(target, lock, _now())
        with _suppress_missing():
            after = os.lstat(target)
            if (after.st_dev, after.st_ino) == (info.st_dev, info.st_ino):  # the file that settled: still settled
                claim.key, claim.quiet_since = stat_key(after), quiet_since  # (the rename changed its ctime)
        self._hold(folder, claim)

    def _hold(self, folder: Path, claim: Claim) -> None:
        self._claims[folder] = claim
        with _HELD_LOCK:
            _HELD.add(folder)

    def _take_up_leftovers(self) -> None:
        """Claims in ``.claimed/`` that no process holds (their process stopped): taken up where they stood.
        Where the file system has no locks, only at this watcher's first look and if no watcher here holds it."""
        first, self._first_look = self._first_look, False
        for folder in sorted(self.inbox.claimed.iterdir()):
            with _HELD_LOCK:
                held_here = folder in _HELD
            if folder in self._claims or held_here or not _is_folder(folder):
                continue
            lock = lock_claim(folder)
            if lock is None:
                continue
            if not lock.exclusive and not first:
                lock.release()
                continue
            files = sorted(p for p in folder.iterdir() if not p.name.startswith("."))
            if not files:  # stopped before the file arrived, or after it left: nothing to take up
                _remove_claim_folder(folder)
                lock.release()
                continue
            self._hold(folder, Claim.taken_up(files[0], lock))

    def _finish(self, claim: Claim, step: Step) -> InboxResult:
        """Move a claimed file to done/ or failed/, write its report beside it, let the claim go."""
        sha256, size = claim.final_sha256()
        target = _free_name(self.inbox.done if step.outcome == "done" else self.inbox.failed, claim.name)
        with _suppress_missing():
            os.replace(claim.path, target)
        folder = claim.folder
        _remove_claim_folder(folder)
        claim.lock.release()
        del self._claims[folder]
        with _HELD_LOCK:
            _HELD.discard(folder)
        body = claim.body(step)
        body["inbox"] = self._section(claim.name, step.outcome or "failed", target, sha256, size,
                                      received_at=claim.received_at, resumed=claim.resumed, parts=claim.parts)
        if sha256 is None and step.error and step.error["title"] == ImportRejected.title:
            self._audit_refusal(claim.name, step.error["message"], body["inbox"]["moved_to"])
        return self._reported(InboxResult(claim.name, step.outcome or "failed", target,
                                          target.with_name(target.name + REPORT_SUFFIX), body))

    def _refuse(self, path: Path, info: os.stat_result, problem: str) -> list[InboxResult]:
        """Refuse an entry unread: moved (as it is: a link stays a link) to failed/ with a report, audited."""
        key = (path.name, stat_key(info))
        if key in self._refused:
            return []
        target = _free_name(self.inbox.failed, path.name)
        try:
            os.rename(path, target)
        except FileNotFoundError:
            return []
        except OSError as error:  # not ours to move (another user's entry in a shared folder): reported once
            log.warning("inbox: cannot move %s to failed/: %s", path, error)
            self._refused.add(key)
            target = path
        message = f"{path.name} is {problem}: refused unread (the inbox imports regular files only)"
        section = self._section(path.name, "failed", target, None, None, received_at=_now(), resumed=False, parts=0)
        self._audit_refusal(path.name, message, section["moved_to"])
        body = {"error": {"title": ImportRejected.title, "message": message}, "inbox": section}
        report_path = self.inbox.failed / (target.name + REPORT_SUFFIX)
        return [self._reported(InboxResult(path.name, "failed", target, report_path, body))]

    def _section(self, name: str, outcome: str, target: Path, sha256: str | None, size: int | None, *,
                 received_at: datetime, resumed: bool, parts: int) -> dict:
        return {"file": name, "sha256": sha256, "bytes": size, "outcome": outcome, "actor": self.actor.name,
                "received_at": received_at.isoformat(), "finished_at": _now().isoformat(),
                "moved_to": str(target.relative_to(self.inbox.root)), "resumed": resumed, "parts": parts}

    def _audit_refusal(self, name: str, reason: str, moved_to: str) -> None:
        self.store.write(self.actor, "inbox.refused", lambda tx: Change(
            "inbox", name, None, {"file": name, "reason": reason, "moved_to": moved_to}))

    def _reported(self, result: InboxResult) -> InboxResult:
        _write_json(result.report_path, result.report)
        log.info("inbox: %s -> %s", result.name, result.moved_to)
        self.results.append(result)
        if self.on_import is not None:
            self.on_import(result)
        return result

    # --- the thread ---

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> InboxWatcher:
        if not self.running:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name=f"hri-inbox:{self.inbox.root}", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float | None = 30.0) -> None:
        """Stop after the current file (a file being imported is finished, not cut off); the files still held
        are let go, to be taken up where they stand by the next watcher."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        if not self.running:
            with self._look:
                for folder, claim in self._claims.items():
                    claim.lock.release()
                    with _HELD_LOCK:
                        _HELD.discard(folder)
                self._claims.clear()
                self._first_look = True

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.poll_once()
            except Exception:  # noqa: BLE001 - a bad look (a folder removed, a full disk) must not end the watcher
                log.exception("inbox: a look into %s failed; trying again", self.inbox.root)
            self._stop.wait(self.poll_seconds)


def _is_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def _remove_claim_folder(folder: Path) -> None:
    """Remove what the watcher keeps in a claim folder, then the folder if nothing else is in it."""
    for name in (STATE, f"{STATE}.partial", LOCK_NAME):
        with _suppress_missing():
            (folder / name).unlink()
    shutil.rmtree(folder / PART_FOLDER, ignore_errors=True)
    try:
        folder.rmdir()
    except OSError:  # something put there besides the claimed file: left alone (a look takes up what is left)
        log.debug("inbox: %s holds more than the claimed file; left in place", folder)


def start_watcher(store: Store, root: Path, *, poll_seconds: float,
                  on_import: Callable[[InboxResult], None] | None = None) -> InboxWatcher:
    """The running watcher of this folder in this process, started if there is none (thread-safe: two
    sessions asking at once get the same one)."""
    key = Path(root).resolve()
    with _WATCHERS_LOCK:
        watcher = _WATCHERS.get(key)
        if watcher is None or not watcher.running or watcher.store is not store:
            if watcher is not None:
                watcher.stop()
            watcher = InboxWatcher(store, key, poll_seconds=poll_seconds, on_import=on_import).start()
            _WATCHERS[key] = watcher
        return watcher


# --- the other side: a command line handing files to a running console ------------------------------


def watcher_alive(root: Path, *, now: float | None = None) -> dict | None:
    """The heartbeat of the inbox's watcher if it looked in recently (within three polls, at least 10 s)."""
    try:
        beat = json.loads((Path(root) / HEARTBEAT).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    age = (now if now is not None else time.time()) - float(beat.get("at", 0))
    return beat if age <= max(10.0, 3 * float(beat.get("poll_seconds", 2))) else None


@dataclass
class Handoff:
    """One file handed to the inbox and what identifies its report: name, content, when, and the reports
    already written when it was handed (the same file handed a moment earlier has a report of the same
    name, content and nearly the same time: only a report written since can be this one's)."""

    name: str
    sha256: str
    handed_at: float
    report: dict | None = field(default=None)
    earlier_reports: frozenset[Path] = field(default=frozenset())


def hand_off(root: Path, files: list[Path], *, wait_free: float = 60.0) -> list[Handoff]:
    """Put copies of ``files`` into the inbox under their own names, each appearing whole (a hidden copy,
    then a hard link: a file of the same name still waiting is never overwritten -- its turn is awaited
    up to ``wait_free`` seconds, then ``RegisterError``)."""
    inbox = Inbox(Path(root)).ensure()
    handed = []
    for source in files:
        partial = inbox.root / f".{source.name}.{uuid.uuid4().hex}.partial"
        shutil.copyfile(source, partial)
        sha256 = sha256_of(partial)
        deadline = time.monotonic() + wait_free
        try:
            while True:
                handed_at = time.time()
                earlier = frozenset(inbox.reports())  # before the file appears: its report cannot exist yet
                try:
                    _place(partial, inbox.root / source.name)
                    break
                except FileExistsError:
                    if time.monotonic() > deadline:
                        raise RegisterError(f"{inbox.root / source.name} is still waiting in the inbox after "
                                            f"{wait_free:g} s: the console is not taking files") from None
                    time.sleep(0.2)
        finally:
            partial.unlink(missing_ok=True)  # gone already when it was renamed into place
        handed.append(Handoff(source.name, sha256, handed_at, earlier_reports=earlier))
    return handed


def _place(partial: Path, target: Path) -> None:
    """Make ``partial`` appear as ``target`` whole; ``FileExistsError`` when ``target`` exists. A hard link
    refuses to replace a file atomically; where the file system has none, a rename after a check."""
    try:
        os.link(partial, target)
    except FileExistsError:
        raise
    except OSError:  # no hard links here (some network and container file systems)
        if target.exists():
            raise FileExistsError(target) from None
        os.rename(partial, target)


def wait_for_reports(root: Path, handoffs: list[Handoff], *, timeout: float, poll: float = 0.2) -> bool:
    """Fill each handoff's ``report`` from done/ or failed/ (same name and SHA-256, received after it was
    handed over). True when every one has its report, False when ``timeout`` seconds passed first."""
    inbox = Inbox(Path(root))
    since = min((h.handed_at for h in handoffs), default=time.time()) - 1.0
    deadline = time.monotonic() + timeout
    used: set[Path] = set()
    while True:
        for path in inbox.reports(since):
            if path in used:
                continue
            try:
                report = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            meta = report.get("inbox", {})
            for handoff in handoffs:
                if (handoff.report is None and path not in handoff.earlier_reports and meta.get("file") == handoff.name
                        and meta.get("sha256") == handoff.sha256
                        and datetime.fromisoformat(meta["received_at"]).timestamp() >= handoff.handed_at - 1.0):
                    handoff.report = report
                    used.add(path)
                    break
        if all(h.report is not None for h in handoffs):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(poll)
