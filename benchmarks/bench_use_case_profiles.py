"""Benchmark: the full rescore with per-use-case profiles and lenses against the single-profile rescore, side by side.

    .venv/bin/python benchmarks/bench_use_case_profiles.py [--responses 50000] [--repeat 3]

Generates a synthetic register (``hri_core.synthetic``: several use cases), then alternates two states of the same
register: no lens in force (every answer under the active profile: the single-profile rescore) and a lens version
binding a second profile to one use case and a cheap Link-and-Inference lens to another (three lens groups, one
pass each). Switching state saves a lens version (its own rescore of the changed use cases is not timed). Prints the
wall time and process CPU time (all DuckDB threads) of each full ``rescore``, their medians, the ratio and the load
average before and after (no assertions: tests never time anything). Run from the repository root.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hri_core.synthetic import generate_responses  # noqa: E402
from register import SYSTEM, Store  # noqa: E402
from register.ingest.importer import import_path  # noqa: E402
from register.scoring.lens_versions import save_lenses  # noqa: E402
from register.scoring.profiles import active_profile, create_draft, ensure_default_profile  # noqa: E402
from register.scoring.scorer import rescore  # noqa: E402

AS_OF = datetime(2026, 12, 1, tzinfo=UTC)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--responses", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "synthetic.jsonl"
        with source.open("w", encoding="utf-8") as handle:
            for record in generate_responses(args.responses, seed=7):
                handle.write(json.dumps(record) + "\n")
        store = Store(Path(folder) / "bench.duckdb")
        ensure_default_profile(store, SYSTEM)
        # the benchmark's own file: past the console's upload limit at 1M answers (1.9 GB)
        import_path(store, SYSTEM, source, score=False, max_bytes=source.stat().st_size)
        profile = active_profile(store)
        cases = [row[0] for row in store.query("SELECT use_case, count(*) FROM responses WHERE is_current "
                                               "GROUP BY 1 ORDER BY 2 DESC")]
        bound = create_draft(store, SYSTEM, {"weights": {"F": 0.3, "C": 0.2, "U": 0.15, "O": 0.1, "S": 0.1,
                                                         "P": 0.1, "H": 0.05}}, name="per-use-case")
        lenses = [{"use_case": cases[0], "profile_version": bound},
                  {"use_case": cases[1], "steps": ["link", "inference"]}]
        claims = store.scalar("SELECT count(*) FROM claims WHERE is_current")
        print(f"{args.responses:,} responses, {claims:,} claims; use cases {cases}; bound: {lenses}")
        rescore(store, SYSTEM, profile, as_of=AS_OF)
        states = {"single profile": [], "per use case": lenses}
        wall: dict[str, list[float]] = {k: [] for k in states}
        cpu: dict[str, list[float]] = {k: [] for k in states}
        print(f"load average before: {os.getloadavg()}")
        for _ in range(args.repeat):
            for name, rows in states.items():
                save_lenses(store, SYSTEM, rows, f"benchmark: {name}")  # its own rescore of the changed use cases
                c0, w0 = time.process_time(), time.perf_counter()
                rescore(store, SYSTEM, profile, as_of=AS_OF)
                wall[name].append(time.perf_counter() - w0)
                cpu[name].append(time.process_time() - c0)
                print(f"  {name:>14}: wall {wall[name][-1]:6.2f} s, CPU {cpu[name][-1]:6.2f} s")
        print(f"load average after: {os.getloadavg()}")
        for name in states:
            print(f"{name:>14}: median wall {statistics.median(wall[name]):6.2f} s, "
                  f"median CPU {statistics.median(cpu[name]):6.2f} s")
        print(f"ratio per use case / single profile: wall "
              f"{statistics.median(wall['per use case']) / statistics.median(wall['single profile']):.3f}, CPU "
              f"{statistics.median(cpu['per use case']) / statistics.median(cpu['single profile']):.3f}")
        print(store.dicts("SELECT profile_version, claim_steps, count(*) AS n FROM scores WHERE is_current "
                          "GROUP BY ALL ORDER BY ALL"))
        store.close()


if __name__ == "__main__":
    main()
