"""Scoring profiles as stored, versioned records (draft -> active -> archived).

The parameters themselves are an ``hri_core.ScoringProfile``; this module stores them with their
version number and status. A published version is never edited. The scorer reads the numbers from
here only.
"""

from __future__ import annotations

import json

from hri_core import ScoringProfile, default_profile, profile_from_dict
from hri_core.profile import recommended_profile
from register.access import version_approvals
from register.access.permissions import Permission, authorize
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import NotFound, RegisterError
from register.scoring import publishes
from register.scoring.scorer import rescore

PROFILE_KIND = "scoring_profile"  # in approval_steps


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
    """Every stored version, oldest first: status and provenance (not the parameters)."""
    return store.dicts("SELECT profile_version, name, status, fingerprint, created_at, created_by, published_at, "
                       "published_by, reason FROM scoring_profiles ORDER BY profile_version")


def insert_profile(tx: Transaction, profile: ScoringProfile, status: str, actor: Actor, based_on: int | None,
                   reason: str | None) -> int:
    """Store ``profile`` as the next version inside the caller's write (drafts from elicitation and
    calibration are written with their records in one transaction); returns its version number."""
    version = tx.scalar("SELECT coalesce(max(profile_version), 0) + 1 FROM scoring_profiles")
    now = utc_now()
    params = profile.model_dump(mode="json", exclude={"name", "version"})
    tx.execute(
        "INSERT INTO scoring_profiles (profile_version, name, status, params, fingerprint, based_on, created_at, "
        "created_by, published_at, published_by, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [version, profile.name, status, json.dumps(params), profile.fingerprint(), based_on, now, actor.name,
         now if status == "active" else None, actor.name if status == "active" else None, reason],
    )
    if status == "draft":  # who proposed it, and in which role: a system-made draft is nobody's
        version_approvals.record_proposal(tx, PROFILE_KIND, version, actor)
    return version


# Why a new register's version 1 carries Table IV's review rationale (hri_core.profile.REVIEW_FLOOR_IDS).
DEFAULT_PROFILE_REASON = (
    "paper defaults (provisional design parameters) with Table IV's review rationale: 'Confirmed contradiction "
    "requiring review' (CONTRADICTED, criticality 2) and 'Confirmed unresolved feedback indicates persistent "
    "system risk' (repeated or unresolved VALIDATED_NEGATIVE_FEEDBACK) -- both floors require at least review")


def ensure_default_profile(store: Store, actor: Actor) -> int:
    """Create version 1, active, in an empty database: ``hri_core.recommended_profile()`` -- the paper's
    provisional parameters whose CONTRADICTED criticality-2 floor and feedback floor require at least
    ``review``, as Table IV's rationale says -- with that rationale as its reason. The plain parameters
    (``hri_core.default_profile()``, whose 0.50 floors land in Medium, caution) stay available for a draft.
    Needs ``Permission.PROFILE_PUBLISH`` even when it exists: it is a write whether or not there is
    something to do."""
    authorize(store, actor, Permission.PROFILE_PUBLISH, entity_type="scoring_profile", entity_id=1)
    existing = store.scalar("SELECT min(profile_version) FROM scoring_profiles")
    if existing is not None:
        return existing

    def fn(tx: Transaction) -> Change:
        version = insert_profile(tx, recommended_profile(), "active", actor, None, DEFAULT_PROFILE_REASON)
        return Change("scoring_profile", str(version), None, {"status": "active", "reason": DEFAULT_PROFILE_REASON},
                      result=version)

    return store.write(actor, "profile.create_default", fn)


# Why the review-floors version exists: Table IV's own rationale for two floors (hri_core.profile.REVIEW_FLOOR_IDS).
REVIEW_FLOORS_NOTE = ("proposed: the paper's parameters with Table IV's review rationale made operational -- "
                      "'Confirmed contradiction requiring review' (CONTRADICTED, criticality 2) and repeated or "
                      "unresolved validated feedback route their answer to at least review")


