"""The SQL conditions the scorer tests on a claim, kept in one place: why a claim shape cannot be scored (its bits and
reasons), and whether a floor fires on a claim (``hri_core.scoring.floor_fires``), feedback conditions included."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from hri_core import DIMENSIONS, LABELS, FloorRule, ScoringProfile
from hri_core.feedback import repeat_window_start
from hri_core.models import MAX_CRITICALITY
from hri_core.vocabulary import LABEL_BIT, LABEL_CONFLICTS
from register.db.sql import Params

if TYPE_CHECKING:
    from register.scoring.scorer import Dialect

__all__ = ["BAD_SHAPE", "OUT_OF_RANGE", "bad_shape", "floor_condition", "reads_feedback", "repeat_since"]

# Why a claim shape cannot be scored: bit -> reason (the bits are OR-ed over a response's claims).
BAD_SHAPE = {
    1: f"claims: a criticality is outside 1 to {MAX_CRITICALITY:,} (stored before this bound existed); "
       "re-import the response with a valid criticality",
    2: "claims: a claim has no label this version knows; re-import the response",
    4: "claims: a claim names a dimension this version does not know; re-import the response",
}
# ... and one bit per refused label combination (``hri_core.vocabulary.LABEL_CONFLICTS``): every entry refuses it
# now, a claim stored before the rule is not scored as if its labels made sense
_CONFLICT_BITS = {8 << i: conflict for i, conflict in enumerate(LABEL_CONFLICTS)}
BAD_SHAPE.update({bit: f"claims: a claim carries labels that contradict each other ({conflict.reason}), stored "
                        "before this rule; label the claim again" for bit, conflict in _CONFLICT_BITS.items()})
OUT_OF_RANGE = "the computed score is outside 0 to 1 (report this)"


def bad_shape(p: Params) -> str:
    """The bits of ``BAD_SHAPE`` that a claim shape (label_mask, dim_mask, criticality) sets."""
    all_labels, all_dims = (1 << len(LABELS)) - 1, (1 << len(DIMENSIONS)) - 1
    return (f"(CASE WHEN criticality BETWEEN 1 AND {p(MAX_CRITICALITY)} THEN 0 ELSE 1 END"
            f" | CASE WHEN label_mask BETWEEN 1 AND {all_labels} THEN 0 ELSE 2 END"
            f" | CASE WHEN dim_mask IS NULL OR dim_mask BETWEEN 1 AND {all_dims} THEN 0 ELSE 4 END"
            + "".join(f" | CASE WHEN (label_mask & {c.mask}) <> 0 AND (label_mask & {c.excludes_mask}) <> 0 "
                      f"THEN {bit} ELSE 0 END" for bit, c in _CONFLICT_BITS.items()) + ")")


def reads_feedback(rule: FloorRule) -> bool:
    """Whether a rule reads the claim's feedback columns: it is evaluated per claim row, not per claim shape."""
    return rule.reads_feedback


def repeat_since(profile: ScoringProfile, as_of: datetime, p: Params, dialect: Dialect) -> str | None:
    """The repeat window's first instant (``hri_core.feedback.repeat_window_start``) as a bound TIMESTAMPTZ;
    None when no rule counts repetitions (an unused named parameter is an error) or the window covers all time."""
    if not any(rule.condition == "repeated_or_unresolved" for rule in profile.floors):
        return None
    start = repeat_window_start(as_of, profile.repeat_window_days)
    return None if start is None else dialect.cast(p(start), "TIMESTAMPTZ")


def floor_condition(rule: FloorRule, as_of_param: str, since_param: str | None, p: Params) -> str:
    """Whether ``rule`` fires on a claim row, as SQL; ``as_of_param``/``since_param``: the bound as-of time and the
    repeat window's start (``repeat_since``)."""
    cond = [f"(label_mask & {LABEL_BIT[rule.label]}) <> 0", f"criticality >= {p(rule.min_criticality)}"]
    if rule.max_criticality is not None:
        cond.append(f"criticality <= {p(rule.max_criticality)}")
    if reads_feedback(rule):  # feedback validated after the as-of time does not exist yet
        cond.append(f"(feedback_at IS NULL OR feedback_at <= {as_of_param})")
    if rule.condition == "repeated_or_unresolved":
        # repeated counts while the latest validation is inside the window (unknown time: fail closed)
        recent = "" if since_param is None else f"(feedback_at IS NULL OR feedback_at >= {since_param}) AND "
        cond.append(f"(({recent}coalesce(feedback_count, 0) >= {p(rule.min_feedback_count)}) "
                    f"OR feedback_resolved IS DISTINCT FROM true)")
    return " AND ".join(cond)
