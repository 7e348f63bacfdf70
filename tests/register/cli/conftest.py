"""A running console for the hand-off tests: ``python -m register serve`` on a copy of a template database, in a
process of its own, holding the file as the console does; and a runner of ``python -m register`` in another process
(the client), from any working directory."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from register.cli.handoff import socket_path
from tests.helpers.cli import CliResult
from tests.helpers.paths import REPO_ROOT

CONSOLE_TEMPLATE = "demo50-accounts"  # the demo set with 50 synthetic answers and the accounts test-<role>


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def client_environment(env: dict[str, str] | None = None) -> dict[str, str]:
    """A command line's environment: this process's (the test's HRI_* settings), the repository importable from any
    working directory, plus ``env``."""
    return {**os.environ, "PYTHONPATH": str(REPO_ROOT), **(env or {})}


def register_in_process(db: Path, *args: object, cwd: Path = REPO_ROOT, env: dict[str, str] | None = None,
                        timeout: float = 300) -> CliResult:
    """``python -m register --db DB ARGS`` in a process of its own, from ``cwd``."""
    proc = subprocess.run([sys.executable, "-m", "register", "--db", str(db), *map(str, args)], cwd=cwd,
                          env=client_environment(env), capture_output=True, text=True, timeout=timeout)
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


@dataclass
class Console:
    """A console serving ``db``; ``run(*args, cwd=, env=)`` is ``python -m register --db DB ARGS`` beside it."""

    db: Path
    url: str
    log: Path
    proc: subprocess.Popen

    def run(self, *args: object, cwd: Path = REPO_ROOT, env: dict[str, str] | None = None) -> CliResult:
        return register_in_process(self.db, *args, cwd=cwd, env=env)

    def popen(self, *args: object, cwd: Path = REPO_ROOT, env: dict[str, str] | None = None) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "register", "--db", str(self.db), *map(str, args)], cwd=cwd,
                                env=client_environment(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)


def _wait_until_holding(console: Console, deadline: float) -> None:
    """Until the console holds the database and listens: its API's health route opens the console's Store, which
    starts the listener."""
    while time.time() < deadline:
        if console.proc.poll() is not None:
            break
        try:
            with urllib.request.urlopen(console.url + "/api/v1/health", timeout=5) as answer:
                if answer.status == 200 and socket_path(console.db).exists():
                    return
        except OSError:
            pass
        time.sleep(0.3)
    console.proc.terminate()
    raise RuntimeError("the console did not start: " + console.log.read_text())


@pytest.fixture(scope="module")
def running_console(tmp_path_factory, database_templates):
    """One console per test module (``python -m register serve``, warm-up off), on a copy of CONSOLE_TEMPLATE; its
    tests must not change what the module's other tests read. Stopped (SIGTERM) at the end of the module, when its
    socket must have gone with it."""
    folder = tmp_path_factory.mktemp("console")
    db = database_templates.copy(CONSOLE_TEMPLATE, folder / "console.duckdb")
    port = _free_port()
    log = folder / "console.log"
    environment = {name: value for name, value in os.environ.items() if not name.startswith("HRI_")}
    environment.update({"HRI_CONSOLE_WARMUP": "0", "XDG_STATE_HOME": str(folder.with_name(folder.name + "-state"))})
    with open(log, "w") as output:
        proc = subprocess.Popen([sys.executable, "-m", "register", "--db", str(db), "serve", "--port", str(port)],
                                cwd=REPO_ROOT, env=environment, stdout=output, stderr=subprocess.STDOUT)
    running = Console(db=db, url=f"http://127.0.0.1:{port}", log=log, proc=proc)
    _wait_until_holding(running, time.time() + 120)
    yield running
    proc.terminate()
    proc.wait(timeout=30)
    assert not socket_path(db).parent.exists(), "the console left its hand-off socket behind"