def ensure_review_floors_profile(store: Store, actor: Actor) -> int:
    """Seed ``hri_core.recommended_profile()`` -- the paper's parameters whose CONTRADICTED criticality-2 floor
    and feedback floor require at least ``review`` -- as a stored version, once (found by its fingerprint).

    It is stored as a *draft* based on the paper's version: publishing it changes the action of answers
    already scored, so it goes through the impact preview and the four-eyes publish like any other
    version. A register made since ``ensure_default_profile`` stores these floors as version 1 already has
    them: that version is returned and nothing is written. Returns its version number.
    """
    # checked even when it exists: it is a write whether or not there is something to do
    authorize(store, actor, Permission.PROFILE_EDIT, entity_type="scoring_profile")
    target = recommended_profile()
    existing = store.scalar("SELECT min(profile_version) FROM scoring_profiles WHERE fingerprint = ?",
                            [target.fingerprint()])
    if existing is not None:
        return int(existing)
    paper = store.scalar("SELECT min(profile_version) FROM scoring_profiles WHERE fingerprint = ?",
                         [default_profile().fingerprint()])

    def fn(tx: Transaction) -> Change:
        version = insert_profile(tx, target, "draft", actor, paper, REVIEW_FLOORS_NOTE)
        return Change("scoring_profile", str(version), None,
                      {"status": "draft", "params": target.to_dict(), "note": REVIEW_FLOORS_NOTE}, result=version)

    return store.write(actor, "profile.create_draft", fn)


def create_draft(store: Store, actor: Actor, overrides: dict, *, based_on: int | None = None,
                 name: str | None = None) -> int:
    """A new draft from a (partial) parameter mapping laid over ``based_on`` (default: the active profile)."""
    authorize(store, actor, Permission.PROFILE_EDIT, entity_type="scoring_profile", entity_id=based_on)
    base = get_profile(store, based_on) if based_on else active_profile(store)
    profile = profile_from_dict(overrides, base=base)
    if name:
        profile = profile.model_copy(update={"name": name})

    def fn(tx: Transaction) -> Change:
        version = insert_profile(tx, profile, "draft", actor, base.version, None)
        return Change("scoring_profile", str(version), None, {"status": "draft", "params": profile.to_dict()},
                      result=version)

    return store.write(actor, "profile.create_draft", fn)


def activate(store: Store, actor: Actor, version: int, reason: str) -> None:
    """Make a draft the active profile (the previous active one is archived). Rescoring is separate: the publish
    is recorded as pending in the same transaction (``register.scoring.publishes``) until a full rescore under the
    version completes it, so that a crash between the two steps is named and resumed, never silent.

    Four eyes (``register.access.version_approvals.require_second_person``): the draft's creator cannot
    publish it (command-line jobs of the ``system`` role, run by whoever operates the machine, are exempt);
    a draft the system created counts as nobody's: one admin endorses it (``endorse_draft``), a different
    admin publishes it.
    """
    authorize(store, actor, Permission.PROFILE_PUBLISH, entity_type="scoring_profile", entity_id=version)
    if not reason or not reason.strip():
        raise RegisterError("a reason is required to publish a profile")
    author = store.one("SELECT created_by FROM scoring_profiles WHERE profile_version = ?", [version])
    if author is not None:
        version_approvals.require_second_person(store, actor, PROFILE_KIND, version, author["created_by"],
                                                Permission.PROFILE_PUBLISH)

    def fn(tx: Transaction) -> Change:
        status = tx.scalar("SELECT status FROM scoring_profiles WHERE profile_version = ?", [version])
        if status is None:
            raise NotFound(f"scoring profile version {version} does not exist")
        if status != "draft":
            raise RegisterError(f"profile version {version} is {status}; only a draft can be published: "
                                "create a draft from it and publish that")
        previous = tx.query("SELECT profile_version FROM scoring_profiles WHERE status = 'active'")
        tx.execute("UPDATE scoring_profiles SET status = 'archived' WHERE status = 'active'")
        tx.execute("UPDATE scoring_profiles SET status = 'active', published_at = ?, published_by = ?, reason = ? "
                   "WHERE profile_version = ?", [utc_now(), actor.name, reason.strip(), version])
        previous_active = [p[0] for p in previous]
        scores_under = publishes.record_pending(tx, version, actor, previous_active)
        return Change("scoring_profile", str(version), {"status": "draft", "previous_active": previous_active},
                      {"status": "active", "reason": reason.strip(), "rescore_pending": True,
                       "scores_under_version": scores_under})

    store.write(actor, "profile.publish", fn)


