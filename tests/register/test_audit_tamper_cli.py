"""Every kind of tampering with the audit trail fails ``python -m register audit verify`` in the default set-up:
the keyring beside the database, the anchors in the default anchor folder, no ``--anchor`` given (issue 34,
class 5).

The kinds: an event edited, deleted, reordered; the newest events truncated; an event appended by a writer
without the key (unsigned, or with a guessed signature); the trail re-chained with the unkeyed scheme after
deleting the keyring; the keyring deleted or replaced by another; the database file rolled back to an older
copy. Edits, deletions, reorderings, appends and a deleted keyring were caught before anchors left the database;
truncation, an unkeyed re-chain, a replaced keyring and a rollback passed ``audit verify``.
"""

from __future__ import annotations

import hashlib
import hmac
import shutil
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from register import Actor, Store
from register.db.anchors import AnchorFolder, anchor_dir
from register.db.audit import GENESIS_HASH, event_hash, event_mac
from register.db.keyring import KeyedAfter, Keyring
from register.governance import checklist as chk
from tests.helpers.paths import REPO_ROOT

DATA = REPO_ROOT / "tests" / "data" / "import"
FIELDS = ("seq, occurred_at, actor_name, actor_role, action, entity_type, entity_id, before, after, prev_hash, "
          "hash, key_id")
BROKEN = "Audit trail does not verify:"


@dataclass(frozen=True)
class Trail:
    """A register written through the command line: ``signed`` is the sign-off's event (anchored), ``events`` the
    trail's length (a user added after the sign-off: an unanchored tail), ``older`` a copy of the database file
    taken before the sign-off."""

    cli: object
    signed: int
    events: int
    older: Path

    @property
    def db(self) -> Path:
        return self.cli.db  # type: ignore[attr-defined]

    @property
    def keyring(self) -> Path:
        return self.db.with_name(self.db.name + ".audit-key")

    def verify(self):
        return self.cli("audit", "verify")  # type: ignore[operator]


@pytest.fixture
def cli(register_cli):
    return register_cli("Olive Operator")


def copy_file(source: Path, target: Path) -> None:
    """Copy a closed DuckDB file (and its write-ahead log, if one was left) as a backup or an attacker would."""
    shutil.copyfile(source, target)
    wal = source.with_name(source.name + ".wal")
    target.with_name(target.name + ".wal").unlink(missing_ok=True)
    if wal.exists():
        shutil.copyfile(wal, target.with_name(target.name + ".wal"))


@pytest.fixture
def trail(cli, tmp_path) -> Trail:
    assert cli("init").returncode == 0
    assert cli("import", str(DATA / "responses.jsonl")).returncode == 0
    assert cli("users", "add", "rita", "--role", "reviewer").returncode == 0
    assert cli("checklist", "run", "--record").returncode == 0
    older = tmp_path / "older.duckdb"
    copy_file(cli.db, older)
    store = Store(cli.db)
    try:
        run = store.scalar("SELECT max(run_id) FROM checklist_runs")
        chk.sign(store, Actor("rita", "reviewer"), run,
                 {c.no: {"decision": "waived", "reason": "a tamper test"} for c in chk.CHECKS})
        signed = store.scalar("SELECT seq FROM audit_events WHERE action = 'checklist.sign'")
    finally:
        store.close()
    assert cli("users", "add", "later", "--role", "viewer").returncode == 0
    ok = cli("audit", "verify")
    assert ok.returncode == 0, ok.stderr
    events = int(ok.stdout.split("verifies: ")[1].split()[0].replace(",", ""))
    assert events > signed
    return Trail(cli, signed, events, older)


def tamper(db: Path, *statements: tuple[str, list]) -> None:
    """Change rows behind the register's back, as someone with write access to the database file could."""
    store = Store(db)
    try:
        with store.cursor() as cur:
            for sql, params in statements:
                cur.execute(sql, params)
    finally:
        store.close()


def rows(db: Path) -> list[dict]:
    store = Store(db)
    try:
        return store.dicts(f"SELECT {FIELDS} FROM audit_events ORDER BY seq")
    finally:
        store.close()


