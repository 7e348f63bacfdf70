"""Build judge-evaluation pairs (PAIRS.jsonl) from Factcheck-GPT and RAGChecker's example.

Each output line is ``{"id", "claim", "evidence": [chunk, ...], "label", "category", "group"}``, the input
of ``python -m register judge eval``. Run from the repository root, with ``../shared/peer-data`` beside it:

    .venv/bin/python scripts/make_judge_pairs.py               # writes var/judge/*.jsonl, prints counts
    .venv/bin/python scripts/make_judge_pairs.py --out DIR     # somewhere else

Sources (both Apache-2.0; their LICENSE files sit beside the data):

* Factcheck-GPT (Wang et al., "Factcheck-Bench", Findings of EMNLP 2024), ``subtask3_claim_evidence_stance.jsonl``:
  3,305 human stance labels, one per (claim, retrieved passage): 661 claims x 5 passages. One pair per
  line of the source; the passage is the pair's single evidence chunk (the judge splits it into sentences).
  Gold label: completely-support -> SUPPORTED, partially-support -> PARTIAL, refute -> CONTRADICTED,
  irrelevant -> UNSUPPORTED.
* RAGChecker's example (``checking_outputs.json``, 2 queries): each response claim (a subject, predicate,
  object triplet, joined with spaces) against each retrieved chunk, labelled by ``retrieved2response``:
  Entailment -> SUPPORTED, Contradiction -> CONTRADICTED, Neutral -> UNSUPPORTED. 16 claims, 59 pairs.

The Factcheck-GPT split (documented, reproducible): the split is by *answer*, which is stricter than by
claim -- the claims of one answer share its topic and its retrieved passages, so a claim, its sibling
claims and their passages never land on both sides. Each claim is traced to its answer in
``factcheck-GPT-benchmark.jsonl`` (the 661 claim texts are unique there); the 94 answer numbers are
shuffled with ``random.Random(SPLIT_SEED)`` and the first half (47 answers) is dev, the rest test. Dev
is for choosing features, weights and thresholds; test is read once per backend for the report.

Pair ids: ``fcgpt-NNN-k-eJ`` (answer NNN in file order, claim k counted over the answer's claims as in
``scripts/convert_factcheck_gpt.py``, passage J of 5) and ``rc-Q-cI-dD`` (query Q, claim I, chunk D).
Claim-level files (``factcheck_{dev,test}_claims.jsonl``, ``pool_by_claim``): each claim against all five
of its passages, gold the strongest stance among them (SUPPORTED > PARTIAL > CONTRADICTED > UNSUPPORTED),
as the verification pipeline judges a claim against everything retrieved for it.

Category: ``number`` when the claim contains a digit (dates, years, amounts), else ``text`` -- the
judge treats claim numbers as hard evidence requirements, so the two are reported apart.

Everything except ``main`` is a pure function of its arguments.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]


def _shown(path: Path) -> str:
    """A path relative to the repository when it is inside it."""
    return str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else str(path)
PEER_DATA = REPO_ROOT.parent / "shared" / "peer-data"
SPLIT_SEED = 13

STANCE_LABEL = {
    "completely-support": "SUPPORTED",
    "partially-support": "PARTIAL",
    "refute": "CONTRADICTED",
    "irrelevant": "UNSUPPORTED",
}
RAGCHECKER_LABEL = {"Entailment": "SUPPORTED", "Contradiction": "CONTRADICTED", "Neutral": "UNSUPPORTED"}


def claim_category(claim: str) -> str:
    """``number`` when the claim states a digit (a year, date, amount), else ``text``."""
    return "number" if any(ch.isdigit() for ch in claim) else "text"


def claim_origins(benchmark: Iterable[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Claim text -> (answer number from 1, claim index within the answer) over the benchmark's answers."""
    origins: dict[str, tuple[int, int]] = {}
    for answer_no, item in enumerate(benchmark, start=1):
        k = 0
        for sentence in item["sentences"].values():
            for claim in sentence["claims"]:
                origins.setdefault(claim, (answer_no, k))
                k += 1
    return origins


def split_answers(answer_numbers: Iterable[int], seed: int = SPLIT_SEED) -> tuple[set[int], set[int]]:
    """Shuffle the answer numbers with ``seed``; the first half is dev, the rest test."""
    ordered = sorted(set(answer_numbers))
    random.Random(seed).shuffle(ordered)
    half = len(ordered) // 2
    return set(ordered[:half]), set(ordered[half:])


