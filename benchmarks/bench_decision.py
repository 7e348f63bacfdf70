"""Benchmark: the full rescore with the decision (issue 33) against the rescore before it, side by side.

    .venv/bin/python benchmarks/bench_decision.py [--responses 50000] [--repeat 3] [--before-commit 9f83560]

Generates a synthetic register (``hri_core.synthetic``) and records the sources its claims cite: most current and
strong, some superseded, dated (expired), restricted to a role the use cases' requesters lack or of tier 5, a few
left out (unknown) -- so that the Authority checks and the mitigation reading them have work to do. Then, one round
after the other, a full ``rescore`` with the code before the decision (``register.scoring.scorer`` and
``register.scoring.mitigation`` as they were at ``--before-commit``, loaded from git under other module names; they
write NULL decisions) and with the current code. Prints the wall time and the process CPU time (all DuckDB threads)
of each, their medians, the ratio of the medians and the load average before and after (no assertions: tests never
time anything). Run from the repository root.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
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
from register.scoring.authority_rules import save_use_cases  # noqa: E402
from register.scoring.profiles import active_profile, ensure_default_profile  # noqa: E402
from register.scoring.scorer import rescore  # noqa: E402

AS_OF = datetime(2026, 12, 1, tzinfo=UTC)


def _load_before(commit: str):
    """The scorer before the decision, as module ``before_scorer`` (its mitigation as ``before_mitigation``)."""
    def load(name: str, path: str, replace: tuple[str, str] | None = None):
        text = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=ROOT, check=True, capture_output=True,
                              text=True).stdout
        if replace:
            text = text.replace(*replace)
        spec = importlib.util.spec_from_loader(name, loader=None)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        exec(compile(text, f"{commit}:{path}", "exec"), module.__dict__)  # noqa: S102 - the repository's own code
        return module

    load("before_mitigation", "register/scoring/mitigation.py")
    return load("before_scorer", "register/scoring/scorer.py",
                ("from register.scoring.mitigation import", "from before_mitigation import"))


def _register_sources(store: Store, all_current: bool = False) -> dict[str, int]:
    """Record the cited sources: 1 in 10 left out, the rest current and strong but for every 7th superseded, 11th
    expired, 13th restricted to reviewers, 17th of tier 5 (``all_current``: every one recorded, current and strong).
    Returns how many of each."""
    from register.governance.registers import RowChanges, save_sources

    cited = [s for (s,) in store.query("SELECT DISTINCT source_id FROM claim_source_counts ORDER BY 1")]
    counts = {"cited": len(cited), "unknown": 0, "superseded": 0, "expired": 0, "restricted": 0, "tier 5": 0}
    rows = []
    for n, source in enumerate(cited):
        if n % 10 == 9 and not all_current:
            counts["unknown"] += 1
            continue
        values = {"source_id": source, "title": source, "source_type": "official framework", "authority_tier": 1,
                  "access_date": "2026-01-01"}
        for every, key, change in ((7, "superseded", {"superseded_by": cited[0]}),
                                   (11, "expired", {"valid_until": "2026-08-31"}),
                                   (13, "restricted", {"restricted_to": "reviewer"}),
                                   (17, "tier 5", {"authority_tier": 5})):
            if n % every == every - 1 and not all_current:
                values.update(change)
                counts[key] += 1
        rows.append({"values": values, "row": len(rows) + 1})
    save_sources(store, SYSTEM, RowChanges(inserts=rows))
    use_cases = [u for (u,) in store.query("SELECT DISTINCT use_case FROM responses WHERE use_case IS NOT NULL")]
    save_use_cases(store, SYSTEM, [{"use_case": u, "requester_roles": ["viewer"]} for u in use_cases], "benchmark")
    return counts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--responses", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before-commit", default="9f83560")
    parser.add_argument("--all-current", action="store_true", help="a register of current strong sources only")
    args = parser.parse_args()
    before = _load_before(args.before_commit)
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "synthetic.jsonl"
        with source.open("w", encoding="utf-8") as handle:
            for record in generate_responses(args.responses, seed=7):
                handle.write(json.dumps(record) + "\n")
        store = Store(Path(folder) / "bench.duckdb")
        ensure_default_profile(store, SYSTEM)
        import_path(store, SYSTEM, source, score=False)
        registered = _register_sources(store, args.all_current)
        profile = active_profile(store)
        claims = store.scalar("SELECT count(*) FROM claims WHERE is_current")
        print(f"{args.responses:,} responses, {claims:,} claims; sources: {registered}")
        runs = {"before": (lambda: before.rescore(store, SYSTEM, profile, as_of=AS_OF)),
                "with decision": (lambda: rescore(store, SYSTEM, profile, as_of=AS_OF))}
        runs["with decision"]()  # warm both paths once (caches, first statements)
        runs["before"]()
        print(f"load average before: {os.getloadavg()}")
        wall: dict[str, list[float]] = {k: [] for k in runs}
        cpu: dict[str, list[float]] = {k: [] for k in runs}
        for _ in range(args.repeat):
            for name, fn in runs.items():
                c0, w0 = time.process_time(), time.perf_counter()
                fn()
                wall[name].append(time.perf_counter() - w0)
                cpu[name].append(time.process_time() - c0)
                print(f"  {name:>14}: wall {wall[name][-1]:6.2f} s, CPU {cpu[name][-1]:6.2f} s")
        print(f"load average after: {os.getloadavg()}")
        for name in runs:
            print(f"{name:>14}: median wall {statistics.median(wall[name]):6.2f} s, "
                  f"median CPU {statistics.median(cpu[name]):6.2f} s")
        print(f"ratio with decision / before: wall "
              f"{statistics.median(wall['with decision']) / statistics.median(wall['before']):.3f}, CPU "
              f"{statistics.median(cpu['with decision']) / statistics.median(cpu['before']):.3f}")
        decided = store.dicts("SELECT decision, count(*) AS n FROM scores WHERE is_current GROUP BY 1 ORDER BY 1")
        print(f"current decisions: {decided}")
        store.close()


if __name__ == "__main__":
    main()
