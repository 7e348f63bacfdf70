"""Delphi rounds: experts' weight vectors, their spread per dimension, and convergence (DOMAIN.md 8).

In each round every expert gives a weight per risk dimension (and, optionally, a rationale); the
group sees the median and interquartile range (IQR) of each dimension and each expert's distance from
the median vector, and revises in the next round. The rounds stop when every IQR is below a chosen
threshold; the medians, renormalised, become the draft weights of a profile (via
``hri_core.ahp.weights_to_profile_dict``).

Definitions fixed here:
- quantiles are Hyndman and Fan's type 7 (linear interpolation between order statistics,
  ``numpy.quantile(method="linear")``, the default of numpy and R): with sorted values x_1..x_m the
  p-quantile is x_(1 + h) interpolated at h = (m - 1) p;
- an expert's distance is the Euclidean distance between their normalised weight vector and the
  vector of per-dimension medians (the medians as shown, not renormalised).

Pure data classes, no storage: the register keeps the rounds; pages render the summaries.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .ahp import DIMENSION_LETTERS
from .errors import FieldProblem, HRIError

__all__ = [
    "DelphiRound",
    "DimensionSpread",
    "ExpertEstimate",
    "QUANTILE_METHOD",
    "RoundSummary",
    "build_round",
    "converged",
    "expert_estimate",
    "final_weights",
    "summarise_round",
]

# numpy's name for Hyndman & Fan type 7.
QUANTILE_METHOD: Literal["linear"] = "linear"


@dataclass(frozen=True)
class ExpertEstimate:
    """One expert's weight vector in one round, normalised to sum 1, with an optional rationale."""

    expert: str
    weights: dict[str, float]
    rationale: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"expert": self.expert, "weights": dict(self.weights), "rationale": self.rationale}


@dataclass(frozen=True)
class DelphiRound:
    """The estimates of one round (``number`` >= 1) over ``criteria`` (default: F, C, U, O, S, P, H)."""

    number: int
    estimates: tuple[ExpertEstimate, ...]
    criteria: tuple[str, ...] = DIMENSION_LETTERS

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the elicitation record attached to a draft profile)."""
        return {"round": self.number, "criteria": list(self.criteria),
                "experts": [e.to_dict() for e in self.estimates]}


@dataclass(frozen=True)
class DimensionSpread:
    """Median, quartiles (type 7), IQR = Q3 - Q1, and range of one dimension's weights in a round."""

    median: float
    q1: float
    q3: float
    iqr: float
    minimum: float
    maximum: float

    def to_dict(self) -> dict[str, float]:
        """JSON-ready form."""
        return {"median": self.median, "q1": self.q1, "q3": self.q3, "iqr": self.iqr,
                "min": self.minimum, "max": self.maximum}


@dataclass(frozen=True)
class RoundSummary:
    """What the group is shown after a round: spread per dimension and each expert's distance."""

    round_number: int
    criteria: tuple[str, ...]
    experts: tuple[str, ...]
    spread: dict[str, DimensionSpread]
    median_vector: dict[str, float]
    distances: dict[str, float]

    @property
    def max_iqr(self) -> float:
        """The largest IQR over the dimensions (the round converged when this is below the threshold)."""
        return max(s.iqr for s in self.spread.values())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"round": self.round_number, "criteria": list(self.criteria), "experts": list(self.experts),
                "spread": {k: v.to_dict() for k, v in self.spread.items()},
                "median_vector": dict(self.median_vector), "distances": dict(self.distances)}


def _key(key: Any) -> str:
    return str(getattr(key, "value", key))


def expert_estimate(expert: Any, weights: Any, rationale: Any = None, *,
                    criteria: Sequence[str] = DIMENSION_LETTERS, loc: str = "") -> ExpertEstimate:
    """Validate one expert's weights (every criterion, finite, >= 0, not all zero) and normalise them.

    Keys may be ``Dimension`` members or their letters. Raises ``HRIError`` naming every bad field,
    with ``loc`` as the path prefix (e.g. ``experts[2]``).
    """
    prefix = f"{loc}." if loc else ""
    problems: list[FieldProblem] = []
    if not isinstance(expert, str) or not expert.strip():
        problems.append(FieldProblem(f"{prefix}expert", f"must be a non-empty name, got {expert!r}"))
    if rationale is not None and not isinstance(rationale, str):
        problems.append(FieldProblem(f"{prefix}rationale", f"must be text, got {type(rationale).__name__}"))
    if not isinstance(weights, Mapping):
        problems.append(FieldProblem(f"{prefix}weights", f"must be a mapping of dimension to weight, "
                                                         f"got {type(weights).__name__}"))
        raise HRIError(problems)
    clean: dict[str, float] = {}
    for key, raw in weights.items():
        name = _key(key)
        where = f"{prefix}weights.{name}"
        if name not in criteria:
            problems.append(FieldProblem(where, f"unknown dimension; expected one of {', '.join(criteria)}"))
        elif isinstance(raw, bool) or not isinstance(raw, (int, float, np.integer, np.floating)):
            problems.append(FieldProblem(where, f"must be a number, got {raw!r}"))
        elif not math.isfinite(float(raw)) or float(raw) < 0:
            problems.append(FieldProblem(where, f"must be a finite number >= 0, got {raw!r}"))
        else:
            clean[name] = float(raw)
    reported = {p.loc for p in problems}
    missing = [c for c in criteria if c not in clean and f"{prefix}weights.{c}" not in reported]
    if missing:
        problems.append(FieldProblem(f"{prefix}weights", f"missing dimension(s) {', '.join(missing)}"))
    if not problems and math.fsum(clean.values()) <= 0:
        problems.append(FieldProblem(f"{prefix}weights", "at least one weight must be positive"))
    if problems:
        raise HRIError(problems)
    total = math.fsum(clean.values())
    return ExpertEstimate(expert=expert.strip(), weights={c: clean[c] / total for c in criteria},
                          rationale=rationale)


