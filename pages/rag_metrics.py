"""RAG metrics: RAGChecker's claim-level metrics, RAGAS scores beside them, FActScore's factual precision,
hallucination on critical-information questions alone (seed 003), and HRI against hallucination. Answers without
retrieved context are shown apart: RAGChecker's guard gives them 0 hallucination, which the page's own readings
do not average in.

The shared filters apply. Every number is aggregated in DuckDB from the per-response values stored
when the RAGChecker results or RAGAS tables were imported (``register.console.rag``); RAGChecker's
figures are its own: the mean over queries, in percent, to one decimal.
"""

from __future__ import annotations

import streamlit as st

from hri_core.vocabulary import CRITICAL_INFORMATION_CATEGORIES
from register.console.rag import METRIC_GROUPS
from ui.features import rag_metrics as ui
from ui.features.figures import PLOT_CONFIG
from ui.framework import data
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import code_span, escape_markdown

GROUP_TITLES = {"overall": "Overall", "retriever": "Retriever", "generator": "Generator"}


def _percent(value) -> str:
    return "—" if value is None else f"{value:.1f}%"


def no_data() -> None:
    st.info("No RAG evaluation results match these filters. Import RAGChecker's checking output "
            "(`python -m register import checking_outputs.json --model M --use-case U`) or a RAGAS result table "
            "(CSV or Parquet with `user_input`, `retrieved_contexts`, `response`, `reference` and metric "
            "columns): they are recognised by their content.", icon=":material/inbox:")


def headline(s: dict) -> None:
    row = st.columns(6)
    row[0].metric("RAGChecker answers", f"{s['ragchecker']:,}")
    row[1].metric("RAGAS answers", f"{s['ragas']:,}")
    fp = s["factual_precision"]
    row[2].metric("Factual precision", "—" if fp is None else f"{100 * fp:.1f}%",
                  help="FActScore (Min et al. 2023): per answer, the share of its claims whose stored labels are "
                       f"SUPPORTED, averaged over the {s['factscore_answers']:,} answers with claims "
                       f"({s['supported_claims']:,} of {s['claims']:,} claims supported)")
    row[3].metric("Hallucination, with context", _percent(s["hallucination"]),
                  help="RAGChecker: claims neither entailed by the retrieved context nor by the target answer, mean "
                       f"over the answers with retrieved context; the {s['no_context']:,} without are shown apart")
    row[4].metric("Critical questions", _percent(s["critical_hallucination"]),
                  delta=f"{s['critical']:,} answers", delta_color="off", delta_arrow="off",
                  help="Hallucination on answers to questions about " + ", ".join(CRITICAL_INFORMATION_CATEGORIES)
                       + " alone (seed 003), those with retrieved context")
    row[5].metric("Other questions", _percent(s["other_hallucination"]),
                  help="Hallucination on answers to questions in no critical category")
    st.caption("Critical and other questions: RAGChecker's hallucination on the answers to questions in a "
               "critical-information category alone, and on the rest; like the hallucination beside them, over the "
               "answers with retrieved context.")


def ragchecker_totals(metrics: dict, no_context: int) -> None:
    st.subheader("RAGChecker metrics")
    st.caption("As RAGChecker reports them: per answer from the imported entailment labels, then the mean over "
               "answers in percent, to one decimal."
               + (f" They include the {no_context:,} answer(s) without retrieved context, which RAGChecker counts "
                  "as 0 on every retriever and generator metric (see below)." if no_context else ""))
    for group, names in METRIC_GROUPS.items():
        cols = st.columns([0.8] + [1] * len(names))
        cols[0].markdown(f"**{GROUP_TITLES[group]}**")
        for col, name in zip(cols[1:], names, strict=True):
            col.metric(ui.metric_label(name), _percent(metrics[group][name]), help=ui.METRIC_HELP[name])


def without_context(s: dict) -> None:
    """The answers without retrieved context, apart: their count and the figures that mean something for them."""
    if not s["no_context"]:
        return
    st.subheader("Answers without retrieved context")
    st.caption("Nothing was retrieved for these answers, so RAGChecker's retriever and generator metrics are 0 by "
               "its guard (hallucination included): no reading of the answer, so the page's own hallucination "
               "figures leave them out. With no reference every claim is unsupported: seed 003's hallucination "
               "(claims both unsupported by the references and incorrect) is then the share of incorrect claims.")
    figures = s["no_context_metrics"]
    cols = st.columns(5)
    cols[0].metric("Answers without retrieved context", f"{s['no_context']:,}")
    for col, name in zip(cols[1:4], ("precision", "recall", "f1"), strict=True):
        col.metric(f"{ui.metric_label(name)}, no context", _percent(figures[name]), help=ui.METRIC_HELP[name])
    cols[4].metric("Unsupported and incorrect (seed 003)", _percent(figures["unsupported_incorrect"]),
                   help="Per answer with claims, the share of its claims the target does not entail (all are "
                        "unsupported: nothing was retrieved); mean over those answers")


