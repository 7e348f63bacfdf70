"""The console's end of the hand-off (``register.cli.handoff``): a thread listening on the socket beside the
database, and the runner that carries out each command handed to it with ``register.cli``'s own code against the
console's Store.

The console starts it (``ui.framework.data.get_store``: where the console's process opens the database, so that it
listens whenever it holds the file) with ``ensure_listener``: one listener per process, for the database that
process holds, removed when the process exits. The Store is not the listener's: it asks the console for it
(``get_store``) at each command.

Each command runs in a thread of its own, the output it writes to ``sys.stdout`` and ``sys.stderr`` sent to its
command line as it is written. The process's standard streams are replaced once by routers that send a thread's
writes to its command line while it runs a handed command, and everything else where it went before: the console's
own prints and logs stay in its terminal. A command line that goes away (Ctrl+C) stops its command at the command's
next line of output (``ClientGone``, raised there like an interrupt: the write under way is rolled back whole).
"""

from __future__ import annotations

import atexit
import contextlib
import io
import logging
import os
import socket
import stat
import sys
import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from register.cli import build_parser, run_with_store
from register.cli.common import EXIT_FAILED, HANDED, HandedCommand, render_error
from register.cli.handoff import (
    PROTOCOL,
    peer_uid,
    read_message,
    refusal,
    send_message,
    socket_path,
    unix_address,
)
from register.db.store import Store
from register.errors import HandoffFailed, RegisterError

__all__ = ["ClientGone", "HandoffListener", "ensure_listener", "route_standard_streams", "run_handed",
           "stop_listener"]

log = logging.getLogger(__name__)

_REQUEST_TIMEOUT = 10.0  # seconds a command line may take to send its request once connected
_SEND_TIMEOUT = 60.0     # seconds a command line may leave its output unread before the console gives up on it
_BUFFERED = 1 << 16      # characters of output kept before they are sent without waiting for the end of the line


class ClientGone(BaseException):  # noqa: N818 - raised like KeyboardInterrupt, which it stands for
    """The command line of a handed command went away (Ctrl+C, or it was killed): its command stops where it is.

    A ``BaseException``, as ``KeyboardInterrupt`` is, so that no command's ``except Exception`` carries on after it;
    ``Store.write`` rolls back the transaction under way."""


# --- output: each handed command's streams, the console's own untouched ------------------------------------------

_OUTPUT: ContextVar[dict[str, Any] | None] = ContextVar("hri_handed_output", default=None)
_ROUTING_LOCK = threading.Lock()


class _Router:
    """``sys.stdout``, ``sys.stderr`` or ``sys.stdin`` of the console's process: the handed command's stream in a
    thread that runs one, else the stream it replaced."""

    def __init__(self, name: str, replaced: Any):
        self._name = name
        self._replaced = replaced

    def _target(self) -> Any:
        streams = _OUTPUT.get()
        return self._replaced if streams is None else streams[self._name]

    def write(self, text: str) -> int:
        return self._target().write(text)

    def flush(self) -> None:
        self._target().flush()

    def __getattr__(self, name: str) -> Any:  # readline, isatty, encoding, fileno, buffer, ...
        return getattr(self._target(), name)


def route_standard_streams() -> None:
    """Put the routers in place of ``sys.stdout``, ``sys.stderr`` and ``sys.stdin`` (again, if something replaced
    them since): idempotent, and a no-op for everything outside a handed command."""
    with _ROUTING_LOCK:
        for name in ("stdout", "stderr", "stdin"):
            current = getattr(sys, name)
            if not isinstance(current, _Router):
                setattr(sys, name, _Router(name, current))


class _NoTerminal(io.TextIOBase):
    """A handed command's ``sys.stdin``: the console's process has no terminal of the command line's to read."""

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> str:
        raise HandoffFailed("the command reads from the terminal, which the console's process, carrying it out, does "
                            "not have")

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        return self.read()


class _Connection:
    """The socket to one command line: messages sent whole, one at a time, from whichever of its streams."""

    def __init__(self, connection: socket.socket):
        self._connection = connection
        self._lock = threading.Lock()
        self.gone = False

    def send(self, message: dict[str, Any]) -> None:
        with self._lock:
            if self.gone:
                raise ClientGone
            try:
                send_message(self._connection, message)
            except OSError as error:  # EPIPE: closed; a timeout: left unread for _SEND_TIMEOUT
                self.gone = True
                raise ClientGone from error


