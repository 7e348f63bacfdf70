"""The figures a monitor watches, read in SQL over what the overview reads, for every answer or one use case.

Each figure is read the way the console shows it, by the console's own query where one exists:

* ``high_critical_share``: the share of current answers in the active profile's two highest bands (High and
  Critical), answers without claims counted among the answers as the overview counts them
  (``register.console.queries.overview.high_share_by``: the read model's summary, ``score_summary``);
* ``scope_s_h``: the highest scope-level s_H among the scopes (use case, model) over the last
  ``S_H_WINDOW_DAYS`` days, under the active profile's decay (``register.feedback.scope.scope_feedback``, the
  Feedback page's figure; the scope is named in the reading);
* ``authority_failing_answers`` and ``authority_failing_share``: the current answers holding a SUPPORTED claim
  whose source fails an Authority check (forbidden, stale or insufficiently authoritative: the review queue takes
  them), as a number and as a share of the current answers (``register.console.queries.authority``, the
  overview's Authority figures);
* ``critical_hallucinated_claims`` and ``critical_hallucination_share``: the current claims that are critical
  information (a category of ``hri_core.vocabulary.CRITICAL_INFORMATION_CATEGORIES`` or a criticality of at
  least ``HIGH_CRITICALITY``) and labelled hallucinated (``HALLUCINATED_LABELS``: UNSUPPORTED or CONTRADICTED),
  as a number and as a share of the critical claims: one aggregate over the current claims of the scored answers.

"Current answers" are those with a current score (the read model ``current_scores``), as on the overview. A share
of nothing (no answer, no critical claim) is no reading (``None``): a monitor keeps its state until there is one.
Each figure is one or two SQL statements whatever the number of answers; nothing loops over records in Python
(s_H's formula runs once per scope, in ``hri_core``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hri_core.vocabulary import CRITICAL_INFORMATION_CATEGORIES, HALLUCINATED_LABELS, HIGH_CRITICALITY, label_mask
from register.console.queries.authority import authority_overview
from register.console.queries.filters import Filters
from register.console.queries.overview import high_share_by
from register.db.sql import Params
from register.db.store import Store, utc_now
from register.feedback.scope import scope_feedback
from register.monitors.vocabulary import FIGURES, S_H_WINDOW_DAYS, Figure
from register.scoring.profiles import active_profile

__all__ = ["FIGURES", "S_H_WINDOW_DAYS", "Figure", "Reading", "critical_hallucination_counts", "format_value",
           "read_figures"]

@dataclass(frozen=True)
class Reading:
    """One figure read for one scope (``use_case`` None: every current answer): its ``value`` (None: nothing to
    read, e.g. a share of no answers), what it was computed from (``detail``), or the ``error`` that stopped it."""

    figure: str
    use_case: str | None
    value: float | None
    detail: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


def format_value(figure: str, value: float | None) -> str:
    """A figure's value in words: a share as a percentage, a count as a whole number, s_H to three decimals."""
    if value is None:
        return "no reading"
    unit = FIGURES[figure].unit if figure in FIGURES else "score"
    if unit == "share":
        return f"{value * 100:.1f}%"
    if unit == "count":
        return f"{value:,.0f}"
    return f"{value:.3f}"


def _filters(use_case: str | None) -> Filters:
    return Filters(use_cases=() if use_case is None else (use_case,))


def _answers(store: Store, use_case: str | None) -> dict[str, int]:
    """The current answers of the scope and those in the two highest bands (the overview's share by use case)."""
    frame = high_share_by(store, _filters(use_case), "use_case")
    return {"answers": int(frame["n"].sum()), "high_or_critical": int(frame["high_or_critical"].sum())}


def _once(cache: dict, key: tuple, compute: Callable[[], dict[str, int]]) -> dict[str, int]:
    """``compute()`` the first time ``key`` is asked for in one ``read_figures`` call (figures share queries)."""
    if key not in cache:
        cache[key] = compute()
    return cache[key]


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _high_critical(store: Store, use_case: str | None, _now: datetime, cache: dict) -> Reading:
    counts = _once(cache, ("answers", use_case), lambda: _answers(store, use_case))
    return Reading("high_critical_share", use_case, _share(counts["high_or_critical"], counts["answers"]), counts)


def _authority(store: Store, use_case: str | None, cache: dict) -> dict[str, int]:
    def compute() -> dict[str, int]:
        overview = authority_overview(store, _filters(use_case))
        answers = _once(cache, ("answers", use_case), lambda: _answers(store, use_case))["answers"]
        return {"failing_answers": int(overview["responses"]), "answers": answers,
                "flagged_claims": int(overview["flagged"])}

    return _once(cache, ("authority", use_case), compute)


