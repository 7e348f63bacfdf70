"""``python -m register``: the register's command line, beside the UI and calling the same functions.

    python -m register [--db PATH] COMMAND ...

    init                               create or migrate the database; create the default profile
    import PATH... [--no-score]        import files or folders (.jsonl/.json, .csv, .parquet; RAGChecker results
                                       and RAGAS tables recognised by content, see --help); a fresh
           [--chunk-size N] [--json]   database is initialised first; progress on stderr, the report on
           [--resume] [--via-inbox]    stdout; --resume finishes the interrupted import of each file;
           [--wait SECONDS]            --via-inbox: when the running console holds the database, hand the
                                       files to its inbox and wait for its report (asked at a terminal when
                                       no console listens for commands)
    rescore [--batch N] [--as-of ISO]  score current responses (all, or one batch) under the active profile
    keep-view VERSION                  keep an older profile version's view as a read model of its own, so the
                                       console's profile-version filter reads it as fast as the current scores
    quarantine list [--all] [--json]   open quarantined records (--all: resolved and discarded ones too)
    quarantine export FILE [--all]     the open quarantine as JSON Lines, to fix and import again
    demo [--synthetic N [--bulk]]      load the demo set (idempotent), plus N synthetic responses
                                       (--bulk: 20,000 imported, the rest SQL copies, for benchmarks)
    export FILE [--format F] [--batch N]  current scores as csv, parquet or jsonl (default: from FILE's extension)
    audit verify [--anchor FILE|signoff:ID]...
                                       recompute the keyed hash chain of the audit trail and check each
                                       anchor; exit 1 naming the first broken event or missing anchor
    audit anchor [--out FILE]          the trail's head (seq, hash, event count, time) as JSON
    audit rotate-key [--lost]          sign new events with a new key (a rotation event signed with the
                                       old key); --lost: the current key is gone, start a new one
    users bootstrap [--username NAME]  first start: create an admin with a one-time password (printed
                                       once) when no account exists
    users list | add NAME --role R | reset-password NAME | set-role NAME ROLE | disable NAME | enable NAME
    tokens create --user NAME [--expires-days N] [--name TEXT] [--json]
                                       a personal API token acting as NAME (`Authorization: Bearer TOKEN` on
                                       /api/v1, with the account's role at each call): printed once, stored
                                       hashed; --json: {"token", "token_id", "username", "expires_at"}
    tokens list [--user NAME] [--json] | revoke TOKEN_ID
                                       tokens with their state (never their secrets); revoke one at once
    status                             counts of responses, claims, scores, scoring failures, open
                                       quarantine, unfinished imports (and how to finish them); active profile;
                                       a profile publish whose rescore never ran (finish it: rescore)
    checklist run [--fail-on violations] [--claims FILE [--sources FILE]] [--record] [--json]
                                       the pre-submission checklist's automated checks (paper Table IX);
                                       with --fail-on violations the exit code is 1 when any check fails.
                                       --claims/--sources check register files (CSV/Excel) in a temp database
    checklist sign RUN_ID --decisions FILE
                                       sign a recorded run: per item {"decision": pass|fail|waived, "reason"}
                                       (JSON object keyed by item number); the console's rules and four eyes
    governance import KIND FILE        import a sources or claims register file (CSV/Excel; updates by key)
    governance export KIND FILE        export the sources or claims register (CSV/Excel, formula-escaped)
    authority check [--json]           CLAIM's Authority step on the current answers: each sourced claim's
                                       source allowed, current and authoritative; exit 2 when any check
                                       fails (findings with their proposed labels), 0 when none
    settings [NAME...]                 every HRI_* setting in force with its meaning, or just the named
                                       values, one per line (opens no database)
    queue [--json]                     the review queue: current answers decided review or block that no
                                       reviewer decided, oldest first, with the decision's reasons; --json: a
                                       JSON list (response_id, revision, use_case, decision, decision_reasons,
                                       score, band, action, age_days); empty: []
    export-parquet DIR                 current responses and claims as Parquet (DIR/responses/, DIR/claims/)
                                       and the active profile (DIR/profile.json), for the Spark scoring job
    import-scores DIR                  the Spark job's scores (DIR/scores/, DIR/score_floors/) as a score run
    judge check PAIRS.jsonl [--profile F] [--reasons]
                                       one verdict line per claim/evidence pair (opens no database)
    judge eval PAIRS.jsonl [--profile F]
                                       the judge's metrics against the pairs' gold labels, as JSON
    verify INPUT.jsonl [--profile F] [--link-threshold X] [--json]
                                       extract, link and judge the claims of each answer (question, answer,
                                       retrieved_context, gt_answer); store them as proposals and a new scored
                                       revision (unconfirmed claims count as UNSUPPORTED); exit 2 on skipped lines
    judge-agreement [--json] [--threshold T --out FILE [--profile F]]
                                       each judge's kappa, false clearance and coverage by confidence against the
                                       people's decisions; with --threshold, write the profile's next version
    testset draft|save|export|run|report NAME ...
                                       critical-information test sets: drafted offline from the register, edited
                                       as new versions, run against an assistant (or imported answers), verified,
                                       and reported on the critical questions alone
    serve [--port N] [--address A]     the console and the HTTP API (/api/v1, docs at /api/v1/docs) in the
                                       foreground, as `make run` starts them; stops cleanly on SIGTERM
    monitors list|add|remove|check|deliveries|webhook-add|webhook-remove [--json]
                                       thresholds on the headline figures (High + Critical share, scope s_H,
                                       answers failing Authority, critical-information hallucination), checked
                                       after every score run; alerts POSTed as JSON to webhooks (docs/monitors.md).
                                       A command that scored ends by checking them and delivering the alerts
                                       due; `check` exits 2 when a monitor is fired
    profiles draft-from-fit OUTCOMES.jsonl|--from-register [--json] [--as-of ISO] [--resamples N] [--seed N]
                                       fit the seven weights to known outcomes (hri_core fit-weights) and store
                                       them as a draft profile with the fit's evidence; preview and publish it in
                                       the console (four eyes); exit 2 when lines were left out
    evidence correlation|criticality|feedback-loops|rag-agreement [--use-case U] [--model M] [--json]
                                       the Evidence page's figures (register.evidence), nothing written:
                                       the dimension scores' correlation matrix; band and action transitions
                                       with criticality flattened (--flatten) or shifted (--shift legal=+2);
                                       hallucination share and s_H per scope before and after resolved
                                       feedback; Spearman's rho of the HRI with RAGChecker's metrics
    evidence fit-weights|compare-aggregations [--kind K] [--resamples N] [--json]
                                       the weights fitted to the register's own outcomes and the aggregation
                                       models compared on them; exit 1 when there are too few outcomes

Database: ``--db PATH``, else the ``HRI_DB`` environment variable, else ``var/hri.duckdb``. DuckDB
allows one read-write process per file: while the console holds it, each command is handed to the console's process,
which carries it out with the same output and exit code (``handoff``: only for the user the console runs as; the
paths it names are read from this command line's working directory).

Acting user: every write is recorded in the audit trail as
``Actor(name=$HRI_ACTOR or the login name, role="system")``.

Exit codes: 0 success; 1 the command failed (the error is printed once, as ``title: message``; a
refused file says "File refused" and nothing of it was written) or the audit trail does not verify;
2 an import finished but quarantined at least one record, or a rescore sent responses it could not
score to review, or ``authority check`` found a failed check; 64 usage error (unknown command or option,
``--chunk-size`` below 1).

Each group of commands is a module of this package that adds its own sub-parsers: ``admin`` (init,
search-index, status, settings), ``imports`` (import, also through the console's inbox; quarantine;
demo), ``scoring`` (rescore, keep-view, export, export-parquet, import-scores), ``audit``, ``users``, ``tokens``,
``governance`` (checklist, governance, authority), ``verify`` (judge, verify, judge-agreement,
testset), ``monitors``, ``profiles`` (draft-from-fit) and ``evidence``; ``common`` holds what they share;
``handoff`` and ``handoff_server`` are the two ends of the hand-off to a running console.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from register.cli import (
    admin,
    audit,
    evidence,
    governance,
    handoff,
    imports,
    lenses,
    monitors,
    profiles,
    scoring,
    serve,
    tokens,
    users,
    verify,
)
from register.cli.admin import cmd_settings
from register.cli.common import EXIT_FAILED, Parser, cli_actor, render_error
from register.db.store import Store, database_path_from_env
from register.errors import DatabaseInUse, HandoffFailed
from register.settings import InvalidSetting, settings

# Each command imports the modules it needs when it runs (not at the top): `--help`, `settings` and
# `status` then start without loading pandas, pyarrow, pandera or the scorer. No cycle is involved.


def _debug() -> bool:
    """``HRI_DEBUG``: re-raise after rendering, for the traceback (a bad settings value means no)."""
    try:
        return settings().debug
    except InvalidSetting:
        return False


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m register", description="HRI register: database, import, export, audit")
    parser.add_argument("--db", help="database file (default: $HRI_DB, else var/hri.duckdb)")
    sub = parser.add_subparsers(dest="command", required=True)
    # `--help` lists the commands in the order they are added here, which scripts and people rely on: a
    # group whose commands are not neighbours in that list adds them with one function per place
    admin.add_init(sub)
    imports.add_import(sub)
    scoring.add_rescore(sub)
    admin.add_search_index(sub)
    imports.add_quarantine(sub)
    imports.add_demo(sub)
    scoring.add_export(sub)
    audit.add_commands(sub)
    users.add_commands(sub)
    tokens.add_commands(sub)
    admin.add_status(sub)
    governance.add_commands(sub)
    admin.add_settings(sub)
    scoring.add_spark_commands(sub)
    verify.add_commands(sub)
    serve.add_serve(sub)
    monitors.add_commands(sub)
    profiles.add_commands(sub)
    lenses.add_commands(sub)
    evidence.add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)  # a usage error exits 64 here, before any database or hand-off
    store = None
    try:
        if args.func is not cmd_settings and getattr(args, "needs_store", True):  # these must not create a database
            database = Path(args.db) if args.db else database_path_from_env()
            try:
                store = Store(database)
            except DatabaseInUse as held:
                return _carried_out_by_the_holder(database, argv, args, held)
        status = args.func(store, args)
        if store is not None:  # runs it scored are checked, and alerts due delivered (register.monitors.worker)
            monitors.after_command(store)
        return status
    except KeyboardInterrupt:
        print("Interrupted: committed chunks are kept; the open batch stays unfinished (see `status`); finish it "
              "with: python -m register import --resume PATH", file=sys.stderr)
        return EXIT_FAILED
    except Exception as error:  # noqa: BLE001 - rendered once, here
        render_error(error)
        if _debug():
            raise
        return EXIT_FAILED
    finally:
        if store is not None:
            store.close()


def _carried_out_by_the_holder(database: Path, argv: list[str], args, held: DatabaseInUse) -> int:
    """The command, when another process holds the database: ``import --via-inbox`` through the console's inbox, as
    asked; else handed to the console listening for this database (``handoff``); else, with no console listening,
    an import through the inbox when a terminal's prompt says yes, or ``DatabaseInUse``."""
    if getattr(args, "via_inbox", False) and imports.offer_inbox(args, held):
        return imports.cmd_import_via_inbox(database, args)
    refusal = handoff.refusal(args)
    if refusal is not None:
        raise HandoffFailed(f"{held}; {refusal}")
    code = handoff.hand_off(database, argv, cli_actor().name)
    if code is not None:
        return code
    if imports.offer_inbox(args, held):
        return imports.cmd_import_via_inbox(database, args)
    raise DatabaseInUse(f"{held} (no console of this database listens at {handoff.socket_path(database)}: a running "
                        "console would carry the command out itself)")


def run_with_store(store: Store, args) -> int:
    """A parsed command against a store this process already holds (the console's, for a command handed to it):
    the command's exit code, its errors rendered once as ``title: message`` (exit 1), as ``main`` does. The monitors'
    round that ends a direct command is the console's own worker's there (``register.monitors.worker``): two rounds
    at once in one process must not deliver an alert twice."""
    try:
        return args.func(store, args)
    except Exception as error:  # noqa: BLE001 - rendered once, here
        render_error(error)
        if _debug():
            logging.getLogger(__name__).exception("python -m register %s failed", args.command)
        return EXIT_FAILED
