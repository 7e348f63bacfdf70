"""Judges of claims against evidence: the interface, the verdict, the judge profile and the judge metrics.

A *judge* reads one claim and the evidence retrieved for it (sentences or chunks) and proposes a
verdict: SUPPORTED, PARTIAL, UNSUPPORTED or CONTRADICTED with a confidence and a one-line reason, or
an abstention ("needs review", label ``None``) when it is not sure. Backends (the offline lexical
judge in ``hri_core.offline_judge``, an LLM judge, later ones) implement ``Judge``; the verification
pipeline and ``python -m register judge`` call them only through it. Every verdict names the backend
and the judge profile version that produced it, so a stored proposal can always be traced back.

Judges fail safe: ``judge_safely`` turns any exception of a backend into an abstention, and
``Verdict`` refuses a label together with ``abstained=True``. Nothing here ever *upgrades* a verdict.

The metrics (``evaluate_verdicts``) compare verdicts with gold labels. The one that matters for
governance is **false clearance**: the share of gold not-supported claims (gold PARTIAL, UNSUPPORTED
or CONTRADICTED) that the judge labelled SUPPORTED. An abstention is not a clearance: it counts in the
denominator and not in the numerator, as does every other non-SUPPORTED verdict.

Pure: stdlib and pydantic. Callers: ``hri_core.offline_judge``, ``register.verify``.
"""

from __future__ import annotations

import math
import random
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .errors import FieldProblem, HRIError
from .models import problems_from_validation
from .vocabulary import Label

__all__ = [
    "ABSTAINED",
    "CONFIDENCE_MEANS",
    "JUDGE_LABELS",
    "NOT_SUPPORTED",
    "Judge",
    "JudgeEvaluation",
    "JudgeProfile",
    "JudgeProfileError",
    "LabelScores",
    "Rate",
    "Verdict",
    "abstention",
    "evaluate_verdicts",
    "judge_profile_from_dict",
    "judge_safely",
    "macro_f1_interval",
    "wilson_interval",
]

# The labels a judge may propose; the other HRI labels (OUTDATED, ACCESS_GAP...) come from the
# authority checks and from people, never from entailment.
JUDGE_LABELS: tuple[Label, ...] = (Label.SUPPORTED, Label.PARTIAL, Label.UNSUPPORTED, Label.CONTRADICTED)
# Gold labels whose clearance (a SUPPORTED verdict) is a false clearance.
NOT_SUPPORTED: frozenset[Label] = frozenset({Label.PARTIAL, Label.UNSUPPORTED, Label.CONTRADICTED})
# What a verdict's confidence is the probability of: that the gold label lies in the verdict's family.
# The families nest with the verdicts' meaning: "supported at least in part" (PARTIAL) is true of a fully
# supported claim, and "not supported by this evidence" (UNSUPPORTED) is true of a contradicted one.
CONFIDENCE_MEANS: dict[Label, frozenset[Label]] = {
    Label.SUPPORTED: frozenset({Label.SUPPORTED}),
    Label.PARTIAL: frozenset({Label.SUPPORTED, Label.PARTIAL}),
    Label.UNSUPPORTED: frozenset({Label.UNSUPPORTED, Label.CONTRADICTED}),
    Label.CONTRADICTED: frozenset({Label.CONTRADICTED}),
}
# Column of the confusion matrix for abstentions.
ABSTAINED = "ABSTAINED"


class JudgeProfileError(HRIError):
    """A judge profile is invalid (backend, version, thresholds...)."""

    title = "Invalid judge profile"


