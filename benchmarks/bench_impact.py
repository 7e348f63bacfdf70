"""Benchmark: the impact preview of a draft profile (profiles page) at scale, both ways.

    .venv/bin/python benchmarks/bench_impact.py [--responses 100000] [--db PATH] [--repeat 3] [--rescore]

Builds the register like ``benchmarks/bench_console.py`` (its ``build``: synthetic responses through
the real importer; ``--db PATH`` keeps and reuses the database), rescores every response under the
active profile at one as-of time (so that the stored rows can stand in for a rescore), then times
``register.scoring.impact.impact_preview`` for a weights-and-bands draft two ways in the same run:
from the stored score rows (``method`` "stored dimension scores") and by a full rescore
(``from_stored=False``: two scorer SELECTs joined, or one joined with the scores table), against the
active profile and against the stored scores; and a draft that also changes a floor (always a full
rescore). Prints wall time and CPU time (``time.process_time``, every thread of this process) per path,
the ratio fast/full measured in the same run, and the load average before and after; targets: < 3 s
(weights only) and < 30 s (anything else) at 10,000,000 responses. Asserts nothing (tests never time
anything). ``--rescore`` also times the rescoring that publishing runs.
"""

from __future__ import annotations

import argparse
import os
import resource
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
from register.db.sql import Params  # noqa: E402
from register.scoring.impact import ImpactPreview, impact_preview  # noqa: E402
from register.scoring.profiles import active_profile, ensure_default_profile  # noqa: E402
from register.scoring.scorer import rescore, score_select  # noqa: E402

TARGET_FAST_S, TARGET_FULL_S, TARGET_RESCORE_S, TARGET_N = 3.0, 30.0, 60.0, 10_000_000
AS_OF = datetime(2026, 12, 1, tzinfo=UTC)
DRAFT = {
    "weights": {"F": 0.40, "C": 0.10, "U": 0.25, "O": 0.05, "S": 0.05, "P": 0.05, "H": 0.10},
    "bands": [{"name": "Low", "upper": 15, "action": "release"}, {"name": "Medium", "upper": 45, "action": "caution"},
              {"name": "High", "upper": 75, "action": "review"}, {"name": "Critical", "upper": 100, "action": "block"}],
}
FLOOR_CHANGE = {"floors": [{"rule_id": "contradicted-high", "label": "CONTRADICTED", "min_criticality": 3,
                            "value": 0.65}]}


def timed(repeat: int, fn) -> tuple[float, float, object]:
    """Median wall and CPU seconds of ``repeat`` calls, and the last result."""
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), result


def timed_rescore(store: Store, profile, what: str) -> None:
    """One full rescore under ``profile`` at ``AS_OF``, with wall and CPU time and the load around it, and its
    floor in the same run: the scoring SELECT alone, counted without writing (the rescore adds the writes and
    the mitigation step)."""
    load = os.getloadavg()[0]
    p = Params()
    sql = score_select(profile, AS_OF, p)
    start, start_cpu = time.perf_counter(), time.process_time()
    store.query(f"SELECT count(*), sum(hri) FROM ({sql})", p.values)
    floor_wall, floor_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    start, start_cpu = time.perf_counter(), time.process_time()
    summary = rescore(store, SYSTEM, profile, as_of=AS_OF)
    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    print(f"{what}: {summary.responses_scored:,} responses, wall {wall:.1f} s, cpu {cpu:.1f} s "
          f"(run {summary.run_id}; target at {TARGET_N:,}: < {TARGET_RESCORE_S:g} s); floor (the scoring SELECT "
          f"alone) wall {floor_wall:.1f} s, cpu {floor_cpu:.1f} s: {wall / floor_wall:.2f}x wall, "
          f"{cpu / max(floor_cpu, 1e-9):.2f}x cpu; load {load:.2f} -> {os.getloadavg()[0]:.2f}; peak RSS of this "
          f"process so far {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB", flush=True)