class _ClientStream(io.TextIOBase):
    """stdout or stderr of a handed command: sent line by line (or when a long line fills the buffer) as written."""

    def __init__(self, connection: _Connection, key: str):
        self._connection = connection
        self._key = key
        self._parts: list[str] = []
        self._size = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._parts.append(text)
        self._size += len(text)
        if "\n" in text or self._size >= _BUFFERED:
            self.flush()
        return len(text)

    def flush(self) -> None:
        if self._parts:
            text = "".join(self._parts)
            self._parts, self._size = [], 0
            self._connection.send({self._key: text})

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"


# --- the runner -----------------------------------------------------------------------------------------------


def run_handed(store: Store, argv: list[str], handed: HandedCommand, stdout: io.TextIOBase,
               stderr: io.TextIOBase) -> int:
    """``python -m register ARGV`` against ``store`` in this thread, as the command line ``handed`` describes (its
    working directory for relative paths, its acting user), writing to ``stdout`` and ``stderr``; returns the exit
    code ``main`` would. Usage errors exit 64; a command that opens no database or asks at a terminal is refused."""
    route_standard_streams()
    handed_token = HANDED.set(handed)
    output_token = _OUTPUT.set({"stdout": stdout, "stderr": stderr, "stdin": _NoTerminal()})
    try:
        try:
            args = build_parser().parse_args(argv)  # the path arguments resolve against handed.cwd here
            why = refusal(args)
            if why is not None:
                render_error(HandoffFailed(why))
                return EXIT_FAILED
            return run_with_store(store, args)
        except SystemExit as stop:  # argparse: a usage error (64) or --help (0)
            if stop.code is None or isinstance(stop.code, int):
                return stop.code or 0
            print(stop.code, file=sys.stderr)
            return EXIT_FAILED
    finally:
        with contextlib.suppress(ClientGone):  # what is left of a last line without its newline
            stdout.flush()
            stderr.flush()
        _OUTPUT.reset(output_token)
        HANDED.reset(handed_token)


def _audit_head(store: Store) -> Any:
    """The newest audit event's number: every write records one, so a command that changed it wrote."""
    return store.scalar("SELECT max(seq) FROM audit_events")


# --- the listener ---------------------------------------------------------------------------------------------