class JudgeProfile(BaseModel):
    """Everything that decides a judge's verdicts, versioned and serialisable (recorded with each verdict).

    ``thresholds`` are the decision thresholds by name (e.g. ``supported`` for the calibrated
    confidence a SUPPORTED verdict needs, ``abstain`` for any other verdict); ``weights`` the
    coefficients of a backend's scoring model by name; ``calibration`` maps a verdict label to the
    points ``[score, probability]`` of its calibration curve; ``provenance`` says how the numbers were
    chosen (data, split, seed, the false-clearance budget ``thresholds.false_clearance_budget`` and
    the bound it was met with); ``measured`` what it achieved, per data set, with 95% intervals.
    Unknown keys are refused, so a typo never silently falls back.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, pattern=r"^[a-z0-9][a-z0-9._-]*$")
    version: int = Field(ge=1)
    backend: str = Field(min_length=1)
    model: str | None = None
    prompt_versions: dict[str, str] = Field(default_factory=dict)
    thresholds: dict[str, float] = Field(default_factory=dict)
    weights: dict[str, dict[str, float]] = Field(default_factory=dict)
    calibration: dict[str, list[tuple[float, float]]] = Field(default_factory=dict)
    description: str = ""
    provenance: dict[str, str] = Field(default_factory=dict)
    # What the profile is worth, by data set: {"false_clearance", "false_clearance_low", "_high",
    # "supported_recall" (with "_low", "_high"), "coverage", "n"}; shown beside its proposals.
    measured: dict[str, dict[str, float]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _finite(self) -> JudgeProfile:
        for key, value in self.thresholds.items():
            if not math.isfinite(value):
                raise ValueError(f"thresholds.{key}: must be a finite number")
        for model, coefficients in self.weights.items():
            for key, value in coefficients.items():
                if not math.isfinite(value):
                    raise ValueError(f"weights.{model}.{key}: must be a finite number")
        for label, points in self.calibration.items():
            xs = [x for x, _y in points]
            if xs != sorted(xs) or any(not 0.0 <= y <= 1.0 for _x, y in points):
                raise ValueError(f"calibration.{label}: scores must ascend and probabilities lie in [0, 1]")
        return self

    @property
    def key(self) -> str:
        """``name@version``, the identifier recorded with every verdict."""
        return f"{self.name}@{self.version}"

    def threshold(self, name: str) -> float:
        """A named threshold; a missing one is a profile error naming it (never a silent default)."""
        try:
            return self.thresholds[name]
        except KeyError:
            raise JudgeProfileError([FieldProblem(f"thresholds.{name}", "missing")], record=self.key) from None


def judge_profile_from_dict(data: Mapping[str, Any]) -> JudgeProfile:
    """Validate a decoded judge profile (a JSON object), naming every offending field at once."""
    try:
        return JudgeProfile.model_validate(dict(data))
    except ValidationError as error:
        raise JudgeProfileError(problems_from_validation(error), record=str(data.get("name") or "")) from error


class Verdict(BaseModel):
    """A judge's proposal for one claim: a label or an abstention, with confidence, reason and provenance.

    ``label`` is ``None`` exactly when ``abstained`` is true ("needs review"); ``confidence`` is the
    judge's calibrated probability that the gold label lies in ``label``'s family (``CONFIDENCE_MEANS``;
    for an abstention: of the best label it declined to give). ``span`` is the evidence the reason
    refers to, ``evidence_index`` its item. ``cited_sentences`` are the evidence sentences that carried
    the claim's parts (a judge that reads the evidence as a whole cites every one it relied on) and
    ``cited`` the evidence item of each, in the same order; both empty when the backend cites nothing.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: Label | None
    confidence: float = Field(ge=0.0, le=1.0)
    reason: str
    abstained: bool
    backend: str
    profile: str
    span: str | None = None
    evidence_index: int | None = Field(default=None, ge=0)
    cited: tuple[int, ...] = ()
    cited_sentences: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> Verdict:
        if len(self.cited) != len(self.cited_sentences):
            raise ValueError("cited: one evidence index per cited sentence")
        if any(i < 0 for i in self.cited):
            raise ValueError("cited: evidence indices are 0 or more")
        if self.abstained != (self.label is None):
            raise ValueError("label: must be null exactly when the verdict is abstained")
        if self.label is not None and self.label not in JUDGE_LABELS:
            raise ValueError(f"label: a judge proposes only {', '.join(label.value for label in JUDGE_LABELS)}")
        return self

    def to_line(self, pair_id: str) -> dict[str, Any]:
        """The ``judge check`` output line: ``{"id", "label", "confidence", "abstained"}``."""
        return {
            "id": pair_id,
            "label": self.label.value if self.label is not None else None,
            "confidence": round(self.confidence, 4),
            "abstained": self.abstained,
        }


