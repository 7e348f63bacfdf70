"""What the inbox may take, and when: entries judged by ``lstat``, files that have stopped changing, writers.

Called by ``register.ingest.inbox`` (the watcher) and ``register.ingest.inbox_claims`` (a taken file).
Nothing here follows a link or opens anything but a regular file:

- ``refusal(stat)``: why an entry is never read (``register.ingest.regular_files``, shared with ``import``).
- ``Settling``: an entry is taken only once its ``lstat`` (inode, size, modification and change time,
  number of names) has stayed the same for the settle interval (``HRI_INBOX_SETTLE_SECONDS``).
- ``open_for_writing(paths)``: which of the files a process holds open for writing (Linux: ``/proc/*/fd``
  and the flags in ``/proc/*/fdinfo``; only processes this one may inspect -- those of its user). A file
  being written through an open handle is not taken, however long its writer pauses.
- ``open_regular(path)``: an open descriptor of a regular file, never through a link (``regular_files``).
- ``lock_claim(folder)``: the lock a process holds on a claimed file's folder while it works on it
  (``flock``: released when the process ends, so a claim of a process that stopped can be taken up).
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from register.ingest.regular_files import open_regular, refusal

__all__ = ["LOCK_NAME", "ClaimLock", "Settling", "StatKey", "lock_claim", "open_for_writing", "open_regular",
           "refusal", "stat_key"]

LOCK_NAME = ".lock"
PROC = Path("/proc")

StatKey = tuple[int, int, int, int, int, int, int]


def stat_key(info: os.stat_result) -> StatKey:
    """What must stay the same for an entry to count as unchanged: a new inode (replaced), size, modification
    time, change time (links added or removed, mode changed) and type."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_nlink,
            stat.S_IFMT(info.st_mode))


@dataclass
class Settling:
    """When each entry was last seen to change; ``settled`` says whether it has held still long enough."""

    seconds: float
    _seen: dict[str, tuple[StatKey, float]] = field(default_factory=dict)

    def settled(self, name: str, info: os.stat_result, now: float | None = None) -> bool:
        """True once ``name`` has shown the same ``lstat`` for ``seconds`` (with 0: at two looks in a row)."""
        now = time.monotonic() if now is None else now
        key = stat_key(info)
        seen = self._seen.get(name)
        if seen is None or seen[0] != key:
            self._seen[name] = (key, now)
            return False
        return now - seen[1] >= self.seconds

    def since(self, name: str) -> float:
        """When ``name`` was first seen as it is now (monotonic time)."""
        return self._seen[name][1]

    def forget_all_but(self, names: Iterable[str]) -> None:
        """Drop what is remembered of entries no longer there."""
        keep = set(names)
        self._seen = {name: seen for name, seen in self._seen.items() if name in keep}


def open_for_writing(paths: Iterable[Path]) -> set[Path]:
    """The ones of ``paths`` (regular files) that a process this one may inspect holds open for writing.

    Reads ``/proc/<pid>/fd`` (where the link names the open file's current path) and, for a match, the
    access mode in ``/proc/<pid>/fdinfo/<fd>``. Processes of other users cannot be inspected, and without
    ``/proc`` (not Linux) nothing is found: the settle interval alone then says a file is done.
    """
    wanted = {os.path.realpath(path): path for path in paths}
    if not wanted or not PROC.is_dir():
        return set()
    found: set[Path] = set()
    for pid in os.listdir(PROC):
        if not pid.isdigit():
            continue
        fd_folder = PROC / pid / "fd"
        try:
            descriptors = os.listdir(fd_folder)
        except OSError:  # another user's process, or it has ended
            continue
        for fd in descriptors:
            try:
                target = os.readlink(fd_folder / fd)
            except OSError:
                continue
            if target in wanted and _writable(PROC / pid / "fdinfo" / fd):
                found.add(wanted[target])
    return found


def _writable(fdinfo: Path) -> bool:
    try:
        text = fdinfo.read_text()
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("flags:"):
            return (int(line.split()[1], 8) & os.O_ACCMODE) in (os.O_WRONLY, os.O_RDWR)
    return False


@dataclass
class ClaimLock:
    """An exclusive ``flock`` on a claimed file's folder: held while this process works on the claim.
    ``exclusive`` is False where the file system has no locks (the claim is then guarded within this
    process only, as it was before locks were used)."""

    fd: int
    exclusive: bool = True

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing the descriptor releases the lock
            self.fd = -1


def lock_claim(folder: Path) -> ClaimLock | None:
    """The lock of a claim folder, or None when another process (or another watcher here) holds it, or the
    folder is not one to lock in (a link planted in ``.claimed/``, say)."""
    try:
        fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            os.close(fd)
            return None
        return ClaimLock(fd, exclusive=False)  # ENOLCK, EINVAL, ENOTSUP: a file system without locks
    return ClaimLock(fd)
