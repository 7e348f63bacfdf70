"""Formal review of block answers on the Review queue and response detail pages: a reviewer proposes a risk
acceptance (the release it allows, a reason, an expiry date), a different reviewer approves or rejects it
(``register.console.risk_acceptance``; the register checks the role, four eyes and that the answer did not change).
"""

from __future__ import annotations

from datetime import timedelta

import pandas as pd
import streamlit as st

from register import Actor, RegisterError
from register.console import risk_acceptance
from register.db.store import utc_now
from ui.framework import data
from ui.framework.components import approve_or_reject, toast_then_rerun
from ui.framework.errors import show_error
from ui.framework.text import code_span, escape_markdown

RELEASE_LABELS = {"release": "Release", "release_with_caution": "Release with caution"}
COLUMNS = ("acceptance_id", "response_id", "revision", "release", "state", "expires_on", "proposed_by",
           "decided_by", "reason", "decision_note")
_CONFIG = {
    "acceptance_id": st.column_config.NumberColumn("Acceptance"),
    "response_id": st.column_config.TextColumn("Response"),
    "revision": st.column_config.NumberColumn("Rev."),
    "release": st.column_config.TextColumn("Release"),
    "state": st.column_config.TextColumn("State"),
    "expires_on": st.column_config.DateColumn("Expires"),
    "proposed_by": st.column_config.TextColumn("Proposed by"),
    "decided_by": st.column_config.TextColumn("Decided by"),
    "reason": st.column_config.TextColumn("Reason", width="large"),
    "decision_note": st.column_config.TextColumn("Approver's note"),
}


@data.cached
def acceptances_frame(store, response_id: str | None = None, status: str | None = None) -> pd.DataFrame:
    """Risk acceptances (of one answer, or with one status), newest first, with their state in words."""
    return risk_acceptance.acceptances(store, response_id=response_id, status=status)


def proposal_form(actor: Actor, response_id: str, revision: int) -> None:
    """Propose releasing a block answer: the release, a reason and an expiry date (a quarter ahead by default)."""
    today = utc_now().date()
    st.markdown(f"**Formal review of {code_span(response_id)}** — its decision is block: releasing it needs a "
                "risk acceptance one reviewer proposes and a second approves.")
    with st.form(f"risk_acceptance_{response_id}_{revision}", enter_to_submit=False):
        release = st.radio("Release", risk_acceptance.RELEASES, format_func=RELEASE_LABELS.get, horizontal=True,
                           index=None, key="risk_release")
        reason = st.text_area("Why the risk is acceptable (required)", key="risk_reason", max_chars=2000)
        expires = st.date_input("Expires on", value=today + timedelta(days=risk_acceptance.DEFAULT_DAYS),
                                min_value=today + timedelta(days=1),
                                max_value=today + timedelta(days=risk_acceptance.MAX_DAYS), key="risk_expires")
        submitted = st.form_submit_button("Propose risk acceptance")
    if not submitted:
        return
    if release is None or not reason.strip():
        st.error("**Not proposed** — choose a release and give a reason.", icon=":material/error:")
        return
    try:
        acceptance = data.write(risk_acceptance.propose_acceptance, actor, response_id, revision, release, reason,
                                expires)
    except RegisterError as error:
        show_error(error)
        return
    toast_then_rerun(f"Risk acceptance {acceptance} proposed for {code_span(response_id)}: a second reviewer "
                     "approves it")


def pending_section(actor: Actor) -> None:
    """The proposed risk acceptances, and for one of them: approve (with a note) or reject (with a reason)."""
    frame = acceptances_frame(status="proposed")
    if frame.empty:
        return
    with st.expander(f"Risk acceptances proposed: {len(frame):,} wait for a second reviewer", expanded=True):
        st.caption("Each would release an answer decided block until its expiry date. A reviewer other than its "
                   "proposer approves it; the answer's decision stays block, and a new revision, a changed decision "
                   "or the expiry puts it back in the queue.")
        st.dataframe(frame, hide_index=True, column_order=COLUMNS, column_config=_CONFIG, key="risk_pending_table")
        ids = [int(i) for i in frame["acceptance_id"]]
        pick = st.selectbox("Acceptance to decide on", ids, key="risk_pending_pick")
        row = frame[frame["acceptance_id"] == pick].iloc[0]
        st.markdown(f"**Acceptance {pick}** of {code_span(row['response_id'])} (revision {int(row['revision'])}, "
                    f"score {row['score_at']:.1f} {escape_markdown(str(row['band_at']))}): "
                    f"{RELEASE_LABELS[row['release']]} until {row['expires_on']:%Y-%m-%d}, proposed by "
                    f"{escape_markdown(row['proposed_by'])}  \nReason: {escape_markdown(row['reason'])}")
        def approve(note: str) -> str:
            data.write(risk_acceptance.approve_acceptance, actor, pick, note)
            return "approved: the answer leaves the queue until its expiry"

        def reject(note: str) -> str:
            data.write(risk_acceptance.reject_acceptance, actor, pick, note)
            return "rejected: the answer stays in the queue"

        approve_or_reject(f"risk_decide_{pick}", "Note (required to reject)", approve, reject,
                          f"Risk acceptance {pick}")


def answer_section(response_id: str) -> None:
    """Every risk acceptance of one answer, with its state (for the response detail page); nothing when none."""
    frame = acceptances_frame(response_id=response_id)
    if frame.empty:
        return
    st.subheader("Risk acceptances")
    st.dataframe(frame, hide_index=True, column_order=COLUMNS, column_config=_CONFIG, key="risk_answer_table")
