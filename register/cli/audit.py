"""``audit verify|anchor|rotate-key``: check the keyed hash chain of the audit trail against its anchors,
write the trail's head as an anchor, and rotate (or replace a lost) signing key."""

from __future__ import annotations

import json
from pathlib import Path

from register.cli.common import EXIT_OK, cli_actor, client_path
from register.db.store import Store
from register.errors import AuditChainBroken


def add_commands(sub) -> None:
    aud = sub.add_parser("audit", help="audit trail checks")
    asub = aud.add_subparsers(dest="audit_command", required=True)
    aver = asub.add_parser("verify", help="recompute the hash chain; check anchors (the anchor folder's always)")
    aver.add_argument("--anchor", action="append", metavar="FILE|signoff:ID", type=_anchor_argument,
                      help="also require the anchored event with its hash (a file from `audit anchor`, or "
                           "signoff:ID for the head a checklist sign-off recorded); repeatable")
    aver.set_defaults(func=cmd_audit_verify)
    aanc = asub.add_parser("anchor", help="print or write the trail's head (seq, hash, events, time) as JSON")
    aanc.add_argument("--out", metavar="FILE", type=client_path, help="write the anchor to FILE instead of printing it")
    aanc.set_defaults(func=cmd_audit_anchor)
    arot = asub.add_parser("rotate-key", help="sign new events with a new key (old keys kept for verification)")
    arot.add_argument("--lost", action="store_true",
                      help="the trail's current key is lost for good: start a new key and record the loss")
    arot.set_defaults(func=cmd_audit_rotate_key)


def _anchor_argument(text: str) -> str:
    """``--anchor``: a sign-off as given, a file as ``client_path`` resolves it."""
    return text if text.startswith("signoff:") else client_path(text)


def _anchor_from(store: Store, source: str):
    """An anchor from a JSON file written by ``audit anchor``, or ``signoff:ID`` (a checklist sign-off)."""
    from register.db.audit import Anchor
    from register.errors import InvalidAnchor

    if source.startswith("signoff:"):
        from register.governance.checklist import signoff_anchor

        number = source.removeprefix("signoff:")
        if not number.isdigit():
            raise InvalidAnchor(f"{source}: a sign-off anchor is signoff:ID with the sign-off's number")
        return signoff_anchor(store, int(number))
    try:
        data = json.loads(Path(source).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise InvalidAnchor(f"{source}: cannot be read as an anchor file ({error})") from error
    return Anchor.from_dict(data, source)


def cmd_audit_verify(store: Store, args) -> int:
    from register.db.audit import verify_chain

    anchors = [_anchor_from(store, source) for source in args.anchor or ()]
    report = verify_chain(store, anchors=anchors)
    if not report.ok:
        raise AuditChainBroken(f"first broken event {report.first_bad_seq} of {report.events}: {report.reason}")
    print(f"audit trail verifies: {report.events:,} events")
    if report.unsigned:
        print(f"  {report.unsigned:,} of them written before the trail was keyed (SHA-256, pinned by the keyring)")
    if report.unverifiable:
        print(f"  {report.unverifiable:,} of them signed with a key declared lost: their content cannot be "
              "checked (their order and links were)")
    for anchor in anchors:
        print(f"  anchor {anchor.source}: event {anchor.seq} still has hash {anchor.hash[:16]}...")
    _print_anchor_folder(store, report)
    return EXIT_OK


def _print_anchor_folder(store: Store, report) -> None:
    """The lines on the anchor folder, which ``verify_chain`` checked without being asked."""
    folder = store.anchors
    if folder.path is None:
        return
    newest = report.newest
    if newest is None:
        print(f"  anchor folder {folder.path}: no anchor kept yet (one is kept after the first write of each UTC "
              "day and at every sign-off, publish and key change)")
    else:
        print(f"  anchor folder {folder.path}: {report.kept:,} anchor(s) hold; the newest, event {newest.seq}, still "
              f"has hash {newest.hash[:16]}...")
    if (warning := folder.warning()) is not None:
        print(f"  warning: {warning}")


def cmd_audit_anchor(store: Store, args) -> int:
    from register.db.audit import head

    anchor = head(store)
    text = json.dumps(anchor.as_dict(), indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
        print(f"wrote the audit head (event {anchor.seq}, {anchor.events:,} events) to {args.out}")
    else:
        print(text)
    return EXIT_OK


def cmd_audit_rotate_key(store: Store, args) -> int:
    from register.access.audit_keys import declare_key_lost, rotate_key

    if args.lost:
        new_key, lost = declare_key_lost(store, cli_actor())
        print(f"declared audit key(s) {', '.join(lost)} lost; new events are signed with {new_key} "
              f"(keyring {store.keyring.path})")
    else:
        old_key, new_key = rotate_key(store, cli_actor())
        print(f"rotated the audit key: {old_key} signed the rotation event; new events are signed with {new_key} "
              f"(keyring {store.keyring.path}, old keys kept). Back the keyring up now.")
    return EXIT_OK
