"""Monitors and webhooks as versioned rows (migration 045): read the ones in force, save a version, remove one.

A monitor is a name, a figure (``register.monitors.figures.FIGURES``), an optional use case, a threshold (it fires
while the figure is above it) and the webhooks its alerts go to (none named: every webhook in force). A webhook is
a name, an ``http://`` or ``https://`` URL and, optionally, the NAME of the environment variable that holds its
HMAC secret (the secret itself is never stored: it is read from the delivering process's environment at each
attempt, ``register.monitors.outbox``).

Every change appends a version under the name (``monitor_versions``, ``monitor_webhook_versions``): an edit is a
new version, a removal a version that says removed; nothing is updated or deleted, so what a monitor was when it
fired stays readable. Only admins write them (``Permission.MONITORS_EDIT``, checked against the account's current
state by ``authorize`` and again by ``Store.write``), each write audited (``monitor.saved``, ``monitor.removed``,
``webhook.saved``, ``webhook.removed``) with the version before and after. A webhook's URL can carry a token (many
chat services put one in the path), so the audit trail and every listing show it as ``shown_url``: scheme, host
and port only.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from register.access.permissions import Permission, authorize
from register.db.store import Actor, Change, Cursor, Store, Transaction, utc_now
from register.errors import InvalidMonitor, NotFound
from register.monitors.vocabulary import FIGURES

__all__ = ["MAX_URL_CHARS", "Monitor", "Webhook", "monitors", "remove_monitor", "remove_webhook", "save_monitor",
           "save_webhook", "shown_url", "webhooks"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
MAX_URL_CHARS = 2_000
MAX_USE_CASE_CHARS = 200
MAX_REASON_CHARS = 1_000


@dataclass(frozen=True)
class Monitor:
    """One monitor's version in force."""

    name: str
    version: int
    figure: str
    use_case: str | None
    threshold: float
    webhooks: tuple[str, ...]
    reason: str | None
    created_at: datetime
    created_by: str

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "webhooks": list(self.webhooks), "created_at": self.created_at.isoformat()}


@dataclass(frozen=True)
class Webhook:
    """One webhook's version in force (``secret_env``: the variable holding its secret, or None: unsigned)."""

    name: str
    version: int
    url: str
    secret_env: str | None
    created_at: datetime
    created_by: str

    def as_json(self, *, full_url: bool = False) -> dict[str, Any]:
        """The webhook as JSON; its URL as ``shown_url`` unless ``full_url``."""
        return {"name": self.name, "version": self.version, "url": self.url if full_url else shown_url(self.url),
                "secret_env": self.secret_env, "created_at": self.created_at.isoformat(),
                "created_by": self.created_by}


