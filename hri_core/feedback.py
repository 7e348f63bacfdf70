"""Validated human feedback: time decay of the H dimension (paper section V.A).

Only validated feedback reaches these functions; pending and rejected feedback never changes a score.

Feedback times from the future fail closed. Section V.A decays feedback by its age, which a time after the
scoring time does not have: such feedback counts 0 in the score (DOMAIN.md: "Feedback validated after the as-of
time never counts, in any floor"), but a claim carrying VALIDATED_NEGATIVE_FEEDBACK dated after the as-of time
never lets its answer be released (``validated_after``; ``hri_core.decision``: at least review, naming the claim).
And a record cannot bring feedback validated after it was imported: the register quarantines a ``feedback_at``
later than the import time by more than ``FEEDBACK_CLOCK_SKEW`` (``future_feedback_problems``).
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from .errors import FieldProblem
from .models import Response
from .vocabulary import Label

SECONDS_PER_DAY = 86_400.0
# how far a record's feedback time may lie after the moment it is imported: the clocks of the system that
# validated the feedback and of the register may differ by this much; anything later is refused
FEEDBACK_CLOCK_SKEW = timedelta(minutes=5)


def age_days(validated_at: datetime, as_of: datetime) -> float:
    """Age of a feedback event in days at the scoring time ``as_of`` (both timezone-aware)."""
    return (as_of - validated_at).total_seconds() / SECONDS_PER_DAY


def decay_factor(validated_at: datetime | None, as_of: datetime, decay_lambda: float) -> float:
    """exp(-lambda * age). Unknown validation time counts as fresh (factor 1: fail closed);
    feedback validated after ``as_of`` did not exist yet at that time and counts 0."""
    if validated_at is None:
        return 1.0
    age = age_days(validated_at, as_of)
    if age < 0:
        return 0.0
    return math.exp(-decay_lambda * age)


def repeat_window_start(as_of: datetime, window_days: float) -> datetime | None:
    """The earliest validation time that still counts as repeated feedback at ``as_of``: ``as_of`` minus
    the window (to the microsecond, so the SQL scorer compares with the same bound instant). None when
    the window reaches before the calendar's first day: then it covers all time.

    Section V.A decays feedback because that "avoids indefinitely penalizing a corrected system": a
    repetition older than the window no longer counts as one.
    """
    try:
        return as_of - timedelta(days=window_days)
    except OverflowError:
        return None


def scope_feedback_score(events: list[tuple[float, datetime]], n_reviewed: int, as_of: datetime,
                         decay_lambda: float) -> float:
    """Scope-level s_H = sum_j q_j exp(-lambda dt_j) / max(1, N_reviewed), capped at 1.

    ``events`` are (severity q_j in [0, 1], validation time) of the scope's validated feedback in the
    evaluation window; events after ``as_of`` are ignored.
    """
    total = math.fsum(q * decay_factor(at, as_of, decay_lambda) for q, at in events)
    return min(1.0, total / max(1, n_reviewed))


def validated_after(feedback_at: datetime | None, as_of: datetime) -> bool:
    """Whether feedback dated ``feedback_at`` was validated after the scoring time ``as_of`` (an unknown time was
    not: it counts as fresh, ``decay_factor``)."""
    return feedback_at is not None and feedback_at > as_of


def late_feedback_claims(response: Response, as_of: datetime) -> tuple[str, ...]:
    """The ids of the claims of ``response`` that carry VALIDATED_NEGATIVE_FEEDBACK dated after ``as_of``, in claim
    order: the score cannot count that feedback (it did not exist yet), so the answer fails closed instead."""
    return tuple(claim.claim_id or "" for claim in response.claims
                 if Label.VALIDATED_NEGATIVE_FEEDBACK in claim.labels and validated_after(claim.feedback_at, as_of))


def latest_feedback_time(imported_at: datetime) -> datetime:
    """The latest feedback time a record imported at ``imported_at`` may carry (``FEEDBACK_CLOCK_SKEW`` later)."""
    return imported_at + FEEDBACK_CLOCK_SKEW


def future_feedback_problems(response: Response, imported_at: datetime) -> list[FieldProblem]:
    """A problem per claim whose ``feedback_at`` is later than ``latest_feedback_time(imported_at)``: feedback is
    validated before its record is imported, so a later time is a wrong clock or a forged time, never data to
    score (counted as not yet validated, it would lower the answer's risk)."""
    latest = latest_feedback_time(imported_at)
    skew = int(FEEDBACK_CLOCK_SKEW.total_seconds() // 60)
    # the message names the record's own time, not the import's: the same record gets the same reason every time
    return [FieldProblem(f"claims[{index}].feedback_at",
                         f"{claim.feedback_at.isoformat().replace('+00:00', 'Z')} is in the future: later than the "
                         f"import by more than the {skew} minutes two clocks may differ; feedback is validated "
                         "before its record is imported: give the time it was validated")
            for index, claim in enumerate(response.claims)
            if claim.feedback_at is not None and claim.feedback_at > latest]
