"""The hand-off without a console: the listener (``register.cli.handoff_server``) in this process, on a test's store,
and the command line's client (``register.cli.handoff``) talking to it over the real socket. Who may use it, the
socket's life (stale, live, long paths), and how a handed command runs (paths, actor, output, refusals)."""

from __future__ import annotations

import io
import os
import socket
import threading
import time
from pathlib import Path

import pytest

from register.cli import handoff, handoff_server
from register.cli.common import HandedCommand
from register.cli.handoff import hand_off, socket_path
from register.cli.handoff_server import HandoffListener, ensure_listener, run_handed, stop_listener
from register.errors import HandoffFailed, RegisterError


@pytest.fixture
def listen(store):
    """``listen()``: a listener for the test's store (stopped at teardown); ``listen.asked`` counts the Store asked
    for, once per command carried out."""
    listeners: list[HandoffListener] = []
    asked: list[int] = []

    def get_store():
        asked.append(1)
        return store

    def start() -> HandoffListener:
        listeners.append(HandoffListener(store.path, get_store).start())
        return listeners[-1]

    start.asked = asked
    yield start
    for listener in listeners:
        listener.stop()
    stop_listener()


def _handed(store, *argv: str, cwd: Path | None = None, actor: str = "carol") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_handed(store, list(argv), HandedCommand(cwd or Path.cwd(), actor), out, err)
    return code, out.getvalue(), err.getvalue()


