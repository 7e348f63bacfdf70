"""Scoring profiles: versions, the editor (a new draft), side-by-side diff, impact preview, publishing.

A published version is never edited: editing starts from any version and saves a new draft. A draft
is published with a reason by a second person (four eyes, enforced in ``register.scoring.profiles``), and
publishing rescores every current response under it (old scores kept).
"""

from __future__ import annotations

import json
import math

import pandas as pd
import streamlit as st

from hri_core import DIMENSIONS, LABELS, HRIError, profile_from_dict, recommended_profile
from hri_core.profile import ACTIONS, WEIGHT_SUM_TOLERANCE
from register import RegisterError
from register.access.permissions import Permission
from register.readmodels.version_views import beyond_limit, keep, keep_view
from register.scoring import profiles as reg_profiles
from register.scoring.mitigation import activate_policy, create_policy_draft, list_policies
from register.scoring.profiles import ensure_review_floors_profile, profile_diff
from ui.features import lenses, scoring
from ui.features.figures import dimension_label
from ui.features.figures_scoring import distribution_shift_figure, transition_heatmap, transition_matrix, weights_figure
from ui.framework import data
from ui.framework.auth import can, current_actor
from ui.framework.errors import show_error
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import escape_markdown

DIMS = [d.value for d in DIMENSIONS]


def _normalise(prefix: str) -> None:
    keys = {d: f"{prefix}w_{d}" for d in DIMS}
    values = scoring.normalised({d: st.session_state.get(k, 0.0) for d, k in keys.items()})
    for d, key in keys.items():
        st.session_state[key] = values[d]


FLOOR_EDITOR = {
    "label": st.column_config.SelectboxColumn("Label", options=[x.value for x in LABELS]),
    "condition": st.column_config.SelectboxColumn("Condition", options=["criticality", "repeated_or_unresolved"]),
    "value": st.column_config.NumberColumn("Floor", min_value=0.0, max_value=1.0, format="%.2f"),
    "min_action": st.column_config.SelectboxColumn(
        "Minimum action", options=list(ACTIONS),
        help="When the floor fires, the response's action is at least this one whatever its band (blank: the "
             "band's action)"),
}


def render_impact(preview, band_names, prefix: str) -> None:
    """The impact of a profile against the active one: counts, transitions, distribution, changed rows."""
    cols = st.columns(4)
    cols[0].metric("Responses compared", f"{preview.total:,}")
    cols[1].metric("Band changes", f"{preview.band_changes:,}")
    cols[2].metric("Action changes", f"{preview.action_changes:,}")
    mean_shift = (preview.mean_new or 0.0) - (preview.mean_old or 0.0)
    cols[3].metric("Mean HRI score", f"{preview.mean_new or 0:.1f}", delta=f"{mean_shift:+.2f}",
                   delta_color="inverse")
    lines = preview.transition_lines()
    st.markdown("**Band transitions:** " + (escape_markdown("; ".join(lines)) if lines else "no response changes band"))
    actions = preview.action_lines()
    st.markdown("**Action transitions:** " + (escape_markdown("; ".join(actions)) if actions
                                               else "no response changes action")
                + " (a floor's minimum action can change the action without changing the band)")
    st.caption(f"Compared with {escape_markdown(preview.baseline)}, both scored as of "
               f"{preview.as_of:%Y-%m-%d %H:%M} UTC. {escape_markdown(preview.method_line())}")
    left, right = st.columns(2)
    left.plotly_chart(transition_heatmap(preview.transitions, band_names), key=f"{prefix}_heat")
    right.plotly_chart(distribution_shift_figure(preview.histogram), key=f"{prefix}_dist")
    st.dataframe(transition_matrix(preview.transitions, band_names), key=f"{prefix}_matrix")
    st.markdown(f"**Changed responses** ({preview.score_changes:,} in all; largest score change first)")
    st.dataframe(preview.changed, hide_index=True, key=f"{prefix}_changed", column_config={
        "old_score": st.column_config.NumberColumn("Old score", format="%.2f"),
        "new_score": st.column_config.NumberColumn("New score", format="%.2f"),
        "delta": st.column_config.NumberColumn("Change", format="%+.2f")})


