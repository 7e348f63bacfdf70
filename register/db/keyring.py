"""The audit trail's keyring: the HMAC keys that sign audit events, kept outside the database file.

A keyring is a JSON file (mode 0600) beside the database (``<db>.audit-key``) or where
``HRI_AUDIT_KEYRING`` says. It holds every key the trail was ever signed with, by key id (old keys
stay so that old events keep verifying), the id of the first key, the keys declared lost, and the head
of the trail when the keyring was made (``keyed_after``): events up to that head may be unsigned
(written before the trail was keyed) or signed with a lost key; every later event must be signed.

    {"format": "hri-audit-keyring/1",
     "keyed_after": {"seq": 41, "hash": "9f2c..."},
     "first_key": "k3f9a02c1",
     "keys": {"k3f9a02c1": {"secret": "<64 hex digits>", "created_at": "2026-11-30T09:00:00+00:00"}},
     "lost": {"k77be01d2": {"declared_at": "...", "by": "olive"}}}

A keyring readable or writable by other users is refused, as ``ssh`` refuses such a private key: the
key is the only thing a writer of the database file lacks to forge events. Writes replace the file
atomically (write a temp file with mode 0600, then rename), so a crash leaves the old or the new
keyring, never half of one.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from register.errors import AuditKeyError

FORMAT = "hri-audit-keyring/1"
KEY_BYTES = 32  # HMAC-SHA256 keys of 256 bits


@dataclass(frozen=True)
class KeyedAfter:
    """The trail's head (sequence number and hash) when the keyring was made: an anchor of its own."""

    seq: int
    hash: str


@dataclass
class KeyringData:
    keyed_after: KeyedAfter
    first_key: str
    keys: dict[str, dict[str, str]]
    lost: dict[str, dict[str, str]] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "keyed_after": {"seq": self.keyed_after.seq, "hash": self.keyed_after.hash},
                "first_key": self.first_key, "keys": self.keys, "lost": self.lost}

    def secret(self, key_id: str) -> bytes | None:
        entry = self.keys.get(key_id)
        return None if entry is None else bytes.fromhex(entry["secret"])


def new_key_id() -> str:
    """A random key id (``k`` + 8 hex digits): a recreated keyring never reuses an old key's id, so an
    event signed with a lost key is reported as such rather than as edited."""
    return "k" + secrets.token_hex(4)


def _new_key() -> dict[str, str]:
    return {"secret": secrets.token_hex(KEY_BYTES), "created_at": datetime.now(UTC).isoformat()}


class Keyring:
    """The keyring file of one database; read on use (cached until the file changes)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._cache: tuple[tuple[int, int, int], KeyringData] | None = None

    def exists(self) -> bool:
        return self.path.exists()

    def load(self) -> KeyringData | None:
        """The keyring, or None when there is no file. ``AuditKeyError`` when it is unsafe or unreadable."""
        try:
            info = self.path.stat()
        except FileNotFoundError:
            return None
        except OSError as error:
            raise AuditKeyError(f"cannot read the audit keyring {self.path}: {error}") from error
        if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise AuditKeyError(f"the audit keyring {self.path} is open to other users "
                                f"(mode {stat.S_IMODE(info.st_mode):04o}): run `chmod 600 {self.path}`")
        signature = (info.st_ino, info.st_mtime_ns, info.st_size)
        if self._cache is not None and self._cache[0] == signature:
            return self._cache[1]
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            if raw.get("format") != FORMAT:
                raise ValueError(f"format {raw.get('format')!r} is not {FORMAT!r}")
            data = KeyringData(KeyedAfter(int(raw["keyed_after"]["seq"]), str(raw["keyed_after"]["hash"])),
                               str(raw["first_key"]), {str(k): dict(v) for k, v in raw["keys"].items()},
                               {str(k): dict(v) for k, v in (raw.get("lost") or {}).items()})
            for key_id, entry in data.keys.items():
                if len(bytes.fromhex(entry["secret"])) != KEY_BYTES:
                    raise ValueError(f"key {key_id} is not {KEY_BYTES} bytes")
            if data.first_key not in data.keys:
                raise ValueError(f"first_key {data.first_key} is not among the keys")
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            raise AuditKeyError(f"the audit keyring {self.path} cannot be read ({error}): restore it from "
                                "a backup") from error
        self._cache = (signature, data)
        return data

    def create(self, keyed_after: KeyedAfter, *, lost: dict[str, dict[str, str]] | None = None,
               keep: dict[str, dict[str, str]] | None = None) -> KeyringData:
        """A new keyring with one fresh key (its first key), made when the trail's head is ``keyed_after``;
        ``keep``: keys of an older keyring that still verify their events; ``lost``: keys declared lost.

        Refuses to replace an existing file (a lost keyring is replaced only after it was moved away)."""
        if self.path.exists():
            raise AuditKeyError(f"the audit keyring {self.path} already exists")
        key_id = new_key_id()
        data = KeyringData(keyed_after, key_id, {**(keep or {}), key_id: _new_key()}, dict(lost or {}))
        self._write(data, exclusive=True)
        return data

    def add_key(self) -> str:
        """Add a fresh key (for a rotation); returns its id. The old keys stay."""
        data = self.load()
        if data is None:
            raise AuditKeyError(f"there is no audit keyring at {self.path} to add a key to")
        key_id = new_key_id()
        data = KeyringData(data.keyed_after, data.first_key, {**data.keys, key_id: _new_key()}, dict(data.lost))
        self._write(data, exclusive=False)
        return key_id

    def _write(self, data: KeyringData, *, exclusive: bool) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temp = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}.tmp")
        text = json.dumps(data.as_json(), indent=2) + "\n"
        descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # never readable by others
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            if exclusive:
                os.link(temp, self.path)  # fails if a keyring appeared meanwhile: never overwrite one
            else:
                os.replace(temp, self.path)
        except FileExistsError as error:
            raise AuditKeyError(f"the audit keyring {self.path} already exists") from error
        finally:
            temp.unlink(missing_ok=True)
        self._cache = None
