"""Calibration: how well the HRI separates bad answers from good ones, and where the bands should be.

Known outcomes come from review decisions (audit findings when the answer was drawn into a random audit
sample of released answers), validated feedback (confirmed corrections) and imported CSV files of
``response_id,outcome[,kind]``; each carries its kind and is compared with the score of the revision it is
about. The page says how many outcomes of each kind and score range it rests on. Shows ROC and
precision-recall curves with their areas, the observed bad-answer rate per score bin, and the
cost-optimal review threshold for the costs the user sets, which can become a draft profile.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from hri_core import HRIError, calibration
from register import RegisterError
from register.access.permissions import Permission
from register.console import review
from register.scoring import calibration as reg
from ui.features import scoring
from ui.features.figures_scoring import calibration_figure, pr_figure, roc_figure
from ui.framework import data
from ui.framework.auth import can, current_actor
from ui.framework.components import has_kept_messages, keep_message, show_kept_messages
from ui.framework.errors import show_error
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import code_span

SOURCE_LABELS = {"review": "Review decisions and audit findings", "feedback": "Validated feedback",
                 "import": "Imported outcomes (CSV)"}
DECISION_LABELS = {"release": "Release", "release_with_caution": "Release with caution", "block": "Block",
                   "send_back": "Send back for revision"}
BINNINGS = ("profile bands", "score bins (as on the overview)")


def upload_section() -> None:
    with st.expander("Import outcomes from a CSV file (response_id,outcome[,kind])"):
        st.caption(f"Outcome is bad or good (or 1 / 0). An optional kind column says what each row is; rows "
                   f"without one take the kind chosen here. At most {reg.MAX_OUTCOME_BYTES / 1e6:g} MB. Bad rows "
                   "are reported with their row number; every valid row is kept.")
        kind = st.selectbox("Kind of these outcomes", reg.IMPORTABLE_KINDS, format_func=reg.OUTCOME_KINDS.get,
                            key="cal_kind")
        upload = st.file_uploader("Outcomes CSV", type=["csv"], key="cal_upload")
        if upload is not None and st.button("Import outcomes", key="cal_import",
                                            disabled=not can(Permission.IMPORT)):
            try:
                report = data.write(reg.import_outcomes_csv, current_actor(), upload.getvalue(), upload.name,
                                       kind=kind)
            except (RegisterError, HRIError) as error:
                show_error(error)
            else:
                st.session_state["cal_report"] = report
        report = st.session_state.get("cal_report")
        if report is not None:
            st.success(f"{report.accepted:,} of {report.rows_total:,} row(s) imported; "
                       f"{report.rejected:,} row(s) refused.", icon=":material/upload:")
            if report.problems:
                st.dataframe(pd.DataFrame(report.problems), hide_index=True, key="cal_problems")


def audit_sample_section() -> None:
    """Draw a random sample of released answers (reviewer) and decide on them: audit findings."""
    with st.expander("Random audit sample of released answers (Low and Medium)",
                     expanded=has_kept_messages("calibration_sample")):
        st.caption("The review queue only sees answers scored high. Deciding on a random sample of the answers "
                   "that went out (actions release and caution) gives outcomes across the whole score range. "
                   "An escalation is no outcome: decide release or block.")
        show_kept_messages("calibration_sample")
        reviewer = can(Permission.REVIEW_DECIDE)
        left, right = st.columns([1, 3])
        size = left.number_input("Sample size", min_value=1, max_value=reg.MAX_AUDIT_SAMPLE, value=20, step=1,
                                 key="cal_sample_size")
        if right.button("Draw a sample", key="cal_draw", disabled=not reviewer):
            try:
                sample_id = data.write(reg.draw_audit_sample, current_actor(), int(size))
            except RegisterError as error:
                show_error(error)
            else:
                st.success(f"Audit sample #{sample_id} drawn.", icon=":material/casino:")
        open_items = scoring.audit_sample_items(undecided_only=True)
        if open_items.empty:
            st.caption("No sampled answer is waiting for a decision.")
            return
        st.dataframe(open_items, hide_index=True, key="cal_sample_table",
                     column_order=("sample_id", "response_id", "revision", "score", "band", "action", "current"))
        if not reviewer:
            return
        with st.form("cal_sample_decide", enter_to_submit=False):
            ids = list(open_items["response_id"])
            pick = st.selectbox("Sampled answer", ids, key="cal_sample_pick")
            decision = st.radio("Decision", list(DECISION_LABELS), format_func=DECISION_LABELS.get, index=None,
                                horizontal=True, key="cal_sample_decision")
            reason = st.text_input("Reason (required)", key="cal_sample_reason", max_chars=2000)
            submitted = st.form_submit_button("Record the audit finding", type="primary")
        if submitted:
            row = open_items[open_items["response_id"] == pick].iloc[0]
            if decision is None:
                st.error("**Decision not recorded** — choose a decision.", icon=":material/error:")
                return
            try:
                data.write(review.record_decision, current_actor(), str(pick), int(row["revision"]), decision, reason)
            except RegisterError as error:
                show_error(error)
            else:
                # rerun: the table above and the outcome counts below were read before this decision
                keep_message("calibration_sample", "success",
                             f"Recorded: {DECISION_LABELS[decision]} for {code_span(pick)}.")
                st.rerun()


def coverage_section(frame: pd.DataFrame, profile) -> None:
    """How many outcomes of each kind and score range the figures below rest on."""
    table = reg.outcome_coverage(frame, profile)
    table["kind"] = [reg.OUTCOME_KINDS.get(k, "All kinds" if k == "all" else k) for k in table["kind"]]
    st.caption("What this calibration rests on: outcomes per kind and band of the current profile")
    st.dataframe(table, hide_index=True, key="cal_coverage")


def main() -> None:
    page_frame(filters=False)
    st.title("Calibration")
    upload_section()
    audit_sample_section()
    sources = st.multiselect("Outcome sources", list(SOURCE_LABELS), default=list(SOURCE_LABELS),
                             format_func=SOURCE_LABELS.get, key="cal_sources")
    frame = scoring.outcome_pairs(tuple(sources))
    profile = data.profile()
    bad = int(frame["bad"].sum()) if len(frame) else 0
    cols = st.columns(4)
    cols[0].metric("Known outcomes", f"{len(frame):,}")
    cols[1].metric("Bad answers", f"{bad:,}")
    if len(frame):
        coverage_section(frame, profile)
    if len(frame) == 0 or bad in (0, len(frame)):
        st.info("Calibration needs known outcomes of both kinds (bad and good): decide on responses in the "
                "review queue or on an audit sample, validate feedback, or import outcomes above.",
                icon=":material/info:")
        return
    pairs = list(zip(frame["score"].astype(float), frame["bad"].astype(bool), strict=True))
    roc = calibration.roc_curve(pairs)
    pr = calibration.precision_recall_curve(pairs)
    cols[2].metric("ROC AUC", f"{roc.auc:.3f}")
    cols[3].metric("Average precision", f"{pr.average_precision:.3f}")
    left, right = st.columns(2)
    left.plotly_chart(roc_figure(roc), key="cal_roc")
    right.plotly_chart(pr_figure(pr), key="cal_pr")

    binning = st.radio("Calibration bins", list(BINNINGS), horizontal=True, key="cal_bins")
    uppers = [b.upper for b in profile.bands]
    # the score bins are the overview histogram's: the same function, so a bin means the same on both pages
    bins = uppers if binning == "profile bands" else calibration.score_bins(uppers)
    table = calibration.calibration_table(pairs, bins)
    st.plotly_chart(calibration_figure(table, profile.bands), key="cal_plot")
    st.dataframe(pd.DataFrame([b.to_dict() for b in table]), hide_index=True, key="cal_table")

    st.subheader("Cost-sensitive review threshold")
    c1, c2 = st.columns(2)
    cost_miss = c1.number_input("Cost of a missed bad answer", min_value=0.0, value=10.0, step=1.0, key="cal_miss")
    cost_review = c2.number_input("Cost of a needless review", min_value=0.0, value=1.0, step=1.0, key="cal_review")
    try:
        best = calibration.cost_optimal_threshold(pairs, cost_miss, cost_review)
        suggestion = calibration.suggest_bands(pairs, cost_miss, cost_review, profile)
    except HRIError as error:
        show_error(error)
        return
    m = st.columns(4)
    m[0].metric("Suggested review threshold", f"{best.threshold:g}")
    m[1].metric("Missed bad answers", f"{best.best.false_negatives:,}")
    m[2].metric("Needless reviews", f"{best.best.false_positives:,}")
    m[3].metric("Expected cost per response", f"{best.best.expected_cost:.3f}")
    st.caption(f"Flag for review when the score is above {best.threshold:g} (any threshold up to "
               f"{best.interval_upper:g} costs the same on these outcomes).")
    compare = pd.DataFrame({"band": [b.name for b in profile.bands], "action": [b.action for b in profile.bands],
                            f"upper now (v{profile.version})": [b.upper for b in profile.bands],
                            "suggested upper": [b["upper"] for b in suggestion["bands"]]})
    st.dataframe(compare, hide_index=True, key="cal_bands")
    if st.button("Create a draft profile with the suggested bands", key="cal_save", type="primary",
                 disabled=not can(Permission.PROFILE_EDIT)):
        try:
            version, record = data.write(reg.save_band_suggestion, current_actor(), pairs, cost_miss, cost_review)
        except (RegisterError, HRIError) as error:
            show_error(error)
        else:
            st.success(f"Draft version {version} created with calibration record #{record}. Preview and "
                       "publish it on the Scoring profiles page.", icon=":material/save:")


run_page(main)
