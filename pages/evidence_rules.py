"""Minimum evidence rules (paper Table VIII) as versioned data, and the claims that violate them.

Each claim type names the source types that are acceptable evidence and the handling required when
that evidence is missing. Saving writes a new rule version (old ones are kept), pending until a second admin
approves it (four eyes); every register claim is evaluated against the version in force.
"""

from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from register.access.permissions import Permission
from register.governance import evidence
from register.governance.vocabulary import CLAIM_TYPES, HANDLINGS, SOURCE_TYPES, STATUSES
from ui.features import governance as gov
from ui.framework import data
from ui.framework.auth import can, current_actor
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import escape_markdown
from ui.framework.versioned_table import TableVersions, pending_versions_panel, versioned_table_editor


def violations(evaluation: pd.DataFrame) -> None:
    bad = evaluation[evaluation["outcome"] == "violation"]
    st.subheader(f"Violations ({len(bad)})")
    if bad.empty:
        st.success("Every register claim complies with the rules in force.", icon=":material/verified:")
    else:
        columns = ["claim_key", "statement", "claim_type", "verification_status", "reason", "required_handling"]
        st.dataframe(bad[columns],
                     hide_index=True, column_config={"claim_key": "Claim", "required_handling": "Required handling"})
        for key in bad["claim_key"]:
            st.page_link("pages/claims_register.py", label=escape_markdown(f"Fix {key}"), icon=":material/edit:",
                         query_params={"focus": key})
    with st.expander(f"Compliant claims ({int((evaluation['outcome'] == 'compliant').sum())})"):
        st.dataframe(evaluation[evaluation["outcome"] == "compliant"][["claim_key", "statement", "reason"]],
                     hide_index=True)


def editor(actor, version: int | None) -> None:
    current = gov.rules(version).drop(columns="rule_version").reset_index(drop=True)
    for col in ("acceptable_source_types", "handling", "refused_statuses"):
        current[col] = current[col].map(lambda v: list(v) if v is not None else [])
    # None (version 1's rules) reads the first mapping of handlings to statuses: shown as such, kept on save
    current["handled_statuses"] = current["handled_statuses"].map(lambda v: list(v) if v is not None else None)
    for col in ("needs_access_date", "preprint_only_without_peer_review"):
        current[col] = current[col].map(lambda v: v is True or v == True)  # noqa: E712 - numpy bools
    cc = st.column_config
    versioned_table_editor("rules", current, TableVersions(
        save=partial(data.write, evidence.save_rules, actor),
        reason="Why change the rules? (required; recorded with the new version)",
        button="Save as new rule version",
        saved=lambda version: f"Rule version {version} saved: it takes effect when a second admin approves it"),
        column_config={
            "claim_type": cc.SelectboxColumn("Claim type", options=CLAIM_TYPES, required=True),
            "acceptable_source_types": cc.MultiselectColumn("Acceptable source types", options=SOURCE_TYPES),
            "handling": cc.MultiselectColumn("Required handling if missing", options=HANDLINGS),
            "guidance": cc.TextColumn("Guidance (the rule's wording)", width="large"),
            "handled_statuses": cc.MultiselectColumn(
                "Statuses showing the handling", options=STATUSES,
                help="A claim without acceptable evidence complies when marked with one of these"),
            "needs_access_date": cc.CheckboxColumn("Source needs access date"),
            "preprint_only_without_peer_review": cc.CheckboxColumn(
                "Preprint only without peer review",
                help="A preprint counts only for a claim that says no peer-reviewed source exists"),
            "refused_statuses": cc.MultiselectColumn(
                "Statuses refused", options=STATUSES,
                help="e.g. the paper's own contribution may not be marked verified")})


def evidence_in_force(versions: pd.DataFrame) -> int:
    """The newest version not waiting for a second person (the first is always in force)."""
    approved = versions[~versions["pending"].astype(bool)]
    return int((approved if not approved.empty else versions)["rule_version"].iloc[0])


def main() -> None:
    page_frame(filters=False)
    actor = current_actor()
    st.title("Minimum evidence rules")
    versions = gov.rule_versions()
    if versions.empty:
        st.info("No evidence rules yet: load the demo set (`python -m register demo`) to start from the paper's "
                "Table VIII.")
        return
    current = evidence_in_force(versions)
    evaluation = gov.evaluation()
    stats = st.columns(3)
    stats[0].metric("Rule version in force", current)
    stats[1].metric("Claims evaluated", f"{len(evaluation):,}")
    stats[2].metric("Violations", f"{int((evaluation['outcome'] == 'violation').sum()):,}")
    violations(evaluation)
    pending_versions_panel("rules", "Rule", gov.pending_rule_versions(),
                           partial(data.write, evidence.approve_rules, actor),
                           actor_name=actor.name, may_approve=can(Permission.RULES_EDIT))
    st.subheader(f"Rules (version {current}, in force)")
    if can(Permission.RULES_EDIT):
        editor(actor, current)
    else:
        st.dataframe(gov.rules(current), hide_index=True)
        st.caption(f"Read only: changing the rules needs the admin role (you are {actor.role}).")
    with st.expander(f"Version history ({len(versions)})"):
        st.dataframe(versions, hide_index=True)
        older = st.selectbox("Show version", versions["rule_version"].tolist(), key="rules_show_version")
        st.dataframe(gov.rules(int(older)), hide_index=True)


run_page(main)
