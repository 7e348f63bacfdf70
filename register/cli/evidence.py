"""``evidence correlation|criticality|feedback-loops|rag-agreement|fit-weights|compare-aggregations``: the Evidence
page's figures from the command line, each the same function the page reads (``register.evidence``,
``register.scoring.register_outcomes``), as text or, with ``--json``, as JSON.

The first four take the console's scope filters ``--use-case`` and ``--model`` (repeat for more; default: every
current answer). ``fit-weights`` and ``compare-aggregations`` read the register's own outcomes (review decisions,
audit findings, validated feedback, imported outcomes; ``--kind`` keeps some kinds only) with their stored dimension
scores, and print what ``python -m hri_core fit-weights|compare-aggregations OUTCOMES.jsonl`` prints for a file,
the data's hash and kinds added; too few outcomes exit 1 saying how many there are and how many are needed.
Nothing is written: a console holding the database carries them out as it would any command (the hand-off,
``register.cli.handoff``).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from register.cli.common import EXIT_OK, positive
from register.db.store import Store


def add_commands(sub) -> None:
    ev = sub.add_parser("evidence", help="the Evidence page's figures: dimension correlation, criticality "
                                         "sensitivity, feedback loops, HRI against RAG metrics")
    esub = ev.add_subparsers(dest="evidence_command", required=True)
    corr = esub.add_parser("correlation", help="the seven dimension scores' correlation matrix and the pairs that "
                                               "move together")
    corr.add_argument("--method", choices=("pearson", "spearman"), default="pearson")
    corr.add_argument("--threshold", type=float, help="|r| from which a pair is named (default 0.5)")
    corr.set_defaults(func=cmd_correlation)
    crit = esub.add_parser("criticality", help="band and action transitions when criticality is flattened to 1 "
                                               "or shifted per claim category (nothing is written)")
    how = crit.add_mutually_exclusive_group(required=True)
    how.add_argument("--flatten", action="store_true", help="every claim's criticality 1")
    how.add_argument("--shift", action="append", metavar="CATEGORY=N",
                     help="add N (e.g. +2, -1) to the criticality of the claims of CATEGORY ('(none)': claims "
                          "without one); repeat for more")
    crit.set_defaults(func=cmd_criticality)
    loops = esub.add_parser("feedback-loops", help="per scope, the hallucination share and s_H week by week, "
                                                   "before and after validated feedback was resolved")
    loops.add_argument("--weeks", type=positive, default=26, help="weeks on the time axis, ending with the latest "
                                                                  "answer or feedback event (default 26)")
    loops.set_defaults(func=cmd_feedback_loops)
    rag = esub.add_parser("rag-agreement", help="Spearman rank correlation of the HRI with RAGChecker's "
                                                "hallucination, faithfulness and claim recall, with bootstrap "
                                                "intervals, and the answers where they disagree most")
    rag.add_argument("--replicates", type=positive, default=1000, help="bootstrap replicates (default 1000)")
    rag.add_argument("--seed", type=int, default=0, help="the bootstrap's seed (default 0)")
    rag.add_argument("--limit", type=positive, default=20, help="disagreeing answers listed (default 20)")
    rag.set_defaults(func=cmd_rag_agreement)
    for parser in (corr, crit, loops, rag):
        parser.add_argument("--use-case", action="append", default=[], help="only this use case (repeat for more)")
        parser.add_argument("--model", action="append", default=[], help="only this model (repeat for more)")
        parser.add_argument("--json", action="store_true", help="as JSON")
    add_outcome_commands(esub)


def add_outcome_commands(esub) -> None:
    """``evidence fit-weights`` and ``evidence compare-aggregations``: the register's outcomes, no file."""
    from hri_core.outcome_fit import DEFAULT_FOLDS, DEFAULT_RESAMPLES, DEFAULT_SEED
    from hri_core.outcome_metrics import DEFAULT_COSTS
    from register.scoring.calibration import OUTCOME_KINDS

    fit = esub.add_parser("fit-weights", help="the seven weights fitted to the register's known outcomes, with "
                                              "bootstrap intervals and cross-validated AUC, AP and expected cost "
                                              "against the active profile's")
    fit.set_defaults(func=cmd_fit_weights)
    compare = esub.add_parser("compare-aggregations", help="additive with floors, max, multiplicative and "
                                                           "interaction models compared on the register's outcomes")
    compare.set_defaults(func=cmd_compare_aggregations)
    for parser in (fit, compare):
        parser.add_argument("--kind", action="append", default=[], choices=tuple(OUTCOME_KINDS),
                            help="only outcomes of this kind (repeat for more; default: every kind)")
        add_fit_options(parser, DEFAULT_FOLDS, DEFAULT_RESAMPLES, DEFAULT_SEED, DEFAULT_COSTS)
        parser.add_argument("--json", action="store_true", help="as JSON")


