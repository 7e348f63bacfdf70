"""Benchmark: importing millions of responses file by file into one register -- is the cost per response flat?

    .venv/bin/python benchmarks/bench_import_scale.py [--files 40] [--per-file 250000] [--work DIR]

Writes ``--files`` JSON Lines files of ``--per-file`` synthetic responses each (``hri_core.synthetic``; distinct
response ids per file; 250,000 responses are about 485 MB, under the 500 MB default ``HRI_IMPORT_MAX_MB``) and
imports them one after the other into one database with ``register.ingest.importer.import_path`` (full validation,
revisions, quarantine bookkeeping, the search index; no scoring, as ``bench_import.py``). Each file is written just
before its import and deleted after it; writing it is outside the measured span.

Prints, per file: wall and CPU seconds of its import (``time.process_time``: every thread of this process), CPU
microseconds per response, the running total, peak RSS so far, the database's size and the load average. The floor,
DuckDB's own ``read_json`` of the first file into a fresh database, is timed at the start and again at the end.
At the end: the per-response CPU of the last files over that of the first (linearity; the target is within 1.2x),
the peak RSS after a tenth of the files against the end (the target: within 1.2x), and each import's CPU against
the floor. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hri_core.synthetic import generate_responses  # noqa: E402
from register import SYSTEM, Store  # noqa: E402
from register.ingest.importer import DEFAULT_CHUNK, import_path  # noqa: E402
from register.scoring.profiles import ensure_default_profile  # noqa: E402


def write_file(path: Path, k: int, n: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        for record in generate_responses(n, seed=100 + k, id_prefix=f"f{k:02d}"):
            out.write(json.dumps(record) + "\n")


def floor(path: Path, work: Path) -> tuple[float, float]:
    """(wall, CPU) of DuckDB's read_json of ``path`` into a fresh database, checkpointed."""
    db = work / "floor.duckdb"
    store = Store(db)
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        with store.cursor() as cur:
            cur.execute("CREATE TABLE floor AS SELECT * FROM read_json(?, format = 'newline_delimited')", [str(path)])
            cur.execute("CHECKPOINT")
        return time.perf_counter() - wall, time.process_time() - cpu
    finally:
        store.close()
        for leftover in work.glob("floor.duckdb*"):
            leftover.unlink()


def size_gb(db: Path) -> float:
    """The database's size on disk, its write-ahead log included."""
    return sum(p.stat().st_size for p in (db, db.with_name(db.name + ".wal")) if p.exists()) / 1e9


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--per-file", type=int, default=250_000)
    parser.add_argument("--work", type=Path, help="folder for the files and the database (default: a temp folder)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="hri-bench-import-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    db = work / "import.duckdb"
    for leftover in work.glob("import.duckdb*"):
        leftover.unlink()
    first = work / "part00.jsonl"
    try:
        store = Store(db)
        ensure_default_profile(store, SYSTEM)
        print(f"{args.files} files x {args.per_file:,} responses, chunks of {DEFAULT_CHUNK:,}; load average "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; cores: {os.cpu_count()}", flush=True)
        per_response: list[float] = []
        jsonl_bytes, total_cpu, rss_at_tenth = 0, 0.0, None
        floor_cpu = []
        for k in range(args.files):
            path = work / f"part{k:02d}.jsonl"
            write_file(path, k, args.per_file)
            jsonl_bytes += path.stat().st_size
            if k == 0:
                wall, cpu = floor(path, work)
                floor_cpu.append(cpu)
                print(f"floor, read_json of the first file: {wall:.1f} s wall, {cpu:.1f} CPU-s", flush=True)
            cpu, wall = time.process_time(), time.perf_counter()
            report = import_path(store, SYSTEM, path, score=False)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            total_cpu += cpu
            per_response.append(cpu / args.per_file * 1e6)
            print(f"file {k:2d}: {wall:6.1f} s wall {cpu:6.1f} CPU-s {per_response[-1]:5.0f} us/response "
                  f"({cpu / floor_cpu[0]:.1f}x the floor); {(k + 1) * args.per_file:>11,} responses, "
                  f"{total_cpu / 60:5.1f} CPU-min in all; accepted {report.accepted:,}; "
                  f"peak RSS {peak_rss_gb():.2f} GB; database {size_gb(db):.2f} GB; "
                  f"load {os.getloadavg()[0]:.2f}", flush=True)
            if k + 1 == max(1, args.files // 10):
                rss_at_tenth = peak_rss_gb()
            if k > 0:
                path.unlink()
        wall, cpu = floor(first, work)
        floor_cpu.append(cpu)
        print(f"floor again at the end: {wall:.1f} s wall, {cpu:.1f} CPU-s", flush=True)
        tail = max(1, args.files // 10)
        low, high = min(per_response), max(per_response)
        print(f"linearity: CPU per response over the last {tail} file(s) / the first file = "
              f"{sum(per_response[-tail:]) / tail / per_response[0]:.2f}; the imports {low:.0f}-{high:.0f} us per "
              f"response, {low * args.per_file / 1e6 / max(floor_cpu):.1f}-"
              f"{high * args.per_file / 1e6 / min(floor_cpu):.1f}x the floor")
        store.close()  # checkpointed: the file holds everything
        print(f"peak RSS after a tenth of the files {rss_at_tenth:.2f} GB, at the end {peak_rss_gb():.2f} GB; the "
              f"database {size_gb(db):.2f} GB, {size_gb(db) * 1e9 / jsonl_bytes:.2f}x the "
              f"{jsonl_bytes / 1e9:.1f} GB of JSON Lines; {total_cpu / 60:.1f} CPU-min in all; load average after "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
