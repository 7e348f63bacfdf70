"""The labelling rubric as versioned data: what each label means, what each claim category demands, the agreement
threshold of checklist item 7, and the claims labelled below their category's minimum criticality. An admin
publishes a change as a new version (old versions are kept)."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from register import RegisterError
from register.access.permissions import Permission
from register.labels import rubrics
from ui.features import labels as ui
from ui.framework import data
from ui.framework.auth import can, current_actor
from ui.framework.components import toast_then_rerun
from ui.framework.errors import show_error
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import escape_markdown


def main() -> None:
    page_frame(filters=False)
    st.title("Labelling rubric")
    versions = ui.rubric_versions()
    current = int(versions["rubric_version"].iloc[0]) if not versions.empty else None
    version = st.selectbox("Version", versions["rubric_version"].tolist(), key="rubric_version",
                           format_func=lambda v: f"v{v}" + (" (in force)" if v == current else ""))
    rubric = ui.rubric(int(version) if version is not None else None)
    st.caption(escape_markdown(f"{rubric.name} — agreement threshold (Krippendorff's alpha): "
                               f"{rubric.min_agreement_alpha if rubric.min_agreement_alpha is not None else 'none'}"))
    st.subheader("Labels")
    st.dataframe(pd.DataFrame([{"label": g.label.value, "definition": g.definition,
                                "default dimensions": ", ".join(d.value for d in g.default_dimensions) or "none",
                                "examples": " | ".join(g.examples), "paper": g.paper} for g in rubric.labels]),
                 hide_index=True)
    st.subheader("Categories and criticality")
    st.dataframe(pd.DataFrame([{"category": g.category, "description": g.description,
                                "critical information": g.critical_information,
                                "suggested criticality": g.suggested_criticality,
                                "minimum criticality": g.min_criticality} for g in rubric.categories]),
                 hide_index=True)
    st.caption(" ".join(f"{k}: {escape_markdown(v)}" for k, v in sorted(rubric.criticality_scale.items())))
    flags = ui.criticality_flags()
    st.subheader(f"Claims below their category's minimum criticality ({len(flags)})")
    if flags.empty:
        st.success("No current claim is labelled below its category's minimum.", icon=":material/verified:")
    else:
        st.dataframe(flags, hide_index=True)
    st.subheader("Versions")
    st.dataframe(versions, hide_index=True)
    if can(Permission.RUBRIC_EDIT):
        with st.expander("Publish a new version"), st.form("rubric_publish", enter_to_submit=False):
            text = st.text_area("Rubric (JSON)", value=json.dumps(rubric.model_dump(mode="json"), indent=1),
                                height=300, key="rubric_json")
            reason = st.text_input("Reason (required)", key="rubric_reason")
            if st.form_submit_button("Publish", type="primary"):
                try:
                    body = json.loads(text)
                except json.JSONDecodeError as error:
                    st.error(f"**Not published** — the JSON is malformed at line {error.lineno}: "
                             f"{escape_markdown(error.msg)}", icon=":material/error:")
                    return
                try:
                    published = data.write(rubrics.publish_rubric, current_actor(), body, reason)
                except RegisterError as error:
                    show_error(error)
                    return
                toast_then_rerun(f"Published rubric v{published}")


run_page(main)
