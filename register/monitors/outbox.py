"""The outbox: deliver the alerts waiting in it, one attempt at a time, outside any write (``deliver_due``).

A check (``register.monitors.check``) puts each alert in ``monitor_alerts`` with one ``monitor_deliveries`` row per
webhook, pending. ``deliver_due`` takes the deliveries whose next attempt is due -- per webhook the oldest pending
one only, so a webhook receives its alerts in the order they were raised (a "cleared" never overtakes its "fired")
-- and POSTs each (``register.monitors.sender.post_json``: timeouts, no redirect followed, the answer read bounded).
The HTTP request is made outside any transaction; then one audited write records the attempt
(``monitor_attempts``: when, how long, the HTTP status, the error) and the delivery's new state:

* a 2xx answer: ``delivered`` (audited ``monitor.delivered``);
* a failure worth another attempt (no connection, a timeout, HTTP 408/425/429/5xx) with attempts left: still
  pending, its next attempt after the backoff (``DeliveryPolicy.backoff``: ``backoff_seconds``, doubled at each
  attempt, at most ``MAX_BACKOFF_SECONDS``; audited ``monitor.delivery_failed``);
* the last attempt failing, or a failure no attempt would mend (a redirect, another 4xx, a webhook removed):
  ``given_up`` (audited ``monitor.given_up``).

Nothing waits in here: an attempt not yet due is left for a later call, so the console's worker and the end of a
command (``register.monitors.worker``) never sleep on a backoff, and what is not delivered when a process stops stays
in the outbox for the next one.

The body is the alert's payload plus a ``delivery`` section (id, attempt, webhook, time sent). When the webhook
names a secret (``secret_env``: the NAME of an environment variable of the delivering process; the secret is never
stored in the register), the request carries ``X-HRI-Signature-256: sha256=<hex>``, the HMAC-SHA256 of the exact
body under that secret; a webhook whose variable is unset is not sent unsigned: the attempt fails (and is retried,
the variable may be set in the next process).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from register.access.permissions import Permission, authorize
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.monitors.check import MONITOR_ACTOR
from register.monitors.definitions import Webhook, webhooks
from register.monitors.sender import Outcome, post_json
from register.settings import secret, settings

__all__ = ["MAX_BACKOFF_SECONDS", "SIGNATURE_HEADER", "DeliveryPolicy", "deliveries", "deliver_due", "sign"]

SIGNATURE_HEADER = "X-HRI-Signature-256"
MAX_BACKOFF_SECONDS = 6 * 3600.0
MAX_PER_CALL = 100  # deliveries attempted by one call at most (one per webhook anyway)
USER_AGENT = "hri-console-monitors/1"

_DELIVERING = threading.Lock()  # one delivering call at a time in this process: no delivery attempted twice at once

PostFn = Callable[..., Outcome]


@dataclass(frozen=True)
class DeliveryPolicy:
    """How deliveries are attempted: ``timeout`` seconds per attempt, at most ``attempts`` attempts,
    ``backoff_seconds`` before the second (doubled before each later one). ``from_settings`` reads
    ``HRI_MONITOR_TIMEOUT``, ``HRI_MONITOR_ATTEMPTS`` and ``HRI_MONITOR_BACKOFF_SECONDS``."""

    timeout: float = 10.0
    attempts: int = 6
    backoff_seconds: float = 30.0

    @classmethod
    def from_settings(cls) -> DeliveryPolicy:
        s = settings()
        return cls(timeout=s.monitor_timeout, attempts=s.monitor_attempts, backoff_seconds=s.monitor_backoff_seconds)

    def backoff(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1, 2, ...) before the next."""
        return min(MAX_BACKOFF_SECONDS, self.backoff_seconds * 2 ** (attempt - 1))


def sign(secret_value: str, body: bytes) -> str:
    """The signature header's value: ``sha256=`` and the hex HMAC-SHA256 of ``body`` under the secret (a receiver
    computes the same over the raw body and compares in constant time)."""
    return "sha256=" + hmac.new(secret_value.encode("utf-8"), body, hashlib.sha256).hexdigest()


_DUE = """
    SELECT d.delivery_id, d.alert_id, d.webhook, d.attempts, a.payload, a.state
    FROM (SELECT * FROM monitor_deliveries WHERE status = 'pending'
          QUALIFY row_number() OVER (PARTITION BY webhook ORDER BY delivery_id) = 1) d
    JOIN monitor_alerts a ON a.alert_id = d.alert_id
    WHERE d.next_attempt_at <= ?
    ORDER BY d.delivery_id LIMIT ?"""


