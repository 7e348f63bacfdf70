"""``profiles draft-from-fit``: weights fitted from outcomes become a draft profile with their evidence.

    python -m register profiles draft-from-fit OUTCOMES.jsonl [--name NAME] [--as-of ISO] [--folds 5]
        [--resamples 200] [--seed 0] [--cost-miss 10] [--cost-review 1] [--json]
    python -m register profiles draft-from-fit --from-register [--kind KIND ...] [same options but --as-of]

With ``--from-register`` the outcomes are the register's own (``register.scoring.register_outcomes``: review
decisions, audit findings, validated feedback, imported outcomes with their stored dimension scores; ``--kind``
keeps some kinds only), the fit is ``python -m register evidence fit-weights``'s, and the draft's record names the
rows' hash and kinds (``draft_from_register``); too few outcomes exit 1 saying how many there are and are needed.

OUTCOMES.jsonl is what ``python -m hri_core fit-weights`` reads (an interchange response per line plus
``"outcome": 0 | 1``). The answers are scored under the active profile, the weights fitted
(``register.scoring.fitted_weights``) and stored as a draft over it, the fit's record attached; the
draft is then previewed and published in the console like any other (four eyes). Lines that cannot be
used are named on stderr (line and field) and left out, exit code 2; data that cannot carry a fit exits 1
with the reason.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from register.cli.common import EXIT_OK, EXIT_QUARANTINED, cli_actor, client_path, initialise
from register.db.store import Store
from register.errors import RegisterError


def add_commands(sub) -> None:
    from hri_core.outcome_fit import DEFAULT_FOLDS, DEFAULT_RESAMPLES, DEFAULT_SEED
    from hri_core.outcome_metrics import DEFAULT_COSTS

    prof = sub.add_parser("profiles", help="scoring profiles: drafts from outcome fits")
    psub = prof.add_subparsers(dest="profiles_command", required=True)
    fit = psub.add_parser("draft-from-fit", help="fit the seven weights to known outcomes and store them as a draft "
                                                 "profile with the fit's evidence")
    from register.scoring.calibration import OUTCOME_KINDS

    fit.add_argument("outcomes", type=client_path, nargs="?", help='JSON Lines: an interchange response per line '
                                                                   'plus "outcome": 0 | 1')
    fit.add_argument("--from-register", action="store_true",
                     help="fit to the register's own outcomes (review decisions, validated feedback, imported "
                          "outcomes) instead of a file")
    fit.add_argument("--kind", action="append", default=[], choices=tuple(OUTCOME_KINDS),
                     help="with --from-register: only outcomes of this kind (repeat for more)")
    fit.add_argument("--name", help="the draft's name (default: the active profile's name + '+outcome-fit')")
    fit.add_argument("--as-of", help="scoring time, ISO 8601 (default: now); fixes feedback decay")
    fit.add_argument("--folds", type=int, default=DEFAULT_FOLDS, help="cross-validation folds (default 5)")
    fit.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES, help="bootstrap resamples (default 200)")
    fit.add_argument("--seed", type=int, default=DEFAULT_SEED, help="random seed (default 0)")
    fit.add_argument("--cost-miss", type=float, default=DEFAULT_COSTS.miss,
                     help="cost of releasing a harmful answer (default 10)")
    fit.add_argument("--cost-review", type=float, default=DEFAULT_COSTS.review,
                     help="cost of reviewing a harmless answer (default 1)")
    fit.add_argument("--json", action="store_true", help="print the draft's version and the fit as JSON")
    fit.set_defaults(func=cmd_draft_from_fit)


def _records(path: str) -> Iterator[tuple[str, Any]]:
    """``(where, record)`` per non-blank line; a line that is not UTF-8 or not one JSON object is its error."""
    from hri_core.errors import FieldProblem, RecordError
    from hri_core.readers import iter_jsonl

    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise RegisterError(f"{path}: cannot read: {error.strerror or error}") from error
    lines: list[str] = []
    undecodable: set[int] = set()
    for number, raw in enumerate(data.splitlines(), start=1):
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            undecodable.add(number)
            lines.append("\x00")  # not JSON: iter_jsonl refuses it; the reason is given below
    for number, _raw, record in iter_jsonl(lines):
        if number in undecodable:
            record = RecordError([FieldProblem("", "the line is not valid UTF-8 text")])
        yield f"line {number}", record


def cmd_draft_from_fit(store: Store, args) -> int:
    import json

    from hri_core.outcome_metrics import Costs
    from register.cli.scoring import _parse_time
    from register.scoring.fitted_weights import draft_from_fit, draft_from_register
    from register.scoring.register_outcomes import register_outcomes

    if not (args.cost_miss >= 0 and args.cost_review >= 0) or args.cost_miss + args.cost_review == 0:
        raise RegisterError("--cost-miss and --cost-review must be numbers >= 0, not both 0")
    if args.from_register == (args.outcomes is not None):
        raise RegisterError("name an OUTCOMES.jsonl file or --from-register (one of the two)")
    if args.kind and not args.from_register:
        raise RegisterError("--kind chooses among the register's outcomes: use it with --from-register")
    if args.from_register and args.as_of:
        raise RegisterError("--as-of scores a file's answers; the register's outcomes carry their stored scores")
    as_of = _parse_time(args.as_of) if args.as_of else None
    initialise(store)  # a fresh database gets its default profile: the fit's baseline and the draft's base
    costs = Costs(miss=args.cost_miss, review=args.cost_review)
    if args.from_register:
        shortfall = register_outcomes(store, tuple(args.kind)).shortfall()
        if shortfall:
            raise RegisterError(shortfall)
        draft = draft_from_register(store, cli_actor(), kinds=tuple(args.kind), folds=args.folds,
                                    resamples=args.resamples, seed=args.seed, costs=costs, name=args.name)
    else:
        draft = draft_from_fit(store, cli_actor(), _records(args.outcomes), source_name=Path(args.outcomes).name,
                               as_of=as_of, folds=args.folds, resamples=args.resamples, seed=args.seed, costs=costs,
                               name=args.name)
    fit = draft.fit
    for item in fit.quarantined:
        rid = f" (response_id={item.response_id})" if item.response_id else ""
        print(f"{args.outcomes}:{item.where}{rid}: {item.field}: {item.message}", file=sys.stderr)
    if args.json:
        print(json.dumps({"profile_version": draft.profile_version, "elicitation_id": draft.elicitation_id,
                          "fit": fit.to_dict()}, allow_nan=False))
    else:
        cv = fit.cv
        print(f"draft profile v{draft.profile_version}: weights fitted to {fit.n} outcomes ({fit.harmful} harmful), "
              f"evidence in elicitation record {draft.elicitation_id}")
        print("  " + "  ".join(f"{k} {w:.3f}" for k, w in fit.weights.items()))
        print(f"  held-out AUC {cv['fitted']['auc']:.3f} (active weights {cv['baseline']['auc']:.3f}), "
              f"average precision {cv['fitted']['average_precision']:.3f} "
              f"({cv['baseline']['average_precision']:.3f})")
        print("  preview its impact and publish it in the console (a second person publishes)")
    return EXIT_QUARANTINED if fit.quarantined else EXIT_OK
