"""Benchmark: the search index's catch-up off the import's path, against DuckDB's ``read_json`` (issue 36).

    .venv/bin/python benchmarks/bench_index_catchup.py [--responses 100000] [--slices 250000,20000] [--rounds 2]
                                                       [--outside]

Writes ``--responses`` synthetic responses (``hri_core.synthetic.generate_responses``, seed 7; about six claims
each) as JSON Lines into a temporary folder (removed at the end), imports them once with the index left behind
(``import_path(..., defer_index=True)``: stored and scored) and times that import; then, per round, interleaved:

- the floor: ``CREATE TABLE AS SELECT * FROM read_json(file)`` into a fresh database (``bench_import.floor``);
- the catch-up of a fresh copy of the imported database, once per slice size (``search_index.catch_up``;
  250,000 keys: what ``python -m register search-index`` and a default import do; 10,000: the console's background
  catch-up, ``search_catchup.BACKGROUND_SLICE_KEYS``).

Prints wall and CPU time (``time.process_time``: every thread of this process), each catch-up's CPU against the
floor's of the same round (target: at most 4.0x), the longest slice (the longest the catch-up holds the write lock),
and the load average before and after. ``--outside`` adds the issue's check as separate processes: ``python -m
register import --defer-index --json FILE``, then ``python -m register search-index`` on the same database, each
against a process running ``read_json`` on the same file (their CPU from the children's resource usage: each
includes its interpreter's start). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_import import floor, measure  # noqa: E402

from hri_core.synthetic import generate_responses  # noqa: E402
from register import SYSTEM, Store  # noqa: E402
from register.ingest.importer import import_path  # noqa: E402
from register.readmodels import search_index  # noqa: E402
from register.readmodels.search_catchup import BACKGROUND_SLICE_KEYS  # noqa: E402
from register.scoring.profiles import ensure_default_profile  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TARGET = 4.0  # the catch-up's CPU at most this many times read_json's (issue 36)
FLOOR_PROCESS = ("import duckdb, sys; c = duckdb.connect(sys.argv[1]); "
                 "c.execute(\"CREATE TABLE floor AS SELECT * FROM read_json(?, format = 'newline_delimited')\", "
                 "[sys.argv[2]]); c.execute('CHECKPOINT'); c.close()")


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def deferred_import(source: Path, db: Path) -> int:
    """Import ``source`` into a fresh ``db``, scored, the index left behind; returns the revisions left to index."""
    store = Store(db)
    try:
        ensure_default_profile(store, SYSTEM)
        report = import_path(store, SYSTEM, source, defer_index=True, max_bytes=source.stat().st_size + 1)
        assert report.search_index == "deferred" and report.quarantined == 0, report.as_dict()
        return search_index.state(store).pending
    finally:
        store.close()


def copy_database(db: Path, target: Path) -> None:
    """The database file and what lies beside it (its audit key) copied to ``target``."""
    for path in db.parent.glob(db.name + "*"):
        shutil.copy(path, target.parent / (target.name + path.name[len(db.name):]))


def catch_up(db: Path, slice_keys: int) -> tuple[int, float]:
    """The index of ``db`` caught up in slices of ``slice_keys``; (revisions indexed, longest slice in seconds)."""
    store = Store(db)
    marks = [time.perf_counter()]
    try:
        done = search_index.catch_up(store, SYSTEM, slice_keys=slice_keys,
                                     progress=lambda *_: marks.append(time.perf_counter()))
        return done, max(b - a for a, b in zip(marks, marks[1:], strict=False))
    finally:
        store.close()


def child_cpu(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str, str]:
    """Run ``argv``; (wall s, CPU s of the child, stdout, stderr)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc.stdout, proc.stderr


