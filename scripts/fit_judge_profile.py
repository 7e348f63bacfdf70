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

from make_judge_pairs import SPLIT_SEED  # noqa: E402

from hri_core.judge_fitting import clearance_threshold, fit_logistic, predict_logistic  # noqa: E402
from hri_core.judging import JudgeEvaluation, JudgeProfile, evaluate_verdicts  # noqa: E402
from hri_core.offline_judge import Features, Similarity, decide, extract_features, feature_vector, score  # noqa: E402
from hri_core.vocabulary import Label  # noqa: E402

PROFILES = REPO_ROOT / "data" / "judge_profiles"
EVAL_SETS = REPO_ROOT / "data" / "judge_eval"
VERSION = 2
MAX_FALSE_CLEARANCE = 0.05
DEFAULT_ABSTAIN = 2 / 3
# P(SUPPORTED): how much of the claim the evidence, read as a whole, carries. Chosen on dev among the
# candidates in docs/judges.md; the whole-evidence recall generalised best to the held-out sets.
SUPPORTED_FEATURES = ["bias", "whole_recall", "bigram_recall"]
ANY_FEATURES = ["bias", "content_recall", "whole_recall", "bigram_recall", "entity_recall", "number_recall",
                "negation_mismatch", "evidence_recall"]
# Measured after the profile is fixed, never used to choose anything (the held-out figures).
HELD_OUT = ("factcheck_test", "factcheck_test_claims", "ragchecker_example", "begin_wow")
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


def _evaluation(rows: list[dict[str, Any]], features: list[Features], profile: JudgeProfile) -> JudgeEvaluation:
    """What the judge itself (the same pure decision) does on ``rows`` with the profile as written."""
    verdicts = [decide(f, score(f, profile), profile)[0] for f in features]
    return evaluate_verdicts([Label(r["label"]) for r in rows], verdicts)


def measured(result: JudgeEvaluation) -> dict[str, float]:
    """The figures a profile records per data set (``JudgeProfile.measured``)."""
    fc, sr, cov = result.false_clearance, result.supported_recall, result.coverage
    return {"n": float(result.n), "false_clearance": round(fc.value or 0.0, 4), "false_clearance_low": round(fc.low, 4),
            "false_clearance_high": round(fc.high, 4), "supported_recall": round(sr.value or 0.0, 4),
            "supported_recall_low": round(sr.low, 4), "supported_recall_high": round(sr.high, 4),
            "coverage": round(cov.value or 0.0, 4)}


def _summary(rows: list[dict[str, Any]], features: list[Features], profile: JudgeProfile) -> dict[str, str]:
    """The dev figures as provenance text."""
    result = _evaluation(rows, features, profile)
    fc, sr = result.false_clearance, result.supported_recall
    return {"false_clearance": f"{fc.value:.4f} ({fc.count}/{fc.total}, 95% CI up to {fc.high:.4f})",
            "supported_recall": f"{sr.value:.4f} ({sr.count}/{sr.total}, 95% CI {sr.low:.4f}-{sr.high:.4f})",
            "coverage": f"{result.coverage.value:.4f}"}


