"""Failed logins with a name that is no account: counted per time window, audited once per window.

Such a name is whatever the visitor typed. Auditing each failure as its own event (as the console did)
let anyone grow the audit trail without bound and write any text into it. Instead:

- **One event per window.** Time is cut into fixed ``WINDOW`` windows (15 minutes of UTC time). The
  first failure of a window appends one ``login.failed_unknown`` event; the rest only count in the
  window's row of ``login_unknown_windows`` (failures, first and last time, distinct names). The next
  window's event carries the final tally of the windows before it (``closed_windows``), so the counts
  end up in the hash-chained trail too. The trail grows by at most 96 such events a day, however fast
  the attempts come.
- **Not per name, not per source.** Both are chosen by the attacker (and behind the reverse proxy that
  the 127.0.0.1 binding calls for, every request comes from the proxy): a bound that depended on either
  could be escaped by varying it.
- **No name is kept, not even escaped or truncated.** People type their password into the name field;
  it must not land in the trail, and a plain hash of it would let whoever copies the database test
  guesses billions of times a second (against argon2's few per second). What an administrator needs is
  kept: how many failures, how many distinct names, when. Distinct names are counted with a keyed
  digest (HMAC-SHA-256 under a random key that lives in this process only and is never stored; a
  restart inside a window can count a name twice); at most ``MAX_DIGESTS`` digests per window.

Failures on existing accounts are not affected: they stay one event each, with the lockout of
``register.access.identity``.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

from register.db.store import Actor, Change, Store, Transaction

WINDOW = timedelta(minutes=15)
MAX_DIGESTS = 100
ACTION = "login.failed_unknown"
ACTOR = Actor("(unknown name)", "anonymous")  # never the typed name
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_KEY = secrets.token_bytes(32)  # this process only: the digests cannot be tested against guesses later
_lock = threading.Lock()        # one process per database file: "count, else open the window" is atomic

_COUNT = (
    "UPDATE login_unknown_windows SET failures = failures + 1, "
    "first_at = least(first_at, $at), last_at = greatest(last_at, $at), "
    "name_digests = CASE WHEN len(name_digests) < $cap AND NOT list_contains(name_digests, $digest) "
    "THEN list_append(name_digests, $digest) ELSE name_digests END "
    "WHERE window_start = $start"
)
_WINDOW_FIELDS = ("window_start", "window_end", "failures", "first_at", "last_at")


def window_start(at: datetime) -> datetime:
    """The start of the ``WINDOW`` that contains ``at`` (windows are aligned on the Unix epoch, UTC)."""
    size = int(WINDOW.total_seconds())
    return _EPOCH + timedelta(seconds=int((at - _EPOCH).total_seconds()) // size * size)


def _digest(name: str) -> str:
    return hmac.new(_KEY, name.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:16]


def record_unknown_name(store: Store, name: str, at: datetime) -> None:
    """Count one failed login with ``name``, which is no account; audit it if it opens a window.

    The count of a window that is already open is a single-row update outside ``Store.write``: the
    window's event is already in the trail, and this row is its tally (sealed into the next window's event).
    """
    start, digest = window_start(at), _digest(name)
    with _lock:
        with store.cursor() as cursor:
            counted = cursor.execute(_COUNT, {"at": at, "cap": MAX_DIGESTS, "digest": digest, "start": start})
        if not counted:
            store.write(ACTOR, ACTION, lambda tx: _open_window(tx, start, at, digest), as_account=False)


def _open_window(tx: Transaction, start: datetime, at: datetime, digest: str) -> Change:
    closed = tx.dicts(f"SELECT {', '.join(_WINDOW_FIELDS)}, len(name_digests) AS distinct_names "
                      "FROM login_unknown_windows WHERE NOT sealed AND window_start < ? ORDER BY window_start",
                      [start])
    tx.execute("UPDATE login_unknown_windows SET sealed = true WHERE NOT sealed AND window_start < ?", [start])
    tx.execute("INSERT INTO login_unknown_windows (window_start, window_end, failures, first_at, last_at, "
               "name_digests) VALUES (?, ?, 1, ?, ?, [?])", [start, start + WINDOW, at, at, digest])
    return Change("login_window", start.isoformat(), None, {
        "window_start": start.isoformat(), "window_end": (start + WINDOW).isoformat(), "failures": 1,
        "note": "further failures with unknown names in this window are counted, not audited one by one",
        "closed_windows": [_public(w) for w in closed]})


def _public(window: dict[str, Any]) -> dict[str, Any]:
    shown = {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in window.items()}
    if window["distinct_names"] >= MAX_DIGESTS:
        shown["distinct_names"] = f"{MAX_DIGESTS}+"
    return shown


def unknown_name_windows(store: Store, limit: int = 96) -> list[dict[str, Any]]:
    """The newest ``limit`` windows that had failed logins with unknown names (for administrators)."""
    rows = store.dicts(f"SELECT {', '.join(_WINDOW_FIELDS)}, len(name_digests) AS distinct_names, sealed "
                       "FROM login_unknown_windows ORDER BY window_start DESC LIMIT ?", [int(limit)])
    return [{**_public(row), "sealed": row["sealed"]} for row in rows]