def build_round(number: int, experts: Sequence[Any], *,
                criteria: Sequence[str] = DIMENSION_LETTERS) -> DelphiRound:
    """A validated round from ``ExpertEstimate`` objects or mappings
    ``{"expert": "A", "weights": {"F": 0.3, ...}, "rationale": "..."}``.

    Needs at least one expert and distinct expert names; every problem is named with its path
    (``experts[1].weights.F``).
    """
    names = tuple(_key(c) for c in criteria)
    problems: list[FieldProblem] = []
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        problems.append(FieldProblem("round", f"must be an integer >= 1, got {number!r}"))
    if isinstance(experts, (str, bytes)) or not isinstance(experts, Sequence) or not experts:
        problems.append(FieldProblem("experts", "at least one expert estimate is required"))
        raise HRIError(problems)
    estimates: list[ExpertEstimate] = []
    for k, item in enumerate(experts):
        loc = f"experts[{k}]"
        try:
            if isinstance(item, ExpertEstimate):
                estimate = expert_estimate(item.expert, item.weights, item.rationale, criteria=names, loc=loc)
            elif isinstance(item, Mapping):
                unknown = sorted(set(map(str, item)) - {"expert", "weights", "rationale"})
                if unknown:
                    problems.extend(FieldProblem(f"{loc}.{u}", "unknown field") for u in unknown)
                estimate = expert_estimate(item.get("expert"), item.get("weights"), item.get("rationale"),
                                           criteria=names, loc=loc)
            else:
                problems.append(FieldProblem(loc, f"expected an object with expert and weights, "
                                                  f"got {type(item).__name__}"))
                continue
        except HRIError as error:
            problems.extend(error.problems)
            continue
        estimates.append(estimate)
    seen: dict[str, int] = {}
    for k, estimate in enumerate(estimates):
        if estimate.expert in seen:
            problems.append(FieldProblem(f"experts[{k}].expert", f"duplicate expert {estimate.expert!r}"))
        seen.setdefault(estimate.expert, k)
    if problems:
        raise HRIError(problems)
    return DelphiRound(number=number, estimates=tuple(estimates), criteria=names)


def summarise_round(delphi_round: DelphiRound) -> RoundSummary:
    """Median, Q1, Q3 (type 7), IQR, min and max per dimension, and each expert's Euclidean distance
    from the median vector."""
    criteria = delphi_round.criteria
    table = np.array([[e.weights[c] for c in criteria] for e in delphi_round.estimates], dtype=float)
    q1, median, q3 = np.quantile(table, [0.25, 0.5, 0.75], axis=0, method=QUANTILE_METHOD)
    spread = {
        c: DimensionSpread(median=float(median[k]), q1=float(q1[k]), q3=float(q3[k]),
                           iqr=float(q3[k] - q1[k]), minimum=float(table[:, k].min()),
                           maximum=float(table[:, k].max()))
        for k, c in enumerate(criteria)
    }
    distances = np.sqrt(((table - median) ** 2).sum(axis=1))
    return RoundSummary(
        round_number=delphi_round.number,
        criteria=criteria,
        experts=tuple(e.expert for e in delphi_round.estimates),
        spread=spread,
        median_vector={c: float(median[k]) for k, c in enumerate(criteria)},
        distances={e.expert: float(d) for e, d in zip(delphi_round.estimates, distances, strict=True)},
    )


def converged(summary: RoundSummary, threshold: float) -> bool:
    """True when every dimension's IQR is strictly below ``threshold`` (a weight difference, e.g. 0.05)."""
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold) \
            or threshold <= 0:
        raise HRIError([FieldProblem("threshold", f"must be a finite number > 0, got {threshold!r}")])
    return all(s.iqr < threshold for s in summary.spread.values())


def final_weights(summary: RoundSummary) -> dict[str, float]:
    """The per-dimension medians normalised to sum 1 (medians of normalised vectors need not sum to 1)."""
    total = math.fsum(summary.median_vector.values())
    if total <= 0:
        raise HRIError([FieldProblem("median_vector", "every median is 0: there are no weights to normalise")])
    return {c: summary.median_vector[c] / total for c in summary.criteria}