def add_fit_options(parser, folds: int, resamples: int, seed: int, costs) -> None:
    """The options every fit to outcomes takes (as ``python -m hri_core fit-weights`` names them)."""
    parser.add_argument("--folds", type=int, default=folds, help=f"cross-validation folds (default {folds})")
    parser.add_argument("--resamples", type=int, default=resamples,
                        help=f"bootstrap resamples (default {resamples}, 0 for none)")
    parser.add_argument("--seed", type=int, default=seed, help=f"random seed (default {seed})")
    parser.add_argument("--cost-miss", type=float, default=costs.miss,
                        help=f"cost of releasing a harmful answer (default {costs.miss:g})")
    parser.add_argument("--cost-review", type=float, default=costs.review,
                        help=f"cost of reviewing a harmless answer (default {costs.review:g})")


def fit_costs(args):
    """The costs of ``--cost-miss`` and ``--cost-review``, refused when negative, infinite or both 0."""
    from hri_core.outcome_metrics import Costs
    from register.errors import RegisterError

    if not (0 <= args.cost_miss < float("inf") and 0 <= args.cost_review < float("inf")) \
            or args.cost_miss + args.cost_review == 0:
        raise RegisterError("--cost-miss and --cost-review must be finite numbers >= 0, not both 0")
    return Costs(miss=args.cost_miss, review=args.cost_review)


def _outcomes_or_shortfall(store: Store, args):
    """The register's outcomes of ``--kind``; when too few, the shortfall printed (as JSON with ``--json``) and
    exit 1 returned instead."""
    from register.cli.common import EXIT_FAILED
    from register.scoring.register_outcomes import register_outcomes

    data = register_outcomes(store, tuple(args.kind))
    shortfall = data.shortfall()
    if shortfall is None:
        return data
    if args.json:
        print(json.dumps({"error": shortfall, "data": data.summary()}))
    print(shortfall + " Outcomes come from review decisions, validated feedback and outcome files imported on "
          "the Calibration page.", file=sys.stderr)
    return EXIT_FAILED


def cmd_fit_weights(store: Store, args) -> int:
    from hri_core.cli_outcomes import print_fit
    from register.scoring.register_outcomes import fit_from_register

    costs = fit_costs(args)
    data = _outcomes_or_shortfall(store, args)
    if isinstance(data, int):
        return data
    fit = fit_from_register(store, data.kinds, data_hash=data.data_hash, folds=args.folds,
                            resamples=args.resamples, seed=args.seed, costs=costs)
    output = fit.to_dict()
    output["data"] = {**output["data"], **data.summary()}
    if args.json:
        print(json.dumps(output, allow_nan=False))
        return EXIT_OK
    print_fit(output)
    print(_data_line(data))
    return EXIT_OK


def cmd_compare_aggregations(store: Store, args) -> int:
    from hri_core.cli_outcomes import interval_text, number_text
    from register.scoring.register_outcomes import compare_from_register

    costs = fit_costs(args)
    data = _outcomes_or_shortfall(store, args)
    if isinstance(data, int):
        return data
    rows = compare_from_register(store, data.kinds, data_hash=data.data_hash, folds=args.folds,
                                 resamples=args.resamples, seed=args.seed, costs=costs)
    if args.json:
        print(json.dumps(rows, allow_nan=False))
        return EXIT_OK
    print(f"Aggregation models on {data.n} outcomes of the register, held-out metrics with bootstrap intervals "
          f"(costs: miss {costs.miss:g}, review {costs.review:g})")
    print(f"{'model':<24}{'AUC':>8}  {'interval':<18}{'AP':>8}  {'interval':<18}{'cost':>8}  interval")
    for row in rows:
        print(f"{row['model']:<24}" + "".join(f"{number_text(row[m]):>8}  {interval_text(row[m + '_interval']):<18}"
                                              for m in ("auc", "average_precision", "expected_cost")).rstrip())
    print(_data_line(data))
    return EXIT_OK


def _data_line(data) -> str:
    kinds = ", ".join(f"{k} {v['n']} ({v['harmful']} harmful)" for k, v in data.kind_counts().items())
    left = ", ".join(f"{n} {why.replace('_', ' ')}" for why, n in data.left_out.items() if n)
    return (f"data: {data.n} answer(s) with a known outcome, sha256 {data.data_hash[:16]}...; kinds: {kinds}"
            + (f"; left out: {left}" if left else ""))


def _filters(args):
    from register.console.queries.filters import Filters

    return Filters(use_cases=tuple(args.use_case), models=tuple(args.model))


def _print_json(value: Any) -> int:
    print(json.dumps(value, ensure_ascii=False, indent=2, default=str))
    return EXIT_OK


