"""Feedback: report a problem with an answer, validate or reject it (a second person), resolve it.

Only validated feedback reaches a score (paper section V.A): validation gives the claim the label
VALIDATED_NEGATIVE_FEEDBACK as the response's next revision, which is rescored; resolution records that
it was fixed the same way. Feedback labels that came in with an import, with no validation record here,
are listed as validated outside the register.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from register import RegisterError
from register.access.permissions import Permission
from register.feedback import items
from register.feedback.items import MAX_TEXT, STATES, VALIDATION_METHODS
from register.governance.feedback_labels import OUTSIDE_REGISTER
from ui.features import feedback as fb
from ui.features import responses
from ui.framework import data
from ui.framework.auth import can, current_actor
from ui.framework.components import apply_form_values, empty_form_on_next_run, keep_message, show_kept_messages
from ui.framework.errors import show_error
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import code_span

WHOLE_ANSWER = "(the answer as a whole)"
STATE_LABELS = {"reported": "Reported", "validated": "Validated", "rejected": "Rejected", "resolved": "Resolved"}
REPORT_EMPTY = {"fb_text": "", "fb_severity": 0.5}
LIST_COLUMNS = ("feedback_id", "state", "response_id", "claim_id", "severity", "text", "reported_by", "reported_at",
                "validated_by", "validated_at", "validation_method", "validated_severity", "validated_claim_id",
                "validated_revision", "rejected_by", "rejection_reason", "resolved_by", "resolved_at", "resolution",
                "resolved_revision")


def claim_ids(response_id: str) -> list[str] | None:
    """The claim ids of the current revision, or None when there is no such response."""
    detail = responses.response_detail(response_id)
    return None if detail is None else [str(c) for c in detail["claims"]["claim_id"]]


def report_section() -> None:
    st.subheader("Report a problem")
    typed = st.text_input("Response id", value=st.query_params.get("response_id", ""), key="fb_response",
                          placeholder="The id shown on the Responses or Response detail page").strip()
    if not typed:
        st.caption("Anyone signed in may report a problem; a reviewer other than you validates it before it counts.")
        return
    claims = claim_ids(typed)
    if claims is None:
        st.warning(f"No response {code_span(typed)} in the register.", icon=":material/search_off:")
        return
    apply_form_values("fb_report")
    st.session_state.setdefault("fb_severity", REPORT_EMPTY["fb_severity"])  # the slider's start, before it exists
    with st.form("fb_report", enter_to_submit=False):
        claim = st.selectbox("About", [WHOLE_ANSWER, *claims], key="fb_claim",
                             format_func=lambda c: c if c == WHOLE_ANSWER else f"claim {c}")
        text = st.text_area("What is wrong (required)", key="fb_text", max_chars=MAX_TEXT,
                            placeholder="What is wrong, and where the right information is")
        severity = st.slider("Proposed severity q", 0.0, 1.0, step=0.05, key="fb_severity",
                             help="0 = cosmetic, 1 = a wrong answer that could cause harm; the validator may change it")
        submitted = st.form_submit_button("Report", type="primary", disabled=not can(Permission.FEEDBACK_SUBMIT))
    if submitted:
        try:
            feedback_id = data.write(items.report_feedback, current_actor(), typed, text, severity,
                                     claim_id=None if claim == WHOLE_ANSWER else claim)
        except RegisterError as error:
            show_error(error)
            return
        empty_form_on_next_run("fb_report", REPORT_EMPTY)
        keep_message("feedback", "success", f"Feedback #{feedback_id} reported on {code_span(typed)}: it counts "
                                            "once a reviewer validates it.")
        st.rerun()


def _pick(frame: pd.DataFrame, label: str, key: str) -> dict | None:
    ids = [int(i) for i in frame["feedback_id"]]
    rows = {int(r["feedback_id"]): r for r in frame.to_dict("records")}
    chosen = st.selectbox(label, ids, key=key, format_func=lambda i: (
        f"#{i} · {rows[i]['response_id']} · {rows[i]['claim_id'] or 'whole answer'} · {rows[i]['text'][:60]}"))
    return None if chosen is None else rows[chosen]


def validate_section(reported: pd.DataFrame) -> None:
    st.subheader("Validate or reject")
    if reported.empty:
        st.caption("No reported feedback is waiting.")
        return
    item = _pick(reported, "Reported feedback", "fb_pick_reported")
    if item is None:
        return
    st.caption(f"Reported by {code_span(item['reported_by'])} at {item['reported_at']:%Y-%m-%d %H:%M} UTC, "
               f"proposed severity {item['severity']:.2f}. A second person validates: not the reporter.")
    st.text(item["text"])
    claims = claim_ids(item["response_id"]) or []
    with st.form("fb_validate", enter_to_submit=False):
        method = st.radio("Confirmed by", list(VALIDATION_METHODS), format_func=VALIDATION_METHODS.get,
                          horizontal=True, key="fb_method")
        severity = st.slider("Severity q", 0.0, 1.0, value=float(item["severity"]), step=0.05, key="fb_q")
        default = claims.index(item["claim_id"]) if item["claim_id"] in claims else None
        claim = st.selectbox("Claim that carries the label", claims, index=default, key="fb_target",
                             placeholder="Choose the claim the problem is in")
        note = st.text_input("Note (optional)", key="fb_note", max_chars=MAX_TEXT)
        validated = st.form_submit_button("Validate", type="primary")
    with st.form("fb_reject", enter_to_submit=False):
        reason = st.text_input("Reason for rejecting (required)", key="fb_reason", max_chars=MAX_TEXT)
        rejected = st.form_submit_button("Reject")
    try:
        if validated:
            revision = data.write(items.validate_feedback, current_actor(), int(item["feedback_id"]), method,
                                  severity=severity, claim_id=claim, note=note or None)
            keep_message("feedback", "success", f"Feedback #{item['feedback_id']} validated: revision {revision} "
                                                f"of {code_span(item['response_id'])} carries it and was rescored.")
            st.rerun()
        if rejected:
            data.write(items.reject_feedback, current_actor(), int(item["feedback_id"]), reason)
            keep_message("feedback", "success", f"Feedback #{item['feedback_id']} rejected.")
            st.rerun()
    except RegisterError as error:
        show_error(error)


def resolve_section(validated: pd.DataFrame) -> None:
    st.subheader("Resolve")
    if validated.empty:
        st.caption("No validated feedback is open.")
        return
    item = _pick(validated, "Validated feedback", "fb_pick_validated")
    if item is None:
        return
    with st.form("fb_resolve", enter_to_submit=False):
        resolution = st.text_input("What fixed it (required)", key="fb_resolution", max_chars=MAX_TEXT)
        resolved = st.form_submit_button("Resolve", type="primary")
    if resolved:
        try:
            revision = data.write(items.resolve_feedback, current_actor(), int(item["feedback_id"]), resolution)
        except RegisterError as error:
            show_error(error)
            return
        where = (f"revision {revision} of {code_span(item['response_id'])} marks the claim resolved"
                 if revision is not None else "another validated item on the claim is still open, or marking it "
                 "resolved would lower the answer's decision and waits for a second reviewer (Review queue)")
        keep_message("feedback", "success", f"Feedback #{item['feedback_id']} resolved: {where}.")
        st.rerun()


def main() -> None:
    page_frame(filters=False)
    st.title("Feedback")
    st.caption("Only feedback confirmed by a reviewer, a source check or adjudication counts in the H dimension "
               "(paper section V.A). Reported → validated or rejected by a second person → resolved.")
    show_kept_messages("feedback")
    report_section()

    everything = fb.feedback_list()
    counts = everything["state"].value_counts() if not everything.empty else pd.Series(dtype=int)
    for col, state in zip(st.columns(len(STATES)), STATES, strict=True):
        col.metric(STATE_LABELS[state], f"{int(counts.get(state, 0)):,}")
    if can(Permission.FEEDBACK_VALIDATE):
        left, right = st.columns(2)
        with left:
            validate_section(everything[everything["state"] == "reported"])
        with right:
            resolve_section(everything[everything["state"] == "validated"])
    else:
        st.info(f"Your role ({current_actor().role}) may report problems; validating, rejecting and resolving "
                "them needs the reviewer or admin role.", icon=":material/lock:")

    st.subheader("Feedback items")
    shown_states = st.multiselect("States", STATES, default=list(STATES), format_func=STATE_LABELS.get,
                                  key="fb_states")
    listed = everything[everything["state"].isin(shown_states)]
    st.dataframe(listed, hide_index=True, column_order=LIST_COLUMNS, key="fb_table",
                 column_config={"feedback_id": "#", "severity": st.column_config.NumberColumn("q proposed",
                                                                                              format="%.2f"),
                                "validated_severity": st.column_config.NumberColumn("q validated", format="%.2f")})

    st.subheader(f"Feedback labels {OUTSIDE_REGISTER}")
    outside = fb.outside_register(limit=1_000)
    if outside.empty:
        st.caption("Every VALIDATED_NEGATIVE_FEEDBACK label of the current answers was validated here.")
    else:
        st.caption(f"{len(outside):,} current claim(s) carry VALIDATED_NEGATIVE_FEEDBACK from an import, with no "
                   "record here of who validated it, how or when. They still score; the pre-submission checklist "
                   "(item 7) names them.")
        st.dataframe(outside.assign(validation=OUTSIDE_REGISTER), hide_index=True, key="fb_outside")


run_page(main)
