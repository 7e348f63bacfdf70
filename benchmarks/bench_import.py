"""Benchmark: the importer against its floor, DuckDB's own ``read_json`` of the same file (issue 14).

    .venv/bin/python benchmarks/bench_import.py [--responses 100000] [--small 10000]
                                                [--chunk-sizes 5000,50000] [--score] [--breakdown]
                                                [--context-text]

Writes ``--responses`` synthetic responses (``hri_core.synthetic.generate_responses``, seed 7; about 6
claims each) and the first ``--small`` of them as JSON Lines, then, in the same run and interleaved:

- the floor: ``CREATE TABLE AS SELECT * FROM read_json(file)`` into a fresh database file (DuckDB's
  own parser, no validation);
- the importer (``register.ingest.importer.import_path``: validation of every record, revisions,
  quarantine bookkeeping; scoring only with ``--score``) into a fresh database, once per chunk size.

For each it prints wall and CPU seconds (``time.process_time``: every thread of this process), the
ratio of the importer's CPU to the floor's taken in the same round, the CPU per response at both
sizes (linearity: the large file's per-response CPU over the small file's), peak RSS, and the
database's size against the JSON Lines file. ``--breakdown`` imports the large file once more (the largest chunk
size) with every SQL statement timed (``statement_times.py``) and prints where its CPU goes, step by step, each
against the floor: the bulk check's parse, its checks, the canonical JSON and hash, the stores, the commits, the
search index, and Python outside any statement. ``--context-text`` gives every response three retrieved chunks
as JSON text in its ``retrieved_context`` string (as a CSV cell carries them), so every record takes the
per-record path and its embedded JSON is decoded strictly (issue 34). Prints figures; asserts nothing.
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

from statement_times import StatementTimes  # noqa: E402

from hri_core.synthetic import generate_responses  # noqa: E402
from register import SYSTEM, Store  # noqa: E402
from register.ingest.importer import import_path  # noqa: E402
from register.scoring.profiles import ensure_default_profile  # noqa: E402

# the import's steps, by what their statements' texts hold (the first match decides; see register.ingest.bulk and
# records, and register.readmodels: the hub and search_index)
STEPS = (
    ("bulk check: the parse", ("json_keys(line)",)),
    ("bulk check: canonical JSON, sha256", ("sha256(",)),
    ("bulk check: fields, claims, staging", ("_bulk_",)),
    ("search index", ("search_", "_slice_")),
    ("commits (and checkpoints)", ("COMMIT",)),
    ("stores: responses, claims, counts", ("INSERT INTO responses", "INSERT INTO claims", "_plan", "_stored",
                                          "response_ids", "claim_source_counts", "_claim_counts", "_refresh",
                                          "current_scores", "score_summary")),
)


def measure(fn) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def floor(source: Path, db: Path) -> None:
    """DuckDB's read_json of the file into a table: the parse-and-store floor, no validation."""
    store = Store(db)
    try:
        with store.cursor() as cur:
            cur.execute("CREATE TABLE floor AS SELECT * FROM read_json(?, format = 'newline_delimited')",
                        [str(source)])
            cur.execute("CHECKPOINT")  # the importer's data is on disk too when it returns
    finally:
        store.close()


def importer(source: Path, db: Path, chunk_size: int, score: bool) -> None:
    store = Store(db)
    try:
        ensure_default_profile(store, SYSTEM)
        report = import_path(store, SYSTEM, source, chunk_size=chunk_size, score=score)
        assert report.accepted > 0
    finally:
        store.close()