def deliver_due(store: Store, actor: Actor = MONITOR_ACTOR, *, policy: DeliveryPolicy | None = None,
                now: datetime | None = None, budget_seconds: float | None = None,
                post: PostFn = post_json) -> list[dict[str, Any]]:
    """Attempt each delivery that is due (module docstring), once; returns per attempt its delivery id, webhook,
    attempt number, status after it and error. ``budget_seconds``: start no attempt after that long (a command
    leaves the rest for later); ``post``: the HTTP call (a test's stand-in). Needs ``Permission.MONITORS_EDIT``
    (the automatic deliveries run as ``MONITOR_ACTOR``, of the system role)."""
    authorize(store, actor, Permission.MONITORS_EDIT, entity_type="monitor_delivery")
    rules = policy or DeliveryPolicy.from_settings()
    started = time.monotonic()
    with _DELIVERING:
        due = store.dicts(_DUE, [now or utc_now(), MAX_PER_CALL])
        if not due:
            return []
        hooks = {w.name: w for w in webhooks(store)}
        results = []
        for row in due:
            if budget_seconds is not None and time.monotonic() - started >= budget_seconds:
                break
            results.append(_attempt(store, actor, row, hooks.get(row["webhook"]), rules, post))
        return results


def _attempt(store: Store, actor: Actor, row: dict[str, Any], hook: Webhook | None, rules: DeliveryPolicy,
             post: PostFn) -> dict[str, Any]:
    """One attempt of one delivery, then its record."""
    attempt = int(row["attempts"]) + 1
    started_at = utc_now()
    if hook is None:
        outcome = Outcome(False, False, None, f"the webhook {row['webhook']!r} was removed", 0.0)
    else:
        outcome = _post(row, hook, attempt, started_at, rules, post)
    return store.write(actor, _action(outcome, attempt, rules),
                       lambda tx: _record(tx, row, hook, attempt, started_at, outcome, rules))


def _post(row: dict[str, Any], hook: Webhook, attempt: int, started_at: datetime, rules: DeliveryPolicy,
          post: PostFn) -> Outcome:
    payload = json.loads(row["payload"]) if isinstance(row["payload"], str) else dict(row["payload"])
    payload["delivery"] = {"id": int(row["delivery_id"]), "attempt": attempt, "webhook": hook.name,
                           "sent_at": started_at.isoformat()}
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    headers = {"User-Agent": USER_AGENT, "X-HRI-Event": f"monitor.{row['state']}",
               "X-HRI-Delivery": str(row["delivery_id"])}
    if hook.secret_env is not None:
        value = secret(hook.secret_env)
        if value is None:
            return Outcome(False, True, None, f"the signing secret's variable {hook.secret_env} is not set in this "
                                              "process: not sent unsigned", 0.0)
        headers[SIGNATURE_HEADER] = sign(value, body)
    return post(hook.url, body, headers, timeout=rules.timeout)


def _action(outcome: Outcome, attempt: int, rules: DeliveryPolicy) -> str:
    if outcome.delivered:
        return "monitor.delivered"
    return "monitor.delivery_failed" if outcome.retry and attempt < rules.attempts else "monitor.given_up"


def _record(tx: Transaction, row: dict[str, Any], hook: Webhook | None, attempt: int, started_at: datetime,
            outcome: Outcome, rules: DeliveryPolicy) -> Change:
    """The attempt's row and the delivery's state after it."""
    action = _action(outcome, attempt, rules)
    status = {"monitor.delivered": "delivered", "monitor.delivery_failed": "pending"}.get(action, "given_up")
    kind = "delivered" if outcome.delivered else "retry" if status == "pending" else "failed"
    tx.execute("INSERT INTO monitor_attempts (delivery_id, attempt, webhook_version, started_at, seconds, "
               "status_code, outcome, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
               [row["delivery_id"], attempt, None if hook is None else hook.version, started_at, outcome.seconds,
                outcome.status_code, kind, outcome.error])
    finished = utc_now()
    next_at = finished + timedelta(seconds=rules.backoff(attempt)) if status == "pending" else None
    tx.execute("UPDATE monitor_deliveries SET status = ?, attempts = ?, next_attempt_at = ?, finished_at = ?, "
               "last_error = ? WHERE delivery_id = ?",
               [status, attempt, next_at, None if status == "pending" else finished, outcome.error,
                row["delivery_id"]])
    after = {"alert_id": int(row["alert_id"]), "webhook": row["webhook"], "attempt": attempt, "status": status,
             "status_code": outcome.status_code, "error": outcome.error,
             "next_attempt_at": None if next_at is None else next_at.isoformat()}
    result = {"delivery_id": int(row["delivery_id"]), **after}
    return Change("monitor_delivery", str(row["delivery_id"]), None, after, result=result)


def deliveries(store: Store, *, limit: int = 200) -> list[dict[str, Any]]:
    """The newest deliveries first: delivery id, alert id, monitor, alert state, webhook, status, attempts, next
    attempt, finished, last error, and when the alert was raised."""
    return store.dicts("""
        SELECT d.delivery_id, d.alert_id, a.name AS monitor, a.state AS alert_state, d.webhook, d.status, d.attempts,
               d.next_attempt_at, d.finished_at, d.last_error, a.created_at AS raised_at
        FROM monitor_deliveries d JOIN monitor_alerts a ON a.alert_id = d.alert_id
        ORDER BY d.delivery_id DESC LIMIT ?""", [limit])
