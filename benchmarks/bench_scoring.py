"""Benchmark: import throughput and bulk SQL scoring against two baselines measured in the same run.

    .venv/bin/python benchmarks/bench_scoring.py [--responses 100000] [--python-sample 5000] [--repeat 3]

Prints (no assertions; tests never time anything):
- generation and import throughput (responses/s, claims/s) through the real importer;
- bulk SQL scoring: the scorer's SELECT materialised (median of --repeat) and the full ``rescore``
  (history kept, audit event) — claims/s;
- the floor: a bare DuckDB ``GROUP BY response_id`` over the same claims, materialised the same way;
- the per-claim Python path (parse + ``hri_core.score_response``) on a sample, in claims/s;
- ratios: SQL scorer / bare GROUP BY (target <= 3x) and SQL claims/s / Python claims/s (target >= 50x).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hri_core import default_profile, parse_response, score_response  # noqa: E402
from hri_core.synthetic import generate_responses  # noqa: E402
from register import SYSTEM, Store  # noqa: E402
from register.importer import import_path  # noqa: E402
from register.profiles import active_profile, ensure_default_profile  # noqa: E402
from register.scorer import rescore, score_query  # noqa: E402

AS_OF = datetime(2026, 12, 1, tzinfo=timezone.utc)


def timed(fn, repeat: int) -> tuple[float, list[float]]:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs), runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=100_000)
    parser.add_argument("--python-sample", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="hri-bench-"))
    source = work / "responses.jsonl"
    start = time.perf_counter()
    with source.open("w", encoding="utf-8") as handle:
        for record in generate_responses(args.responses, seed=7):
            handle.write(json.dumps(record) + "\n")
    gen_s = time.perf_counter() - start

    store = Store(work / "bench.duckdb")
    ensure_default_profile(store, SYSTEM)
    start = time.perf_counter()
    report = import_path(store, SYSTEM, source, score=False)
    import_s = time.perf_counter() - start
    claims = store.query_one("SELECT count(*) FROM claims")[0]
    responses = store.query_one("SELECT count(*) FROM responses")[0]
    profile = active_profile(store)

    sql, params = score_query(profile, AS_OF)

    def sql_select():
        with store.cursor() as cur:
            cur.execute(f"CREATE OR REPLACE TEMP TABLE _bench AS {sql}", params)

    def bare_group_by():
        with store.cursor() as cur:
            cur.execute("CREATE OR REPLACE TEMP TABLE _bench AS SELECT response_id, revision, "
                        "sum(criticality) AS tv, max(label_mask) AS m FROM claims GROUP BY response_id, revision")

    sql_med, sql_runs = timed(sql_select, args.repeat)
    base_med, base_runs = timed(bare_group_by, args.repeat)
    rescore_med, _ = timed(lambda: rescore(store, SYSTEM, profile, as_of=AS_OF), args.repeat)

    # per-claim Python path on a sample of the same file
    sample = []
    with source.open(encoding="utf-8") as handle:
        for _, line in zip(range(args.python_sample), handle):
            sample.append(json.loads(line))
    prof = default_profile()
    sample_claims = sum(len(r["claims"]) for r in sample)

    def python_path():
        for record in sample:
            score_response(parse_response(record), prof, AS_OF)

    py_med, _ = timed(python_path, args.repeat)
    store.close()

    sql_cps = claims / sql_med
    py_cps = sample_claims / py_med
    rows = [
        ("responses", f"{responses:,}"),
        ("claims", f"{claims:,}"),
        ("generate + write JSONL", f"{gen_s:.2f} s ({args.responses / gen_s:,.0f} responses/s)"),
        ("import (parse, validate, store)", f"{import_s:.2f} s ({report.accepted / import_s:,.0f} responses/s, "
                                            f"{claims / import_s:,.0f} claims/s), quarantined {report.quarantined}"),
        ("bulk SQL score (median)", f"{sql_med * 1000:.0f} ms ({sql_cps:,.0f} claims/s) runs "
                                    + ", ".join(f"{r * 1000:.0f}" for r in sql_runs)),
        ("full rescore incl. history + audit", f"{rescore_med * 1000:.0f} ms ({claims / rescore_med:,.0f} claims/s)"),
        ("bare GROUP BY response_id (median)", f"{base_med * 1000:.0f} ms runs " + ", ".join(f"{r * 1000:.0f}" for r in base_runs)),
        ("Python per-claim path", f"{sample_claims:,} claims in {py_med * 1000:.0f} ms ({py_cps:,.0f} claims/s)"),
        ("ratio SQL score / bare GROUP BY", f"{sql_med / base_med:.2f}x (target <= 3x)"),
        ("ratio full rescore / bare GROUP BY", f"{rescore_med / base_med:.2f}x"),
        ("ratio SQL / Python claims/s", f"{sql_cps / py_cps:,.0f}x (target >= 50x)"),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()
