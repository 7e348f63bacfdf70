"""A stand-in for the running console in another process: holds the database and watches its inbox.

``python -m tests.helpers.console_holder DB INBOX POLL_SECONDS`` opens the database read-write (so any
other process gets ``DatabaseInUse``), starts the inbox watcher (unless POLL_SECONDS is 0), prints ``ready``
and runs until its stdin closes. Used by the tests of ``python -m register import --via-inbox``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from register import SYSTEM, Store
from register.ingest.inbox import start_watcher
from register.scoring.profiles import ensure_default_profile


def main(database: str, inbox: str, poll_seconds: str) -> None:
    store = Store(database)
    ensure_default_profile(store, SYSTEM)
    watcher = None
    if float(poll_seconds) > 0:  # 0: hold the database, watch nothing (as HRI_INBOX_POLL_SECONDS=0)
        watcher = start_watcher(store, Path(inbox), poll_seconds=float(poll_seconds))
        watcher.poll_once()  # the heartbeat is there before "ready"
    print("ready", flush=True)
    sys.stdin.read()
    if watcher is not None:
        watcher.stop()
    store.close()


if __name__ == "__main__":
    main(*sys.argv[1:4])
