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
with the anchored hash. The anchors the register keeps by itself, outside the database, live in its anchor
folder (``register.db.anchors``): ``verify_chain`` checks them without being asked.

Where keying began is recorded twice: in the keyring (``keyed_after``) and in the register itself (table
``audit_keying``, migration 042, written with the first event a keyring signs). Once the register records it, a
missing keyring, or one that is not the recorded one, fails verification and every write: the keyring is never
made again on its own (only ``audit rotate-key --lost`` starts a new one), and an unsigned event after the first
recorded head is a forgery.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from hri_core import fingerprint as fingerprints
from register.db.export import EXPORT_LIMIT, CsvExport, copy_csv
from register.db.keyring import KeyedAfter, Keyring, KeyringData
from register.db.sql import Params
from register.errors import AuditKeyError, InvalidAnchor

if TYPE_CHECKING:  # the anchor folder reads and writes anchors of this module: imported for typing only
    from register.db.anchors import AnchorFolder

GENESIS_HASH = "0" * 64
HMAC_SCHEME = "hmac-sha256/1"
ROTATION_ACTION = "audit.key_rotated"   # signed with the old key; names the new one
KEY_LOST_ACTION = "audit.key_lost"      # signed with a new keyring's first key; names the lost ones
ANCHOR_FORMAT = "hri-audit-anchor/1"
KEY_CHECK_TEXT = b"hri-audit-key-check/1"  # what a key's check value is the HMAC of (``key_check``)
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


# --- where keying began, as the register records it ----------------------------------------------------


