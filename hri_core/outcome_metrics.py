"""Ranking and cost metrics of a risk score against known outcomes, over numpy arrays.

The outcome fit and the aggregation comparison (``hri_core.outcome_fit``, ``hri_core.aggregations``) call
these on held-out predictions thousands of times (every bootstrap resample), so they take plain arrays
``y`` (1 = the answer turned out harmful, 0 = it did not) and ``score`` (higher = riskier) and do no
validation of their own beyond what a caller cannot check cheaply.

* ``roc_auc``: the Mann-Whitney statistic, a tie between a harmful and a harmless answer counting 1/2 --
  the area under the ROC curve with tied scores moving together, as scikit-learn's ``roc_auc_score``;
* ``average_precision``: ``sum_k (R_k - R_(k-1)) P_k`` over the distinct scores taken as thresholds
  from the highest down, tied scores flagged together -- scikit-learn's ``average_precision_score``
  (step-wise, not interpolated);
* ``expected_cost``: per answer, ``cost_miss * FN + cost_review * FP`` when answers whose predicted
  probability of harm exceeds ``cost_review / (cost_review + cost_miss)`` are flagged for review (the
  threshold that minimises the expected cost for a calibrated probability).

The costs default to the calibration page's (a missed harmful answer costs 10, a needless review 1):
scoring profiles hold no costs, so the defaults live here, in one place, and every command takes others.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["DEFAULT_COSTS", "Costs", "average_precision", "expected_cost", "ranks", "roc_auc",
           "stratified_folds", "stratified_resample"]

FloatArray = np.ndarray


@dataclass(frozen=True)
class Costs:
    """What a wrong decision costs: a harmful answer released (``miss``), a harmless one reviewed (``review``)."""

    miss: float = 10.0
    review: float = 1.0

    @property
    def threshold(self) -> float:
        """The probability of harm above which reviewing costs less in expectation than releasing."""
        return self.review / (self.review + self.miss)

    def to_dict(self) -> dict[str, float]:
        """JSON-ready form, with the decision threshold they imply."""
        return {"miss": self.miss, "review": self.review, "threshold_probability": self.threshold}


DEFAULT_COSTS = Costs()


def ranks(values: FloatArray) -> FloatArray:
    """1-based ranks of ``values``, tied values sharing the mean of their ranks."""
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    starts = np.r_[True, ordered[1:] != ordered[:-1]]
    group = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    last = np.r_[first[1:], len(values)] - 1
    mean_rank = (first + last) / 2.0 + 1.0
    out = np.empty(len(values), dtype=float)
    out[order] = mean_rank[group]
    return out


def roc_auc(y: FloatArray, score: FloatArray) -> float:
    """Probability that a harmful answer outscores a harmless one, ties 1/2 (NaN with one class only)."""
    positive = y.astype(bool)
    n_pos = int(positive.sum())
    n_neg = len(y) - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    rank_sum = float(ranks(np.asarray(score, dtype=float))[positive].sum())
    return (rank_sum - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)


def average_precision(y: FloatArray, score: FloatArray) -> float:
    """Step-wise average precision of flagging the highest scores first (NaN without a harmful answer)."""
    positive = y.astype(bool)
    n_pos = int(positive.sum())
    if n_pos == 0:
        return float("nan")
    order = np.argsort(-np.asarray(score, dtype=float), kind="mergesort")
    s, b = score[order], positive[order]
    last_of_tie = np.r_[np.flatnonzero(s[1:] != s[:-1]), len(s) - 1]
    tps = np.cumsum(b)[last_of_tie]
    flagged = last_of_tie + 1
    recall_steps = np.diff(np.r_[0, tps]) / n_pos
    return float(np.sum(recall_steps * tps / flagged))


def expected_cost(y: FloatArray, probability: FloatArray, costs: Costs = DEFAULT_COSTS) -> float:
    """Mean cost per answer when those with ``probability > costs.threshold`` are reviewed."""
    flagged = probability > costs.threshold
    harmful = y.astype(bool)
    missed = int(np.sum(harmful & ~flagged))
    needless = int(np.sum(~harmful & flagged))
    return (costs.miss * missed + costs.review * needless) / len(y)


def stratified_folds(y: FloatArray, folds: int, rng: np.random.Generator) -> FloatArray:
    """A fold number (0 .. folds-1) per row; each class is shuffled, then dealt round-robin, so every fold
    holds its share of harmful and harmless answers."""
    fold = np.empty(len(y), dtype=int)
    offset = 0
    for value in (1, 0):
        members = rng.permutation(np.flatnonzero(y == value))
        fold[members] = (np.arange(len(members)) + offset) % folds
        offset += len(members)  # the next class continues the deal, so fold sizes stay balanced
    return fold


def stratified_resample(y: FloatArray, rng: np.random.Generator) -> FloatArray:
    """Row indices of one bootstrap resample drawn within each class: both outcomes stay present, in the
    proportions observed (the intervals are conditional on the observed prevalence)."""
    parts = []
    for value in (1, 0):
        members = np.flatnonzero(y == value)
        parts.append(members[rng.integers(0, len(members), len(members))])
    return np.concatenate(parts)
