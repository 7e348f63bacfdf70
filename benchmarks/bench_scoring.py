"""Benchmark: import throughput and bulk SQL scoring against two baselines measured in the same run.

    .venv/bin/python benchmarks/bench_scoring.py [--responses 100000] [--python-sample 5000] [--repeat 9]

Prints (no assertions; tests never time anything):
- generation and import throughput (responses/s, claims/s) through the real importer;
- bulk SQL scoring: the scorer's SELECT materialised and the full ``rescore`` (history kept, the
  ``score_floors`` rows, audit event) -- claims/s;
- the floor: a bare DuckDB ``GROUP BY response_id`` over the same claims, materialised the same way;
- the output floor: the scorer's output (one row per current response, the same 19 columns, joined to
  the responses so that responses without claims get a row) built from the cheapest possible
  aggregate (sum(v) and seven sums of v times a constant, no HRI logic) -- what any scorer with this
  output contract pays before computing anything;
- the per-claim Python path (parse + ``hri_core.score_response``) on a sample, in claims/s;
- ratios: SQL scorer / bare GROUP BY (target <= 3x) and SQL claims/s / Python claims/s (target >= 50x).

Works in a temporary folder removed at the end, also when a step fails (it holds the JSON Lines file and the
database: about 300 MB at 100,000 responses).

The machine may be shared: the scorer, the bare GROUP BY and the output floor run interleaved (one
of each per round, --repeat rounds), ratios are the median of the per-round ratios, and the load
average and the process CPU time (all DuckDB threads) are printed next to the wall-clock figures.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hri_core import default_profile, parse_response, score_response  # noqa: E402
from hri_core.synthetic import generate_responses  # noqa: E402
from register import SYSTEM, Store  # noqa: E402
from register.ingest.importer import import_path  # noqa: E402
from register.scoring.profiles import active_profile, ensure_default_profile  # noqa: E402
from register.scoring.scorer import rescore, score_query  # noqa: E402

AS_OF = datetime(2026, 12, 1, tzinfo=UTC)


# The scorer's output contract with no HRI logic: one row per current response, 19 columns.
OUTPUT_FLOOR_SQL = """
SELECT r.response_id, r.revision, coalesce(a.n_f / a.tv, 0.0) AS s_f, coalesce(a.n_c / a.tv, 0.0) AS s_c,
    coalesce(a.n_u / a.tv, 0.0) AS s_u, coalesce(a.n_o / a.tv, 0.0) AS s_o, coalesce(a.n_s / a.tv, 0.0) AS s_s,
    coalesce(a.n_p / a.tv, 0.0) AS s_p, coalesce(a.n_h / a.tv, 0.0) AS s_h, 0.0 AS hri_add, 0.0 AS hri,
    0.0 AS score, 'Low' AS band, 'release' AS action, a.tv IS NULL AS no_claims,
    coalesce(a.tv, 0)::INTEGER AS total_criticality, 0 AS floors_fired, NULL::VARCHAR AS decisive_claim_id,
    NULL::VARCHAR AS decisive_rule_id
FROM responses r LEFT JOIN (
    SELECT response_key, sum(criticality) AS tv, sum(criticality * 0.5) AS n_f, sum(criticality * 0.25) AS n_c,
        sum(criticality * 0.125) AS n_u, sum(label_mask * 0.5) AS n_o, sum(label_mask * 0.25) AS n_s,
        sum(label_mask * 0.125) AS n_p, sum(label_mask * 0.0625) AS n_h
    FROM claims WHERE is_current GROUP BY response_key) a ON a.response_key = r.response_key
