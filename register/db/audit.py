"""The append-only, hash-chained audit trail, keyed with an HMAC and checkable against anchors.

Each event stores the hash of the previous event and its own hash over (previous hash + its canonical
content), with the actor's name and role copied in as text. Since migration 006 the hash is an
HMAC-SHA256 under a key kept outside the database file (``register.db.keyring``): the event records
the key's id (``key_id``), and whoever can write the database file but not read the keyring cannot
compute a valid hash, so can neither append a forged event nor edit one and recompute the hashes
after it. Events written before the trail was keyed have ``key_id`` NULL and a plain SHA-256 hash;
they still verify, and the keyring records the head of the trail when it was made (``keyed_after``),
which pins them: every later event must be signed.

Which key signs the next event follows from the trail itself: the key of the previous event, the new
key named by a rotation event (``audit.key_rotated``, signed with the old key), or the keyring's
first key after unsigned events and after events signed with a key declared lost.

``verify_chain`` recomputes the chain and names the first event that does not verify: an edited row,
a deleted or reordered row, a forged or unsigned event, a key that is missing. Deleting the newest
events leaves a shorter chain that verifies on its own: an **anchor** (``head``: sequence number,
hash, event count, time), kept outside the database or recorded by a checklist sign-off, catches
that: ``verify_chain(store, anchors=...)`` fails when the trail no longer holds the anchored event
with the anchored hash.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hri_core import fingerprint as fingerprints
from register.db.export import EXPORT_LIMIT, CsvExport, copy_csv
from register.db.keyring import KeyedAfter, Keyring, KeyringData
from register.db.sql import Params
from register.errors import AuditKeyError, InvalidAnchor

GENESIS_HASH = "0" * 64
HMAC_SCHEME = "hmac-sha256/1"
ROTATION_ACTION = "audit.key_rotated"   # signed with the old key; names the new one
KEY_LOST_ACTION = "audit.key_lost"      # signed with a new keyring's first key; names the lost ones
ANCHOR_FORMAT = "hri-audit-anchor/1"
LISTED_EVENTS = 500  # the newest events a listing shows unless told otherwise (the audit page)


def canonical_json(value: Any) -> str | None:
    """Stable JSON text (sorted keys, no spaces, text as UTF-8, a datetime/date/Decimal as its ``str``);
    ``None`` stays ``None``."""
    if value is None:
        return None
    return fingerprints.canonical_json(value, ensure_ascii=False, other_types="str")


def event_hash(prev_hash: str, seq: int, at: datetime, actor_name: str, actor_role: str, action: str,
               entity_type: str, entity_id: str | None, before: str | None, after: str | None) -> str:
    """SHA-256 over the previous hash and the event's canonical content: the unkeyed scheme of the events
    written before the trail was keyed (anyone can compute it: it proves nothing on its own)."""
    content = fingerprints.canonical_json(
        [seq, at.astimezone(UTC).isoformat(), actor_name, actor_role, action, entity_type,
         entity_id, before, after],
        ensure_ascii=False,
    )
    return fingerprints.sha256_hex(prev_hash + "\n" + content)


def event_mac(secret: bytes, key_id: str, prev_hash: str, seq: int, at: datetime, actor_name: str,
              actor_role: str, action: str, entity_type: str, entity_id: str | None, before: str | None,
              after: str | None) -> str:
    """HMAC-SHA256 under ``secret`` over the previous hash and the event's canonical content, which
    includes the scheme and the key id (so an event cannot be passed off under another key)."""
    content = fingerprints.canonical_json(
        [HMAC_SCHEME, key_id, seq, at.astimezone(UTC).isoformat(), actor_name, actor_role, action,
         entity_type, entity_id, before, after],
        ensure_ascii=False,
    )
    return hmac.new(secret, (prev_hash + "\n" + content).encode(), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class _Link:
    """What choosing the next key needs of an event: its place, hash, key and (for a rotation) new key."""

    seq: int
    hash: str
    key_id: str | None
    action: str
    after: str | None


def last_event(reader) -> _Link | None:
    """The newest event's place, hash, key and (for a rotation) the new key it names; None when empty."""
    row = reader.query_one("SELECT seq, hash, key_id, action, CASE WHEN action = ? THEN after END "
                           "FROM audit_events ORDER BY seq DESC LIMIT 1", [ROTATION_ACTION])
    return None if row is None else _Link(*row)


