"""Benchmark: the offline judge's verdicts against gold labels, per backend, with CPU time.

    .venv/bin/python benchmarks/bench_judge.py [--split test] [--backends lexical,minilm] [--json]

Data: the evaluation sets of ``data/judge_eval`` (``scripts/make_judge_eval_sets.py``): the
Factcheck-GPT claim/passage pairs of the chosen split (by answer, seed 13; the shipped thresholds were
chosen on ``dev``, so ``test`` is the honest figure), the same claims each against all five of their
passages (gold: the strongest stance); with ``--split test`` also the held-out sets of other sources,
RAGChecker's example pairs and BEGIN-WoW. Backends: the
shipped profiles ``data/judge_profiles/offline-default.json`` (lexical) and ``offline-minilm.json``
(lexical + MiniLM cosine; skipped with the reason when the encoder cannot load).

Prints per backend and data set: accuracy, macro-F1 over the gold classes (and 3-way, CONTRADICTED
counted as UNSUPPORTED), coverage, false clearance with its 95% interval, per gold label and per
category, supported recall and precision, the calibration error, and the cost: process CPU-ms and
wall-ms per pair (a claim against one passage of ~5 sentences), encoder load time, and the load
average, since the machine may be shared. No assertions: the conformance test holds the limits.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "scripts"))

from hri_core.judging import Judge  # noqa: E402
from register.verify.judge_cli import evaluate, judge_for, load_profile  # noqa: E402

PROFILES = {"lexical": "offline-default", "minilm": "offline-minilm"}


EVAL_SETS = REPO_ROOT / "data" / "judge_eval"


def datasets(split: str) -> dict[str, list[dict[str, Any]]]:
    """The pair sets to evaluate, by name."""
    stems = [f"factcheck_{split}", f"factcheck_{split}_claims"]
    if split == "test":
        stems += ["ragchecker_example", "begin_wow"]
    out = {}
    for stem in stems:
        with (EVAL_SETS / f"{stem}.jsonl").open(encoding="utf-8") as handle:
            out[stem] = [json.loads(line) for line in handle if line.strip()]
    return out


def run_one(judge: Judge, pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """The eval report plus the cost of judging ``pairs``."""
    lines = [json.dumps(p) for p in pairs]
    cpu, wall = time.process_time(), time.perf_counter()
    report, _bad = evaluate(judge, lines, sys.stderr)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    report["cpu_ms_per_pair"] = round(1000 * cpu / len(pairs), 2)
    report["wall_ms_per_pair"] = round(1000 * wall / len(pairs), 2)
    return report


def fmt_rate(rate: dict[str, Any]) -> str:
    return f"{rate['value']:.3f} [{rate['ci95'][0]:.3f}-{rate['ci95'][1]:.3f}] ({rate['count']}/{rate['total']})"


def print_report(backend: str, name: str, r: dict[str, Any], load_s: float) -> None:
    print(f"\n== {backend} ({r['profile']}) on {name}: {r['n']} pairs")
    print(f"  accuracy {r['accuracy']:.3f} (answered {r['answered_accuracy']:.3f})   macro-F1 {r['macro_f1']:.3f}"
          f" [{r['macro_f1_ci95'][0]:.3f}-{r['macro_f1_ci95'][1]:.3f}]"
          f" (3-way {r['macro_f1_3way']:.3f})   coverage {fmt_rate(r['coverage'])}"
          f"   ECE {r['calibration_error']:.3f}")
    print(f"  false clearance   {fmt_rate(r['false_clearance'])}")
    for label, rate in r["false_clearance_by_label"].items():
        print(f"    gold {label:<12} {fmt_rate(rate)}")
    for category, rate in r["false_clearance_by_category"].items():
        print(f"    category {category:<8} {fmt_rate(rate)}")
    print(f"  supported recall  {fmt_rate(r['supported_recall'])}")
    print(f"  supported precision {fmt_rate(r['supported_precision'])}")
    print(f"  cost: {r['cpu_ms_per_pair']:.2f} CPU-ms/pair, {r['wall_ms_per_pair']:.2f} wall-ms/pair,"
          f" backend load {load_s:.2f} s")
    print("  confusion (gold -> verdict):")
    for gold, row in r["confusion"].items():
        print(f"    {gold:<12} " + "  ".join(f"{k[:4]} {v:>4}" for k, v in row.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("dev", "test"), default="test")
    parser.add_argument("--backends", default="lexical,minilm")
    parser.add_argument("--json", action="store_true", help="print the reports as one JSON object")
    args = parser.parse_args(argv)
    sets = datasets(args.split)
    results: dict[str, Any] = {"load_average_before": os.getloadavg(), "cpus": os.cpu_count()}
    for backend in args.backends.split(","):
        results[backend] = {}
        for name, pairs in sets.items():
            # A fresh judge per data set: the encoder's cache must not carry embeddings over.
            start = time.perf_counter()
            try:
                judge = judge_for(load_profile(PROFILES[backend]))
            except Exception as error:  # noqa: BLE001 - a missing optional backend is reported, not fatal
                print(f"\n== {backend}: skipped ({error})")
                results[backend] = {"skipped": str(error)}
                break
            load_s = time.perf_counter() - start
            report = run_one(judge, pairs) | {"load_s": round(load_s, 3)}
            results[backend][name] = report
            if not args.json:
                print_report(backend, name, report, load_s)
    results["load_average_after"] = os.getloadavg()
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(f"\nload average before {results['load_average_before']}, after {results['load_average_after']};"
              f" {results['cpus']} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
