"""Label changes that would lower an answer's decision, waiting for a second person: listed on the Review queue
page for reviewers, each approved (stored as the answer's next revision) or rejected with a reason
(``register.ingest.approvals``; the register checks the role and four eyes)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from register import Actor
from register.ingest import approvals, pending
from ui.framework import data
from ui.framework.components import approve_or_reject
from ui.framework.text import code_span, escape_markdown

COLUMNS = ("change_id", "response_id", "base_revision", "origin", "decision_before", "decision_after",
           "proposed_by", "proposed_at", "subject")


@data.cached
def pending_frame(store) -> pd.DataFrame:
    """The pending label changes, newest first."""
    rows = pending.list_pending(store)
    return pd.DataFrame(rows, columns=[*COLUMNS, "reasons_after"] if not rows else list(rows[0]))


def pending_section(actor: Actor) -> None:
    """The pending changes, and for one of them: approve (with a note) or reject (with a reason)."""
    frame = pending_frame()
    if frame.empty:
        return
    with st.expander(f"Lower-risk changes pending: {len(frame):,} wait for a second person", expanded=True):
        st.caption("Each would lower its answer's decision; until a reviewer other than its proposer approves it, "
                   "the answer keeps its labels and stays in the queue.")
        st.dataframe(frame, hide_index=True, column_order=COLUMNS, key="pending_changes_table", column_config={
            "change_id": st.column_config.NumberColumn("Change"),
            "response_id": st.column_config.TextColumn("Response"),
            "base_revision": st.column_config.NumberColumn("On rev."),
            "origin": st.column_config.TextColumn("From"),
            "decision_before": st.column_config.TextColumn("Decision now"),
            "decision_after": st.column_config.TextColumn("Decision after"),
            "proposed_by": st.column_config.TextColumn("Proposed by"),
            "proposed_at": st.column_config.DatetimeColumn("When", format="YYYY-MM-DD HH:mm"),
            "subject": st.column_config.TextColumn("What", width="large")})
        ids = [int(i) for i in frame["change_id"]]
        pick = st.selectbox("Change to decide on", ids, key="pending_change_pick")
        row = frame[frame["change_id"] == pick].iloc[0]
        st.markdown(f"**Change {pick}** on {code_span(row['response_id'])}: "
                    f"{escape_markdown(row['decision_before'])} → {escape_markdown(row['decision_after'])}, "
                    f"proposed by {escape_markdown(row['proposed_by'])}  \n"
                    + "  \n".join(f"- {escape_markdown(r)}" for r in row["reasons_after"]))
        response = code_span(row["response_id"])

        def approve(note: str) -> str:
            return f"approved: revision {data.write(approvals.approve_change, actor, pick, note)} of {response}"

        def reject(note: str) -> str:
            data.write(approvals.reject_change, actor, pick, note)
            return "rejected: the answer keeps its labels"

        approve_or_reject(f"pending_change_{pick}", "Reason (required to reject)", approve, reject, f"Change {pick}")
