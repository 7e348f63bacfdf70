"""Fit the offline judge's profile on the Factcheck-GPT dev split and write it as versioned data.

    .venv/bin/python scripts/fit_judge_profile.py                    # data/judge_profiles/offline-default.json
    .venv/bin/python scripts/fit_judge_profile.py --backend minilm   # data/judge_profiles/offline-minilm.json
    .venv/bin/python scripts/fit_judge_profile.py --check            # exit 1 if the committed file differs

Only the dev split is read (``scripts/make_judge_pairs.py``: by answer, seed 13); the test split is
for the report (``benchmarks/bench_judge.py``). Steps:

1. features of every dev pair (``hri_core.offline_judge.extract_features``; with ``--backend minilm``
   also the MiniLM cosine of the claim with its best evidence sentence);
2. ``support_any``: logistic P(gold SUPPORTED or PARTIAL) on all dev pairs;
3. ``supported``: logistic P(gold SUPPORTED) on the dev pairs whose hard guards hold (numbers,
   entities, negation) -- the only pairs the judge may clear, so that its probability is calibrated
   where it is used;
4. ``thresholds.supported``: the lowest P(SUPPORTED) from which on the upper end of the 95% Wilson
   interval of dev false clearance stays <= 5% (``hri_core.judge_fitting.clearance_threshold``): a
   point estimate near 4% on dev, a margin for claims nobody has seen;
5. ``thresholds.abstain`` (``--abstain``, default 2/3): PARTIAL or UNSUPPORTED is proposed only at
   2:1 odds or better; in between the judge says "needs review". It is a coverage knob, not a
   safety one (it never grants SUPPORTED), fixed rather than tuned.

Feature sets are deliberately small (grouped 5-fold cross-validation on dev, averaged over six
shuffles, showed no gain from more lexical features; the MiniLM cosine added ~5 points of supported
recall at 4% false clearance).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "scripts"))

from make_judge_pairs import PEER_DATA, SPLIT_SEED, factcheck_split  # noqa: E402

from hri_core.judge_fitting import clearance_threshold, fit_logistic, predict_logistic  # noqa: E402
from hri_core.judging import JudgeProfile, evaluate_verdicts  # noqa: E402
from hri_core.offline_judge import Features, decide, extract_features, feature_vector, score  # noqa: E402
from hri_core.vocabulary import Label  # noqa: E402

PROFILES = REPO_ROOT / "data" / "judge_profiles"
MAX_FALSE_CLEARANCE = 0.05
DEFAULT_ABSTAIN = 2 / 3
SUPPORTED_FEATURES = ["bias", "content_recall", "bigram_recall"]
ANY_FEATURES = ["bias", "content_recall", "bigram_recall", "entity_recall", "number_recall", "negation_mismatch",
                "evidence_recall"]
BACKENDS = {
    "lexical": {"name": "offline-default", "backend": "offline-lexical", "model": None, "extra": []},
    "minilm": {"name": "offline-minilm", "backend": "offline-minilm", "model": "all-MiniLM-L6-v2 (int8 ONNX)",
               "extra": ["similarity"]},
}


def dev_features(pairs: list[dict[str, Any]], backend: str) -> list[Features]:
    """Features of each pair, with the MiniLM cosine when ``backend`` is minilm."""
    similarity = None
    if backend == "minilm":
        from register.verify.embeddings import load_encoder

        similarity = load_encoder().similarity
    return [extract_features(p["claim"], p["evidence"], similarity) for p in pairs]


def fit_profile(pairs: list[dict[str, Any]], features: list[Features], backend: str, abstain: float) -> JudgeProfile:
    """The fitted, versioned profile (version 1) of ``backend`` from dev pairs and their features."""
    spec = BACKENDS[backend]
    supported_names = SUPPORTED_FEATURES + spec["extra"]
    any_names = ANY_FEATURES + spec["extra"]
    vectors = [feature_vector(f) for f in features]
    gold = [p["label"] for p in pairs]
    eligible = [f.guards_pass for f in features]
    any_rows = [[v[n] for n in any_names] for v in vectors]
    w_any = fit_logistic(any_rows, [g in ("SUPPORTED", "PARTIAL") for g in gold])
    guarded = [i for i, ok in enumerate(eligible) if ok]
    sup_rows = [[vectors[i][n] for n in supported_names] for i in guarded]
    w_sup = fit_logistic(sup_rows, [gold[i] == "SUPPORTED" for i in guarded])
    scores = predict_logistic([[v[n] for n in supported_names] for v in vectors], w_sup)
    point = clearance_threshold(scores, [g == "SUPPORTED" for g in gold], eligible, MAX_FALSE_CLEARANCE)
    groups = len({p["group"] for p in pairs})
    profile = JudgeProfile(
        name=spec["name"], version=1, backend=spec["backend"], model=spec["model"],
        # rounded down, so that the pair the threshold was chosen at stays cleared
        thresholds={"supported": math.floor(point.threshold * 1e6) / 1e6, "abstain": round(abstain, 6)},
        weights={"supported": {n: round(w, 6) for n, w in zip(supported_names, w_sup, strict=True)},
                 "support_any": {n: round(w, 6) for n, w in zip(any_names, w_any, strict=True)}},
        description=("Offline judge: claim-word recall against the best evidence span"
                     + (" plus MiniLM cosine" if spec["extra"] else "")
                     + "; SUPPORTED only with every claim number, entity and negation in the span and "
                       "P(SUPPORTED) >= thresholds.supported; never CONTRADICTED; abstains below thresholds.abstain."),
        provenance={
            "fitted_by": "scripts/fit_judge_profile.py",
            "data": f"Factcheck-GPT subtask3, dev split by answer (seed {SPLIT_SEED}): {len(pairs)} pairs, "
                    f"{groups} answers",
            "threshold_rule": f"lowest P(SUPPORTED) with the dev false-clearance 95% upper bound <= "
                              f"{MAX_FALSE_CLEARANCE} from there on",
        },
    )
    # What the judge itself (the same pure decision) does on dev with the profile as written.
    verdicts = [decide(f, score(f, profile), profile)[0] for f in features]
    result = evaluate_verdicts([Label(g) for g in gold], verdicts)
    fc, sr = result.false_clearance, result.supported_recall
    return profile.model_copy(update={"provenance": profile.provenance | {
        "dev_false_clearance": f"{fc.value:.4f} ({fc.count}/{fc.total}, 95% CI up to {fc.high:.4f})",
        "dev_supported_recall": f"{sr.value:.4f} ({sr.count}/{sr.total})",
        "dev_coverage": f"{result.coverage.value:.4f}",
    }})


def render(profile: JudgeProfile) -> str:
    """The profile file's text (stable key order, trailing newline)."""
    return json.dumps(profile.model_dump(mode="json"), indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=sorted(BACKENDS), default="lexical")
    parser.add_argument("--peer-data", type=Path, default=PEER_DATA)
    parser.add_argument("--abstain", type=float, default=DEFAULT_ABSTAIN)
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed profile differs from a fresh fit")
    args = parser.parse_args(argv)
    pairs = factcheck_split(args.peer_data)["dev"]
    profile = fit_profile(pairs, dev_features(pairs, args.backend), args.backend, args.abstain)
    path = PROFILES / f"{profile.name}.json"
    text = render(profile)
    if args.check:
        same = path.exists() and path.read_text(encoding="utf-8") == text
        print(f"{path.relative_to(REPO_ROOT)}: {'up to date' if same else 'differs from a fresh fit'}")
        return 0 if same else 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path.relative_to(REPO_ROOT)}")
    print(json.dumps({"thresholds": profile.thresholds, **profile.provenance}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