class HandoffListener:
    """The thread that accepts command lines on ``socket_path(database)`` and runs each command in a thread of its
    own against ``get_store()``; ``on_write()`` after each command that wrote (the console clears its caches)."""

    def __init__(self, database: Path, get_store: Callable[[], Store], *, on_write: Callable[[], None] | None = None):
        self.database = Path(database).resolve()
        self.path = socket_path(self.database)
        self.get_store = get_store
        self.on_write = on_write
        self._socket: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._bound: tuple[int, int] | None = None  # (device, inode) of the socket file this listener made
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> HandoffListener:
        """Listen (replacing a socket left by a console that was killed); raises ``RegisterError`` when it cannot."""
        with self._lock:
            if not self.running:
                self._socket = self._bind()
                self._thread = threading.Thread(target=self._accept, args=(self._socket,), daemon=True,
                                                name=f"hri-handoff:{self.database.name}")
                self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and remove the socket (commands under way run to their end)."""
        with self._lock:
            listening, self._socket = self._socket, None
            if listening is not None:
                with contextlib.suppress(OSError):
                    listening.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
                listening.close()
            if self._thread is not None:
                self._thread.join(timeout=5)
                self._thread = None
            self._remove_socket()

    def _bind(self) -> socket.socket:
        folder = self.path.parent
        _private_folder(folder)
        _clear_stale(self.path)
        listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with unix_address(self.path) as address:
                listening.bind(address)
            os.chmod(self.path, 0o600)  # the folder is 0700 already: belt and braces
            listening.listen(16)
        except OSError as error:
            listening.close()
            raise RegisterError(f"cannot listen at {self.path}: {error}") from error
        info = os.stat(self.path)
        self._bound = (info.st_dev, info.st_ino)
        return listening

    def _remove_socket(self) -> None:
        """Remove the socket file if it is still the one this listener made (not a later console's)."""
        with contextlib.suppress(OSError):
            info = os.lstat(self.path)
            if (info.st_dev, info.st_ino) == self._bound:
                os.unlink(self.path)
                self.path.parent.rmdir()  # left when something else was put there
        self._bound = None

    def _accept(self, listening: socket.socket) -> None:
        while True:
            try:
                connection, _ = listening.accept()
            except OSError:
                if self._socket is not listening:  # stopped
                    return
                log.exception("hand-off: accepting a command line failed")
                time.sleep(0.5)  # e.g. out of file descriptors: not a busy loop
                continue
            threading.Thread(target=self._serve, args=(connection,), daemon=True, name="hri-handoff-command").start()

    def _serve(self, connection: socket.socket) -> None:
        """One command line: who it is, its request, its command's output and exit code."""
        with connection:
            try:
                uid = peer_uid(connection)
                if uid != os.getuid():
                    log.warning("hand-off: refused a command line of user id %s (the console runs as %s)", uid,
                                os.getuid())
                    send_message(connection, {"refused": "this console carries out commands only for the user it "
                                                         "runs as"})
                    return
                connection.settimeout(_REQUEST_TIMEOUT)
                with connection.makefile("rb") as stream:
                    request = read_message(stream)
                problem = self._problem(request)
                if problem is not None:
                    send_message(connection, {"refused": problem})
                    return
                assert request is not None
                connection.settimeout(_SEND_TIMEOUT)
                channel = _Connection(connection)
                code = self._run(request, channel)
                channel.send({"exit": code})
            except ClientGone:
                log.info("hand-off: the command line went away; its command stopped at its next line of output")
            except (OSError, ValueError) as error:  # a request not sent in time, cut short or no JSON object
                log.info("hand-off: a command line's request could not be read: %s", error)
            except Exception:  # noqa: BLE001 - one command line's failure must not end the listener or the console
                log.exception("hand-off: a command line's request failed")

    def _problem(self, request: dict[str, Any] | None) -> str | None:
        """What is wrong with a request, or None."""
        if request is None:
            return "no request"
        if request.get("protocol") != PROTOCOL:
            return (f"this console speaks hand-off protocol {PROTOCOL}, the command line {request.get('protocol')}: "
                    "use the same version of the register for both")
        argv, cwd, actor = request.get("argv"), request.get("cwd"), request.get("actor")
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            return "argv: a list of strings"
        if not isinstance(cwd, str) or not os.path.isabs(cwd):
            return "cwd: an absolute path"
        if not isinstance(actor, str) or not actor.strip():
            return "actor: a name"
        if Path(str(request.get("database"))).resolve() != self.database:
            return f"this console holds {self.database}, not {request.get('database')}"
        return None

    def _run(self, request: dict[str, Any], channel: _Connection) -> int:
        store = self.get_store()
        before = _audit_head(store)
        started = time.perf_counter()
        argv = request["argv"]
        try:
            return run_handed(store, argv, HandedCommand(Path(request["cwd"]), request["actor"]),
                              _ClientStream(channel, "out"), _ClientStream(channel, "err"))
        finally:
            log.info("hand-off: python -m register %s for %s in %.2f s", " ".join(argv), request["actor"],
                     time.perf_counter() - started)
            if self.on_write is not None and _audit_head(store) != before:
                self.on_write()


def _private_folder(folder: Path) -> None:
    """The socket's folder, 0700 and this user's (made if missing); refuses a folder of another user or a link."""
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise RegisterError(f"{folder} is not a folder of this user: the console does not listen there")
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(folder, 0o700)


def _clear_stale(path: Path) -> None:
    """Remove a socket no process listens on any more (its console was killed); refuse to take a live one, or to
    remove anything that is not a socket."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(info.st_mode):
        raise RegisterError(f"{path} exists and is no socket: the console does not listen there")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(2.0)
    try:
        with unix_address(path) as address:
            probe.connect(address)
    except ConnectionRefusedError:
        os.unlink(path)
        log.info("hand-off: replaced %s, left by a console that stopped without removing it", path)
        return
    finally:
        probe.close()
    raise RegisterError(f"another process listens at {path}: this console does not take its place")


# --- one listener per process ----------------------------------------------------------------------------------

_LISTENER: HandoffListener | None = None
_LISTENER_LOCK = threading.Lock()


def ensure_listener(database: Path, get_store: Callable[[], Store], *,
                    on_write: Callable[[], None] | None = None) -> HandoffListener | None:
    """This process's listener for ``database``, started if it is not running (one per process: a listener of
    another database is stopped first); None, with the reason in the log, when it cannot listen -- the console runs
    on without the hand-off."""
    global _LISTENER
    resolved = Path(database).resolve()
    with _LISTENER_LOCK:
        if _LISTENER is not None and (_LISTENER.database != resolved or _LISTENER.get_store is not get_store
                                      or not _LISTENER.running):
            _LISTENER.stop()
            _LISTENER = None
        if _LISTENER is None:
            try:
                _LISTENER = HandoffListener(resolved, get_store, on_write=on_write).start()
            except (RegisterError, OSError) as error:
                log.warning("hand-off: commands of `python -m register` cannot be handed to this console: %s", error)
                return None
        return _LISTENER


def stop_listener() -> None:
    """Stop this process's listener and remove its socket (at exit; tests)."""
    global _LISTENER
    with _LISTENER_LOCK:
        if _LISTENER is not None:
            _LISTENER.stop()
            _LISTENER = None


atexit.register(stop_listener)
