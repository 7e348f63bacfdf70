"""Data, figures and the overview tile of validated feedback (the Feedback page and the overview's s_H).

Reads are cached like ``ui.framework.data``'s; the page writes through ``ui.framework.data.write`` with the acting
user. ``scope_trend_figure`` and ``window_end`` are pure (tested without Streamlit); ``scope_tile``
renders the overview's s_H tile and trend for the shared filters.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from register.feedback import items, scope
from ui.features.figures import empty_figure
from ui.framework import data
from ui.framework.text import code_span, escape_html, escape_markdown

__all__ = ["WINDOWS", "feedback_list", "outside_register", "scope_scores", "scope_tile", "scope_trend",
           "scope_trend_figure", "today", "window_end"]

WINDOWS = (7, 30, 90)  # evaluation windows offered, days
DEFAULT_WINDOW = 30  # the overview tile's window until one is chosen
TREND_POINTS = 12      # weekly window ends on the trend
_SCOPE_NONE = "—"      # a response without a use case or model


# --- reads ----------------------------------------------------------------------------------------

feedback_list = data.cached(items.list_feedback)
outside_register = data.cached(items.outside_register)
scope_scores = data.cached(scope.scope_feedback)
scope_trend = data.cached(scope.scope_feedback_trend)


# --- pure helpers ---------------------------------------------------------------------------------

def today() -> date:
    """The tile's "as of" day until one is chosen: today in UTC (the warm-up, ``ui.features.warmup``, asks for the
    same)."""
    return datetime.now(UTC).date()


def window_end(day: date) -> datetime:
    """The end of ``day`` in UTC (midnight after it): a window "as of" a day takes that whole day in."""
    return datetime.combine(day + timedelta(days=1), time(0, 0), tzinfo=UTC)


def scope_label(use_case, model) -> str:
    """``use case / model`` as plain text (a missing one as a dash)."""
    def shown(value) -> str:
        return value if isinstance(value, str) else _SCOPE_NONE

    return f"{shown(use_case)} / {shown(model)}"


def scope_trend_figure(frame: pd.DataFrame | None, window_days: int) -> go.Figure:
    """One line per scope (use case / model): s_H at each window end. ``frame`` has columns end_at, use_case,
    model, events, n_reviewed, s_h (``register.feedback.scope.scope_feedback_trend``)."""
    title = f"Validated feedback s_H per scope ({window_days}-day window)"
    if frame is None or frame.empty:
        return empty_figure(title)
    fig = go.Figure()
    labelled = frame.assign(scope=[scope_label(u, m) for u, m in zip(frame["use_case"], frame["model"], strict=True)])
    for name, rows in labelled.groupby("scope", sort=True):
        shown = escape_html(name)
        fig.add_trace(go.Scatter(
            x=rows["end_at"], y=rows["s_h"], mode="lines+markers", name=shown,
            customdata=rows[["events", "n_reviewed"]].to_numpy(),
            hovertemplate=(f"{shown}<br>as of %{{x|%Y-%m-%d}}<br>s_H %{{y:.3f}}<br>"
                           "%{customdata[0]} validated event(s), %{customdata[1]} reviewed response(s)<extra></extra>"),
        ))
    fig.update_layout(title=title, xaxis_title="Window end", yaxis_title="s_H", yaxis_range=[0, 1],
                      legend_title_text="Use case / model")
    return fig


# --- the overview tile ----------------------------------------------------------------------------

def scope_tile(use_cases: tuple[str, ...], models: tuple[str, ...], profile, plot_config: dict) -> None:
    """The overview's s_H tile: the highest scope's s_H over the chosen window, the scopes, and the trend."""
    st.subheader("Validated feedback (s_H)")
    left, right = st.columns([1, 1])
    window = left.segmented_control("Window", WINDOWS, default=DEFAULT_WINDOW, format_func=lambda d: f"{d} days",
                                    key="overview_sh_window") or DEFAULT_WINDOW
    day = right.date_input("As of", value=today(), key="overview_sh_as_of")
    as_of = window_end(day)
    frame = scope_scores(window_days=int(window), decay_lambda=profile.decay_lambda, as_of=as_of, use_cases=use_cases,
                         models=models)
    if frame.empty:
        st.caption("No scopes for these filters.")
        return
    frame = frame.sort_values(["s_h", "events", "n_reviewed"], ascending=False, kind="stable")  # riskiest first
    top = frame.iloc[0]
    cols = st.columns([1, 2])
    cols[0].metric("Highest scope s_H", f"{top['s_h']:.3f}",
                   delta=f"{top['events']:,} event(s) / {top['n_reviewed']:,} reviewed", delta_color="off",
                   delta_arrow="off",
                   help="s_H = sum of q_j exp(-lambda dt_j) over the validated feedback of the window, divided by "
                        "max(1, responses reviewed in the window) (paper section V.A); lambda from the profile's "
                        f"half-life of {profile.feedback_half_life_days:g} days")
    cols[0].caption(f"Scope {code_span(scope_label(top['use_case'], top['model']))} · window of {window} days "
                    f"ending {escape_markdown(as_of.strftime('%Y-%m-%d %H:%M'))} UTC")
    # the table and the trend on request: the overview stays light to render (it is every user's first page)
    if not cols[1].toggle("Show every scope and the trend", key="overview_sh_details"):
        return
    cols[1].dataframe(frame[["use_case", "model", "events", "n_reviewed", "s_h"]], hide_index=True,
                      key="overview_sh_table",
                      column_config={"use_case": "Use case", "model": "Model", "events": "Validated events",
                                     "n_reviewed": "Reviewed responses",
                                     "s_h": st.column_config.NumberColumn("s_H", format="%.3f")})
    trend = scope_trend(window_days=int(window), decay_lambda=profile.decay_lambda, points=TREND_POINTS, as_of=as_of,
                        use_cases=use_cases, models=models)
    st.plotly_chart(scope_trend_figure(trend, int(window)), config=plot_config, key="overview_sh_trend")
