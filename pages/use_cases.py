"""Use cases (the paper's Scope check, Fig. 1): the approved-use-case register.

Each use case with its owner, purpose, status (proposed, approved, suspended, retired), the claim categories
and topics it may answer about, the roles of the people who ask its questions (requester roles: not the
console's roles), its approver, the approval's evidence and its review-by date. Edit in the grid (an edit
never approves), approve as a second person (never the owner: four eyes), import / export CSV or Excel,
restore deleted rows.
"""

from __future__ import annotations

from datetime import timedelta
from functools import partial

import pandas as pd
import streamlit as st

from hri_core.vocabulary import CATEGORIES
from register import RegisterError
from register.access.permissions import Permission
from register.db.store import utc_now
from register.governance import registers, use_cases
from register.governance.rows import USE_CASE_COLUMNS
from register.governance.transfer import export_use_cases
from register.governance.vocabulary import APPROVED, RETIRED, SUSPENDED, USE_CASE_STATUSES
from ui.features import governance as gov
from ui.features import lenses
from ui.framework import data
from ui.framework.auth import can, current_actor
from ui.framework.components import toast_then_rerun
from ui.framework.errors import show_error
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import code_span, escape_markdown
from ui.framework.versioned_table import RowVersions, reload, versioned_table_editor

KEY = "usecases"  # the grid's key: the import and the restore reload it by the register's kind
DEFAULT_REVIEW_DAYS = 365  # the review-by date the approval form proposes, a year ahead


def _known(frame: pd.DataFrame, column: str) -> list[str]:
    """Every value the register's rows hold in a list column (the grid offers them; new ones may be typed)."""
    return sorted({str(v) for items in frame[column] if items is not None for v in items})


def column_config(frame: pd.DataFrame) -> dict:
    cc = st.column_config
    return {
        "use_case_id": cc.TextColumn("Use case id", required=True,
                                     help="As the answers' use_case field names it; re-import updates by it"),
        "owner": cc.TextColumn("Owner", required=True),
        "purpose": cc.TextColumn("Purpose", required=True, width="large"),
        "status": cc.SelectboxColumn("Status", options=USE_CASE_STATUSES, required=True,
                                     help="An edit may propose, suspend or retire; Approve approves (four eyes)"),
        "allowed_categories": cc.MultiselectColumn("Allowed claim categories", options=CATEGORIES),
        "allowed_topics": cc.MultiselectColumn("Allowed topics", options=_known(frame, "allowed_topics"),
                                               accept_new_options=True),
        "requester_roles": cc.MultiselectColumn(
            "Requester roles", options=_known(frame, "requester_roles"), accept_new_options=True,
            help="Who asks this use case's questions (not the console's roles); restricted sources are compared "
                 "with them"),
        "approved_by": cc.TextColumn("Approved by", disabled=True, help="Set by Approve: never the owner"),
        "evidence_link": cc.LinkColumn("Approval evidence"),
        "evidence_hash": cc.TextColumn("Evidence content hash"),
        "review_by": cc.DateColumn("Review by", format="YYYY-MM-DD"),
        "notes": cc.TextColumn("Notes", width="medium"),
        "row_version": cc.NumberColumn("Version", disabled=True),
        "updated_by": cc.TextColumn("Last edited by", disabled=True),
    }


def approve_form(actor, frame: pd.DataFrame) -> None:
    """Approve (or renew) one use case as a second person: its review-by date, the evidence, a reason."""
    candidates = frame[frame["status"] != RETIRED]
    if candidates.empty:
        st.caption("No use case to approve: add one (status proposed) in the Edit tab.")
        return
    chosen = st.selectbox("Use case", candidates["use_case_id"].tolist(), key="uc_approve_id")
    row = candidates.set_index("use_case_id").loc[chosen]
    st.markdown(escape_markdown(f"{row['purpose']}") + "\n\n" + escape_markdown(
        f"Owner {row['owner']}; status {row['status']}; version {int(row['row_version'])}; last edited by "
        f"{row['updated_by']}."))
    if row["status"] == APPROVED:
        st.caption(escape_markdown(f"Approved by {row['approved_by']}, review by {row['review_by']}: approving "
                                   "again renews it."))
    with st.form("uc_approve", enter_to_submit=False):
        review_by = st.date_input("Review by", value=utc_now().date() + timedelta(days=DEFAULT_REVIEW_DAYS),
                                  key="uc_review_by")
        link = st.text_input("Approval evidence: link (blank: keep the row's)", key="uc_evidence_link",
                             max_chars=2000)
        content_hash = st.text_input("Approval evidence: content hash (blank: keep the row's)",
                                     key="uc_evidence_hash", max_chars=200)
        reason = st.text_input("Why you approve it (required)", key="uc_reason", max_chars=2000)
        go = st.form_submit_button("Approve")
    if go:
        try:
            data.write(use_cases.approve_use_case, actor, chosen, int(row["row_version"]), review_by=review_by,
                       reason=reason, evidence_link=link, evidence_hash=content_hash)
        except RegisterError as error:  # FourEyesViolation when the owner approves: shown with its reason
            show_error(error)
            return
        reload(KEY)
        toast_then_rerun(f"Use case {code_span(chosen)} approved")


def main() -> None:
    page_frame(filters=False)
    actor = current_actor()
    st.title("Use cases")
    st.caption("The approved-use-case register (the paper's Scope check): what each AI use case is for, who owns it, "
               "which claim categories and topics it may answer about, who asks its questions, and who approved it "
               "until when. A second person approves: never the owner.")
    frame = gov.use_cases()
    approved = frame["status"] == APPROVED
    overdue = approved & (pd.to_datetime(frame["review_by"]) < pd.Timestamp(utc_now().date()))
    stats = st.columns(4)
    stats[0].metric("Use cases", f"{len(frame):,}")
    stats[1].metric("Approved", f"{int(approved.sum()):,}")
    stats[2].metric("Approved, past review date", f"{int(overdue.sum()):,}")
    stats[3].metric("Suspended or retired", f"{int(frame['status'].isin((SUSPENDED, RETIRED)).sum()):,}")
    edit, lens_tab, approve, io_tab, deleted = st.tabs(["Edit", "Profiles and lenses", "Approve", "Import / export",
                                                        "Deleted"])
    with edit:
        versioned_table_editor(
            KEY, frame, RowVersions(save=partial(data.write, registers.save_use_cases, actor), key_col="use_case_id",
                                    columns=USE_CASE_COLUMNS, audit_entity=use_cases.ENTITY),
            column_config=column_config(frame), column_order=USE_CASE_COLUMNS + ("row_version", "updated_by"),
            read_only=None if can(Permission.REGISTER_EDIT) else
            f"Read only: your role ({actor.role}) may not edit the register.")
    with approve:
        if can(Permission.RULES_EDIT):
            approve_form(actor, frame)
        else:
            st.caption(f"Approving a use case needs an admin; your role is {actor.role}.")
    with io_tab:
        gov.import_export(KEY, actor, export_use_cases(data.get_store()))
    with deleted:
        gov.deleted_rows(KEY, gov.use_cases(include_deleted=True), "use_case_id", "purpose", actor)
    with lens_tab:
        lenses.lens_section(actor, "usecases-lens")


run_page(main)
