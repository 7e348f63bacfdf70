"""Scope-level validated-feedback score s_H per use case and model (paper section V.A).

    s_H = sum_j q_j exp(-lambda dt_j) / max(1, N_reviewed)

"where q_j is the severity of the validated feedback event, Delta t_j is its age, lambda is a decay
parameter, and N_reviewed is the number of reviewed responses in the relevant evaluation window."

Here, for a scope (use case, model) and a window (start, end]:
- the events are the scope's feedback items validated in the window (validated, or validated and since
  resolved: resolving does not undo that the problem was confirmed), q_j their validated severity and
  dt_j their age at the window's end;
- N_reviewed counts the scope's distinct responses a person reviewed in the window: a review decision,
  or a feedback item validated or rejected;
- lambda is the active profile's decay rate (ln 2 / feedback half-life).

DuckDB aggregates each (window end, scope) into its list of (q, validation time) and its N_reviewed in
one statement; the pure ``hri_core.feedback.scope_feedback_score`` turns each into s_H, so the formula
lives in one place. A response belongs to the scope of its current revision.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pandas as pd

from hri_core import scope_feedback_score
from hri_core.models import ensure_utc
from register.db.sql import Params
from register.db.store import Store, utc_now

__all__ = ["MAX_WINDOW_DAYS", "scope_feedback", "scope_feedback_trend"]

MAX_WINDOW_DAYS = 3_650
_MAX_POINTS = 520

_SQL = """
WITH ends AS (SELECT unnest({starts}::TIMESTAMPTZ[]) AS start_at, unnest({ends}::TIMESTAMPTZ[]) AS end_at),
scopes AS (SELECT DISTINCT use_case, model FROM responses
           WHERE is_current AND ({no_uc} OR list_contains({ucs}::VARCHAR[], use_case))
             AND ({no_model} OR list_contains({models}::VARCHAR[], model))),
fb AS (SELECT r.use_case, r.model, f.validated_severity AS q, f.validated_at AS at, f.feedback_id
       FROM feedback_items f JOIN responses r ON r.response_id = f.response_id AND r.is_current
       WHERE f.state IN ('validated', 'resolved')),
ev AS (SELECT e.end_at, fb.use_case, fb.model, list({{'q': fb.q, 'at': fb.at}} ORDER BY fb.feedback_id) AS events
       FROM ends e JOIN fb ON fb.at > e.start_at AND fb.at <= e.end_at GROUP BY ALL),
touched AS (SELECT response_id, decided_at AS at FROM review_decisions
            UNION ALL SELECT response_id, validated_at FROM feedback_items WHERE validated_at IS NOT NULL
            UNION ALL SELECT response_id, rejected_at FROM feedback_items WHERE rejected_at IS NOT NULL),
reviewed AS (SELECT r.use_case, r.model, t.response_id, t.at
             FROM touched t JOIN responses r ON r.response_id = t.response_id AND r.is_current),
rv AS (SELECT e.end_at, v.use_case, v.model, count(DISTINCT v.response_id) AS n_reviewed
       FROM ends e JOIN reviewed v ON v.at > e.start_at AND v.at <= e.end_at GROUP BY ALL)
SELECT e.end_at, s.use_case, s.model, coalesce(ev.events, []) AS events, coalesce(rv.n_reviewed, 0) AS n_reviewed
FROM ends e CROSS JOIN scopes s
LEFT JOIN ev ON ev.end_at = e.end_at AND ev.use_case IS NOT DISTINCT FROM s.use_case
            AND ev.model IS NOT DISTINCT FROM s.model
LEFT JOIN rv ON rv.end_at = e.end_at AND rv.use_case IS NOT DISTINCT FROM s.use_case
            AND rv.model IS NOT DISTINCT FROM s.model
ORDER BY e.end_at, s.use_case NULLS LAST, s.model NULLS LAST
"""


def _check(window_days: float, decay_lambda: float) -> None:
    if not 0 < window_days <= MAX_WINDOW_DAYS:
        raise ValueError(f"window_days: must be more than 0 and at most {MAX_WINDOW_DAYS:,}, got {window_days!r}")
    if not decay_lambda >= 0:
        raise ValueError(f"decay_lambda: must be >= 0, got {decay_lambda!r}")


def _scores(store: Store, ends: list[datetime], window_days: float, decay_lambda: float,
            use_cases: tuple[str, ...], models: tuple[str, ...]) -> pd.DataFrame:
    _check(window_days, decay_lambda)
    window = timedelta(days=window_days)
    p = Params()
    sql = _SQL.format(starts=p([e - window for e in ends]), ends=p(list(ends)), no_uc=p(not use_cases),
                      ucs=p(list(use_cases)), no_model=p(not models), models=p(list(models)))
    rows = store.query(sql, p.values)
    out = []
    for end_at, use_case, model, events, n_reviewed in rows:
        pairs = [(float(e["q"]), ensure_utc(e["at"])) for e in events]
        end_utc = ensure_utc(end_at)
        out.append({"end_at": end_utc, "use_case": use_case, "model": model, "events": len(pairs),
                    "n_reviewed": int(n_reviewed),
                    "s_h": scope_feedback_score(pairs, int(n_reviewed), end_utc, decay_lambda)})
    columns = ["end_at", "use_case", "model", "events", "n_reviewed", "s_h"]
    return pd.DataFrame(out, columns=columns)


def scope_feedback(store: Store, *, window_days: float, decay_lambda: float, as_of: datetime | None = None,
                   use_cases: tuple[str, ...] = (), models: tuple[str, ...] = ()) -> pd.DataFrame:
    """s_H of every scope (use case, model) of the current responses over (as_of - window_days, as_of].

    Columns: end_at, use_case, model, events (validated items in the window), n_reviewed, s_h. Scopes
    can be restricted to some use cases and models (empty: all).
    """
    as_of = ensure_utc(as_of or utc_now())
    return _scores(store, [as_of], window_days, decay_lambda, tuple(use_cases), tuple(models))


def scope_feedback_trend(store: Store, *, window_days: float, decay_lambda: float, points: int = 12,
                         step_days: float = 7.0, as_of: datetime | None = None, use_cases: tuple[str, ...] = (),
                         models: tuple[str, ...] = ()) -> pd.DataFrame:
    """``scope_feedback`` at ``points`` window ends ``step_days`` apart, the last at ``as_of`` (oldest first)."""
    if not 1 <= points <= _MAX_POINTS:
        raise ValueError(f"points: must be from 1 to {_MAX_POINTS}, got {points!r}")
    if not step_days > 0:
        raise ValueError(f"step_days: must be more than 0, got {step_days!r}")
    as_of = ensure_utc(as_of or utc_now())
    ends = [as_of - timedelta(days=step_days * k) for k in range(points - 1, -1, -1)]
    return _scores(store, ends, window_days, decay_lambda, tuple(use_cases), tuple(models))
