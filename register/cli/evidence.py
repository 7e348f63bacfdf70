"""``evidence correlation|criticality|feedback-loops|rag-agreement``: the Evidence page's figures from the command
line, each the same function the page reads (``register.evidence``), as text or, with ``--json``, as JSON.

Every subcommand takes the console's scope filters ``--use-case`` and ``--model`` (repeat for more; default:
every current answer). Nothing is written: a console holding the database carries them out as it would any
command (the hand-off, ``register.cli.handoff``).
"""

from __future__ import annotations

import json
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
