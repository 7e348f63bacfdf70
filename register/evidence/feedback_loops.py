"""Feedback loops over time (HRI paper, section XVI: "evaluate how HRI-guided feedback loops affect answer quality
over time"): per scope (use case, model), the hallucination share of its answers and its validated-feedback score
s_H week by week, with the resolutions of validated feedback marked, and the two before and after the scope's first
resolution.

* Hallucination share of a week: per answer created that week (its creation time, else its import time) with
  claims, the share of its current claims carrying a hallucinated label (``hri_core.vocabulary.HALLUCINATED_LABELS``:
  UNSUPPORTED or CONTRADICTED, seed 003's "unsupported and incorrect"), then the mean over those answers
  (RAGChecker's aggregation: a long answer does not outweigh short ones). The answers are the console's filtered set.
* s_H of a week: the scope's s_H (``register.feedback.scope``: the paper's formula, in ``hri_core``) over the
  ``window_days`` ending with the week (the overview's s_H tile reads 30 days), under the active profile's decay.
  It reads the use-case and model filters only (it counts feedback and reviews, not scored answers).
* A resolution: a feedback item validated and then resolved (``register.feedback.items``), at its resolution time,
  in the scope of its answer's current revision.
* Before and after, per scope with a resolution: the hallucination share of its answers created before the first
  resolution and of those created at it or after (pooled over the weeks, as above), and the mean weekly s_H of the
  weeks ending by it and of those starting at it or after.

Shares and counts are aggregated in DuckDB; the s_H per (week, scope) comes from ``scope_feedback_trend``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

import pandas as pd

from hri_core.vocabulary import HALLUCINATED_LABELS, LABEL_BIT
from register.console.queries.filters import Filters, filtered_scores
from register.db.sql import Params
from register.db.store import Store, utc_now
from register.errors import RegisterError
from register.feedback.scope import MAX_WINDOW_DAYS, scope_feedback_trend
from register.readmodels.current_scores import WEEK
from register.scoring.profiles import active_profile

__all__ = ["MAX_WEEKS", "SH_WINDOW_DAYS", "FeedbackLoops", "feedback_loops"]

SH_WINDOW_DAYS = 30  # s_H's window, days (as the overview's s_H tile reads it by default)
MAX_WEEKS = 520  # the longest time axis (ten years of weeks: scope_feedback_trend's most points)
_HALLUCINATED = sum(LABEL_BIT[label] for label in HALLUCINATED_LABELS)
_ANSWERED = "coalesce(s.created_at, s.imported_at)"


@dataclass(frozen=True)
class FeedbackLoops:
    """The time axis and the comparison (see the module docstring).

    ``series``: week (the Monday, a date), use_case, model, answers, hallucination_share (None: no answer that
    week), s_h, feedback_events (validated in s_H's window); ``events``: resolved_at, use_case, model, feedback_id,
    response_id, claim_id; ``before_after``: use_case, model, first_resolved_at, resolutions, answers_before,
    share_before, answers_after, share_after, s_h_before, s_h_after.
    """

    first_week: date
    last_week: date
    window_days: float
    series: pd.DataFrame
    events: pd.DataFrame
    before_after: pd.DataFrame

    def as_json(self) -> dict:
        """The figures as plain JSON values (the command line's ``--json``)."""
        return {"first_week": self.first_week.isoformat(), "last_week": self.last_week.isoformat(),
                "window_days": self.window_days, "series": _records(self.series), "events": _records(self.events),
                "before_after": _records(self.before_after)}


def _records(frame: pd.DataFrame) -> list[dict]:
    out = []
    for row in frame.astype(object).where(frame.notna(), None).to_dict("records"):
        out.append({k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()})
    return out


def _scope_condition(f: Filters, p: Params, alias: str) -> str:
    return (f"({p(not f.use_cases)} OR list_contains({p(list(f.use_cases))}::VARCHAR[], {alias}.use_case)) AND "
            f"({p(not f.models)} OR list_contains({p(list(f.models))}::VARCHAR[], {alias}.model))")


def feedback_loops(store: Store, f: Filters | None = None, *, weeks: int = 26, window_days: float = SH_WINDOW_DAYS,
                   as_of: datetime | None = None) -> FeedbackLoops:
    """``weeks`` weeks of the scopes ``f`` selects, the last the week of the latest answer, validation or resolution
    (at most ``as_of``, default now); see the module docstring."""
    if not (isinstance(weeks, int) and 1 <= weeks <= MAX_WEEKS):
        raise RegisterError(f"weeks: must be a whole number from 1 to {MAX_WEEKS}, got {weeks!r}")
    if not (isinstance(window_days, (int, float)) and 0 < window_days <= MAX_WINDOW_DAYS):
        raise RegisterError(f"window_days: must be more than 0 and at most {MAX_WINDOW_DAYS:,}, got {window_days!r}")
    f = f or Filters()
    now = as_of or utc_now()
    p = Params()
    scoped = _scope_condition(f, p, "r")
    latest = store.scalar(f"""SELECT max(t) FROM (
        SELECT coalesce(created_at, imported_at) AS t FROM responses r WHERE is_current AND {scoped}
        UNION ALL SELECT greatest(fi.validated_at, fi.resolved_at) FROM feedback_items fi
            JOIN responses r ON r.response_id = fi.response_id AND r.is_current WHERE {scoped})
        WHERE t <= {p(now)}""", p.values)
    last_week = _monday((latest or now).astimezone(UTC).date())
    first_week = last_week - timedelta(weeks=weeks - 1)
    series = _series(store, f, first_week, last_week)
    series["week"] = pd.to_datetime(series["week"]).dt.date  # DuckDB's DATE arrives as a timestamp
    profile = active_profile(store)
    trend = scope_feedback_trend(store, window_days=float(window_days), decay_lambda=profile.decay_lambda,
                                 points=weeks, step_days=7.0, as_of=_midnight(last_week + timedelta(days=7)),
                                 use_cases=f.use_cases, models=f.models)
    trend = trend.assign(week=[(end - timedelta(days=7)).date() for end in trend["end_at"]])
    series = series.merge(trend[["week", "use_case", "model", "s_h", "events"]]
                          .rename(columns={"events": "feedback_events"}),
                          on=["week", "use_case", "model"], how="outer")
    series = series.fillna({"answers": 0, "s_h": 0.0, "feedback_events": 0})
    series = series.astype({"answers": int, "feedback_events": int})
    series = series.sort_values(["use_case", "model", "week"], na_position="last", ignore_index=True)
    events = _events(store, f, now)
    return FeedbackLoops(first_week=first_week, last_week=last_week, window_days=float(window_days),
                         series=series, events=events, before_after=_before_after(store, f, events, series))


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time(0), tzinfo=UTC)


def _answer_shares(store: Store, f: Filters, p: Params) -> str:
    """SELECT of the filtered answers with claims: response_key, use_case, model, answered_at, week, share."""
    return f"""
        SELECT s.response_key, s.use_case, s.model, {_ANSWERED} AS answered_at,
               {WEEK.replace('created_at', _ANSWERED)} AS week,
               count(*) FILTER ((c.label_mask & {int(_HALLUCINATED)}) <> 0) / count(*) AS share
        FROM ({filtered_scores(store, f, p)}) s JOIN claims c ON c.response_key = s.response_key AND c.is_current
        WHERE NOT s.no_claims
        GROUP BY ALL"""


def _series(store: Store, f: Filters, first_week: date, last_week: date) -> pd.DataFrame:
    p = Params()
    return store.frame(f"""
        WITH shares AS ({_answer_shares(store, f, p)}),
        weeks AS (SELECT unnest(generate_series({p(first_week)}::DATE, {p(last_week)}::DATE, INTERVAL 7 DAY))::DATE
                         AS week),
        scopes AS (SELECT DISTINCT s.use_case, s.model FROM ({filtered_scores(store, f, p)}) s)
        SELECT w.week, sc.use_case, sc.model, count(sh.response_key)::BIGINT AS answers,
               avg(sh.share) AS hallucination_share
        FROM weeks w CROSS JOIN scopes sc
        LEFT JOIN shares sh ON sh.week = w.week AND sh.use_case IS NOT DISTINCT FROM sc.use_case
                           AND sh.model IS NOT DISTINCT FROM sc.model
        GROUP BY ALL""", p.values)


def _events(store: Store, f: Filters, now: datetime) -> pd.DataFrame:
    p = Params()
    return store.frame(f"""
        SELECT fi.resolved_at, r.use_case, r.model, fi.feedback_id, fi.response_id, fi.claim_id
        FROM feedback_items fi JOIN responses r ON r.response_id = fi.response_id AND r.is_current
        WHERE fi.state = 'resolved' AND fi.validated_at IS NOT NULL AND fi.resolved_at <= {p(now)}
          AND {_scope_condition(f, p, 'r')}
        ORDER BY fi.resolved_at, fi.feedback_id""", p.values)


def _before_after(store: Store, f: Filters, events: pd.DataFrame, series: pd.DataFrame) -> pd.DataFrame:
    columns = ["use_case", "model", "first_resolved_at", "resolutions", "answers_before", "share_before",
               "answers_after", "share_after", "s_h_before", "s_h_after"]
    if events.empty:
        return pd.DataFrame(columns=columns)
    p = Params()
    with store.cursor() as cur, cur.relation("resolutions", events[["use_case", "model", "resolved_at"]]):
        shares = cur.frame(f"""
            WITH firsts AS (SELECT use_case, model, min(resolved_at) AS first_resolved_at, count(*) AS resolutions
                            FROM resolutions GROUP BY ALL),
            shares AS ({_answer_shares(store, f, p)})
            SELECT fs.use_case, fs.model, fs.first_resolved_at, fs.resolutions,
                   count(sh.response_key) FILTER (sh.answered_at < fs.first_resolved_at) AS answers_before,
                   avg(sh.share) FILTER (sh.answered_at < fs.first_resolved_at) AS share_before,
                   count(sh.response_key) FILTER (sh.answered_at >= fs.first_resolved_at) AS answers_after,
                   avg(sh.share) FILTER (sh.answered_at >= fs.first_resolved_at) AS share_after
            FROM firsts fs LEFT JOIN shares sh ON sh.use_case IS NOT DISTINCT FROM fs.use_case
                                              AND sh.model IS NOT DISTINCT FROM fs.model
            GROUP BY ALL ORDER BY fs.first_resolved_at, fs.use_case, fs.model""", p.values)
    # the weekly s_H around each scope's first resolution: weeks ending by it, and weeks starting at it or after
    weekly = series.merge(shares[["use_case", "model", "first_resolved_at"]], on=["use_case", "model"])
    starts = pd.to_datetime(weekly["week"]).dt.tz_localize(UTC)
    first = pd.to_datetime(weekly["first_resolved_at"], utc=True)
    weekly = weekly.assign(before=starts + pd.Timedelta(days=7) <= first, after=starts >= first)
    keys = ["use_case", "model"]
    s_h = pd.DataFrame({
        "s_h_before": weekly[weekly["before"]].groupby(keys, dropna=False)["s_h"].mean(),
        "s_h_after": weekly[weekly["after"]].groupby(keys, dropna=False)["s_h"].mean()}).reset_index()
    out = shares.merge(s_h, on=keys, how="left") if len(s_h) else shares.assign(s_h_before=None, s_h_after=None)
    return out.astype({"answers_before": int, "answers_after": int, "resolutions": int})[columns]