def next_key_id(data: KeyringData, previous: _Link | None) -> str:
    """The key the event after ``previous`` is signed with: the keyring's first key after nothing, an
    unsigned event or an event signed with a lost key; the new key after a rotation; else the same key."""
    if previous is None or previous.key_id is None or previous.key_id in data.lost:
        return data.first_key
    if previous.action == ROTATION_ACTION:
        return str(json.loads(previous.after or "{}").get("new_key"))
    return previous.key_id


def _missing_key(keyring: Keyring, key_id: str, seq: int) -> str:
    where = "there is no keyring at" if not keyring.exists() else "it is not in the keyring"
    return (f"event {seq} is signed with audit key {key_id}, but {where} {keyring.path}: restore the keyring "
            "from a backup (or point HRI_AUDIT_KEYRING at it); if it is lost for good, declare it lost with "
            "`python -m register audit rotate-key --lost`")


def signing_key(keyring: Keyring, previous: _Link | None) -> tuple[str, bytes]:
    """(key id, secret) for the event after ``previous``. The first write of an unkeyed trail creates the
    keyring; a keyed trail whose key is not in the keyring refuses every write (``AuditKeyError``)."""
    data = keyring.load()
    if data is None:
        if previous is not None and previous.key_id is not None:
            raise AuditKeyError(_missing_key(keyring, previous.key_id, previous.seq))
        head = KeyedAfter(previous.seq, previous.hash) if previous else KeyedAfter(0, GENESIS_HASH)
        data = keyring.create(head)
    key_id = next_key_id(data, previous)
    secret = data.secret(key_id)
    if secret is None:
        raise AuditKeyError(_missing_key(keyring, key_id, previous.seq + 1 if previous else 1))
    return key_id, secret


def append_event(tx, actor, action: str, entity_type: str, entity_id: str | None,
                 before: Any = None, after: Any = None, *, keyring: Keyring) -> int:
    """Append one signed event inside the caller's transaction (a ``Transaction``); returns its sequence number."""
    previous = last_event(tx)
    key_id, secret = signing_key(keyring, previous)
    prev_seq, prev_hash = (previous.seq, previous.hash) if previous else (0, GENESIS_HASH)
    seq = prev_seq + 1
    at = datetime.now(UTC)
    before_text, after_text = canonical_json(before), canonical_json(after)
    entity = None if entity_id is None else str(entity_id)
    digest = event_mac(secret, key_id, prev_hash, seq, at, actor.name, actor.role, action, entity_type, entity,
                       before_text, after_text)
    tx.execute(
        "INSERT INTO audit_events (seq, occurred_at, actor_name, actor_role, action, entity_type, entity_id, "
        "before, after, prev_hash, hash, key_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [seq, at, actor.name, actor.role, action, entity_type, entity, before_text, after_text, prev_hash, digest,
         key_id],
    )
    return seq


# --- anchors -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Anchor:
    """The head of the trail at some moment: the newest event's sequence number and hash, how many events
    there were, and the newest event's time. ``source`` says where it came from (a file, a sign-off)."""

    seq: int
    hash: str
    events: int
    time: datetime | None
    key_id: str | None = None
    source: str = "anchor"

    def as_dict(self) -> dict[str, Any]:
        """The anchor as written by ``python -m register audit anchor`` (JSON-ready)."""
        return {"format": ANCHOR_FORMAT, "seq": self.seq, "hash": self.hash, "events": self.events,
                "time": None if self.time is None else self.time.astimezone(UTC).isoformat(),
                "key_id": self.key_id, "anchored_at": datetime.now(UTC).isoformat()}

    @classmethod
    def from_dict(cls, data: Any, source: str) -> Anchor:
        """An anchor read back from JSON; ``InvalidAnchor`` names what is wrong with it."""
        if not isinstance(data, dict):
            raise InvalidAnchor(f"{source}: not a JSON object with seq, hash and events")
        seq, digest, events = data.get("seq"), data.get("hash"), data.get("events", data.get("seq"))
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
            raise InvalidAnchor(f"{source}: seq must be a whole number >= 0, not {seq!r}")
        if not isinstance(events, int) or isinstance(events, bool) or events < 0:
            raise InvalidAnchor(f"{source}: events must be a whole number >= 0, not {events!r}")
        if not isinstance(digest, str) or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise InvalidAnchor(f"{source}: hash must be 64 lower-case hex digits")
        when = data.get("time")
        try:
            moment = datetime.fromisoformat(when) if isinstance(when, str) else None
        except ValueError as error:
            raise InvalidAnchor(f"{source}: time {when!r} is not an ISO 8601 time") from error
        return cls(seq, digest, events, moment, data.get("key_id"), source)


