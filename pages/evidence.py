"""Evidence: the questions the HRI paper leaves open, answered with the register's data (issue 38).

Correlation among the dimensions (section VI), the role of criticality weights, feedback loops over time and the HRI
against RAGChecker's metrics (section XVI). The shared filters apply. Every figure is computed in DuckDB by
``register.evidence`` (nothing is written), downloads as CSV and is reproduced by ``python -m register evidence
correlation|criticality|feedback-loops|rag-agreement``. The weights fitted from outcomes and the aggregation models
compared are computed from the command line for now.
"""

from __future__ import annotations

import streamlit as st

from hri_core.vocabulary import CATEGORIES
from register.evidence.correlation import MOVE_TOGETHER
from register.evidence.criticality import NO_CATEGORY
from ui.features import evidence as ui
from ui.features.figures import PLOT_CONFIG
from ui.framework import data
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import code_span, escape_markdown

DISAGREEMENT_LINKS = 10  # answers linked to their detail; the table and its CSV hold the rest


def _command(line: str) -> None:
    st.caption("From the command line: " + code_span(f"python -m register evidence {line}"))


def _filter_args(f) -> str:
    """The command line's options for the page's use-case and model filters (the ones every subcommand takes)."""
    return "".join(f" --use-case {code_safe(u)}" for u in f.use_cases) + \
        "".join(f" --model {code_safe(m)}" for m in f.models)


def code_safe(value: str) -> str:
    """A filter value as one shell word, single-quoted (shown inside a code span)."""
    return "'" + str(value).replace("'", "'\\''") + "'"


def outcome_panels() -> None:
    st.subheader("Weights fitted from outcomes")
    st.info("Computed from the command line for now: `python -m hri_core fit-weights OUTCOMES.jsonl --json` (each "
            "line an interchange response with `\"outcome\": 0 | 1`); `python -m register profiles draft-from-fit "
            "OUTCOMES.jsonl` stores a fit as a draft profile with its evidence, previewed and published on the "
            "Scoring profiles page. This panel will show the fit here once it is wired in.", icon=":material/terminal:")
    st.subheader("Aggregation models compared")
    st.info("Computed from the command line for now: `python -m hri_core compare-aggregations OUTCOMES.jsonl "
            "--json` (additive with floors, max-based, multiplicative penalty, interaction-aware). This panel will "
            "show the comparison here once it is wired in.", icon=":material/terminal:")


def correlation_panel(f) -> None:
    st.subheader("Correlation among dimensions")
    method = st.segmented_control("Method", ["pearson", "spearman"], default="pearson", key="evidence_corr_method",
                                  format_func=str.capitalize) or "pearson"
    result = ui.dimension_correlation(f, method=method)
    st.caption(f"The seven dimension scores of the {result.answers:,} current answer(s) with claims (answers "
               "without claims score 0 everywhere, failed scores 1 everywhere: both left out). Section VI: the "
               "additive score may hide correlations among dimensions.")
    st.plotly_chart(ui.correlation_figure(result), config=PLOT_CONFIG, key="evidence_corr_chart")
    lines = result.pair_lines()
    if lines:
        st.markdown(f"**Pairs that move together** (|r| >= {MOVE_TOGETHER:g}, strongest first):  \n"
                    + "  \n".join(escape_markdown(line) for line in lines))
    elif result.answers >= 2:
        st.markdown(f"No pair of dimensions moves together (every |r| below {MOVE_TOGETHER:g}).")
    if result.constant:
        st.caption("Constant over these answers, so no correlation is defined: " + ", ".join(result.constant))
    ui.csv_download(result.long(), f"dimension-correlation-{method}", "evidence_corr_csv")
    _command(f"correlation --method {method}{_filter_args(f)}")


def criticality_panel(f) -> None:
    st.subheader("Criticality sensitivity")
    st.caption("Every current answer rescored under the active profile as the impact preview rescores a draft, "
               "with the claims' criticality changed; nothing is written. The action is the score's (its band's, "
               "raised by a floor's minimum action).")
    how = st.segmented_control("Change", ["flatten", "shift"], default="flatten", key="evidence_crit_how",
                               format_func={"flatten": "Flatten to 1", "shift": "Shift per category"}.get) or "flatten"
    shifts: dict[str, int] = {}
    if how == "shift":
        cols = st.columns(4)
        for index, category in enumerate((*CATEGORIES, NO_CATEGORY)):
            amount = cols[index % 4].number_input(category, min_value=-10, max_value=10, value=0, step=1,
                                                  key=f"evidence_crit_shift_{index}")
            if amount:
                shifts[category] = int(amount)
        if not shifts:
            st.caption("Choose a shift for at least one category.")
            return
    result = (ui.criticality_sensitivity(f, flatten=True) if how == "flatten"
              else ui.criticality_sensitivity(f, shifts=shifts))
    cols = st.columns(4)
    cols[0].metric("Answers rescored", f"{result.answers:,}")
    cols[1].metric("Band changes", f"{result.band_changes:,}")
    cols[2].metric("Action changes", f"{result.action_changes:,}")
    before, after = result.mean_score_before, result.mean_score_after
    cols[3].metric("Mean score", "—" if after is None else f"{after:.1f}",
                   delta=None if before is None or after is None else f"{after - before:+.1f}", delta_color="off")
    st.caption(escape_markdown(f"{result.scenario}; profile v{result.profile_version}, as of "
                               f"{result.as_of:%Y-%m-%d %H:%M} UTC."))
    bands = tuple(b.name for b in data.profile().bands)
    left, right = st.columns(2)
    left.plotly_chart(ui.transition_figure(result.band_matrix(bands), "Band transitions", "Band"),
                      config=PLOT_CONFIG, key="evidence_crit_bands")
    right.plotly_chart(ui.transition_figure(result.action_matrix(), "Action transitions", "Action"),
                       config=PLOT_CONFIG, key="evidence_crit_actions")
    ui.csv_download(result.band_transitions, "criticality-band-transitions", "evidence_crit_bands_csv",
                    "Download band transitions (CSV)")
    ui.csv_download(result.action_transitions, "criticality-action-transitions", "evidence_crit_actions_csv",
                    "Download action transitions (CSV)")
    scenario = "--flatten" if how == "flatten" else " ".join(f"--shift {code_safe(f'{c}={n:+d}')}"
                                                             for c, n in shifts.items())
    _command(f"criticality {scenario}{_filter_args(f)}")