def editor(versions: pd.DataFrame) -> None:
    st.subheader("Edit: a new draft from any version")
    choices = list(versions.profile_version)
    active = int(versions[versions.status == "active"].profile_version.max())
    base_version = st.selectbox("Start from version", choices, index=choices.index(active), key="pe_base",
                                format_func=lambda v: f"v{v} · {scoring.profile_meta(v)['name']} "
                                                      f"({scoring.profile_meta(v)['status']})")
    base = data.version_profile(int(base_version))
    p = f"pe{base_version}_"
    weights_in = {}
    st.markdown("**Weights** (must sum to 1)")
    cols = st.columns(len(DIMS))
    for col, dim in zip(cols, DIMENSIONS, strict=True):
        # the start value goes into Session State, not ``value=``: "Normalise" writes these keys, and a widget
        # with both a default and a Session State value makes Streamlit log a warning with a stack trace
        st.session_state.setdefault(f"{p}w_{dim.value}", float(base.weights[dim]))
        weights_in[dim.value] = col.number_input(dimension_label(dim.value), min_value=0.0, max_value=1.0,
                                                 step=0.01, format="%.4f", key=f"{p}w_{dim.value}")
    total = math.fsum(weights_in.values())
    sum_col, button_col = st.columns([1, 3])
    sum_col.metric("Weight sum", f"{total:.4f}")
    button_col.button("Normalise weights to sum 1", on_click=_normalise, args=(p,), key=f"{p}normalise")
    if abs(total - 1.0) > WEIGHT_SUM_TOLERANCE:
        button_col.caption(f"The weights sum to {total:.4f}, not 1: normalise them or adjust by hand.")

    with st.expander("Contributions and default dimensions per label", expanded=False):
        contributions, default_dims = {}, {}
        for label in LABELS:
            c1, c2 = st.columns([1, 2])
            contributions[label.value] = c1.number_input(
                f"{label.value} contribution", min_value=0.0, max_value=1.0, step=0.05, format="%.2f",
                key=f"{p}c_{label.value}", value=float(base.contributions[label]))
            default_dims[label.value] = c2.multiselect(
                f"{label.value} default dimensions", DIMS, key=f"{p}d_{label.value}",
                default=[d.value for d in base.default_dimensions[label]])
    st.markdown("**Safety floors** (label, criticality condition, value, minimum action: when the floor fires "
                "the action is at least this one, whatever the band)")
    floors = st.data_editor(scoring.floors_frame(base), num_rows="dynamic", key=f"{p}floors", hide_index=True,
                            column_config=FLOOR_EDITOR)
    st.markdown("**Bands** (upper bound inclusive, 0-100) **and actions**")
    bands = st.data_editor(scoring.bands_frame(base), num_rows="dynamic", key=f"{p}bands", hide_index=True,
                           column_config={"action": st.column_config.SelectboxColumn("Action", options=list(ACTIONS)),
                                          "upper": st.column_config.NumberColumn("Upper", format="%.2f")})
    c1, c2, c3 = st.columns(3)
    half_life = c1.number_input("Feedback half-life (days)", min_value=0.0, step=1.0, key=f"{p}half_life",
                                value=float(base.feedback_half_life_days))
    # empty: twice the half-life (section V.A: resolved feedback stops counting as repeated)
    repeat_window = c1.number_input("Repeated-feedback window (days; empty: twice the half-life)", min_value=0.0,
                                    step=1.0, key=f"{p}repeat_window", value=base.feedback_repeat_window_days)
    no_claims = c2.selectbox("Action for responses with no claims", ACTIONS, key=f"{p}no_claims",
                             index=list(ACTIONS).index(base.no_claims_action))
    name = c3.text_input("Draft name", key=f"{p}name", value=base.name, max_chars=80)
    mapping = {"weights": weights_in, "contributions": contributions, "default_dimensions": default_dims,
               "floors": scoring.floors_from_frame(floors), "bands": scoring.bands_from_frame(bands),
               "feedback_half_life_days": half_life, "feedback_repeat_window_days": repeat_window,
               "no_claims_action": no_claims}
    try:
        candidate = profile_from_dict(mapping, base=base)
    except HRIError as error:
        show_error(error)
        candidate = None
    else:
        changes = profile_diff(base, candidate)
        st.success(f"Valid profile: {len(changes)} parameter(s) differ from version {base_version}.",
                   icon=":material/check_circle:")
    preview_col, save_col = st.columns(2)
    if preview_col.button("Preview impact of these edits", key="pe_preview", disabled=candidate is None):
        st.session_state["pe_impact"] = scoring.preview(candidate)
    if not can(Permission.PROFILE_EDIT):
        save_col.caption("Only an admin can save a draft profile.")
    if save_col.button("Save as draft", key="pe_save", type="primary",
                       disabled=candidate is None or not can(Permission.PROFILE_EDIT)):
        try:
            version = data.write(reg_profiles.create_draft, current_actor(), mapping, based_on=int(base_version),
                                 name=name or None)
        except (RegisterError, HRIError) as error:
            show_error(error)
        else:
            st.session_state["pe_saved"] = version
            st.session_state["pp_version"] = version  # the publish tab offers the draft just saved, not an older one
            st.session_state.pop("pe_impact", None)
            st.rerun()
    if st.session_state.get("pe_saved"):
        st.success(f"Saved draft version {st.session_state['pe_saved']}. A second person publishes it under "
                   "Impact & publish.",
                   icon=":material/save:")
    if st.session_state.get("pe_impact") is not None and candidate is not None:
        render_impact(st.session_state["pe_impact"], [b.name for b in candidate.bands], "pei")