WHERE r.is_current
"""


def timed(fn, repeat: int) -> tuple[float, list[float]]:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs), runs


def interleaved(fns: dict, repeat: int) -> dict[str, dict[str, list[float]]]:
    """Run each function once per round, in turn, for ``repeat`` rounds: wall and process CPU seconds."""
    out = {name: {"wall": [], "cpu": []} for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            cpu, start = time.process_time(), time.perf_counter()
            fn()
            out[name]["wall"].append(time.perf_counter() - start)
            out[name]["cpu"].append(time.process_time() - cpu)
    return out


def ratio(num: list[float], den: list[float]) -> float:
    """Median of the per-round ratios (both measured in the same round)."""
    return statistics.median(a / b for a, b in zip(num, den, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=100_000)
    parser.add_argument("--python-sample", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    # the file and the database (about 300 MB at 100,000 responses) go with the folder, whatever happens
    with tempfile.TemporaryDirectory(prefix="hri-bench-scoring-") as folder:
        run(args, Path(folder))


def run(args: argparse.Namespace, work: Path) -> None:
    """Generate, import, time and print, in the temporary folder ``work``."""
    source = work / "responses.jsonl"
    start = time.perf_counter()
    with source.open("w", encoding="utf-8") as handle:
        for record in generate_responses(args.responses, seed=7):
            handle.write(json.dumps(record) + "\n")
    gen_s = time.perf_counter() - start

    store = Store(work / "bench.duckdb")
    try:
        measure(args, store, source, gen_s)
    finally:
        store.close()


def measure(args: argparse.Namespace, store: Store, source: Path, gen_s: float) -> None:
    """Import ``source`` into ``store`` and print the figures."""
    ensure_default_profile(store, SYSTEM)
    start = time.perf_counter()
    report = import_path(store, SYSTEM, source, score=False)
    import_s = time.perf_counter() - start
    claims = store.scalar("SELECT count(*) FROM claims")
    responses = store.scalar("SELECT count(*) FROM responses")
    profile = active_profile(store)

    sql, params = score_query(profile, AS_OF)

    def sql_select():
        with store.cursor() as cur:
            cur.execute(f"CREATE OR REPLACE TEMP TABLE _bench AS {sql}", params)

    def bare_group_by():
        with store.cursor() as cur:
            cur.execute("CREATE OR REPLACE TEMP TABLE _bench AS SELECT response_id, revision, "
                        "sum(criticality) AS tv, max(label_mask) AS m FROM claims GROUP BY response_id, revision")

    def output_floor():
        with store.cursor() as cur:
            cur.execute(f"CREATE OR REPLACE TEMP TABLE _bench AS {OUTPUT_FLOOR_SQL}")

    def full_rescore():
        rescore(store, SYSTEM, profile, as_of=AS_OF)

    for fn in (sql_select, bare_group_by, output_floor):  # warm-up: first runs read the file
        fn()
    load_before = os.getloadavg()
    runs = interleaved({"sql": sql_select, "bare": bare_group_by, "floor": output_floor}, args.repeat)
    load_after = os.getloadavg()
    # every rescore keeps the earlier score rows, so later runs work on a larger scores table
    runs["rescore"] = interleaved({"rescore": full_rescore}, min(args.repeat, 5))["rescore"]
    sql_runs, base_runs, floor_runs = runs["sql"]["wall"], runs["bare"]["wall"], runs["floor"]["wall"]
    sql_med, base_med, floor_med = (statistics.median(r) for r in (sql_runs, base_runs, floor_runs))
    rescore_med = statistics.median(runs["rescore"]["wall"])
    cpu = {name: statistics.median(r["cpu"]) for name, r in runs.items()}

    # per-claim Python path on a sample of the same file
    sample = []
    with source.open(encoding="utf-8") as handle:
        for _, line in zip(range(args.python_sample), handle, strict=False):  # the first N lines
            sample.append(json.loads(line))
    prof = default_profile()
    sample_claims = sum(len(r["claims"]) for r in sample)

    def python_path():
        for record in sample:
            score_response(parse_response(record), prof, AS_OF)

    py_runs = interleaved({"py": python_path}, min(args.repeat, 5))["py"]
    py_med, py_cpu = statistics.median(py_runs["wall"]), statistics.median(py_runs["cpu"])

    sql_cps = claims / sql_med
    py_cps = sample_claims / py_med
    rows = [
        ("machine", f"{os.cpu_count()} CPUs, load average {load_before[0]:.2f} before / {load_after[0]:.2f} after "
                    f"the timed rounds ({args.repeat} interleaved rounds)"),
        ("responses", f"{responses:,}"),
        ("claims", f"{claims:,}"),
        ("generate + write JSONL", f"{gen_s:.2f} s ({args.responses / gen_s:,.0f} responses/s)"),
        ("import (parse, validate, store)", f"{import_s:.2f} s ({report.accepted / import_s:,.0f} responses/s, "
                                            f"{claims / import_s:,.0f} claims/s), quarantined {report.quarantined}"),
        ("bulk SQL score (median)", f"{sql_med * 1000:.0f} ms ({sql_cps:,.0f} claims/s), "
                                    f"CPU {cpu['sql'] * 1000:.0f} ms; runs "
                                    + ", ".join(f"{r * 1000:.0f}" for r in sql_runs)),
        ("full rescore incl. floors, history, audit", f"{rescore_med * 1000:.0f} ms "
                                                      f"({claims / rescore_med:,.0f} claims/s), "
                                                      f"CPU {cpu['rescore'] * 1000:.0f} ms"),
        ("bare GROUP BY response_id (median)", f"{base_med * 1000:.0f} ms, CPU {cpu['bare'] * 1000:.0f} ms; runs "
                                               + ", ".join(f"{r * 1000:.0f}" for r in base_runs)),
        ("output floor: 19 columns, no logic", f"{floor_med * 1000:.0f} ms, CPU {cpu['floor'] * 1000:.0f} ms; runs "
                                               + ", ".join(f"{r * 1000:.0f}" for r in floor_runs)),
        ("Python per-claim path", f"{sample_claims:,} claims in {py_med * 1000:.0f} ms ({py_cps:,.0f} claims/s)"),
        ("ratio SQL score / bare GROUP BY", f"{ratio(sql_runs, base_runs):.2f}x per round, "
                                            f"{sql_med / base_med:.2f}x of medians, "
                                            f"CPU {cpu['sql'] / cpu['bare']:.2f}x (target <= 3x)"),
        ("ratio output floor / bare GROUP BY", f"{ratio(floor_runs, base_runs):.2f}x per round, "
                                               f"CPU {cpu['floor'] / cpu['bare']:.2f}x"),
        ("ratio SQL score / output floor", f"{ratio(sql_runs, floor_runs):.2f}x per round, "
                                           f"CPU {cpu['sql'] / cpu['floor']:.2f}x"),
        ("ratio full rescore / bare GROUP BY", f"{rescore_med / base_med:.2f}x of medians"),
        ("ratio SQL / Python claims/s", f"{sql_cps / py_cps:,.0f}x wall-clock (target >= 50x); per CPU-second "
                                        f"{(claims / cpu['sql']) / (sample_claims / py_cpu):,.0f}x"),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()
