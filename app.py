"""HRI governance console: entry point (``streamlit run app.py``).

Foundation view: the scored responses with their risk bands. The full console (overview dashboard,
response explorer with claim drill-down, review queue) is tracked as its own issue.
"""

from __future__ import annotations

import streamlit as st

from register.profiles import active_profile
from ui import data

st.set_page_config(page_title="HRI console", page_icon=":material/policy:", layout="wide")


def main() -> None:
    store = data.get_store()
    data.seed_if_empty(store)
    profile = active_profile(store)

    st.title("Hallucination Risk Index — scored responses")
    st.caption(
        f"Scoring profile **{profile.name} v{profile.version}** (provisional design parameters). "
        "This is the foundation view; the full console — overview dashboard, response explorer with "
        "claim drill-down and review queue — is not built yet and is tracked as its own issue."
    )

    totals = data.totals()
    bands = data.band_counts()
    cols = st.columns(2 + len(profile.bands))
    cols[0].metric("Responses", f"{totals['responses']:,}")
    cols[1].metric("Claims", f"{totals['claims']:,}")
    for col, band in zip(cols[2:], profile.bands):
        col.metric(f"{band.name} → {band.action}", f"{bands.get(band.name, 0):,}")
    if totals["quarantined"]:
        st.warning(f"{totals['quarantined']:,} imported record(s) are quarantined: "
                   "run `python -m register quarantine list` to see why.")
    if totals["no_claims"]:
        st.info(f"{totals['no_claims']:,} response(s) have no claims and are routed to review.")

    frame = data.scored_responses()
    if frame.empty:
        st.info("No scored responses yet. Import a file: `python -m register import answers.jsonl`.")
        return
    st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        column_config={
            "response_id": st.column_config.TextColumn("Response"),
            "revision": st.column_config.NumberColumn("Rev."),
            "use_case": st.column_config.TextColumn("Use case"),
            "model": st.column_config.TextColumn("Model"),
            "band": st.column_config.TextColumn("Band"),
            "action": st.column_config.TextColumn("Action"),
            "floors_fired": st.column_config.NumberColumn("Floors fired"),
            "decisive_claim_id": st.column_config.TextColumn("Floor set by claim"),
            "no_claims": st.column_config.CheckboxColumn("No claims"),
            "claim_count": st.column_config.NumberColumn("Claims"),
            "profile_version": st.column_config.NumberColumn("Profile v."),
            "score": st.column_config.ProgressColumn("HRI score", min_value=0, max_value=100, format="%.1f"),
            "hri_add": st.column_config.NumberColumn("HRI add.", format="%.4f"),
            "hri": st.column_config.NumberColumn("HRI*", format="%.4f"),
            "created_at": st.column_config.DatetimeColumn("Created", format="YYYY-MM-DD HH:mm"),
            "as_of": st.column_config.DatetimeColumn("Scored as of", format="YYYY-MM-DD HH:mm"),
        },
    )
    st.caption(f"Showing the {len(frame):,} riskiest of {totals['scored']:,} scored responses.")


main()
