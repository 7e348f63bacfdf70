"""Overview: where the risk is. KPIs and charts for the shared filters.

A response without claims is not judged: it shows as its own state ("No claims", with the profile's
action for it), never inside a band, and is left out of the score histogram. The validated-feedback
tile shows the paper's scope-level s_H per use case and model over a chosen window, and its trend.
"""

from __future__ import annotations

import streamlit as st

from register.console.queries.filters import NO_CLAIMS_STATE
from ui.features import authority, figures, overview
from ui.features import feedback as feedback_ui
from ui.features.figures import PLOT_CONFIG
from ui.framework import data
from ui.framework.components import empty_state
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import compact_count, escape_markdown


def render_kpis(k: dict, profile) -> None:
    row = st.columns(6)
    row[0].metric("Responses", compact_count(k["responses"]), help=f"{k['responses']:,} responses")
    row[1].metric("Claims", compact_count(k["claims"]), help=f"{k['claims']:,} claims")
    row[2].metric("Median HRI", "—" if k["median_score"] is None else f"{k['median_score']:.1f}",
                  help="Of the responses with claims")
    row[3].metric("95th pct HRI", "—" if k["p95_score"] is None else f"{k['p95_score']:.1f}",
                  help="Of the responses with claims")
    row[4].metric("Set by a floor", compact_count(k["floors_fired"]),
                  help=f"{k['floors_fired']:,} responses whose HRI a safety floor set")
    age = k["queue_oldest_age_days"]
    row[5].metric("Review queue", compact_count(k["queue_size"]), help=f"{k['queue_size']:,} responses",
                  delta=None if age is None else f"oldest {age:.0f} d", delta_color="off", delta_arrow="off")
    total = max(1, k["responses"])
    states = [(band.name, band.action, "") for band in profile.bands]
    states.append((NO_CLAIMS_STATE, profile.no_claims_action, "Not decomposed into claims: cannot be judged"))
    for col, (name, action, why) in zip(st.columns(len(states)), states, strict=True):
        n = k["band_counts"].get(name, 0)
        col.metric(escape_markdown(f"{name} → {action}"), compact_count(n),
                   delta=f"{100 * n / total:.1f}% of responses",
                   delta_color="off", delta_arrow="off", help=f"{n:,} responses" + (f". {why}" if why else ""))


def main() -> None:
    f = page_frame()
    # the scores of a chosen version are shown with that version's bands, actions and weights (its band names
    # and bounds may differ from the active profile's)
    profile = data.profile() if f.profile_version is None else data.version_profile(f.profile_version)
    st.title("Overview")
    scores_under = "the current profile" if f.profile_version is None else f"profile version {f.profile_version}"
    st.caption(f"Scores under {scores_under}"
               f" · bands and weights from **{escape_markdown(profile.name)} v{profile.version}** (provisional "
               "design parameters)")
    weights, band_names, bins = overview.overview_arguments(profile)
    figures_data = overview.overview(f, weights, band_names, bins)  # every figure of the page in one query
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
        if k["no_claims"]:
            st.caption(f"{k['no_claims']:,} response(s) without claims have no score and are not in the histogram.")
        if other := overview.bound_with_other_bands(profile.version):
            named = ", ".join(f"{escape_markdown(name)} (profile v{version})" for name, version in other.items())
            st.caption(f"Bars take the active profile's band bounds. The answers of {named} are scored by a profile "
                       "with other band bounds: their bands are those on the cards, not their bars' colour.")
        by = st.segmented_control("High + Critical share by", ["use_case", "model"], default="use_case",
                                  format_func=lambda v: v.replace("_", " "), key="overview_share_by")
        by = by or "use_case"
        st.plotly_chart(figures.high_share_figure(figures_data[f"high_share_by_{by}"], by.replace("_", " ")),
                        config=PLOT_CONFIG)
    feedback_ui.scope_tile(f.use_cases, f.models, profile, PLOT_CONFIG)
    render_scope(f)
    render_authority(f)


def render_scope(f) -> None:
    """The answers by scope status (the paper's Scope check against the approved-use-case register); nothing while
    the register lists no use case."""
    counts = overview.scope(f)
    if counts.empty:
        return
    st.subheader("Answers by scope status")
    cols = st.columns(len(counts))
    for col, (status, n) in zip(cols, counts.itertuples(index=False), strict=True):
        col.metric(escape_markdown(str(status).capitalize()), compact_count(int(n)), help=f"{int(n):,} answers")
    st.page_link("pages/use_cases.py", label="Use cases", icon=":material/approval:")


def render_authority(f) -> None:
    """Supported claims resting on stale or unauthoritative sources (CLAIM's Authority step)."""
    result = authority.overview(f)
    if not result["supported_sourced"]:
        return
    left, right = st.columns([1, 2])
    share = 100 * result["flagged"] / result["supported_sourced"]
    left.metric("Supported claims on failing sources", f"{result['flagged']:,}",
                delta=f"{share:.1f}% of {result['supported_sourced']:,} sourced", delta_color="off", delta_arrow="off",
                help="SUPPORTED claims whose source is stale, forbidden to the use case's requesters or not "
                     "authoritative enough for the claim's category: a label is proposed and the answer is queued")
    left.metric("Answers queued for their sources", f"{result['responses']:,}")
    left.page_link("pages/authority.py", label="Source authority", icon=":material/verified_user:")
    right.plotly_chart(authority.authority_figure(result), config=PLOT_CONFIG)


run_page(main)
