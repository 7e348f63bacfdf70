"""The check: after new score runs, read every monitor's figure, move its state, and put the alerts in the outbox.

What triggers a check is the register's own record of score runs (``score_runs``): every import scores its batch,
every rescore, Spark import and revision made in the register writes a run, in the same transaction as its
scores. A check follows the runs after the previous check's ``through_run_id`` (``unchecked_runs``), so nothing is
added to the write it follows -- it can neither fail nor slow it -- and a run committed while no check ran (the
console stopped, a command killed) is followed by the next check, whoever runs it: the console's background
worker, the end of a command that scored (``register.monitors.worker``), or ``monitors check``. Score run ids are
taken in the write's transaction under the store's write lock, so they commit in order and a check never passes
over a run committed later.

The figures are read first (``register.monitors.figures``, outside any write), then one audited write
(``monitors.checked``) records the check, each monitor's state (``monitor_states``) and, when a state changes --
cleared to fired, fired to cleared -- an alert and one delivery per webhook (the outbox, ``monitor_alerts`` and
``monitor_deliveries``). A monitor that stays above its threshold raises no second alert however many checks
follow, delivered or not. A figure that cannot be read (an error, or a share of nothing) leaves its monitor's
state as it was. The deliveries are made outside any write (``register.monitors.outbox``).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from register.access.permissions import SYSTEM_ROLE, Permission, authorize
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.monitors.definitions import Monitor, Webhook, monitors, webhooks
from register.monitors.figures import FIGURES, Reading, format_value, read_figures
from register.scoring.scorer import SCOPE_BATCH_PREFIX

__all__ = ["MONITOR_ACTOR", "PAYLOAD_FORMAT", "CheckResult", "alert_payload", "check", "last_check", "states",
           "unchecked_runs"]

MONITOR_ACTOR = Actor("monitors", SYSTEM_ROLE)  # the automatic checks and deliveries (console worker, commands)
PAYLOAD_FORMAT = "hri-monitor-alert/1"
MAX_LISTED_RUNS = 20  # score runs and batches named in a payload (the newest; the count says how many in all)
MAX_SUMMARY_CHARS = 600
# score runs and batches a check's row keeps (the newest): the first check of a long-lived register follows all
# the runs since the beginning, and through_run_id is what the next check reads
MAX_RECORDED_RUNS = 1_000

_CHECKING = threading.Lock()  # one check at a time in this process (the worker, a command handed over, a page)


@dataclass(frozen=True)
class CheckResult:
    """What one check read and raised: ``readings`` per monitor (name, version, figure, use_case, value,
    threshold, state, changed, error), the ids of the alerts it put in the outbox."""

    check_id: int
    checked_at: datetime
    run_ids: tuple[int, ...]
    batch_ids: tuple[int, ...]
    readings: list[dict[str, Any]] = field(default_factory=list)
    alerts: list[int] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"check_id": self.check_id, "checked_at": self.checked_at.isoformat(), "run_ids": list(self.run_ids),
                "batch_ids": list(self.batch_ids), "readings": self.readings, "alerts": self.alerts}


class _AlreadyChecked(Exception):
    """Another check followed these runs while this one read its figures: nothing to record."""


def unchecked_runs(store: Store) -> list[dict[str, Any]]:
    """The score runs committed after the latest check's ``through_run_id`` (all of them before the first check),
    oldest first: ``run_id`` and ``batch_id`` (the import batch it scored, or None)."""
    rows = store.dicts("SELECT run_id, scope FROM score_runs WHERE run_id > coalesce("
                       "(SELECT max(through_run_id) FROM monitor_checks), 0) ORDER BY run_id")
    return [{"run_id": int(r["run_id"]), "batch_id": _batch_of(r["scope"])} for r in rows]


def states(store: Store) -> dict[str, dict[str, Any]]:
    """Each checked monitor's state by name: ``state`` (fired / cleared), ``value`` (the latest reading, None when
    it could not be read), ``since`` (when it entered the state), ``checked_at`` (the latest check that read it)."""
    rows = store.dicts("SELECT s.name, s.version, s.state, s.value, s.since, s.alert_id, c.checked_at "
                       "FROM monitor_states s JOIN monitor_checks c ON c.check_id = s.check_id")
    return {r.pop("name"): r for r in rows}


def last_check(store: Store) -> dict[str, Any] | None:
    """The latest check: ``check_id``, ``checked_at``, ``checked_by``, ``through_run_id``; None before the first."""
    return store.one("SELECT check_id, checked_at, checked_by, through_run_id FROM monitor_checks "
                     "ORDER BY check_id DESC LIMIT 1")


def _batch_of(scope: str) -> int | None:
    if isinstance(scope, str) and scope.startswith(SCOPE_BATCH_PREFIX) and scope[len(SCOPE_BATCH_PREFIX):].isdigit():
        return int(scope[len(SCOPE_BATCH_PREFIX):])
    return None


def check(store: Store, actor: Actor = MONITOR_ACTOR, *, force: bool = False,
          now: datetime | None = None) -> CheckResult | None:
    """Check every monitor in force if score runs were committed since the last check (or ``force``: now, whatever
    ran); None when nothing was checked (no monitor, or no new run). Audited ``monitors.checked``; the alerts it
    raises wait in the outbox for ``register.monitors.outbox.deliver_due``. Needs ``Permission.MONITORS_EDIT``
    (the automatic checks run as ``MONITOR_ACTOR``, of the system role)."""
    authorize(store, actor, Permission.MONITORS_EDIT, entity_type="monitor_check")
    with _CHECKING:
        in_force = monitors(store)
        if not in_force:
            return None
        runs = unchecked_runs(store)
        if not runs and not force:
            return None
        at = now or utc_now()
        latest = store.scalar("SELECT max(through_run_id) FROM monitor_checks")
        through = runs[-1]["run_id"] if runs else (None if latest is None else int(latest))
        readings = read_figures(store, [(m.figure, m.use_case) for m in in_force], now=at)
        run_ids = tuple(r["run_id"] for r in runs)
        batch_ids = tuple(dict.fromkeys(r["batch_id"] for r in runs if r["batch_id"] is not None))
        try:
            return store.write(actor, "monitors.checked",
                               lambda tx: _record(tx, readings, at, actor, through, run_ids, batch_ids, force))
        except _AlreadyChecked:
            return None


def _record(tx: Transaction, readings: dict[tuple[str, str | None], Reading], at: datetime, actor: Actor,
            through: int | None, run_ids: tuple[int, ...], batch_ids: tuple[int, ...], force: bool) -> Change:
    """The check's write: its row, each monitor's state, an alert and its deliveries per change of state."""
    latest = tx.scalar("SELECT max(through_run_id) FROM monitor_checks")
    if not force and latest is not None and through is not None and int(latest) >= through:
        raise _AlreadyChecked
    check_id = int(tx.scalar("SELECT nextval('seq_monitor_check')"))
    states = {r["name"]: r for r in tx.dicts("SELECT name, state FROM monitor_states")}
    hooks = {w.name: w for w in webhooks(tx)}
    trigger = {"check_id": check_id, "score_runs": list(run_ids[-MAX_LISTED_RUNS:]), "score_run_count": len(run_ids),
               "import_batches": list(batch_ids[-MAX_LISTED_RUNS:]), "import_batch_count": len(batch_ids)}
    out: list[dict[str, Any]] = []
    alerts: list[int] = []
    for monitor in monitors(tx):  # as in force now (one changed since the figures were read has no reading)
        reading = readings.get((monitor.figure, monitor.use_case))
        before = states.get(monitor.name, {}).get("state", "cleared")  # never checked: as if cleared
        entry: dict[str, Any] = {"name": monitor.name, "version": monitor.version, "figure": monitor.figure,
                                 "use_case": monitor.use_case, "threshold": monitor.threshold,
                                 "value": None if reading is None else reading.value,
                                 "state": before if monitor.name in states else "unchecked",
                                 "changed": False,
                                 "error": "not read" if reading is None else reading.error}
        out.append(entry)
        if reading is None or reading.value is None:
            if monitor.name in states:
                tx.execute("UPDATE monitor_states SET check_id = ?, value = NULL WHERE name = ?",
                           [check_id, monitor.name])
            continue
        state = "fired" if reading.value > monitor.threshold else "cleared"
        entry["state"] = state
        alert_id = None
        if state != before:
            entry["changed"] = True
            alert_id = _raise_alert(tx, monitor, reading, state, at, trigger, hooks)
            alerts.append(alert_id)
        tx.execute("""
            INSERT INTO monitor_states (name, version, state, value, since, check_id, alert_id)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (name) DO UPDATE SET version = excluded.version, state = excluded.state,
                value = excluded.value, check_id = excluded.check_id,
                since = CASE WHEN monitor_states.state = excluded.state THEN monitor_states.since
                             ELSE excluded.since END,
                alert_id = CASE WHEN monitor_states.state = excluded.state THEN monitor_states.alert_id
                                ELSE excluded.alert_id END""",
                   [monitor.name, monitor.version, state, reading.value, at, check_id, alert_id])
    tx.execute("INSERT INTO monitor_checks (check_id, checked_at, checked_by, through_run_id, run_ids, batch_ids, "
               "readings) VALUES (?, ?, ?, ?, ?, ?, ?)",
               [check_id, at, actor.name, through, list(run_ids[-MAX_RECORDED_RUNS:]),
                list(batch_ids[-MAX_RECORDED_RUNS:]), json.dumps(out, default=str)])
    result = CheckResult(check_id, at, run_ids, batch_ids, out, alerts)
    summary = {"score_runs": trigger["score_runs"], "import_batches": trigger["import_batches"],
               "fired": [e["name"] for e in out if e["changed"] and e["state"] == "fired"],
               "cleared": [e["name"] for e in out if e["changed"] and e["state"] == "cleared"],
               "alerts": alerts, "unread": [e["name"] for e in out if e["error"]]}
    return Change("monitor_check", str(check_id), None, summary, result=result)


def _raise_alert(tx: Transaction, monitor: Monitor, reading: Reading, state: str, at: datetime,
                 trigger: dict[str, Any], hooks: dict[str, Webhook]) -> int:
    """An alert in the outbox, with one pending delivery per webhook it goes to; returns its id."""
    alert_id = int(tx.scalar("SELECT nextval('seq_monitor_alert')"))
    payload = alert_payload(alert_id, monitor, reading, state, at, trigger)
    tx.execute("INSERT INTO monitor_alerts (alert_id, name, version, state, check_id, created_at, payload) "
               "VALUES (?, ?, ?, ?, ?, ?, ?)",
               [alert_id, monitor.name, monitor.version, state, trigger["check_id"], at,
                json.dumps(payload, default=str)])
    targets = [name for name in (monitor.webhooks or tuple(hooks)) if name in hooks]
    for name in targets:
        tx.execute("INSERT INTO monitor_deliveries (delivery_id, alert_id, webhook, status, attempts, "
                   "next_attempt_at) VALUES (nextval('seq_monitor_delivery'), ?, ?, 'pending', 0, ?)",
                   [alert_id, name, at])
    return alert_id


def alert_payload(alert_id: int, monitor: Monitor, reading: Reading, state: str, at: datetime,
                  trigger: dict[str, Any]) -> dict[str, Any]:
    """The JSON every webhook receives for an alert (docs/monitors.md), but the ``delivery`` section each attempt
    adds (``register.monitors.outbox``)."""
    figure = FIGURES[monitor.figure]
    return {"format": PAYLOAD_FORMAT, "event": f"monitor.{state}", "alert_id": alert_id, "state": state,
            "monitor": {"name": monitor.name, "version": monitor.version},
            "figure": monitor.figure, "figure_title": figure.title, "unit": figure.unit, "value": reading.value,
            "threshold": monitor.threshold, "scope": {"use_case": monitor.use_case},
            "detail": _json_safe(reading.detail), "trigger": trigger, "at": at.isoformat(),
            "summary": summary_text(monitor, reading, state, at, trigger)}


def summary_text(monitor: Monitor, reading: Reading, state: str, at: datetime, trigger: dict[str, Any]) -> str:
    """One plain sentence of what happened, link-free: no URL of the console, and any text from the data (a use
    case, a monitor name) with its ``://`` broken (``hxxp[://]``), so a chat client renders no link from it."""
    figure = FIGURES[monitor.figure]
    scope = f" (use case {_plain(monitor.use_case)})" if monitor.use_case is not None else ""
    where = ""
    if monitor.figure == "scope_s_h" and reading.detail.get("scopes"):
        where = (f", in {_plain(reading.detail.get('use_case') or '-')} / "
                 f"{_plain(reading.detail.get('model') or '-')}")
    relation = "above" if state == "fired" else "back at or below"  # fires while above the threshold
    runs, batches = trigger["score_runs"], trigger["import_batches"]
    after = ("a check asked for" if not runs else
             f"score run {runs[-1]}" if trigger["score_run_count"] == 1 else
             f"{trigger['score_run_count']} score runs (the last {runs[-1]})")
    if batches:
        after += f", import batch{'es' if len(batches) > 1 else ''} {', '.join(map(str, batches))}"
    text = (f"Monitor {_plain(monitor.name)} {state}: {figure.title}{scope} "
            f"{format_value(monitor.figure, reading.value)}{where}, {relation} the threshold "
            f"{format_value(monitor.figure, monitor.threshold)}. Checked {at:%Y-%m-%d %H:%M} UTC after {after}.")
    return text[:MAX_SUMMARY_CHARS]


_LINK = re.compile(r"(?i)\b(h)tt(ps?)://|://")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def _plain(text: Any) -> str:
    """Text from the data for the summary: quoted, control characters as spaces, no link left whole."""
    clean = _CONTROL.sub(" ", str(text))[:200]
    clean = _LINK.sub(lambda m: f"{m.group(1)}xx{m.group(2)}[://]" if m.group(1) else "[://]", clean)
    return f"'{clean}'"


def _json_safe(value: Any) -> Any:
    """A reading's detail as JSON values (numpy numbers and NaN from a frame as plain numbers and null)."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if hasattr(value, "item"):  # a numpy scalar
        value = value.item()
    if isinstance(value, float) and value != value:  # NaN
        return None
    return value if value is None or isinstance(value, str | int | float | bool) else str(value)