def endorse_draft(store: Store, actor: Actor, version: int, reason: str) -> None:
    """An admin makes a draft the system created theirs (reason required, audited ``scoring_profile.endorse``),
    so that a different admin may publish it; refused for a draft a person created, twice, or by the system."""
    authorize(store, actor, Permission.PROFILE_PUBLISH, entity_type=PROFILE_KIND, entity_id=version)
    status = store.scalar("SELECT status FROM scoring_profiles WHERE profile_version = ?", [version])
    if status is None:
        raise NotFound(f"scoring profile version {version} does not exist")
    if status != "draft":
        raise RegisterError(f"profile version {version} is {status}; only a draft is endorsed")
    version_approvals.endorse(store, actor, PROFILE_KIND, version, reason, Permission.PROFILE_PUBLISH)


def system_draft_state(store: Store, version: int) -> dict | None:
    """For a draft the system created: ``{"endorsed_by", "reason"}`` (both None until an admin endorses it);
    None for a draft a person created (its author is known: anyone else publishes it)."""
    if not version_approvals.proposed_by_system(store, PROFILE_KIND, version):
        return None
    endorsed = version_approvals.endorsement(store, PROFILE_KIND, version)
    return {"endorsed_by": endorsed["actor_name"] if endorsed else None,
            "reason": endorsed["reason"] if endorsed else None}


def profile_meta(store: Store, version: int) -> dict:
    """Status and provenance of one stored version (status, created_by, published_by, reason, based_on ...)."""
    meta = store.one(
        "SELECT profile_version, name, status, fingerprint, based_on, created_at, created_by, published_at, "
        "published_by, reason FROM scoring_profiles WHERE profile_version = ?", [version])
    if meta is None:
        raise NotFound(f"scoring profile version {version} does not exist")
    return meta


def publish(store: Store, actor: Actor, version: int, reason: str, *, as_of=None, progress=None):
    """Publish a draft (four eyes, reason required) and rescore every current response under it.

    The old scores are kept; each new score row records the run, the profile version and the as-of
    time (``register.scoring.scorer.rescore``). ``progress(step, total, message)`` is called between the steps
    so that a page can show where it is. Returns the ``RescoreSummary``.

    Publishing ``version`` again when its publish is incomplete (active, its rescore never ran: a crash, an error
    between the two steps) resumes it: the rescore runs, under the four eyes its activation passed.
    """
    def tick(step: int, message: str) -> None:
        if progress is not None:
            progress(step, 3, message)

    tick(0, f"Publishing profile version {version}...")
    authorize(store, actor, Permission.RESCORE, entity_type="scoring_profile", entity_id=version)
    pending = publishes.incomplete_publish(store)
    if pending is None or pending.version != version:
        activate(store, actor, version, reason)
    tick(1, f"Rescoring every current response under version {version}...")
    summary = rescore(store, actor, get_profile(store, version), as_of=as_of)  # completes the publish
    tick(3, f"Rescored {summary.responses_scored:,} responses under version {version} (run {summary.run_id}).")
    return summary


def resume_publish(store: Store, actor: Actor, *, as_of=None, progress=None):
    """Finish the incomplete publish (``register.scoring.publishes``): rescore every current response under the
    version it made active. Needs ``Permission.RESCORE``; ``RegisterError`` when no publish is incomplete.
    Returns the ``RescoreSummary``."""
    authorize(store, actor, Permission.RESCORE, entity_type="scoring_profile")
    pending = publishes.incomplete_publish(store)
    if pending is None:
        raise RegisterError("no publish is incomplete: the current scores are under the last published version")
    return publish(store, actor, pending.version, "", as_of=as_of, progress=progress)


def _flatten(value, prefix: str = "") -> dict[str, object]:
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for key, item in value.items():
            out.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        out = {}
        for k, item in enumerate(value):
            tag = item.get("rule_id") or item.get("name") or str(k)
            out.update(_flatten(item, f"{prefix}[{tag}]"))
        return out
    if isinstance(value, list):
        return {prefix: ", ".join(map(str, value)) if value else "(none)"}
    return {prefix: value}


def profile_diff(a: ScoringProfile, b: ScoringProfile) -> list[dict]:
    """Every parameter that differs between two profiles: ``[{"parameter", "a", "b"}]`` in a stable order.

    Floors and bands are keyed by rule id and band name, so that a changed value reads as one change
    (and an added or removed rule as a value against "(absent)").
    """
    left = _flatten(a.model_dump(mode="json", exclude={"name", "version"}))
    right = _flatten(b.model_dump(mode="json", exclude={"name", "version"}))
    keys = list(left) + [k for k in right if k not in left]
    return [{"parameter": k, "a": left.get(k, "(absent)"), "b": right.get(k, "(absent)")}
            for k in keys if left.get(k, "(absent)") != right.get(k, "(absent)")]