def breakdown(source: Path, db: Path, chunk_size: int, score: bool, floor_cpu: float) -> None:
    """One more import of ``source``, every statement timed: its steps' CPU, each against the floor's."""
    times = StatementTimes(STEPS)
    with times.timing():
        importer(source, db, chunk_size, score)
    print(f"where the import's CPU goes (chunk {chunk_size:,}; {times.wall:.2f} s wall, {times.cpu:.2f} CPU-s, "
          f"{times.cpu / floor_cpu:.2f}x the floor's {floor_cpu:.2f} CPU-s):")
    print(f"  {'step':<36} {'statements':>10} {'wall s':>8} {'CPU s':>8} {'share':>6} {'x floor CPU':>12}")
    rows = times.rows()
    for step in rows:
        print(f"  {step.name:<36} {step.statements:>10} {step.wall:8.2f} {step.cpu:8.2f} "
              f"{step.cpu / times.cpu:6.0%} {step.cpu / floor_cpu:12.2f}")
    check = sum(step.cpu for step in rows if step.name.startswith("bulk check"))
    index = sum(step.cpu for step in rows if step.name == "search index")
    print(f"  the bulk check alone {check / floor_cpu:.2f}x the floor; the search index alone "
          f"{index / floor_cpu:.2f}x; all but the index {(times.cpu - index) / floor_cpu:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=100_000)
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--chunk-sizes", default="5000,50000")
    parser.add_argument("--score", action="store_true", help="score each batch too (the default import does)")
    parser.add_argument("--breakdown", action="store_true",
                        help="import the large file once more with every statement timed; print the steps' CPU")
    parser.add_argument("--context-text", action="store_true",
                        help="every response carries its chunks as JSON text (all records take the per-record path)")
    args = parser.parse_args()
    chunk_sizes = [int(c) for c in args.chunk_sizes.split(",")]

    work = Path(tempfile.mkdtemp(prefix="hri-bench-import-"))
    try:
        files = {"large": work / "large.jsonl", "small": work / "small.jsonl"}
        with files["large"].open("w") as large, files["small"].open("w") as small:
            for i, record in enumerate(generate_responses(args.responses, seed=7)):
                if args.context_text:
                    record["retrieved_context"] = json.dumps([{"id": f"k{k}", "text": f"Chunk {k} of {i}.",
                                                               "source_id": f"src-{k}"} for k in range(3)])
                line = json.dumps(record) + "\n"
                large.write(line)
                if i < args.small:
                    small.write(line)
        sizes = {"large": args.responses, "small": min(args.small, args.responses)}
        print(f"load average before: {os.getloadavg()}  cores: {os.cpu_count()}")
        print(f"files: {sizes['large']:,} responses {files['large'].stat().st_size / 1e6:.1f} MB, "
              f"{sizes['small']:,} responses {files['small'].stat().st_size / 1e6:.1f} MB")
        print(f"{'size':>6} {'what':<22} {'wall s':>8} {'CPU s':>8} {'CPU us/resp':>12} {'x floor CPU':>12} "
              f"{'db/jsonl':>9}")
        per_response: dict[str, dict[str, float]] = {}
        for name in ("small", "large"):
            n = sizes[name]
            db = work / f"floor-{name}.duckdb"
            wall, cpu = measure(lambda db=db, name=name: floor(files[name], db))
            floor_cpu = cpu
            print(f"{name:>6} {'floor: read_json':<22} {wall:8.2f} {cpu:8.2f} {cpu / n * 1e6:12.1f} {1.0:12.2f} "
                  f"{db.stat().st_size / files[name].stat().st_size:9.2f}")
            for chunk in chunk_sizes:
                db = work / f"import-{name}-{chunk}.duckdb"
                wall, cpu = measure(lambda db=db, name=name, chunk=chunk: importer(files[name], db, chunk,
                                                                                 args.score))
                label = f"import, chunk {chunk:,}"
                per_response.setdefault(label, {})[name] = cpu / n
                print(f"{name:>6} {label:<22} {wall:8.2f} {cpu:8.2f} {cpu / n * 1e6:12.1f} "
                      f"{cpu / floor_cpu:12.2f} {db.stat().st_size / files[name].stat().st_size:9.2f}")
        if args.breakdown:
            breakdown(files["large"], work / "import-breakdown.duckdb", max(chunk_sizes), args.score, floor_cpu)
        for label, per in per_response.items():
            print(f"linearity ({label}): CPU per response at {sizes['large']:,} / at {sizes['small']:,} = "
                  f"{per['large'] / per['small']:.2f}")
        print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB  "
              f"load average after: {os.getloadavg()}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
