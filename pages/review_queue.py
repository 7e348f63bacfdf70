"""Review queue: responses whose action is review or block, or that have no claims, oldest first.

A reviewer records a decision with a required reason; the decision is audited, the response leaves
the queue, and the decision is kept as a known outcome for calibration. An answer decided block is released
only by formal review: a risk acceptance one reviewer proposes and a second approves.
"""

from __future__ import annotations

import streamlit as st

from register import RegisterError
from register.access.permissions import Permission
from register.console import review
from register.console.review import DECISIONS
from register.console.risk_acceptance import RELEASES
from ui.features import pending_changes, responses, risk_acceptances
from ui.framework import data
from ui.framework.auth import can, current_actor
from ui.framework.components import apply_form_values, empty_form_on_next_run, empty_state, toast_then_rerun
from ui.framework.errors import show_error
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import code_span, escape_markdown

PAGE_SIZE = 25
DECISION_LABELS = {"release": "Release", "release_with_caution": "Release with caution", "block": "Block",
                   "send_back": "Send back for revision", "escalate": "Escalate",
                   "ask": "Ask the requester to clarify", "abstain": "Abstain"}


EMPTY_FORM = {"review_decision_choice": None, "review_reason": ""}


def decision_form(response_id: str, revision: int, answer_decision: str) -> None:
    # the form keeps what was typed when something is missing; it starts empty for each response (a reason
    # typed for one response never carries over to another) and after a decision is recorded
    if st.session_state.get("review_form_for") != (response_id, revision):
        st.session_state["review_form_for"] = (response_id, revision)
        empty_form_on_next_run("review_decision", EMPTY_FORM)  # applied right below, before the widgets
    apply_form_values("review_decision")
    with st.form("review_decision", enter_to_submit=False):
        st.markdown(f"**Decision on {code_span(response_id)} (revision {revision})**")
        # nothing preselected: a reviewer who only types a reason must not release a High answer by default
        # a block answer is released only by formal review (two reviewers): below the form
        choices = [d for d in DECISIONS if answer_decision != "block" or d not in RELEASES]
        decision = st.radio("Decision", choices, format_func=DECISION_LABELS.get, horizontal=True,
                            key="review_decision_choice", index=None)
        reason = st.text_area("Reason (required)", key="review_reason", max_chars=2000,
                              placeholder="Why this decision? It is stored with your name in the audit trail.")
        submitted = st.form_submit_button("Record decision", type="primary")
    if submitted:
        missing = [what for what, given in (("choose a decision", decision is not None),
                                            ("give a reason", bool(reason.strip()))) if not given]
        if missing:
            st.error(f"**Decision not recorded** — {' and '.join(missing)}.", icon=":material/error:")
            return
        try:
            data.write(review.record_decision, current_actor(), response_id, revision, decision, reason)
        except RegisterError as error:
            show_error(error)
            return
        st.session_state.pop("queue_table", None)
        empty_form_on_next_run("review_decision", EMPTY_FORM)
        toast_then_rerun(f"Recorded: {DECISION_LABELS[decision]} for {code_span(response_id)}")


def main() -> None:
    f = page_frame()
    st.title("Review queue")
    page = st.session_state.get("queue_page", 1)
    frame, total = responses.review_queue(f, limit=PAGE_SIZE, offset=PAGE_SIZE * (page - 1))
    if can(Permission.REVIEW_DECIDE):  # lower-risk label changes and risk acceptances waiting for a second person
        pending_changes.pending_section(current_actor())
        risk_acceptances.pending_section(current_actor())
    if not total:
        empty_state("The review queue is empty for these filters: nothing needs a human decision.")
        return
    stats = st.columns(3)
    stats[0].metric("In queue", f"{total:,}")
    stats[1].metric("Oldest", f"{frame['age_days'].max():.0f} days" if page == 1 else "—")
    pages = max(1, -(-total // PAGE_SIZE))
    stats[2].number_input("Page", min_value=1, max_value=pages, step=1, key="queue_page")
    st.caption("Oldest first. Select a response to decide on it.")
    event = st.dataframe(
        frame, hide_index=True, on_select="rerun", selection_mode="single-row", key="queue_table",
        column_order=("response_id", "decision", "why", "age_days", "score", "band", "action", "mitigation_action",
                      "use_case", "model", "created_at", "revision"),
        column_config={
            "response_id": st.column_config.TextColumn("Response"),
            "why": st.column_config.TextColumn("Why in queue"),
            "score": st.column_config.ProgressColumn("HRI score", min_value=0, max_value=100, format="%.1f"),
            "band": st.column_config.TextColumn("Band"),
            "decision": st.column_config.TextColumn("Decision"),
            "action": st.column_config.TextColumn("HRI action"),
            "mitigation_action": st.column_config.TextColumn("Mitigation"),
            "use_case": st.column_config.TextColumn("Use case"),
            "model": st.column_config.TextColumn("Model"),
            "age_days": st.column_config.NumberColumn("Age (days)", format="%.1f"),
            "created_at": st.column_config.DatetimeColumn("Created", format="YYYY-MM-DD HH:mm"),
            "revision": st.column_config.NumberColumn("Rev."),
        })
    rows = event.selection.rows if event and event.selection else []
    ids = list(frame["response_id"])
    if rows:  # a table selection drives the picker; the picker alone works from the keyboard
        st.session_state["queue_pick"] = ids[rows[0]]
    if st.session_state.get("queue_pick") not in ids:
        st.session_state["queue_pick"] = ids[0]
    pick = st.selectbox("Response to decide on", ids, key="queue_pick")
    row = frame[frame["response_id"] == pick].iloc[0]
    st.caption(f"Why in queue: {escape_markdown(str(row['why']))}")
    st.page_link("pages/response_detail.py", label=f"Open the detail of {code_span(row['response_id'])}",
                 icon=":material/open_in_new:", query_params={"response_id": str(row["response_id"])})
    if can(Permission.REVIEW_DECIDE):
        decision_form(str(row["response_id"]), int(row["revision"]), str(row["decision"]))
        if row["decision"] == "block":
            risk_acceptances.proposal_form(current_actor(), str(row["response_id"]), int(row["revision"]))
    else:
        st.info(f"Your role ({current_actor().role}) can read the queue; recording a decision needs the reviewer "
                "or admin role.", icon=":material/lock:")


run_page(main)
