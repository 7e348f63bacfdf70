"""Labelling workbench (annotators): one claim at a time or all of a response's claims in a grid, blind; and
the judges' proposals, confirmed, corrected or rejected response by response (``ui.features.proposal_review``).

The annotator sees the question, the answer, the claim, the retrieved context and the sources, and their own
labels; never another annotator's labels, the claim's current labels or the score (the register enforces it).
Keyboard: Tab moves through the fields, Enter in the note saves and goes to the next open claim. In the grid
the arrow keys move between cells and Enter edits one; "Save the grid" saves every changed row, each as its
own audited annotation, and names the rows it refused.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from hri_core.models import MAX_CRITICALITY
from hri_core.vocabulary import CATEGORIES, DIMENSIONS
from register import RegisterError
from register.access.permissions import Permission
from register.labels import workbench
from register.labels.workbench import ANNOTATOR_LABELS
from ui.features import labels as ui
from ui.features import proposal_review
from ui.features.answer_view import show_answer
from ui.features.labels import LABEL_SET_HELP, NO_CATEGORY
from ui.framework import data
from ui.framework.auth import can, current_actor
from ui.framework.components import empty_state, keep_message, label_picker, show_kept_messages, toast_then_rerun
from ui.framework.errors import show_error
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import code_span, escape_markdown

WORK = {"batches": "My labelling batches (blind)", "proposals": "Judge proposals to confirm"}


def _pick_batch(actor) -> int | None:
    mine = ui.my_batches(actor)
    if mine.empty:
        empty_state("No labelling batch is assigned to you. A reviewer draws batches on the Adjudication page.")
        return None
    titles = {int(r.batch_id): f"#{r.batch_id} {r.title} — {r.labelled}/{r.units} labelled"
              for r in mine.itertuples()}
    return st.selectbox("Batch", list(titles), format_func=titles.get, key="wb_batch")


def _pick_response(actor, batch_id: int) -> str:
    responses = ui.batch_responses(actor, batch_id)
    done, total = int(responses["labelled"].sum()), int(responses["units"].sum())
    st.progress(done / total if total else 1.0, text=f"Batch progress: {done} of {total} claims labelled, "
                                                    f"{int((responses['labelled'] == responses['units']).sum())} of "
                                                    f"{len(responses)} responses done")
    ids = responses["response_id"].tolist()
    open_ids = [r for r, lab, units in zip(ids, responses["labelled"], responses["units"], strict=True) if lab < units]
    if st.session_state.pop("wb_advance", False) and open_ids or st.session_state.get("wb_response") not in ids:
        st.session_state["wb_response"] = open_ids[0] if open_ids else ids[0]
    marks = {r: f"{r} ({lab}/{units})" for r, lab, units in zip(ids, responses["labelled"], responses["units"],
                                                                  strict=True)}
    return st.selectbox("Response", ids, format_func=marks.get, key="wb_response")


def _guide() -> None:
    rubric = ui.rubric()
    with st.expander(f"Rubric v{rubric.version}: what each label means"):
        for guide in rubric.labels:
            if guide.label.value in ANNOTATOR_LABELS:
                st.markdown(f"**{guide.label.value}** — {escape_markdown(guide.definition)}")
        st.markdown("**Categories** — " + "; ".join(
            f"{escape_markdown(g.category)}: suggested {g.suggested_criticality}"
            + (f", at least {g.min_criticality}" if g.min_criticality else "") for g in rubric.categories))


def _label_form(actor, batch_id: int, item: dict, unit: dict, next_unit: str | None) -> None:
    """One claim's labels; saving moves to ``next_unit`` (None: to the next response with open claims)."""
    key = f"wb_{batch_id}_{item['response_id']}_{unit['unit_id']}"
    rubric = ui.rubric()
    minimum = {g.category: g.min_criticality for g in rubric.categories}.get(unit["category"])
    if unit["state"] == "labelled" and minimum and (unit["criticality"] or 1) < minimum:
        st.warning(f"Flagged: rubric v{rubric.version} asks criticality {minimum} or more for a "
                   f"{escape_markdown(unit['category'])} claim.", icon=":material/flag:")
    with st.form(key, enter_to_submit=True, border=True):
        st.markdown(f"**Claim {code_span(unit['unit_id'])}** — {escape_markdown(unit['text'] or '')}")
        chosen = label_picker("Labels (one or more)", ANNOTATOR_LABELS, default=unit["labels"] or [],
                              key=f"{key}_labels", help=LABEL_SET_HELP)
        left, right = st.columns(2)
        criticality = left.number_input("Criticality (v_i)", min_value=1, max_value=MAX_CRITICALITY, step=1,
                                        value=int(unit["criticality"] or 1), key=f"{key}_crit")
        categories = [NO_CATEGORY, *CATEGORIES]
        category = right.selectbox("Category", categories, key=f"{key}_cat",
                                   index=categories.index(unit["category"]) if unit["category"] in categories else 0)
        dimensions = st.multiselect("Dimensions (empty: the profile's defaults for the labels)",
                                    [d.value for d in DIMENSIONS], default=list(unit["dimensions"] or []),
                                    key=f"{key}_dims")
        # the claim's current source, every source of the retrieved context (registered or not), the register's
        # sources they cite; it starts at the annotator's own choice, else at the claim's current source
        start = unit["source_id"] if unit["state"] == "labelled" else unit.get("claim_source_id")
        sources = ui.source_choices(item, [unit])
        source = st.selectbox("Source", sources, index=sources.index(start or ""), key=f"{key}_src",
                              format_func=lambda s: s or "(none)")
        span = st.text_input("Span (the evidence quoted)", value=unit["span"] or "", key=f"{key}_span")
        note = st.text_input("Note (Enter saves)", value=unit["note"] or "", key=f"{key}_note")
        saved = st.form_submit_button("Save and next", type="primary")
    if saved:
        try:
            data.write(workbench.save_annotation, actor, batch_id, item["response_id"], unit["unit_id"], labels=chosen,
                       criticality=int(criticality), category=None if category == NO_CATEGORY else category,
                       dimensions=dimensions or None, source_id=source or None, span=span, note=note)
        except RegisterError as error:
            show_error(error)
            return
        if next_unit is None:  # the response is done: on to the next response with open claims
            st.session_state["wb_advance"] = True
        else:
            st.session_state["wb_unit_next"] = next_unit  # applied before the claim picker on the next run
        toast_then_rerun(f"Saved {code_span(unit['unit_id'])}")