def show_records(version: int) -> None:
    """The elicitation records attached to a version (AHP, Delphi or calibration), each in an expander."""
    records = scoring.elicitations_for(version)
    if not records:
        st.caption("No elicitation record is attached to this version.")
    for rec in records:
        body = rec["record"]
        summary = {"ahp": lambda b: f"AHP by {', '.join(e['expert'] for e in b['experts'])}; CR {b['cr']:.3f}",
                   "delphi": lambda b: f"Delphi '{b['title']}' with {', '.join(b['experts'])}; "
                                       f"{len(b['rounds'])} round(s); converged: {b['converged']}",
                   "calibration": lambda b: f"Calibration on {b['outcomes']} outcomes; threshold "
                                            f"{b['threshold']:g}; AUC {b['auc']:.3f}"}[rec["method"]](body)
        with st.expander(escape_markdown(f"Elicitation record #{rec['elicitation_id']} ({rec['method']}, "
                                         f"{body.get('date')}): {summary}")):
            st.json(body, expanded=False)


def show_version(versions: pd.DataFrame) -> None:
    st.subheader("A version and its elicitation record")
    choices = list(versions.profile_version)
    version = st.selectbox("Version", choices, index=len(choices) - 1, key="pv_version")
    profile, meta = data.version_profile(int(version)), scoring.profile_meta(int(version))
    text = f"v{version} · {meta['name']} · {meta['status']} · created by {meta['created_by']}" + (
        f" · published by {meta['published_by']}: {meta['reason']}" if meta["published_by"] else "")
    st.caption(escape_markdown(text))
    st.dataframe(pd.DataFrame({"dimension": [dimension_label(d) for d in DIMS],
                               "weight": [profile.weights[d] for d in DIMENSIONS]}), hide_index=True,
                 key="pv_weights")
    st.markdown("**Safety floors** and the minimum action each one requires when it fires")
    st.dataframe(scoring.floors_frame(profile), hide_index=True, key="pv_floors", column_config=FLOOR_EDITOR)
    show_records(int(version))
    read_model_section(int(version))


