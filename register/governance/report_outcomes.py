"""The release report's optional section: the weights fitted to the register's outcomes and the aggregation models
compared on them, with their intervals (issue 38; ``register.scoring.register_outcomes``).

Off by default (``report_markdown(..., include_outcomes=True)``): the fit and the comparison bootstrap and
cross-validate, which takes seconds, not the milliseconds of the rest of the report. ``REPORT_RESAMPLES`` keeps
the bootstrap modest; the seed is the fit's default, so the same outcomes give the same section, reproduced by
``python -m register evidence fit-weights|compare-aggregations --resamples REPORT_RESAMPLES``. Too few outcomes
give one sentence saying how many there are and how many a fit needs. Every line is written by this code from
numbers and the register's fixed vocabulary; the profile's name is the one value read from the register, escaped
by the caller's renderer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hri_core import HRIError
from register.db.store import Store
from register.scoring.register_outcomes import compare_from_register, fit_from_register, register_outcomes

__all__ = ["REPORT_RESAMPLES", "OutcomeSection", "outcome_section"]

REPORT_RESAMPLES = 100
_METRICS = (("auc", "AUC"), ("average_precision", "AP"), ("expected_cost", "expected cost"))


@dataclass(frozen=True)
class OutcomeSection:
    """What the report says: the shortfall or failure (``note``), else the fit (``WeightFit.to_dict``) and the
    comparison rows, with the data's counts and hash."""

    note: str | None
    fit: dict[str, Any] | None
    comparison: list[dict[str, Any]]
    data: dict[str, Any]


def outcome_section(store: Store, *, resamples: int = REPORT_RESAMPLES) -> OutcomeSection:
    """The fit and the comparison of the register's outcomes (every kind), or why there are none."""
    data = register_outcomes(store)
    summary = data.summary()
    shortfall = data.shortfall()
    if shortfall is not None:
        return OutcomeSection(shortfall, None, [], summary)
    try:
        fit = fit_from_register(store, data_hash=data.data_hash, resamples=resamples).to_dict()
        rows = compare_from_register(store, data_hash=data.data_hash, resamples=resamples)
    except HRIError as error:
        return OutcomeSection(f"{error.title}: " + "; ".join(p.message for p in error.problems), None, [], summary)
    return OutcomeSection(None, fit, rows, summary)


def interval(values: list[float] | None) -> str:
    """``[low, high]`` to 3 decimals, or ``-``."""
    return "-" if not values else f"[{values[0]:.3f}, {values[1]:.3f}]"


def number(value: float | None) -> str:
    """A metric to 3 decimals, or ``-`` when undefined."""
    return "-" if value is None else f"{value:.3f}"


def section_lines(section: OutcomeSection, esc: Callable[[object], str]) -> dict[str, Any]:
    """The section as sentences and table rows shared by the Markdown and the PDF (``esc`` writes the profile's
    name): ``intro``, ``weights`` (dimension, fitted, interval, active), ``cv`` and ``models`` (name, then metric
    and interval pairs), ``commands``."""
    d = section.data
    kinds = ", ".join(f"{k} {v['n']} ({v['harmful']} harmful)" for k, v in d["kinds"].items()) or "none"
    intro = [f"Outcomes in the register: {d['n']} answer(s), {d['harmful']} harmful; kinds: {kinds}; data sha256 "
             f"{d['sha256'][:16]}..."]
    if section.fit is None:
        return {"intro": [*intro, section.note or ""], "weights": [], "cv": [], "models": [], "commands": []}
    fit = section.fit
    base = fit["baseline"]["profile"]
    intro.append(f"Weights fitted by {fit['method']}; {int(round(fit['level'] * 100))}% intervals from "
                 f"{fit['bootstrap']['resamples']} bootstrap resamples (seed {fit['seed']}); held-out metrics from "
                 f"{fit['cv']['folds']}-fold cross-validation against the active profile {esc(base['name'])} "
                 f"v{base['version']}.")
    weights = [(k, number(w), interval(fit["intervals"].get(k)), number(fit["baseline"]["weights"][k]))
               for k, w in fit["weights"].items()]
    cv = [(label, *[x for m, _ in _METRICS for x in (number(fit["cv"][name][m]),
                                                      interval(fit["cv"][name].get(f"{m}_interval")))])
          for name, label in (("fitted", "fitted weights"), ("baseline", "active weights"),
                              ("difference", "fitted minus active"))]
    models = [(row["model"], *[x for m, _ in _METRICS for x in (number(row[m]), interval(row.get(f"{m}_interval")))])
              for row in section.comparison]
    commands = [f"python -m register evidence fit-weights --resamples {fit['bootstrap']['requested']}",
                f"python -m register evidence compare-aggregations --resamples {fit['bootstrap']['requested']}"]
    return {"intro": intro, "weights": weights, "cv": cv, "models": models, "commands": commands}


METRIC_HEADERS = tuple(x for _, title in _METRICS for x in (title, f"{title} interval"))
