"""Confidence intervals: ``bootstrap_alpha`` / ``bootstrap_kappa`` resample units with replacement
(seeded ``numpy`` generator) and take the percentile interval of the resampled statistic.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import FieldProblem
from .alpha import _alpha_from_coincidences, _coincidences
from .kappa import _kappa_from_counts, _paired_values, _two_raters, cohen_kappa
from .ratings import AgreementError, Level, Rating, Value, _by_unit, _sort_key, _table

__all__ = ["DEFAULT_BOOTSTRAP_SAMPLES", "BootstrapInterval", "bootstrap_alpha", "bootstrap_kappa"]

# Resamples a bootstrap draws unless told otherwise; 1,000 keeps the 2.5 % / 97.5 % percentiles stable
# to about +-0.01 on a few hundred units, and costs milliseconds.
DEFAULT_BOOTSTRAP_SAMPLES = 1000


@dataclass(frozen=True)
class BootstrapInterval:
    """Percentile bootstrap interval of a statistic, resampling units.

    ``estimate`` is the statistic on the data as given; ``low``/``high`` the ``(1 - confidence) / 2``
    and ``1 - (1 - confidence) / 2`` quantiles (numpy's default linear interpolation) of the
    ``samples - undefined`` resamples on which the statistic was defined.
    """

    estimate: float | None
    low: float | None
    high: float | None
    confidence: float
    samples: int
    undefined: int
    seed: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"estimate": self.estimate, "low": self.low, "high": self.high, "confidence": self.confidence,
                "samples": self.samples, "undefined": self.undefined, "seed": self.seed}


# --- bootstrap ------------------------------------------------------------------------------------------


def _percentile_interval(estimate: float | None, draws: list[float], confidence: float, samples: int,
                         seed: int) -> BootstrapInterval:
    if draws:
        tail = (1.0 - confidence) / 2.0
        low, high = (float(q) for q in np.quantile(np.array(draws), [tail, 1.0 - tail]))
        return BootstrapInterval(estimate, low, high, confidence, samples, samples - len(draws), seed)
    return BootstrapInterval(estimate, None, None, confidence, samples, samples, seed)


def _check_bootstrap(samples: int, confidence: float) -> None:
    problems = []
    if samples < 1:
        problems.append(FieldProblem("samples", f"must be at least 1, got {samples}"))
    if not 0.0 < confidence < 1.0:
        problems.append(FieldProblem("confidence", f"must be between 0 and 1, got {confidence}"))
    if problems:
        raise AgreementError(problems)


def _resample_weights(units: int, samples: int, seed: int) -> NDArray[np.float64]:
    """``samples`` x ``units``: how often each unit is drawn in each resample (with replacement)."""
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, units, size=(samples, units))
    weights = np.zeros((samples, units), dtype=np.float64)
    np.add.at(weights, (np.arange(samples)[:, None], drawn), 1.0)
    return weights


def bootstrap_alpha(ratings: Iterable[Rating], level: Level = "nominal", *, samples: int = DEFAULT_BOOTSTRAP_SAMPLES,
                    confidence: float = 0.95, seed: int = 0, order: Sequence[Value] | None = None) -> BootstrapInterval:
    """Percentile bootstrap interval of Krippendorff's alpha, resampling the pairable units.

    Units rated by fewer than two raters carry no pairable value, so only pairable units are drawn;
    a resample on which alpha is undefined (all drawn values equal) is counted in ``undefined``.
    """
    _check_bootstrap(samples, confidence)
    table = _table(ratings, level, order)
    estimate, *_ = _alpha_from_coincidences(level, table.numbers, _coincidences(table.counts))
    pairable_units = table.counts.shape[0]
    if pairable_units == 0:
        return _percentile_interval(estimate, [], confidence, samples, seed)
    draws = []
    for weights in _resample_weights(pairable_units, samples, seed):
        alpha, *_ = _alpha_from_coincidences(level, table.numbers, _coincidences(table.counts, weights))
        if alpha is not None:
            draws.append(alpha)
    return _percentile_interval(estimate, draws, confidence, samples, seed)


def bootstrap_kappa(ratings: Iterable[Rating], raters: tuple[str, str] | None = None, *,
                    samples: int = DEFAULT_BOOTSTRAP_SAMPLES, confidence: float = 0.95,
                    seed: int = 0) -> BootstrapInterval:
    """Percentile bootstrap interval of Cohen's kappa, resampling the units both raters rated."""
    _check_bootstrap(samples, confidence)
    ratings = list(ratings)
    estimate = cohen_kappa(ratings, raters).kappa
    table, seen = _by_unit(ratings)
    pairs = _paired_values(table, _two_raters(seen, raters))
    if not pairs:
        return _percentile_interval(estimate, [], confidence, samples, seed)
    categories = sorted({v for p in pairs for v in p}, key=_sort_key)
    index = {value: i for i, value in enumerate(categories)}
    first = np.eye(len(categories))[[index[x] for x, _ in pairs]]
    second = np.eye(len(categories))[[index[y] for _, y in pairs]]
    agrees = np.array([float(x == y) for x, y in pairs])
    weights = _resample_weights(len(pairs), samples, seed)
    a_counts, b_counts, agree_counts = weights @ first, weights @ second, weights @ agrees
    draws = []
    for a, b, agree in zip(a_counts, b_counts, agree_counts, strict=True):
        kappa, _, _ = _kappa_from_counts(float(agree), a, b)
        if kappa is not None:
            draws.append(kappa)
    return _percentile_interval(estimate, draws, confidence, samples, seed)