def fit_profile(pairs: list[dict[str, Any]], features: list[Features], claims: list[dict[str, Any]],
                claim_features: list[Features], backend: str, abstain: float,
                budget: float = MAX_FALSE_CLEARANCE) -> JudgeProfile:
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
                                   budget, upper_bound=upper_bound).threshold

    t_pairs = threshold(pairs, features, upper_bound=True)
    t_claims = threshold(claims, claim_features, upper_bound=False)
    groups = len({p["group"] for p in pairs})
    profile = JudgeProfile(
        name=spec["name"], version=VERSION, backend=spec["backend"], model=spec["model"],
        # rounded down, so that the pair the threshold was chosen at stays cleared
        thresholds={"supported": math.floor(max(t_pairs, t_claims) * 1e6) / 1e6, "abstain": round(abstain, 6),
                    "false_clearance_budget": budget},
        weights={"supported": {n: round(w, 6) for n, w in zip(supported_names, w_sup, strict=True)},
                 "support_any": {n: round(w, 6) for n, w in zip(any_names, w_any, strict=True)}},
        description=("Offline judge: claim-word recall against the best evidence span"
                     + (" plus MiniLM cosine" if spec["extra"] else "")
                     + "; SUPPORTED only with every claim number, entity and negation in the span and "
                       "P(SUPPORTED) >= thresholds.supported; never CONTRADICTED; abstains below thresholds.abstain."),
        provenance={
            "fitted_by": "scripts/fit_judge_profile.py",
            "data": f"Factcheck-GPT subtask3, dev split by answer (seed {SPLIT_SEED}): {len(pairs)} claim/passage "
                    f"pairs and their {len(claims)} claims pooled with all their passages, {groups} answers "
                    f"(data/judge_eval/factcheck_dev.jsonl and factcheck_dev_claims.jsonl)",
            "split": "factcheck_dev (tuning); held out: " + ", ".join(HELD_OUT),
            "false_clearance_budget": f"{budget} (false clearance: gold PARTIAL/UNSUPPORTED/CONTRADICTED judged "
                                      f"SUPPORTED)",
            "threshold_rule": f"the higher of: the lowest P(SUPPORTED) from which on the dev pairs' false-clearance "
                              f"95% upper bound stays <= {budget} ({t_pairs:.4f}; the upper bound, a margin for "
                              f"claims nobody has seen, affordable with 1,458 negatives), and the lowest from "
                              f"which on the dev claims pooled with all their passages the point estimate stays "
                              f"<= {budget} ({t_claims:.4f}; 201 negatives: their upper bound would stay above "
                              f"the budget even clearing nothing but a handful)",
        },
    )
    extra = {f"dev_pairs_{k}": v for k, v in _summary(pairs, features, profile).items()}
    extra |= {f"dev_claims_{k}": v for k, v in _summary(claims, claim_features, profile).items()}
    dev_pairs = _evaluation(pairs, features, profile)
    extra["expected_supported_recall"] = (
        f"{dev_pairs.supported_recall.value:.4f} (95% CI {dev_pairs.supported_recall.low:.4f}-"
        f"{dev_pairs.supported_recall.high:.4f}) on the dev pairs; see measured for the held-out sets")
    return profile.model_copy(update={"provenance": profile.provenance | extra, "measured": {
        "factcheck_dev (tuning)": measured(dev_pairs),
        "factcheck_dev_claims (tuning)": measured(_evaluation(claims, claim_features, profile))}})


def read_set(stem: str) -> list[dict[str, Any]]:
    """An evaluation set of ``data/judge_eval`` (``scripts/make_judge_eval_sets.py``)."""
    with (EVAL_SETS / f"{stem}.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def with_held_out(profile: JudgeProfile, similarity: Similarity | None, sets: tuple[str, ...]) -> JudgeProfile:
    """``profile`` with its figures on the held-out sets added to ``measured`` (after it is fixed)."""
    figures = dict(profile.measured)
    for stem in sets:
        rows = read_set(stem)
        figures[f"{stem} (held out)"] = measured(_evaluation(rows, features_of(rows, similarity), profile))
    return profile.model_copy(update={"measured": figures})


def render(profile: JudgeProfile) -> str:
    """The profile file's text (stable key order, trailing newline)."""
    return json.dumps(profile.model_dump(mode="json"), indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=sorted(BACKENDS), default="lexical")
    parser.add_argument("--abstain", type=float, default=DEFAULT_ABSTAIN)
    parser.add_argument("--budget", type=float, default=MAX_FALSE_CLEARANCE, help="false-clearance budget")
    parser.add_argument("--held-out", default=",".join(HELD_OUT), help="sets to measure the fixed profile on")
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed profile differs from a fresh fit")
    args = parser.parse_args(argv)
    pairs, claims = read_set("factcheck_dev"), read_set("factcheck_dev_claims")
    similarity = similarity_for(args.backend)
    profile = fit_profile(pairs, features_of(pairs, similarity), claims, features_of(claims, similarity),
                          args.backend, args.abstain, args.budget)
    profile = with_held_out(profile, similarity, tuple(s for s in args.held_out.split(",") if s))
    path = PROFILES / f"{profile.name}.json"
    text = render(profile)
    if args.check:
        same = path.exists() and path.read_text(encoding="utf-8") == text
        print(f"{path.relative_to(REPO_ROOT)}: {'up to date' if same else 'differs from a fresh fit'}")
        return 0 if same else 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path.relative_to(REPO_ROOT)}")
    print(json.dumps({"thresholds": profile.thresholds, **profile.provenance, "measured": profile.measured}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
