"""Adjudication (reviewers): the claims whose annotators disagree, and the labelling batches.

A disagreement is resolved by majority vote, expert adjudication or the documented escalation rule, with a
reason; the adjudicator is none of the batch's annotators (four eyes, enforced in the register). When every
claim of a response is resolved, its labels become a new revision, rescored and audited.
"""

from __future__ import annotations

import streamlit as st

from hri_core.models import MAX_CRITICALITY
from hri_core.vocabulary import CATEGORIES
from register import RegisterError
from register.access.permissions import Permission
from register.labels import adjudication, batches
from register.labels.adjudication import RULES
from register.labels.batches import MAX_BATCH_RESPONSES, Selection
from register.labels.workbench import ANNOTATOR_LABELS
from ui.features import labels as ui
from ui.features.labels import LABEL_SET_HELP, NO_CATEGORY
from ui.framework import data
from ui.framework.auth import can, current_actor
from ui.framework.components import empty_state, keep_message, label_picker, show_kept_messages
from ui.framework.errors import show_error
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import code_span, escape_markdown

RULE_LABELS = {"majority": "Majority vote", "expert": "Expert adjudication", "escalation": "Escalation rule"}
RULE_HELP = ("Majority: the reading a strict majority of the annotators gave. Expert: your reading below. "
             "Escalation: the most cautious reading (every annotator's labels, SUPPORTED dropped when another label "
             "is there and PARTIAL when UNSUPPORTED is; the highest criticality and its category).")


def _show_result(report, response_id: str) -> None:
    if report.applied:
        score = ui.current_score(response_id)
        text = ", ".join(code_span(r) for r in report.applied)
        detail = f" — {code_span(response_id)} now scores {score['score']:.1f} ({score['band']}, " \
                 f"{score['action']}), revision {score['revision']}" if score and response_id in report.applied else ""
        keep_message("adj_queue", "success", f"New revision for {text}{detail}.")
    if report.held:
        keep_message("adj_queue", "warning", "Waiting for a second reviewer, as the labels would lower the "
                     f"decision: {', '.join(code_span(r) for r in report.held)} (Review queue, lower-risk changes).")
    if report.stale:
        keep_message("adj_queue", "warning", "Not applied, revised since the batch was drawn: "
                     f"{', '.join(code_span(r) for r in report.stale)}. Draw them again.")


def _decision_form(actor, row) -> None:
    batch_id, response_id, unit_id = int(row["batch_id"]), str(row["response_id"]), str(row["unit_id"])
    try:  # a reviewer who annotated this batch is refused here (four eyes), not only when recording
        readings = ui.unit_readings(actor, batch_id, response_id, unit_id)
    except RegisterError as error:
        show_error(error)
        return
    st.markdown(f"**Claim {code_span(unit_id)} of {code_span(response_id)}** — {escape_markdown(row['text'] or '')}")
    st.dataframe(readings[["annotator", "state", "labels", "criticality", "category", "dimensions", "source_id",
                           "span", "note"]], hide_index=True)
    key = f"adj_{batch_id}_{response_id}_{unit_id}"
    with st.form(key, enter_to_submit=False):
        rule = st.radio("Rule", RULES, format_func=RULE_LABELS.get, horizontal=True, index=None, help=RULE_HELP,
                        key=f"{key}_rule")
        reason = st.text_area("Reason (required)", key=f"{key}_reason", max_chars=2000)
        st.caption("Your reading (counts for expert adjudication only)")
        keep = st.checkbox("The claim stands in the answer", value=True, key=f"{key}_keep")
        chosen = label_picker("Labels", ANNOTATOR_LABELS, key=f"{key}_labels", help=LABEL_SET_HELP)
        left, right = st.columns(2)
        criticality = left.number_input("Criticality", min_value=1, max_value=MAX_CRITICALITY, value=1,
                                        key=f"{key}_crit")
        category = right.selectbox("Category", [NO_CATEGORY, *CATEGORIES], key=f"{key}_cat")
        submitted = st.form_submit_button("Record adjudication", type="primary")
    if submitted:
        if rule is None:
            st.error("**Not recorded** — choose a rule.", icon=":material/error:")
            return
        try:
            report = data.write(adjudication.adjudicate, actor, batch_id, response_id, unit_id, rule=rule,
                                reason=reason, labels=chosen, criticality=int(criticality), keep=keep,
                                category=None if category == NO_CATEGORY else category)
        except RegisterError as error:
            show_error(error)
            return
        _show_result(report, response_id)
        st.rerun()


