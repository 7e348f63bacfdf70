"""``rescore``, ``keep-view``, ``export``, ``queue`` and the Spark exchange (``export-parquet``, ``import-scores``):
scoring the current responses under the active profile, here or on a Spark cluster, writing the current scores out
and listing the review queue."""

from __future__ import annotations

import sys
from datetime import UTC, datetime

from register.cli.common import EXIT_OK, EXIT_QUARANTINED, cli_actor, client_path, progress
from register.db.store import Store
from register.errors import RegisterError


def add_rescore(sub) -> None:
    res = sub.add_parser("rescore", help="score current responses under the active profile")
    res.add_argument("--batch", type=int, help="only this import batch")
    res.add_argument("--as-of", help="scoring time, ISO 8601 (default: now)")
    res.set_defaults(func=cmd_rescore)

    kv = sub.add_parser("keep-view", help="keep an older profile version's view as a read model of its own")
    kv.add_argument("version", type=int, help="the profile version")
    kv.set_defaults(func=cmd_keep_view)


def add_export(sub) -> None:
    exp = sub.add_parser("export", help="export current scores")
    exp.add_argument("file", type=client_path)
    exp.add_argument("--format", choices=("csv", "parquet", "jsonl"), help="default: from the file extension")
    exp.add_argument("--batch", type=int, help="only responses of this import batch")
    exp.set_defaults(func=cmd_export)

    que = sub.add_parser("queue", help="the review queue: current answers decided review or block, not yet decided "
                                      "by a reviewer, oldest first")
    que.add_argument("--json", action="store_true", help="a JSON list of objects (an empty queue: [])")
    que.set_defaults(func=cmd_queue)


def _parse_time(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as error:
        raise RegisterError(f"--as-of {text!r} is not an ISO 8601 time (e.g. 2026-12-01T00:00:00Z)") from error
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def cmd_rescore(store: Store, args) -> int:
    from register.scoring.profiles import active_profile
    from register.scoring.publishes import incomplete_publish
    from register.scoring.scorer import rescore

    as_of = _parse_time(args.as_of) if args.as_of else None
    pending = incomplete_publish(store)
    summary = rescore(store, cli_actor(), active_profile(store), as_of=as_of, batch_id=args.batch)
    print(f"score run {summary.run_id}: {summary.responses_scored:,} responses scored under profile "
          f"v{summary.profile_version} as of {summary.as_of.isoformat()}")
    if pending is not None and incomplete_publish(store) is None:  # this full rescore was the publish's second step
        print(f"publish of version {pending.version} complete: every current score is under it")
    if summary.failed_count:
        print_scoring_failures(summary.failed_count, summary.failed)
        return EXIT_QUARANTINED
    return EXIT_OK


def cmd_keep_view(store: Store, args) -> int:
    from register.readmodels.version_views import keep_view

    dropped = keep_view(store, cli_actor(), args.version, progress=progress)
    print(f"profile version {args.version}: its view is kept"
          + (f"; the views of version(s) {', '.join(map(str, dropped))} went (HRI_KEEP_VERSION_VIEWS)" if dropped
             else ""))
    return EXIT_OK


def print_scoring_failures(count: int, failed: dict[str, str], stream=None) -> None:
    """Responses that failed closed (scored as worst case, action review), by id, with why."""
    shown = "; ".join(f"{rid} ({why})" for rid, why in failed.items())
    more = f"; {count - len(failed):,} more (see `status`)" if count > len(failed) else ""
    print(f"{count:,} response{'s' if count != 1 else ''} could not be scored and went to review: {shown}{more}",
          file=stream or sys.stderr)


def cmd_export(store: Store, args) -> int:
    from register.ingest.exporter import export_scores

    count = export_scores(store, args.file, fmt=args.format, batch_id=args.batch)
    print(f"wrote {count:,} score row(s) to {args.file}")
    return EXIT_OK


QUEUE_FIELDS = ("response_id", "revision", "use_case", "decision", "decision_reasons", "score", "band", "action",
                "age_days")
QUEUE_PAGE = 10_000  # answers read at once


def cmd_queue(store: Store, args) -> int:
    """Print the review queue (``register.console.review.review_queue``, unfiltered): as JSON with ``--json``,
    else one readable line per answer and its reasons beneath."""
    import json

    from register.console.queries.filters import Filters
    from register.console.review import review_queue

    rows: list[dict] = []
    while True:
        frame, size = review_queue(store, Filters(), limit=QUEUE_PAGE, offset=len(rows))
        rows += [{name: _plain(row[name]) for name in QUEUE_FIELDS} for row in frame.to_dict("records")]
        if len(frame) < QUEUE_PAGE or len(rows) >= size:
            break
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return EXIT_OK
    if not rows:
        print("the review queue is empty")
        return EXIT_OK
    print(f"{len(rows):,} answer(s) in the review queue, oldest first")
    for row in rows:
        print(f"{row['response_id']} r{row['revision']}  {row['decision']:<7}  score {row['score']:.1f} "
              f"({row['band']})  {row['use_case'] or '-'}  {row['age_days']:.1f} days")
        for reason in row["decision_reasons"]:
            print(f"    - {reason}")
    return EXIT_OK


def _plain(value):
    """A frame cell as JSON: a list of reasons as a list, NaN / NA as None, numpy numbers as Python's."""
    import pandas as pd

    if hasattr(value, "tolist"):
        value = value.tolist()
    if not isinstance(value, list) and pd.isna(value):
        return None
    if value is None or isinstance(value, (list, str, int, float, bool)):
        return value
    return str(value)


# --- scoring on Spark (register/spark/score_job.py; docs/spark.md) ------------------------------------


def add_spark_commands(sub) -> None:
    exp = sub.add_parser("export-parquet", help="current responses and claims as Parquet, for scoring on Spark")
    exp.add_argument("dir", type=client_path, help="a new (or empty) folder")
    exp.set_defaults(func=cmd_export_parquet)
    imp = sub.add_parser("import-scores", help="bring the Spark job's scores back as a score run")
    imp.add_argument("dir", type=client_path, help="the job's output folder (scores/, score_floors/)")
    imp.set_defaults(func=cmd_import_scores)


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
