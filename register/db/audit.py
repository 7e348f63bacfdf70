"""The append-only, hash-chained audit trail.

Each event stores the hash of the previous event and the SHA-256 of (previous hash + its own
canonical content), with the actor's name and role copied in as text. ``verify_chain`` recomputes
the chain and names the first event that does not match: an edited row, a deleted row and rows out
of order all break it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

GENESIS_HASH = "0" * 64


def canonical_json(value: Any) -> str | None:
    """Stable JSON text (sorted keys, no spaces); ``None`` stays ``None``."""
    if value is None:
        return None
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=False)


def event_hash(prev_hash: str, seq: int, at: datetime, actor_name: str, actor_role: str, action: str,
               entity_type: str, entity_id: str | None, before: str | None, after: str | None) -> str:
    """SHA-256 over the previous hash and the event's canonical content."""
    content = json.dumps(
        [seq, at.astimezone(UTC).isoformat(), actor_name, actor_role, action, entity_type,
         entity_id, before, after],
        separators=(",", ":"), ensure_ascii=False,
    )
    return hashlib.sha256((prev_hash + "\n" + content).encode()).hexdigest()


def append_event(tx, actor, action: str, entity_type: str, entity_id: str | None,
                 before: Any = None, after: Any = None) -> int:
    """Append one event inside the caller's transaction (a ``Transaction``); returns its sequence number."""
    row = tx.query_one("SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1")
    prev_seq, prev_hash = (row if row else (0, GENESIS_HASH))
    seq = prev_seq + 1
    at = datetime.now(UTC)
    before_text, after_text = canonical_json(before), canonical_json(after)
    digest = event_hash(prev_hash, seq, at, actor.name, actor.role, action, entity_type,
                        None if entity_id is None else str(entity_id), before_text, after_text)
    tx.execute(
        "INSERT INTO audit_events (seq, occurred_at, actor_name, actor_role, action, entity_type, entity_id, "
        "before, after, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [seq, at, actor.name, actor.role, action, entity_type,
         None if entity_id is None else str(entity_id), before_text, after_text, prev_hash, digest],
    )
    return seq


@dataclass(frozen=True)
class ChainReport:
    """Result of a verification: ``ok`` and, when broken, the first bad event and why."""

    ok: bool
    events: int
    first_bad_seq: int | None = None
    reason: str | None = None


def verify_chain(store) -> ChainReport:
    """Recompute every hash in sequence order; report the first event that does not verify."""
    rows = store.query(
        "SELECT seq, occurred_at, actor_name, actor_role, action, entity_type, entity_id, before, after, "
        "prev_hash, hash FROM audit_events ORDER BY seq"
    )
    prev_hash, expected_seq = GENESIS_HASH, 1
    for seq, at, name, role, action, etype, eid, before, after, stored_prev, stored_hash in rows:
        if seq != expected_seq:
            return ChainReport(False, len(rows), seq, f"event {seq} follows {expected_seq - 1}: "
                               f"event {expected_seq} is missing or out of order")
        if stored_prev != prev_hash:
            return ChainReport(False, len(rows), seq, f"event {seq} does not link to the previous event's hash")
        if event_hash(prev_hash, seq, at, name, role, action, etype, eid, before, after) != stored_hash:
            return ChainReport(False, len(rows), seq, f"event {seq} content does not match its hash (edited)")
        prev_hash, expected_seq = stored_hash, seq + 1
    return ChainReport(True, len(rows))


# --- reading the trail (the audit page, its export) --------------------------------------------

EVENT_COLUMNS = ("seq", "occurred_at", "actor_name", "actor_role", "action", "entity_type", "entity_id", "before",
                 "after", "hash")


@dataclass(frozen=True)
class EventFilter:
    """What the audit page filters on; every value reaches SQL as a bound parameter."""

    actor: str | None = None          # part of the actor's name, any case
    actions: tuple[str, ...] = ()     # exact action names (any of)
    entity_type: str | None = None
    entity_id: str | None = None      # exact
    since: datetime | None = None     # inclusive
    until: datetime | None = None     # exclusive


def _event_where(f: EventFilter) -> tuple[str, list[Any]]:
    conditions, params = ["true"], []
    if f.actor:
        conditions.append("strpos(lower(actor_name), lower(?)) > 0")
        params.append(f.actor)
    if f.actions:
        conditions.append("list_contains(?, action)")
        params.append(list(f.actions))
    if f.entity_type:
        conditions.append("entity_type = ?")
        params.append(f.entity_type)
    if f.entity_id:
        conditions.append("entity_id = ?")
        params.append(f.entity_id)
    if f.since is not None:
        conditions.append("occurred_at >= ?")
        params.append(f.since)
    if f.until is not None:
        conditions.append("occurred_at < ?")
        params.append(f.until)
    return " AND ".join(conditions), params


def search_events(store, f: EventFilter, *, limit: int = 500, offset: int = 0):
    """Events matching ``f``, newest first, as a DataFrame, and how many match in all."""
    if not (0 < int(limit) <= 100_000) or int(offset) < 0:
        raise ValueError("limit must be 1..100000 and offset >= 0")
    where, params = _event_where(f)
    frame = store.frame(f"SELECT {', '.join(EVENT_COLUMNS)} FROM audit_events WHERE {where} "
                           "ORDER BY seq DESC LIMIT ? OFFSET ?", [*params, int(limit), int(offset)])
    total = store.scalar(f"SELECT count(*) FROM audit_events WHERE {where}", params)
    return frame, total


def event_options(store) -> dict[str, list[str]]:
    """Distinct actions and entity types, for the filter pickers."""
    return {"actions": [a for (a,) in store.query("SELECT DISTINCT action FROM audit_events ORDER BY action")],
            "entity_types": [e for (e,) in store.query(
                "SELECT DISTINCT entity_type FROM audit_events ORDER BY entity_type")]}
