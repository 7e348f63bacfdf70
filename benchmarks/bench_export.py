"""Benchmark: the Responses page's export, built in Python from a DataFrame (before) and copied by DuckDB (now).

    .venv/bin/python benchmarks/bench_export.py [--responses 100000] [--db PATH] [--excel-rows 20000]

Builds (or reuses, with ``--db``) a register of N synthetic responses the way ``bench_console.py`` does
(the real importer and scorer), then times, each step in a fresh process so that its peak memory is its own:

- ``query -> frame``: ``queries.explorer.export_rows``, the export view as a DataFrame (the floor: both old paths
  start from it);
- ``old CSV``: the frame, then ``ui.framework.exports.to_csv_bytes`` -- what every rerun of the page did after
  "Prepare export", together with ``old Excel``;
- ``old Excel``: the frame, then ``ui.framework.exports.to_excel_bytes``;
- ``COPY CSV``: ``register.console.exports.write_csv``, DuckDB's COPY of the same view to a file, done once;
- ``COPY CSV + Excel``: the same, plus the Excel file, at ``--excel-rows`` rows (the page's limit,
  ``HRI_EXCEL_MAX_ROWS``).

Each line shows wall time, CPU time (``time.process_time``: every thread of the process), the load average
when the step ended, and the step's peak-RSS growth over its process's state after opening the database
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``) and that peak. Ratios are to ``query -> frame`` of the same run. Prints
figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_console import build  # noqa: E402

from register import SYSTEM, Store  # noqa: E402
from register.console.exports import write_csv  # noqa: E402
from register.console.queries import explorer  # noqa: E402
from register.console.queries.filters import Filters  # noqa: E402
from register.scoring.profiles import ensure_default_profile  # noqa: E402
from ui.framework.exports import to_csv_bytes, to_excel_bytes, write_excel  # noqa: E402

STEPS = ("query -> frame", "old CSV", "old Excel", "COPY CSV", "COPY CSV + Excel")


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def run_step(db: Path, step: str, excel_rows: int) -> dict:
    """One step in this process: its wall and CPU time, output size and peak-RSS growth."""
    store = Store(db)
    f = Filters()
    folder = Path(tempfile.mkdtemp(prefix="hri-bench-export-"))
    base = _maxrss_mb()  # the process with the database open: what the step adds is its own
    start, start_cpu = time.perf_counter(), time.process_time()
    if step == "query -> frame":
        size = len(explorer.export_rows(store, f))
        unit = "rows"
    elif step == "old CSV":
        size, unit = len(to_csv_bytes(explorer.export_rows(store, f))), "bytes"
    elif step == "old Excel":
        size, unit = len(to_excel_bytes(explorer.export_rows(store, f))), "bytes"
    elif step == "COPY CSV":
        written = write_csv(store, f, folder / "export.csv")
        size, unit = written.path.stat().st_size, "bytes"
    elif step == "COPY CSV + Excel":
        written = write_csv(store, f, folder / "export.csv", limit=excel_rows, frame_up_to=excel_rows)
        assert written.frame is not None
        write_excel(written.frame, folder / "export.xlsx")
        size, unit = written.path.stat().st_size + (folder / "export.xlsx").stat().st_size, "bytes"
    else:
        raise SystemExit(f"unknown step {step!r}")
    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()
    store.close()
    return {"step": step, "wall": wall, "cpu": cpu, "load": os.getloadavg(), "rss_growth_mb": _maxrss_mb() - base,
            "rss_peak_mb": _maxrss_mb(), "size": size, "unit": unit}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=100_000)
    parser.add_argument("--db", type=Path, help="database file to build or reuse (default: a temp file)")
    parser.add_argument("--excel-rows", type=int, default=20_000, help="rows of the 'COPY CSV + Excel' step")
    parser.add_argument("--chunk-size", type=int, default=20_000)
    parser.add_argument("--step", help=argparse.SUPPRESS)  # internal: run one step, print it as JSON
    args = parser.parse_args()
    if args.step:
        print(json.dumps(run_step(args.db, args.step, args.excel_rows)))
        return

    if args.db:
        run(args, args.db)
        return
    with tempfile.TemporaryDirectory(prefix="hri-bench-export-") as folder:  # a temp database is not kept
        run(args, Path(folder) / "export.duckdb")


def run(args: argparse.Namespace, db: Path) -> None:
    """Build ``db`` if it holds no responses, then time each step in a process of its own."""
    work = db.parent
    store = Store(db)
    ensure_default_profile(store, SYSTEM)
    if existing := store.scalar("SELECT count(*) FROM responses WHERE is_current"):
        print(f"reusing {db}: {existing:,} current responses")
    else:
        build(store, args.responses, work, args.chunk_size)
    store.close()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs")
    results = {}
    for step in STEPS:
        out = subprocess.run([sys.executable, __file__, "--db", str(db), "--step", step,
                              "--excel-rows", str(args.excel_rows)], check=True, capture_output=True, text=True)
        results[step] = json.loads(out.stdout.strip().splitlines()[-1])
    floor = results["query -> frame"]
    print(f"{'step':<18} {'wall s':>8} {'CPU s':>8} {'x floor (wall)':>15} {'x floor (CPU)':>14} "
          f"{'peak RSS +MB':>13} {'peak RSS MB':>12} {'output':>16}  load (1/5/15 min)")
    for step in STEPS:
        r = results[step]
        print(f"{step:<18} {r['wall']:>8.2f} {r['cpu']:>8.2f} {r['wall'] / floor['wall']:>15.2f} "
              f"{r['cpu'] / floor['cpu']:>14.2f} {r['rss_growth_mb']:>13.0f} {r['rss_peak_mb']:>12.0f} "
              f"{r['size']:>10,} {r['unit']:<5}  "
              + " ".join(f"{x:.2f}" for x in r["load"]))
    old_rerun = results["old CSV"]["cpu"] + results["old Excel"]["cpu"] - floor["cpu"]
    print(f"every rerun after 'Prepare export', before: the frame to CSV and Excel bytes, ~{old_rerun:.1f} CPU-s "
          f"(old CSV + old Excel - query); now: none (the page offers the file COPY wrote once, "
          f"{results['COPY CSV']['cpu']:.2f} CPU-s, {results['old CSV']['cpu'] / results['COPY CSV']['cpu']:.1f}x "
          "less than the old CSV alone)")


if __name__ == "__main__":
    main()
