"""Formal review of block answers: a risk acceptance proposed by one reviewer and approved by another.

Seed 001, Table VI: a Critical answer must not be used "without formal review". An answer whose decision is
block (``register.scoring.decision``) is not released by one reviewer's decision (``review.record_decision``
refuses release and release with caution on it). Instead a reviewer proposes a risk acceptance here -- the release
it allows, a reason and an expiry date -- and a different reviewer approves it (four eyes), or any reviewer rejects
it with a reason. Each step is audited under entity ``risk_acceptance`` (its id) and found by the answer's life
(``register.console.answer_life``).

An acceptance is bound to the score state it was proposed on (migration 036): the revision's key and the SHA-256
of its claims, the answer's decision, the profile version and score run. Approval is refused when any of these
changed since the proposal. An accepted one is *in force* while its revision is current, the answer's decision is
still the one accepted and its expiry date has not passed; while in force the answer is out of the review queue
(``register.scoring.accepted.in_force_select``, read by ``register.console.queries.queue.flag_queued``). A new
revision, a rescore or a register change that changes the decision, or the expiry re-opens it: the answer is
queued again. The answer's decision itself never changes: block stays block, with who accepted the risk and until
when beside it.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

import pandas as pd

from hri_core.fingerprint import fingerprint
from register.access.permissions import Permission, authorize, require_other_person
from register.db.sql import Params
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import InvalidDecision, NotFound, StaleEdit
from register.readmodels.response_ids import revisions_select
from register.scoring.reproduce import load_response

__all__ = ["DEFAULT_DAYS", "MAX_DAYS", "RELEASES", "acceptances", "approve_acceptance", "claims_hash",
           "propose_acceptance", "reject_acceptance"]

RELEASES = ("release", "release_with_caution")
DEFAULT_DAYS = 90   # the expiry the console offers: a quarter, then the risk is looked at again
MAX_DAYS = 365      # no acceptance outlives a year

_COLUMNS = ("acceptance_id, response_id, revision, response_key, claims_hash, decision_at, profile_version, run_id, "
            "score_at, band_at, release, reason, expires_on, proposed_by, proposed_role, proposed_at, status, "
            "decided_by, decided_role, decided_at, decision_note")


def claims_hash(store: Store, response_id: str, revision: int) -> str:
    """SHA-256 of one revision's claims as canonical JSON (every field of every claim, in claim order)."""
    response = load_response(store, response_id, revision)
    return fingerprint([claim.model_dump(mode="json") for claim in response.claims])


def _today(now: datetime | None) -> date:
    return (now or utc_now()).date()


def _state(tx: Transaction, response_id: str, revision: int) -> dict:
    """The current revision's key and score (decision, profile version, run, score, band); NotFound / StaleEdit
    when ``revision`` is unknown or no longer current."""
    row = tx.one(
        "SELECT r.revision, r.response_key, s.decision, s.profile_version, s.run_id, s.score, s.band FROM "
        f"(SELECT response_id, revision, response_key FROM responses WHERE {revisions_select('?')} AND is_current) r "
        "LEFT JOIN scores s ON s.response_id = r.response_id AND s.revision = r.revision AND s.is_current",
        [response_id, response_id])
    if row is None:
        raise NotFound(f"response {response_id!r} does not exist")
    if row["revision"] != revision:
        raise StaleEdit(f"{response_id} revision {revision} is not the current one (revision {row['revision']} is), "
                        "reload")
    return row