def head(reader, *, source: str = "head") -> Anchor:
    """The trail's head now (``reader``: a store or the transaction of a write, to anchor inside it)."""
    row = reader.query_one("SELECT seq, hash, occurred_at, key_id, (SELECT count(*) FROM audit_events) "
                           "FROM audit_events ORDER BY seq DESC LIMIT 1")
    if row is None:
        return Anchor(0, GENESIS_HASH, 0, None, None, source)
    seq, digest, at, key_id, events = row
    return Anchor(seq, digest, events, at, key_id, source)


# --- verification --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChainReport:
    """Result of a verification: ``ok`` and, when broken, the first bad event and why.

    ``unsigned``: events from before the trail was keyed (plain SHA-256, pinned by the keyring);
    ``unverifiable``: events signed with a key declared lost (their content cannot be checked, their
    order and links are); ``anchors``: how many anchors were checked.
    """

    ok: bool
    events: int
    first_bad_seq: int | None = None
    reason: str | None = None
    unsigned: int = 0
    unverifiable: int = 0
    anchors: int = 0


_EVENT_FIELDS = ("seq, occurred_at, actor_name, actor_role, action, entity_type, entity_id, before, after, "
                 "prev_hash, hash, key_id")


def verify_chain(store, *, anchors: Iterable[Anchor] = (), keyring: Keyring | None = None) -> ChainReport:
    """Recompute every hash in sequence order, then check each anchor; report the first thing that fails.

    Reads the trail as a stream (memory bounded by a batch of events, not the trail)."""
    keyring = keyring or store.keyring
    anchors = list(anchors)
    wanted = {anchor.seq for anchor in anchors}
    found: dict[int, str] = {}
    count = store.scalar("SELECT count(*) FROM audit_events")
    try:
        data = keyring.load()
    except AuditKeyError as error:
        return ChainReport(False, count, None, str(error))
    keyed_after = data.keyed_after if data else KeyedAfter(0, GENESIS_HASH)
    previous: _Link | None = None
    prev_hash, expected_seq, unsigned, unverifiable = GENESIS_HASH, 1, 0, 0

    def broken(seq: int | None, reason: str) -> ChainReport:
        return ChainReport(False, count, seq, reason, unsigned, unverifiable)

    with store.cursor() as cur:
        for row in cur.stream(f"SELECT {_EVENT_FIELDS} FROM audit_events ORDER BY seq", batch_size=10_000):
            seq, at, name, role, action, etype, eid, before, after, stored_prev, stored_hash, key_id = row
            if seq != expected_seq:
                return broken(seq, f"event {seq} follows {expected_seq - 1}: event {expected_seq} is missing or "
                                   "out of order")
            if stored_prev != prev_hash:
                return broken(seq, f"event {seq} does not link to the previous event's hash")
            if key_id is None:
                if data is not None and seq > keyed_after.seq:
                    return broken(seq, f"event {seq} is not signed with the audit key, but every event after "
                                       f"event {keyed_after.seq} must be: it was forged or rewritten")
                if event_hash(prev_hash, seq, at, name, role, action, etype, eid, before, after) != stored_hash:
                    return broken(seq, f"event {seq} content does not match its hash (edited)")
                unsigned += 1
            elif data is not None and key_id in data.lost:
                if seq > keyed_after.seq:
                    return broken(seq, f"event {seq} is signed with audit key {key_id}, which was declared lost "
                                       f"at event {keyed_after.seq}: no later event may use it")
                unverifiable += 1  # its content cannot be checked without the key; its links were
            else:
                secret = None if data is None else data.secret(key_id)
                if data is None or secret is None:
                    return broken(seq, _missing_key(keyring, key_id, seq))
                if seq > keyed_after.seq and key_id != (expected := next_key_id(data, previous)):
                    return broken(seq, f"event {seq} is signed with audit key {key_id} where {expected} was "
                                       "due: a key changes only by a rotation event signed with the old key")
                if event_mac(secret, key_id, prev_hash, seq, at, name, role, action, etype, eid, before,
                             after) != stored_hash:
                    return broken(seq, f"event {seq} content does not match its signed hash (edited or forged)")
            if seq == keyed_after.seq and stored_hash != keyed_after.hash:
                return broken(seq, f"event {seq} is not the event the keyring recorded when the trail was "
                                   "keyed: the trail up to it was rewritten")
            if seq in wanted:
                found[seq] = stored_hash
            previous = _Link(seq, stored_hash, key_id, action, after if action == ROTATION_ACTION else None)
            prev_hash, expected_seq = stored_hash, seq + 1
    last = expected_seq - 1
    if last < keyed_after.seq:
        return broken(last + 1, f"the trail ends at event {last}, but the keyring was made when it held "
                                f"{keyed_after.seq} events: events were deleted")
    for anchor in anchors:
        if anchor.seq == 0:
            continue  # anchored an empty trail: anything since extends it
        if anchor.seq not in found:
            return broken(anchor.seq, f"{anchor.source}: the anchored event {anchor.seq} (of {anchor.events} "
                                      f"events) is no longer in the trail, which ends at event {last}: events "
                                      "were deleted")
        if found[anchor.seq] != anchor.hash:
            return broken(anchor.seq, f"{anchor.source}: event {anchor.seq} no longer has the anchored hash "
                                      f"{anchor.hash[:16]}...: the trail was rewritten")
    return ChainReport(True, count, None, None, unsigned, unverifiable, len(anchors))


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


