"""Who may change the audit trail's signing key, and how: rotation and a declared loss.

The mechanics live in ``register.db.keyring`` (the file) and ``register.db.audit`` (which key signs
which event). Both actions are audited events of the trail itself and need ``Permission.AUDIT_KEYS``
(admins; the command line's ``system`` role). ``python -m register audit rotate-key [--lost]`` calls them.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime

from register.access.permissions import Permission, authorize
from register.db import audit
from register.db.keyring import KeyedAfter
from register.db.store import Actor, Change, Store, Transaction
from register.errors import AuditKeyError

__all__ = ["declare_key_lost", "rotate_key"]


def rotate_key(store: Store, actor: Actor) -> tuple[str, str]:
    """Add a new key to the keyring and record a rotation event signed with the current key; every later
    event is signed with the new key. Returns (old key id, new key id). Old keys stay in the keyring, so
    the events they signed keep verifying."""
    authorize(store, actor, Permission.AUDIT_KEYS, entity_type="audit_key")
    # the current key must be usable: a rotation is signed with it (a lost key is declared, not rotated)
    old_key, _ = audit.signing_key(store, store.keyring, audit.last_event(store), anchors=store.anchors,
                                   writing=False)
    new_key = store.keyring.add_key()  # before the event: the event names a key the keyring already holds

    def fn(tx: Transaction) -> Change:
        previous = audit.last_event(tx)
        data = store.keyring.load()
        current = audit.next_key_id(data, previous) if data else old_key
        return Change("audit_key", new_key, {"key": current}, {"new_key": new_key}, result=(current, new_key))

    return store.write(actor, audit.ROTATION_ACTION, fn)


def declare_key_lost(store: Store, actor: Actor) -> tuple[str, list[str]]:
    """The keyring, or the trail's current key in it, is gone for good: start a keyring whose first key
    signs every new event, and record which keys are lost. Returns (new key id, lost key ids).

    The events the lost keys signed stay in the trail; their order and links still verify, their content
    no longer can (``verify_chain`` counts them as unverifiable). Keys the old keyring still holds are
    kept; the old keyring file is kept beside the new one as ``<name>.replaced-<UTC time>``.
    """
    authorize(store, actor, Permission.AUDIT_KEYS, entity_type="audit_key")
    keyring = store.keyring
    old = keyring.load()
    used = [key for (key,) in store.query(
        "SELECT DISTINCT key_id FROM audit_events WHERE key_id IS NOT NULL ORDER BY key_id")]
    known = old.keys if old else {}
    lost = [key for key in used if key not in known and key not in (old.lost if old else {})]
    if not lost:
        raise AuditKeyError(f"every key of the audit trail is in the keyring {keyring.path}: nothing is lost "
                            "(to replace the key, run `python -m register audit rotate-key`)")
    now = datetime.now(UTC).isoformat()
    declared = {**(old.lost if old else {}), **{key: {"declared_at": now, "by": actor.name} for key in lost}}

    def fn(tx: Transaction) -> Change:
        top = audit.head(tx)
        if keyring.exists():
            shutil.move(keyring.path, keyring.path.with_name(
                f"{keyring.path.name}.replaced-{datetime.now(UTC):%Y%m%dT%H%M%SZ}"))
        data = audit.start_keyring(tx, keyring, KeyedAfter(top.seq, top.hash), lost=declared, keep=known)
        return Change("audit_key", data.first_key, None,
                      {"lost_keys": lost, "new_key": data.first_key, "keyed_after": top.seq},
                      result=(data.first_key, lost))

    return store.write(actor, audit.KEY_LOST_ACTION, fn)
