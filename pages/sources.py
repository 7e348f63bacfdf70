"""Source register (paper section XI): every source with its type, authority, access date and validity.

Web and other mutable sources need an access date. Restricted sources are shown only to the roles
named. Edit in the grid, add one by form, import / export CSV or Excel, restore deleted rows.
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from register import RegisterError
from register.access.permissions import ROLES, Permission
from register.governance import registers
from register.governance.rows import SOURCE_COLUMNS
from register.governance.transfer import export_sources
from register.governance.vocabulary import MUTABLE_SOURCE_TYPES, SOURCE_TYPES, WEAKEST_TIER
from ui.features import governance as gov
from ui.framework import data
from ui.framework.auth import can, current_actor
from ui.framework.components import apply_form_values, empty_form_on_next_run, toast_then_rerun
from ui.framework.errors import show_form_error
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import code_span, escape_markdown
from ui.framework.versioned_table import RowVersions, reload, versioned_table_editor


def column_config() -> dict:
    cc = st.column_config
    return {
        "source_id": cc.TextColumn("Source id", required=True, help="Stable key; claims link to it"),
        "title": cc.TextColumn("Title", required=True, width="large"),
        "ref": cc.TextColumn("URL or reference", width="medium"),
        "source_type": cc.SelectboxColumn("Source type", options=SOURCE_TYPES, required=True),
        "authority_tier": cc.NumberColumn("Authority tier", min_value=1, max_value=WEAKEST_TIER, step=1,
                                          help=f"1 strongest (primary, peer reviewed) to {WEAKEST_TIER} weakest"),
        "publisher": cc.TextColumn("Publisher"),
        "access_date": cc.DateColumn("Access date", format="YYYY-MM-DD",
                                     help="Required for " + ", ".join(MUTABLE_SOURCE_TYPES)),
        "valid_until": cc.DateColumn("Valid until", format="YYYY-MM-DD"),
        "superseded_by": cc.TextColumn("Superseded by"),
        "archive_url": cc.LinkColumn("Archive link"),
        "content_hash": cc.TextColumn("Content hash"),
        "restricted_to": cc.MultiselectColumn("Restricted to roles", options=ROLES),
        "notes": cc.TextColumn("Notes"),
        "row_version": cc.NumberColumn("Version", disabled=True),
        "updated_by": cc.TextColumn("Last edited by", disabled=True),
    }


FORM_LABELS = {"source_id": "Source id", "title": "Title", "ref": "URL or reference", "source_type": "Source type",
               "publisher": "Publisher", "authority_tier": "Authority tier", "access_date": "Access date",
               "valid_until": "Valid until", "restricted_to": "Restricted to roles"}
# what is typed empties after a save; the source type and tier stay as chosen for the next source
EMPTY_FORM = {"src_id": "", "src_title": "", "src_ref": "", "src_publisher": "", "src_access": None,
              "src_valid_until": None, "src_restricted": []}


def add_form(actor) -> None:
    """One source by form. A refused save keeps what was typed and names the field; a blank id becomes a
    readable one from the title (``src-nist-ai-rmf-1-0``)."""
    apply_form_values("add_source")
    with st.form("add_source", enter_to_submit=False):
        left, right = st.columns(2)
        source_id = left.text_input("Source id (blank: made from the title)", key="src_id")
        title = right.text_input(FORM_LABELS["title"], key="src_title")
        ref = left.text_input(FORM_LABELS["ref"], key="src_ref")
        source_type = right.selectbox(FORM_LABELS["source_type"], SOURCE_TYPES, key="src_type")
        publisher = left.text_input(FORM_LABELS["publisher"], key="src_publisher")
        tier = right.number_input("Authority tier (1 strongest)", min_value=1, max_value=WEAKEST_TIER, value=3,
                                  key="src_tier")
        access_date = left.date_input(FORM_LABELS["access_date"], value=None, key="src_access",
                                      help="Required for " + ", ".join(MUTABLE_SOURCE_TYPES))
        valid_until = right.date_input(FORM_LABELS["valid_until"], value=None, key="src_valid_until")
        restricted = st.multiselect("Restricted to roles (blank: everyone)", ROLES, key="src_restricted")
        submitted = st.form_submit_button("Add source")
    if submitted:
        try:
            key = data.write(registers.add_row, actor, "sources", {
                "source_id": source_id, "title": title, "ref": ref, "source_type": source_type, "publisher": publisher,
                "authority_tier": tier, "access_date": access_date, "valid_until": valid_until,
                "restricted_to": restricted})
        except RegisterError as error:
            show_form_error(error, FORM_LABELS)
            return
        empty_form_on_next_run("add_source", EMPTY_FORM)
        reload("sources")  # the grid shows the new source
        toast_then_rerun(f"Source {code_span(key)} added")


def main() -> None:
    page_frame(filters=False)
    actor = current_actor()
    st.title("Source register")
    st.caption("Every source a claim rests on, classified by type (peer-reviewed publication, official framework, "
               "vendor documentation, repository, original proposal, ...). Mutable sources carry access dates.")
    frame = gov.sources(role=actor.role)
    stats = st.columns(3)
    stats[0].metric("Sources", f"{len(frame):,}")
    stats[1].metric("Mutable without access date",
                    f"{int((frame['source_type'].isin(MUTABLE_SOURCE_TYPES) & frame['access_date'].isna()).sum()):,}")
    stats[2].metric("Restricted", f"{int(frame['restricted_to'].map(lambda v: v is not None and len(v) > 0).sum()):,}")
    focus = st.query_params.get("focus")
    if focus:
        st.info(escape_markdown(f"Fix source {focus}: see its row below."), icon=":material/my_location:")
    edit, add, io_tab, deleted = st.tabs(["Edit", "Add one source", "Import / export", "Deleted"])
    with edit:
        versioned_table_editor(
            "sources", frame, RowVersions(save=partial(data.write, registers.save_sources, actor), key_col="source_id",
                                          columns=SOURCE_COLUMNS, audit_entity="source"),
            column_config=column_config(), column_order=SOURCE_COLUMNS + ("row_version", "updated_by"),
            read_only=None if can(Permission.REGISTER_EDIT) else
            f"Read only: your role ({actor.role}) may not edit the register.")
    with add:
        add_form(actor)
    with io_tab:
        gov.import_export("sources", actor, export_sources(data.get_store(), role=actor.role))
    with deleted:
        gov.deleted_rows("sources", gov.sources(role=actor.role, include_deleted=True), "source_id", "title", actor)


run_page(main)