def abstention(profile: JudgeProfile, reason: str, confidence: float = 0.0, **extra: Any) -> Verdict:
    """A "needs review" verdict of ``profile``'s backend."""
    return Verdict(label=None, confidence=confidence, reason=reason, abstained=True,
                   backend=profile.backend, profile=profile.key, **extra)


class Judge(ABC):
    """A backend that judges claims against evidence under one ``JudgeProfile``.

    Implementations override ``judge`` (and ``judge_batch`` when they can batch, e.g. one model call
    for many claims). Either must return one verdict per input, in order, and must never raise for
    a claim it cannot judge: it abstains instead. ``judge_safely`` guards callers against backends
    that break that rule.
    """

    profile: JudgeProfile

    @abstractmethod
    def judge(self, claim: str, evidence: Sequence[str]) -> Verdict:
        """The verdict on ``claim`` given the retrieved ``evidence`` (sentences or chunks, in rank order)."""

    def judge_batch(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[Verdict]:
        """Verdicts for ``(claim, evidence)`` items, in order. The default judges them one by one."""
        return [judge_safely(self, claim, evidence) for claim, evidence in items]


def judge_safely(judge: Judge, claim: str, evidence: Sequence[str]) -> Verdict:
    """``judge.judge(claim, evidence)``, or an abstention naming the error when the backend fails (fail closed)."""
    try:
        verdict = judge.judge(claim, evidence)
    except Exception as error:  # noqa: BLE001 - any backend failure means "needs review", never a verdict
        return abstention(judge.profile, f"judge failed: {type(error).__name__}: {error}"[:200])
    if not isinstance(verdict, Verdict):
        return abstention(judge.profile, f"judge returned {type(verdict).__name__}, not a Verdict")
    return verdict


# --- evaluation ------------------------------------------------------------------------------------


def wilson_interval(count: int, total: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval of a proportion ``count / total`` (95% by default); (0, 1) when total is 0."""
    if total <= 0:
        return 0.0, 1.0
    p = count / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Rate:
    """A proportion with its counts and 95% Wilson interval (``value`` is None when ``total`` is 0)."""

    count: int
    total: int
    value: float | None
    low: float
    high: float

    @classmethod
    def of(cls, count: int, total: int) -> Rate:
        """The rate ``count / total``."""
        low, high = wilson_interval(count, total)
        return cls(count, total, count / total if total else None, low, high)

    def as_dict(self) -> dict[str, Any]:
        """Plain-JSON form, rounded to 4 decimals."""
        return {"value": None if self.value is None else round(self.value, 4), "count": self.count,
                "total": self.total, "ci95": [round(self.low, 4), round(self.high, 4)]}


@dataclass(frozen=True)
class LabelScores:
    """Precision, recall and F1 of one gold class (abstentions count as misses of the gold class)."""

    label: Label
    support: int
    predicted: int
    precision: float
    recall: float
    f1: float


@dataclass(frozen=True)
class JudgeEvaluation:
    """A judge's verdicts against gold labels (see ``evaluate_verdicts``)."""

    n: int
    coverage: Rate
    accuracy: float
    answered_accuracy: float | None
    macro_f1: float
    per_label: tuple[LabelScores, ...]
    confusion: dict[str, dict[str, int]]
    false_clearance: Rate
    false_clearance_by_label: dict[str, Rate]
    false_clearance_by_category: dict[str, Rate]
    supported_recall: Rate
    supported_precision: Rate
    calibration_error: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """Plain-JSON form (what ``judge eval`` prints)."""
        return {
            "n": self.n,
            "accuracy": round(self.accuracy, 4),
            "answered_accuracy": None if self.answered_accuracy is None else round(self.answered_accuracy, 4),
            "macro_f1": round(self.macro_f1, 4),
            "coverage": self.coverage.as_dict(),
            "false_clearance": self.false_clearance.as_dict(),
            "false_clearance_by_label": {k: v.as_dict() for k, v in self.false_clearance_by_label.items()},
            "false_clearance_by_category": {k: v.as_dict() for k, v in self.false_clearance_by_category.items()},
            "supported_recall": self.supported_recall.as_dict(),
            "supported_precision": self.supported_precision.as_dict(),
            "calibration_error": None if self.calibration_error is None else round(self.calibration_error, 4),
            "per_label": {s.label.value: {"support": s.support, "predicted": s.predicted,
                                          "precision": round(s.precision, 4), "recall": round(s.recall, 4),
                                          "f1": round(s.f1, 4)} for s in self.per_label},
            "confusion": self.confusion,
            **self.extra,
        }


def _f1(precision: float, recall: float) -> float:
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def expected_calibration_error(confidences: Sequence[float], correct: Sequence[bool], bins: int = 10) -> float:
    """ECE: mean |confidence - accuracy| over equal-width confidence bins, weighted by bin size."""
    if not confidences:
        return 0.0
    totals: Counter[int] = Counter()
    sums: dict[int, list[float]] = {}
    for confidence, hit in zip(confidences, correct, strict=True):
        b = min(int(confidence * bins), bins - 1)
        totals[b] += 1
        acc = sums.setdefault(b, [0.0, 0.0])
        acc[0] += confidence
        acc[1] += 1.0 if hit else 0.0
    n = len(confidences)
    return sum(abs(s[0] - s[1]) / n for s in sums.values())


def evaluate_verdicts(gold: Sequence[Label], predicted: Sequence[Label | None],
                      categories: Sequence[str | None] | None = None,
                      confidences: Sequence[float] | None = None) -> JudgeEvaluation:
    """Compare predicted labels (``None`` = abstained) with gold labels.

    - accuracy: share of all pairs whose verdict equals gold (an abstention is not correct);
      ``answered_accuracy`` the same over answered pairs only;
    - macro-F1: mean F1 over the judge labels that occur in gold (abstentions lower recall only);
    - coverage: share not abstained;
    - false clearance: SUPPORTED verdicts among gold PARTIAL/UNSUPPORTED/CONTRADICTED, overall, per
      gold label and per category (``categories[i]``, pairs without one are left out of that table);
    - supported recall: SUPPORTED verdicts among gold SUPPORTED; supported precision: gold SUPPORTED
      among SUPPORTED verdicts;
    - calibration error (when ``confidences`` are given): ECE of answered verdicts' confidence against
      "gold lies in the verdict's family" (``CONFIDENCE_MEANS``).
    Raises ``HRIError`` when the sequences differ in length or a gold label is not a judge label.
    """
    if len(gold) != len(predicted) or (categories is not None and len(categories) != len(gold)) or (
            confidences is not None and len(confidences) != len(gold)):
        raise HRIError("gold, predicted, categories and confidences must have the same length")
    bad = [i for i, label in enumerate(gold) if label not in JUDGE_LABELS]
    if bad:
        raise HRIError([FieldProblem(f"gold[{i}]", f"{gold[i]} is not a judge label") for i in bad[:10]])
    n = len(gold)
    confusion: dict[str, dict[str, int]] = {
        g.value: {p.value: 0 for p in JUDGE_LABELS} | {ABSTAINED: 0} for g in JUDGE_LABELS if g in set(gold)}
    for g, p in zip(gold, predicted, strict=True):
        confusion[g.value][p.value if p is not None else ABSTAINED] += 1
    answered = sum(1 for p in predicted if p is not None)
    correct = sum(1 for g, p in zip(gold, predicted, strict=True) if g == p)

    per_label: list[LabelScores] = []
    for label in JUDGE_LABELS:
        support = sum(1 for g in gold if g == label)
        if support == 0:
            continue
        n_pred = sum(1 for p in predicted if p == label)
        hits = sum(1 for g, p in zip(gold, predicted, strict=True) if g == p == label)
        precision = hits / n_pred if n_pred else 0.0
        recall = hits / support
        per_label.append(LabelScores(label, support, n_pred, precision, recall, _f1(precision, recall)))

    def clearance(indices: Sequence[int]) -> Rate:
        negatives = [i for i in indices if gold[i] in NOT_SUPPORTED]
        return Rate.of(sum(1 for i in negatives if predicted[i] == Label.SUPPORTED), len(negatives))

    everyone = range(n)
    by_label = {label.value: clearance([i for i in everyone if gold[i] == label])
                for label in JUDGE_LABELS if label in NOT_SUPPORTED and label in set(gold)}
    by_category: dict[str, Rate] = {}
    if categories is not None:
        for category in sorted({c for c in categories if c is not None}):
            by_category[category] = clearance([i for i in everyone if categories[i] == category])
    gold_supported = [i for i in everyone if gold[i] == Label.SUPPORTED]
    cleared = [i for i in everyone if predicted[i] == Label.SUPPORTED]
    ece = None
    if confidences is not None:
        answered_idx = [i for i in everyone if predicted[i] is not None]
        ece = expected_calibration_error([confidences[i] for i in answered_idx],
                                         [gold[i] in CONFIDENCE_MEANS[p] for i in answered_idx
                                          if (p := predicted[i]) is not None])
    return JudgeEvaluation(
        n=n,
        coverage=Rate.of(answered, n),
        accuracy=correct / n if n else 0.0,
        answered_accuracy=correct / answered if answered else None,
        macro_f1=sum(s.f1 for s in per_label) / len(per_label) if per_label else 0.0,
        per_label=tuple(per_label),
        confusion=confusion,
        false_clearance=clearance(list(everyone)),
        false_clearance_by_label=by_label,
        false_clearance_by_category=by_category,
        supported_recall=Rate.of(sum(1 for i in gold_supported if predicted[i] == Label.SUPPORTED),
                                 len(gold_supported)),
        supported_precision=Rate.of(sum(1 for i in cleared if gold[i] == Label.SUPPORTED), len(cleared)),
        calibration_error=ece,
    )


def _macro_f1(gold: Sequence[Label], predicted: Sequence[Label | None], indices: Sequence[int]) -> float:
    """Macro-F1 over the judge labels present in gold, of the pairs at ``indices`` (as ``evaluate_verdicts``)."""
    support: Counter[Label] = Counter()
    guessed: Counter[Label | None] = Counter()
    hits: Counter[Label] = Counter()
    for i in indices:
        g, p = gold[i], predicted[i]
        support[g] += 1
        guessed[p] += 1
        if g == p:
            hits[g] += 1
    scores = []
    for label in JUDGE_LABELS:
        if support[label]:
            precision = hits[label] / guessed[label] if guessed[label] else 0.0
            scores.append(_f1(precision, hits[label] / support[label]))
    return sum(scores) / len(scores) if scores else 0.0


def macro_f1_interval(gold: Sequence[Label], predicted: Sequence[Label | None], resamples: int = 1000,
                      seed: int = 0) -> tuple[float, float]:
    """95% percentile-bootstrap interval of macro-F1 (pairs resampled with replacement, seeded so that a
    rerun prints the same interval); (0, 1) for no pairs."""
    n = len(gold)
    if n == 0:
        return 0.0, 1.0
    rng = random.Random(seed)
    values = sorted(_macro_f1(gold, predicted, [rng.randrange(n) for _ in range(n)]) for _ in range(resamples))
    return values[int(0.025 * (resamples - 1))], values[int(round(0.975 * (resamples - 1)))]
