"""Overview: where the risk is. KPIs and charts for the shared filters."""

from __future__ import annotations

import streamlit as st

from ui import data, figures
from ui.components import empty_state
from ui.page import run_page
from ui.shell import page_frame

PLOT_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}


def render_kpis(k: dict, profile) -> None:
    row = st.columns(7)
    row[0].metric("Responses", f"{k['responses']:,}")
    row[1].metric("Claims", f"{k['claims']:,}")
    row[2].metric("Median HRI", "—" if k["median_score"] is None else f"{k['median_score']:.1f}")
    row[3].metric("95th pct HRI", "—" if k["p95_score"] is None else f"{k['p95_score']:.1f}")
    row[4].metric("Set by a floor", f"{k['floors_fired']:,}", help="Responses whose HRI a safety floor set")
    row[5].metric("No claims", f"{k['no_claims']:,}", help="Cannot be judged; routed to review")
    age = k["queue_oldest_age_days"]
    row[6].metric("Review queue", f"{k['queue_size']:,}",
                  delta=None if age is None else f"oldest {age:.0f} d", delta_color="off", delta_arrow="off")
    total = max(1, k["responses"])
    bands = st.columns(len(profile.bands))
    for col, band in zip(bands, profile.bands, strict=True):
        n = k["band_counts"].get(band.name, 0)
        col.metric(f"{band.name} → {band.action}", f"{n:,}", delta=f"{100 * n / total:.1f}% of responses",
                   delta_color="off", delta_arrow="off")


def main() -> None:
    f = page_frame()
    profile = data.profile()
    st.title("Overview")
    scores_under = "the current profile" if f.profile_version is None else f"profile version {f.profile_version}"
    st.caption(f"Scores under {scores_under}"
               f" · bands and weights from **{profile.name} v{profile.version}** (provisional design parameters)")
    band_names = tuple(b.name for b in profile.bands)
    weights = tuple((d.value, w) for d, w in profile.weights.items())
    figures_data = data.overview(f, weights, band_names)  # every figure of the page in one query
    k = figures_data["kpis"]
    if not k["responses"]:
        empty_state("No scored responses match these filters.")
        return
    render_kpis(k, profile)
    left, right = st.columns(2)
    with left:
        st.plotly_chart(figures.band_mix_figure(figures_data["band_mix_by_week"], band_names), config=PLOT_CONFIG)
        st.plotly_chart(figures.dimension_contribution_figure(figures_data["dimension_contributions"]),
                        config=PLOT_CONFIG)
    with right:
        st.plotly_chart(figures.score_histogram_figure(figures_data["score_histogram"], profile.bands),
                        config=PLOT_CONFIG)
        by = st.segmented_control("High + Critical share by", ["use_case", "model"], default="use_case",
                                  format_func=lambda v: v.replace("_", " "), key="overview_share_by")
        by = by or "use_case"
        st.plotly_chart(figures.high_share_figure(figures_data[f"high_share_by_{by}"], by.replace("_", " ")),
                        config=PLOT_CONFIG)


run_page(main)
