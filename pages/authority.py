"""Authority: are the answers' sources allowed, current and authoritative? (CLAIM's Authority step)

Lists every failed or undecided check of the current answers' sourced claims with the label proposed for
a SUPPORTED claim (never applied: a reviewer decides), and edits the two versioned tables the checks
read -- the use cases with the roles of the people who ask their questions, and the authority tier (or
source types) each claim category requires. Saving writes a new version; the newest is in force.
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from hri_core.vocabulary import CATEGORIES
from register.access.permissions import ROLES, Permission
from register.governance.vocabulary import SOURCE_TYPES
from register.scoring import authority_rules
from ui.features import authority as au
from ui.framework import data
from ui.framework.auth import can, current_actor
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import escape_markdown
from ui.framework.versioned_table import TableVersions, pending_versions_panel, versioned_table_editor

UNCATEGORISED = au.UNCATEGORISED


def findings_section() -> None:
    found = au.findings()
    proposed = found[found["proposed_label"].notna()] if not found.empty else found
    stats = st.columns(3)
    stats[0].metric("Findings", f"{len(found):,}", help="Failed or undecided checks of sourced answer claims")
    stats[1].metric("With a proposed label", f"{len(proposed):,}", help="On SUPPORTED claims; never applied")
    stats[2].metric("Answers", f"{found['response_id'].nunique() if not found.empty else 0:,}")
    if found.empty:
        st.success("Every sourced claim of the current answers rests on an allowed, current and authoritative "
                   "source.", icon=":material/verified:")
        return
    st.dataframe(found[["response_id", "claim_id", "claim", "source_id", "check", "problem", "reason",
                        "proposed_label"]], hide_index=True,
                 column_config={"response_id": "Response", "claim_id": "Claim", "source_id": "Source",
                                "proposed_label": "Proposed label"})
    st.caption("Proposed labels are never applied: answers whose SUPPORTED claim rests on a forbidden, stale or "
               "insufficiently authoritative source wait in the review queue. Unknown sources and undecided "
               "checks are gaps of the register: record the source, its tier or the use case's requesters.")


def use_case_editor(actor, editable: bool) -> None:
    st.subheader("Use cases and their requesters")
    st.caption("“Allowed” compares a source's *restricted to* roles with the roles of the people who ask the use "
               "case's questions. A use case not listed has unknown requesters: its restricted sources are "
               "undecided.")
    current = au.use_cases().reset_index(drop=True)
    current["requester_roles"] = current["requester_roles"].map(lambda v: list(v) if v is not None else [])
    known = [u for u in data.filter_options()["use_cases"] if u]  # the use cases the answers name
    missing = [u for u in known if u not in set(current["use_case"])]
    if missing:
        st.caption("Use cases of the answers not listed yet: " + ", ".join(escape_markdown(u) for u in missing))
    pending_versions_panel("use_cases", "Use cases", au.pending_use_cases(),
                           partial(data.write, authority_rules.approve_use_cases, actor),
                           actor_name=actor.name, may_approve=editable)
    if not editable:
        st.dataframe(current, hide_index=True)
        return
    cc = st.column_config
    versioned_table_editor("use_cases", current, TableVersions(
        save=partial(data.write, authority_rules.save_use_cases, actor),
        reason="Why change the use cases? (required; recorded with the new version)",
        button="Save use cases as a new version",
        saved=lambda version: f"Use cases version {version} saved: it takes effect when a second admin approves it"),
        column_config={"use_case": cc.TextColumn("Use case", required=True),
                       "requester_roles": cc.MultiselectColumn("Requester roles", options=ROLES),
                       "note": cc.TextColumn("Note", width="large")})


def rules_editor(actor, editable: bool) -> None:
    rules = au.rules()
    st.subheader(f"Authority rules (version {rules.version}, in force)")
    st.caption("“Authoritative”: the source's authority tier (1 strongest) must be at most the category's "
               "largest tier, and its type one of the listed types when types are given. "
               f"“{UNCATEGORISED}” applies to claims without a category.")
    rows = au.rule_rows(rules)
    pending_versions_panel("authority_rules", "Authority rules", au.pending_rules(),
                           partial(data.write, authority_rules.approve_authority_rules, actor),
                           actor_name=actor.name, may_approve=editable)
    if not editable:
        st.dataframe(rows, hide_index=True)
        st.caption(f"valid_until read as {'inclusive' if rules.valid_until_inclusive else 'exclusive'} (UTC)")
        return

    def save(edited: list[dict], reason: str, *, inclusive: bool) -> int:
        return data.write(authority_rules.save_authority_rules, actor, au.rules_json(edited, inclusive, rules.name),
                          reason)

    def inclusive(generation: int) -> dict:
        return {"inclusive": st.toggle("A source is current through its valid-until date (inclusive, UTC)",
                                       value=rules.valid_until_inclusive, key=f"authority_inclusive_{generation}")}

    cc = st.column_config
    versioned_table_editor("authority_rules", rows, TableVersions(
        save=save, reason="Why change the authority rules? (required; recorded with the new version)",
        button="Save authority rules as a new version",
        saved=lambda version: f"Authority rules version {version} saved: they take effect when a second admin "
                              "approves them", options=inclusive),
        column_config={"category": cc.SelectboxColumn("Claim category", options=[*CATEGORIES, UNCATEGORISED],
                                                      required=True),
                       "max_tier": cc.NumberColumn("Largest tier", min_value=1, step=1),
                       "source_types": cc.MultiselectColumn("Acceptable source types", options=SOURCE_TYPES),
                       "note": cc.TextColumn("Why", width="large")})


def main() -> None:
    page_frame(filters=False)
    actor = current_actor()
    st.title("Source authority")
    st.caption("CLAIM's Authority step: is each answer claim's source allowed, current and authoritative — "
               "checked against the source register as it is now.")
    findings_section()
    editable = can(Permission.RULES_EDIT)
    use_case_editor(actor, editable)
    rules_editor(actor, editable)
    if not editable:
        st.caption(f"Read only: changing these tables needs the admin role (you are {escape_markdown(actor.role)}).")
    with st.expander("Version history"):
        st.caption("Use cases")
        st.dataframe(au.use_case_versions(), hide_index=True)
        st.caption("Authority rules (version 1 is the default until a first save)")
        st.dataframe(au.rule_versions(), hide_index=True)


run_page(main)