def cmd_correlation(store: Store, args) -> int:
    import numpy as np

    from register.evidence.correlation import MOVE_TOGETHER, dimension_correlation

    threshold = MOVE_TOGETHER if args.threshold is None else args.threshold
    result = dimension_correlation(store, _filters(args), method=args.method, threshold=threshold)
    if args.json:
        return _print_json(result.as_json())
    print(f"{result.method.capitalize()} correlation of the dimension scores over {result.answers:,} answer(s) "
          "with claims")
    letters = [str(letter) for letter in result.matrix.columns]
    values = result.matrix.to_numpy(dtype=float)
    print("     " + "".join(f"{letter:>8}" for letter in letters))
    for i, row in enumerate(letters):
        print(f"{row:>5}" + "".join("       -" if np.isnan(v) else f"{v:8.3f}" for v in values[i]))
    if result.constant:
        print(f"constant over these answers (no correlation defined): {', '.join(result.constant)}")
    lines = result.pair_lines()
    print(f"pairs with |r| >= {result.threshold:g}: " + ("none" if not lines else ""))
    for line in lines:
        print(f"  {line}")
    return EXIT_OK


def cmd_criticality(store: Store, args) -> int:
    from register.evidence.criticality import criticality_sensitivity, parse_shifts

    shifts = parse_shifts(args.shift) if args.shift else None
    result = criticality_sensitivity(store, _filters(args), flatten=args.flatten, shifts=shifts)
    if args.json:
        return _print_json(result.as_json())
    print(f"{result.scenario}: {result.answers:,} answer(s) rescored under profile v{result.profile_version} as of "
          f"{result.as_of:%Y-%m-%d %H:%M} UTC (nothing written)")
    before, after = result.mean_score_before, result.mean_score_after
    if before is not None and after is not None:
        print(f"mean score {before:.2f} -> {after:.2f}")
    print(f"band changes: {result.band_changes:,}; action changes: {result.action_changes:,}")
    for title, frame in (("bands", result.band_transitions), ("actions", result.action_transitions)):
        print(f"{title} (from -> to: answers)")
        for a, b, n in frame.itertuples(index=False):
            print(f"  {a} -> {b}: {int(n):,}")
    return EXIT_OK


def cmd_feedback_loops(store: Store, args) -> int:
    from register.evidence.feedback_loops import feedback_loops

    result = feedback_loops(store, _filters(args), weeks=args.weeks)
    if args.json:
        return _print_json(result.as_json())
    print(f"{len(result.events):,} resolution(s) of validated feedback; {len(result.series):,} scope-week(s) from "
          f"{result.first_week} to {result.last_week}")
    if result.before_after.empty:
        print("no scope has validated feedback that was resolved: nothing to compare before and after")
    for row in result.before_after.to_dict("records"):
        print(f"{row['use_case'] or '-'} / {row['model'] or '-'}: first resolution {row['first_resolved_at']:%Y-%m-%d}"
              f" ({row['resolutions']} in all); hallucination share {_share(row['share_before'])} before "
              f"({row['answers_before']:,} answers), {_share(row['share_after'])} after ({row['answers_after']:,}); "
              f"s_H {_fraction(row['s_h_before'])} before, {_fraction(row['s_h_after'])} after")
    return EXIT_OK


def cmd_rag_agreement(store: Store, args) -> int:
    from register.evidence.rag_agreement import rag_agreement

    result = rag_agreement(store, _filters(args), replicates=args.replicates, seed=args.seed, limit=args.limit)
    if args.json:
        return _print_json(result.as_json())
    if not result.answers:
        print("no answer with RAGChecker results, claims and retrieved context matches: nothing to compare (import "
              "RAGChecker's checking output: python -m register import checking_outputs.json)")
        return EXIT_OK
    print(f"{result.answers:,} answer(s) with RAGChecker results, claims and retrieved context; bootstrap "
          f"{result.replicates:,} replicates, seed {result.seed}, {result.confidence:.0%} intervals")
    for row in result.correlations.to_dict("records"):
        rho = "undefined" if row["rho"] is None else f"{row['rho']:+.3f}"
        interval = "" if row["low"] is None else f" [{row['low']:+.3f}, {row['high']:+.3f}]"
        print(f"  HRI vs {row['metric']}: rho {rho}{interval} over {row['answers']:,} answer(s)")
    if len(result.disagreements):
        print("answers where the HRI and hallucination disagree most (rank percentiles):")
    for row in result.disagreements.to_dict("records"):
        print(f"  {row['response_id']}: HRI score {row['score']:.1f} (rank {row['hri_rank']:.0%}), hallucination "
              f"{row['hallucination']:.1%} (rank {row['hallucination_rank']:.0%})")
    return EXIT_OK


def _share(value) -> str:
    return "-" if value is None or value != value else f"{value:.1%}"


def _fraction(value) -> str:
    return "-" if value is None or value != value else f"{value:.3f}"
