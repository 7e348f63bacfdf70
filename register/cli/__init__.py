"""``python -m register``: the register's command line, beside the UI and calling the same functions.

    python -m register [--db PATH] COMMAND ...

    init                               create or migrate the database; create the default profile
    import PATH... [--no-score]        import files or folders (.jsonl/.json, .csv, .parquet; RAGChecker results
                                       and RAGAS tables recognised by content, see --help); a fresh
           [--chunk-size N] [--json]   database is initialised first; progress on stderr, the report on
           [--resume] [--via-inbox]    stdout; --resume finishes the interrupted import of each file;
           [--wait SECONDS]            --via-inbox: when the running console holds the database, hand the
                                       files to its inbox and wait for its report (asked on a terminal)
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
    status                             counts of responses, claims, scores, scoring failures, open
                                       quarantine, unfinished imports (and how to finish them); active profile
    checklist run [--fail-on violations] [--claims FILE [--sources FILE]] [--record] [--json]
                                       the pre-submission checklist's automated checks (paper Table IX);
                                       with --fail-on violations the exit code is 1 when any check fails.
                                       --claims/--sources check register files (CSV/Excel) in a temp database
    governance import KIND FILE        import a sources or claims register file (CSV/Excel; updates by key)
    governance export KIND FILE        export the sources or claims register (CSV/Excel, formula-escaped)
    authority check [--json]           CLAIM's Authority step on the current answers: each sourced claim's
                                       source allowed, current and authoritative; exit 2 when any check
                                       fails (findings with their proposed labels), 0 when none
    settings [NAME...]                 every HRI_* setting in force with its meaning, or just the named
                                       values, one per line (opens no database)
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

Database: ``--db PATH``, else the ``HRI_DB`` environment variable, else ``var/hri.duckdb``. DuckDB
allows one read-write process per file: stop the app while running commands that write.

Acting user: every write is recorded in the audit trail as
``Actor(name=$HRI_ACTOR or the login name, role="system")``.

Exit codes: 0 success; 1 the command failed (the error is printed once, as ``title: message``; a
refused file says "File refused" and nothing of it was written) or the audit trail does not verify;
2 an import finished but quarantined at least one record, or a rescore sent responses it could not
score to review, or ``authority check`` found a failed check; 64 usage error (unknown command or option,
``--chunk-size`` below 1).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from register.cli import audit, governance, imports, scoring, users, verify
from register.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    Parser,
    cli_actor,
    progress,
    render_error,
)
from register.db.store import Store, database_path_from_env
from register.errors import DatabaseInUse
from register.settings import PREFIX, InvalidSetting, Settings, declared, env_name, settings

# Each command imports the modules it needs when it runs (not at the top): `--help`, `settings` and
# `status` then start without loading pandas, pyarrow, pandera or the scorer. No cycle is involved.


def _debug() -> bool:
    """``HRI_DEBUG``: re-raise after rendering, for the traceback (a bad settings value means no)."""
    try:
        return settings().debug
    except InvalidSetting:
        return False


# --- commands ----------------------------------------------------------------------------------


def cmd_init(store: Store, args) -> int:
    from register.scoring.profiles import active_profile, ensure_default_profile

    ensure_default_profile(store, cli_actor())
    applied = store.applied_migrations
    print(f"database {store.path}: " + (f"applied {', '.join(applied)}" if applied else "schema up to date")
          + f"; active scoring profile v{active_profile(store).version}")
    return EXIT_OK


def cmd_search_index(store: Store, args) -> int:
    from register.ingest import search_index

    before = search_index.state(store)
    indexed = search_index.catch_up(store, cli_actor(), progress=None if args.quiet else progress)
    after = search_index.state(store)
    print(f"search index: {indexed:,} revision(s) indexed now ({before.pending:,} were pending); "
          f"{after.words:,} words, {after.postings:,} postings, {after.pairs:,} word pairs, "
          f"{after.pair_postings:,} pair postings, {after.separators:,} runs of separators, "
          f"{after.separator_postings:,} run postings, {after.character_masks:,} masks of letters and digits, "
          f"every revision up to key {after.indexed_through:,}")
    if args.check:
        problems = search_index.check(store)
        for problem in problems:
            print(f"search index: {problem}", file=sys.stderr)
        if problems:
            return EXIT_FAILED
        print("search index: equal to the words, word pairs, runs of separators and letters and digits of the texts "
              "it covers")
    return EXIT_OK


def cmd_status(store: Store, args) -> int:
    from register.errors import NotFound
    from register.ingest.batches import unfinished_batches
    from register.scoring.profiles import active_profile

    status: dict = store.one("""
        SELECT (SELECT count(*) FROM responses WHERE is_current) AS responses,
               (SELECT count(*) FROM responses WHERE NOT is_current) AS earlier_revisions,
               (SELECT count(*) FROM claims c JOIN responses r USING (response_id, revision) WHERE r.is_current)
                   AS claims,
               (SELECT count(*) FROM scores WHERE is_current) AS current_scores,
               (SELECT count(*) FROM scores WHERE is_current AND scoring_failure IS NOT NULL) AS scoring_failures,
               (SELECT count(*) FROM quarantine WHERE status = 'open') AS open_quarantine,
               (SELECT count(*) FROM import_batches) AS import_batches,
               (SELECT count(*) FROM audit_events) AS audit_events
    """)
    try:
        status["active_profile_version"] = active_profile(store).version
    except NotFound:
        status["active_profile_version"] = None
    unfinished = unfinished_batches(store)
    status["unfinished_batches"] = len(unfinished)
    print(f"database: {store.path}")
    for key, value in status.items():
        print(f"{key}: {value if value is not None else 'none (run init)'}")
        if key == "scoring_failures" and value:  # failed closed: in the review queue; say which and why
            for rid, why in store.query("SELECT response_id, scoring_failure FROM scores WHERE is_current "
                                        "AND scoring_failure IS NOT NULL ORDER BY response_id LIMIT 10"):
                print(f"  {rid}: {why}")
            if value > 10:
                print(f"  ... and {value - 10:,} more (in the review queue)")
    for row in unfinished:  # an import that was killed or interrupted: say how to finish it
        print(f"  batch {row['batch_id']} {row['source_name']}: {row['records_total']:,} records stored "
              f"({row['accepted']:,} accepted, {row['quarantined']:,} quarantined), started "
              f"{row['started_at']:%Y-%m-%d %H:%M} UTC by {row['actor_name']}, never finished; finish it: "
              f"python -m register import --resume {row['source_name']}")
    return EXIT_OK


def cmd_settings(_store: None, args) -> int:
    """Print every setting in force with its meaning, or just the named values (one per line)."""
    current = settings()  # InvalidSetting names every bad variable
    fields = [name.removeprefix(PREFIX).lower() for name in args.names]
    unknown = [name for name, field in zip(args.names, fields, strict=True) if field not in Settings.model_fields]
    if unknown:
        print(f"Usage error: unknown setting(s) {', '.join(unknown)}; declared: {', '.join(declared())}",
              file=sys.stderr)
        return EXIT_USAGE
    for field in fields or Settings.model_fields:
        value = getattr(current, field)
        shown = "" if value is None else (int(value) if isinstance(value, bool) else value)
        print(shown if args.names else f"{env_name(field)}={shown}  # {Settings.model_fields[field].description}")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m register", description="HRI register: database, import, export, audit")
    parser.add_argument("--db", help="database file (default: $HRI_DB, else var/hri.duckdb)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("init", help="create or migrate the database and the default profile").set_defaults(func=cmd_init)

    imports.add_import(sub)

    scoring.add_rescore(sub)

    sidx = sub.add_parser("search-index", help="index the responses not yet in the search index (import does it "
                                               "too); --check compares the index with the texts")
    sidx.add_argument("--check", action="store_true", help="also recompute the words and compare (a full scan)")
    sidx.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    sidx.set_defaults(func=cmd_search_index)

    imports.add_quarantine(sub)

    imports.add_demo(sub)

    scoring.add_export(sub)

    audit.add_commands(sub)

    users.add_commands(sub)

    sub.add_parser("status", help="counts and the active profile").set_defaults(func=cmd_status)

    governance.add_commands(sub)

    sett = sub.add_parser("settings", help="the HRI_* settings in force (opens no database)")
    sett.add_argument("names", nargs="*", metavar="NAME", help="e.g. port or HRI_PORT: print just these values")
    sett.set_defaults(func=cmd_settings)
    scoring.add_spark_commands(sub)

    verify.add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    store = None
    try:
        if args.func is not cmd_settings and getattr(args, "needs_store", True):  # these must not create a database
            database = Path(args.db) if args.db else database_path_from_env()
            try:
                store = Store(database)
            except DatabaseInUse as held:
                if not imports.offer_inbox(args, held):
                    raise
                return imports.cmd_import_via_inbox(database, args)
        return args.func(store, args)
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
