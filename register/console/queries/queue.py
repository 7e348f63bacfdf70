"""The review queue's one definition (``flag_queued``) and its size and age (``queue_stats``).

Called by ``register.console.queries.overview`` (the headline figures' queue numbers) and by
``register.console.review`` (the review queue page), so that their numbers always agree.
"""

from __future__ import annotations

from datetime import datetime

from hri_core.profile import REVIEW_ACTIONS
from register.console.queries.filters import Filters, filtered_scores
from register.db.sql import Params
from register.db.store import Store, utc_now
from register.ingest.pending import pending_keys_select
from register.scoring.accepted import in_force_select

__all__ = ["QUEUE_ACTIONS", "QUEUE_DECISIONS", "age_days_expr", "flag_queued", "queue_stats"]

# Actions of the band that ask for a person (``hri_core.profile.REVIEW_ACTIONS``; which score maps to which action
# is the profile's business), and the decisions that put an answer in the review queue (issue 33: review, block)
QUEUE_ACTIONS = REVIEW_ACTIONS
QUEUE_DECISIONS = ("review", "block")


def flag_queued(p: Params, source: str = "fr", *, now: datetime | None = None) -> str:
    """The rows of ``source`` (a ``scored_set``) with a boolean ``queued``: the review queue's one
    definition, shared by ``kpis``, ``queue_stats`` and ``register.console.review.review_queue`` so that their
    numbers always agree. Queued: the answer's decision asks for a person (``QUEUE_DECISIONS``: review or block;
    the decision already reads the band's action, the floors, the Authority checks and the mitigation, and a
    score that failed closed is decided review) -- and nobody has decided on that revision yet, and no risk
    acceptance of its decision is in force on ``now``'s day (``register.console.risk_acceptance``: a block answer
    released by two reviewers; a new revision, a changed decision or the expiry re-opens it).

    The decision was made at the score run, and every write to the source register, the authority rules or the
    requesters decides the affected answers again (``register.scoring.redecide``): the queue needs no live check.

    LEFT JOINs on the (small) decisions and acceptances tables rather than correlated NOT EXISTS: DuckDB turns the
    latter into a mark join over every row, several times slower; on the integer key (migration 021), not the
    (response_id, revision) strings, an order of magnitude faster (docs/performance.md, "Figures behind the code").
    """
    # a lower-risk label change pending keeps its answer queued (register.ingest.pending; OR binds after AND)
    pending = f" OR {source}.response_key IN ({pending_keys_select()})"
    accepted = in_force_select(p, (now or utc_now()).date())
    return (f"SELECT {source}.*, ({source}.decision IN {p.in_list(QUEUE_DECISIONS)}) "
            f"AND d.decision_id IS NULL AND ra.response_key IS NULL{pending} AS queued FROM {source} "
            f"LEFT JOIN review_decisions d ON d.response_key = {source}.response_key "
            f"LEFT JOIN ({accepted}) ra ON ra.response_key = {source}.response_key "
            f"AND ra.decision_at = {source}.decision")


def age_days_expr(p: Params, now: datetime, column: str) -> str:
    """Days from ``column`` to ``now`` (fractional)."""
    return f"(epoch_us({p(now)}::TIMESTAMPTZ) - epoch_us({column})) / 86400000000.0"


def queue_stats(store: Store, f: Filters | None = None, *, now: datetime | None = None) -> dict:
    """Size of the review queue and the age in days of its oldest response (None when empty).

    Queue age counts from the creation time, or the import time when a response has none.
    """
    p = Params()
    oldest = age_days_expr(p, now or utc_now(), "min(coalesce(created_at, imported_at))")
    row = store.row(
        f"WITH fr AS ({filtered_scores(store, f or Filters(), p)}), q AS ({flag_queued(p, now=now)}) "
        f"SELECT count(*) AS size, {oldest} AS oldest FROM q WHERE queued", p.values, what="the review queue's size")
    return {"size": int(row["size"]), "oldest_age_days": None if row["oldest"] is None else float(row["oldest"])}