def outside(source: Path, work: Path) -> None:
    """The issue's check as separate processes, each against a ``read_json`` process on the same file."""
    db = work / "outside.duckdb"
    env = {"HRI_IMPORT_MAX_MB": str(source.stat().st_size // 2**20 + 1)}
    print(f"\nfrom outside (processes; load {load()}):")
    f_wall, f_cpu, _, _ = child_cpu([sys.executable, "-c", FLOOR_PROCESS, str(work / "floor-out.duckdb"),
                                     str(source)])
    print(f"  read_json process                        {f_wall:7.2f} s wall {f_cpu:7.2f} CPU-s")
    wall, cpu, out, _ = child_cpu([sys.executable, "-m", "register", "--db", str(db), "import", "--defer-index",
                                   "--json", "--quiet", str(source)], env)
    report = json.loads(out)
    print(f"  import --defer-index --json              {wall:7.2f} s wall {cpu:7.2f} CPU-s  {cpu / f_cpu:5.2f}x  "
          f"({report['accepted']:,} accepted, search_index {report['search_index']!r})")
    wall, cpu, out, err = child_cpu([sys.executable, "-m", "register", "--db", str(db), "search-index"], env)
    lines = [line for line in err.splitlines() if "revisions indexed" in line]
    print(f"  search-index                             {wall:7.2f} s wall {cpu:7.2f} CPU-s  {cpu / f_cpu:5.2f}x  "
          f"(target <= {TARGET:g}x)")
    print(f"    its progress: {len(lines)} line(s), the last: {lines[-1].strip() if lines else '-'}")
    print(f"    {out.strip()[:160]}")
    print(f"  load after: {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=100_000)
    parser.add_argument("--slices", default=f"{search_index.SLICE_KEYS},{BACKGROUND_SLICE_KEYS}",
                        help="slice sizes (response keys per transaction) to time the catch-up with")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--outside", action="store_true", help="also the check as separate processes")
    args = parser.parse_args()
    slices = [int(s) for s in args.slices.split(",")]
    with tempfile.TemporaryDirectory(prefix="hri-bench-catchup-") as folder:
        run(args, slices, Path(folder))


def run(args: argparse.Namespace, slices: list[int], work: Path) -> None:
    source = work / "responses.jsonl"
    with source.open("w", encoding="utf-8") as handle:
        for record in generate_responses(args.responses, seed=7):
            handle.write(json.dumps(record) + "\n")
    print(f"load average before: {load()}  cores: {os.cpu_count()}")
    imported = work / "imported.duckdb"
    wall, cpu = measure(lambda: deferred_import(source, imported))
    store = Store(imported)
    pending = search_index.state(store).pending
    claims = int(store.scalar("SELECT count(*) FROM claims"))
    store.close()
    print(f"file: {args.responses:,} responses, {claims:,} claims ({claims / args.responses:.1f} a response), "
          f"{source.stat().st_size / 1e6:.0f} MB")
    print(f"import --defer-index (stored and scored): {wall:.2f} s wall, {cpu:.2f} CPU-s; {pending:,} revisions "
          "left to index")
    print(f"\n{'round':>5} {'what':<34} {'wall s':>8} {'CPU s':>8} {'x floor CPU':>12} {'longest slice s':>16}")
    ratios: dict[int, list[float]] = {s: [] for s in slices}
    floors: list[float] = []
    for number in range(1, args.rounds + 1):
        db = work / f"floor-{number}.duckdb"
        f_wall, f_cpu = measure(lambda db=db: floor(source, db))
        floors.append(f_cpu)
        print(f"{number:>5} {'floor: read_json':<34} {f_wall:8.2f} {f_cpu:8.2f} {1.0:12.2f} {'-':>16}", flush=True)
        for slice_keys in slices:
            copy = work / f"catchup-{number}-{slice_keys}.duckdb"
            copy_database(imported, copy)
            result: list[tuple[int, float]] = []
            c_wall, c_cpu = measure(lambda copy=copy, s=slice_keys, r=result: r.append(catch_up(copy, s)))
            done, longest = result[0]
            assert done == pending, (done, pending)
            ratios[slice_keys].append(c_cpu / f_cpu)
            print(f"{number:>5} {f'catch-up, slices of {slice_keys:,} keys':<34} {c_wall:8.2f} {c_cpu:8.2f} "
                  f"{c_cpu / f_cpu:12.2f} {longest:16.2f}", flush=True)
            for path in work.glob(copy.name + "*"):
                path.unlink()
        for path in work.glob(db.name + "*"):
            path.unlink()
    print(f"\nfloor (read_json) CPU: median {statistics.median(floors):.2f} s over {len(floors)} round(s)")
    for slice_keys, values in ratios.items():
        print(f"catch-up in slices of {slice_keys:,}: {statistics.median(values):.2f}x the floor's CPU "
              f"(rounds: {', '.join(f'{v:.2f}' for v in values)}; target <= {TARGET:g}x)")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB  load average after: "
          f"{load()}")
    if args.outside:
        outside(source, work)


if __name__ == "__main__":
    main()