def _label_grid(actor, batch_id: int, item: dict, units: list[dict]) -> None:
    """Every claim of the response in one editable grid; saves the rows that changed."""
    sources = [s for s in ui.source_choices(item, units) if s]
    original = pd.DataFrame([{
        "unit_id": u["unit_id"], "state": "✓ labelled" if u["state"] == "labelled" else "○ open",
        "text": u["text"] or "", "labels": list(u["labels"] or []), "criticality": int(u["criticality"] or 1),
        "category": u["category"], "dimensions": list(u["dimensions"] or []),
        "source_id": u["source_id"] if u["state"] == "labelled" else u.get("claim_source_id"),
        "span": u["span"] or "", "note": u["note"] or ""} for u in units])
    columns = {
        "unit_id": st.column_config.TextColumn("Claim", disabled=True, pinned=True, width=110),
        "state": st.column_config.TextColumn("State", disabled=True, width=90),
        "text": st.column_config.TextColumn("Text", disabled=True, width=300),
        "labels": st.column_config.MultiselectColumn("Labels", options=list(ANNOTATOR_LABELS), required=True,
                                                     width=200),
        "criticality": st.column_config.NumberColumn("Criticality (v_i)", min_value=1, max_value=MAX_CRITICALITY,
                                                     step=1,
                                                     required=True, width=110),
        "category": st.column_config.SelectboxColumn("Category", options=list(CATEGORIES)),
        "dimensions": st.column_config.MultiselectColumn("Dimensions", options=[d.value for d in DIMENSIONS],
                                                         help="empty: the profile's defaults for the labels"),
        "source_id": st.column_config.SelectboxColumn("Source", options=sources),
        "span": st.column_config.TextColumn("Span (the evidence quoted)"),
        "note": st.column_config.TextColumn("Note")}
    key = f"wb_grid_{batch_id}_{item['response_id']}"
    with st.form(key, border=False):
        edited = st.data_editor(original, column_config=columns, hide_index=True, num_rows="fixed", width="stretch",
                                key=f"{key}_editor")
        saved = st.form_submit_button("Save the grid", type="primary")
    if saved:
        changes = ui.grid_changes(original, edited)
        if not changes:
            st.info("Nothing changed in the grid.", icon=":material/info:")
            return
        try:
            # ``{unit_id: why}`` refused; the other rows are saved (and the caches cleared) all the same
            refused = data.write(workbench.save_annotations, actor, batch_id, item["response_id"], changes)
        except RegisterError as error:
            show_error(error)
            return
        saved = len(changes) - len(refused)
        if saved:
            keep_message("workbench_grid", "success", f"Saved {saved} claim{'s' if saved != 1 else ''}.")
        for unit_id, why in refused.items():
            keep_message("workbench_grid", "error", f"Not saved: {code_span(unit_id)} — {escape_markdown(why)}")
        st.rerun()


