"""The hand-off: a command line whose database the running console holds asks the console's process to carry the
command out, and prints what it writes as it writes it. This module is the protocol and the command line's side;
the console's side is ``register.cli.handoff_server``.

Only the database's owner can use it. The console listens on a Unix domain socket in a folder of its own beside the
database file (``<database>.handoff/socket``; the folder 0700, the socket 0600), and each side checks the other's
user id (``SO_PEERCRED``): the console refuses a command line of another user, and a command line refuses to hand
its command to a socket some other user put there.

The protocol is JSON, one object a line. The command line sends one request, ``{"protocol", "argv", "cwd",
"actor", "database"}``: its arguments (as given), its working directory (relative paths name files there), its
acting user (``HRI_ACTOR`` or the login name) and the database file it means. The console answers with any number
of ``{"out": text}`` and ``{"err": text}`` (stdout and stderr, a line or more at a time, as the command writes
them), then ``{"exit": code}``; or ``{"refused": why}`` when it will not run the command. The command line keeps
its end open while the command runs: closing it (Ctrl+C) tells the console to stop the command at its next line of
output.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from register.cli.common import EXIT_FAILED
from register.errors import HandoffFailed

__all__ = ["MAX_REQUEST_BYTES", "PROTOCOL", "handoff_folder", "hand_off", "peer_uid", "read_message", "send_message",
           "refusal", "socket_path", "unix_address"]

PROTOCOL = 1
MAX_REQUEST_BYTES = 1 << 20   # a request is a command line: a megabyte is far beyond any
_MAX_ADDRESS_BYTES = 107      # sun_path holds 108 bytes with the terminating NUL
_CONNECT_TIMEOUT = 5.0        # a console that accepts nothing in this time is stuck; the command line says so
_INTERRUPTED = ("Interrupted: this command line stopped waiting. The console stops the command at its next line of "
                "output (an import after its current chunk: what it committed is kept, see `python -m register "
                "status`); a command that prints nothing before its end runs to its end. The console itself runs on.")


def handoff_folder(database: Path) -> Path:
    """The folder of the console's socket: ``<database file>.handoff`` beside it (the file's real path, so that
    every spelling of it, relative or through a link, finds the same socket)."""
    resolved = Path(database).resolve()
    return resolved.with_name(resolved.name + ".handoff")


def socket_path(database: Path) -> Path:
    """Where the console of ``database`` listens."""
    return handoff_folder(database) / "socket"


@contextlib.contextmanager
def unix_address(path: Path) -> Iterator[str]:
    """The address to bind or connect to ``path``: the path itself, or, when it is longer than a Unix socket address
    may be, the same file reached through a descriptor of its folder (``/proc/self/fd/N/socket``, Linux)."""
    if len(os.fsencode(path)) <= _MAX_ADDRESS_BYTES:
        yield str(path)
        return
    folder = os.open(path.parent, os.O_PATH | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{folder}/{path.name}"
    finally:
        os.close(folder)


def peer_uid(connection: socket.socket) -> int:
    """The user id of the process at the other end of a Unix socket (``SO_PEERCRED``: pid, uid, gid)."""
    credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", credentials)[1]


def send_message(connection: socket.socket, message: dict[str, Any]) -> None:
    """One message: a JSON object on a line of its own."""
    connection.sendall(json.dumps(message).encode("utf-8") + b"\n")


def read_message(stream, limit: int = MAX_REQUEST_BYTES) -> dict[str, Any] | None:
    """The next message from ``stream`` (a binary file of the socket), None at its end; a ``ValueError`` for a line
    that is no JSON object or longer than ``limit``."""
    line = stream.readline(limit + 1)
    if not line:
        return None
    if len(line) > limit or not line.endswith(b"\n"):
        raise ValueError(f"a message longer than {limit:,} bytes, or cut short")
    message = json.loads(line)
    if not isinstance(message, dict):
        raise ValueError("a message is a JSON object")
    return message


def refusal(args) -> str | None:
    """Why the console's process would not carry out this parsed command, or None when it would. A command that opens
    no database (``serve``, ``settings``, ``judge``) has nothing to hand over: it runs where it is typed. One that
    asks its questions at the terminal (its parser's defaults say ``interactive=True``) cannot, as the console's
    process has no terminal of the command line's."""
    command = getattr(args, "command", "this command")
    if not getattr(args, "needs_store", True):
        return f"`{command}` opens no database: it runs in the command line's own process, never the console's"
    if getattr(args, "interactive", False):
        return (f"`{command}` asks its questions at a terminal, and the console's process, which would carry it out, "
                "has none")
    return None


def hand_off(database: Path, argv: list[str], actor: str, *, stdout: TextIO | None = None,
             stderr: TextIO | None = None) -> int | None:
    """Have the console that holds ``database`` run ``python -m register ARGV``, printing its output as it comes;
    returns the command's exit code, or None when no console listens (no socket, or one left by a stopped console).

    Raises ``HandoffFailed`` when the console refuses the command or its process ends before the command does, or
    when the socket belongs to another user (this command line then hands nothing over).
    """
    path = socket_path(database)
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.settimeout(_CONNECT_TIMEOUT)
        try:
            with unix_address(path) as address:
                connection.connect(address)
        except (FileNotFoundError, ConnectionRefusedError, NotADirectoryError):
            return None  # no console, or the socket of one that was killed: nobody to hand the command to
        except OSError as error:
            raise HandoffFailed(f"the console's socket {path} did not answer ({error})") from error
        owner = peer_uid(connection)
        if owner != os.getuid():
            raise HandoffFailed(f"the process listening at {path} runs as another user (uid {owner}): the command "
                                "was not handed to it")
        connection.settimeout(None)  # a command may print nothing for minutes (a rescore)
        # the console may answer and close before reading (a refusal): its answer is still read below
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            send_message(connection, {"protocol": PROTOCOL, "argv": list(argv), "cwd": os.getcwd(), "actor": actor,
                                      "database": str(Path(database).resolve())})
        return _relay(connection, stdout or sys.stdout, stderr or sys.stderr)
    except KeyboardInterrupt:
        print(_INTERRUPTED, file=stderr or sys.stderr)
        return EXIT_FAILED
    finally:
        connection.close()  # the console's end sees it: a command still running stops at its next line of output


def _relay(connection: socket.socket, stdout: TextIO, stderr: TextIO) -> int:
    """Print the console's messages until the exit code."""
    with connection.makefile("rb") as stream:
        while True:
            try:
                message = read_message(stream, limit=1 << 62)  # output is not bounded: a long export can print much
            except (OSError, ValueError) as error:
                raise HandoffFailed(f"the console's answer could not be read ({error})") from error
            if message is None:
                raise HandoffFailed("the console's process ended before the command did (see its log); what the "
                                    "command committed before is kept (see `python -m register status`)")
            if "out" in message:
                stdout.write(message["out"])
                stdout.flush()
            elif "err" in message:
                stderr.write(message["err"])
                stderr.flush()
            elif "exit" in message:
                return int(message["exit"])
            elif "refused" in message:
                raise HandoffFailed(str(message["refused"]))