def time_fast_only(store: Store, draft, repeat: int) -> None:
    """The stored-rows path for both baselines, with its floor in the same run: one scan of the current
    scores' seven dimension columns (what any preview of every response must read at least)."""
    dims = " + ".join(f"s_{d}" for d in "fcuosph")
    floor_wall, floor_cpu, _ = timed(repeat, lambda: store.query(f"SELECT count(*), sum({dims}) FROM current_scores"))
    print(f"floor (one scan of the stored dimension scores): wall {floor_wall:.3f} s, cpu {floor_cpu:.3f} s")
    for baseline in ("active", "stored"):
        wall, cpu, fast = timed(repeat, lambda b=baseline: impact_preview(store, draft, baseline=b))
        assert isinstance(fast, ImpactPreview)
        print(f"weights-and-bands draft, baseline={baseline} (median of {repeat}): {fast.method}: wall {wall:.3f} s, "
              f"cpu {cpu:.3f} s (target at {TARGET_N:,}: < {TARGET_FAST_S:g} s); {wall / floor_wall:.1f}x the floor's "
              f"wall, {cpu / max(floor_cpu, 1e-9):.1f}x its cpu; {fast.total:,} compared, "
              f"{fast.band_changes:,} band changes, {fast.action_changes:,} action changes")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=100_000)
    parser.add_argument("--db", type=Path, help="database file to build or reuse (default: a temp file)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chunk-size", type=int, default=20_000)
    parser.add_argument("--rescore", action="store_true", help="also time the publish-time rescore (writes)")
    parser.add_argument("--fast-only", action="store_true",
                        help="time only the stored-rows path, against its floor (one scan of the read model's "
                             "dimension scores): at 10M each full-path preview takes minutes")
    args = parser.parse_args()

    if args.db:
        run(args, args.db)
        return
    with tempfile.TemporaryDirectory(prefix="hri-bench-impact-") as folder:  # a temp database is not kept
        run(args, Path(folder) / "impact.duckdb")


def run(args: argparse.Namespace, db: Path) -> None:
    """Build ``db`` if it holds no responses, then time the previews (and the rescore) on it."""
    store = Store(db)
    ensure_default_profile(store, SYSTEM)
    if not store.scalar("SELECT count(*) FROM responses WHERE is_current"):
        build(store, args.responses, db.parent, args.chunk_size)
    active = active_profile(store)
    if store.scalar("SELECT count(DISTINCT as_of) FROM scores WHERE is_current") != 1:
        timed_rescore(store, active, "rescore at one as-of time (every stored row then has it)")
    responses, claims = store.query_one("SELECT count(*), sum(claim_count) FROM responses WHERE is_current")
    print(f"database: {responses:,} current responses, {claims:,} claims; {os.cpu_count()} cores, "
          f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    draft = profile_from_dict(DRAFT, base=active).model_copy(update={"version": active.version + 1})
    floors = profile_from_dict(FLOOR_CHANGE, base=draft).model_copy(update={"version": active.version + 2})

    if args.fast_only:
        time_fast_only(store, draft, args.repeat)
        if args.rescore:
            timed_rescore(store, active, "full rescore (what publishing runs; old scores kept)")
        store.close()
        return
    for baseline in ("active", "stored"):
        fast_wall, fast_cpu, fast = timed(args.repeat, lambda b=baseline: impact_preview(store, draft, baseline=b))
        assert isinstance(fast, ImpactPreview)
        full_wall, full_cpu, full = timed(args.repeat, lambda b=baseline, t=fast.as_of: impact_preview(
            store, draft, baseline=b, as_of=t, from_stored=False))  # like for like: the same as-of time
        assert isinstance(full, ImpactPreview)
        same = (fast.matrix(), fast.action_changes, fast.score_changes) == (
            full.matrix(), full.action_changes, full.score_changes)
        print(f"\nweights-and-bands draft, baseline={baseline} (median of {args.repeat}):")
        print(f"  {fast.method:<24} wall {fast_wall:7.3f} s  cpu {fast_cpu:7.3f} s  "
              f"(target at {TARGET_N:,}: < {TARGET_FAST_S:g} s)")
        print(f"  {full.method:<24} wall {full_wall:7.3f} s  cpu {full_cpu:7.3f} s  "
              f"(target at {TARGET_N:,}: < {TARGET_FULL_S:g} s)")
        print(f"  fast/full: wall {fast_wall / full_wall:.3f}, cpu {fast_cpu / max(full_cpu, 1e-9):.3f}; "
              f"same figures: {same}; {fast.total:,} compared, {fast.band_changes:,} band changes, "
              f"{fast.action_changes:,} action changes")
    wall, cpu, other = timed(args.repeat, lambda: impact_preview(store, floors))
    assert isinstance(other, ImpactPreview)
    print(f"\ndraft changing a floor too, baseline=active: {other.method} wall {wall:.3f} s  cpu {cpu:.3f} s "
          f"({other.method_note})")
    if args.rescore:
        timed_rescore(store, active, "full rescore (what publishing runs; old scores kept)")
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          "(figures from a busy machine overstate wall times)")
    store.close()


if __name__ == "__main__":
    main()