def key_check(secret: bytes) -> str:
    """A key's check value: the HMAC of a fixed text under it. Tells a substitute key apart from the recorded one
    (same id, another secret) without revealing anything of the key."""
    return hmac.new(secret, KEY_CHECK_TEXT, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Keying:
    """One keyring the trail was signed under, as the register recorded it (table ``audit_keying``): the trail's
    head when the keyring was made, its first key and that key's check value (None when recovered by migration)."""

    keyed_after: KeyedAfter
    first_key: str
    key_check: str | None
    recorded_at: datetime


def keyings(reader) -> list[Keying]:
    """Every keyring the register recorded, oldest first (``reader``: a store or a write's transaction)."""
    return [Keying(KeyedAfter(seq, digest), key, check, at) for seq, digest, key, check, at in reader.query(
        "SELECT keyed_after_seq, keyed_after_hash, first_key, key_check, recorded_at FROM audit_keying "
        "ORDER BY keyed_after_seq, recorded_at")]


def record_keying(tx, data: KeyringData) -> None:
    """Record in the register, in the write's transaction ``tx``, that the keyring ``data`` signs from its head on
    (once: a keyring already recorded is left as it is)."""
    secret = data.secret(data.first_key)
    tx.execute("INSERT INTO audit_keying (keyed_after_seq, keyed_after_hash, first_key, key_check, recorded_at) "
               "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
               [data.keyed_after.seq, data.keyed_after.hash, data.first_key,
                None if secret is None else key_check(secret), datetime.now(UTC)])


def start_keyring(tx, keyring: Keyring, keyed_after: KeyedAfter, *, lost: dict[str, dict[str, str]] | None = None,
                  keep: dict[str, dict[str, str]] | None = None) -> KeyringData:
    """Make the keyring file (``Keyring.create``) and record it in the register in the write's transaction ``tx``."""
    data = keyring.create(keyed_after, lost=lost, keep=keep)
    record_keying(tx, data)
    return data


def register_id(reader) -> str | None:
    """The register's own id (migration 042), written into every anchor kept outside the database."""
    return reader.scalar("SELECT register_id FROM register_identity ORDER BY created_at LIMIT 1")


def _keyring_gone(keyring: Keyring, keying: Keying) -> str:
    return (f"the register recorded that its audit trail was keyed after event {keying.keyed_after.seq} (on "
            f"{keying.recorded_at:%Y-%m-%d}, first key {keying.first_key}), but there is no keyring at "
            f"{keyring.path}: it was deleted or moved, and it is never made again on its own. Restore it from a "
            "backup (or point HRI_AUDIT_KEYRING at it); if it is lost for good, declare it lost with "
            "`python -m register audit rotate-key --lost`")


def keyring_problem(keyring: Keyring, data: KeyringData | None, recorded: list[Keying]) -> tuple[int, str] | None:
    """(first event concerned, why) when the keyring is not the one the register recorded: missing, without a
    recorded key, holding another secret under a recorded key's id, or made at another head. None when it is."""
    if not recorded:
        return None
    if data is None:
        return recorded[0].keyed_after.seq + 1, _keyring_gone(keyring, recorded[0])
    for keying in recorded:
        seq, key = keying.keyed_after.seq + 1, keying.first_key
        if key in data.lost:
            continue  # declared lost: its events' content is no longer checked (their order and links are)
        secret = data.secret(key)
        if secret is None:
            return seq, (f"audit key {key}, which the register recorded as the first key of the keyring its trail "
                         f"was signed with after event {keying.keyed_after.seq}, is not in the keyring at "
                         f"{keyring.path}: the keyring was replaced or edited; restore the register's own keyring "
                         "from a backup")
        if keying.key_check is not None and key_check(secret) != keying.key_check:
            return seq, (f"the keyring at {keyring.path} holds another secret under audit key {key} than the one "
                         "the register recorded: the keyring was replaced; restore the register's own keyring "
                         "from a backup")
    newest = recorded[-1]
    if data.keyed_after != newest.keyed_after:
        return newest.keyed_after.seq + 1, (
            f"the keyring at {keyring.path} was made when the trail ended at event {data.keyed_after.seq}, but the "
            f"register recorded its keyring as made at event {newest.keyed_after.seq}: it is not this register's "
            "keyring (replaced, or the register's record was rewritten); restore the register's own keyring")
    return None


def signing_key(reader, keyring: Keyring, previous: _Link | None, *, anchors: AnchorFolder | None = None,
                writing: bool = True) -> tuple[str, bytes]:
    """(key id, secret) for the event after ``previous`` (``reader``: the write's transaction).

    The first write of a trail never keyed makes the keyring and records it in the register (``writing`` False:
    only say which key would sign; nothing is made or recorded, ``reader`` may be a store). Once the
    trail is keyed the keyring is never made again: a keyed trail whose keyring is missing, or whose key is not
    in it, refuses every write (``AuditKeyError``), as does a register that recorded a keyring now missing, or
    whose anchor folder (``anchors``) holds an anchor of a signed head; ``audit rotate-key --lost`` is the way on.
    """
    data = keyring.load()
    if data is None:
        if previous is not None and previous.key_id is not None:
            raise AuditKeyError(_missing_key(keyring, previous.key_id, previous.seq))
        if recorded := keyings(reader):
            raise AuditKeyError(_keyring_gone(keyring, recorded[0]))
        if anchors is not None and (signed := anchors.keyed(register_id(reader))) is not None:
            raise AuditKeyError(
                f"there is no audit keyring at {keyring.path}, but the anchor folder {anchors.path} shows the trail "
                f"was keyed ({signed.source}: event {signed.seq} signed with key {signed.key_id}): the keyring was "
                "deleted and is not made again on its own; restore it from a backup (or point HRI_AUDIT_KEYRING at "
                "it) and run `python -m register audit verify`")
        if not writing:
            raise AuditKeyError(f"there is no audit keyring at {keyring.path} yet: the trail's first write makes it")
        head = KeyedAfter(previous.seq, previous.hash) if previous else KeyedAfter(0, GENESIS_HASH)
        data = start_keyring(reader, keyring, head)
    elif previous is None or previous.key_id is None:
        if previous is not None and previous.seq > data.keyed_after.seq:
            raise AuditKeyError(f"the trail's newest event {previous.seq} is not signed, but the keyring at "
                                f"{keyring.path} signs every event after event {data.keyed_after.seq}: the trail "
                                "was rewritten; run `python -m register audit verify`")
        if writing:  # the first event this keyring signs: the register records the keyring in the same transaction
            record_keying(reader, data)
    key_id = next_key_id(data, previous)
    secret = data.secret(key_id)
    if secret is None:
        raise AuditKeyError(_missing_key(keyring, key_id, previous.seq + 1 if previous else 1))
    return key_id, secret


def append_event(tx, actor, action: str, entity_type: str, entity_id: str | None,
                 before: Any = None, after: Any = None, *, keyring: Keyring,
                 anchors: AnchorFolder | None = None) -> int:
    """Append one signed event inside the caller's transaction (a ``Transaction``); returns its sequence number."""
    return append_events(tx, actor, [(action, entity_type, entity_id, before, after)], keyring=keyring,
                         anchors=anchors)


def append_events(tx, actor, events: Iterable[tuple[str, str, str | None, Any, Any]], *, keyring: Keyring,
                  anchors: AnchorFolder | None = None) -> int:
    """Append ``events`` (action, entity_type, entity_id, before, after), in order and chained, inside the caller's
    transaction; returns the last one's sequence number. The same events ``append_event`` would write one by one,
    with one read of the trail's head per signing key: a register import's hundreds of row events are one write.
    After a key rotation the head is read again, so the event after it is signed with the new key."""
    pending = list(events)
    if not pending:
        raise ValueError("append_events needs at least one event")
    seq = 0
    while pending:
        previous = last_event(tx)
        key_id, secret = signing_key(tx, keyring, previous, anchors=anchors)
        seq, prev_hash = (previous.seq, previous.hash) if previous else (0, GENESIS_HASH)
        rows: list[list[Any]] = []
        for action, entity_type, entity_id, before, after in pending:
            seq += 1
            at = datetime.now(UTC)
            before_text, after_text = canonical_json(before), canonical_json(after)
            entity = None if entity_id is None else str(entity_id)
            digest = event_mac(secret, key_id, prev_hash, seq, at, actor.name, actor.role, action, entity_type,
                               entity, before_text, after_text)
            rows.append([seq, at, actor.name, actor.role, action, entity_type, entity, before_text, after_text,
                         prev_hash, digest, key_id])
            prev_hash = digest
            if action == ROTATION_ACTION:  # the events after it are signed with the key it names
                break
        tx.insert_values("INSERT INTO audit_events (seq, occurred_at, actor_name, actor_role, action, entity_type, "
                         "entity_id, before, after, prev_hash, hash, key_id)", "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         rows)
        pending = pending[len(rows):]
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
    register: str | None = None  # the register's id, on the anchors of an anchor folder

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
        key_id, register = data.get("key_id"), data.get("register")
        return cls(seq, digest, events, moment, key_id if isinstance(key_id, str) else None, source,
                   register if isinstance(register, str) else None)


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
    order and links are); ``anchors``: how many of the anchors given were checked; ``kept``: how many of the
    anchor folder's, ``newest`` the one of the newest event among them.
    """

    ok: bool
    events: int
    first_bad_seq: int | None = None
    reason: str | None = None
    unsigned: int = 0
    unverifiable: int = 0
    anchors: int = 0
    kept: int = 0
    newest: Anchor | None = None


_EVENT_FIELDS = ("seq, occurred_at, actor_name, actor_role, action, entity_type, entity_id, before, after, "
                 "prev_hash, hash, key_id")


def _anchor_problem(anchor: Anchor, found: dict[int, tuple[str, str | None]], last: int) -> str | None:
    """Why the trail (ending at event ``last``; ``found``: the anchored events' hash and key) fails ``anchor``."""
    if anchor.seq == 0:
        return None  # anchored an empty trail: anything since extends it
    if anchor.seq not in found:
        return (f"{anchor.source}: the anchored event {anchor.seq} (of {anchor.events} events) is no longer in the "
                f"trail, which ends at event {last}: events were deleted, or the database file was replaced by an "
                "older copy")
    digest, key_id = found[anchor.seq]
    if digest == anchor.hash:
        return None
    reason = (f"{anchor.source}: event {anchor.seq} no longer has the anchored hash {anchor.hash[:16]}...: the trail "
              "was rewritten, or the database file was replaced by an older copy and written to since")
    if anchor.key_id and key_id != anchor.key_id:
        now = "is not signed" if key_id is None else f"is signed with key {key_id}"
        reason += (f" (the event was signed with audit key {anchor.key_id} when anchored and now {now}: the trail "
                   "was re-chained without its keyring)")
    return reason


def verify_chain(store, *, anchors: Iterable[Anchor] = (), keyring: Keyring | None = None,
                 anchor_folder: bool = True) -> ChainReport:
    """Recompute every hash in sequence order, then check each anchor: those given and (``anchor_folder``) every
    anchor of the store's anchor folder; report the first thing that fails. Before the chain, the keyring is held
    to the one the register recorded (``keyring_problem``) and the folder's anchors to the register's id.

    Reads the trail as a stream (memory bounded by a batch of events, not the trail)."""
    keyring = keyring or store.keyring
    given = list(anchors)
    count = store.scalar("SELECT count(*) FROM audit_events")
    folder = getattr(store, "anchors", None) if anchor_folder else None
    try:
        data = keyring.load()
        kept = folder.read() if folder is not None else []
    except (AuditKeyError, InvalidAnchor) as error:
        return ChainReport(False, count, None, str(error))
    recorded = keyings(store)
    if (wrong_keyring := keyring_problem(keyring, data, recorded)) is not None:
        return ChainReport(False, count, *wrong_keyring)
    register = register_id(store)
    if register is not None and (other := next((a for a in kept if a.register not in (None, register)), None)):
        return ChainReport(False, count, other.seq,
                           f"{other.source}: an anchor of another register ({other.register}; this database is "
                           f"register {register}): the database file was replaced. If it was replaced on purpose "
                           f"by a new register, move the anchor folder {getattr(folder, 'path', None)} away")
    if folder is not None and (missing := folder.recorded_problem(store, kept)) is not None:
        return ChainReport(False, count, None, missing)
    every = given + kept
    wanted = {anchor.seq for anchor in every}
    found: dict[int, tuple[str, str | None]] = {}
    keyed_after = data.keyed_after if data else KeyedAfter(0, GENESIS_HASH)
    # unsigned events may only come before the first head the register or the keyring recorded
    unsigned_until = min([k.keyed_after.seq for k in recorded] + ([keyed_after.seq] if data else []), default=None)
    pins = {k.keyed_after.seq: k.keyed_after.hash for k in recorded if k.keyed_after.seq > 0}
    if data is not None and keyed_after.seq > 0:
        pins[keyed_after.seq] = keyed_after.hash
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
                if unsigned_until is not None and seq > unsigned_until:
                    return broken(seq, f"event {seq} is not signed with the audit key, but every event after "
                                       f"event {unsigned_until} must be: it was forged or rewritten")
                if event_hash(prev_hash, seq, at, name, role, action, etype, eid, before, after) != stored_hash:
                    return broken(seq, f"event {seq} content does not match its hash (edited)")
                unsigned += 1
            elif not recorded:
                return broken(seq, f"event {seq} is signed with audit key {key_id}, but the register holds no record "
                                   "of where its trail was keyed (table audit_keying): the record was deleted")
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
            if seq in pins and stored_hash != pins[seq]:
                return broken(seq, f"event {seq} is not the event the keyring recorded when the trail was "
                                   "keyed: the trail up to it was rewritten")
            if seq in wanted:
                found[seq] = (stored_hash, key_id)
            previous = _Link(seq, stored_hash, key_id, action, after if action == ROTATION_ACTION else None)
            prev_hash, expected_seq = stored_hash, seq + 1
    last = expected_seq - 1
    if pins and last < (held := max(pins)):
        return broken(last + 1, f"the trail ends at event {last}, but the keyring was made when it held "
                                f"{held} events: events were deleted")
    for anchor in every:
        if (problem := _anchor_problem(anchor, found, last)) is not None:
            return broken(anchor.seq, problem)
    newest = max(reversed(kept), key=lambda anchor: anchor.seq) if kept else None
    return ChainReport(True, count, None, None, unsigned, unverifiable, len(given), len(kept), newest)


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