def propose_acceptance(store: Store, actor: Actor, response_id: str, revision: int, release: str, reason: str,
                       expires_on: date, *, now: datetime | None = None) -> int:
    """Propose releasing a block answer (``release``: release or release_with_caution) until ``expires_on``;
    returns the acceptance id. Needs ``Permission.REVIEW_DECIDE``. Refused (``InvalidDecision``, naming the field)
    for an unknown release, an empty reason, an expiry not after today or more than ``MAX_DAYS`` ahead, an answer
    whose decision is not block (one reviewer decides it in the queue), and (``StaleEdit``) when an acceptance of
    this revision is already proposed or in force."""
    authorize(store, actor, Permission.REVIEW_DECIDE, entity_type="response", entity_id=response_id)
    if release not in RELEASES:
        raise InvalidDecision("release", f"{release!r} is not a release; choose one of {', '.join(RELEASES)}")
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidDecision("reason", "a reason is required for a risk acceptance")
    today = _today(now)
    if not isinstance(expires_on, date) or isinstance(expires_on, datetime):
        raise InvalidDecision("expires_on", f"must be a date, got {expires_on!r}")
    if not today < expires_on <= today + timedelta(days=MAX_DAYS):
        raise InvalidDecision("expires_on", f"{expires_on} must be after today ({today}) and at most {MAX_DAYS} "
                                            "days ahead")
    if not isinstance(revision, int) or isinstance(revision, bool) or revision < 1:
        raise InvalidDecision("revision", f"must be a revision number >= 1, got {revision!r}")
    digest = claims_hash(store, response_id, revision)  # NotFound for an unknown response or revision

    def fn(tx: Transaction) -> Change:
        state = _state(tx, response_id, revision)
        if state["decision"] != "block":
            raise InvalidDecision("decision", f"{response_id} is decided {state['decision'] or 'unscored'}, not "
                                              "block: one reviewer decides it in the review queue")
        open_one = tx.one(
            "SELECT acceptance_id, status, proposed_by FROM risk_acceptances WHERE response_key = ? "
            "AND (status = 'proposed' OR (status = 'accepted' AND expires_on >= ?::DATE AND decision_at = ?)) "
            "ORDER BY acceptance_id DESC LIMIT 1", [state["response_key"], today, state["decision"]])
        if open_one is not None:
            raise StaleEdit(f"{response_id} revision {revision} already has risk acceptance "
                            f"{open_one['acceptance_id']} ({open_one['status']}, by {open_one['proposed_by']}), "
                            "reload")
        acceptance_id = int(tx.scalar("SELECT nextval('seq_risk_acceptance')"))
        at = now or utc_now()
        row = {"acceptance_id": acceptance_id, "response_id": response_id, "revision": revision,
               "response_key": state["response_key"], "claims_hash": digest, "decision_at": state["decision"],
               "profile_version": state["profile_version"], "run_id": state["run_id"], "score_at": state["score"],
               "band_at": state["band"], "release": release, "reason": reason.strip(), "expires_on": expires_on,
               "proposed_by": actor.name, "proposed_role": actor.role, "proposed_at": at, "status": "proposed"}
        tx.execute(f"INSERT INTO risk_acceptances ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                   list(row.values()))
        after = {**row, "expires_on": expires_on.isoformat(), "proposed_at": at.isoformat()}
        return Change("risk_acceptance", str(acceptance_id), None, after, result=acceptance_id)

    return store.write(actor, "risk_acceptance.propose", fn)


def _proposed(tx: Transaction, acceptance_id: int) -> dict:
    row = tx.one(f"SELECT {_COLUMNS} FROM risk_acceptances WHERE acceptance_id = ?", [int(acceptance_id)])
    if row is None:
        raise NotFound(f"risk acceptance {acceptance_id} does not exist")
    if row["status"] != "proposed":
        raise StaleEdit(f"risk acceptance {acceptance_id} is already {row['status']} by {row['decided_by']}, reload")
    return row


def approve_acceptance(store: Store, actor: Actor, acceptance_id: int, note: str = "", *,
                       now: datetime | None = None) -> int:
    """Approve a proposed risk acceptance: needs ``Permission.REVIEW_DECIDE`` and a reviewer other than its
    proposer. Refused (``StaleEdit``) when it is no longer proposed, when its answer changed since the proposal
    (another revision is current, its claims, decision, profile version or score run differ) or it has expired."""
    authorize(store, actor, Permission.REVIEW_DECIDE, entity_type="risk_acceptance", entity_id=acceptance_id)
    proposer = store.scalar("SELECT proposed_by FROM risk_acceptances WHERE acceptance_id = ?", [int(acceptance_id)])
    require_other_person(store, actor, proposer, Permission.REVIEW_DECIDE, entity_type="risk_acceptance",
                         entity_id=acceptance_id, what=f"risk acceptance {acceptance_id}")
    today = _today(now)

    def fn(tx: Transaction) -> Change:
        row = _proposed(tx, acceptance_id)
        state = _state(tx, row["response_id"], row["revision"])
        bound = {"decision": (row["decision_at"], state["decision"]),
                 "profile version": (row["profile_version"], state["profile_version"]),
                 "score run": (row["run_id"], state["run_id"])}
        changed = [f"{what} {was} -> {now_}" for what, (was, now_) in bound.items() if was != now_]
        if changed:
            raise StaleEdit(f"{row['response_id']} changed since risk acceptance {acceptance_id} was proposed "
                            f"({', '.join(changed)}): reject it and propose again on what is there now")
        if claims_hash(store, row["response_id"], row["revision"]) != row["claims_hash"]:
            raise StaleEdit(f"the claims of {row['response_id']} changed since risk acceptance {acceptance_id} was "
                            "proposed: reject it and propose again")
        if row["expires_on"] < today:
            raise StaleEdit(f"risk acceptance {acceptance_id} expired on {row['expires_on']}: propose again")
        at = now or utc_now()
        tx.execute("UPDATE risk_acceptances SET status = 'accepted', decided_by = ?, decided_role = ?, "
                   "decided_at = ?, decision_note = ? WHERE acceptance_id = ?",
                   [actor.name, actor.role, at, note.strip() or None, int(acceptance_id)])
        before = {"status": "proposed", "response_id": row["response_id"], "revision": row["revision"]}
        after = {**before, "status": "accepted", "release": row["release"], "expires_on": str(row["expires_on"]),
                 "decided_by": actor.name, "decided_role": actor.role, "note": note.strip() or None,
                 "claims_hash": row["claims_hash"], "profile_version": row["profile_version"],
                 "run_id": row["run_id"]}
        return Change("risk_acceptance", str(acceptance_id), before, after, result=int(acceptance_id))

    return store.write(actor, "risk_acceptance.approve", fn)


def reject_acceptance(store: Store, actor: Actor, acceptance_id: int, reason: str, *,
                      now: datetime | None = None) -> int:
    """Reject (or, by its proposer, withdraw) a proposed risk acceptance with a reason; the answer stays in the
    queue. Needs ``Permission.REVIEW_DECIDE``."""
    authorize(store, actor, Permission.REVIEW_DECIDE, entity_type="risk_acceptance", entity_id=acceptance_id)
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidDecision("reason", "a reason is required to reject a risk acceptance")

    def fn(tx: Transaction) -> Change:
        row = _proposed(tx, acceptance_id)
        at = now or utc_now()
        tx.execute("UPDATE risk_acceptances SET status = 'rejected', decided_by = ?, decided_role = ?, "
                   "decided_at = ?, decision_note = ? WHERE acceptance_id = ?",
                   [actor.name, actor.role, at, reason.strip(), int(acceptance_id)])
        before = {"status": "proposed", "response_id": row["response_id"], "revision": row["revision"]}
        return Change("risk_acceptance", str(acceptance_id), before,
                      {**before, "status": "rejected", "decided_by": actor.name, "reason": reason.strip()},
                      result=int(acceptance_id))

    return store.write(actor, "risk_acceptance.reject", fn)


def acceptances(store: Store, *, response_id: str | None = None, status: str | None = None,
                now: datetime | None = None) -> pd.DataFrame:
    """Risk acceptances, newest first, with ``state`` in words: proposed, in force until <date>, re-opened (expired
    on <date> / a new revision is current / the decision is now <decision>), rejected. Optionally of one answer
    (every revision) or one stored status."""
    p = Params()
    today = p(_today(now))
    where = []
    if response_id is not None:
        where.append(f"a.response_id = {p(response_id)}")
    if status is not None:
        where.append(f"a.status = {p(status)}")
    return store.frame(f"""
        SELECT a.*, CASE
            WHEN a.status <> 'accepted' THEN a.status
            WHEN NOT coalesce(r.is_current, false) THEN 're-opened: a new revision is current'
            WHEN s.decision IS DISTINCT FROM a.decision_at THEN 're-opened: the decision is now '
                 || coalesce(s.decision, 'unscored')
            WHEN a.expires_on < {today}::DATE THEN 're-opened: expired on ' || strftime(a.expires_on, '%Y-%m-%d')
            ELSE 'in force until ' || strftime(a.expires_on, '%Y-%m-%d') END AS state
        FROM risk_acceptances a
        LEFT JOIN responses r ON r.response_key = a.response_key
        LEFT JOIN scores s ON s.response_id = a.response_id AND s.revision = a.revision AND s.is_current
        {'WHERE ' + ' AND '.join(where) if where else ''}
        ORDER BY a.acceptance_id DESC""", p.values)
