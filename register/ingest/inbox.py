"""The inbox: files dropped into a folder are imported by the process that holds the database.

DuckDB lets one process write a database file, and while the console runs that process is the
console's. So the console watches a folder (``HRI_INBOX``, default ``inbox/`` beside the database
file): ``InboxWatcher`` is one background thread per process and folder (``start_watcher``), polling
every ``HRI_INBOX_POLL_SECONDS``; files are imported in the order they arrived. A file is taken
only when its size and modification time are the same at two consecutive looks (a file still being
written is left for a later look); hidden files
(a leading dot) and names ending in ``.partial``, ``.part``, ``.tmp`` or ``~`` are never taken, so a
writer that copies under such a name and renames when done is never seen half written.

Each file taken is claimed first (renamed into ``.claimed/<unique>/``: of two watchers only one wins
the rename), imported by ``register.ingest.importer.import_path`` under the system actor ``inbox`` --
the same importer, checks, quarantine and report as ``python -m register import`` -- and moved to
``done/`` (imported, possibly with quarantined records) or ``failed/`` (refused or failed: nothing of
it, or only its committed chunks, was stored), with its JSON report beside it as
``<name>.report.json``: the CLI's ``--json`` report plus an ``inbox`` section (file, SHA-256,
received, finished, where it was moved). A name already taken in ``done/`` or ``failed/`` gets a UTC
time prefix. A file claimed by a process that stopped mid-import is taken up at the next start with
``resume=True`` (its committed chunks are kept, the rest imported).

The watcher writes a heartbeat (``.watcher.json``: PID, time, poll interval) at every look.
``python -m register import`` finding the database held reads it (``watcher_alive``), hands its files
over (``hand_off``: copied under a hidden name, then linked in under their own name, never
overwriting a file waiting there) and waits for their reports (``wait_for_reports``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hri_core import HRIError
from register.access.permissions import SYSTEM_ROLE, Permission, authorize
from register.db.store import Actor, Store
from register.errors import RegisterError
from register.ingest.importer import import_path
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
_IN_PROGRESS: set[Path] = set()           # claim folders this process is importing
_WATCHERS_LOCK = threading.Lock()


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

    def ensure(self) -> Inbox:
        for folder in (self.root, self.done, self.failed, self.root / CLAIMED):
            folder.mkdir(parents=True, exist_ok=True)
        return self

    def waiting(self) -> list[Path]:
        """Files waiting at the top of the inbox in the order they arrived (modification time, then name;
        hidden and still-being-copied names excluded): a later file may revise a record of an earlier one."""
        if not self.root.is_dir():
            return []
        found = []
        for entry in self.root.iterdir():
            if entry.name.startswith(".") or entry.name.endswith(IGNORED_SUFFIXES):
                continue
            with _suppress_missing():
                if entry.is_file():
                    found.append((entry.stat().st_mtime_ns, entry.name, entry))
        return [entry for _, _, entry in sorted(found)]

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
    if not target.exists() and not target.with_name(name + REPORT_SUFFIX).exists():
        return target
    return folder / f"{_now():%Y%m%dT%H%M%S%fZ}-{name}"


def import_claimed(store: Store, inbox: Inbox, claimed: Path, *, actor: Actor = INBOX_ACTOR,
                   resume: bool = False, received_at: datetime | None = None) -> InboxResult:
    """Import one claimed file, move it to done/ or failed/ and write its report beside it."""
    authorize(store, actor, Permission.IMPORT, entity_type="inbox")  # first: nothing is read before it
    received_at = received_at or _now()
    name = claimed.name
    sha256 = sha256_of(claimed)
    size = claimed.stat().st_size
    body: dict[str, Any]
    try:
        report = import_path(store, actor, claimed, resume=resume)
        outcome, body = "done", report.as_dict()
    except (RegisterError, HRIError, OSError, ValueError) as error:
        outcome, body = "failed", {"error": {"title": getattr(error, "title", "File error"), "message": str(error)}}
    except Exception as error:  # noqa: BLE001 - the watcher must outlive any one file; the file goes to failed/
        log.exception("inbox: importing %s failed unexpectedly", name)
        outcome, body = "failed", {"error": {"title": "Unexpected error",
                                             "message": f"{type(error).__name__}: {error}"}}
    folder = inbox.done if outcome == "done" else inbox.failed
    target = _free_name(folder, name)
    os.replace(claimed, target)
    with _suppress_missing():
        claimed.parent.rmdir()
    body["inbox"] = {"file": name, "sha256": sha256, "bytes": size, "outcome": outcome, "actor": actor.name,
                     "received_at": received_at.isoformat(), "finished_at": _now().isoformat(),
                     "moved_to": str(target.relative_to(inbox.root)), "resumed": resume}
    report_path = target.with_name(target.name + REPORT_SUFFIX)
    _write_json(report_path, body)
    return InboxResult(name, outcome, target, report_path, body)


class InboxWatcher:
    """One thread that imports the inbox's files as they arrive (see the module docstring).

    ``poll_once`` is one look (called by the thread, or directly by a test); ``start``/``stop`` run
    and end the thread. ``on_import(result)`` is called after each file (the console clears its
    cached reads there).
    """

    def __init__(self, store: Store, root: Path, *, poll_seconds: float = 2.0, actor: Actor = INBOX_ACTOR,
                 on_import: Callable[[InboxResult], None] | None = None):
        if poll_seconds <= 0:
            raise ValueError(f"poll_seconds must be > 0, got {poll_seconds}")
        self.store = store
        self.inbox = Inbox(Path(root))
        self.poll_seconds = poll_seconds
        self.actor = actor
        self.on_import = on_import
        self.results: list[InboxResult] = []
        self._seen: dict[str, tuple[int, int]] = {}  # name -> (size, mtime_ns) at the previous look
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._look = threading.Lock()  # one look at a time, even when a test calls poll_once beside the thread
        self._leftovers_checked = False

    # --- one look ---

    def poll_once(self) -> list[InboxResult]:
        """Write the heartbeat, take the files whose size held still since the last look, import them."""
        with self._look:
            self.inbox.ensure()
            self._heartbeat()
            results = [self._process(claimed, resume=True) for claimed in self._leftovers()]
            stable = []
            seen: dict[str, tuple[int, int]] = {}
            for path in self.inbox.waiting():
                with _suppress_missing():
                    stat = path.stat()
                    key = (stat.st_size, stat.st_mtime_ns)
                    if self._seen.get(path.name) == key:
                        stable.append(path)
                    else:
                        seen[path.name] = key  # new or still growing: look again next time
            self._seen = seen
            for path in stable:
                claimed = self._claim(path)
                if claimed is not None:
                    results.append(self._process(claimed))
            return results

    def _heartbeat(self) -> None:
        _write_json(self.inbox.root / HEARTBEAT, {"pid": os.getpid(), "at": time.time(),
                                                  "poll_seconds": self.poll_seconds,
                                                  "database": str(self.store.path)})

    def _claim(self, path: Path) -> Path | None:
        """Move the file out of the inbox into a folder of its own; None when another watcher won."""
        folder = self.inbox.root / CLAIMED / uuid.uuid4().hex
        with _WATCHERS_LOCK:
            _IN_PROGRESS.add(folder)  # not a leftover for another watcher of this process
        folder.mkdir(parents=True)
        target = folder / path.name
        try:
            os.rename(path, target)
        except FileNotFoundError:
            folder.rmdir()
            with _WATCHERS_LOCK:
                _IN_PROGRESS.discard(folder)
            return None
        return target

    def _leftovers(self) -> list[Path]:
        """Files claimed by a process that stopped before it finished them (looked for once per watcher;
        a claim this process is working on is not a leftover)."""
        if self._leftovers_checked:
            return []
        self._leftovers_checked = True
        with _WATCHERS_LOCK:
            busy = set(_IN_PROGRESS)
        claimed = self.inbox.root / CLAIMED
        return sorted(f for d in claimed.iterdir() if d.is_dir() and d not in busy
                      for f in d.iterdir() if f.is_file())

    def _process(self, claimed: Path, *, resume: bool = False) -> InboxResult:
        with _WATCHERS_LOCK:
            _IN_PROGRESS.add(claimed.parent)
        try:
            result = import_claimed(self.store, self.inbox, claimed, actor=self.actor, resume=resume)
        finally:
            with _WATCHERS_LOCK:
                _IN_PROGRESS.discard(claimed.parent)
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
        """Stop after the current file (a file being imported is finished, not cut off)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.poll_once()
            except Exception:  # noqa: BLE001 - a bad look (a folder removed, a full disk) must not end the watcher
                log.exception("inbox: a look into %s failed; trying again", self.inbox.root)
            self._stop.wait(self.poll_seconds)




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