def _authority_count(store: Store, use_case: str | None, _now: datetime, cache: dict) -> Reading:
    counts = _authority(store, use_case, cache)
    return Reading("authority_failing_answers", use_case, float(counts["failing_answers"]), counts)


def _authority_share(store: Store, use_case: str | None, _now: datetime, cache: dict) -> Reading:
    counts = _authority(store, use_case, cache)
    return Reading("authority_failing_share", use_case, _share(counts["failing_answers"], counts["answers"]), counts)


def critical_hallucination_counts(store: Store, use_case: str | None = None) -> dict[str, int]:
    """The current claims of the scored current answers (of ``use_case``, or all) that are critical information,
    and those of them labelled hallucinated: one aggregate over the claims (module docstring)."""
    p = Params()
    answers = ("SELECT response_key FROM current_scores"
               + ("" if use_case is None else f" WHERE use_case = {p(use_case)}"))
    row = store.row(f"""
        SELECT count(*) AS critical_claims,
               count(*) FILTER (WHERE (label_mask & {p(label_mask(HALLUCINATED_LABELS))}) <> 0) AS hallucinated
        FROM claims
        WHERE is_current AND (criticality >= {p(HIGH_CRITICALITY)}
                              OR category IN {p.in_list(CRITICAL_INFORMATION_CATEGORIES)})
          AND response_key IN ({answers})""", p.values, what="the critical-information claims")
    return {"critical_claims": int(row["critical_claims"]), "hallucinated": int(row["hallucinated"])}


def _critical(store: Store, use_case: str | None, cache: dict) -> dict[str, int]:
    return _once(cache, ("critical", use_case), lambda: critical_hallucination_counts(store, use_case))


def _critical_count(store: Store, use_case: str | None, _now: datetime, cache: dict) -> Reading:
    counts = _critical(store, use_case, cache)
    return Reading("critical_hallucinated_claims", use_case, float(counts["hallucinated"]), counts)


def _critical_share(store: Store, use_case: str | None, _now: datetime, cache: dict) -> Reading:
    counts = _critical(store, use_case, cache)
    return Reading("critical_hallucination_share", use_case, _share(counts["hallucinated"], counts["critical_claims"]),
                   counts)


def _scope_s_h(store: Store, use_case: str | None, now: datetime, _cache: dict) -> Reading:
    frame = scope_feedback(store, window_days=S_H_WINDOW_DAYS, decay_lambda=active_profile(store).decay_lambda,
                           as_of=now, use_cases=() if use_case is None else (use_case,))
    if frame.empty:
        return Reading("scope_s_h", use_case, None, {"scopes": 0})
    worst = frame.sort_values("s_h", ascending=False, kind="stable").iloc[0]
    return Reading("scope_s_h", use_case, float(worst["s_h"]),
                   {"scopes": len(frame), "use_case": worst["use_case"], "model": worst["model"],
                    "events": int(worst["events"]), "n_reviewed": int(worst["n_reviewed"])})


_READERS: dict[str, Callable[[Store, str | None, datetime, dict], Reading]] = {
    "high_critical_share": _high_critical, "scope_s_h": _scope_s_h, "authority_failing_answers": _authority_count,
    "authority_failing_share": _authority_share, "critical_hallucinated_claims": _critical_count,
    "critical_hallucination_share": _critical_share,
}


def read_figures(store: Store, wanted: Iterable[tuple[str, str | None]], *,
                 now: datetime | None = None) -> dict[tuple[str, str | None], Reading]:
    """Each (figure, use case) of ``wanted`` read once (two figures sharing a query share its one run). A figure
    whose query fails gives a reading with its ``error`` (and no value): the others are read all the same."""
    at = now or utc_now()
    cache: dict = {}
    out: dict[tuple[str, str | None], Reading] = {}
    for figure, use_case in dict.fromkeys(wanted):
        if figure not in _READERS:
            out[(figure, use_case)] = Reading(figure, use_case, None, error=f"no figure named {figure!r}")
            continue
        try:
            out[(figure, use_case)] = _READERS[figure](store, use_case, at, cache)
        except Exception as error:  # noqa: BLE001 - one figure's failure is that reading's, not the check's
            out[(figure, use_case)] = Reading(figure, use_case, None, error=f"{type(error).__name__}: {error}")
    return out