def rechain(db: Path, signer: tuple[str, bytes] | None = None) -> None:
    """Recompute every event's hash from the first on, each linked to the one before: with the unkeyed SHA-256
    (``key_id`` NULL) when ``signer`` is None, else signed with ``signer`` (key id, secret)."""
    prev, statements = GENESIS_HASH, []
    for e in rows(db):
        content = (e["seq"], e["occurred_at"], e["actor_name"], e["actor_role"], e["action"], e["entity_type"],
                   e["entity_id"], e["before"], e["after"])
        digest = event_hash(prev, *content) if signer is None else event_mac(signer[1], signer[0], prev, *content)
        statements.append(("UPDATE audit_events SET prev_hash = ?, hash = ?, key_id = ? WHERE seq = ?",
                           [prev, digest, None if signer is None else signer[0], e["seq"]]))
        prev = digest
    tamper(db, *statements)


def has_keying_record(db: Path) -> bool:
    store = Store(db)
    try:
        return bool(store.scalar("SELECT count(*) FROM information_schema.tables WHERE table_name = 'audit_keying'"))
    finally:
        store.close()


def forget_keying(db: Path) -> None:
    """What a forger who read the code also does: delete the register's own record of where keying began."""
    if has_keying_record(db):
        tamper(db, ("DELETE FROM audit_keying", []))


# --- caught before anchors left the database -----------------------------------------------------------------


def test_an_edited_event_fails(trail):
    tamper(trail.db, ("UPDATE audit_events SET actor_name = 'Mallory' WHERE seq = 3", []))
    result = trail.verify()
    assert result.returncode == 1 and result.stderr.startswith(BROKEN)
    assert "first broken event 3 of" in result.stderr and "edited" in result.stderr


def test_a_deleted_event_fails(trail):
    tamper(trail.db, ("DELETE FROM audit_events WHERE seq = 4", []))
    result = trail.verify()
    assert result.returncode == 1 and result.stderr.startswith(BROKEN)
    assert "first broken event 5 of" in result.stderr and "event 4 is missing" in result.stderr


def test_reordered_events_fail(trail):
    tamper(trail.db, ("UPDATE audit_events SET seq = -1 WHERE seq = 3", []),
           ("UPDATE audit_events SET seq = 3 WHERE seq = 6", []),
           ("UPDATE audit_events SET seq = 6 WHERE seq = -1", []))
    result = trail.verify()
    assert result.returncode == 1 and "first broken event 3 of" in result.stderr


