"""``import`` (directly, or through the running console's inbox when it holds the database), ``quarantine
list|export`` and ``demo``: getting records in, and the records that could not get in."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from register.cli.common import EXIT_OK, EXIT_QUARANTINED, cli_actor, client_path, initialise, positive, progress
from register.db.store import Store
from register.errors import DatabaseInUse, RegisterError
from register.ingest.reports import DEFAULT_CHUNK, DEFERRED


def add_import(sub) -> None:
    imp = sub.add_parser("import", help="import files or folders")
    imp.add_argument("paths", nargs="+", metavar="PATH", type=client_path)
    imp.add_argument("--no-score", action="store_true", help="store only; do not score the new batches")
    imp.add_argument("--chunk-size", type=positive, default=DEFAULT_CHUNK,
                     help=f"records per transaction (default {DEFAULT_CHUNK})")
    imp.add_argument("--resume", action="store_true",
                     help="finish the interrupted import of each file (see `status`): continue where it stopped")
    imp.add_argument("--defer-index", action="store_true",
                     help="store and score only; leave the search index to catch up later (`search-index`, or the "
                          "running console's background catch-up): the report comes sooner, and search finds the "
                          "new answers meanwhile (read directly, more slowly); the JSON report says "
                          '"search_index": "deferred"')
    imp.add_argument("--json", action="store_true", help="print the report as JSON")
    imp.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    imp.add_argument("--via-inbox", action="store_true",
                     help="when the running console holds the database, hand the files to its inbox and wait "
                          "for its report, rather than have the console's process import them (asked at a terminal "
                          "when no console listens; refused with --no-score or --resume)")
    imp.add_argument("--wait", type=float, default=600.0, metavar="SECONDS",
                     help="with the inbox: how long to wait for the report (default 600)")
    rag = imp.add_argument_group("RAGChecker results and RAGAS tables (recognised by content; other files ignore "
                                 "these)")
    rag.add_argument("--id-prefix", help="response id prefix (default: the file's stem and a colon)")
    for name, what in (("use-case", "use case"), ("model", "model"), ("stakes", "stakes (low .. critical)"),
                       ("created-at", "answer time, ISO 8601"), ("category", "claim category (RAGChecker)")):
        rag.add_argument(f"--{name}", help=f"{what} of every imported answer")
    imp.set_defaults(func=cmd_import)


def add_quarantine(sub) -> None:
    qua = sub.add_parser("quarantine", help="list or export quarantined records")
    qsub = qua.add_subparsers(dest="quarantine_command", required=True)
    qlist = qsub.add_parser("list", help="list quarantined records")
    qlist.add_argument("--all", action="store_true", help="include resolved and discarded rows")
    qlist.add_argument("--json", action="store_true", help="one JSON object per row")
    qlist.set_defaults(func=cmd_quarantine_list)
    qexp = qsub.add_parser("export", help="write the open quarantine as JSON Lines to fix and re-import")
    qexp.add_argument("file", type=client_path)
    qexp.add_argument("--all", action="store_true", help="include resolved rows")
    qexp.set_defaults(func=cmd_quarantine_export)


def add_demo(sub) -> None:
    demo = sub.add_parser("demo", help="load the demo data set (idempotent)")
    demo.add_argument("--synthetic", type=int, default=0, metavar="N", help="also N synthetic responses")
    demo.add_argument("--bulk", action="store_true",
                      help="for benchmarks at millions: import 20,000 synthetic responses and make the rest "
                           "SQL copies of them (minutes, not hours, for 10,000,000)")
    demo.set_defaults(func=cmd_demo)


def cmd_import(store: Store, args) -> int:
    from register.ingest.importer import ImportReport, import_path
    from register.ingest.rag_files import RagOptions

    rag = RagOptions(id_prefix=args.id_prefix, use_case=args.use_case, model=args.model, stakes=args.stakes,
                     created_at=args.created_at, category=args.category)
    actor = cli_actor()
    initialise(store)
    report = ImportReport()
    try:
        for path in args.paths:
            report.extend(import_path(store, actor, path, progress=None if args.quiet else progress,
                                      chunk_size=args.chunk_size, score=not args.no_score, resume=args.resume,
                                      rag=rag, defer_index=args.defer_index))
    finally:  # a refused path stops the command; what the paths before it did is still reported
        if report.batches or report.notes:
            _print_report(report, args)
    return EXIT_QUARANTINED if report.quarantined else EXIT_OK


def _print_report(report, args) -> None:
    if args.json:
        print(json.dumps(report.as_dict(), default=str))
    else:
        print_import_report(report)


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
    if report.search_index == DEFERRED:
        print("search index: left to catch up later (`python -m register search-index`, or the running console "
              "in the background); search finds the new answers meanwhile, more slowly", file=stream)
    if report.quarantined_records:
        shown = len(report.quarantined_records)
        print(f"quarantined ({shown} of {report.quarantined} shown; see `quarantine list`):", file=stream)
        for q in report.quarantined_records:
            rid = f" response_id={q.response_id}" if q.response_id else ""
            reasons = "; ".join((f"{p['field']}: " if p["field"] else "") + p["message"] for p in q.problems)
            print(f"  {q.source_name} {q.location}{rid}: {reasons}", file=stream)
    print(f"total: {report.records:,} records, {report.accepted:,} accepted, {report.quarantined:,} quarantined"
          + ("" if report.balanced else " (UNBALANCED)"), file=stream)


def offer_inbox(args, held: DatabaseInUse) -> bool:
    """Whether to hand the files to the console's inbox: ``--via-inbox``, or yes at a terminal's prompt."""
    if args.command != "import":
        return False
    if args.no_score or args.resume:  # the console imports with its own options: scored, from the start
        if args.via_inbox:
            raise DatabaseInUse(f"{held} (--via-inbox cannot carry --no-score or --resume: the console imports "
                                "every file from its start and scores it)")
        return False
    if args.via_inbox:
        return True
    if not sys.stdin.isatty():
        return False
    print(f"{held.title}: {held}", file=sys.stderr)
    answer = input("Hand the files to the running console's inbox and wait for its report? [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def cmd_import_via_inbox(database: Path, args) -> int:
    """``import`` while the console holds the database: its inbox imports the files, this prints the report."""
    from register.ingest.files import check_file, files_to_import
    from register.ingest.importer import ImportReport
    from register.ingest.inbox import hand_off, inbox_for, wait_for_reports, watcher_alive

    inbox = inbox_for(database)
    beat = watcher_alive(inbox)
    if beat is None:
        raise DatabaseInUse(f"{database} is open in another process, and no console watches its inbox {inbox} "
                            "(no recent heartbeat; HRI_INBOX_POLL_SECONDS=0 turns it off): import the files once that "
                            "process has finished, or start the console, which imports them itself")
    report, files = ImportReport(), []
    for path in args.paths:  # every file checked before any is handed over, as a direct import does
        found, skipped = files_to_import(Path(path))
        for file in found:
            check_file(file)
        files += found
        report.notes.extend(skipped)
    if not args.quiet:
        print(f"the database is held by the console (PID {beat.get('pid')}): handing {len(files)} file(s) to "
              f"its inbox {inbox} and waiting for the report", file=sys.stderr)
    handoffs = hand_off(inbox, files)
    complete = wait_for_reports(inbox, handoffs, timeout=args.wait)
    failures = []
    for handoff in handoffs:
        if handoff.report is None:
            continue
        if "error" in handoff.report:
            failures.append(f"{handoff.name}: {handoff.report['error']['title']}: {handoff.report['error']['message']}")
        else:
            report.extend(ImportReport.from_dict(handoff.report))
    if report.batches or report.notes:
        _print_report(report, args)
    if not complete:
        waiting = ", ".join(h.name for h in handoffs if h.report is None)
        raise RegisterError(f"no report for {waiting} after {args.wait:g} s: the file(s) stay in {inbox} and the "
                            f"console imports them when it can; their report will be in {inbox / 'done'}")
    if failures:
        raise RegisterError("; ".join(failures) + f" (moved to {inbox / 'failed'})")
    return EXIT_QUARANTINED if report.quarantined else EXIT_OK


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

    summary = seed_demo(store, cli_actor(), synthetic=args.synthetic, progress=progress,
                        review_floors=True, bulk=args.bulk)  # Table IV's review floors as a draft version (issue 12)
    print(f"demo: {summary['files_imported']} file(s) imported ({summary['records']:,} records, "
          f"{summary['new_responses']:,} new responses, {summary['quarantined']:,} quarantined), "
          f"{summary['files_already_loaded']} already loaded; {summary['synthetic']:,} synthetic")
    for note in summary["notes"]:
        print(f"note: {note}")
    return EXIT_OK