def shown_url(url: str) -> str:
    """``scheme://host[:port]/...``: a webhook URL without what may be a token (path, query, user name)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or "?"
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(not a URL)"
    host = f"[{host}]" if ":" in host else host
    rest = "/..." if (parts.path not in ("", "/") or parts.query or parts.fragment) else ""
    return f"{parts.scheme}://{host}{port}{rest}"


# --- reads ----------------------------------------------------------------------------------------


_IN_FORCE = ("SELECT * FROM {table} QUALIFY row_number() OVER (PARTITION BY name ORDER BY version DESC) = 1")


def _monitor(row: dict) -> Monitor:
    return Monitor(row["name"], int(row["version"]), row["figure"], row["use_case"], float(row["threshold"]),
                   tuple(row["webhooks"] or ()), row["reason"], row["created_at"], row["created_by"])


def _webhook(row: dict) -> Webhook:
    return Webhook(row["name"], int(row["version"]), row["url"], row["secret_env"], row["created_at"],
                   row["created_by"])


def monitors(reader: Store | Cursor) -> list[Monitor]:
    """The monitors in force (the latest version of each name, unless removed), by name."""
    rows = reader.dicts(f"SELECT * FROM ({_IN_FORCE.format(table='monitor_versions')}) WHERE NOT removed "
                        "ORDER BY name")
    return [_monitor(r) for r in rows]


def webhooks(reader: Store | Cursor) -> list[Webhook]:
    """The webhooks in force, by name."""
    return _webhooks_in_force(reader)


def _webhooks_in_force(reader: Store | Cursor) -> list[Webhook]:
    rows = reader.dicts(f"SELECT * FROM ({_IN_FORCE.format(table='monitor_webhook_versions')}) WHERE NOT removed "
                        "ORDER BY name")
    return [_webhook(r) for r in rows]


def _latest(tx: Cursor, table: str, name: str) -> dict | None:
    return tx.one(f"SELECT * FROM {table} WHERE name = ? ORDER BY version DESC LIMIT 1", [name])


# --- checks of what is given ----------------------------------------------------------------------


def _name(kind: str, name: Any) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise InvalidMonitor(repr(name) if not isinstance(name, str) else name or "(no name)", "name",
                             f"a {kind} name is 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or "
                             "digit")
    return name


def _threshold(name: str, figure: str, threshold: Any) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not math.isfinite(threshold):
        raise InvalidMonitor(name, "threshold", f"a number, got {threshold!r}")
    top = FIGURES[figure].threshold_max
    if threshold < 0 or (top is not None and threshold >= top):
        bound = f"at least 0 and below {top:g}" if top is not None else "at least 0"
        unit = " (a share: 0.25 is 25%)" if FIGURES[figure].unit == "share" else ""
        raise InvalidMonitor(name, "threshold", f"{figure} takes a threshold {bound}{unit}; got {threshold!r}")
    return float(threshold)


def _use_case(name: str, use_case: Any) -> str | None:
    if use_case is None:
        return None
    if not isinstance(use_case, str) or not use_case.strip() or len(use_case) > MAX_USE_CASE_CHARS:
        raise InvalidMonitor(name, "use_case", f"a use case name of 1 to {MAX_USE_CASE_CHARS} characters, or none "
                                               "for every answer")
    return use_case


def _url(name: str, url: Any) -> str:
    problem = None
    if not isinstance(url, str) or not url or len(url) > MAX_URL_CHARS:
        problem = f"a URL of 1 to {MAX_URL_CHARS:,} characters"
    elif any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        problem = "a URL has no spaces or control characters"
    else:
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - raises on a port that is not a number
        except ValueError as error:
            problem = f"not a valid URL ({error})"
        else:
            if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
                problem = "an http:// or https:// URL with a host"
    if problem is not None:
        raise InvalidMonitor(name, "url", problem)
    return url


# --- writes ---------------------------------------------------------------------------------------


def save_monitor(store: Store, actor: Actor, name: str, figure: str, threshold: float, *,
                 use_case: str | None = None, webhooks: tuple[str, ...] | list[str] = (),
                 reason: str | None = None) -> Monitor:
    """Add the monitor ``name``, or save a new version of it: ``figure`` (one of ``FIGURES``) above ``threshold``
    for every current answer or those of ``use_case``, alerting ``webhooks`` (names of webhooks in force; none:
    every one). Needs ``Permission.MONITORS_EDIT``; audited ``monitor.saved``. ``InvalidMonitor`` names the field
    to fix; nothing is written then."""
    authorize(store, actor, Permission.MONITORS_EDIT, entity_type="monitor", entity_id=name)
    name = _name("monitor", name)
    if figure not in FIGURES:
        raise InvalidMonitor(name, "figure", f"no figure named {figure!r}; choose one of {', '.join(FIGURES)}")
    limit = _threshold(name, figure, threshold)
    scope = _use_case(name, use_case)
    targets = tuple(dict.fromkeys(webhooks))
    note = None if reason is None or not reason.strip() else reason.strip()[:MAX_REASON_CHARS]

    def write(tx: Transaction) -> Change:
        known = {w.name for w in _webhooks_in_force(tx)}
        unknown = [w for w in targets if w not in known]
        if unknown:
            raise InvalidMonitor(name, "webhooks", f"no webhook named {', '.join(map(repr, unknown))} is in force "
                                                   "(add it first: monitors webhook-add)")
        before = _latest(tx, "monitor_versions", name)
        version = 1 if before is None else int(before["version"]) + 1
        now = utc_now()
        tx.execute("INSERT INTO monitor_versions (name, version, figure, use_case, threshold, webhooks, removed, "
                   "reason, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, false, ?, ?, ?)",
                   [name, version, figure, scope, limit, list(targets), note, now, actor.name])
        saved = Monitor(name, version, figure, scope, limit, targets, note, now, actor.name)
        return Change("monitor", name, _plain(before), saved.as_json(), result=saved)

    return store.write(actor, "monitor.saved", write)


def remove_monitor(store: Store, actor: Actor, name: str, *, reason: str | None = None) -> None:
    """Remove the monitor ``name`` (a version that says removed; its state goes, so adding it again starts
    cleared; alerts already in the outbox are still delivered). Needs ``Permission.MONITORS_EDIT``; audited
    ``monitor.removed``. ``NotFound`` when no monitor of that name is in force."""
    authorize(store, actor, Permission.MONITORS_EDIT, entity_type="monitor", entity_id=name)
    note = None if reason is None or not reason.strip() else reason.strip()[:MAX_REASON_CHARS]

    def write(tx: Transaction) -> Change:
        before = _latest(tx, "monitor_versions", name)
        if before is None or before["removed"]:
            raise NotFound(f"no monitor named {name!r} is in force (see: monitors list)")
        tx.execute("INSERT INTO monitor_versions (name, version, figure, use_case, threshold, webhooks, removed, "
                   "reason, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, true, ?, ?, ?)",
                   [name, int(before["version"]) + 1, before["figure"], before["use_case"], before["threshold"],
                    before["webhooks"], note, utc_now(), actor.name])
        tx.execute("DELETE FROM monitor_states WHERE name = ?", [name])
        return Change("monitor", name, _plain(before), {"removed": True, "version": int(before["version"]) + 1,
                                                        "reason": note})

    store.write(actor, "monitor.removed", write)


def save_webhook(store: Store, actor: Actor, name: str, url: str, *, secret_env: str | None = None) -> Webhook:
    """Add the webhook ``name``, or save a new version of it (a corrected URL applies to the deliveries still
    waiting). ``secret_env``: the NAME of the environment variable holding its HMAC secret, or None for unsigned
    deliveries. Needs ``Permission.MONITORS_EDIT``; audited ``webhook.saved`` with the URL as ``shown_url``."""
    authorize(store, actor, Permission.MONITORS_EDIT, entity_type="webhook", entity_id=name)
    name = _name("webhook", name)
    target = _url(name, url)
    if secret_env is not None and (not isinstance(secret_env, str) or not _ENV_NAME.match(secret_env)):
        raise InvalidMonitor(name, "secret_env", "the NAME of an environment variable (letters, digits and '_', not "
                                                 "starting with a digit), not the secret itself")

    def write(tx: Transaction) -> Change:
        before = _latest(tx, "monitor_webhook_versions", name)
        version = 1 if before is None else int(before["version"]) + 1
        now = utc_now()
        tx.execute("INSERT INTO monitor_webhook_versions (name, version, url, secret_env, removed, created_at, "
                   "created_by) VALUES (?, ?, ?, ?, false, ?, ?)", [name, version, target, secret_env, now,
                                                                     actor.name])
        saved = Webhook(name, version, target, secret_env, now, actor.name)
        return Change("webhook", name, _shown(before), saved.as_json(), result=saved)

    return store.write(actor, "webhook.saved", write)


def remove_webhook(store: Store, actor: Actor, name: str) -> None:
    """Remove the webhook ``name``: deliveries to it still waiting are given up at their next attempt. Refused while
    a monitor in force names it (``InvalidMonitor``). Needs ``Permission.MONITORS_EDIT``; audited
    ``webhook.removed``."""
    authorize(store, actor, Permission.MONITORS_EDIT, entity_type="webhook", entity_id=name)

    def write(tx: Transaction) -> Change:
        before = _latest(tx, "monitor_webhook_versions", name)
        if before is None or before["removed"]:
            raise NotFound(f"no webhook named {name!r} is in force (see: monitors list)")
        users = [m.name for m in monitors(tx) if name in m.webhooks]
        if users:
            raise InvalidMonitor(name, "webhooks", f"monitor {', '.join(users)} sends to it: change or remove "
                                                   "those monitors first")
        tx.execute("INSERT INTO monitor_webhook_versions (name, version, url, secret_env, removed, created_at, "
                   "created_by) VALUES (?, ?, ?, ?, true, ?, ?)",
                   [name, int(before["version"]) + 1, before["url"], before["secret_env"], utc_now(), actor.name])
        return Change("webhook", name, _shown(before), {"removed": True, "version": int(before["version"]) + 1})

    store.write(actor, "webhook.removed", write)


def _plain(row: dict | None) -> dict | None:
    """A version row as JSON for the audit event."""
    if row is None:
        return None
    return {k: (v.isoformat() if isinstance(v, datetime) else list(v) if isinstance(v, tuple) else v)
            for k, v in row.items()}


def _shown(row: dict | None) -> dict | None:
    """A webhook version row for the audit event, its URL as ``shown_url``."""
    plain = _plain(row)
    if plain is not None:
        plain["url"] = shown_url(plain["url"])
    return plain