def read_model_section(version: int) -> None:
    """How the console reads the version's scores, and (for an admin) keeping a view of one read by a join."""
    st.markdown("**How the console reads this version**")
    if st.session_state.get("kv_done"):
        st.success(st.session_state.pop("kv_done"), icon=":material/bolt:")
    options = data.filter_options()  # cached: the Profiles page draws every tab on every rerun
    state = options["version_reads"].get(version)
    if state is None:
        st.caption(f"v{version}: no answer is scored under it.")
        return
    if state == "current":
        st.caption(f"v{version}: from the current scores (every current answer is scored under it).")
        return
    if state == "kept":
        st.caption(f"v{version}: kept as a read model of its own -- the profile-version filter reads it as fast as "
                   "the current scores.")
        return
    st.caption(f"v{version}: by joining its score rows -- half a minute a page at ten million answers. Keeping a "
               "view of it builds its own read model once (about a minute and a half, and 0.55 GB, at ten million "
               "answers); then it reads as fast as the current scores.")
    limit = keep()
    goes = beyond_limit([*options["kept_versions"], version], limit) if limit else []
    note = (f"At most {limit} views are kept (HRI_KEEP_VERSION_VIEWS): keeping this one drops the view of "
            f"{', '.join(f'v{v}' for v in goes)}." if goes else None)
    if not can(Permission.RESCORE):
        st.caption("Only an admin can keep a view.")
        return
    if st.button(f"Keep a view of v{version}", key="kv_keep", help=note, disabled=not limit):
        bar = st.progress(0.0, text="Building the view...")

        def progress(done, total, message):
            bar.progress(done / total, text=message)

        try:
            dropped = data.write(keep_view, current_actor(), version, progress=progress)
        except RegisterError as error:
            bar.empty()
            show_error(error)
        else:
            st.session_state["kv_done"] = (f"The view of v{version} is kept" + (
                f"; the view of {', '.join(f'v{v}' for v in dropped)} went." if dropped else "."))
            st.rerun()


def diff_section(versions: pd.DataFrame) -> None:
    st.subheader("Compare two versions side by side")
    choices = list(versions.profile_version)
    c1, c2 = st.columns(2)
    a = c1.selectbox("Version A", choices, index=0, key="pd_a")
    b = c2.selectbox("Version B", choices, index=len(choices) - 1, key="pd_b")
    pa, pb = data.version_profile(int(a)), data.version_profile(int(b))
    status = dict(zip(versions.profile_version, versions.status, strict=True))
    for version in dict.fromkeys((int(a), int(b))):  # which use cases a draft would score (a lens per use case)
        if status.get(version) in ("draft", "bound"):
            st.caption(lenses.binding_note(version))
    rows = profile_diff(pa, pb)
    if not rows:
        st.info(f"Versions {a} and {b} have the same parameters.")
        return
    frame = pd.DataFrame(rows).astype(str).rename(columns={"a": f"v{a}", "b": f"v{b}"})
    st.dataframe(frame, hide_index=True, key="pd_table")
    st.plotly_chart(weights_figure(pb.weights, pa.weights, names=(f"v{b}", f"v{a}")), key="pd_weights")


def review_floors_offer() -> None:
    """Table IV's review floors, offered until a version of them is stored: preview, then save as a draft."""
    if scoring.review_floors_version() is not None:
        return
    st.info("Table IV gives two floors a review rationale (\"Confirmed contradiction requiring review\": "
            "CONTRADICTED with criticality 2; repeated or unresolved validated feedback), yet their value 0.50 "
            "lands in Medium, caution. The recommended version gives both the minimum action review.",
            icon=":material/rule:")
    left, right = st.columns(2)
    if left.button("Preview the review floors", key="rf_preview"):
        st.session_state["rf_impact"] = scoring.preview(recommended_profile())
    if right.button("Save them as a draft", key="rf_save", disabled=not can(Permission.PROFILE_EDIT)):
        try:
            version = data.write(ensure_review_floors_profile, current_actor())
        except (RegisterError, HRIError) as error:
            show_error(error)
        else:
            st.session_state.pop("rf_impact", None)
            st.session_state["pp_version"] = version
            st.session_state["pp_done"] = f"Saved Table IV's review floors as draft version {version}."
            st.rerun()
    if st.session_state.get("rf_impact") is not None:
        preview = st.session_state["rf_impact"]
        st.metric("Answers moving from caution to review", f"{preview.action_moves('caution', 'review'):,}")
        render_impact(preview, [b.name for b in recommended_profile().bands], "rfi")


