"""Pre-submission claim-verification checklist (paper Table IX): run, review, sign, report.

Each of the seven checks runs automatically against the register and lists its offending rows with a
link to fix them. A reviewer records pass / fail / waived-with-reason per item and signs; the
sign-off is bound to a hash of exactly what was checked and shows as stale once a checked record
changes. The signer cannot be the last editor of the checked records (four eyes).
"""

from __future__ import annotations

import streamlit as st

from register import RegisterError
from register.access.permissions import Permission
from register.errors import SignOffRefused
from register.governance import checklist
from register.governance.checklist import DECISIONS
from register.governance.checks import CHECKS, NOT_EVALUABLE
from ui.features import governance as gov
from ui.framework import data
from ui.framework.auth import can, current_actor
from ui.framework.components import toast_then_rerun
from ui.framework.errors import show_error
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import code_span, escape_markdown

FIX_PAGES = {"register_claim": "pages/claims_register.py", "source": "pages/sources.py",
             "response": "pages/response_detail.py", "use_case": "pages/use_cases.py"}  # item 9 names use cases
FIX_PARAM = {"register_claim": "focus", "source": "focus", "response": "response_id", "use_case": "focus"}
STATUS_ICONS = {"pass": ":material/check_circle:", "fail": ":material/cancel:", NOT_EVALUABLE: ":material/help:"}


def findings(run: dict) -> None:
    for check in run["results"]["checks"]:
        failed = check["status"] != "pass"
        with st.expander(f"{check['no']}. {escape_markdown(check['title'])} — {check['status'].upper()} "
                         f"({len(check['offending'])} offending)", icon=STATUS_ICONS.get(check["status"]),
                         expanded=failed):
            if check.get("not_evaluable"):
                st.warning(f"**Not evaluable** — {escape_markdown(check['not_evaluable'])}. It fails unless a "
                           "reviewer waives it with a reason.", icon=":material/help:")
            st.caption(escape_markdown(check["note"]))
            for _i, f in enumerate(check["offending"][:50]):
                left, right = st.columns([4, 1])
                left.text(f"{f['entity_type']} {f['entity_id']}: {f['reason']}")
                right.page_link(FIX_PAGES[f["entity_type"]], label="Fix", icon=":material/edit:",
                                query_params={FIX_PARAM[f["entity_type"]]: f["entity_id"]})
            if len(check["offending"]) > 50:
                st.caption(f"... and {len(check['offending']) - 50} more (see the report)")


def sign_form(actor, run: dict) -> None:
    status = {c["no"]: c["status"] for c in run["results"]["checks"]}
    with st.form(f"sign_{run['run_id']}", enter_to_submit=False):
        st.markdown(f"**Sign run {run['run_id']}** as {code_span(actor.name)} ({escape_markdown(actor.role)})")
        decisions = {}
        for check in CHECKS:
            no = check.no
            left, right = st.columns([2, 3])
            default = 0 if status[no] == "pass" else 1
            decision = left.radio(f"Item {no}", DECISIONS, index=default, horizontal=True, key=f"sign_{no}",
                                  help=check.title)
            reason = right.text_input(f"Reason for item {no} (required when waived)", key=f"reason_{no}")
            decisions[no] = {"decision": decision, "reason": reason}
        submitted = st.form_submit_button("Sign", type="primary")
    if submitted:
        try:
            data.write(checklist.sign, actor, run["run_id"], decisions)
        except SignOffRefused as refused:
            refusal(refused)
            return
        except RegisterError as error:
            show_error(error)
            return
        toast_then_rerun(f"Run {run['run_id']} signed", icon=":material/draw:")


def refusal(refused: SignOffRefused) -> None:
    """A refused sign-off: each item by its number and title, with why; what was chosen stays in the form."""
    lines = "\n".join(f"- **Item {p.row}** ({escape_markdown(refused.items.get(p.row or 0, ''))}): "
                      f"{escape_markdown(p.message)}" for p in refused.problems)
    st.error(f"**{refused.title}** — nothing was signed:\n\n{lines}", icon=":material/error:")


def main() -> None:
    page_frame(filters=False)
    actor = current_actor()
    st.title("Pre-submission checklist")
    if can(Permission.CHECKLIST_RUN) and st.button("Run the checklist now", type="primary"):
        try:
            st.session_state["checklist_run"] = data.write(checklist.record_run, actor)
        except RegisterError as error:
            show_error(error)
    history = gov.checklist_history()
    if history.empty:
        st.info("No checklist run yet: run it to check the claims and source registers against Table IX.")
        return
    runs = history["run_id"].tolist()
    chosen = st.session_state.get("checklist_run", runs[0])
    run_id = st.selectbox("Run", runs, index=runs.index(chosen) if chosen in runs else 0, key="checklist_pick")
    run = gov.run_detail(int(run_id))
    failed = run["results"]["summary"]["failed_checks"]
    stats = st.columns(4)
    stats[0].metric("Automated outcome", run["outcome"].upper())
    not_evaluable = run["results"]["summary"].get("not_evaluable_checks", [])
    stats[1].metric("Checks failed", f"{len(failed)} of {len(CHECKS)}",
                    help=f"Not evaluable (fail unless waived): {', '.join(map(str, not_evaluable))}"
                    if not_evaluable else None)
    stats[2].metric("Rule version", run["rule_version"])
    stats[3].metric("Sign-offs", len(run["signoffs"]))
    if run["stale"]:
        st.warning("Stale: a checked record or the evidence rules changed since this run. Its sign-offs no longer "
                   "cover the register; run the checklist again.", icon=":material/history:")
    st.caption(f"Run by {code_span(run['run_by'])} at {run['run_at']:%Y-%m-%d %H:%M UTC}; content hash "
               f"{code_span(run['content_hash'][:16])}…")
    findings(run)
    for so in run["signoffs"]:
        st.text(f"Signed by {so['signed_by']} ({so['signed_role']}) at {so['signed_at']:%Y-%m-%d %H:%M UTC}: "
                f"{so['outcome']}" + (" — STALE" if so["stale"] else ""))
    signed_by_me = [so for so in run["signoffs"] if so["signed_by"] == actor.name]
    if signed_by_me:
        st.info(f"You signed this run at {signed_by_me[0]['signed_at']:%Y-%m-%d %H:%M UTC}. A further sign-off "
                "must come from another reviewer.", icon=":material/draw:")
    elif not run["stale"] and can(Permission.CHECKLIST_SIGN):
        sign_form(actor, run)
    outcomes = st.checkbox("Include the weights fitted to outcomes and the aggregation models compared (slower)",
                           key="checklist_report_outcomes")
    pdf, markdown = gov.report_files(int(run_id), include_outcomes=outcomes)
    left, right = st.columns(2)
    left.download_button("Release report (PDF)", pdf, f"checklist-run-{run_id}.pdf", "application/pdf",
                         on_click="ignore")
    right.download_button("Release report (Markdown)", markdown, f"checklist-run-{run_id}.md", "text/markdown",
                          on_click="ignore")
    st.subheader("History")
    st.dataframe(history, hide_index=True)


run_page(main)
