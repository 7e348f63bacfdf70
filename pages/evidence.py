"""Evidence: the questions the HRI paper leaves open, answered with the register's data (issue 38).

Correlation among the dimensions (section VI), the role of criticality weights, feedback loops over time and the HRI
against RAGChecker's metrics (section XVI). The shared filters apply. Every figure is computed in DuckDB by
``register.evidence`` (nothing is written), downloads as CSV and is reproduced by ``python -m register evidence
correlation|criticality|feedback-loops|rag-agreement|fit-weights|compare-aggregations``. The weights fitted from the
register's outcomes (with their intervals against the active profile's) and the aggregation models compared on them
are cached per the outcome rows' hash with a modest bootstrap; a profile editor may offer the fit as a draft profile.
"""

from __future__ import annotations

import streamlit as st

from hri_core import HRIError
from hri_core.vocabulary import CATEGORIES
from register import RegisterError
from register.access.permissions import Permission
from register.evidence.correlation import MOVE_TOGETHER
from register.evidence.criticality import NO_CATEGORY
from register.scoring.calibration import OUTCOME_KINDS
from register.scoring.fitted_weights import draft_from_register
from ui.features import evidence as ui
from ui.features.figures import PLOT_CONFIG
from ui.framework import data
from ui.framework.auth import can, current_actor
from ui.framework.components import keep_message, label_picker, show_kept_messages
from ui.framework.errors import show_error
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
    """The weights fitted to the register's outcomes and the aggregation models compared on them (not filtered: the
    outcomes are few, and a fit is offered for the whole register), on the outcome kinds the person picks (none
    picked: every kind, as the command line without ``--kind``)."""
    every = ui.register_outcomes()
    kinds = tuple(label_picker(
        "Outcome kinds", list(every.kind_counts()), key="evidence_kinds",
        help="Fit and compare on these kinds of outcome only (none: every kind). " + "; ".join(
            f"{kind}: {OUTCOME_KINDS.get(kind, kind)}" for kind in every.kind_counts())))
    outcomes = ui.register_outcomes(kinds) if kinds else every
    fit_panel(outcomes)
    comparison_panel(outcomes)


def _kind_args(outcomes) -> str:
    """The command line's ``--kind`` options for the kinds the page fits on (none: every kind)."""
    return "".join(f" --kind {kind}" for kind in outcomes.kinds)


def _shortfall(outcomes, what: str) -> bool:
    """Say, when the register holds too few outcomes, how many there are and how many are needed; True then."""
    shortfall = outcomes.shortfall()
    if shortfall is None:
        return False
    picked = f"Of the kinds picked ({', '.join(outcomes.kinds)}): " if outcomes.kinds else ""
    st.info(f"{picked}{shortfall} Outcomes come from review decisions, validated feedback and outcome files "
            f"imported on the Calibration page. Until then, {what} from a file: "
            f"{code_span(f'python -m hri_core {FILE_COMMANDS[what]} OUTCOMES.jsonl --json')}.",
            icon=":material/inbox:")
    return True


FILE_COMMANDS = {"fit the weights": "fit-weights", "compare the models": "compare-aggregations"}


def _data_caption(outcomes) -> str:
    kinds = ", ".join(f"{OUTCOME_KINDS.get(k, k)} {v['n']:,} ({v['harmful']:,} harmful)"
                      for k, v in outcomes.kind_counts().items())
    left = sum(outcomes.left_out.values())
    return (f"{outcomes.n:,} answers with a known outcome ({outcomes.harmful:,} harmful): {escape_markdown(kinds)}; "
            f"data {code_span(outcomes.data_hash[:16])}" + (f"; {left:,} left out (no usable score)" if left else ""))


