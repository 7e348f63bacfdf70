"""Benchmark: the memory of one import as the register grows -- is an import's peak RSS flat in N? (issue 14)

    .venv/bin/python benchmarks/bench_import_rss.py --db SMALL --db LARGE [--per-file 250000]
                                                    [--memory-limit 4GB] [--work DIR]

Each ``--db`` is an existing register (``python -m register --db PATH demo --synthetic N --bulk``: 1,000,000
and 10,000,000 responses, say). Writes one JSON Lines file of ``--per-file`` new synthetic responses
(``hri_core.synthetic``, ids no register holds), then for each register, in the same run: copies it into
``--work`` (the register itself is never written) and imports the file into the copy in a child process, as
``python -m register import FILE`` would run (full validation, revisions, quarantine bookkeeping, the search
index; no scoring, as ``bench_import.py``), under ``--memory-limit`` (DuckDB's buffers; the command line's
``HRI_MEMORY_LIMIT``). The floor: DuckDB's own ``read_json`` of the same file, in a child process too.

Prints, per import: the register's size, wall and CPU seconds (the child's, every thread), peak RSS (the
child's ``ru_maxrss``), the ratio of its CPU to the floor's and the load average; at the end each import's peak
RSS over the first one's (the target: the largest register within 1.2x of the smallest). Prints figures; asserts
nothing.

One process per import measures what an import costs at a register's size. A process that imports file after
file (``bench_import_scale.py``: one Store for 40 files) also keeps DuckDB's cache of the register's blocks,
which fills up to the memory limit as the register grows.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hri_core.synthetic import generate_responses  # noqa: E402

# the child: one import (or the floor, ``bench_import.floor``) in a fresh process, under ``HRI_MEMORY_LIMIT`` as the
# command line runs; prints the register's current responses before, its CPU seconds and peak RSS as JSON
_CHILD = """
import json, resource, sys, time
from pathlib import Path
from typing import Any
sys.path.insert(0, sys.argv[1])
from benchmarks.bench_import import floor
from register import SYSTEM, Store
from register.ingest.importer import import_path
what, db, path = sys.argv[2:5]
cpu = time.process_time()
before = accepted = None
if what == "floor":
    floor(Path(path), Path(db))
else:
    store = Store(db)
    try:
        before = store.scalar("SELECT count(*) FROM responses WHERE is_current")
        cpu = time.process_time()  # the import alone
        accepted = import_path(store, SYSTEM, path, score=False).accepted
    finally:
        store.close()
print(json.dumps({"cpu": time.process_time() - cpu, "before": before, "accepted": accepted,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def child(what: str, db: Path, source: Path, limit: str) -> tuple[float, dict[str, Any]]:
    """(wall seconds, the child's figures) of one import or floor run in a fresh process."""
    wall = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _CHILD, str(ROOT), what, str(db), str(source)],
                         capture_output=True, text=True, env={**os.environ, "HRI_MEMORY_LIMIT": limit})
    if out.returncode:
        raise SystemExit(f"the {what} into {db} failed (exit {out.returncode}):\n{out.stderr[-3000:]}")
    return time.perf_counter() - wall, json.loads(out.stdout.strip().splitlines()[-1])


def copy_register(db: Path, work: Path, name: str) -> Path:
    """A copy of the register (its write-ahead log and audit key too) to import into."""
    target = work / f"{name}.duckdb"
    for suffix in ("", ".wal", ".audit-key"):
        source = db.with_name(db.name + suffix)
        if source.exists():
            shutil.copy2(source, target.with_name(target.name + suffix))  # the key keeps its mode 0600
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, action="append", required=True,
                        help="an existing register (give two or more, smallest first)")
    parser.add_argument("--per-file", type=int, default=250_000)
    parser.add_argument("--memory-limit", default="4GB", help="DuckDB's memory limit of each import")
    parser.add_argument("--work", type=Path, help="folder for the file and the copies (default: a temp folder)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hri-bench-import-rss-", dir=args.work))
    try:
        source = work / "new.jsonl"
        with source.open("w", encoding="utf-8") as out:
            for record in generate_responses(args.per_file, seed=4242, id_prefix="rss"):
                out.write(json.dumps(record) + "\n")
        print(f"file: {args.per_file:,} new responses, {source.stat().st_size / 1e6:.0f} MB; memory limit "
              f"{args.memory_limit}; cores {os.cpu_count()}; load average "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
        wall, floor = child("floor", work / "floor.duckdb", source, args.memory_limit)
        print(f"floor, read_json of the file: {wall:.1f} s wall, {floor['cpu']:.1f} CPU-s, peak RSS "
              f"{floor['peak_mb']:.0f} MB", flush=True)
        peaks = []
        for k, db in enumerate(args.db):
            copy = copy_register(db, work, f"register{k}")
            wall, got = child("import", copy, source, args.memory_limit)
            peaks.append(got["peak_mb"])
            print(f"into {got['before']:>11,} responses: {wall:6.1f} s wall {got['cpu']:6.1f} CPU-s "
                  f"({got['cpu'] / floor['cpu']:.1f}x the floor), accepted {got['accepted']:,}, peak RSS "
                  f"{got['peak_mb']:.0f} MB; load {os.getloadavg()[0]:.2f}", flush=True)
            for leftover in work.glob(f"register{k}.duckdb*"):
                leftover.unlink()
        print("peak RSS over the first register's: "
              + ", ".join(f"{peak / peaks[0]:.2f}x" for peak in peaks)
              + f"; load average after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
