"""Scoring profiles as stored, versioned records (draft -> active -> archived).

The parameters themselves are an ``hri_core.ScoringProfile``; this module stores them with their
version number and status. A published version is never edited. The scorer reads the numbers from
here only.
"""

from __future__ import annotations

import json

from hri_core import ScoringProfile, default_profile, profile_from_dict

from .errors import NotFound, RegisterError
from .store import Actor, Change, Store, utc_now


def _from_row(version: int, name: str, params: str) -> ScoringProfile:
    data = json.loads(params) if isinstance(params, str) else params
    data.update({"name": name, "version": version})
    return ScoringProfile.model_validate(data)


def get_profile(store: Store, version: int) -> ScoringProfile:
    """The stored profile with this version number."""
    row = store.query_one("SELECT profile_version, name, params FROM scoring_profiles WHERE profile_version = ?",
                          [version])
    if row is None:
        raise NotFound(f"scoring profile version {version} does not exist")
    return _from_row(*row)


def active_profile(store: Store) -> ScoringProfile:
    """The profile currently used for new scores."""
    row = store.query_one(
        "SELECT profile_version, name, params FROM scoring_profiles WHERE status = 'active' "
        "ORDER BY profile_version DESC LIMIT 1")
    if row is None:
        raise NotFound("no active scoring profile: initialise the database first")
    return _from_row(*row)


def list_profiles(store: Store) -> list[dict]:
    rows = store.query("SELECT profile_version, name, status, fingerprint, created_at, created_by, published_at, "
                       "published_by, reason FROM scoring_profiles ORDER BY profile_version")
    keys = ("profile_version", "name", "status", "fingerprint", "created_at", "created_by", "published_at",
            "published_by", "reason")
    return [dict(zip(keys, r)) for r in rows]


def _insert(cur, profile: ScoringProfile, status: str, actor: Actor, based_on: int | None, reason: str | None) -> int:
    version = cur.execute("SELECT coalesce(max(profile_version), 0) + 1 FROM scoring_profiles").fetchone()[0]
    now = utc_now()
    params = profile.model_dump(mode="json", exclude={"name", "version"})
    cur.execute(
        "INSERT INTO scoring_profiles (profile_version, name, status, params, fingerprint, based_on, created_at, "
        "created_by, published_at, published_by, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [version, profile.name, status, json.dumps(params), profile.fingerprint(), based_on, now, actor.name,
         now if status == "active" else None, actor.name if status == "active" else None, reason],
    )
    return version


def ensure_default_profile(store: Store, actor: Actor) -> int:
    """Create version 1 (the paper's provisional parameters, active) in an empty database."""
    existing = store.query_one("SELECT min(profile_version) FROM scoring_profiles")[0]
    if existing is not None:
        return existing

    def fn(cur) -> Change:
        version = _insert(cur, default_profile(), "active", actor, None,
                          "paper defaults (provisional design parameters)")
        return Change("scoring_profile", str(version), None, {"status": "active"}, result=version)

    return store.write(actor, "profile.create_default", fn)


def create_draft(store: Store, actor: Actor, overrides: dict, *, based_on: int | None = None,
                 name: str | None = None) -> int:
    """A new draft from a (partial) parameter mapping laid over ``based_on`` (default: the active profile)."""
    base = get_profile(store, based_on) if based_on else active_profile(store)
    profile = profile_from_dict(overrides, base=base)
    if name:
        profile = profile.model_copy(update={"name": name})

    def fn(cur) -> Change:
        version = _insert(cur, profile, "draft", actor, base.version, None)
        return Change("scoring_profile", str(version), None, {"status": "draft", "params": profile.to_dict()},
                      result=version)

    return store.write(actor, "profile.create_draft", fn)


def activate(store: Store, actor: Actor, version: int, reason: str) -> None:
    """Make a draft the active profile (the previous active one is archived). Rescoring is separate."""
    if not reason or not reason.strip():
        raise RegisterError("a reason is required to publish a profile")

    def fn(cur) -> Change:
        row = cur.execute("SELECT status FROM scoring_profiles WHERE profile_version = ?", [version]).fetchone()
        if row is None:
            raise NotFound(f"scoring profile version {version} does not exist")
        if row[0] != "draft":
            raise RegisterError(f"profile version {version} is {row[0]}; only a draft can be published")
        previous = cur.execute("SELECT profile_version FROM scoring_profiles WHERE status = 'active'").fetchall()
        cur.execute("UPDATE scoring_profiles SET status = 'archived' WHERE status = 'active'")
        cur.execute("UPDATE scoring_profiles SET status = 'active', published_at = ?, published_by = ?, reason = ? "
                    "WHERE profile_version = ?", [utc_now(), actor.name, reason.strip(), version])
        return Change("scoring_profile", str(version), {"status": "draft", "previous_active": [p[0] for p in previous]},
                      {"status": "active", "reason": reason.strip()})

    store.write(actor, "profile.publish", fn)