def endorse_offer(version: int, state: dict, actor) -> bool:
    """A draft the system created counts as nobody's: one admin endorses it, a different admin publishes it.
    Shows where it stands (and the endorse form until it is endorsed); True once it may be published."""
    if state["endorsed_by"] is not None:
        st.caption(escape_markdown(f"Made by the system; endorsed by {state['endorsed_by']}: {state['reason']}"))
        if state["endorsed_by"] == actor.name:
            st.warning("You endorsed this draft: a different admin must publish it (four eyes).",
                       icon=":material/group:")
        return True
    st.warning("The system made this draft, so it is nobody's: one admin endorses it, then a different admin "
               "publishes it (four eyes).", icon=":material/group:")
    with st.form("pp_endorse_form", enter_to_submit=False):
        why = st.text_area("Why you endorse it (required)", key="pp_endorse_reason", max_chars=2000)
        go = st.form_submit_button("Endorse", disabled=not can(Permission.PROFILE_PUBLISH))
    if go:
        try:
            data.write(reg_profiles.endorse_draft, actor, version, why)
        except (RegisterError, HRIError) as error:
            show_error(error)
        else:
            st.session_state["pp_done"] = f"Endorsed draft v{version}: a different admin publishes it."
            st.rerun()
    return False


def publish_section(versions: pd.DataFrame) -> None:
    st.subheader("Preview and publish a draft")
    review_floors_offer()
    if st.session_state.get("pp_done"):
        st.success(st.session_state["pp_done"], icon=":material/publish:")
    drafts = list(versions[versions.status == "draft"].profile_version)
    if not drafts:
        st.info("No draft to publish: save one with the editor, or from the elicitation and calibration pages.")
        return
    version = int(st.selectbox("Draft", drafts, index=len(drafts) - 1, key="pp_version"))
    meta = scoring.profile_meta(version)
    draft = data.version_profile(version)
    actor = current_actor()
    st.caption(escape_markdown(f"Draft v{version} ({meta['name']}) was created by {meta['created_by']}."))
    st.markdown(lenses.binding_note(version))
    show_records(version)
    system_made = scoring.system_draft_state(version)
    if system_made is not None:
        if not endorse_offer(version, system_made, actor):
            return
    elif meta["created_by"] == actor.name:
        st.warning("You created this draft: a second person must publish it (four eyes).", icon=":material/group:")
    if st.button("Preview impact", key="pp_preview"):
        st.session_state["pp_impact"] = (version, scoring.preview(draft))
    stored = st.session_state.get("pp_impact")
    if stored and stored[0] == version:
        render_impact(stored[1], [b.name for b in draft.bands], "ppi")
    with st.form("pp_form", enter_to_submit=False):
        reason = st.text_area("Reason for publishing (required)", key="pp_reason", max_chars=2000)
        go = st.form_submit_button("Publish and rescore", type="primary",
                                   disabled=not can(Permission.PROFILE_PUBLISH))
    if go:
        bar = st.progress(0.0, text="Starting...")

        def progress(step, total, message):
            bar.progress(step / total, text=message)

        try:
            # a refused attempt writes its audit event too: data.write clears the caches either way
            summary = data.write(reg_profiles.publish, actor, version, reason, progress=progress)
        except (RegisterError, HRIError) as error:
            bar.empty()
            show_error(error)
        else:
            st.session_state["pp_done"] = (f"Published v{version} and rescored {summary.responses_scored:,} "
                                           f"responses (run {summary.run_id}); the old scores are kept.")
            st.session_state.pop("pp_impact", None)
            st.rerun()


def incomplete_publish_notice() -> None:
    """A publish stopped between its two steps (the version made active, its rescore never ran): say so above
    everything, and let an admin finish it (the rescore, ``register.scoring.profiles.resume_publish``)."""
    if st.session_state.get("pp_resumed"):
        st.success(st.session_state.pop("pp_resumed"), icon=":material/publish:")
    pending = scoring.incomplete_publish()
    if pending is None:
        return
    st.warning(escape_markdown(f"{pending.message()}. Version {pending.version} was made active "
                               f"{pending.published_at:%Y-%m-%d %H:%M} UTC by {pending.published_by}, and the "
                               "rescore under it never ran (the process stopped between the two steps). Finish it "
                               "here, or with: python -m register rescore"), icon=":material/warning:")
    if not st.button(f"Finish publishing version {pending.version} (rescore)", key="pp_resume", type="primary",
                     disabled=not can(Permission.RESCORE)):
        return
    bar = st.progress(0.0, text="Starting...")

    def progress(step, total, message):
        bar.progress(step / total, text=message)

    try:
        summary = data.write(reg_profiles.resume_publish, current_actor(), progress=progress)
    except (RegisterError, HRIError) as error:
        bar.empty()
        show_error(error)
    else:
        st.session_state["pp_resumed"] = (f"Finished publishing v{pending.version}: rescored "
                                          f"{summary.responses_scored:,} responses (run {summary.run_id}).")
        st.rerun()


