"""A writer that takes its time: appends JSON Lines records to a file through one open handle, pausing.

``python -m tests.helpers.slow_writer PATH COUNT [--pause-every N] [--pause SECONDS] [--mid-line I ...]
[--hold-at I ...] [--control DIR]`` writes records ``w-0001`` .. ``w-COUNT`` (valid interchange records,
one per line) and flushes each write at once, as a logging process does. It pauses ``--pause`` seconds
after every ``--pause-every``-th record and in the middle of each ``--mid-line`` record (half the line
written, the pause, then the rest). At each ``--hold-at I`` (after record I, or after the first half of
record I when it is also a ``--mid-line``) it creates ``DIR/held-I`` and waits for ``DIR/go-I`` instead
of sleeping: a test decides exactly when the writer goes on. The handle stays open until the last
record is written. Used by the inbox tests (tests/register/ingest/test_inbox_writers.py).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def record(number: int) -> bytes:
    """Record ``number`` as one JSON Lines line (the tests compare against these)."""
    return (json.dumps({"response_id": f"w-{number:04d}", "use_case": "intake", "model": "m-1",
                        "claims": [{"labels": ["SUPPORTED"], "criticality": 1}]}) + "\n").encode()


def _hold(control: Path, number: int) -> None:
    (control / f"held-{number}").touch()
    go = control / f"go-{number}"
    deadline = time.monotonic() + 60
    while not go.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"slow_writer: nobody said go at {number}")
        time.sleep(0.005)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("path", type=Path)
    parser.add_argument("count", type=int)
    parser.add_argument("--pause-every", type=int, default=0)
    parser.add_argument("--pause", type=float, default=0.0)
    parser.add_argument("--mid-line", type=int, action="append", default=[])
    parser.add_argument("--hold-at", type=int, action="append", default=[])
    parser.add_argument("--control", type=Path)
    args = parser.parse_args()

    def wait(number: int) -> None:
        if number in args.hold_at:
            _hold(args.control, number)
        else:
            time.sleep(args.pause)

    with args.path.open("ab", buffering=0) as handle:
        for number in range(1, args.count + 1):
            line = record(number)
            if number in args.mid_line:
                handle.write(line[: len(line) // 2])
                wait(number)
                handle.write(line[len(line) // 2:])
            else:
                handle.write(line)
                if number in args.hold_at:
                    wait(number)
            if args.pause_every and number % args.pause_every == 0 and number < args.count:
                time.sleep(args.pause)


if __name__ == "__main__":
    main()
