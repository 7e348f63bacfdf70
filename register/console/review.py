"""The review queue and reviewers' decisions.

Called by the review-queue and response-detail pages (through ``ui`` helpers) and by scripts. A
response is queued when its selected score's decision asks for a person (``queries.queue.QUEUE_DECISIONS``:
review or block; the decision reads the band's action, the floors, the Authority checks and the mitigation:
``register.scoring.decision``), and nobody has decided on that revision yet. A decision binds
to one revision, copies the score it was made on, and is written through ``Store.write`` with an
audit event ``review.decide``; the ``known_outcomes`` view (migrations 002, 014) turns decisions into
good/bad outcomes for calibration (an escalation is none). The audit event is filed under the response
(entity ``response``, its response id) so the audit trail is searched by the id people know. A new revision of a decided
response is a new answer: it is queued again when its action asks for review.
"""

from __future__ import annotations

from datetime import datetime

import pandas as pd

from register.access.permissions import Permission, authorize
from register.console.queries.explorer import check_window
from register.console.queries.filters import NO_CLAIMS_STATE, Filters, filtered_scores
from register.console.queries.queue import QUEUE_DECISIONS, age_days_expr, flag_queued
from register.console.queries.queue import queue_stats as _queue_stats
from register.console.risk_acceptance import RELEASES
from register.db.sql import Params
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import InvalidDecision, NotFound, StaleEdit
from register.ingest.pending import PENDING_MARK, pending_keys_select
from register.readmodels.response_ids import revisions_select
from register.scoring.authority import response_authority_select

__all__ = ["DECISIONS", "OUTCOMES", "QUEUE_COLUMNS", "decisions_for", "queue_stats",
           "record_decision", "review_queue"]

# ask and abstain are CLAIM's Mitigation actions (seed 004): clarify the query with the requester, or say that
# no answer can rest on the evidence (migration 009)
DECISIONS = ("release", "release_with_caution", "block", "send_back", "escalate", "ask", "abstain")
# what each decision says about the answer, for calibration (the view known_outcomes says the same): an
# escalation hands the answer to someone else without judging it, so it says nothing (None)
OUTCOMES = {"release": "good", "release_with_caution": "good", "block": "bad", "send_back": "bad",
            "escalate": None, "ask": "bad", "abstain": "bad"}

QUEUE_COLUMNS = ("response_id", "revision", "use_case", "model", "created_at", "score", "band", "action",
                 "no_claims", "age_days", "why")


def queue_stats(store: Store, f: Filters | None = None, *, now: datetime | None = None) -> dict:
    """``{"size": int, "oldest_age_days": float | None}`` of the queue (all of it unless ``f``).

    The same SQL as ``queries.overview.kpis``' queue numbers, so the overview and the queue page agree.
    """
    return _queue_stats(store, f, now=now)


def review_queue(store: Store, f: Filters, *, limit: int = 50, offset: int = 0,
                 now: datetime | None = None) -> tuple[pd.DataFrame, int]:
    """One page of the queue, oldest first (creation time, else import time), and the queue's size.

    Columns: response_id, revision, use_case, model, created_at, score, band, action (the band's, the HRI action
    of the paper), no_claims, decision, decision_reasons, mitigation_action, age_days (from creation, else import,
    to now), why ("lower-risk change pending" first when a label change that would lower its decision waits for a
    second person, "decision <decision>: <its reasons>", and "authority now: c1: stale source, proposed OUTDATED"
    when a SUPPORTED claim rests on a source that fails an Authority check as the register stands).
    """
    check_window(limit, offset)
    now = now or utc_now()
    p = Params()
    moment = "coalesce(created_at, imported_at)"
    order = f"{moment}, imported_at, response_id"
    # the page first, then the Authority lines of its rows only: listing the checks of every queued answer (up to
    # the whole queue) to show fifty was slow. The page is read twice (its rows, its keys for the checks):
    # materialised, its fifty rows are; otherwise DuckDB materialises the whole queue flagging under it
    frame = store.frame(f"""
        WITH fr AS NOT MATERIALIZED ({filtered_scores(store, f, p)}),
        q AS NOT MATERIALIZED ({flag_queued(p, now=now)}),
        page AS MATERIALIZED (SELECT * FROM q WHERE queued ORDER BY {order} LIMIT {p(limit)} OFFSET {p(offset)}),
        au AS ({response_authority_select(store, p, keys='SELECT response_key FROM page')})
        SELECT page.response_id, revision, use_case, model, created_at, score, band, action, no_claims,
               decision, decision_reasons, mitigation_action,
               {age_days_expr(p, now, moment)} AS age_days,
               -- the mark first: the page's cell shows the start of this text, and the reasons are long
               concat_ws('; ',
                   CASE WHEN page.response_key IN ({pending_keys_select()}) THEN '{PENDING_MARK}' END,
                   'decision ' || decision || ': ' || array_to_string(decision_reasons, '; '),
                   CASE WHEN au.to_review > 0 THEN 'authority now: ' || au.authority END) AS why,
               (SELECT count(*) FROM q WHERE queued) AS queue_size
        FROM page LEFT JOIN au ON au.response_key = page.response_key
        ORDER BY {order}""", p.values)
    # a page past the end has no row to carry the size
    size = int(frame["queue_size"].iloc[0]) if len(frame) else _queue_stats(store, f, now=now)["size"]
    return frame.drop(columns="queue_size"), size


