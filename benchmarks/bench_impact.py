"""Benchmark: the impact preview of a draft profile (profiles page) at scale.

    .venv/bin/python benchmarks/bench_impact.py [--responses 1000000] [--db PATH] [--repeat 3]

Builds the register like ``benchmarks/bench_console.py`` (its ``build``: synthetic responses through
the real importer; ``--db PATH`` keeps and reuses the database), then times
``register.scoring.impact.impact_preview`` for a draft that changes weights, bands and a floor, against the
active profile scored at the same as-of time (the page's default: two scorer SELECTs joined) and
against the stored current scores (one scorer SELECT joined with the scores table). With
``--rescore`` it also times the rescoring that publishing runs (``register.scoring.scorer.rescore``: every
current response, old scores kept -- this adds a score row per response to the database). Prints figures
against the target (< 3 s at 1,000,000
responses); asserts nothing (tests never time anything).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_console import build  # noqa: E402

from hri_core import profile_from_dict  # noqa: E402
from register import SYSTEM, Store  # noqa: E402
from register.scoring.impact import impact_preview  # noqa: E402
from register.scoring.profiles import active_profile, ensure_default_profile  # noqa: E402
from register.scoring.scorer import rescore  # noqa: E402

TARGET_S = 3.0
AS_OF = datetime(2026, 12, 1, tzinfo=UTC)
DRAFT = {
    "weights": {"F": 0.40, "C": 0.10, "U": 0.25, "O": 0.05, "S": 0.05, "P": 0.05, "H": 0.10},
    "bands": [{"name": "Low", "upper": 15, "action": "release"}, {"name": "Medium", "upper": 45, "action": "caution"},
              {"name": "High", "upper": 75, "action": "review"}, {"name": "Critical", "upper": 100, "action": "block"}],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=1_000_000)
    parser.add_argument("--db", type=Path, help="database file to build or reuse (default: a temp file)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chunk-size", type=int, default=20_000)
    parser.add_argument("--rescore", action="store_true", help="also time the publish-time rescore (writes)")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="hri-bench-impact-"))
    db = args.db or work / "impact.duckdb"
    store = Store(db)
    ensure_default_profile(store, SYSTEM)
    if not store.scalar("SELECT count(*) FROM responses WHERE is_current"):
        build(store, args.responses, db.parent if args.db else work, args.chunk_size)
    responses, claims = store.query_one("SELECT count(*), sum(claim_count) FROM responses WHERE is_current")
    print(f"database: {responses:,} current responses, {claims:,} claims")
    active = active_profile(store)
    draft = profile_from_dict(DRAFT, base=active).model_copy(update={"version": active.version + 1})

    for baseline in ("active", "stored"):
        runs, preview = [], None
        for _ in range(args.repeat):
            start = time.perf_counter()
            preview = impact_preview(store, draft, as_of=AS_OF, baseline=baseline)
            runs.append(time.perf_counter() - start)
        median = statistics.median(runs)
        verdict = "ok" if median < TARGET_S else "MISSED"
        print(f"\nimpact_preview baseline={baseline}: median {median:.3f} s (min {min(runs):.3f}, max {max(runs):.3f}) "
              f"over {args.repeat} runs  -> target < {TARGET_S:g} s {verdict}")
        print(f"  {preview.total:,} responses compared; {preview.band_changes:,} band changes, "
              f"{preview.action_changes:,} action changes, {preview.score_changes:,} score changes")
        for line in preview.transition_lines()[:6]:
            print(f"    {line}")
        print(f"  mean score {preview.mean_old:.2f} -> {preview.mean_new:.2f}; "
              f"median {preview.median_old:.2f} -> {preview.median_new:.2f}")
    if args.rescore:
        start = time.perf_counter()
        summary = rescore(store, SYSTEM, active, as_of=AS_OF)
        print(f"\nrescore (publishing): {summary.responses_scored:,} responses in {time.perf_counter() - start:.2f} s "
              f"(run {summary.run_id}, old scores kept)")
    store.close()


if __name__ == "__main__":
    main()
