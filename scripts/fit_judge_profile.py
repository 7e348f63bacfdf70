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
4. ``thresholds.supported``: the higher of two thresholds (``hri_core.judge_fitting.clearance_threshold``):
   the lowest P(SUPPORTED) from which on the upper end of the 95% Wilson interval of false clearance on
   the dev *pairs* stays <= 5% (a point estimate near 4%: a margin for claims nobody has seen), and the
   lowest from which on false clearance on the dev *claims pooled with all their passages* stays <= 5%
   (``make_judge_pairs.pool_by_claim``). The second guards the pipeline's case: more evidence means
   more candidate spans, and the best of many spans overlaps a wrong claim more often (at the pairs'
   threshold alone, pooled false clearance on dev was ~8%);
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

from make_judge_pairs import PEER_DATA, SPLIT_SEED, factcheck_split, pool_by_claim  # noqa: E402

from hri_core.judge_fitting import clearance_threshold, fit_logistic, predict_logistic  # noqa: E402
from hri_core.judging import JudgeProfile, evaluate_verdicts  # noqa: E402
from hri_core.offline_judge import Features, Similarity, decide, extract_features, feature_vector, score  # noqa: E402
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


def features_of(rows: list[dict[str, Any]], similarity: Similarity | None) -> list[Features]:
    """Features of each pair (with the MiniLM cosine when a similarity function is given)."""
    return [extract_features(r["claim"], r["evidence"], similarity) for r in rows]


def similarity_for(backend: str) -> Similarity | None:
    """The MiniLM encoder's similarity function for ``minilm``, else None."""
    if backend != "minilm":
        return None
    from register.verify.embeddings import load_encoder

    return load_encoder().similarity


def _summary(rows: list[dict[str, Any]], features: list[Features], profile: JudgeProfile) -> dict[str, str]:
    """What the judge itself (the same pure decision) does on ``rows`` with the profile as written."""
    verdicts = [decide(f, score(f, profile), profile)[0] for f in features]
    result = evaluate_verdicts([Label(r["label"]) for r in rows], verdicts)
    fc, sr = result.false_clearance, result.supported_recall
    return {"false_clearance": f"{fc.value:.4f} ({fc.count}/{fc.total}, 95% CI up to {fc.high:.4f})",
            "supported_recall": f"{sr.value:.4f} ({sr.count}/{sr.total})",
            "coverage": f"{result.coverage.value:.4f}"}


def fit_profile(pairs: list[dict[str, Any]], features: list[Features], claims: list[dict[str, Any]],
                claim_features: list[Features], backend: str, abstain: float) -> JudgeProfile:
    """The fitted, versioned profile (version 1) of ``backend`` from the dev pairs, the dev claims pooled
    with all their passages, and their features."""
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

    def threshold(rows: list[dict[str, Any]], feats: list[Features], upper_bound: bool) -> float:
        scores = predict_logistic([[feature_vector(f)[n] for n in supported_names] for f in feats], w_sup)
        return clearance_threshold(scores, [r["label"] == "SUPPORTED" for r in rows], [f.guards_pass for f in feats],
                                   MAX_FALSE_CLEARANCE, upper_bound=upper_bound).threshold

    t_pairs = threshold(pairs, features, upper_bound=True)
    t_claims = threshold(claims, claim_features, upper_bound=False)
    groups = len({p["group"] for p in pairs})
    profile = JudgeProfile(
        name=spec["name"], version=1, backend=spec["backend"], model=spec["model"],
        # rounded down, so that the pair the threshold was chosen at stays cleared
        thresholds={"supported": math.floor(max(t_pairs, t_claims) * 1e6) / 1e6, "abstain": round(abstain, 6)},
        weights={"supported": {n: round(w, 6) for n, w in zip(supported_names, w_sup, strict=True)},
                 "support_any": {n: round(w, 6) for n, w in zip(any_names, w_any, strict=True)}},
        description=("Offline judge: claim-word recall against the best evidence span"
                     + (" plus MiniLM cosine" if spec["extra"] else "")
                     + "; SUPPORTED only with every claim number, entity and negation in the span and "
                       "P(SUPPORTED) >= thresholds.supported; never CONTRADICTED; abstains below thresholds.abstain."),
        provenance={
            "fitted_by": "scripts/fit_judge_profile.py",
            "data": f"Factcheck-GPT subtask3, dev split by answer (seed {SPLIT_SEED}): {len(pairs)} claim/passage "
                    f"pairs and their {len(claims)} claims pooled with all their passages, {groups} answers",
            "threshold_rule": f"the higher of: the lowest P(SUPPORTED) from which on the pairs' false-clearance "
                              f"95% upper bound stays <= {MAX_FALSE_CLEARANCE} ({t_pairs:.4f}), and the lowest from "
                              f"which on the pooled claims' false clearance stays <= {MAX_FALSE_CLEARANCE} "
                              f"({t_claims:.4f})",
        },
    )
    extra = {f"dev_pairs_{k}": v for k, v in _summary(pairs, features, profile).items()}
    extra |= {f"dev_claims_{k}": v for k, v in _summary(claims, claim_features, profile).items()}
    return profile.model_copy(update={"provenance": profile.provenance | extra})


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
    claims = pool_by_claim(pairs)
    similarity = similarity_for(args.backend)
    profile = fit_profile(pairs, features_of(pairs, similarity), claims, features_of(claims, similarity),
                          args.backend, args.abstain)
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