def _restructure(actor, batch_id: int, item: dict, units: list[dict]) -> None:
    originals = [u["unit_id"] for u in units if u["origin"] == "claim" and u["state"] != "replaced"]
    with st.expander("Split, merge or add claims"):
        split_tab, merge_tab, add_tab = st.tabs(["Split", "Merge", "Add a missed claim"])
        with split_tab, st.form("wb_split"):
            target = st.selectbox("Claim to split", originals, key="wb_split_target")
            parts = st.text_area("Its parts, one claim per line", key="wb_split_parts")
            if st.form_submit_button("Split"):
                _run(lambda: data.write(workbench.split_claim, actor, batch_id, item["response_id"], target,
                                        parts.splitlines()))
        with merge_tab, st.form("wb_merge"):
            chosen = st.multiselect("Claims to merge", originals, key="wb_merge_ids")
            text = st.text_input("The merged claim", key="wb_merge_text")
            if st.form_submit_button("Merge"):
                _run(lambda: data.write(workbench.merge_claims, actor, batch_id, item["response_id"], chosen, text))
        with add_tab, st.form("wb_add"):
            text = st.text_input("The claim the extraction missed", key="wb_add_text")
            if st.form_submit_button("Add"):
                _run(lambda: data.write(workbench.add_claim, actor, batch_id, item["response_id"], text))


def _run(action) -> None:
    try:
        action()
    except RegisterError as error:
        show_error(error)
        return
    st.rerun()


def main() -> None:
    page_frame(filters=False)
    st.title("Labelling workbench")
    if not can(Permission.LABEL):
        st.info(f"Your role ({current_actor().role}) cannot label claims.", icon=":material/lock:")
        return
    actor = current_actor()
    work = st.segmented_control("Work on", list(WORK), default="batches", key="wb_work", format_func=WORK.__getitem__,
                                help="Batches are blind: you never see another annotator's or a judge's labels "
                                     "there. Proposals show a judge's verdict for you to confirm, correct or reject.")
    if work == "proposals":
        proposal_review.review_proposals(actor)
        return
    batch_id = _pick_batch(actor)
    if batch_id is None:
        return
    response_id = _pick_response(actor, batch_id)
    item = ui.work_item(actor, batch_id, response_id)
    show_answer(item)
    _guide()
    units = [u for u in item["units"] if u["state"] != "replaced"]
    ids = [u["unit_id"] for u in units]
    view = st.segmented_control("View", ["One claim", "Grid"], default="One claim", key="wb_view",
                                help="Grid: every claim of this response in one table; the arrow keys move "
                                     "between cells")
    show_kept_messages("workbench_grid")
    if not ids:
        empty_state("Every claim of this response was replaced: add or split claims below.")
    elif view == "Grid":
        _label_grid(actor, batch_id, item, units)
    else:
        open_ids = [u["unit_id"] for u in units if u["state"] == "open"]
        if "wb_unit_next" in st.session_state:
            st.session_state["wb_unit"] = st.session_state.pop("wb_unit_next")
        if st.session_state.get("wb_unit") not in ids:
            st.session_state["wb_unit"] = open_ids[0] if open_ids else ids[0]
        marks = {u["unit_id"]: ("✓ " if u["state"] == "labelled" else "○ ") + u["unit_id"] for u in units}
        unit_id = st.radio("Claim", ids, format_func=marks.get, horizontal=True, key="wb_unit")
        unit = next(u for u in units if u["unit_id"] == unit_id)
        later = [i for i in open_ids if i != unit_id]
        _label_form(actor, batch_id, item, unit, later[0] if later else None)
    _restructure(actor, batch_id, item, item["units"])


run_page(main)
