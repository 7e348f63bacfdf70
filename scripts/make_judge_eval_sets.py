"""Build the judge evaluation sets under ``data/judge_eval/`` (versioned files, with provenance).

    .venv/bin/python scripts/make_judge_eval_sets.py --begin DIR      # DIR: a checkout of google/BEGIN-dataset
    .venv/bin/python scripts/make_judge_eval_sets.py --begin DIR --check   # exit 1 if a committed file differs

Three sources, so that a judge tuned on one is reported on the others (``docs/judges.md``):

* **Factcheck-GPT** (Apache-2.0; ``../shared/peer-data/factcheck-gpt``, via ``scripts/make_judge_pairs.py``):
  claim/passage pairs split by answer (seed 13) into ``factcheck_dev`` (the *only* file the shipped
  thresholds are chosen on) and ``factcheck_test``; and each claim against all five of its passages
  (``*_claims``, gold the strongest stance).
* **RAGChecker's example** (Apache-2.0; ``../shared/peer-data/ragchecker``): 16 response claims x their
  chunks, ``ragchecker_example``.
* **BEGIN, Wizard of Wikipedia part** (Dziri et al., "Evaluating Attribution in Dialogue Systems: The
  BEGIN Benchmark", TACL 2022; <https://github.com/google/BEGIN-dataset>, commit ``6e65f0d``; CC BY 4.0,
  ``wow/NOTICE``): a dialogue system's response judged against the Wikipedia sentence it was meant to
  be grounded in. ``Fully attributable`` -> SUPPORTED, ``Not fully attributable`` -> UNSUPPORTED (it
  covers partly and not supported alike: either is a false clearance when judged SUPPORTED);
  ``Generic`` responses (no claim) are left out. All of ``begin_dev_wow.tsv`` and a sample of
  ``begin_test_wow.tsv`` (``random.Random(39)``, ``BEGIN_TEST_SAMPLE`` rows), ``begin_wow``. Changes:
  rows reduced to id, claim (the response), evidence (the knowledge sentence), label, category,
  model; the dialogue history is left out.

WiCE is deliberately absent: it is kept aside for the final held-out check.

Every output line: ``{"id", "claim", "evidence": [...], "label", "category", "group"?, ...}``, the input of
``python -m register judge eval``. ``data/judge_eval/README.md`` lists the files with their SHA-256.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "scripts"))

from make_judge_pairs import (  # noqa: E402
    PEER_DATA,
    claim_category,
    factcheck_split,
    pool_by_claim,
    ragchecker_pairs,
)

OUT = REPO_ROOT / "data" / "judge_eval"
BEGIN_SEED = 39
BEGIN_TEST_SAMPLE = 900
BEGIN_LABEL = {"Fully attributable": "SUPPORTED", "Not fully attributable": "UNSUPPORTED"}


def begin_rows(path: Path, part: str) -> list[dict[str, Any]]:
    """The rows of a BEGIN tsv with a label we map (``Generic`` left out), in file order."""
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        rows = []
        for n, row in enumerate(reader, start=1):
            label = BEGIN_LABEL.get((row.get("begin_label") or "").strip())
            claim, knowledge = (row.get("response") or "").strip(), (row.get("knowledge") or "").strip()
            if label is None or not claim or not knowledge:
                continue
            rows.append({"id": f"begin-wow-{part}-{n:04d}", "claim": claim, "evidence": [knowledge], "label": label,
                         "category": claim_category(claim), "model": row.get("model_name", "")})
    return rows


def begin_set(folder: Path, seed: int = BEGIN_SEED, sample: int = BEGIN_TEST_SAMPLE) -> list[dict[str, Any]]:
    """All of BEGIN-WoW dev and a seeded sample of its test rows."""
    dev = begin_rows(folder / "wow" / "begin_dev_wow.tsv", "dev")
    test = begin_rows(folder / "wow" / "begin_test_wow.tsv", "test")
    picked = sorted(random.Random(seed).sample(range(len(test)), min(sample, len(test))))
    return dev + [test[i] for i in picked]


def render(rows: list[dict[str, Any]]) -> str:
    """JSON Lines text of ``rows``."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def build(peer_data: Path, begin: Path | None) -> dict[str, list[dict[str, Any]]]:
    """Every evaluation set by file stem."""
    split = factcheck_split(peer_data)
    sets: dict[str, list[dict[str, Any]]] = {}
    for name in ("dev", "test"):
        sets[f"factcheck_{name}"] = split[name]
        sets[f"factcheck_{name}_claims"] = pool_by_claim(split[name])
    rag = peer_data / "ragchecker" / "checking_outputs.json"
    sets["ragchecker_example"] = list(ragchecker_pairs(json.loads(rag.read_text(encoding="utf-8"))["results"]))
    if begin is not None:
        sets["begin_wow"] = begin_set(begin)
    return sets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer-data", type=Path, default=PEER_DATA)
    parser.add_argument("--begin", type=Path, help="a checkout of github.com/google/BEGIN-dataset (commit 6e65f0d)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="exit 1 if a committed file differs from a fresh build")
    args = parser.parse_args(argv)
    sets = build(args.peer_data, args.begin)
    stale = 0
    for stem, rows in sets.items():
        path = args.out / f"{stem}.jsonl"
        text = render(rows)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        counts = dict(Counter(r["label"] for r in rows))
        if args.check:
            same = path.exists() and path.read_text(encoding="utf-8") == text
            stale += not same
            print(f"{stem}: {'up to date' if same else 'DIFFERS'}")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"| `{stem}.jsonl` | {len(rows)} | {counts} | `{digest[:16]}` |")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