def event_where(f: EventFilter, p: Params) -> str:
    """The WHERE condition of ``f`` on ``audit_events`` (its columns unqualified), values bound through ``p``."""
    conditions: list[str] = ["true"]
    if f.actor:
        conditions.append(f"strpos(lower(actor_name), lower({p(f.actor)})) > 0")
    if f.actions:
        conditions.append(f"list_contains({p(list(f.actions))}, action)")
    if f.entity_type:
        conditions.append(f"entity_type = {p(f.entity_type)}")
    if f.entity_id:
        conditions.append(f"entity_id = {p(f.entity_id)}")
    if f.since is not None:
        conditions.append(f"occurred_at >= {p(f.since)}")
    if f.until is not None:
        conditions.append(f"occurred_at < {p(f.until)}")
    return " AND ".join(conditions)


def checked_page(limit: int, offset: int = 0) -> tuple[int, int]:
    """``limit`` and ``offset`` as whole numbers; ``ValueError`` unless 1 <= limit <= ``EXPORT_LIMIT`` and
    offset >= 0."""
    if not (0 < int(limit) <= EXPORT_LIMIT) or int(offset) < 0:
        raise ValueError(f"limit must be 1..{EXPORT_LIMIT} and offset >= 0")
    return int(limit), int(offset)


def search_events(store, f: EventFilter, *, limit: int = LISTED_EVENTS, offset: int = 0):
    """Events matching ``f``, newest first, as a DataFrame, and how many match in all."""
    limit, offset = checked_page(limit, offset)
    p = Params()
    where = event_where(f, p)
    total = store.scalar(f"SELECT count(*) FROM audit_events WHERE {where}", p.values)
    frame = store.frame(f"SELECT {', '.join(EVENT_COLUMNS)} FROM audit_events WHERE {where} "
                        f"ORDER BY seq DESC LIMIT {p(limit)} OFFSET {p(offset)}", p.values)
    return frame, total


def write_events_csv(store, f: EventFilter, path, *, limit: int = EXPORT_LIMIT) -> CsvExport:
    """The newest ``limit`` events matching ``f`` (``EVENT_COLUMNS``, newest first, as ``search_events`` lists
    them) written by DuckDB to the CSV file ``path`` (``register.db.export.copy_csv``: formulas escaped)."""
    limit, _ = checked_page(limit)
    p = Params()
    where = event_where(f, p)
    return copy_csv(store, f"SELECT {', '.join(EVENT_COLUMNS)} FROM audit_events WHERE {where} "
                           f"ORDER BY seq DESC LIMIT {p(limit)}", p.values, path)


def event_options(store) -> dict[str, list[str]]:
    """Distinct actions and entity types, for the filter pickers."""
    return {"actions": [a for (a,) in store.query("SELECT DISTINCT action FROM audit_events ORDER BY action")],
            "entity_types": [e for (e,) in store.query(
                "SELECT DISTINCT entity_type FROM audit_events ORDER BY entity_type")]}