def _client(store, *argv: str) -> tuple[int | None, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = hand_off(store.path, list(argv), "carol", stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _dead_socket(path: Path) -> None:
    """A socket file nobody listens on: what a console killed with SIGKILL leaves behind."""
    path.parent.mkdir(mode=0o700, exist_ok=True)
    left = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    left.bind(str(path))
    left.close()


def test_the_owner_gets_the_commands_output_and_exit_code(store, listen):
    listener = listen()
    assert oct(os.stat(listener.path).st_mode & 0o777) == "0o600"
    assert oct(os.stat(listener.path.parent).st_mode & 0o777) == "0o700"
    code, out, err = _client(store, "status")
    assert (code, err) == (0, "") and out.startswith(f"database: {store.path}\nresponses: ")
    assert listen.asked == [1]


def test_a_command_line_of_another_user_is_refused(store, listen, monkeypatch):
    listen()
    monkeypatch.setattr(handoff_server, "peer_uid", lambda _connection: os.getuid() + 1)
    with pytest.raises(HandoffFailed, match="this console carries out commands only for the user it runs as"):
        _client(store, "users", "list")
    assert listen.asked == []  # refused before the console's Store was asked for


def test_a_socket_of_another_user_is_handed_nothing(store, listen, monkeypatch):
    listen()
    monkeypatch.setattr(handoff, "peer_uid", lambda _connection: os.getuid() + 1)
    with pytest.raises(HandoffFailed, match=r"runs as another user \(uid \d+\): the command was not handed to it"):
        _client(store, "users", "add", "mallory", "--role", "admin")
    time.sleep(0.2)
    assert listen.asked == []


def test_no_socket_or_a_dead_one_means_no_console(store, listen):
    assert _client(store, "status") == (None, "", "")
    _dead_socket(socket_path(store.path))
    assert _client(store, "status") == (None, "", "")  # connection refused: nobody to hand the command to
    listen()  # a new console replaces the dead socket
    code, out, _ = _client(store, "status")
    assert code == 0 and "responses: " in out


def test_a_live_socket_or_a_file_is_never_taken(store, tmp_path):
    path = socket_path(store.path)
    path.parent.mkdir(mode=0o700)
    other = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    other.bind(str(path))
    other.listen(1)
    try:
        with pytest.raises(RegisterError, match="another process listens at"):
            HandoffListener(store.path, lambda: store).start()
        assert path.exists()
    finally:
        other.close()
    path.unlink()
    path.write_text("not a socket")
    with pytest.raises(RegisterError, match="exists and is no socket"):
        HandoffListener(store.path, lambda: store).start()
    assert path.read_text() == "not a socket"
    assert ensure_listener(store.path, lambda: store) is None  # the console runs on, without the hand-off


def test_one_listener_per_process_and_its_socket_goes_with_it(store, tmp_path):
    first = ensure_listener(store.path, lambda: store)
    assert first is not None and ensure_listener(store.path, first.get_store) is first
    other = tmp_path / "other" / "other.duckdb"
    other.parent.mkdir()
    second = ensure_listener(other, lambda: store)
    assert second is not None and second is not first
    assert not socket_path(store.path).parent.exists() and socket_path(other).exists()
    stop_listener()
    assert not socket_path(other).parent.exists()


def test_a_database_path_longer_than_a_socket_address(store, tmp_path):
    deep = tmp_path.joinpath(*["a-folder-with-a-long-name"] * 5) / "register.duckdb"
    deep.parent.mkdir(parents=True)
    assert len(os.fsencode(socket_path(deep))) > 108
    listener = HandoffListener(deep, lambda: store).start()
    try:
        out = io.StringIO()
        assert hand_off(deep, ["users", "list"], "carol", stdout=out) == 0
    finally:
        listener.stop()
    assert not socket_path(deep).exists()


def test_paths_resolve_against_the_clients_directory_and_writes_act_as_its_user(store, tmp_path):
    client = tmp_path / "client"
    client.mkdir()
    code, out, _ = _handed(store, "export", "scores.csv", cwd=client)
    assert code == 0 and out == f"wrote 0 score row(s) to {client / 'scores.csv'}\n"
    assert (client / "scores.csv").exists() and not (Path.cwd() / "scores.csv").exists()
    assert _handed(store, "users", "add", "dave", "--role", "viewer", actor="carol")[0] == 0
    assert store.query("SELECT actor_name, actor_role FROM audit_events ORDER BY seq DESC LIMIT 1") == \
        [("carol", "system")]


def test_a_handed_commands_output_is_its_own(store, capsys):
    """Each thread's output goes where it belongs: the handed command's to its command line, the console's other
    threads' (the server's own prints) to the console's terminal, while the command runs."""
    stop = threading.Event()

    def console_prints() -> None:
        while not stop.is_set():
            print("the console's own line")
            time.sleep(0.001)

    printer = threading.Thread(target=console_prints)
    printer.start()
    try:
        code, out, err = _handed(store, "status")
        code_two, listed, _ = _handed(store, "quarantine", "list")
    finally:
        stop.set()
        printer.join()
    console_output = capsys.readouterr()
    assert (code, code_two) == (0, 0) and err == ""
    assert "the console's own" not in out + listed and out.startswith("database: ")
    assert "the console's own line" in console_output.out
    assert "database: " not in console_output.out and "open quarantine" not in console_output.err


def test_commands_with_nothing_to_hand_over_are_refused_and_usage_errors_exit_64(store):
    for argv in (["settings"], ["serve"]):
        code, out, err = _handed(store, *argv)
        assert (code, out) == (1, "")
        assert err == f"Not carried out by the console: `{argv[0]}` opens no database: it runs in the command line's " \
                      "own process, never the console's\n"
    code, _, err = _handed(store, "users", "frobnicate")
    assert code == 64 and "Usage error" in err


def test_a_command_asking_at_a_terminal_is_refused_and_one_reading_it_gets_a_clear_error(store, monkeypatch):
    from register.cli import build_parser, users

    def interactive_parser():
        parser = build_parser()
        parser.set_defaults(interactive=True)  # what a command that asks questions at a terminal declares
        return parser

    monkeypatch.setattr(handoff_server, "build_parser", interactive_parser)
    code, out, err = _handed(store, "users", "list")
    assert (code, out) == (1, "") and "`users` asks its questions at a terminal" in err
    monkeypatch.setattr(handoff_server, "build_parser", build_parser)  # (undo() would undo the test's HRI_* too)

    monkeypatch.setattr(users, "cmd_users_list", lambda _store, _args: print(input("whose? ")) or 0)
    code, _, err = _handed(store, "users", "list")
    assert code == 1
    assert err == "Not carried out by the console: the command reads from the terminal, which the console's " \
                  "process, carrying it out, does not have\n"
