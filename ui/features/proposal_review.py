"""The labelling workbench's second kind of work: the judges' proposals, confirmed response by response.

A proposal is a machine verdict on one claim with its provenance (judge profile, backend, confidence, reason,
the linked span, the verification run). Here a person sees the answer and its retrieved context beside every
waiting proposal of it and confirms, corrects or rejects each; a claim left undecided keeps waiting. Only a
confirmed verdict reaches the claim's label and the score (``register.verify.proposals.decide_proposals``:
one new, audited revision per response). Batches stay blind: proposals are never shown inside a batch.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from hri_core.vocabulary import LABELS
from register import Actor, RegisterError
from register.verify import proposals
from ui.features import verification
from ui.features.answer_view import show_answer
from ui.framework import data
from ui.framework.components import keep_message, show_kept_messages
from ui.framework.errors import show_error
from ui.framework.text import code_span, escape_markdown

PLACE = "workbench_proposals"  # where the result of "Record decisions" shows after the rerun


def review_proposals(actor: Actor) -> None:
    """Pick a response with waiting proposals, see it, and record decisions on its proposals."""
    show_kept_messages(PLACE)
    waiting = verification.proposal_responses(actor)
    if waiting.empty:
        st.info("No judge proposal waits for a person. Verify answers on the Claim verification page, or with "
                "`python -m register verify INPUT.jsonl`; their claims' verdicts then wait here.",
                icon=":material/inbox:")
        return
    st.caption(f"{int(waiting['proposals'].sum()):,} proposals on {len(waiting):,} responses wait for a person. "
               "Until a verdict is confirmed its claim keeps the label it has (a claim the judge extracted counts "
               "as UNSUPPORTED).")
    marks = {r.response_id: f"{r.response_id} — {r.proposals} proposal{'s' if r.proposals != 1 else ''}"
                            + (f", {r.abstained} abstained" if r.abstained else "")
                            + (f", {r.unlinked} UNLINKED" if r.unlinked else "")
             for r in waiting.itertuples()}
    ids = list(marks)
    if st.session_state.get("wb_proposal_response") not in ids:
        st.session_state["wb_proposal_response"] = ids[0]
    response_id = st.selectbox("Response", ids, format_func=marks.get, key="wb_proposal_response")
    item = verification.proposal_item(actor, response_id)
    show_answer(item)
    _decision_form(actor, item)


def _provenance(row: dict) -> str:
    started = pd.Timestamp(row["run_started_at"]).strftime("%Y-%m-%d %H:%M") if row["run_started_at"] else "?"
    return (f"{escape_markdown(row['judge_profile'])} ({escape_markdown(row['backend'])}) · verification run "
            f"{int(row['run_id'])} of {escape_markdown(row['run_source'])} by {escape_markdown(row['run_by'])}, "
            f"{started}")


def _show_proposal(row: dict) -> None:
    verdict = row["label"] or "needs review (the judge abstained)"
    st.markdown(f"**Claim {code_span(row['claim_id'])}** — {escape_markdown(row['claim_text'])}")
    st.markdown(f"Judge's verdict: **{escape_markdown(verdict)}** · confidence {float(row['confidence']):.2f}"
                + (f" · against the target: {escape_markdown(row['target_label'])}" if row["target_label"] else "")
                + f"  \nReason: {escape_markdown(row['reason'])}  \nProvenance: {_provenance(row)}")
    if row["span"]:
        passage = "" if row["evidence_index"] is None else f" (passage {int(row['evidence_index']) + 1})"
        st.markdown(f"Linked span{passage}, link score {float(row['link_score']):.2f}: "
                    f"{escape_markdown(row['span'])}")
    show_cited(row.get("cited_sentences"))
    worth = verification.worth_caption(str(row["judge_profile"]))
    if worth:
        st.caption(worth)
    if row["unlinked"]:
        st.caption(":material/link_off: UNLINKED: no retrieved span holds enough of the claim's words.")


def show_cited(sentences: object) -> None:
    """The evidence sentences the judge cited, one per line, escaped (nothing when it cited none)."""
    cited = [str(s) for s in sentences] if sentences is not None and not isinstance(sentences, (str, float)) else []
    if cited:
        st.markdown("Cited sentences:  \n" + "  \n".join(f"{i}. {escape_markdown(s)}"
                                                         for i, s in enumerate(cited, start=1)))


def _decision_form(actor: Actor, item: dict) -> None:
    rows = item["proposals"]
    with st.form(f"wb_proposals_{item['response_id']}", enter_to_submit=False):
        choices: dict[int, tuple[str | None, str | None]] = {}
        fields: dict[int, dict] = {}
        for row in rows:
            pid = int(row["proposal_id"])
            with st.container(border=True):
                _show_proposal(row)
                offered = [a for a in verification.ACTIONS if a != "confirm" or row["label"]]
                left, right = st.columns([3, 2])
                action = left.radio(f"Decision on proposal {pid}", offered, format_func=verification.ACTIONS.get,
                                    horizontal=True, index=None, key=f"wb_proposal_{pid}_action")
                label = right.selectbox(f"Another label for proposal {pid}", [lab.value for lab in LABELS],
                                        index=None, key=f"wb_proposal_{pid}_label")
                choices[pid] = (action, label)
                fields[pid] = verification.claim_fields(row, f"wb_proposal_{pid}")
        submitted = st.form_submit_button("Record decisions", type="primary")
    if not submitted:
        return
    abstained = {int(r["proposal_id"]) for r in rows if not r["label"]}
    decisions, problems = verification.decisions_from(choices, abstained, fields)
    if not decisions and not problems:
        st.info("No decision chosen: every proposal still waits.", icon=":material/info:")
        return
    if decisions:
        try:
            result = data.write(proposals.decide_proposals, actor, decisions)
        except RegisterError as error:
            show_error(error)
            return
        revision = f" (a new revision, batch {result['batch_id']})" if result["batch_id"] else ""
        if result["held"]:
            revision += (f"; {len(result['held'])} change(s) would lower a decision and wait for a second reviewer "
                         "(Review queue)")
        keep_message(PLACE, "success", f"Recorded: {result['confirmed']} confirmed{revision}, "
                                       f"{result['rejected']} rejected.")
    for proposal_id, why in problems.items():
        keep_message(PLACE, "error", f"Not recorded: proposal {proposal_id} — {escape_markdown(why)}")
    st.rerun()
