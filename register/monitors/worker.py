"""Who runs the checks and the deliveries: the console's background worker, and the end of a command.

* ``MonitorWorker``: one thread per process and store (``start_worker``), started by the console
  (``ui.features.monitors.ensure_monitor_worker``, like the inbox watcher). Every ``HRI_MONITOR_POLL_SECONDS`` it
  checks (``register.monitors.check.check``: nothing to do, two small reads, unless score runs were committed since
  the last check) and delivers what is due (``register.monitors.outbox.deliver_due``). A failure is logged and the
  next round tries again: the worker never stops the console, and nothing it does is part of another write.
* ``after_command``: the same round once, at the end of a command of ``python -m register`` that opened the
  database, so that runs scored while the console is stopped are checked and their alerts sent; an attempt that
  fails stays in the outbox for a later round (the console's, or the next command's). It never changes the
  command's outcome: a failure is printed as a warning.
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import Any, TextIO

from register.db.store import Store
from register.monitors.check import MONITOR_ACTOR, CheckResult, check
from register.monitors.outbox import DeliveryPolicy, deliver_due

__all__ = ["MonitorWorker", "after_command", "run_round", "start_worker"]

log = logging.getLogger(__name__)

_WORKERS: dict[int, MonitorWorker] = {}  # the running worker of each store (by identity) in this process
_WORKERS_LOCK = threading.Lock()


def run_round(store: Store, *, policy: DeliveryPolicy | None = None,
              budget_seconds: float | None = None) -> tuple[CheckResult | None, list[dict[str, Any]]]:
    """One check (if score runs are new) and one attempt of each delivery due, as ``MONITOR_ACTOR``."""
    result = check(store, MONITOR_ACTOR)
    attempts = deliver_due(store, MONITOR_ACTOR, policy=policy, budget_seconds=budget_seconds)
    return result, attempts


class MonitorWorker:
    """A thread running ``run_round`` every ``poll_seconds`` until ``stop``; ``wake`` runs a round now."""

    def __init__(self, store: Store, *, poll_seconds: float, policy: DeliveryPolicy | None = None):
        if poll_seconds <= 0:
            raise ValueError(f"poll_seconds must be > 0, got {poll_seconds}")
        self.store = store
        self.poll_seconds = poll_seconds
        self.policy = policy
        self.rounds = 0
        self.last_error: str | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> MonitorWorker:
        if not self.running:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="hri-monitors", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def wake(self) -> None:
        """Run a round now rather than at the next poll (after a write the caller knows scored)."""
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                # the policy is read from the settings each round unless given (an operator's change applies)
                run_round(self.store, policy=self.policy)
                self.last_error = None
            except Exception as error:  # noqa: BLE001 - logged; the next round tries again
                self.last_error = f"{type(error).__name__}: {error}"
                log.warning("monitors: the round failed (%s); the next one tries again", self.last_error)
            self.rounds += 1
            self._wake.wait(self.poll_seconds)
            self._wake.clear()


def start_worker(store: Store, *, poll_seconds: float) -> MonitorWorker:
    """The running worker of ``store`` in this process, started if there is none (thread-safe)."""
    with _WORKERS_LOCK:
        worker = _WORKERS.get(id(store))
        if worker is None or worker.store is not store or worker.poll_seconds != poll_seconds:
            if worker is not None:
                worker.stop()
            worker = MonitorWorker(store, poll_seconds=poll_seconds)
            _WORKERS[id(store)] = worker
        return worker.start()


def after_command(store: Store, stream: TextIO | None = None) -> None:
    """The end of a command that opened the database: one round (``run_round``), the deliveries given at most
    ``HRI_MONITOR_TIMEOUT`` seconds to start in; one line on ``stream`` (stderr) when it did something. Never
    raises."""
    out = stream or sys.stderr
    try:
        policy = DeliveryPolicy.from_settings()
        result, attempts = run_round(store, policy=policy, budget_seconds=policy.timeout)
    except Exception as error:  # noqa: BLE001 - the command's own outcome stands; the next round tries again
        print(f"monitors: not checked ({type(error).__name__}: {error}); the next command or the console checks "
              "again", file=out)
        return
    parts = []
    if result is not None and result.alerts:
        changed = [r for r in result.readings if r["changed"]]
        parts.append("; ".join(f"{r['name']} {r['state']}" for r in changed))
    if attempts:
        delivered = sum(1 for a in attempts if a["status"] == "delivered")
        waiting = sum(1 for a in attempts if a["status"] == "pending")
        given_up = sum(1 for a in attempts if a["status"] == "given_up")
        parts.append(f"{delivered} alert{'s' if delivered != 1 else ''} delivered"
                     + (f", {waiting} to retry later" if waiting else "")
                     + (f", {given_up} given up" if given_up else ""))
    if parts:
        print("monitors: " + "; ".join(parts), file=out)
