"""``python -m hri_core fit-weights`` and ``compare-aggregations``: learning from outcomes (HRI paper VI, IX).

    python -m hri_core fit-weights OUTCOMES.jsonl [--json] [--profile FILE] [--as-of ISO_TIME]
        [--folds 5] [--resamples 200] [--seed 0] [--cost-miss 10] [--cost-review 1]
    python -m hri_core compare-aggregations OUTCOMES.jsonl [--json] [same options]

OUTCOMES.jsonl: one interchange response per line (as ``score`` reads it) plus ``"outcome": 0 | 1``
(1 = the answer turned out harmful). ``fit-weights --json`` prints one JSON object with at least
``{"weights": {"F": .., "C": .., "U": .., "O": .., "S": .., "P": .., "H": ..}}`` and its evidence
(``intervals``, ``cv``, ``baseline``, ``n``, ``method``; ``hri_core.outcome_fit``). ``compare-aggregations
--json`` prints a JSON list with one object per aggregation model: ``model``, ``auc``,
``average_precision``, ``expected_cost`` and their intervals (``hri_core.aggregations``). Without
``--json`` both print a readable table.

A line that cannot be used (not JSON, an invalid response, a missing or wrong ``outcome``) is reported on
stderr with its line and field, listed under ``quarantined`` in the JSON, and left out; every valid line
still goes in, and the exit code is then 2 (as for ``score``). Data that cannot carry a fit (too few
answers, one outcome only, identical scores) is named on stderr (and, with ``--json``, printed as
``{"error": ...}``), exit code 2. A file that cannot be read exits 1; bad options exit 64.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from typing import Any

from .aggregations import compare_aggregations
from .cli import EXIT_INVALID_RECORDS, EXIT_NO_FILE, EXIT_OK, Unreadable, _parse_as_of, _records, load_profile_file
from .errors import HRIError
from .outcome_fit import DEFAULT_FOLDS, DEFAULT_RESAMPLES, DEFAULT_SEED, OutcomeSet, fit_weights, read_outcomes
from .outcome_metrics import Costs
from .profile import ScoringProfile
from .vocabulary import DIMENSIONS


def _read(args: argparse.Namespace, profile: ScoringProfile, as_of: datetime) -> OutcomeSet | int:
    """The scored outcomes, each quarantined line named on stderr; or the exit code of an unreadable file."""
    try:
        data = read_outcomes(_records(args.input), profile, as_of)
    except Unreadable as error:
        print(str(error), file=sys.stderr)
        return EXIT_NO_FILE
    for item in data.quarantined:
        rid = f" (response_id={item.response_id})" if item.response_id else ""
        print(f"{args.input}:{item.where}{rid}: {item.field}: {item.message}", file=sys.stderr)
    return data


def _costs(args: argparse.Namespace) -> Costs:
    for name in ("cost_miss", "cost_review"):
        value = getattr(args, name)
        if not value >= 0 or value == float("inf"):
            raise ValueError(f"--{name.replace('_', '-')} must be a finite number >= 0, got {value}")
    if args.cost_miss == 0 and args.cost_review == 0:
        raise ValueError("--cost-miss and --cost-review cannot both be 0")
    return Costs(miss=args.cost_miss, review=args.cost_review)


def _failed(error: HRIError, args: argparse.Namespace, data: OutcomeSet) -> int:
    for problem in error.problems:
        print(f"{args.input}: {problem.loc or '(data)'}: {problem.message}", file=sys.stderr)
    if args.json:
        print(json.dumps({"error": error.as_dict(), "n": data.n,
                          "quarantined": [q.to_dict() for q in data.quarantined]}))
    return EXIT_INVALID_RECORDS


def _summary_line(data: OutcomeSet) -> str:
    return f"{data.n} answer(s) with an outcome ({int(data.outcome.sum())} harmful), " \
           f"{len(data.quarantined)} problem(s) in quarantined line(s)"


def interval_text(interval: list[float] | None) -> str:
    """An interval as ``[low, high]`` to 3 decimals, ``-`` when there is none (also ``register evidence``'s)."""
    return "-" if interval is None else f"[{interval[0]:.3f}, {interval[1]:.3f}]"


def number_text(value: float | None) -> str:
    """A metric to 3 decimals, ``-`` when undefined."""
    return "-" if value is None else f"{value:.3f}"


def cmd_fit_weights(args: argparse.Namespace) -> int:
    """The seven weights fitted to outcomes, with intervals and cross-validated metrics."""
    costs, profile, as_of = _costs(args), load_profile_file(args.profile), _parse_as_of(args.as_of)
    data = _read(args, profile, as_of)
    if isinstance(data, int):
        return data
    try:
        fit = fit_weights(data, profile, as_of, folds=args.folds, resamples=args.resamples,
                          seed=args.seed, costs=costs)
    except HRIError as error:
        return _failed(error, args, data)
    output = fit.to_dict()
    if args.json:
        print(json.dumps(output, allow_nan=False))
    else:
        print_fit(output)
    print(_summary_line(data), file=sys.stderr)
    return EXIT_INVALID_RECORDS if data.quarantined else EXIT_OK


def print_fit(output: dict[str, Any]) -> None:
    """The fit's JSON (``WeightFit.to_dict``) as readable tables: weights with intervals, held-out metrics."""
    base = output["baseline"]
    print(f"Weights fitted to {output['n']} outcomes ({output['harmful']} harmful); "
          f"{int(output['level'] * 100)}% bootstrap intervals ({output['bootstrap']['resamples']} resamples)")
    print(f"{'dim':<4}{'fitted':>9}  {'interval':<18}{'profile':>9}")
    for d in DIMENSIONS:
        key = d.value
        print(f"{key:<4}{output['weights'][key]:>9.3f}  {interval_text(output['intervals'][key]):<18}"
              f"{base['weights'][key]:>9.3f}")
    cv = output["cv"]
    print(f"\nHeld-out ({cv['folds']}-fold) metrics; baseline: profile {base['profile']['name']} "
          f"v{base['profile']['version']}; costs: miss {output['costs']['miss']:g}, "
          f"review {output['costs']['review']:g}")
    print(f"{'':<12}{'AUC':>8}  {'interval':<18}{'AP':>8}  {'interval':<18}{'cost':>8}  {'interval':<18}")
    for name in ("fitted", "baseline", "difference"):
        row = cv[name]
        print(f"{name:<12}" + "".join(f"{number_text(row[m]):>8}  {interval_text(row[m + '_interval']):<18}"
                                      for m in ("auc", "average_precision", "expected_cost")))
    print(f"\nmethod: {output['method']}")


def cmd_compare_aggregations(args: argparse.Namespace) -> int:
    """The paper's additive-with-floors rule against max, multiplicative and interaction models."""
    costs, profile = _costs(args), load_profile_file(args.profile)
    data = _read(args, profile, _parse_as_of(args.as_of))
    if isinstance(data, int):
        return data
    try:
        rows = compare_aggregations(data, profile, folds=args.folds,
                                    resamples=args.resamples, seed=args.seed, costs=costs)
    except HRIError as error:
        return _failed(error, args, data)
    if args.json:
        print(json.dumps(rows, allow_nan=False))
    else:
        print(f"Aggregation models on {data.n} outcomes, held-out metrics with "
              f"bootstrap intervals (costs: miss {costs.miss:g}, review {costs.review:g})")
        print(f"{'model':<22}{'AUC':>8}  {'interval':<18}{'AP':>8}  {'interval':<18}{'cost':>8}  interval")
        for row in rows:
            print(f"{row['model']:<22}" + "".join(
                f"{number_text(row[m]):>8}  {interval_text(row[m + '_interval']):<18}"
                for m in ("auc", "average_precision", "expected_cost")).rstrip())
    print(_summary_line(data), file=sys.stderr)
    return EXIT_INVALID_RECORDS if data.quarantined else EXIT_OK


def add_outcome_commands(sub: Any) -> None:
    """Register ``fit-weights`` and ``compare-aggregations`` on the CLI's subparsers."""
    for name, func, help_text in (
            ("fit-weights", cmd_fit_weights, "fit the seven weights to known outcomes (simplex, max likelihood)"),
            ("compare-aggregations", cmd_compare_aggregations,
             "compare additive-with-floors, max, multiplicative and interaction models on known outcomes")):
        command = sub.add_parser(name, help=help_text)
        command.add_argument("input", help='JSON Lines: an interchange response per line plus "outcome": 0 | 1')
        command.add_argument("--json", action="store_true", help="print JSON instead of a table")
        command.add_argument("--profile", help="profile JSON file scoring the answers (default: the paper's)")
        command.add_argument("--as-of", help="scoring time, ISO 8601 (default: now); fixes feedback decay")
        command.add_argument("--folds", type=int, default=DEFAULT_FOLDS, help="cross-validation folds (default 5)")
        command.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES,
                             help="bootstrap resamples (default 200, 0 for none)")
        command.add_argument("--seed", type=int, default=DEFAULT_SEED, help="random seed (default 0)")
        command.add_argument("--cost-miss", type=float, default=Costs().miss,
                             help="cost of releasing a harmful answer (default 10)")
        command.add_argument("--cost-review", type=float, default=Costs().review,
                             help="cost of reviewing a harmless answer (default 1)")
        command.set_defaults(func=func)
