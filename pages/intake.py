"""Import: upload response files, see what the import did, and work through the quarantine.

Annotators and above. An upload (JSON Lines, CSV or Parquet) goes through the same importer as
``python -m register import``, with a progress bar; the report gives accepted / new / revised /
unchanged / quarantined per file. The quarantine grid lists the open records: edit a record's text
and re-import it, or discard it with a reason (kept, never deleted). The inbox section shows the
folder the running console imports dropped files from, and its latest reports.
"""

from __future__ import annotations

import streamlit as st

from hri_core import HRIError
from register import RegisterError
from register.access.permissions import Permission
from register.ingest.importer import ImportReport
from register.ingest.reports import DEFERRED
from ui.features import intake
from ui.framework.auth import can, current_actor
from ui.framework.components import keep_message, show_kept_messages
from ui.framework.errors import show_error
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import code_span, escape_markdown

STATUS_LABELS = {"open": "Open", "resolved": "Resolved", "discarded": "Discarded"}


def upload_section() -> None:
    st.subheader("Upload")
    st.caption("JSON Lines (.jsonl, .json), CSV or Parquet, in the interchange format (docs/import.md, "
               "\"The format\"). Invalid records go to the quarantine below with every reason; valid ones "
               "are stored and scored. Re-importing a file counts its stored records as unchanged.")
    upload = st.file_uploader("Response file", type=intake.UPLOAD_TYPES, key="intake_upload")
    if st.button("Import", key="intake_import", type="primary", disabled=upload is None):
        bar = st.progress(0.0, text=f"Importing {upload.name} ...")

        def progress(done: int, total: int | None, message: str) -> None:
            bar.progress(min(1.0, done / total) if total else 0.5, text=escape_markdown(message))

        try:
            report = intake.import_upload(current_actor(), upload.name, upload.getvalue(), progress)
        except (RegisterError, HRIError) as error:
            bar.empty()
            show_error(error)
            return
        bar.progress(1.0, text=f"{escape_markdown(upload.name)}: done")
        st.session_state["intake_report"] = report.as_dict()
    if "intake_report" in st.session_state:
        show_report(ImportReport.from_dict(st.session_state["intake_report"]))


def show_report(report: ImportReport) -> None:
    cols = st.columns(len(intake.REPORT_COUNTS))
    for col, (label, name) in zip(cols, intake.REPORT_COUNTS, strict=True):
        col.metric(label, f"{getattr(report, name):,}")
    st.dataframe(intake.report_frame(report), hide_index=True, key="intake_batches")
    for note in [*(n for b in report.batches for n in b.notes), *report.notes]:
        st.caption(escape_markdown(note))
    if report.search_index == DEFERRED:
        st.caption("Stored and scored. The search index catches up in the background; search finds the new "
                   "answers meanwhile, more slowly.")
    if report.quarantined:
        st.warning(f"{report.quarantined:,} record(s) quarantined: fix or discard them in the grid below.",
                   icon=":material/warning:")


def quarantine_section() -> None:
    st.subheader("Quarantine")
    shown = st.segmented_control("Show", list(STATUS_LABELS), default="open", format_func=STATUS_LABELS.get,
                                 key="intake_q_status") or "open"
    frame = intake.quarantine_frame((shown,))
    if frame.empty:
        st.info("No open quarantined records: every imported record was valid or has been dealt with."
                if shown == "open" else f"No {shown} quarantine rows.", icon=":material/inbox:")
        return
    if shown != "open":
        columns = ["quarantine_id", "source_name", "location", "response_id", "reasons", "created_at",
                   *(["resolved_at", "resolved_batch_id"] if shown == "resolved"
                     else ["discarded_at", "discarded_by", "discard_reason"])]
        st.dataframe(frame[columns], hide_index=True, key="intake_q_closed")
        return
    st.caption("Edit a record's text (the JSON object, or for a CSV/Parquet record the JSON list of its rows) "
               "and choose re-import, or choose discard and give a reason. Nothing happens until you apply.")
    gen = st.session_state.setdefault("intake_q_gen", 0)
    key = f"intake_q_editor_{gen}"
    st.data_editor(
        frame[intake.GRID_COLUMNS], key=key, hide_index=True, width="stretch",
        disabled=["quarantine_id", "source_name", "location", "response_id", "reasons"],
        column_config={
            "quarantine_id": st.column_config.NumberColumn("#", format="%d"),
            "source_name": "file", "response_id": "response id",
            "reasons": st.column_config.TextColumn("why it was quarantined", width="medium"),
            "raw": st.column_config.TextColumn("record (edit to fix)", width="large"),
            "action": st.column_config.SelectboxColumn("action", options=list(intake.ACTIONS)),
            "discard_reason": st.column_config.TextColumn("discard reason", max_chars=2000),
        })
    if st.button("Apply", key="intake_q_apply", type="primary"):
        actions = intake.grid_actions(frame, st.session_state.get(key) or {})
        if not actions:
            st.info("Nothing to apply: choose re-import or discard in a row's action column first.")
            return
        apply_all(actions)
        st.session_state["intake_q_gen"] = gen + 1  # a fresh grid of what is still open
        st.rerun()
    show_kept_messages("intake_quarantine")


def apply_all(actions: list[intake.GridAction]) -> None:
    """Each action on its own: one failing row never stops the others; the results show after the rerun."""
    actor = current_actor()
    for action in actions:
        row = f"#{action.quarantine_id}"
        try:
            report = intake.apply_action(actor, action)
        except (RegisterError, HRIError) as error:
            title = getattr(error, "title", "Error")
            keep_message("intake_quarantine", "error",
                         f"{row}: **{escape_markdown(title)}** — {escape_markdown(error)}")
            continue
        if report is None:
            keep_message("intake_quarantine", "success", f"{row}: discarded")
        else:
            b = report.batches[0]
            keep_message("intake_quarantine", "success", f"{row}: re-imported as batch {b.batch_id} "
                         f"({b.new_responses} new, {b.new_revisions} revised, {b.unchanged} unchanged); "
                         "quarantine row resolved")


def inbox_section() -> None:
    st.subheader("Inbox")
    status = intake.inbox_status()
    beat = status["heartbeat"]
    st.caption(f"Files dropped into {code_span(status['root'])} are imported by this console with the same "
               "importer (actor `inbox`) once they have stopped changing and no process holds them open for "
               "writing, then moved to `done/` or `failed/` with a JSON report beside them. Links, folders, "
               "FIFOs and devices are refused unread (moved to `failed/`, named in a report). "
               "`python -m register import --via-inbox` hands files over this way while the console runs.")
    if beat is None:
        st.info("No watcher is looking into the inbox (HRI_INBOX_POLL_SECONDS=0, or it has not started yet).",
                icon=":material/info:")
    else:
        st.caption(f"Watching: every {beat['poll_seconds']:g} s (process {beat['pid']}).")
    if status["waiting"]:
        st.caption("Waiting: " + ", ".join(code_span(name) for name in status["waiting"]))
    if len(status["latest"]):
        st.dataframe(status["latest"], hide_index=True, key="intake_inbox_latest")


def main() -> None:
    page_frame(filters=False)
    st.title("Import")
    if not can(Permission.IMPORT):
        st.warning("Importing needs the annotator role or above.", icon=":material/lock:")
        return
    upload_section()
    quarantine_section()
    inbox_section()


run_page(main)