@pytest.mark.parametrize("how", ["unsigned", "guessed signature"])
def test_an_event_appended_without_the_key_fails(trail, how):
    last = rows(trail.db)[-1]
    forged = [last["seq"] + 1, last["occurred_at"] + timedelta(seconds=1), "Mallory", "admin", "user.create", "user",
              "mallory", None, None]
    if how == "unsigned":
        digest, key_id = event_hash(last["hash"], *forged), None
    else:
        digest, key_id = event_mac(b"\0" * 32, last["key_id"], last["hash"], *forged), last["key_id"]
    tamper(trail.db, (f"INSERT INTO audit_events ({FIELDS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      [*forged, last["hash"], digest, key_id]))
    result = trail.verify()
    assert result.returncode == 1 and f"first broken event {last['seq'] + 1} of" in result.stderr
    assert ("not signed with the audit key" if how == "unsigned" else "signed hash") in result.stderr


def test_a_deleted_keyring_fails_and_is_not_made_again(trail):
    trail.keyring.unlink()
    result = trail.verify()
    assert result.returncode == 1 and result.stderr.startswith(BROKEN) and "there is no keyring" in result.stderr
    write = trail.cli("users", "add", "someone", "--role", "viewer")
    assert write.returncode == 1 and write.stderr.startswith("Audit key unavailable:")
    assert not trail.keyring.exists()


# --- caught since: the register records where keying began, anchors kept outside the database --------------


def test_a_truncated_trail_fails(trail):
    """The sign-off's event and everything after it deleted: what remains chains, the anchor folder tells."""
    tamper(trail.db, ("DELETE FROM audit_events WHERE seq >= ?", [trail.signed]))
    result = trail.verify()
    assert result.returncode == 1 and result.stderr.startswith(BROKEN)
    assert f"the anchored event {trail.signed}" in result.stderr and "no longer in the trail" in result.stderr


def test_an_unkeyed_re_chain_after_deleting_the_keyring_fails(trail):
    """The probe's attack: the keyring deleted, every hash recomputed with the unkeyed scheme. The register's
    record of where keying began names it; no write makes a fresh keyring that would pin the forged trail."""
    trail.keyring.unlink()
    rechain(trail.db)
    result = trail.verify()
    assert result.returncode == 1 and result.stderr.startswith(BROKEN)
    assert "keyed after event 0" in result.stderr and "there is no keyring" in result.stderr
    write = trail.cli("users", "add", "someone", "--role", "viewer")
    assert write.returncode == 1 and write.stderr.startswith("Audit key unavailable:")
    assert not trail.keyring.exists()
    assert trail.verify().returncode == 1


def test_an_unkeyed_re_chain_that_also_deletes_the_keying_record_fails(trail):
    """The same, by a forger who also deleted the register's record of the keying: the anchors kept outside the
    database name the re-chained events, and still no write makes a fresh keyring."""
    trail.keyring.unlink()
    rechain(trail.db)
    forget_keying(trail.db)
    result = trail.verify()
    assert result.returncode == 1 and result.stderr.startswith(BROKEN)
    assert "re-chained" in result.stderr and "anchor folder" in result.stderr
    write = trail.cli("users", "add", "someone", "--role", "viewer")
    assert write.returncode == 1 and write.stderr.startswith("Audit key unavailable:")
    assert "anchor" in write.stderr and not trail.keyring.exists()


@pytest.mark.parametrize("record", ["kept", "rewritten"])
def test_a_replaced_keyring_with_the_trail_re_signed_fails(trail, record):
    """The keyring deleted, a fresh one made and every event re-signed with its key: the register's record of its
    keyring names the substitute; a forger who rewrote that record too is caught by the anchors."""
    trail.keyring.unlink()
    data = Keyring(trail.keyring).create(KeyedAfter(0, GENESIS_HASH))
    secret = data.secret(data.first_key)
    assert secret is not None
    rechain(trail.db, (data.first_key, secret))
    if record == "rewritten" and has_keying_record(trail.db):
        check = hmac.new(secret, b"hri-audit-key-check/1", hashlib.sha256).hexdigest()
        tamper(trail.db, ("UPDATE audit_keying SET first_key = ?, key_check = ?", [data.first_key, check]))
    result = trail.verify()
    assert result.returncode == 1 and result.stderr.startswith(BROKEN)
    if record == "kept":
        assert "not in the keyring" in result.stderr and "replaced" in result.stderr
    else:
        assert "anchor folder" in result.stderr and "no longer has the anchored hash" in result.stderr


@pytest.mark.parametrize("written_since", [False, True])
def test_a_database_rolled_back_to_an_older_copy_fails(trail, written_since):
    """The database file replaced by the copy taken before the sign-off; the anchor folder still holds the
    sign-off's head. Writes after the rollback grow the trail again, past the anchored event, under other hashes."""
    copy_file(trail.older, trail.db)
    if written_since:
        for i in range(trail.events - trail.signed + 1):
            assert trail.cli("users", "add", f"after-{i}", "--role", "viewer").returncode == 0
    result = trail.verify()
    assert result.returncode == 1 and result.stderr.startswith(BROKEN)
    if written_since:
        assert f"event {trail.signed} no longer has the anchored hash" in result.stderr
    else:
        assert f"the anchored event {trail.signed}" in result.stderr and "older copy" in result.stderr


# --- what `audit verify` says of the anchor folder ---------------------------------------------------------------


def test_verify_names_the_anchor_folder_and_its_newest_anchor(trail):
    result = trail.verify()
    first, *added = result.stdout.splitlines()
    assert first == f"audit trail verifies: {trail.events:,} events"  # the line scripts read, as it was
    # the anchors, in the default folder: after the day's first write (init), at the sign-off and at the end of each
    # command that wrote, so the newest is the trail's head
    kept = AnchorFolder(anchor_dir(trail.db), trail.db).read()
    assert max(a.seq for a in kept) == trail.events
    assert added == [f"  anchor folder {anchor_dir(trail.db)}: {len(kept)} anchor(s) hold; the newest, event "
                     f"{trail.events}, still has hash {rows(trail.db)[trail.events - 1]['hash'][:16]}..."]


def test_verify_says_when_no_anchor_is_kept_yet_and_warns_of_a_folder_beside_the_database(cli, monkeypatch):
    empty = cli("audit", "verify")
    assert empty.returncode == 0 and "no anchor kept yet" in empty.stdout
    monkeypatch.setenv("HRI_ANCHOR_DIR", str(cli.db.with_name("anchors")))
    assert cli("init").returncode == 0
    beside = cli("audit", "verify")
    assert beside.returncode == 0 and anchor_dir(cli.db).parent == cli.db.with_name("anchors")
    assert f"  anchor folder {anchor_dir(cli.db)}: 1 anchor(s) hold" in beside.stdout
    assert "  warning: the audit anchor folder" in beside.stdout and "inside the database's folder" in beside.stdout
