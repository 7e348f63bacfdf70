"""The lens per use case on the Scoring profiles and Use cases pages: what is in force, what waits, and a form to
bind a profile and set the CLAIM steps (``register.scoring.lens_versions``; four eyes: a second person approves)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from hri_core.lens import CLAIM_STEPS, REQUIRED_STEPS, steps_text
from register import RegisterError
from register.access.permissions import Permission
from register.scoring import lens_versions, lenses
from ui.framework import data
from ui.framework.auth import can
from ui.framework.components import toast_then_rerun
from ui.framework.errors import show_error
from ui.framework.text import code_span, escape_markdown

rows_in_force = data.cached(lenses.lens_rows)
history = data.cached(lens_versions.lens_history)
binding_of = data.cached(lenses.draft_binding)
bound_now = data.cached(lenses.bound_use_cases)
profile_versions = data.cached(lambda store: store.dicts(
    "SELECT profile_version, name, status FROM scoring_profiles ORDER BY profile_version"))


def bindings_frame() -> pd.DataFrame:
    """The lens in force per use case, in words (use case, profile, policy, steps)."""
    return pd.DataFrame([{"use case": r["use_case"],
                          "profile": "default" if r["profile_version"] is None else f"v{r['profile_version']}",
                          "mitigation policy": "active" if r["policy_version"] is None else f"v{r['policy_version']}",
                          "CLAIM steps": steps_text(r["steps"], r["human_review"]), "note": r["note"] or ""}
                         for r in rows_in_force()], columns=["use case", "profile", "mitigation policy",
                                                             "CLAIM steps", "note"])


def lens_section(actor, key: str) -> None:
    """Bindings in force, versions waiting (approve as a second person) and the form to change one use case."""
    st.subheader("Profiles and CLAIM lenses per use case")
    st.caption("A use case without a row is scored under the active profile and policy with every CLAIM step. "
               "A change waits for a second person; approving a version that binds a draft publishes it for "
               "those use cases.")
    st.dataframe(bindings_frame(), hide_index=True, width="stretch")
    waiting = [v for v in history() if v["pending"]]
    for version in waiting:
        st.caption(f"Lens version {version['version']} by {code_span(version['created_by'])} waits for a second "
                   f"person: {escape_markdown(version['reason'])}")
        if can(Permission.PROFILE_PUBLISH):
            with st.form(f"{key}-approve-{version['version']}"):
                reason = st.text_input("Reason", key=f"{key}-approve-reason-{version['version']}")
                if st.form_submit_button(f"Approve lens version {version['version']}"):
                    try:
                        data.write(lens_versions.approve_lenses, actor, int(version["version"]), reason)
                    except RegisterError as error:
                        show_error(error)
                    else:
                        toast_then_rerun(f"Lens version {version['version']} in force")
    if not can(Permission.PROFILE_EDIT):
        return
    with st.form(f"{key}-bind"):
        use_case = st.text_input("Use case", key=f"{key}-use-case")
        choices = ["default"] + [f"v{p['profile_version']} {p['name']} ({p['status']})" for p in profile_versions()]
        profile = st.selectbox("Profile", choices, key=f"{key}-profile")
        steps = st.multiselect("CLAIM steps", list(CLAIM_STEPS), default=list(CLAIM_STEPS), key=f"{key}-steps",
                               help=f"{', '.join(REQUIRED_STEPS)} always run: the score is theirs")
        review = st.checkbox("Human review wired into Mitigation", key=f"{key}-review")
        reason = st.text_input("Reason", key=f"{key}-reason")
        if st.form_submit_button("Save lens (waits for a second person)"):
            version = None if profile == "default" else int(profile.split()[0][1:])
            try:
                saved = data.write(lens_versions.save_lenses, actor, _with(use_case, version, steps, review), reason)
            except RegisterError as error:
                show_error(error)
            else:
                toast_then_rerun(f"Lens version {saved} saved")


def _with(use_case: str, profile_version: int | None, steps: list[str], review: bool) -> list[dict]:
    rows = [dict(r) for r in rows_in_force() if r["use_case"] != use_case.strip()]
    rows.append({"use_case": use_case, "profile_version": profile_version, "steps": steps, "human_review": review})
    return rows


def binding_note(version: int) -> str:
    """Which use cases profile ``version`` is, or would be, bound to (by the newest lens version naming it), or that
    published it would be the default for the use cases no lens binds: markdown, names escaped."""
    binding = binding_of(int(version))
    if binding is None:
        others = bound_now()
        held = ("" if not others else " (bound to their own now: " + ", ".join(
            f"{escape_markdown(case)} \u2192 v{bound}" for case, bound in sorted(others.items())) + ")")
        return (f"No lens binds v{version}: published, it becomes the default profile for every use case no lens "
                f"binds to a profile of its own{held}.")
    lens_version, cases, pending = binding
    named = ", ".join(escape_markdown(case) for case in cases) or "none"
    if pending:
        return (f"v{version} would be bound to use cases **{named}** by lens version {lens_version}, which waits for "
                f"a second person: approving it publishes v{version} for those use cases only, and the impact "
                "preview covers their answers.")
    return f"v{version} is bound to use cases **{named}** by lens version {lens_version}."
