"""Benchmark: the console's read queries (overview, responses, detail, review queue) at scale.

    .venv/bin/python benchmarks/bench_console.py [--responses 1000000] [--db PATH] [--repeat 5]

Builds a register with N synthetic responses (``hri_core.synthetic.generate_responses``, seed 7;
about 6 claims each) written to a JSON Lines file and loaded through the real importer
(``register.ingest.importer.import_path``: validation, revisions, quarantine bookkeeping, then the bulk
scorer under the active profile) -- the same path a user's file takes, so the database has the
shape the app sees. At 1,000,000 responses that takes several minutes; pass ``--db PATH`` to keep
the database and reuse it on the next run (a database that already holds responses is not rebuilt).

Unless ``--one-profile``, a second profile version is published and everything rescored under it
(once; a reused database keeps it), so the register holds score history and the profile-version
filter reads the older version's scores: the version before the active one (a kept view when publishing ran
over everything, ``register.readmodels.version_views``) and, when the database has one, the oldest version that is
not kept (its score rows joined).

Then times each query function the pages call (and ``queries.overview.overview``, the same overview figures
in one statement), median of ``--repeat`` runs (no cache: the figures
are what a cache miss costs), and prints a table of per-function medians and per-page totals
against the targets: overview and responses pages < 1 s, detail < 0.3 s, filter change < 0.5 s (the
review queue page and a profile-version filter change are timed too: the queue against 1 s, the
version change against the overview's 1 s, as it reads every response like the overview does), and each
filter change as what the overview page reads after it (its figures in one pass, the feedback tile, the
Authority figures) against 1 s.
Prints figures; asserts nothing (tests never time anything).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hri_core.synthetic import generate_responses  # noqa: E402
from register import SYSTEM, Store  # noqa: E402
from register.console import review  # noqa: E402
from register.console.queries import authority, detail, explorer, overview  # noqa: E402
from register.console.queries.filters import Filters  # noqa: E402
from register.feedback import scope  # noqa: E402
from register.ingest.importer import import_path  # noqa: E402
from register.readmodels import version_views  # noqa: E402
from register.scoring.profiles import activate, active_profile, create_draft, ensure_default_profile  # noqa: E402
from register.scoring.scorer import rescore  # noqa: E402

SEED = 7
TARGETS = {"overview page": 1.0, "overview page, one pass": 1.0, "responses page": 1.0,
           "responses page + search": 1.0, "detail page": 0.3, "review queue page": 1.0, "filter change": 0.5,
           # an older profile version's scores of every response: as wide as the overview itself, so the
           # overview's bound applies (a use-case filter narrows the set; a version filter does not)
           "filter change: profile version": 1.0,
           # the bound for a filter change (< 1 s) on what the overview page reads after one
           "filter change, the overview page": 1.0, "filter change: profile version, the overview page": 1.0,
           "filter change: a version not kept, the overview page": 1.0}


def build(store: Store, n: int, work: Path, chunk_size: int) -> None:
    source = work / f"synthetic-{n}.jsonl"
    start = time.perf_counter()
    with source.open("w", encoding="utf-8") as handle:
        for record in generate_responses(n, seed=SEED):
            handle.write(json.dumps(record) + "\n")
    print(f"generated {n:,} responses in {time.perf_counter() - start:,.1f} s -> {source}", flush=True)
    start = time.perf_counter()
    last = [0.0]

    def progress(done: int, total: int | None, message: str) -> None:
        if time.perf_counter() - last[0] > 30:
            last[0] = time.perf_counter()
            print(f"  import {done:,}/{total or 0:,} ({time.perf_counter() - start:,.0f} s)", flush=True)

    # the file is larger than the importer's default upload limit: raise the limit for this file
    report = import_path(store, SYSTEM, source, chunk_size=chunk_size, progress=progress,
                         max_bytes=source.stat().st_size + 1)
    print(f"imported and scored {report.accepted:,} responses in {time.perf_counter() - start:,.1f} s "
          f"({report.quarantined} quarantined)", flush=True)
    source.unlink()


def add_second_profile(store: Store) -> None:
    """Publish a second profile and rescore everything under it, as a register in use would have:
    the profile-version filter then looks at the older version's scores (history, not current)."""
    start = time.perf_counter()
    version = create_draft(store, SYSTEM, {"weights": {"F": 0.3, "C": 0.2, "U": 0.2, "O": 0.1, "S": 0.1, "P": 0.05,
                                                       "H": 0.05}}, name="bench-second")
    activate(store, SYSTEM, version, "benchmark: a second profile version")
    summary = rescore(store, SYSTEM, active_profile(store))
    print(f"published profile v{version} and rescored {summary.responses_scored:,} responses in "
          f"{time.perf_counter() - start:,.1f} s", flush=True)


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, list[float], float]:
    """Median wall time, every wall time, and the median process CPU time (all DuckDB threads)."""
    runs, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        runs.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(runs), runs, statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=1_000_000)
    parser.add_argument("--db", type=Path, help="database file to build or reuse (default: a temp file)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--chunk-size", type=int, default=20_000)
    parser.add_argument("--search", default="notice period", help="search text for the responses page")
    parser.add_argument("--one-profile", action="store_true",
                        help="do not publish a second profile version (by default one is added and everything "
                             "rescored, so that the profile-version filter reads history)")
    args = parser.parse_args()

    work = args.db.parent if args.db else Path(tempfile.mkdtemp(prefix="hri-bench-console-"))
    db = args.db or work / "console.duckdb"
    store = Store(db)
    ensure_default_profile(store, SYSTEM)
    existing = store.scalar("SELECT count(*) FROM responses WHERE is_current")
    if existing:
        print(f"reusing {db}: {existing:,} current responses")
    else:
        build(store, args.responses, work, args.chunk_size)
    if not args.one_profile and len(overview.filter_options(store)["profile_versions"]) < 2:
        add_second_profile(store)
    responses, claims = store.query_one("SELECT count(*), sum(claim_count) FROM responses WHERE is_current")
    scores = store.scalar("SELECT count(*) FROM scores")
    print(f"database: {responses:,} current responses, {claims:,} claims, {scores:,} score rows, "
          f"{db.stat().st_size / 1e9:,.2f} GB")

    profile = active_profile(store)
    bands = tuple(b.name for b in profile.bands)
    everything = Filters()
    options = overview.filter_options(store)
    one_use_case = Filters(use_cases=(options["use_cases"][0],))
    # the version before the active one (kept as a read model of its own when publishing ran over everything:
    # register.readmodels.version_views), and the oldest version that is not kept (its score rows joined), if any
    older = [v for v in options["profile_versions"] if v != profile.version]
    kept = version_views.kept(store)
    one_version = Filters(profile_version=older[-1])
    not_kept = [v for v in older if v not in kept]
    joined_version = Filters(profile_version=not_kept[0]) if not_kept else None
    print(f"profile versions: active {profile.version}; kept views of {kept or 'none'}; "
          f"timed: v{one_version.profile_version} ({'kept' if one_version.profile_version in kept else 'joined'})"
          + (f" and v{joined_version.profile_version} (joined)" if joined_version else ""))
    first_page, _ = explorer.responses_page(store, everything, limit=1)
    detail_id = first_page.response_id[0]

    def charts(f: Filters) -> None:
        overview.band_mix_by_week(store, f)
        overview.score_histogram(store, f)
        overview.dimension_contributions(store, f, profile.weights)
        overview.high_share_by(store, f, "use_case", bands)
        overview.high_share_by(store, f, "model", bands)

    # the floor, in the same run: one scan of the current scores (the least any view of every response reads)
    floor, _, floor_cpu = timed(lambda: store.query("SELECT count(*), avg(score) FROM scores WHERE is_current"),
                                args.repeat)
    print(f"floor (one scan of the current scores): median {floor:.3f} s, cpu {floor_cpu:.3f} s", flush=True)

    pages: dict[str, list[tuple[str, Callable[[], object]]]] = {
        "overview page": [
            ("filter_options", lambda: overview.filter_options(store)),
            ("kpis", lambda: overview.kpis(store, everything)),
            ("band_mix_by_week", lambda: overview.band_mix_by_week(store, everything)),
            ("score_histogram", lambda: overview.score_histogram(store, everything)),
            ("dimension_contributions", lambda: overview.dimension_contributions(store, everything, profile.weights)),
            ("high_share_by use_case", lambda: overview.high_share_by(store, everything, "use_case", bands)),
            ("high_share_by model", lambda: overview.high_share_by(store, everything, "model", bands)),
        ],
        "overview page, one pass": [
            ("filter_options", lambda: overview.filter_options(store)),
            ("overview (kpis + 5 figures, one join)",
             lambda: overview.overview(store, everything, profile.weights, bands)),
            # the rest of what the page reads: the validated-feedback tile and the Authority figures
            ("feedback scope tile (30 days)", lambda: scope.scope_feedback(
                store, window_days=30, decay_lambda=profile.decay_lambda, as_of=datetime.now(UTC))),
            ("authority_overview", lambda: authority.authority_overview(store, everything)),
        ],
        "responses page": [
            ("responses_page (first page)", lambda: explorer.responses_page(store, everything)),
        ],
        "responses page + search": [
            (f"responses_page search={args.search!r}",
             lambda: explorer.responses_page(store, everything, search=args.search)),
        ],
        "detail page": [
            (f"response_detail {detail_id}", lambda: detail.response_detail(store, detail_id)),
        ],
        "review queue page": [
            ("review_queue (first page)", lambda: review.review_queue(store, everything)),
        ],
        "filter change": [
            (f"kpis use_case={one_use_case.use_cases[0]}", lambda: overview.kpis(store, one_use_case)),
            ("charts (5 queries) same filter", lambda: charts(one_use_case)),
        ],
        # what the overview page reads after that filter change: its figures in one pass, the feedback tile and
        # the Authority figures under the filter (which join the filtered responses' claims)
        "filter change, the overview page": [
            (f"overview use_case={one_use_case.use_cases[0]}",
             lambda: overview.overview(store, one_use_case, profile.weights, bands)),
            ("feedback scope tile (30 days) same filter", lambda: scope.scope_feedback(
                store, window_days=30, decay_lambda=profile.decay_lambda, as_of=datetime.now(UTC),
                use_cases=one_use_case.use_cases)),
            ("authority_overview same filter", lambda: authority.authority_overview(store, one_use_case)),
        ],
        "filter change: profile version": [
            (f"kpis profile_version={one_version.profile_version}", lambda: overview.kpis(store, one_version)),
            ("charts (5 queries) same filter", lambda: charts(one_version)),
        ],
        "filter change: profile version, the overview page": [
            (f"overview profile_version={one_version.profile_version}",
             lambda: overview.overview(store, one_version, profile.weights, bands)),
            ("authority_overview same filter", lambda: authority.authority_overview(store, one_version)),
        ],
    }
    if joined_version is not None:
        pages["filter change: a version not kept, the overview page"] = [
            (f"overview profile_version={joined_version.profile_version}",
             lambda: overview.overview(store, joined_version, profile.weights, bands)),
            ("authority_overview same filter", lambda: authority.authority_overview(store, joined_version)),
        ]
    print(f"\nmedian of {args.repeat} runs, seconds; cpu = process CPU seconds over all threads (median), "
          f"{os.cpu_count()} cores, load average before: {os.getloadavg()[0]:.2f}\n")
    print(f"{'page / function':<52}{'median':>9}{'min':>9}{'max':>9}{'cpu':>9}   target")
    for page, functions in pages.items():
        total = total_min = 0.0
        for name, fn in functions:
            median, runs, cpu = timed(fn, args.repeat)
            total += median
            total_min += min(runs)
            print(f"  {name:<50}{median:>9.3f}{min(runs):>9.3f}{max(runs):>9.3f}{cpu:>9.3f}", flush=True)
        target = TARGETS[page]
        verdict = "ok" if total < target else "MISSED"
        print(f"{page + ' total':<52}{total:>9.3f}{total_min:>9.3f}{'':>18}   < {target:g} s  {verdict}"
              f"  ({total / floor:,.1f}x the floor)\n", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f} (figures from a busy machine overstate wall times)")
    store.close()
    if args.db is None:
        shutil.rmtree(work, ignore_errors=True)  # a temp database is not kept: pass --db to keep one


if __name__ == "__main__":
    main()
