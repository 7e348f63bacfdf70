"""Inter-annotator agreement: Krippendorff's alpha (nominal on the worst label, ordinal on criticality) and Cohen's
kappa, with bootstrap intervals; per batch, label, category, use case and annotator pair; a confusion matrix per
pair. "Inter-annotator agreement should be measured and reported" (HRI paper, section V)."""

from __future__ import annotations

import streamlit as st

from ui.features import labels as ui
from ui.framework.auth import current_actor
from ui.framework.components import empty_state
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import escape_markdown

ALL = "All batches"


def _value(result: dict | None) -> str:
    if not result or result.get("alpha", result.get("kappa")) is None:
        return "—"
    return f"{result.get('alpha', result.get('kappa')):.3f}"


def _interval(ci: dict | None) -> str:
    if not ci or ci["low"] is None:
        return "no interval"
    return f"95% CI {ci['low']:.2f} to {ci['high']:.2f}"


def main() -> None:
    page_frame(filters=False)
    st.title("Annotator agreement")
    actor = current_actor()
    batches = ui.batch_list()
    if batches.empty:
        empty_state("Nothing to measure yet: no labelling batch has been drawn.")
        return
    names = {ALL: ALL, **{int(b): f"#{b} {t}" for b, t in zip(batches["batch_id"], batches["title"], strict=True)}}
    pick = st.selectbox("Batch", list(names), format_func=names.get, key="agr_batch")
    report = ui.agreement_report(actor, batch_id=None if pick == ALL else int(pick), rubric_version=None)
    overall = report.overall
    if not overall.get("ratings"):
        empty_state("No annotation in this selection yet.")
        return
    threshold = ui.rubric().min_agreement_alpha
    cols = st.columns(4)
    cols[0].metric("Labels alpha (nominal)", _value(overall["labels"]), help="Krippendorff's alpha on each "
                   "annotator's worst label")
    cols[0].caption(_interval(overall["labels_ci"]))
    cols[1].metric("Criticality alpha (ordinal)", _value(overall["criticality"]))
    cols[1].caption(_interval(overall["criticality_ci"]))
    cols[2].metric("Cohen's kappa", _value(overall["kappa"]) if overall["kappa"] else "—",
                   help="Two annotators only; per pair below otherwise")
    cols[2].caption(_interval(overall["kappa_ci"]) if overall["kappa_ci"] else "more than two annotators")
    cols[3].metric("Claims / annotators", f"{overall['units']} / {overall['annotators']}")
    cols[3].caption(f"{overall['pairable']} pairable ratings")
    alpha = overall["labels"]["alpha"]
    if threshold is not None and alpha is not None:
        if alpha < threshold:
            st.warning(f"Labels alpha {alpha:.3f} is below the rubric's threshold {threshold:.3f}: checklist item 7 "
                       "fails until agreement improves.", icon=":material/warning:")
        else:
            st.success(f"Labels alpha {alpha:.3f} meets the rubric's threshold {threshold:.3f}.",
                       icon=":material/verified:")
    if overall["labels"]["note"]:
        st.caption(escape_markdown(overall["labels"]["note"]))
    st.subheader("Per label (present / absent)")
    st.dataframe(report.per_label, hide_index=True,
                 column_config={"alpha": st.column_config.NumberColumn("alpha", format="%.3f")})
    st.subheader("Per batch, category and use case")
    st.dataframe(report.groups, hide_index=True,
                 column_config={"labels_alpha": st.column_config.NumberColumn("labels alpha", format="%.3f"),
                                "criticality_alpha": st.column_config.NumberColumn("criticality alpha",
                                                                                    format="%.3f")})
    st.subheader("Per annotator pair")
    st.dataframe(report.pairs, hide_index=True,
                 column_config={c: st.column_config.NumberColumn(c, format="%.3f")
                                for c in ("alpha", "kappa", "kappa_low", "kappa_high")})
    for (first, second), matrix in report.confusion.items():
        st.markdown(f"**Worst labels: {escape_markdown(first)} (rows) against {escape_markdown(second)} (columns)**")
        st.dataframe(matrix)


run_page(main)
