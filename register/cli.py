"""``python -m register``: the register's command line, beside the UI and calling the same functions.

    python -m register [--db PATH] COMMAND ...

    init                               create or migrate the database; create the default profile
    import PATH... [--no-score]        import files or folders (.jsonl/.json, .csv, .parquet);
           [--chunk-size N] [--json]   progress on stderr, the report on stdout
    rescore [--batch N] [--as-of ISO]  score current responses (all, or one batch) under the active profile
    quarantine list [--all] [--json]   open quarantined records (--all: resolved ones too)
    quarantine export FILE [--all]     the open quarantine as JSON Lines, to fix and import again
    demo [--synthetic N]               load the demo set (idempotent), plus N synthetic responses
    export FILE [--format F] [--batch N]  current scores as csv, parquet or jsonl (default: from FILE's extension)
    audit verify                       recompute the hash chain of the audit trail
    status                             counts of responses, claims, scores, open quarantine; active profile

Database: ``--db PATH``, else the ``HRI_DB`` environment variable, else ``var/hri.duckdb``. DuckDB
allows one read-write process per file: stop the app while running commands that write.

Acting user: every write is recorded in the audit trail as
``Actor(name=$HRI_ACTOR or the login name, role="admin")``.

Exit codes: 0 success; 1 the command failed (the error is printed once, as ``title: message``) or
the audit trail does not verify; 2 an import finished but quarantined at least one record;
64 usage error (unknown command or option).
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

from hri_core import HRIError

from .errors import AuditChainBroken, RegisterError
from .store import Actor, Store, database_path_from_env

EXIT_OK, EXIT_FAILED, EXIT_QUARANTINED, EXIT_USAGE = 0, 1, 2, 64


def cli_actor() -> Actor:
    """The acting user of CLI writes: ``HRI_ACTOR``, else the login name; role admin."""
    name = os.environ.get("HRI_ACTOR")
    if not name:
        try:
            name = getpass.getuser()
        except (OSError, KeyError):  # no login name in some containers
            name = "unknown"
    return Actor(name=name, role="admin")


def render_error(error: BaseException, stream=None) -> None:
    """The one place errors reach the terminal: ``title: message`` on stderr."""
    stream = stream or sys.stderr
    message = str(error)
    if isinstance(error, (RegisterError, HRIError)):
        title = error.title
    elif isinstance(error, OSError):
        title = "File error"
    elif "Could not set lock on file" in message:  # DuckDB: another process holds the database
        title = "Database in use"
        message += " (stop the app or the other process, or choose another file with --db)"
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


def _parse_time(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as error:
        raise RegisterError(f"--as-of {text!r} is not an ISO 8601 time (e.g. 2026-12-01T00:00:00Z)") from error
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


# --- commands ----------------------------------------------------------------------------------


def cmd_init(store: Store, args) -> int:
    from .profiles import active_profile, ensure_default_profile

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


def cmd_import(store: Store, args) -> int:
    from .importer import ImportReport, import_path

    actor = cli_actor()
    report = ImportReport()
    try:
        for path in args.paths:
            report.extend(import_path(store, actor, path, progress=None if args.quiet else _progress,
                                      chunk_size=args.chunk_size, score=not args.no_score))
    finally:  # a refused path stops the command; what the paths before it did is still reported
        if report.batches or report.notes:
            if args.json:
                print(json.dumps(report.as_dict(), default=str))
            else:
                print_import_report(report)
    return EXIT_QUARANTINED if report.quarantined else EXIT_OK


def cmd_rescore(store: Store, args) -> int:
    from .profiles import active_profile
    from .scorer import rescore

    as_of = _parse_time(args.as_of) if args.as_of else None
    summary = rescore(store, cli_actor(), active_profile(store), as_of=as_of, batch_id=args.batch)
    print(f"score run {summary.run_id}: {summary.responses_scored:,} responses scored under profile "
          f"v{summary.profile_version} as of {summary.as_of.isoformat()}")
    return EXIT_OK


def cmd_quarantine_list(store: Store, args) -> int:
    where = "" if args.all else "WHERE status = 'open'"
    rows = store.query("SELECT quarantine_id, status, batch_id, source_name, location, response_id, reasons, "
                       f"created_at FROM quarantine {where} ORDER BY quarantine_id")
    keys = ("quarantine_id", "status", "batch_id", "source_name", "location", "response_id", "reasons", "created_at")
    for row in rows:
        entry = dict(zip(keys, row))
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
    from .exporter import export_quarantine

    count = export_quarantine(store, args.file, include_resolved=args.all)
    print(f"wrote {count:,} quarantine row(s) to {args.file}")
    return EXIT_OK


def cmd_demo(store: Store, args) -> int:
    from .demo import seed_demo

    summary = seed_demo(store, cli_actor(), synthetic=args.synthetic, progress=_progress)
    print(f"demo: {summary['files_imported']} file(s) imported ({summary['records']:,} records, "
          f"{summary['new_responses']:,} new responses, {summary['quarantined']:,} quarantined), "
          f"{summary['files_already_loaded']} already loaded; {summary['synthetic']:,} synthetic")
    for note in summary["notes"]:
        print(f"note: {note}")
    return EXIT_OK


def cmd_export(store: Store, args) -> int:
    from .exporter import export_scores

    count = export_scores(store, args.file, fmt=args.format, batch_id=args.batch)
    print(f"wrote {count:,} score row(s) to {args.file}")
    return EXIT_OK


def cmd_audit_verify(store: Store, args) -> int:
    from .audit import verify_chain

    report = verify_chain(store)
    if not report.ok:
        raise AuditChainBroken(f"first broken event {report.first_bad_seq} of {report.events}: {report.reason}")
    print(f"audit trail verifies: {report.events:,} events")
    return EXIT_OK


def cmd_status(store: Store, args) -> int:
    from .errors import NotFound
    from .profiles import active_profile

    row = store.query_one("""
        SELECT (SELECT count(*) FROM responses WHERE is_current),
               (SELECT count(*) FROM responses WHERE NOT is_current),
               (SELECT count(*) FROM claims c JOIN responses r USING (response_id, revision) WHERE r.is_current),
               (SELECT count(*) FROM scores WHERE is_current),
               (SELECT count(*) FROM quarantine WHERE status = 'open'),
               (SELECT count(*) FROM import_batches),
               (SELECT count(*) FROM audit_events)
    """)
    keys = ("responses", "earlier_revisions", "claims", "current_scores", "open_quarantine", "import_batches",
            "audit_events")
    status: dict = dict(zip(keys, row))
    try:
        status["active_profile_version"] = active_profile(store).version
    except NotFound:
        status["active_profile_version"] = None
    print(f"database: {store.path}")
    for key, value in status.items():
        print(f"{key}: {value if value is not None else 'none (run init)'}")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m register", description="HRI register: database, import, export, audit")
    parser.add_argument("--db", help="database file (default: $HRI_DB, else var/hri.duckdb)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("init", help="create or migrate the database and the default profile").set_defaults(func=cmd_init)

    imp = sub.add_parser("import", help="import files or folders")
    imp.add_argument("paths", nargs="+", metavar="PATH")
    imp.add_argument("--no-score", action="store_true", help="store only; do not score the new batches")
    imp.add_argument("--chunk-size", type=int, default=5000, help="records per transaction (default 5000)")
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

    sub.add_parser("status", help="counts and the active profile").set_defaults(func=cmd_status)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    store = None
    try:
        store = Store(Path(args.db) if args.db else database_path_from_env())
        return args.func(store, args)
    except KeyboardInterrupt:
        print("Interrupted: committed chunks are kept; the open batch stays unfinished", file=sys.stderr)
        return EXIT_FAILED
    except Exception as error:  # noqa: BLE001 - rendered once, here
        render_error(error)
        if os.environ.get("HRI_DEBUG"):
            raise
        return EXIT_FAILED
    finally:
        if store is not None:
            store.close()