def factcheck_pairs(stances: Iterable[dict[str, Any]], origins: dict[str, tuple[int, int]]) -> Iterator[dict[str, Any]]:
    """One pair per stance line, with its answer number as ``group``. Unknown stances or claims raise KeyError."""
    seen: Counter[str] = Counter()
    for row in stances:
        claim = row["claim"]
        answer_no, k = origins[claim]
        j = seen[claim]
        seen[claim] += 1
        yield {
            "id": f"fcgpt-{answer_no:03d}-{k}-e{j}",
            "claim": claim,
            "evidence": [row["evidence"]],
            "label": STANCE_LABEL[row["stance"]],
            "category": claim_category(claim),
            "group": f"fcgpt-{answer_no:03d}",
        }


def ragchecker_pairs(results: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Each response claim against each retrieved chunk, labelled by ``retrieved2response``."""
    for result in results:
        query = result["query_id"]
        chunks = [c["text"] for c in result["retrieved_context"]]
        claims = zip(result["response_claims"], result["retrieved2response"], strict=True)
        for i, (triplet, labels) in enumerate(claims):
            claim = " ".join(part.strip() for part in triplet if part.strip())
            for d, (chunk, label) in enumerate(zip(chunks, labels, strict=True)):
                yield {
                    "id": f"rc-{query}-c{i}-d{d}",
                    "claim": claim,
                    "evidence": [chunk],
                    "label": RAGCHECKER_LABEL[label],
                    "category": claim_category(claim),
                    "group": f"rc-{query}",
                }


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Decoded lines of a JSON Lines file (blank lines skipped)."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def factcheck_split(peer_data: Path, seed: int = SPLIT_SEED) -> dict[str, list[dict[str, Any]]]:
    """The Factcheck-GPT pairs split into ``dev`` and ``test`` by answer (see the module docstring)."""
    folder = peer_data / "factcheck-gpt"
    origins = claim_origins(read_jsonl(folder / "factcheck-GPT-benchmark.jsonl"))
    pairs = list(factcheck_pairs(read_jsonl(folder / "subtask3_claim_evidence_stance.jsonl"), origins))
    dev, _test = split_answers((answer for answer, _k in origins.values()), seed)
    out: dict[str, list[dict[str, Any]]] = {"dev": [], "test": []}
    for pair in pairs:
        out["dev" if int(pair["group"].split("-")[1]) in dev else "test"].append(pair)
    return out


STANCE_STRENGTH = {"SUPPORTED": 3, "PARTIAL": 2, "CONTRADICTED": 1, "UNSUPPORTED": 0}


def pool_by_claim(pairs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Claim-level pairs: each claim against all its passages, as the verification pipeline sees a claim
    and its retrieved chunks. Gold is the strongest stance among the passages (SUPPORTED > PARTIAL >
    CONTRADICTED > UNSUPPORTED): a claim one passage fully supports is supported by the evidence."""
    pooled: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        claim_id = pair["id"].rsplit("-e", 1)[0]
        row = pooled.setdefault(claim_id, {"id": claim_id, "claim": pair["claim"], "evidence": [],
                                           "label": pair["label"], "category": pair["category"],
                                           "group": pair["group"]})
        row["evidence"].extend(pair["evidence"])
        if STANCE_STRENGTH[pair["label"]] > STANCE_STRENGTH[row["label"]]:
            row["label"] = pair["label"]
    return list(pooled.values())


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    """Write rows as JSON Lines; returns the count."""
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    return n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer-data", type=Path, default=PEER_DATA, help="folder with factcheck-gpt/ and ragchecker/")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "var" / "judge", help="output folder")
    parser.add_argument("--seed", type=int, default=SPLIT_SEED, help="seed of the answer shuffle")
    args = parser.parse_args(argv)
    if not (args.peer_data / "factcheck-gpt").is_dir():
        print(f"peer data not found at {args.peer_data}", file=sys.stderr)
        return 1
    split = factcheck_split(args.peer_data, args.seed)
    for name, rows in split.items():
        path = args.out / f"factcheck_{name}.jsonl"
        write_jsonl(path, rows)
        labels = Counter(row["label"] for row in rows)
        groups = len({row["group"] for row in rows})
        n_claims = len({r["claim"] for r in rows})
        print(f"{_shown(path)}: {len(rows)} pairs, {groups} answers, {n_claims} claims, {dict(labels)}")
        claims = pool_by_claim(rows)
        path = args.out / f"factcheck_{name}_claims.jsonl"
        write_jsonl(path, claims)
        pooled = dict(Counter(r["label"] for r in claims))
        print(f"{_shown(path)}: {len(claims)} claims with all their passages, {pooled}")
    rag_file = args.peer_data / "ragchecker" / "checking_outputs.json"
    if rag_file.exists():
        rows = list(ragchecker_pairs(json.loads(rag_file.read_text(encoding="utf-8"))["results"]))
        path = args.out / "ragchecker_example.jsonl"
        write_jsonl(path, rows)
        print(f"{_shown(path)}: {len(rows)} pairs, {dict(Counter(row['label'] for row in rows))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
