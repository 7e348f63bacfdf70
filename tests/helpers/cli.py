"""Running the command lines from tests.

``call_main`` runs a CLI's ``main(argv)`` in this process (env via monkeypatch, output via capsys): the
same argument parsing, commands, error rendering and exit codes as ``python -m PACKAGE``, without an
interpreter start and the imports of pandas, DuckDB and pandera per call. ``run_module`` starts
``python -m PACKAGE`` in a subprocess, for the tests where the process boundary is the point (the
``__main__`` entry point, exit codes as a shell sees them, a second process and the database lock).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tests.helpers.paths import REPO_ROOT


@dataclass(frozen=True)
class CliResult:
    """What a command printed and its exit code (the fields of ``subprocess.CompletedProcess`` tests read)."""

    returncode: int
    stdout: str
    stderr: str


def exit_code(stop: SystemExit) -> int:
    """The exit code the interpreter would report for ``stop`` (``sys.exit`` semantics)."""
    if stop.code is None:
        return 0
    return stop.code if isinstance(stop.code, int) else 1


def call_main(main: Callable[[list[str]], int], args: Sequence[object], capsys) -> CliResult:
    """``main(args)`` in this process; output read from pytest's ``capsys``. A ``SystemExit`` (argparse usage
    errors, ``--help``) becomes the exit code, as it would for ``python -m``."""
    capsys.readouterr()  # drop what the test printed before
    try:
        code = main([str(arg) for arg in args])
    except SystemExit as stop:
        code = exit_code(stop)
    out, err = capsys.readouterr()
    return CliResult(code, out, err)


def run_module(module: str, *args: object, env: dict[str, str] | None = None, timeout: float = 300) -> CliResult:
    """``python -m MODULE ARGS`` in a subprocess from the repo root; ``env`` is added to this process's
    environment (which the tests' autouse fixture has already pointed at a temp HRI_DB)."""
    proc = subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=REPO_ROOT,
                          env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=timeout)
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def run_register(*args: object) -> str:
    """``python -m register ARGS`` in this process, quietly (for setting up data); returns what it printed.
    Raises ``RuntimeError`` with its output when it exits non-zero."""
    import contextlib
    import io

    from register.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(arg) for arg in args])
    if code != 0:
        raise RuntimeError(f"python -m register {' '.join(map(str, args))} exited {code}:\n"
                           f"{out.getvalue()}{err.getvalue()}")
    return out.getvalue()
