"""The key that signs the console's session cookie, and the cookie's value: ``v1.<session id>.<HMAC-SHA256>``.

The key lives beside the database file (``<db>.session-key``, 32 random bytes as hex, mode 0600), made on first
use and never in the repository; like the audit keyring (``register.db.keyring``) a key file readable or writable
by other users is refused. Losing it only logs everyone out (a new key is made; old cookies no longer verify).

The signature is a second lock on a door that already has one: the session id is 256 random bits, looked up by its
hash (``register.access.web_sessions``). It means a cookie that was not issued by this console (forged, edited,
from another database) is refused before any database read.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import os
import re
import secrets
import stat
import threading
from pathlib import Path

from register.errors import SessionKeyError

KEY_BYTES = 32
VERSION = "v1"
_CONTEXT = b"hri-console-session-cookie/1\x00"  # what the HMAC covers besides the id: this use of the key only
_COOKIE = re.compile(r"^v1\.([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{43})$")  # token_urlsafe(32), unpadded HMAC
_cache: dict[Path, tuple[tuple[int, int, int], bytes]] = {}
_lock = threading.Lock()


def key_path(database: str | Path) -> Path:
    """Where a database's session key lives: beside it, ``<file>.session-key``."""
    database = Path(database)
    return database.with_name(database.name + ".session-key")


def _read(path: Path) -> bytes | None:
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise SessionKeyError(f"cannot read the session key {path}: {error}") from error
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SessionKeyError(f"the session key {path} is open to other users (mode {stat.S_IMODE(info.st_mode):04o})"
                              f": run `chmod 600 {path}`")
    signature = (info.st_ino, info.st_mtime_ns, info.st_size)
    cached = _cache.get(path)
    if cached is not None and cached[0] == signature:
        return cached[1]
    try:
        key = bytes.fromhex(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError) as error:
        raise SessionKeyError(f"the session key {path} cannot be read ({error}): delete it and a new one is made "
                              "(everyone logs in again)") from error
    if len(key) != KEY_BYTES:
        raise SessionKeyError(f"the session key {path} is not {KEY_BYTES} bytes: delete it and a new one is made")
    _cache[path] = (signature, key)
    return key


def session_key(database: str | Path) -> bytes:
    """The database's session key, made (mode 0600, never overwriting one another process made) on first use."""
    path = key_path(database)
    with _lock:
        key = _read(path)
        if key is not None:
            return key
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # never readable by others
        try:
            with os.fdopen(descriptor, "w", encoding="ascii") as handle:
                handle.write(secrets.token_hex(KEY_BYTES) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            with contextlib.suppress(FileExistsError):  # a key made meanwhile by another process is kept
                os.link(temp, path)
        finally:
            temp.unlink(missing_ok=True)
        key = _read(path)
    if key is None:  # pragma: no cover - made just above
        raise SessionKeyError(f"the session key {path} could not be made")
    return key


def _mac(key: bytes, session_id: str) -> str:
    digest = hmac.new(key, _CONTEXT + session_id.encode("ascii"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def sign(key: bytes, session_id: str) -> str:
    """The cookie's value for ``session_id`` (``secrets.token_urlsafe(32)``)."""
    if not re.fullmatch(r"[A-Za-z0-9_-]{43}", session_id):
        raise ValueError("a session id is 43 URL-safe characters (secrets.token_urlsafe(32))")
    return f"{VERSION}.{session_id}.{_mac(key, session_id)}"


def verify(key: bytes, value: str | None) -> str | None:
    """The session id a cookie's value carries when its signature verifies under ``key``; None for anything else
    (no cookie, another format, another key, an edited id or signature)."""
    match = _COOKIE.match(value or "")
    if match is None:
        return None
    session_id, mac = match.groups()
    return session_id if hmac.compare_digest(mac, _mac(key, session_id)) else None
