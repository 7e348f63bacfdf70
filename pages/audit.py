"""Audit trail: who did what, when, to which record; an answer's whole life by its id; whether the hash chain
verifies; approvals whose two accounts were created by the same person; admins named while their namer was the
sole admin; CSV export.

Filters run in SQL with bound parameters (``register.db.audit.search_events``; an answer's life,
``register.console.answer_life.answer_events``). Reviewers and admins
(``Permission.AUDIT_READ``) may open it.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pandas as pd
import streamlit as st

from register.access import second_admin
from register.access.permissions import Permission
from register.db.audit import LISTED_EVENTS, EventFilter
from ui.features import audit_trail
from ui.framework.auth import can, current_actor
from ui.framework.exports import written_bytes
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import escape_markdown

LIMIT = LISTED_EVENTS


def chain_status() -> None:
    report = audit_trail.chain()
    if report.ok:
        st.success(f"The audit chain verifies: {report.events:,} events, each linked to the previous one's hash.",
                   icon=":material/verified:")
    else:
        st.error(f"The audit chain does NOT verify: first broken event {report.first_bad_seq} — "
                 f"{escape_markdown(report.reason or '')}", icon=":material/gpp_bad:")
    head = audit_trail.head()
    newest = f", the newest of event {report.newest.seq:,}" if report.newest is not None else ""
    st.caption(f"Head: event {head.seq:,}, hash {head.hash[:16]}... The check holds the trail to the {report.kept:,} "
               f"anchor(s) kept outside the database{newest} (the head after each day's first write and at every "
               "sign-off, publish and key change); events deleted after the newest anchor are caught only against "
               "an anchor of your own (`python -m register audit anchor --out FILE`, later `audit verify --anchor "
               "FILE`).")


def linked_approvals() -> None:
    """Approvals whose two accounts were created by the same person (four eyes by name only)."""
    frame = audit_trail.linked_approvals()
    if frame.empty:
        return
    st.warning(f"{len(frame):,} approval(s) were given by an account linked to the author's: one created "
               "the other, or the same person created both. Four eyes compares account names; check that "
               "these were two people.", icon=":material/group_off:")
    st.dataframe(frame, hide_index=True, key="audit_linked", column_config={
        "approved_at": st.column_config.DatetimeColumn("Approved (UTC)", format="YYYY-MM-DD HH:mm")})


def sole_admin_namings() -> None:
    """Admins named by the sole admin, with no second admin's approval (``register.access.second_admin``)."""
    named = audit_trail.sole_admin_namings()
    if not named:
        return
    st.warning(f"{len(named):,} admin(s) were named while their namer was the sole admin: no second admin approved "
               f"it (audit event {second_admin.EVENT}). Check that the account is another person's.",
               icon=":material/flag:")
    st.dataframe(pd.DataFrame(named), hide_index=True, key="audit_sole_admin", column_config={
        "named_at": st.column_config.DatetimeColumn("Named (UTC)", format="YYYY-MM-DD HH:mm")})


def read_filter(options: dict) -> EventFilter:
    cols = st.columns([2, 3, 2, 3])
    actor = cols[0].text_input("Actor contains", key="audit_actor").strip() or None
    actions = cols[1].multiselect("Action", options["actions"], key="audit_actions", placeholder="All actions")
    entity_type = cols[2].selectbox("Entity type", [None] + options["entity_types"], key="audit_entity_type",
                                    format_func=lambda v: "All types" if v is None else v)
    entity_id = cols[3].text_input("Record id (exact)", key="audit_entity_id",
                                   help="The id of the record an event concerns: a response id (every event of that "
                                        "answer: import, revisions, labels, verification, feedback, scoring "
                                        "runs that changed it, review decisions), an account name, a register "
                                        "key, a run or version number."
                                   ).strip() or None
    # a row of its own: in a fifth column the range was too narrow and cut off its end date
    days = st.columns([1, 2])[0].date_input("Between (UTC days, inclusive)", value=(), key="audit_days",
                                             format="YYYY-MM-DD")
    days = tuple(days) if isinstance(days, (tuple, list)) else ((days,) if days else ())
    since = datetime.combine(days[0], time.min, tzinfo=UTC) if days else None
    until = datetime.combine(days[-1], time.min, tzinfo=UTC) + timedelta(days=1) if days else None
    return EventFilter(actor=actor, actions=tuple(actions), entity_type=entity_type, entity_id=entity_id,
                       since=since, until=until)


def main() -> None:
    page_frame(filters=False)
    st.title("Audit trail")
    if not can(Permission.AUDIT_READ):
        st.info(f"Your role ({current_actor().role}) cannot open the audit trail: it needs the reviewer or admin "
                "role.", icon=":material/lock:")
        return
    chain_status()
    linked_approvals()
    sole_admin_namings()
    f = read_filter(audit_trail.options())
    answer = f.entity_id if f.entity_id and audit_trail.names_answer(f.entity_id) else None
    if answer is not None and st.toggle("Only the events filed under this exact id", key="audit_exact_id",
                                        help="Off: the answer's whole life. On: only the events whose record id is "
                                             "this text (its review decisions), as for any other record."):
        answer = None
    if answer is None:
        frame, total = audit_trail.events(f, limit=LIMIT, offset=0)
        st.caption(f"{total:,} matching events" + (f" · newest {LIMIT:,} shown; the export holds all of them"
                                                   if total > LIMIT else ""))
        writer = audit_trail.csv_writer(f)
    else:
        frame, total = audit_trail.answer_events(answer, f, limit=LIMIT, offset=0)
        st.caption(f"{total:,} matching events in the life of answer {escape_markdown(answer)}, oldest first, with "
                   "what each did to it" + (f" · first {LIMIT:,} shown; the export holds all of them"
                                            if total > LIMIT else ""))
        writer = audit_trail.answer_csv_writer(answer, f)
    st.dataframe(frame, hide_index=True, key="audit_table", column_config={
        "occurred_at": st.column_config.DatetimeColumn("When (UTC)", format="YYYY-MM-DD HH:mm:ss"),
        "hash": st.column_config.TextColumn("Hash", width="small"),
        "what_it_did": st.column_config.TextColumn("What it did to the answer", width="large")})
    # written by DuckDB when the button is clicked: a rerun of the page builds no export
    st.download_button("Download CSV", lambda: written_bytes(writer), "hri-audit.csv", "text/csv", key="audit_csv",
                       on_click="ignore")


run_page(main)
