"""Benchmark: the importer against its floor, DuckDB's own ``read_json`` of the same file (issue 14).

    .venv/bin/python benchmarks/bench_import.py [--responses 100000] [--small 10000]
                                                [--chunk-sizes 5000,50000] [--score] [--breakdown]
                                                [--context-text] [--stages [--repeat 2]]

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
per-record path and its embedded JSON is decoded strictly (issue 34).

``--stages`` (issue 36) times, instead, the import of the large file against the floor in the same round, ``--repeat``
rounds: **to stored** (no scoring) and **to scored**, each with the search index deferred (``defer_index=True``, as
``import --defer-index``: issue 36 takes it off the import's path; ``bench_index_catchup.py`` times its catch-up),
the compiled check alone (``register.ingest.bulk.stage_plain``) within them, and the import to stored once more with
the garbage collector left running during the check (the importer pauses it: the effect of the pause). Each with
wall and CPU seconds, the ratio of CPU to the floor's, and the load average. Prints figures; asserts nothing.
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
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from statement_times import StatementTimes  # noqa: E402

from hri_core.synthetic import generate_responses  # noqa: E402
from register import SYSTEM, Store  # noqa: E402
from register.ingest import batches, bulk  # noqa: E402
from register.ingest.importer import import_path  # noqa: E402
from register.scoring.profiles import ensure_default_profile  # noqa: E402

# the import's steps, by what their statements' texts hold (the first match decides; see register.ingest.bulk and
# records, and register.readmodels: the hub and search_index)
STEPS = (
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


def importer(source: Path, db: Path, chunk_size: int, score: bool, defer_index: bool = False) -> None:
    store = Store(db)
    try:
        ensure_default_profile(store, SYSTEM)
        report = import_path(store, SYSTEM, source, chunk_size=chunk_size, score=score, defer_index=defer_index)
        assert report.accepted > 0
    finally:
        store.close()


@contextmanager
def cpu_of(module, name: str) -> Iterator[list[float]]:
    """Within the block, ``module.name`` (a function) adds the CPU seconds of each call to the list's one item."""
    spent = [0.0]
    real = getattr(module, name)

    def timed(*args, **kwargs):
        cpu = time.process_time()
        try:
            return real(*args, **kwargs)
        finally:
            spent[0] += time.process_time() - cpu

    setattr(module, name, timed)
    try:
        yield spent
    finally:
        setattr(module, name, real)


@contextmanager
def collector_running() -> Iterator[None]:
    """Within the block the compiled check leaves the garbage collector running (it pauses it otherwise)."""
    real = bulk.collector_paused
    bulk.collector_paused = nullcontext  # type: ignore[assignment]
    try:
        yield
    finally:
        bulk.collector_paused = real  # type: ignore[assignment]


def breakdown(source: Path, db: Path, chunk_size: int, score: bool, floor_cpu: float) -> None:
    """One more import of ``source``, every statement timed: its steps' CPU, each against the floor's."""
    times = StatementTimes(STEPS)
    with times.timing(), cpu_of(batches, "stage_plain") as check:
        importer(source, db, chunk_size, score)
    print(f"where the import's CPU goes (chunk {chunk_size:,}; {times.wall:.2f} s wall, {times.cpu:.2f} CPU-s, "
          f"{times.cpu / floor_cpu:.2f}x the floor's {floor_cpu:.2f} CPU-s):")
    print(f"  {'step':<36} {'statements':>10} {'wall s':>8} {'CPU s':>8} {'share':>6} {'x floor CPU':>12}")
    rows = times.rows()
    for step in rows:
        print(f"  {step.name:<36} {step.statements:>10} {step.wall:8.2f} {step.cpu:8.2f} "
              f"{step.cpu / times.cpu:6.0%} {step.cpu / floor_cpu:12.2f}")
    print(f"  {'  of Python: the compiled check':<36} {'-':>10} {'-':>8} {check[0]:8.2f} "
          f"{check[0] / times.cpu:6.0%} {check[0] / floor_cpu:12.2f}")
    index = sum(step.cpu for step in rows if step.name == "search index")
    print(f"  the compiled check alone {check[0] / floor_cpu:.2f}x the floor; the search index alone "
          f"{index / floor_cpu:.2f}x; all but the index {(times.cpu - index) / floor_cpu:.2f}x")


def stages(source: Path, work: Path, n: int, chunk_size: int, repeat: int) -> None:
    """Issue 36's figures (module docstring): the import to stored and to scored, the index deferred, against the
    floor, round after round."""
    print(f"issue 36: {n:,} responses, chunk {chunk_size:,}, the search index deferred; CPU s (x the floor's in the "
          f"same round), wall s")
    for round_ in range(1, repeat + 1):
        load = os.getloadavg()
        db = work / f"floor-stages-{round_}.duckdb"
        floor_wall, floor_cpu = measure(lambda db=db: floor(source, db))
        print(f"round {round_}, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}: floor read_json {floor_cpu:.2f} CPU-s "
              f"({floor_wall:.2f} s wall)")
        for label, score, running in (("to stored", False, False), ("to scored", True, False),
                                      ("to stored, collector running", False, True)):
            db = work / f"import-stages-{round_}-{label.replace(' ', '-').replace(',', '')}.duckdb"
            with cpu_of(batches, "stage_plain") as check, collector_running() if running else nullcontext():
                wall, cpu = measure(lambda db=db, score=score: importer(source, db, chunk_size, score, True))
            print(f"  import {label:<30} {cpu:7.2f} CPU-s ({cpu / floor_cpu:.2f}x) {wall:7.2f} s wall; "
                  f"the compiled check {check[0]:.2f} CPU-s ({check[0] / floor_cpu:.2f}x)")
            for leftover in work.glob(f"{db.name}*"):  # the database and its WAL: about 0.4x the file each
                leftover.unlink()
        print(f"  load after the round: {os.getloadavg()}")


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
    parser.add_argument("--stages", action="store_true",
                        help="issue 36: the import of the large file to stored and to scored (the index apart), "
                             "against the floor")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of --stages")
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
        if args.stages:
            print(f"file: {files['large'].stat().st_size / 1e6:.1f} MB")
            stages(files["large"], work, args.responses, max(chunk_sizes), args.repeat)
            print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
            return
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