def _queue(actor) -> None:
    show_kept_messages("adj_queue")
    frame = ui.queue(actor)
    st.metric("Disagreements to adjudicate", f"{len(frame):,}")
    if frame.empty:
        empty_state("No disagreement waits: every finished claim is agreed or adjudicated.")
        return
    labels = {i: f"#{r.batch_id} {r.response_id} / {r.unit_id}" for i, r in enumerate(frame.itertuples())}
    st.dataframe(frame[["batch_id", "title", "response_id", "unit_id", "text", "readings"]], hide_index=True,
                 column_config={"readings": st.column_config.NumberColumn("Different readings")})
    pick = st.selectbox("Claim to adjudicate", list(labels), format_func=labels.get, key="adj_pick")
    _decision_form(actor, frame.iloc[pick])


def _draw_batch(actor) -> None:
    options = data.filter_options()
    annotators = ui.possible_annotators()
    with st.form("adj_draw", enter_to_submit=False):
        title = st.text_input("Title", key="adj_title")
        left, right = st.columns(2)
        use_cases = left.multiselect("Use cases", options["use_cases"], key="adj_uc")
        models = right.multiselect("Models", options["models"], key="adj_model")
        bands = left.multiselect("Bands", options["bands"], key="adj_bands")
        sample = right.number_input(f"Random sample of (0: every match, up to {MAX_BATCH_RESPONSES})", min_value=0,
                                    max_value=MAX_BATCH_RESPONSES,
                                    value=20, key="adj_sample")
        seed = left.number_input("Sample seed", min_value=0, value=0, key="adj_seed")
        chosen = right.multiselect("Annotators (two or more)", annotators, key="adj_annotators")
        drawn = st.form_submit_button("Draw the batch", type="primary")
    if drawn:
        selection = Selection(use_cases=tuple(use_cases), models=tuple(models), bands=tuple(bands),
                              sample=int(sample) or None, seed=int(seed))
        try:
            batch_id = data.write(batches.create_batch, actor, title, selection, chosen)
        except RegisterError as error:
            show_error(error)
            return
        keep_message("adj_batches", "success", f"Batch #{batch_id} drawn and assigned.")
        st.rerun()


def _batches(actor) -> None:
    show_kept_messages("adj_batches")
    frame = ui.batch_list()
    if frame.empty:
        empty_state("No labelling batch yet: draw one below.")
    else:
        st.dataframe(frame, hide_index=True)
        pick = st.selectbox("Batch", frame["batch_id"].tolist(), key="adj_batch",
                            format_func=lambda b: f"#{b} {frame.loc[frame['batch_id'] == b, 'title'].iloc[0]}")
        st.dataframe(ui.batch_progress(int(pick)), hide_index=True)
        if st.button("Apply the resolved labels of this batch", help="Responses whose claims are all agreed or "
                     "adjudicated become a new revision, rescored.", key="adj_apply"):
            try:
                report = data.write(adjudication.apply_resolved, actor, int(pick))
            except RegisterError as error:
                show_error(error)
                return
            keep_message("adj_queue", "success",
                         f"{len(report.applied)} response(s) applied ({report.new_revisions} new revisions, "
                         f"{report.unchanged} unchanged).")
            st.rerun()
    if can(Permission.LABEL_ASSIGN):
        st.subheader("Draw a batch")
        _draw_batch(actor)


def main() -> None:
    page_frame(filters=False)
    st.title("Adjudication")
    if not can(Permission.ADJUDICATE):
        st.info(f"Your role ({current_actor().role}) cannot adjudicate; reviewers and admins can.",
                icon=":material/lock:")
        return
    actor = current_actor()
    queue_tab, batches_tab = st.tabs(["Disagreements", "Labelling batches"])
    with queue_tab:
        _queue(actor)
    with batches_tab:
        _batches(actor)


run_page(main)
