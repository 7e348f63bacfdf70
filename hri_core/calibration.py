"""Calibration of the HRI against known outcomes: ROC and PR curves, cost-optimal thresholds, bands.

Input is a list of ``(score, bad)`` pairs: the HRI score (0-100) of a response and whether the
response later proved bad (a confirmed correction, an incident, an adjudicated hallucination). The
console uses these to show how well the score separates bad from good answers and to propose band
thresholds from the cost of a missed bad answer against the cost of a needless review
(DOMAIN.md section 8).

One semantic throughout, the same as ``ScoringProfile.band_for``: scores are compared at 9 decimals,
and a threshold ``t`` *flags* a response when ``score > t`` -- a score equal to a band's upper bound
stays in the lower band. Curves and thresholds need both outcomes present; a calibration table needs
only some data. Bad input raises ``HRIError`` naming the pair and field.

Pure computation with numpy; the calibration page renders the results.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import outcome_metrics
from .errors import FieldProblem, HRIError
from .profile import REVIEW_ACTIONS, SCORE_DECIMALS, ScoringProfile, default_profile

__all__ = [
    "CalibrationBin",
    "CostThreshold",
    "PrCurve",
    "PrPoint",
    "RocCurve",
    "RocPoint",
    "ThresholdCost",
    "calibration_table",
    "cost_optimal_threshold",
    "precision_recall_curve",
    "roc_auc",
    "roc_curve",
    "score_bins",
    "suggest_bands",
]

MAX_REPORTED_PROBLEMS = 20


# --- results ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RocPoint:
    """One ROC point: flagging ``score > threshold`` gives this false and true positive rate.

    ``threshold`` is ``-inf`` for the last point, which flags every response.
    """

    threshold: float
    fpr: float
    tpr: float
    true_positives: int
    false_positives: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``threshold`` None for -inf)."""
        return {"threshold": None if math.isinf(self.threshold) else self.threshold, "fpr": self.fpr,
                "tpr": self.tpr, "true_positives": self.true_positives,
                "false_positives": self.false_positives}


@dataclass(frozen=True)
class RocCurve:
    """ROC points from (0, 0) to (1, 1) by decreasing threshold, and the trapezoid AUC.

    Tied scores move together (one diagonal step), so a tie between a bad and a good response counts
    one half, as in the Mann-Whitney statistic.
    """

    points: tuple[RocPoint, ...]
    auc: float
    positives: int
    negatives: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"auc": self.auc, "positives": self.positives, "negatives": self.negatives,
                "points": [p.to_dict() for p in self.points]}


