"""Claim verification: the judges' proposals, waiting for a person to confirm, correct or reject them.

Every machine verdict is a proposal with its provenance (judge profile, backend, confidence, reason, the
linked span). Only a confirmed verdict (or one the active judge policy allows, applied at verification)
reaches a claim's label and the score; until then the claim keeps its label (a claim the judge extracted
counts as UNSUPPORTED). The confirm / correct form carries the claim's criticality, category, source and span.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from hri_core.vocabulary import LABELS
from register import RegisterError
from register.access.permissions import Permission
from register.verify import proposals
from ui.features import verification
from ui.features.proposal_review import show_cited
from ui.framework import data
from ui.framework.auth import can, current_actor
from ui.framework.components import empty_state, keep_message, show_kept_messages, toast_then_rerun
from ui.framework.errors import show_error
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import code_span, escape_markdown


def decision_form(row) -> None:
    proposal_id = int(row["proposal_id"])
    with st.form(f"proposal_{proposal_id}", enter_to_submit=False):
        # an abstention has no verdict to confirm (its missing label is NaN in the frame)
        choices = [a for a in verification.ACTIONS if a != "confirm" or not pd.isna(row["label"])]
        action = st.radio("Decision", choices, format_func=verification.ACTIONS.get, horizontal=True, index=None,
                          key="proposal_action")
        label = st.selectbox("Label (for another label)", [lab.value for lab in LABELS], index=None,
                             key="proposal_label")
        st.caption("The claim as it stands: a confirmation keeps what you leave unchanged.")
        fields = verification.claim_fields(row, f"proposal_{proposal_id}")  # per proposal: its own defaults
        submitted = st.form_submit_button("Record decision", type="primary")
    if not submitted:
        return
    abstained = {proposal_id} if pd.isna(row["label"]) else set()
    decisions, problems = verification.decisions_from({proposal_id: (action, label)}, abstained,
                                                      {proposal_id: fields})
    if not decisions:  # no decision chosen, or one that cannot be recorded
        why = problems.get(proposal_id, "choose a decision")
        st.error(f"**Decision not recorded** — {escape_markdown(why)}.", icon=":material/error:")
        return
    try:
        result = data.write(proposals.decide_proposals, current_actor(), decisions)
    except RegisterError as error:
        show_error(error)
        return
    done = "rejected" if result["rejected"] else (
        f"confirmed; it would lower the answer's decision, so change {result['held'][0]} waits for a second "
        "reviewer (Review queue)" if result["held"] else f"confirmed (new revision in batch {result['batch_id']})")
    toast_then_rerun(f"Proposal {proposal_id} {done}")


def agreement_section() -> None:
    summary, curve = verification.agreement_frames()
    with st.expander("Judges against people: agreement and false clearance by confidence", expanded=False):
        if summary.empty:
            st.caption("No decided proposal yet: each confirmation or rejection adds to this comparison.")
            return
        st.dataframe(summary, hide_index=True, column_config={
            "judge_profile": st.column_config.TextColumn("Judge profile"),
            "decided": st.column_config.NumberColumn("Decided"),
            "kappa": st.column_config.NumberColumn("Cohen's kappa", format="%.2f"),
            "false_clearance": st.column_config.NumberColumn("False clearance", format="%.3f"),
            "false_cleared": st.column_config.TextColumn("Falsely cleared")})
        st.caption("At each confidence threshold: the share of decided proposals the judge would still answer "
                   "(coverage), the share of claims people hold not supported that it would clear (false "
                   "clearance) and of supported ones it would clear (supported recall). Write a profile's next "
                   "version at a chosen threshold with `python -m register judge-agreement --threshold T --out FILE`.")
        st.dataframe(curve, hide_index=True, column_config={
            "judge_profile": st.column_config.TextColumn("Judge profile"),
            "threshold": st.column_config.NumberColumn("Confidence >=", format="%.2f"),
            "coverage": st.column_config.NumberColumn("Coverage", format="%.3f"),
            "false_clearance": st.column_config.NumberColumn("False clearance", format="%.3f"),
            "supported_recall": st.column_config.NumberColumn("Supported recall", format="%.3f")})


def test_set_section() -> None:
    report, questions = verification.critical_report()
    with st.expander("Critical-information test sets: hallucination on critical questions, per model and run",
                     expanded=not report.empty):
        if report.empty:
            st.caption("No test-set run yet: `python -m register testset draft NAME`, edit, then `testset run NAME`.")
            return
        counts = {"hallucination_at_most": st.column_config.NumberColumn(
                      "At most (undecided as hallucinated)", format="%.3f"),
                  "claims": st.column_config.NumberColumn("Claims"),
                  "hallucinated_claims": st.column_config.NumberColumn("Hallucinated claims"),
                  "undecided_claims": st.column_config.NumberColumn("Undecided claims")}
        st.dataframe(report, hide_index=True, column_config={
            "test_run_id": st.column_config.NumberColumn("Run"),
            "name": st.column_config.TextColumn("Test set"),
            "version": st.column_config.NumberColumn("Version"),
            "model": st.column_config.TextColumn("Assistant model"),
            "started_at": st.column_config.DatetimeColumn("When", format="YYYY-MM-DD HH:mm"),
            "hallucination": st.column_config.NumberColumn("Hallucination (seed 003)", format="%.3f"),
            **counts,
            "critical_questions": st.column_config.NumberColumn("Critical questions"),
            "hallucinated": st.column_config.NumberColumn("Questions with a hallucinated claim"),
            "question_share": st.column_config.NumberColumn("Share of questions", format="%.2f"),
            "needs_review": st.column_config.NumberColumn("Needs review"),
            "unanswered": st.column_config.NumberColumn("Unanswered (all questions)")})
        st.caption("Hallucination (seed 003): the fraction of an answer's claims that are both unsupported by the "
                   "question's quotes (the retrieved references) and incorrect with respect to its target, averaged "
                   "over the questions; beside it, the share of questions with any such claim. A claim the judge "
                   "could not decide is counted as undecided (the question needs review), never as fine: \"at "
                   "most\" is the rate if every undecided claim were hallucinated. Machine "
                   "verdicts, so confirm them above before acting on them.")
        st.markdown("**Per question**")
        st.dataframe(questions, hide_index=True, column_config={
            "test_run_id": st.column_config.NumberColumn("Run"),
            "model": st.column_config.TextColumn("Assistant model"),
            "response_id": st.column_config.TextColumn("Answer"),
            "hallucination": st.column_config.NumberColumn("Hallucination (seed 003)", format="%.3f"), **counts})


def verify_section() -> None:
    """Verify answers already in the register with a judge (the ``verify`` command, from the console)."""
    with st.expander("Verify stored answers: extract, link and judge their claims", expanded=False):
        # a run over people's claims is a reviewer's (the register checks again): others see only new answers
        with_claims = can(Permission.REVIEW_DECIDE) and st.toggle(
            "Also answers that already have claims", key="vs_with_claims",
            help="Their claims keep their labels and score: the judge's verdicts on them wait below as proposals, "
                 "and a label changes only when a person confirms it.")
        frame = verification.verifiable(with_claims=with_claims)
        if frame.empty:
            st.caption("No answer to verify: every current answer has claims (turn on the toggle to re-verify "
                       "them) or no answer text.")
            return
        with st.form("verify_selection", enter_to_submit=False):
            labels = {r.response_id: f"{r.response_id} · {r.use_case or '-'} · {r.model or '-'} · "
                                     f"{r.claim_count} claims · {r.context_chunks} context chunks"
                      for r in frame.itertuples()}
            chosen = st.multiselect(f"Answers ({len(frame):,} offered, newest first)", list(labels),
                                    format_func=labels.get, key="vs_ids", placeholder="Choose answers")
            profile = st.selectbox("Judge profile", verification.judge_profiles(), key="vs_profile")
            submitted = st.form_submit_button("Verify the chosen answers", type="primary")
        if not submitted:
            return
        if not chosen:
            st.error("**Nothing verified** — choose at least one answer.", icon=":material/error:")
            return
        bar = st.progress(0.0, text="Verifying...")

        def progress(done: int, total: int | None, message: str) -> None:
            bar.progress(min(1.0, done / total) if total else 0.5, text=f"{done:,} of {total or '?'} {message}")

        try:
            report = verification.verify_selection(current_actor(), chosen, profile, progress)
        except RegisterError as error:
            bar.empty()
            show_error(error)
            return
        bar.empty()
        keep_message("verify_stored", "success",
                     f"Verification run {report.run_id}: {report.responses:,} answer(s), {report.claims:,} claims, "
                     f"{report.unlinked:,} UNLINKED; {report.proposed:,} proposals wait below, {report.applied:,} "
                     "applied by the judge policy.")
        for problem in report.problems:
            keep_message("verify_stored", "warning", f"Left out: {escape_markdown(problem)}")
        st.rerun()  # the counts and the proposals above and below are read afresh


def main() -> None:
    page_frame(filters=False)
    st.title("Claim verification")
    counts = verification.counts()
    policy_version = verification.active_policy_version()
    cols = st.columns(5)
    for col, status in zip(cols, ("proposed", "confirmed", "rejected", "applied"), strict=False):
        col.metric(status.capitalize(), f"{counts.get(status, 0):,}")
    cols[4].metric("Judge policy", f"v{policy_version}" if policy_version else "off")
    st.caption("A judge's verdict is a proposal until a person confirms it; until then its claim keeps the label "
               "it has (a claim the judge extracted counts as UNSUPPORTED). Confirm them one by one below, or "
               "response by response (with the answer and its context beside them) in the Labelling workbench "
               "under \"Judge proposals to confirm\". "
               + ("The active policy applied the verdicts it allows at verification."
                  if policy_version else "No judge policy is active: every verdict waits for a person."))
    if can(Permission.LABEL):
        show_kept_messages("verify_stored")
        verify_section()
    agreement_section()
    test_set_section()
    frame = verification.proposal_frame("proposed")
    if frame.empty:
        empty_state("No proposal waits for a decision. Run `python -m register verify INPUT.jsonl` to verify answers.")
        return
    for profile_key in sorted(frame["judge_profile"].dropna().unique()):
        worth = verification.judge_worth(str(profile_key))
        if not worth.empty:
            st.markdown(f"**What {escape_markdown(profile_key)} is worth** (measured; false clearance is a gold "
                        "not-supported claim judged SUPPORTED; 95% intervals)")
            st.dataframe(worth, hide_index=True, key=f"judge_worth_{profile_key}")
    shown = frame.assign(label=frame["label"].astype(object).where(frame["label"].notna(), "needs review"))
    st.dataframe(shown, hide_index=True, key="proposal_table",
                 column_order=("proposal_id", "response_id", "claim_id", "claim_text", "label", "confidence",
                               "unlinked", "link_score", "reason", "target_label", "category", "stakes",
                               "judge_profile"),
                 column_config={
                     "proposal_id": st.column_config.NumberColumn("Proposal"),
                     "response_id": st.column_config.TextColumn("Response"),
                     "claim_id": st.column_config.TextColumn("Claim"),
                     "claim_text": st.column_config.TextColumn("Claim text", width="large"),
                     "label": st.column_config.TextColumn("Judge's verdict"),
                     "confidence": st.column_config.NumberColumn("Confidence", format="%.2f"),
                     "unlinked": st.column_config.CheckboxColumn("UNLINKED"),
                     "link_score": st.column_config.NumberColumn("Link score", format="%.2f"),
                     "reason": st.column_config.TextColumn("Reason", width="large"),
                     "target_label": st.column_config.TextColumn("Against the target"),
                     "judge_profile": st.column_config.TextColumn("Judge profile"),
                 })
    ids = [int(i) for i in frame["proposal_id"]]
    pick = st.selectbox("Proposal to decide on", ids, key="proposal_pick")
    row = frame[frame["proposal_id"] == pick].iloc[0]
    # pd.isna: a frame holds an abstention's missing label as NaN, which is not None
    verdict = row["label"] if not pd.isna(row["label"]) else "needs review (the judge abstained)"
    st.markdown(f"**Claim {code_span(row['claim_id'])} of {code_span(row['response_id'])}:** "
                f"{escape_markdown(row['claim_text'])}")
    st.markdown(f"**Judge's verdict:** {escape_markdown(verdict)} · confidence {float(row['confidence']):.2f} · "
                f"{escape_markdown(row['judge_profile'])} ({escape_markdown(row['backend'])})  \n"
                f"**Reason:** {escape_markdown(row['reason'])}")
    if not pd.isna(row["span"]):
        passage = "" if pd.isna(row["evidence_index"]) else f" (passage {int(row['evidence_index']) + 1})"
        st.markdown(f"**Linked span{passage}:** {escape_markdown(row['span'])}")
    show_cited(row.get("cited_sentences"))
    if bool(row["unlinked"]):
        st.warning("UNLINKED: no retrieved span holds enough of the claim's words.", icon=":material/link_off:")
    if can(Permission.LABEL):
        decision_form(row)
    else:
        st.info(f"Your role ({current_actor().role}) can read the proposals; deciding needs the annotator role.",
                icon=":material/lock:")


run_page(main)
