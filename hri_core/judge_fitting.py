"""Fitting a judge profile's numbers on labelled pairs: logistic weights and the clearance threshold.

Two steps, both pure (numpy):

- ``fit_logistic``: L2-regularised logistic regression by Newton's method (iteratively reweighted
  least squares). Its output is already a Platt-calibrated probability on the data it was fitted on,
  which is how the offline judge's confidences are calibrated.
- ``clearance_threshold``: the lowest score threshold at which SUPPORTED verdicts keep false clearance
  within a limit *with a margin*: the upper end of the 95% Wilson interval of the false-clearance
  rate must stay at or below ``max_false_clearance`` at the chosen threshold and at every higher one
  (so a lucky dip of the curve is never chosen). ``clearance_curve`` gives the whole curve, for the
  judge page's threshold choice on the project's own labels.

Callers: ``scripts/fit_judge_profile.py`` (the shipped profiles), later the judge calibration page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .errors import HRIError
from .judging import Rate

__all__ = ["ClearancePoint", "clearance_curve", "clearance_threshold", "fit_logistic", "predict_logistic"]


def fit_logistic(rows: Sequence[Sequence[float]], targets: Sequence[bool], l2: float = 1.0,
                 iterations: int = 100) -> list[float]:
    """Weights of a logistic regression of ``targets`` on ``rows`` (column 0 is the intercept: unpenalised).

    Newton steps until the largest change is below 1e-9 or ``iterations`` is reached. Raises
    ``HRIError`` on empty or ragged input or when only one class is present.
    """
    x = np.asarray(rows, dtype=float)
    y = np.asarray(targets, dtype=float)
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[0] != y.shape[0]:
        raise HRIError("fit_logistic needs a non-empty 2-D table with one target per row")
    if y.min() == y.max():
        raise HRIError("fit_logistic needs both classes among the targets")
    penalty = np.full(x.shape[1], l2)
    penalty[0] = 0.0
    w = np.zeros(x.shape[1])
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -500, 500)))
        gradient = x.T @ (p - y) + penalty * w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty) + 1e-9 * np.eye(x.shape[1])
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return [float(v) for v in w]


def predict_logistic(rows: Sequence[Sequence[float]], weights: Sequence[float]) -> list[float]:
    """Probabilities of a fitted logistic model."""
    z = np.asarray(rows, dtype=float) @ np.asarray(weights, dtype=float)
    return [float(v) for v in 1.0 / (1.0 + np.exp(-np.clip(z, -500, 500)))]


@dataclass(frozen=True)
class ClearancePoint:
    """SUPPORTED verdicts at ``threshold``: false clearance among gold negatives, recall among gold positives."""

    threshold: float
    false_clearance: Rate
    supported_recall: Rate


def clearance_curve(scores: Sequence[float], supported: Sequence[bool],
                    eligible: Sequence[bool]) -> list[ClearancePoint]:
    """False clearance and supported recall when pairs with ``eligible`` (the judge's hard guards hold)
    and ``score >= t`` are cleared, for every distinct score ``t``, ascending."""
    if not len(scores) == len(supported) == len(eligible):
        raise HRIError("scores, supported and eligible must have the same length")
    s = np.asarray(scores, dtype=float)
    pos = np.asarray(supported, dtype=bool)
    ok = np.asarray(eligible, dtype=bool)
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    points = []
    for t in sorted({float(v) for v in s[ok]}):
        cleared = ok & (s >= t)
        points.append(ClearancePoint(t, Rate.of(int((cleared & ~pos).sum()), n_neg),
                                     Rate.of(int((cleared & pos).sum()), n_pos)))
    return points


def clearance_threshold(scores: Sequence[float], supported: Sequence[bool], eligible: Sequence[bool],
                        max_false_clearance: float = 0.05, upper_bound: bool = True) -> ClearancePoint:
    """The lowest threshold from which on false clearance stays <= the limit: its upper 95% Wilson
    bound, or with ``upper_bound=False`` the observed rate (for small samples, where the bound alone
    would clear almost nothing).

    Returns a point above every score (nothing cleared) when no threshold qualifies.
    """
    curve = clearance_curve(scores, supported, eligible)
    chosen: ClearancePoint | None = None
    for point in reversed(curve):
        rate = point.false_clearance.high if upper_bound else (point.false_clearance.value or 0.0)
        if rate > max_false_clearance:
            break
        chosen = point
    if chosen is None:
        n_pos = sum(1 for v in supported if v)
        return ClearancePoint(1.0 + max((float(v) for v in scores), default=0.0),
                              Rate.of(0, len(supported) - n_pos), Rate.of(0, n_pos))
    return chosen