def by_group(f) -> None:
    st.subheader("By import batch, model and use case")
    by = st.segmented_control("Group by", list(ui.GROUP_LABELS), default="model", format_func=ui.GROUP_LABELS.get,
                              key="rag_by") or "model"
    label = ui.GROUP_LABELS[by]
    long = ui.metrics_by(f, by)
    st.dataframe(ui.wide_table(long, ("ragchecker", "factscore"), label), hide_index=True,
                 column_config={"Factual precision (FActScore)": st.column_config.NumberColumn(format="%.3f")})
    st.plotly_chart(ui.group_bars_figure(long, ("precision", "recall", "f1", "hallucination", "faithfulness"),
                                         label), config=PLOT_CONFIG)
    ragas = ui.wide_table(long, ("ragas",), label)
    if len(ragas):
        st.markdown("**RAGAS scores** (mean of each metric column as imported, 0 to 1)")
        st.dataframe(ragas, hide_index=True)


def trends(f, s: dict) -> None:
    st.subheader("Trends")
    options = [("ragchecker", name) for names in METRIC_GROUPS.values() for name in names]
    options += [("ragas", name) for name in s["ragas_means"]]
    default = options.index(("ragchecker", "hallucination")) if s["ragchecker"] else 0
    framework, metric = st.selectbox(
        "Metric", options, index=default, key="rag_trend_metric",
        format_func=lambda o: ("RAGAS: " if o[0] == "ragas" else "") + escape_markdown(ui.metric_label(o[1])))
    st.plotly_chart(ui.trend_figure(ui.trend(f, metric, framework), metric, percent=framework == "ragchecker"),
                    config=PLOT_CONFIG)


def critical(f) -> None:
    st.subheader("Critical information")
    st.caption("A question is critical when its claims are about " + ", ".join(CRITICAL_INFORMATION_CATEGORIES)
               + " (the claim's category, or a RAGAS table's category column). Seed 003: hallucination on these "
               "questions is what matters most, and an average over everything hides it. Answers with retrieved "
               "context.")
    st.plotly_chart(ui.category_figure(ui.by_category(f)), config=PLOT_CONFIG)


def scatter(f) -> None:
    st.subheader("HRI against hallucination")
    points = ui.hri_vs_hallucination(f)
    st.caption("One point per answer with RAGChecker checks, claims and retrieved context (diamonds: critical "
               "questions). Top left: "
               "hallucinated claims the HRI labels score low; bottom right: a high HRI with every claim grounded "
               "or correct (other dimensions, floors).")
    st.plotly_chart(ui.scatter_figure(points, tuple(b.name for b in data.profile().bands)), config=PLOT_CONFIG)
    disagree = points[(points["hallucination"] >= 50) & (points["score"] < 40)] if len(points) else points
    if len(disagree):
        st.markdown("Answers with at least half their claims hallucinated but an HRI below 40: "
                    + ", ".join(code_span(rid) for rid in disagree["response_id"].head(20)))


def ragas_means(s: dict) -> None:
    if not s["ragas_means"]:
        return
    st.subheader("RAGAS")
    st.caption("Mean of each imported RAGAS metric column over the answers that have it (0 to 1).")
    cols = st.columns(min(6, len(s["ragas_means"])))
    for index, (name, value) in enumerate(s["ragas_means"].items()):
        cols[index % len(cols)].metric(escape_markdown(name), "—" if value is None else f"{value:.3f}")


def main() -> None:
    f = page_frame()
    st.title("RAG metrics")
    s = ui.summary(f)
    if not (s["ragchecker"] or s["ragas"]):
        no_data()
        return
    headline(s)
    if s["metrics"]:
        ragchecker_totals(s["metrics"], s["no_context"])
    without_context(s)
    ragas_means(s)
    by_group(f)
    trends(f, s)
    if s["ragchecker"]:
        critical(f)
        scatter(f)


run_page(main)
