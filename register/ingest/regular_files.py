"""Judging and opening a file to import without following a link: one helper for ``import`` and the inbox.

Called by ``register.ingest.files`` (a folder named to ``import``: which entries it may read, and every read of a
file of an import), ``register.ingest.readers`` and ``register.ingest.rag_files`` (the reads), and
``register.ingest.inbox_entries`` / ``inbox_claims`` (the inbox's entries):

- ``refusal(stat)``: why an entry (by its ``lstat``) is never read -- a symbolic link (whatever it points at), a
  folder, a FIFO, a socket, a device, or a file with more than one name (a hard link: its other name may be a file
  elsewhere, such as the register's own audit keyring). None for a regular file with one name.
- ``open_regular(path)``: a read-only descriptor of a regular file, opened with ``O_NOFOLLOW`` and ``O_NONBLOCK``
  (a link swapped in after the entry was judged is refused, a FIFO never blocks) and checked with ``fstat``.
- ``open_file(path, ...)``: the same, as a Python file object (binary or text).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import IO, Any

from register.errors import ImportRejected

__all__ = ["LINK", "open_file", "open_regular", "refusal"]

LINK = "a symbolic link (links are not followed)"


def refusal(info: os.stat_result, *, one_name: bool = True) -> str | None:
    """Why an entry (by its ``lstat``) is refused unread, or None for a regular file (with one name, unless
    ``one_name`` is False)."""
    mode = info.st_mode
    if stat.S_ISLNK(mode):
        return LINK
    if stat.S_ISDIR(mode):
        return "a folder (folders are not imported: drop their files one by one)"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if not stat.S_ISREG(mode):
        return "not a regular file"
    if one_name and info.st_nlink > 1:
        return (f"a hard link (the file has {info.st_nlink} names; its other name may be a file outside the "
                "folder): copy the file in instead")
    return None


def open_regular(path: Path, expected: os.stat_result | None = None, *, one_name: bool = True) -> int:
    """A read-only descriptor of ``path`` if it is a regular file (with one name, unless ``one_name`` is False; given
    ``expected``, the same inode); ``ImportRejected`` naming what it is otherwise. Judged by ``lstat`` before it is
    opened; the open itself uses ``O_NOFOLLOW`` (a link swapped in meanwhile is not followed) and ``O_NONBLOCK`` (a
    FIFO swapped in never waits for a writer), and ``fstat`` confirms it is the file judged."""
    try:
        before = os.lstat(path)
    except FileNotFoundError as error:
        raise ImportRejected(f"{Path(path).name}: no such file") from error
    problem = refusal(before, one_name=one_name)
    if problem is None:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as error:
            if error.errno != errno.ELOOP:
                raise
            problem = LINK
        else:
            info = os.fstat(fd)
            problem = refusal(info, one_name=one_name)
            expected = expected or before
            if problem is None and (info.st_dev, info.st_ino) != (expected.st_dev, expected.st_ino):
                problem = "replaced by another file while it was being taken"
            if problem is None:
                return fd
            os.close(fd)
    raise ImportRejected(f"{Path(path).name} is {problem}: refused unread")


def open_file(path: Path, mode: str = "rb", **text: Any) -> IO[Any]:
    """``path`` opened for reading as ``open_regular`` opens it (never through a link), as a file object; ``text``:
    ``encoding``, ``errors``, ``newline`` for a text mode. A file of an import may have other names (the person
    importing chose it), so only links and what is not a regular file are refused here."""
    fd = open_regular(path, one_name=False)
    try:
        return os.fdopen(fd, mode, **text)
    except BaseException:
        os.close(fd)
        raise