def fit_panel(outcomes) -> None:
    st.subheader("Weights fitted from outcomes")
    if _shortfall(outcomes, "fit the weights"):
        return
    try:
        fit = ui.weight_fit(outcomes.kinds, data_hash=outcomes.data_hash, resamples=ui.PAGE_RESAMPLES).to_dict()
    except HRIError as error:
        show_error(error)
        return
    st.caption(_data_caption(outcomes) + ". Maximum likelihood of harm ~ logistic(a + b x the additive score), the "
               "weights on the simplex; held-out metrics from stratified cross-validation against the active "
               "profile's weights.")
    st.plotly_chart(ui.weights_figure(fit), config=PLOT_CONFIG, key="evidence_fit_chart")
    weights = ui.weights_table(fit)
    st.dataframe(weights, hide_index=True, key="evidence_fit_weights", column_config=ui.four_decimals(weights))
    ui.csv_download(weights, "fitted-weights", "evidence_fit_csv", "Download the weights (CSV)")
    cv = ui.cv_table(fit)
    st.markdown(f"**Held-out ({fit['cv']['folds']}-fold) AUC, average precision and expected cost** (costs: miss "
                f"{fit['costs']['miss']:g}, review {fit['costs']['review']:g})")
    st.dataframe(cv, hide_index=True, key="evidence_fit_cv", column_config=ui.four_decimals(cv))
    ui.csv_download(cv, "fitted-weights-cv", "evidence_fit_cv_csv", "Download the held-out metrics (CSV)")
    _command(f"fit-weights{_kind_args(outcomes)} --resamples {ui.PAGE_RESAMPLES}")
    st.caption("As a draft profile: " + code_span(f"python -m register profiles draft-from-fit --from-register"
                                                  f"{_kind_args(outcomes)} --resamples {ui.PAGE_RESAMPLES}"))
    offer_draft(outcomes.data_hash, outcomes.kinds)


def offer_draft(data_hash: str, kinds: tuple[str, ...] = ()) -> None:
    """The fit as a draft profile (profile editors; the register checks the account again), then the impact preview
    and four-eyes publish on the Scoring profiles page."""
    show_kept_messages("evidence_fit")
    editor = can(Permission.PROFILE_EDIT)
    if not editor:
        st.caption("Only a profile editor may offer the fit as a draft profile.")
    if st.button("Offer as a draft profile", key="evidence_fit_offer", disabled=not editor,
                 icon=":material/note_add:"):
        try:
            draft = data.write(draft_from_register, current_actor(), kinds=kinds or None, data_hash=data_hash,
                               resamples=ui.PAGE_RESAMPLES)
        except (RegisterError, HRIError) as error:
            show_error(error)
            return
        keep_message("evidence_fit", "success",
                     f"Draft profile version {draft.profile_version} holds the fitted weights, with their evidence in "
                     f"record #{draft.elicitation_id}. Preview its impact and have a second person publish it on "
                     "the Scoring profiles page.")
        st.rerun()


def comparison_panel(outcomes) -> None:
    st.subheader("Aggregation models compared")
    if _shortfall(outcomes, "compare the models"):
        return
    try:
        rows = ui.aggregation_comparison(outcomes.kinds, data_hash=outcomes.data_hash, resamples=ui.PAGE_RESAMPLES)
    except HRIError as error:
        show_error(error)
        return
    st.caption(f"Section VI: the paper's additive rule with floors against max-based, multiplicative-penalty and "
               f"interaction-aware aggregation, each fitted on training folds and judged on held-out folds of the "
               f"same {outcomes.n:,} outcomes; {rows[0]['resamples']} bootstrap resamples; 'vs active' is the "
               "difference to the additive rule with the active profile's weights.")
    table = ui.comparison_table(rows)
    st.dataframe(table, hide_index=True, key="evidence_compare_table", column_config=ui.four_decimals(table))
    ui.csv_download(table, "aggregation-models", "evidence_compare_csv", "Download the comparison (CSV)")
    _command(f"compare-aggregations{_kind_args(outcomes)} --resamples {ui.PAGE_RESAMPLES}")


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
    # a widget's options are drawn as plain text (never markdown): escaping them would show the backslashes
    pick = st.selectbox("Scope", options, key="evidence_loop_scope",
                        format_func=lambda s: f"{s[0] or '(no use case)'} / {s[1] or '(no model)'}")
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
    st.caption("What the register's data says about the questions the HRI paper leaves open. Nothing on this page "
               "writes but the offer of fitted weights as a draft profile (for profile editors).")
    outcome_panels()
    correlation_panel(f)
    criticality_panel(f)
    feedback_panel(f)
    rag_panel(f)


run_page(main)