def _validate(decision: str, reason: str | None, revision) -> str:
    if decision not in DECISIONS:
        raise InvalidDecision("decision", f"{decision!r} is not a decision; choose one of {', '.join(DECISIONS)}")
    if not isinstance(revision, int) or isinstance(revision, bool) or revision < 1:
        raise InvalidDecision("revision", f"must be a revision number >= 1, got {revision!r}")
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidDecision("reason", "a reason is required for every review decision")
    return reason.strip()


def record_decision(store: Store, actor: Actor, response_id: str, revision: int, decision: str, reason: str) -> int:
    """Record a reviewer's decision on one revision of a response; returns its decision_id.

    Refused with ``InvalidDecision`` (a ``ValueError``) for an unknown decision or an empty reason, or a release
    (with caution or not) of an answer whose decision is block (``register.console.risk_acceptance``: two reviewers),
    ``NotFound`` for an unknown response or revision, and ``StaleEdit`` when the revision was already
    decided or is no longer the current one (the page shows old data: reload).
    """
    authorize(store, actor, Permission.REVIEW_DECIDE, entity_type="response", entity_id=response_id)
    reason = _validate(decision, reason, revision)

    def fn(tx: Transaction) -> Change:
        existing = tx.one(
            "SELECT decided_by, decided_role, decided_at, decision FROM review_decisions "
            "WHERE response_id = ? AND revision = ?", [response_id, revision])
        if existing is not None:
            raise StaleEdit(f"{response_id} revision {revision} was already decided by {existing['decided_by']} "
                            f"({existing['decided_role']}) at {existing['decided_at']:%Y-%m-%d %H:%M:%S} UTC "
                            f"({existing['decision']}), reload")
        current, response_key = tx.query_one(
            f"SELECT revision, response_key FROM responses WHERE {revisions_select('?')} AND is_current",
            [response_id, response_id]
        ) or (None, None)
        if current is None:
            raise NotFound(f"response {response_id!r} does not exist")
        if current != revision:
            known = tx.scalar(f"SELECT count(*) FROM responses WHERE {revisions_select('?')} AND revision = ?",
                              [response_id, response_id, revision])
            if not known:
                raise NotFound(f"response {response_id!r} has no revision {revision}")
            raise StaleEdit(f"{response_id} revision {revision} is no longer current (revision {current} is), "
                            "reload")
        score = tx.one(
            "SELECT score, band, action, profile_version, run_id, no_claims, decision AS answer_decision FROM scores "
            "WHERE response_id = ? AND revision = ? AND is_current", [response_id, revision]) or {}
        if score.get("answer_decision") == "block" and decision in RELEASES:
            # seed 001, Table VI: no Critical answer is used without formal review -- two reviewers
            raise InvalidDecision("decision", f"{response_id} is decided block: releasing it needs formal review, "
                                              "a risk acceptance one reviewer proposes and another approves")
        version, run_id, no_claims = score.get("profile_version"), score.get("run_id"), score.get("no_claims")
        # the state the reviewer saw: a response without claims shows "No claims", not the band of its 0
        score_at, action = score.get("score"), score.get("action")
        band = NO_CLAIMS_STATE if no_claims else score.get("band")
        decision_id = tx.scalar("SELECT nextval('seq_review_decision')")
        decided_at = utc_now()
        tx.execute(
            "INSERT INTO review_decisions (decision_id, response_id, revision, response_key, decision, reason, "
            "decided_by, decided_role, decided_at, score_at_decision, band_at_decision, action_at_decision, "
            "profile_version, run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [decision_id, response_id, revision, response_key, decision, reason, actor.name, actor.role, decided_at,
             score_at, band, action, version, run_id])
        state = {"response_id": response_id, "revision": revision, "score": score_at, "band": band,
                 "action": action, "profile_version": version, "run_id": run_id}
        before = {**state, "decision": None,
                  "answer_decision": score.get("answer_decision"),
                  "queued": bool(score.get("answer_decision") in QUEUE_DECISIONS) if score else None}
        after = {**state, "decision_id": decision_id, "decision": decision, "outcome": OUTCOMES[decision],
                 "reason": reason, "decided_by": actor.name, "decided_role": actor.role,
                 "decided_at": decided_at.isoformat()}
        # filed under the response it decides (its business id), so the audit trail finds every decision on a
        # response by its id; the decision's own id is in ``after``
        return Change("response", response_id, before, after, result=decision_id)

    return store.write(actor, "review.decide", fn)


def decisions_for(store: Store, response_id: str) -> pd.DataFrame:
    """Every decision on any revision of a response, oldest first."""
    return store.frame(
        "SELECT decision_id, response_id, revision, decision, reason, decided_by, decided_role, decided_at, "
        "score_at_decision, band_at_decision, action_at_decision, profile_version, run_id "
        "FROM review_decisions WHERE response_id = ? ORDER BY decided_at, decision_id", [response_id])
