"""``python -m register``: the register's command line, beside the UI and calling the same functions.

    python -m register [--db PATH] COMMAND ...

    init                               create or migrate the database; create the default profile
    import PATH... [--no-score]        import files or folders (.jsonl/.json, .csv, .parquet); a fresh
           [--chunk-size N] [--json]   database is initialised first; progress on stderr, the report on
           [--resume]                  stdout; --resume finishes the interrupted import of each file
    rescore [--batch N] [--as-of ISO]  score current responses (all, or one batch) under the active profile
    quarantine list [--all] [--json]   open quarantined records (--all: resolved ones too)
    quarantine export FILE [--all]     the open quarantine as JSON Lines, to fix and import again
    demo [--synthetic N]               load the demo set (idempotent), plus N synthetic responses
    export FILE [--format F] [--batch N]  current scores as csv, parquet or jsonl (default: from FILE's extension)
    audit verify                       recompute the hash chain of the audit trail; exit 1 naming the
                                       first broken event
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
    settings [NAME...]                 every HRI_* setting in force with its meaning, or just the named
                                       values, one per line (opens no database)
    export-parquet DIR                 current responses and claims as Parquet (DIR/responses/, DIR/claims/)
                                       and the active profile (DIR/profile.json), for the Spark scoring job
    import-scores DIR                  the Spark job's scores (DIR/scores/, DIR/score_floors/) as a score run

Database: ``--db PATH``, else the ``HRI_DB`` environment variable, else ``var/hri.duckdb``. DuckDB
allows one read-write process per file: stop the app while running commands that write.

Acting user: every write is recorded in the audit trail as
``Actor(name=$HRI_ACTOR or the login name, role="system")``.

Exit codes: 0 success; 1 the command failed (the error is printed once, as ``title: message``; a
refused file says "File refused" and nothing of it was written) or the audit trail does not verify;
2 an import finished but quarantined at least one record, or a rescore sent responses it could not
score to review; 64 usage error (unknown command or option, ``--chunk-size`` below 1).
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from hri_core import HRIError
from register.access.permissions import SYSTEM_ROLE
from register.db.store import Actor, Store, database_path_from_env
from register.errors import AuditChainBroken, RegisterError
from register.settings import PREFIX, InvalidSetting, Settings, declared, env_name, settings

EXIT_OK, EXIT_FAILED, EXIT_QUARANTINED, EXIT_USAGE = 0, 1, 2, 64

# Each command imports the modules it needs when it runs (not at the top): `--help`, `settings` and
# `status` then start without loading pandas, pyarrow, pandera or the scorer. No cycle is involved.


def cli_actor() -> Actor:
    """The acting user of CLI writes: ``HRI_ACTOR``, else the login name; role ``system`` (whoever runs
    commands against the database file operates the machine: every permission, no four-eyes check)."""
    name = settings().actor
    if not name:
        try:
            name = getpass.getuser()
        except (OSError, KeyError):  # no login name in some containers
            name = "unknown"
    return Actor(name=name, role=SYSTEM_ROLE)


def _debug() -> bool:
    """``HRI_DEBUG``: re-raise after rendering, for the traceback (a bad settings value means no)."""
    try:
        return settings().debug
    except InvalidSetting:
        return False


def render_error(error: BaseException, stream=None) -> None:
    """The one place errors reach the terminal: ``title: message`` on stderr.

    The register's errors (a database held by another process is ``DatabaseInUse``) and ``hri_core``'s
    carry their own title and a message that says what to do; anything else is unexpected.
    """
    stream = stream or sys.stderr
    message = str(error)
    if isinstance(error, (RegisterError, HRIError)):
        title = error.title
    elif isinstance(error, OSError):
        title = "File error"
    else:
        title = "Unexpected error"
        message = f"{type(error).__name__}: {message}"
    print(f"{title}: {message}", file=stream)


class _Parser(argparse.ArgumentParser):
    """argparse exits with 2 on usage errors; 2 means "records quarantined" here, so use 64."""

    def error(self, message: str):
        self.print_usage(sys.stderr)
        print(f"Usage error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _positive(text: str) -> int:
    """An argparse type: an integer >= 1 (``--chunk-size 0`` would import nothing, forever)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _parse_time(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as error:
        raise RegisterError(f"--as-of {text!r} is not an ISO 8601 time (e.g. 2026-12-01T00:00:00Z)") from error
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


# --- commands ----------------------------------------------------------------------------------


def cmd_init(store: Store, args) -> int:
    from register.scoring.profiles import active_profile, ensure_default_profile

    ensure_default_profile(store, cli_actor())
    applied = store.applied_migrations
    print(f"database {store.path}: " + (f"applied {', '.join(applied)}" if applied else "schema up to date")
          + f"; active scoring profile v{active_profile(store).version}")
    return EXIT_OK


def _progress(done: int, total: int | None, message: str) -> None:
    print(f"  {done:,}" + (f"/{total:,}" if total else "") + f"  {message}", file=sys.stderr, flush=True)


def print_import_report(report, stream=None) -> None:
    stream = stream or sys.stdout
    for b in report.batches:
        scored = f"; scored {b.scored:,} (run {b.score_run_id})" if b.score_run_id else ""
        print(f"batch {b.batch_id} {b.source_name} ({b.format}): {b.records:,} records: {b.accepted:,} accepted "
              f"({b.new_responses:,} new, {b.new_revisions:,} new revisions, {b.unchanged:,} unchanged), "
              f"{b.quarantined:,} quarantined, {b.resolved:,} quarantine rows resolved{scored}", file=stream)
        for note in b.notes:
            print(f"  note: {note}", file=stream)
    for note in report.notes:
        print(f"note: {note}", file=stream)
    if report.quarantined_records:
        shown = len(report.quarantined_records)
        print(f"quarantined ({shown} of {report.quarantined} shown; see `quarantine list`):", file=stream)
        for q in report.quarantined_records:
            rid = f" response_id={q.response_id}" if q.response_id else ""
            reasons = "; ".join((f"{p['field']}: " if p["field"] else "") + p["message"] for p in q.problems)
            print(f"  {q.source_name} {q.location}{rid}: {reasons}", file=stream)
    print(f"total: {report.records:,} records, {report.accepted:,} accepted, {report.quarantined:,} quarantined"
          + ("" if report.balanced else " (UNBALANCED)"), file=stream)


def _initialise(store: Store, actor: Actor) -> None:
    """A fresh database file gets what ``init`` gives it (the migrations ran on opening): the default profile."""
    from register.scoring.profiles import ensure_default_profile

    if store.scalar("SELECT count(*) FROM scoring_profiles") == 0:
        version = ensure_default_profile(store, actor)
        print(f"initialised {store.path}: schema created, default scoring profile v{version} active",
              file=sys.stderr)


def cmd_import(store: Store, args) -> int:
    from register.ingest.importer import ImportReport, import_path

    actor = cli_actor()
    _initialise(store, actor)
    report = ImportReport()
    try:
        for path in args.paths:
            report.extend(import_path(store, actor, path, progress=None if args.quiet else _progress,
                                      chunk_size=args.chunk_size, score=not args.no_score, resume=args.resume))
    finally:  # a refused path stops the command; what the paths before it did is still reported
        if report.batches or report.notes:
            if args.json:
                print(json.dumps(report.as_dict(), default=str))
            else:
                print_import_report(report)
    return EXIT_QUARANTINED if report.quarantined else EXIT_OK


def cmd_rescore(store: Store, args) -> int:
    from register.scoring.profiles import active_profile
    from register.scoring.scorer import rescore

    as_of = _parse_time(args.as_of) if args.as_of else None
    summary = rescore(store, cli_actor(), active_profile(store), as_of=as_of, batch_id=args.batch)
    print(f"score run {summary.run_id}: {summary.responses_scored:,} responses scored under profile "
          f"v{summary.profile_version} as of {summary.as_of.isoformat()}")
    if summary.failed_count:
        print_scoring_failures(summary.failed_count, summary.failed)
        return EXIT_QUARANTINED
    return EXIT_OK


def print_scoring_failures(count: int, failed: dict[str, str], stream=None) -> None:
    """Responses that failed closed (scored as worst case, action review), by id, with why."""
    shown = "; ".join(f"{rid} ({why})" for rid, why in failed.items())
    more = f"; {count - len(failed):,} more (see `status`)" if count > len(failed) else ""
    print(f"{count:,} response{'s' if count != 1 else ''} could not be scored and went to review: {shown}{more}",
          file=stream or sys.stderr)


def cmd_quarantine_list(store: Store, args) -> int:
    where = "" if args.all else "WHERE status = 'open'"
    rows = store.dicts("SELECT quarantine_id, status, batch_id, source_name, location, response_id, reasons, "
                       f"created_at FROM quarantine {where} ORDER BY quarantine_id")
    for entry in rows:
        entry["reasons"] = json.loads(entry["reasons"]) if isinstance(entry["reasons"], str) else entry["reasons"]
        if args.json:
            print(json.dumps(entry, default=str))
            continue
        reasons = "; ".join((f"{p['field']}: " if p["field"] else "") + p["message"] for p in entry["reasons"])
        rid = f" response_id={entry['response_id']}" if entry["response_id"] else ""
        print(f"#{entry['quarantine_id']} [{entry['status']}] {entry['source_name']} {entry['location']}{rid}: "
              f"{reasons}")
    if not args.json:
        print(f"{len(rows)} {'quarantine row(s)' if args.all else 'open quarantine row(s)'}", file=sys.stderr)
    return EXIT_OK


def cmd_quarantine_export(store: Store, args) -> int:
    from register.ingest.exporter import export_quarantine

    count = export_quarantine(store, args.file, include_resolved=args.all)
    print(f"wrote {count:,} quarantine row(s) to {args.file}")
    return EXIT_OK


def cmd_demo(store: Store, args) -> int:
    from register.demo import seed_demo

    summary = seed_demo(store, cli_actor(), synthetic=args.synthetic, progress=_progress)
    print(f"demo: {summary['files_imported']} file(s) imported ({summary['records']:,} records, "
          f"{summary['new_responses']:,} new responses, {summary['quarantined']:,} quarantined), "
          f"{summary['files_already_loaded']} already loaded; {summary['synthetic']:,} synthetic")
    for note in summary["notes"]:
        print(f"note: {note}")
    return EXIT_OK


def cmd_export(store: Store, args) -> int:
    from register.ingest.exporter import export_scores

    count = export_scores(store, args.file, fmt=args.format, batch_id=args.batch)
    print(f"wrote {count:,} score row(s) to {args.file}")
    return EXIT_OK


def cmd_audit_verify(store: Store, args) -> int:
    from register.db.audit import verify_chain

    report = verify_chain(store)
    if not report.ok:
        raise AuditChainBroken(f"first broken event {report.first_bad_seq} of {report.events}: {report.reason}")
    print(f"audit trail verifies: {report.events:,} events")
    return EXIT_OK


def cmd_users_bootstrap(store: Store, args) -> int:
    from register.access.identity import bootstrap_admin

    password = bootstrap_admin(store, cli_actor(), args.username)
    if password is None:
        print("accounts exist: nothing to do")
        return EXIT_OK
    print(f"created the first admin account {args.username!r}. One-time password (shown only now; it must be "
          f"changed at the first login):\n\n    {password}\n")
    return EXIT_OK


def cmd_users_list(store: Store, args) -> int:
    from register.access.identity import list_users

    for u in list_users(store):
        state = "disabled" if u.disabled else ("locked" if u.locked_until and u.locked_until > datetime.now(
            UTC) else "active")
        print(f"{u.username}\t{u.role}\t{state}\t{u.display_name}")
    return EXIT_OK


def cmd_users_add(store: Store, args) -> int:
    from register.access.identity import create_user

    password = create_user(store, cli_actor(), args.username, args.role, args.name)
    print(f"created {args.username!r} ({args.role}). One-time password (shown only now):\n\n    {password}\n")
    return EXIT_OK


def cmd_users_reset_password(store: Store, args) -> int:
    from register.access.identity import reset_password

    password = reset_password(store, cli_actor(), args.username)
    print(f"new one-time password of {args.username!r} (shown only now):\n\n    {password}\n")
    return EXIT_OK


def cmd_users_set_role(store: Store, args) -> int:
    from register.access.identity import set_role

    set_role(store, cli_actor(), args.username, args.role)
    print(f"{args.username}: role {args.role}")
    return EXIT_OK


def cmd_users_disable(store: Store, args) -> int:
    from register.access.identity import set_disabled

    set_disabled(store, cli_actor(), args.username, args.command_name == "disable")
    print(f"{args.username}: {args.command_name}d")
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


def cmd_checklist_run(store: Store, args) -> int:
    """The CI gate: run the automated checks and print a readable summary."""
    import tempfile

    from register.governance.checklist import gate_summary, record_run
    from register.governance.checks import run_checks
    from register.governance.evidence import ensure_default_rules
    from register.governance.transfer import import_register, read_upload

    rejected: list[str] = []
    if args.claims or args.sources:
        with tempfile.TemporaryDirectory(prefix="hri-checklist-") as tmp:
            temp = Store(Path(tmp) / "register.duckdb")
            try:
                ensure_default_rules(temp, cli_actor())
                for kind, path in (("sources", args.sources), ("claims", args.claims)):
                    if path:
                        frame = read_upload(Path(path).name, Path(path).read_bytes())
                        result = import_register(temp, cli_actor(), kind, frame)
                        rejected += [f"{path}: {p}" for p in result.rejected]
                results = run_checks(temp)
            finally:
                temp.close()
    else:
        results = run_checks(store)
        if args.record:
            run_id = record_run(store, cli_actor(), results=results)
            print(f"recorded as checklist run {run_id}", file=sys.stderr)
    failed, text = gate_summary(results)
    if args.json:
        print(json.dumps({**results, "rejected_rows": rejected}, indent=2, default=str))
    else:
        print(text)
        for line in rejected:
            print(f"  rejected row: {line}")
    if args.fail_on == "violations" and (failed or rejected):
        return EXIT_FAILED
    return EXIT_OK


def cmd_governance(store: Store, args) -> int:
    from register.governance.transfer import (
        export_claims,
        export_sources,
        formula_escaped,
        import_register,
        read_upload,
    )

    path = Path(args.file)
    if args.governance_command == "import":
        frame = read_upload(path.name, path.read_bytes())
        result = import_register(store, cli_actor(), args.kind, frame)
        print(f"{result.rows} rows: {result.inserted} new, {result.updated} updated, {result.unchanged} unchanged, "
              f"{result.rejected_rows} rejected" + (f", {result.sources_created} sources created"
                                                   if result.sources_created else ""))
        for problem in result.rejected:
            print(f"  {problem}", file=sys.stderr)
        return EXIT_QUARANTINED if result.rejected else EXIT_OK
    frame = export_sources(store) if args.kind == "sources" else export_claims(store)
    frame = formula_escaped(frame)
    if path.suffix.lower() == ".xlsx":
        frame.to_excel(path, index=False)
    else:
        frame.to_csv(path, index=False, lineterminator="\r\n")  # RFC 4180: a bare CR in a value gets quoted
    print(f"{len(frame)} rows written to {path}")
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


# --- scoring on Spark (register/spark/score_job.py; README "Scoring on a Spark cluster") -------------


def cmd_export_parquet(store: Store, args) -> int:
    from register.scoring.spark_exchange import export_parquet

    summary = export_parquet(store, cli_actor(), args.dir)
    print(f"wrote {summary.responses:,} responses and {summary.claims:,} claims as Parquet to {summary.folder}, "
          f"with the active profile v{summary.profile_version} (profile.json)")
    return EXIT_OK


def cmd_import_scores(store: Store, args) -> int:
    from register.scoring.spark_exchange import import_scores

    summary = import_scores(store, cli_actor(), args.dir)
    print(f"score run {summary.run_id}: {summary.responses_scored:,} responses scored on Spark under profile "
          f"v{summary.profile_version} as of {summary.as_of.isoformat()}")
    if summary.failed_count:
        print_scoring_failures(summary.failed_count, summary.failed)
        return EXIT_QUARANTINED
    return EXIT_OK


def _add_spark_commands(sub) -> None:
    exp = sub.add_parser("export-parquet", help="current responses and claims as Parquet, for scoring on Spark")
    exp.add_argument("dir", help="a new (or empty) folder")
    exp.set_defaults(func=cmd_export_parquet)
    imp = sub.add_parser("import-scores", help="bring the Spark job's scores back as a score run")
    imp.add_argument("dir", help="the job's output folder (scores/, score_floors/)")
    imp.set_defaults(func=cmd_import_scores)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m register", description="HRI register: database, import, export, audit")
    parser.add_argument("--db", help="database file (default: $HRI_DB, else var/hri.duckdb)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("init", help="create or migrate the database and the default profile").set_defaults(func=cmd_init)

    imp = sub.add_parser("import", help="import files or folders")
    imp.add_argument("paths", nargs="+", metavar="PATH")
    imp.add_argument("--no-score", action="store_true", help="store only; do not score the new batches")
    imp.add_argument("--chunk-size", type=_positive, default=5000, help="records per transaction (default 5000)")
    imp.add_argument("--resume", action="store_true",
                     help="finish the interrupted import of each file (see `status`): continue where it stopped")
    imp.add_argument("--json", action="store_true", help="print the report as JSON")
    imp.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    imp.set_defaults(func=cmd_import)

    res = sub.add_parser("rescore", help="score current responses under the active profile")
    res.add_argument("--batch", type=int, help="only this import batch")
    res.add_argument("--as-of", help="scoring time, ISO 8601 (default: now)")
    res.set_defaults(func=cmd_rescore)

    qua = sub.add_parser("quarantine", help="list or export quarantined records")
    qsub = qua.add_subparsers(dest="quarantine_command", required=True)
    qlist = qsub.add_parser("list", help="list quarantined records")
    qlist.add_argument("--all", action="store_true", help="include resolved rows")
    qlist.add_argument("--json", action="store_true", help="one JSON object per row")
    qlist.set_defaults(func=cmd_quarantine_list)
    qexp = qsub.add_parser("export", help="write the open quarantine as JSON Lines to fix and re-import")
    qexp.add_argument("file")
    qexp.add_argument("--all", action="store_true", help="include resolved rows")
    qexp.set_defaults(func=cmd_quarantine_export)

    demo = sub.add_parser("demo", help="load the demo data set (idempotent)")
    demo.add_argument("--synthetic", type=int, default=0, metavar="N", help="also N synthetic responses")
    demo.set_defaults(func=cmd_demo)

    exp = sub.add_parser("export", help="export current scores")
    exp.add_argument("file")
    exp.add_argument("--format", choices=("csv", "parquet", "jsonl"), help="default: from the file extension")
    exp.add_argument("--batch", type=int, help="only responses of this import batch")
    exp.set_defaults(func=cmd_export)

    aud = sub.add_parser("audit", help="audit trail checks")
    asub = aud.add_subparsers(dest="audit_command", required=True)
    asub.add_parser("verify", help="recompute the hash chain").set_defaults(func=cmd_audit_verify)

    from register.access.permissions import ROLES

    usr = sub.add_parser("users", help="local accounts of the embedded login")
    usub = usr.add_subparsers(dest="users_command", required=True)
    boot = usub.add_parser("bootstrap", help="create the first admin (one-time password) when no account exists")
    boot.add_argument("--username", default="admin")
    boot.set_defaults(func=cmd_users_bootstrap)
    usub.add_parser("list", help="accounts, roles and states").set_defaults(func=cmd_users_list)
    uadd = usub.add_parser("add", help="add an account (prints its one-time password)")
    uadd.add_argument("username")
    uadd.add_argument("--role", choices=ROLES, required=True)
    uadd.add_argument("--name", help="display name (default: the username)")
    uadd.set_defaults(func=cmd_users_add)
    ureset = usub.add_parser("reset-password", help="new one-time password (also lifts a lock)")
    ureset.add_argument("username")
    ureset.set_defaults(func=cmd_users_reset_password)
    urole = usub.add_parser("set-role", help="change an account's role")
    urole.add_argument("username")
    urole.add_argument("role", choices=ROLES)
    urole.set_defaults(func=cmd_users_set_role)
    for name in ("disable", "enable"):
        toggle = usub.add_parser(name, help=f"{name} an account")
        toggle.add_argument("username")
        toggle.set_defaults(func=cmd_users_disable, command_name=name)

    sub.add_parser("status", help="counts and the active profile").set_defaults(func=cmd_status)

    chk = sub.add_parser("checklist", help="the pre-submission claim-verification checklist")
    csub = chk.add_subparsers(dest="checklist_command", required=True)
    crun = csub.add_parser("run", help="run the automated checks (the CI gate)")
    crun.add_argument("--fail-on", choices=("violations", "never"), default="never",
                      help="violations: exit 1 when any check fails or an imported row is rejected")
    crun.add_argument("--claims", metavar="FILE",
                      help="check this claims register file (CSV/Excel) instead of the database")
    crun.add_argument("--sources", metavar="FILE", help="with --claims: the sources register file it refers to")
    crun.add_argument("--record", action="store_true", help="store the run in the database (to sign it in the console)")
    crun.add_argument("--json", action="store_true", help="print the results as JSON")
    crun.set_defaults(func=cmd_checklist_run)

    gov = sub.add_parser("governance", help="import or export the source and claims registers")
    gsub = gov.add_subparsers(dest="governance_command", required=True)
    for name in ("import", "export"):
        g = gsub.add_parser(name, help=f"{name} a register file (.csv or .xlsx)")
        g.add_argument("kind", choices=("sources", "claims"))
        g.add_argument("file")
        g.set_defaults(func=cmd_governance)

    sett = sub.add_parser("settings", help="the HRI_* settings in force (opens no database)")
    sett.add_argument("names", nargs="*", metavar="NAME", help="e.g. port or HRI_PORT: print just these values")
    sett.set_defaults(func=cmd_settings)
    _add_spark_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    store = None
    try:
        if args.func is not cmd_settings:  # reading the settings must not create a database
            store = Store(Path(args.db) if args.db else database_path_from_env())
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
