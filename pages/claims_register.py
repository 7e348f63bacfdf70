"""Claims register (paper Table VII): every claim, its type, sources and verification status.

Edit in the grid (dropdowns for the vocabularies, dates as dates) and save: every failure is listed
before anything is written, a row changed by someone else meanwhile is refused, every change is
audited. Delete is soft (restore below). Import and export as CSV or Excel.
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from register import RegisterError
from register.access.permissions import Permission
from register.governance import registers
from register.governance.rows import CLAIM_COLUMNS
from register.governance.transfer import export_claims
from register.governance.vocabulary import CLAIM_TYPES, SOURCE_BASES, STATUSES
from ui.features import governance as gov
from ui.framework import data
from ui.framework.auth import can, current_actor
from ui.framework.components import apply_form_values, empty_form_on_next_run, toast_then_rerun
from ui.framework.errors import show_form_error
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import code_span, escape_markdown
from ui.framework.versioned_table import RowVersions, reload, versioned_table_editor


def column_config(source_ids: list[str]) -> dict:
    cc = st.column_config
    return {
        "claim_key": cc.TextColumn("Claim id", disabled=True, help="Stable key; re-import updates by it"),
        "statement": cc.TextColumn("Statement", required=True, width="large"),
        "claim_type": cc.SelectboxColumn("Claim type", options=CLAIM_TYPES, required=True),
        "source_ids": cc.MultiselectColumn("Sources", options=source_ids, help="Ids from the source register"),
        "verification_status": cc.SelectboxColumn("Verification status", options=STATUSES, required=True),
        "reviewer": cc.TextColumn("Reviewer"),
        "reviewed_on": cc.DateColumn("Reviewed on", format="YYYY-MM-DD"),
        "notes": cc.TextColumn("Notes", width="medium"),
        "no_peer_reviewed_source": cc.CheckboxColumn(
            "No peer-reviewed source", help="Table VIII: a preprint is acceptable evidence only when no peer-reviewed "
                                            "source exists; tick when that is so"),
        "source_basis": cc.SelectboxColumn("Source basis", options=SOURCE_BASES,
                                           help="Table IX item 1: the claim's sources are primary or an acceptable "
                                                "secondary source"),
        "source_locators": cc.ListColumn("Locators", help="Where in each linked source, in the links' order: a "
                                                          "page, a section or a quote (edit in the file: | between)"),
        "row_version": cc.NumberColumn("Version", disabled=True),
        "updated_by": cc.TextColumn("Last edited by", disabled=True),
    }


FORM_LABELS = {"claim_key": "Claim id", "statement": "Statement", "claim_type": "Claim type",
               "verification_status": "Verification status", "source_ids": "Sources", "reviewer": "Reviewer",
               "reviewed_on": "Reviewed on", "notes": "Notes"}
# what is typed empties after a save; the claim type and status stay as chosen for the next claim
EMPTY_FORM = {"clm_statement": "", "clm_source_ids": [], "clm_reviewer": "", "clm_reviewed_on": None, "clm_notes": ""}


def add_form(actor) -> None:
    """One claim by form. A refused save keeps what was typed and names the field; the claim gets a readable
    id from its statement (``clm-the-supplier-holds-iso-27001``)."""
    apply_form_values("add_claim")
    with st.form("add_claim", enter_to_submit=False):
        statement = st.text_area(FORM_LABELS["statement"], max_chars=2000, key="clm_statement")
        left, right = st.columns(2)
        claim_type = left.selectbox(FORM_LABELS["claim_type"], CLAIM_TYPES, key="clm_claim_type")
        status = right.selectbox(FORM_LABELS["verification_status"], STATUSES, key="clm_verification_status")
        sources = st.multiselect(FORM_LABELS["source_ids"], gov.sources()["source_id"].tolist(), key="clm_source_ids")
        reviewer = left.text_input(FORM_LABELS["reviewer"], key="clm_reviewer")
        reviewed_on = right.date_input(FORM_LABELS["reviewed_on"], value=None, key="clm_reviewed_on")
        notes = st.text_input(FORM_LABELS["notes"], key="clm_notes")
        submitted = st.form_submit_button("Add claim")
    if submitted:
        try:
            key = data.write(registers.add_row, actor, "claims", {
                "statement": statement, "claim_type": claim_type, "source_ids": sources, "verification_status": status,
                "reviewer": reviewer, "reviewed_on": reviewed_on, "notes": notes})
        except RegisterError as error:
            show_form_error(error, FORM_LABELS)
            return
        empty_form_on_next_run("add_claim", EMPTY_FORM)
        reload("claims")  # the grid shows the new claim
        toast_then_rerun(f"Claim {code_span(key)} added")


def main() -> None:
    page_frame(filters=False)
    actor = current_actor()
    st.title("Claims register")
    st.caption("Paper Table VII: each claim linked to its sources, with its verification status. Checked against "
               "the minimum evidence rules in force (Evidence rules page).")
    frame = gov.claims()
    evaluation = gov.evaluation()
    stats = st.columns(3)
    stats[0].metric("Claims", f"{len(frame):,}")
    stats[1].metric("Rule violations", f"{int((evaluation['outcome'] == 'violation').sum()):,}")
    stats[2].metric("Sources", f"{len(gov.sources()):,}")
    focus = st.query_params.get("focus")
    if focus:
        hit = evaluation[evaluation["claim_key"] == focus]
        if hit.empty:
            st.warning("The claim named in the link is not in the register (deleted?).")
        else:
            row = hit.iloc[0]
            text = f"Fix claim {row['claim_key']}: {row['outcome']} — {row['reason']}" + (
                f" (required handling: {row['required_handling']})" if row["required_handling"] else "")
            st.info(escape_markdown(text), icon=":material/my_location:")
    source_ids = gov.sources()["source_id"].tolist()
    edit, add, io_tab, deleted = st.tabs(["Edit", "Add one claim", "Import / export", "Deleted"])
    with edit:
        versioned_table_editor(
            "claims", frame, RowVersions(save=partial(data.write, registers.save_claims, actor), key_col="claim_key",
                                         columns=CLAIM_COLUMNS, audit_entity="register_claim"),
            column_config=column_config(source_ids), column_order=CLAIM_COLUMNS + ("row_version", "updated_by"),
            read_only=None if can(Permission.REGISTER_EDIT) else
            f"Read only: your role ({actor.role}) may not edit the register.")
    with add:
        add_form(actor)
    with io_tab:
        gov.import_export("claims", actor, export_claims(data.get_store()))
    with deleted:
        gov.deleted_rows("claims", gov.claims(include_deleted=True), "claim_key", "statement", actor)


run_page(main)