@dataclass(frozen=True)
class PrPoint:
    """One precision-recall point for flagging ``score > threshold`` (-inf: flag everything)."""

    threshold: float
    recall: float
    precision: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``threshold`` None for -inf)."""
        return {"threshold": None if math.isinf(self.threshold) else self.threshold,
                "recall": self.recall, "precision": self.precision}


@dataclass(frozen=True)
class PrCurve:
    """Precision-recall points by decreasing threshold and the average precision.

    ``average_precision = sum_k (R_k - R_(k-1)) * P_k`` over the thresholds (R_0 = 0): the step-wise,
    non-interpolated definition (as scikit-learn's). ``prevalence`` (share of bad responses) is the
    AP of a score that carries no information.
    """

    points: tuple[PrPoint, ...]
    average_precision: float
    prevalence: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"average_precision": self.average_precision, "prevalence": self.prevalence,
                "points": [p.to_dict() for p in self.points]}


@dataclass(frozen=True)
class ThresholdCost:
    """The cost of flagging ``score > threshold``: missed bad answers (FN) and needless reviews (FP).

    ``total_cost = cost_miss * FN + cost_review * FP``; ``expected_cost`` is that per response.
    """

    threshold: float
    false_negatives: int
    false_positives: int
    flagged: int
    total_cost: float
    expected_cost: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"threshold": self.threshold, "false_negatives": self.false_negatives,
                "false_positives": self.false_positives, "flagged": self.flagged,
                "total_cost": self.total_cost, "expected_cost": self.expected_cost}


@dataclass(frozen=True)
class CostThreshold:
    """The cost-minimising threshold and every candidate considered.

    Every threshold in ``[best.threshold, interval_upper)`` flags the same responses and costs the
    same; ``best.threshold`` is the lowest of them (the highest observed score still released).
    Among equally cheap candidates the lowest threshold wins: it misses no more bad answers.
    """

    best: ThresholdCost
    interval_upper: float
    candidates: tuple[ThresholdCost, ...]
    cost_miss: float
    cost_review: float

    @property
    def threshold(self) -> float:
        """The chosen threshold (flag for review when score > threshold)."""
        return self.best.threshold

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"threshold": self.threshold, "interval_upper": self.interval_upper,
                "best": self.best.to_dict(), "cost_miss": self.cost_miss, "cost_review": self.cost_review,
                "candidates": [c.to_dict() for c in self.candidates]}


@dataclass(frozen=True)
class CalibrationBin:
    """Responses with ``lower < score <= upper`` (the first bin also takes ``score == lower``)."""

    lower: float
    upper: float
    count: int
    bad: int
    bad_rate: float | None
    mean_score: float | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"lower": self.lower, "upper": self.upper, "count": self.count, "bad": self.bad,
                "bad_rate": self.bad_rate, "mean_score": self.mean_score}


# --- input --------------------------------------------------------------------------------------


def _outcomes(pairs: Iterable[Any], *, both_classes: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Validated ``(scores, bad)`` arrays; scores rounded to 9 decimals like ``band_for``."""
    if pairs is None or isinstance(pairs, (str, bytes)):
        raise HRIError([FieldProblem("pairs", "expected a list of (score, bad) pairs")])
    problems: list[FieldProblem] = []
    scores: list[float] = []
    bads: list[bool] = []
    count = 0
    for k, pair in enumerate(pairs):
        count += 1
        if isinstance(pair, (str, bytes)) or not isinstance(pair, (Sequence, np.ndarray)) or len(pair) != 2:
            problems.append(FieldProblem(f"pairs[{k}]", f"expected a (score, bad) pair, got {pair!r}"))
            continue
        score, bad = pair[0], pair[1]
        ok = True
        if isinstance(score, (bool, np.bool_)) or not isinstance(score, (int, float, np.integer, np.floating)):
            problems.append(FieldProblem(f"pairs[{k}].score", f"must be a number, got {score!r}"))
            ok = False
        elif not (0.0 <= float(score) <= 100.0):  # also refuses NaN
            problems.append(FieldProblem(f"pairs[{k}].score", f"must be between 0 and 100, got {score!r}"))
            ok = False
        if isinstance(bad, (bool, np.bool_)):
            bad = bool(bad)
        elif isinstance(bad, (int, np.integer)) and int(bad) in (0, 1):
            bad = bool(int(bad))
        else:
            problems.append(FieldProblem(f"pairs[{k}].bad", f"must be true or false, got {bad!r}"))
            ok = False
        if ok:
            scores.append(round(float(score), SCORE_DECIMALS))
            bads.append(bad)
    if problems:
        shown = problems[:MAX_REPORTED_PROBLEMS]
        if len(problems) > len(shown):
            shown.append(FieldProblem("pairs", f"... and {len(problems) - len(shown)} more problem(s)"))
        raise HRIError(shown)
    if count == 0:
        raise HRIError([FieldProblem("pairs", "no (score, bad) pairs: calibration needs known outcomes")])
    bad_array = np.array(bads, dtype=bool)
    if both_classes:
        n_bad = int(bad_array.sum())
        if n_bad == 0 or n_bad == len(bad_array):
            only = "bad" if n_bad else "good"
            raise HRIError([FieldProblem("pairs", f"all {len(bad_array)} outcome(s) are {only}: curves and "
                                                  "thresholds need both bad and good responses")])
    return np.array(scores, dtype=float), bad_array


def _cost(value: Any, loc: str, problems: list[FieldProblem]) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        problems.append(FieldProblem(loc, f"must be a finite number >= 0, got {value!r}"))
        return 0.0
    return float(value)


# --- curves -------------------------------------------------------------------------------------


def _cumulative(scores: np.ndarray, bad: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct scores (descending) and the bad/good counts with score >= each of them."""
    order = np.argsort(-scores, kind="stable")
    s, b = scores[order], bad[order]
    last_of_group = np.r_[np.nonzero(np.diff(s))[0], len(s) - 1]
    tps = np.cumsum(b)[last_of_group]
    fps = np.cumsum(~b)[last_of_group]
    return s[last_of_group], tps, fps


def roc_curve(pairs: Iterable[Any]) -> RocCurve:
    """ROC curve of the score as a detector of bad responses, with the trapezoid AUC.

    Point k flags ``score > threshold_k``: the first point (threshold = the highest score) flags
    nothing, the last (threshold -inf) flags everything. Needs both outcomes present.
    """
    scores, bad = _outcomes(pairs)
    distinct, tps, fps = _cumulative(scores, bad)
    positives, negatives = int(bad.sum()), int((~bad).sum())
    tp = np.r_[0, tps]
    fp = np.r_[0, fps]
    thresholds = np.r_[distinct, -np.inf]
    tpr, fpr = tp / positives, fp / negatives
    auc = outcome_metrics.roc_auc(bad, scores)  # the one definition: equals the curve's trapezoid area
    points = tuple(RocPoint(threshold=float(t), fpr=float(x), tpr=float(y), true_positives=int(a),
                            false_positives=int(c))
                   for t, x, y, a, c in zip(thresholds, fpr, tpr, tp, fp, strict=True))
    return RocCurve(points=points, auc=auc, positives=positives, negatives=negatives)


def roc_auc(pairs: Iterable[Any]) -> float:
    """Area under the ROC curve of validated ``(score, bad)`` pairs: the probability that a bad response outscores
    a good one, ties 1/2 (``hri_core.outcome_metrics.roc_auc`` over the pairs). Needs both outcomes present."""
    scores, bad = _outcomes(pairs)
    return outcome_metrics.roc_auc(bad, scores)


def precision_recall_curve(pairs: Iterable[Any]) -> PrCurve:
    """Precision-recall points by decreasing threshold (flag ``score > threshold``) and the average
    precision. Needs both outcomes present."""
    scores, bad = _outcomes(pairs)
    distinct, tps, fps = _cumulative(scores, bad)
    positives = int(bad.sum())
    recall = tps / positives
    precision = tps / (tps + fps)
    thresholds = np.r_[distinct[1:], -np.inf]  # the k-th group is flagged by score > the next score
    ap = outcome_metrics.average_precision(bad, scores)  # the one definition: the curve's step-wise sum
    points = tuple(PrPoint(threshold=float(t), recall=float(r), precision=float(p))
                   for t, r, p in zip(thresholds, recall, precision, strict=True))
    return PrCurve(points=points, average_precision=ap, prevalence=positives / len(bad))


# --- cost-sensitive thresholds ------------------------------------------------------------------


def cost_optimal_threshold(pairs: Iterable[Any], cost_miss: float, cost_review: float) -> CostThreshold:
    """The threshold ``t`` in [0, 100] minimising ``cost_miss * FN(t) + cost_review * FP(t)``, where a
    response is flagged for review when ``score > t``: FN(t) counts bad responses with score <= t,
    FP(t) good ones with score > t.

    The cost only changes at observed scores, so the candidates are 0, 100 and every observed score;
    each stands for the interval up to the next candidate. Needs both outcomes present.
    """
    problems: list[FieldProblem] = []
    c_miss = _cost(cost_miss, "cost_miss", problems)
    c_review = _cost(cost_review, "cost_review", problems)
    if not problems and c_miss == 0 and c_review == 0:
        problems.append(FieldProblem("cost_miss", "cost_miss and cost_review cannot both be 0"))
    if problems:
        raise HRIError(problems)
    scores, bad = _outcomes(pairs)
    bad_scores = np.sort(scores[bad])
    good_scores = np.sort(scores[~bad])
    candidates = np.unique(np.r_[0.0, 100.0, scores])
    fn = np.searchsorted(bad_scores, candidates, side="right")
    fp = len(good_scores) - np.searchsorted(good_scores, candidates, side="right")
    totals = c_miss * fn + c_review * fp
    n = len(scores)
    costs = tuple(ThresholdCost(threshold=float(t), false_negatives=int(a), false_positives=int(b),
                                flagged=int(np.sum(scores > t)), total_cost=float(c), expected_cost=float(c) / n)
                  for t, a, b, c in zip(candidates, fn, fp, totals, strict=True))
    # first minimum = lowest threshold among ties; costs equal up to float rounding count as ties
    # (c*2 + c*1 and c*1 + c*2 may differ in the last bit)
    tie = totals.min() * (1 + 1e-12) + 1e-12
    best = int(np.flatnonzero(totals <= tie)[0])
    upper = float(candidates[best + 1]) if best + 1 < len(candidates) else 100.0
    return CostThreshold(best=costs[best], interval_upper=upper, candidates=costs,
                         cost_miss=c_miss, cost_review=c_review)


# --- calibration table --------------------------------------------------------------------------


def _bin_uppers(bins: int | Sequence[float]) -> list[float]:
    if isinstance(bins, bool):
        raise HRIError([FieldProblem("bins", f"must be a number of bins or a list of upper bounds, got {bins!r}")])
    if isinstance(bins, (int, np.integer)):
        if bins < 1:
            raise HRIError([FieldProblem("bins", f"must be at least 1, got {bins}")])
        return [100.0 * (k + 1) / int(bins) for k in range(int(bins))]
    if isinstance(bins, (str, bytes)) or not isinstance(bins, Sequence) or not bins:
        raise HRIError([FieldProblem("bins", "must be a number of bins or a non-empty list of upper bounds")])
    problems: list[FieldProblem] = []
    uppers: list[float] = []
    for k, raw in enumerate(bins):
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not (0.0 <= float(raw) <= 100.0):
            problems.append(FieldProblem(f"bins[{k}]", f"must be a number between 0 and 100, got {raw!r}"))
            continue
        if uppers and float(raw) <= uppers[-1]:
            problems.append(FieldProblem(f"bins[{k}]", f"must be greater than the previous upper ({uppers[-1]:g})"))
        uppers.append(float(raw))
    if not problems and uppers[-1] != 100.0:
        problems.append(FieldProblem(f"bins[{len(bins) - 1}]", "the last upper bound must be 100 to cover 0-100"))
    if problems:
        raise HRIError(problems)
    return uppers


def score_bins(band_uppers: Sequence[float], width: float = 5.0) -> tuple[float, ...]:
    """Upper bounds of score bins about ``width`` wide that never straddle a band bound.

    Each band ``(lower, upper]`` is cut into ``max(1, round((upper - lower) / width))`` equal bins, so
    every band bound is a bin bound and every bin lies inside one band. Bins are read like bands
    (``calibration_table``, ``ScoringProfile.band_for``): ``(lower, upper]``, the first also takes 0, so a
    score equal to a band's upper bound is counted in that band. The overview's histogram (in SQL) and
    the calibration page bin with these same bounds. ``band_uppers`` is a profile's band uppers, e.g.
    ``[20, 50, 75, 100]`` (5-wide bins: 4 + 6 + 5 + 5 = 20 bins).
    """
    uppers = _bin_uppers(list(band_uppers))
    if isinstance(width, bool) or not isinstance(width, (int, float)) or not (0 < float(width) <= 100):
        raise HRIError([FieldProblem("width", f"must be a number in (0, 100], got {width!r}")])
    out: list[float] = []
    lower = 0.0
    for upper in uppers:
        count = max(1, round((upper - lower) / float(width)))
        out += [round(lower + (upper - lower) * (k + 1) / count, SCORE_DECIMALS) for k in range(count - 1)]
        out.append(upper)  # exact, not recomputed: the band bound itself
        lower = upper
    return tuple(out)


def calibration_table(pairs: Iterable[Any], bins: int | Sequence[float] = 10) -> tuple[CalibrationBin, ...]:
    """Observed bad rate per score bin, with counts.

    ``bins`` is a number of equal-width bins over 0-100 (default 10: [0, 10], (10, 20], ...) or the
    list of upper bounds, e.g. a profile's band uppers ``[20, 50, 75, 100]``. Bounds are inclusive
    upper bounds, as in ``band_for``. An empty bin has ``bad_rate`` and ``mean_score`` None. A
    single outcome class is allowed here (its rates are 0 or 1); empty input is not.
    """
    uppers = _bin_uppers(bins)
    scores, bad = _outcomes(pairs, both_classes=False)
    index = np.searchsorted(np.array(uppers), scores, side="left")  # first upper >= score
    out = []
    lower = 0.0
    for k, upper in enumerate(uppers):
        members = index == k
        count = int(members.sum())
        n_bad = int(bad[members].sum())
        out.append(CalibrationBin(lower=lower, upper=upper, count=count, bad=n_bad,
                                  bad_rate=n_bad / count if count else None,
                                  mean_score=float(scores[members].mean()) if count else None))
        lower = upper
    return tuple(out)


# --- band suggestion ----------------------------------------------------------------------------


def suggest_bands(pairs: Iterable[Any], cost_miss: float, cost_review: float,
                  profile: ScoringProfile | None = None, *, digits: int = 2) -> dict[str, list[dict[str, Any]]]:
    """Propose band uppers from outcomes: ``{"bands": [...]}`` for ``profile_from_dict``.

    Keeps the profile's bands (names, actions, count). The *review boundary* -- the upper of the last
    band before the first band whose action is review or block -- moves to the cost-optimal threshold
    t* (``cost_optimal_threshold``), kept exact. Bands below it are rescaled proportionally into
    [0, t*], bands between it and the last band linearly into [t*, 100], rounded to ``digits``; the last
    band still ends at 100. Raises ``HRIError`` when the profile has no release/caution band before a
    review band, or when t* leaves no room to keep the bands strictly ordered (e.g. t* = 0 with two
    bands below it, or t* = 100 with a review band before the last).
    """
    profile = profile or default_profile()
    bands = list(profile.bands)
    first_review = next((k for k, b in enumerate(bands) if b.action in REVIEW_ACTIONS), None)
    if first_review is None or first_review == 0:
        why = "no band sends responses to review or block" if first_review is None \
            else "the first band already sends every response to review or block"
        raise HRIError([FieldProblem("bands", f"cannot place a review threshold: {why}")])
    threshold = cost_optimal_threshold(pairs, cost_miss, cost_review).threshold
    b = first_review - 1
    old = bands[b].upper
    uppers: list[float] = []
    for k, band in enumerate(bands):
        if k == len(bands) - 1:
            uppers.append(100.0)
        elif k < b:
            uppers.append(round(band.upper * threshold / old, digits) if old > 0 else 0.0)
        elif k == b:
            uppers.append(threshold)
        else:
            uppers.append(round(threshold + (band.upper - old) * (100.0 - threshold) / (100.0 - old), digits))
    for k in range(1, len(uppers)):
        if uppers[k] <= uppers[k - 1]:
            raise HRIError([FieldProblem(
                f"bands[{k}].upper",
                f"the cost-optimal review threshold {threshold:g} (cost_miss={cost_miss:g}, "
                f"cost_review={cost_review:g}) leaves no room for the {len(bands)} bands to stay ordered "
                f"({', '.join(f'{u:g}' for u in uppers)}); adjust the costs or the band count")])
    return {"bands": [{"name": band.name, "upper": upper, "action": band.action}
                      for band, upper in zip(bands, uppers, strict=True)]}