def mitigation_section() -> None:
    """CLAIM's Mitigation step: the policy versions, the parameters of one, a new draft, and publishing."""
    st.subheader("Mitigation policy (CLAIM's Mitigation step)")
    st.caption("Turns each scored answer's claim verdicts, stakes and query ambiguity into answer, revise, ask, "
               "abstain or escalate (seed 004's decision table is version 1). Stored with every score; the next "
               "score run decides under the active version.")
    versions = pd.DataFrame(list_policies(data.get_store()))  # every stored version, read fresh
    st.dataframe(versions, hide_index=True, key="mp_table",
                 column_order=("policy_version", "name", "status", "based_on", "created_by", "created_at",
                               "published_by", "published_at", "reason"))
    choices = list(versions.policy_version)
    active = int(versions[versions.status == "active"].policy_version.max())
    version = int(st.selectbox("Version", choices, index=choices.index(active), key="mp_version"))
    policy = scoring.mitigation_policy(version)
    st.dataframe(scoring.readings_frame(policy), hide_index=True, key="mp_readings")
    st.json({k: v for k, v in policy.items() if k != "readings"}, expanded=False)
    if not can(Permission.PROFILE_EDIT):
        return
    with st.form("mp_draft", enter_to_submit=False):
        text = st.text_area("New draft from this version: the parameters to change, as JSON",
                            placeholder='{"non_core_unsupported_action": "revise"}', key="mp_overrides",
                            max_chars=20_000)
        create = st.form_submit_button("Save draft")
    if create:
        try:
            overrides = json.loads(text or "{}")
        except json.JSONDecodeError as error:
            overrides = None
            st.error(f"The parameters are not JSON (line {error.lineno}, column {error.colno}: {error.msg}); "
                     "nothing was saved.")
        if overrides is not None and not isinstance(overrides, dict):
            overrides = None
            st.error('The parameters must be a JSON object, e.g. {"non_core_unsupported_action": "revise"}; '
                     "nothing was saved.")
        if overrides is not None:
            try:
                made = data.write(create_policy_draft, current_actor(), overrides, based_on=version)
            except (RegisterError, HRIError) as error:
                show_error(error)
            else:
                st.success(f"Saved draft mitigation policy v{made}.")
    drafts = list(versions[versions.status == "draft"].policy_version)
    if drafts and can(Permission.PROFILE_PUBLISH):
        with st.form("mp_publish", enter_to_submit=False):
            draft = st.selectbox("Draft to publish", drafts, key="mp_publish_version")
            reason = st.text_area("Reason for publishing (required)", key="mp_reason", max_chars=2000)
            go = st.form_submit_button("Publish", type="primary")
        if go:
            try:
                data.write(activate_policy, current_actor(), int(draft), reason)
            except (RegisterError, HRIError) as error:
                show_error(error)
            else:
                st.success(f"Published mitigation policy v{draft}: the next score run decides under it.")


def main() -> None:
    page_frame(filters=False)
    st.title("Scoring profiles")
    incomplete_publish_notice()
    versions = scoring.profiles_table()
    st.dataframe(versions, hide_index=True, key="pv_table",
                 column_order=("profile_version", "name", "status", "created_by", "created_at", "published_by",
                               "published_at", "reason"))
    tab_edit, tab_view, tab_diff, tab_publish, tab_mitigation = st.tabs(
        ["Editor", "Version", "Compare", "Impact & publish", "Mitigation policy"])
    with tab_edit:
        editor(versions)
    with tab_view:
        show_version(versions)
    with tab_diff:
        diff_section(versions)
    with tab_publish:
        publish_section(versions)
    with tab_mitigation:
        mitigation_section()
    lenses.lens_section(current_actor(), "profiles-lens")


run_page(main)