def feedback_panel(f) -> None:
    st.subheader("Feedback loops over time")
    loops = ui.feedback_loops(f)
    st.caption("Per scope (use case, model), week by week: the hallucination share of its answers (per answer, the "
               "share of claims labelled UNSUPPORTED or CONTRADICTED; mean over the week's answers) and its s_H over "
               f"the {loops.window_days:g} days ending with the week; dotted lines: validated feedback resolved.")
    scopes = loops.series[["use_case", "model"]].drop_duplicates()
    if scopes.empty:
        st.info("No current answers match these filters.", icon=":material/inbox:")
        return
    resolved = set(zip(loops.before_after["use_case"], loops.before_after["model"], strict=True))
    options = sorted(((u, m) for u, m in scopes.itertuples(index=False)),
                     key=lambda s: ((s[0], s[1]) not in resolved, str(s[0]), str(s[1])))
    pick = st.selectbox("Scope", options, key="evidence_loop_scope",
                        format_func=lambda s: escape_markdown(f"{s[0] or '(no use case)'} / {s[1] or '(no model)'}"))
    st.plotly_chart(ui.feedback_figure(loops, *pick), config=PLOT_CONFIG, key="evidence_loop_chart")
    if loops.before_after.empty:
        st.info("No validated feedback has been resolved in these scopes yet, so there is no before and after to "
                "compare: the weekly figures above are what there is.", icon=":material/info:")
    else:
        st.markdown("**Before and after each scope's first resolution**")
        st.dataframe(loops.before_after, hide_index=True, key="evidence_loop_table", column_config={
            "share_before": st.column_config.NumberColumn("Share before", format="percent"),
            "share_after": st.column_config.NumberColumn("Share after", format="percent"),
            "s_h_before": st.column_config.NumberColumn("s_H before", format="%.3f"),
            "s_h_after": st.column_config.NumberColumn("s_H after", format="%.3f")})
        ui.csv_download(loops.before_after, "feedback-loops-before-after", "evidence_loop_ba_csv",
                        "Download before and after (CSV)")
    ui.csv_download(loops.series, "feedback-loops-weekly", "evidence_loop_csv", "Download the weekly figures (CSV)")
    _command(f"feedback-loops{_filter_args(f)}")


def rag_panel(f) -> None:
    st.subheader("HRI against RAG metrics")
    result = ui.rag_agreement(f)
    if not result.answers:
        st.info("No answer with RAGChecker results, claims and retrieved context matches these filters. Import "
                "RAGChecker's checking output (`python -m register import checking_outputs.json --model M "
                "--use-case U`) to compare the HRI with its hallucination, faithfulness and claim recall.",
                icon=":material/inbox:")
        return
    st.caption(f"Spearman's rank correlation of the HRI score with RAGChecker's per-answer metrics over "
               f"{result.answers:,} answer(s) with claims and retrieved context; {result.confidence:.0%} percentile "
               f"bootstrap intervals ({result.replicates:,} resamples, seed {result.seed}). Agreement: positive with "
               "hallucination, negative with faithfulness and claim recall.")
    table = result.correlations.rename(columns={"metric": "RAGChecker metric", "rho": "Spearman rho",
                                                "low": "Interval low", "high": "Interval high"})
    st.dataframe(table, hide_index=True, key="evidence_rag_table")
    ui.csv_download(result.correlations, "hri-rag-correlation", "evidence_rag_csv")
    st.plotly_chart(ui.rag_figure(result), config=PLOT_CONFIG, key="evidence_rag_chart")
    ui.csv_download(result.pairs, "hri-rag-answers", "evidence_rag_pairs_csv", "Download the answers compared (CSV)")
    if len(result.disagreements):
        st.markdown("**Where they disagree most** (rank percentile by HRI against rank percentile by hallucination)")
        st.dataframe(result.disagreements, hide_index=True, key="evidence_rag_disagree")
        ui.csv_download(result.disagreements, "hri-rag-disagreements", "evidence_rag_disagree_csv",
                        "Download the disagreements (CSV)")
        for rid in list(result.disagreements["response_id"])[:DISAGREEMENT_LINKS]:
            st.page_link("pages/response_detail.py", label=f"Open {code_span(rid)}", icon=":material/fact_check:",
                         query_params={"response_id": str(rid)})
    _command(f"rag-agreement{_filter_args(f)}")


def main() -> None:
    f = page_frame()
    st.title("Evidence")
    st.caption("What the register's data says about the questions the HRI paper leaves open. Read-only: nothing on "
               "this page writes.")
    outcome_panels()
    correlation_panel(f)
    criticality_panel(f)
    feedback_panel(f)
    rag_panel(f)


run_page(main)
