"""``init``, ``search-index``, ``status`` and ``settings``: the database file itself (create or migrate it,
catch its search index up, count what it holds) and the settings in force, which open no database."""

from __future__ import annotations

import sys

from register.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, cli_actor, progress
from register.db.store import Store
from register.settings import PREFIX, Settings, declared, env_name, settings


def add_init(sub) -> None:
    sub.add_parser("init", help="create or migrate the database and the default profile").set_defaults(func=cmd_init)


def add_search_index(sub) -> None:
    sidx = sub.add_parser("search-index", help="index the responses not yet in the search index (every write of "
                                               "revisions does it too, but `import --defer-index`; the running "
                                               "console in the background); --check compares the index with the "
                                               "texts")
    sidx.add_argument("--check", action="store_true", help="also recompute the words and compare (a full scan)")
    sidx.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    sidx.set_defaults(func=cmd_search_index)


def add_status(sub) -> None:
    sub.add_parser("status", help="counts and the active profile").set_defaults(func=cmd_status)


def add_settings(sub) -> None:
    sett = sub.add_parser("settings", help="the HRI_* settings in force (opens no database)")
    sett.add_argument("names", nargs="*", metavar="NAME", help="e.g. port or HRI_PORT: print just these values")
    sett.set_defaults(func=cmd_settings, needs_store=False)


def cmd_init(store: Store, args) -> int:
    from register.scoring.profiles import active_profile, ensure_default_profile

    ensure_default_profile(store, cli_actor())
    applied = store.applied_migrations
    print(f"database {store.path}: " + (f"applied {', '.join(applied)}" if applied else "schema up to date")
          + f"; active scoring profile v{active_profile(store).version}")
    return EXIT_OK


def cmd_search_index(store: Store, args) -> int:
    from register.readmodels import search_check, search_index

    before = search_index.state(store)
    if not args.quiet and before.pending:
        print(f"search index: {before.pending:,} revision(s) to index above key {before.indexed_through:,}",
              file=sys.stderr, flush=True)
    indexed = search_index.catch_up(store, cli_actor(), progress=None if args.quiet else progress)
    after = search_index.state(store)
    print(f"search index: {indexed:,} revision(s) indexed now ({before.pending:,} were pending); "
          f"{after.words:,} words, {after.postings:,} postings, {after.pairs:,} word pairs, "
          f"{after.pair_postings:,} pair postings, {after.separators:,} runs of separators, "
          f"{after.separator_postings:,} run postings, {after.character_masks:,} masks of letters and digits, "
          f"every revision up to key {after.indexed_through:,}")
    if args.check:
        problems = search_check.check(store)
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
    from register.scoring.publishes import RESUME_COMMAND, incomplete_publish

    status = store.row("""
        SELECT (SELECT count(*) FROM responses WHERE is_current) AS responses,
               (SELECT count(*) FROM responses WHERE NOT is_current) AS earlier_revisions,
               (SELECT count(*) FROM claims c JOIN responses r USING (response_id, revision) WHERE r.is_current)
                   AS claims,
               (SELECT count(*) FROM scores WHERE is_current) AS current_scores,
               (SELECT count(*) FROM scores WHERE is_current AND scoring_failure IS NOT NULL) AS scoring_failures,
               (SELECT count(*) FROM quarantine WHERE status = 'open') AS open_quarantine,
               (SELECT count(*) FROM import_batches) AS import_batches,
               (SELECT count(*) FROM audit_events) AS audit_events
    """, what="the register's counts")
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
    if (publish := incomplete_publish(store)) is not None:  # a publish stopped between activation and rescore
        print(f"{publish.message()} (version {publish.version} made active {publish.published_at:%Y-%m-%d %H:%M} "
              f"UTC by {publish.published_by}; its rescore never ran); finish it: {RESUME_COMMAND}")
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
