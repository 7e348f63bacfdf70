"""The offline default judge: claim-word evidence features, a calibrated score, conservative verdicts.

No model download, no network. The judge reads a claim against all of its evidence
(``hri_core.evidence_reading``): every part of the claim -- content words, entities, numbers, dates,
normalised by ``hri_core.quantities`` -- is looked up in every evidence sentence, and the sentences that
carried the parts are cited. It cannot tell a contradiction from agreement (the same words, one of them
changed), so it **never says CONTRADICTED**: a negation or antonym near a found part sends the claim to
review. It clears a claim (SUPPORTED) only when a calibrated score is high *and* hard guards hold: every
number, date and entity of the claim found (a number beside another claim word), no candidate
contradiction. Below the profile's thresholds it abstains ("needs review").

1. ``extract_features``: the whole reading (guards, whole-evidence recall, bigram recall, cited
   sentences) and the best span of one or two consecutive sentences (the pipeline's link score);
   optionally the best MiniLM cosine of the claim against an evidence sentence, which a caller supplies
   through a ``similarity`` function (see ``register.verify.embeddings``).
2. ``OfflineJudge.judge``: two logistic scores from the profile's weights -- P(gold SUPPORTED) and
   P(gold SUPPORTED or PARTIAL) -- calibrated on a dev split; then the decision described in
   ``decide``. The reason names the deciding number and the passages: "claim-word recall 1.00 in
   passages 1, 3".

Pure: stdlib only. Callers: ``register.verify.judge_cli`` and the verification pipeline.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import dataclass

from .errors import FieldProblem
from .evidence_reading import (
    ClaimTerms,
    Reading,
    Sentence,
    TextTerms,
    claim_terms,
    evidence_sentences,
    read_evidence,
    split_sentences,
    text_terms,
    tokenize,
)
from .judging import Judge, JudgeProfile, JudgeProfileError, Verdict, abstention
from .vocabulary import Label

__all__ = [
    "FEATURE_NAMES",
    "ClaimTerms",
    "Features",
    "OfflineJudge",
    "Scores",
    "Similarity",
    "Span",
    "candidate_spans",
    "check_profile",
    "claim_terms",
    "decide",
    "extract_features",
    "feature_vector",
    "split_sentences",
    "text_terms",
    "tokenize",
]

MAX_WINDOW = 2
# A similarity function: the cosine of the claim with each of the given sentences, in order.
Similarity = Callable[[str, Sequence[str]], Sequence[float]]

def negation_differs(claim: ClaimTerms, span: TextTerms) -> bool:
    """True when the claim is negated and the span is not, or the span negates one of the claim's words
    ("X was not born in Y" against "X was born in Y"). An unrelated "not" elsewhere in the span is fine."""
    if claim.negated:
        return not span.negated
    return any(word in span.negated_stems for word in claim.content)


@dataclass(frozen=True)
class Span:
    """Consecutive sentences ``first..last`` (0-based, inclusive) of evidence item ``item``."""

    item: int
    first: int
    last: int
    text: str


def candidate_spans(evidence: Sequence[str], max_window: int = MAX_WINDOW) -> list[Span]:
    """Every window of 1..``max_window`` consecutive sentences within each evidence item."""
    return [span for span, _terms in _spans_with_terms(evidence, max_window)]


def _merge(parts: Sequence[TextTerms]) -> TextTerms:
    """The terms of consecutive sentences taken together (bigrams stay within their sentence)."""
    if len(parts) == 1:
        return parts[0]
    return TextTerms(frozenset().union(*(p.stems for p in parts)), frozenset().union(*(p.numbers for p in parts)),
                     any(p.negated for p in parts), frozenset().union(*(p.negated_stems for p in parts)),
                     frozenset().union(*(p.bigrams for p in parts)))


def _windows(items: Sequence[Sequence[Sentence]], max_window: int) -> list[tuple[Span, list[TextTerms]]]:
    """Candidate spans with the terms of each of their sentences."""
    out: list[tuple[Span, list[TextTerms]]] = []
    for sentences in items:
        for first in range(len(sentences)):
            for last in range(first, min(first + max_window, len(sentences))):
                window = sentences[first:last + 1]
                out.append((Span(window[0].item, first, last, " ".join(s.text for s in window)),
                            [s.terms for s in window]))
    return out


def _spans_with_terms(evidence: Sequence[str], max_window: int) -> list[tuple[Span, list[TextTerms]]]:
    """Candidate spans with the terms of each of their sentences (each sentence tokenised once)."""
    return _windows(evidence_sentences(evidence), max_window)


@dataclass(frozen=True)
class Features:
    """Evidence features of one claim: against its best span (``content_recall``, the link score) and
    against all of its evidence read as a whole (``reading``: each part of the claim found in some
    sentence; ``whole_recall`` its share). Recalls are shares of the claim's terms."""

    content_recall: float
    entity_recall: float
    number_recall: float
    bigram_recall: float
    negation_mismatch: bool
    missing_numbers: tuple[str, ...]
    missing_entities: tuple[str, ...]
    content_words: int
    evidence_recall: float
    similarity: float | None
    span: Span | None
    reading: Reading | None = None

    @property
    def whole_recall(self) -> float:
        """Share of the claim's parts found somewhere in the evidence (numbers and dates with context)."""
        return self.reading.recall if self.reading is not None else 0.0

    @property
    def contradiction(self) -> str | None:
        """A negation or antonym cue near a found part of the claim, or None."""
        return self.reading.contradiction if self.reading is not None else None

    @property
    def guards_pass(self) -> bool:
        """The hard conditions of a SUPPORTED verdict: every number, date and entity of the claim found in
        the evidence, no candidate contradiction."""
        return self.span is not None and not self.missing_numbers and not self.missing_entities \
            and not self.negation_mismatch and self.content_words > 0


def _share(wanted: Collection[Hashable], have: frozenset[Hashable] | frozenset[str]) -> float:
    """Share of ``wanted`` found in ``have`` (1.0 when nothing is wanted)."""
    return sum(1 for w in wanted if w in have) / len(wanted) if wanted else 1.0


def extract_features(claim: str, evidence: Sequence[str], similarity: Similarity | None = None) -> Features:
    """Read ``claim`` against all of ``evidence`` and link it to its best span.

    The whole reading (``hri_core.evidence_reading.read_evidence``) gives the guards and most features:
    every number, date and entity of the claim must be found in some sentence, and a negation or
    antonym near a found part is a candidate contradiction. The best span (one or two consecutive
    sentences of one item with the highest claim-word recall; ties to the shorter, then the earlier)
    gives the link score ``content_recall``. ``similarity`` (optional) scores the claim against every
    evidence sentence; its best cosine becomes the ``similarity`` feature.
    """
    terms = claim_terms(claim)
    items = evidence_sentences(evidence)
    flat = [sentence for sentences in items for sentence in sentences]
    spans = _windows(items, MAX_WINDOW)
    best: tuple[float, int, Span] | None = None
    for span, parts in spans:
        recall = _share(terms.content, _merge(parts).stems)
        key = (recall, -(span.last - span.first))
        if best is None or key > (best[0], best[1]):
            best = (recall, key[1], span)
    cosine = None
    if similarity is not None:
        scores = list(similarity(claim, [s.text for s in flat])) if flat else []
        cosine = max(scores) if scores else 0.0
    if best is None:
        return Features(0.0, 0.0, 0.0, 0.0, False, tuple(sorted(terms.numbers)), tuple(sorted(terms.entities)),
                        len(terms.content), 0.0, cosine, None)
    reading = read_evidence(terms, flat)
    return Features(
        content_recall=best[0],
        entity_recall=_share(terms.entities, reading.found),
        number_recall=_share(terms.numbers, reading.found),
        bigram_recall=reading.bigram_recall,
        negation_mismatch=reading.contradiction is not None,
        missing_numbers=reading.missing_numbers,
        missing_entities=reading.missing_entities,
        content_words=len(terms.content),
        evidence_recall=reading.loose_recall,
        similarity=cosine,
        span=best[2],
        reading=reading,
    )


# Feature names as the profile's weights spell them; ``feature_vector`` is their single definition.
MODELS = ("supported", "support_any")
FEATURE_NAMES: tuple[str, ...] = (
    "bias", "content_recall", "entity_recall", "number_recall", "bigram_recall", "negation_mismatch",
    "missing_number", "missing_entity", "log_content_words", "evidence_recall", "similarity",
    "whole_recall", "sentence_recall", "log_cited", "unfound_words",
)


def feature_vector(features: Features) -> dict[str, float]:
    """The model inputs of ``features`` by name (``similarity`` 0 when not measured)."""
    reading = features.reading
    return {
        "bias": 1.0,
        "content_recall": features.content_recall,
        "entity_recall": features.entity_recall,
        "number_recall": features.number_recall,
        "bigram_recall": features.bigram_recall,
        "negation_mismatch": float(features.negation_mismatch),
        "missing_number": float(bool(features.missing_numbers)),
        "missing_entity": float(bool(features.missing_entities)),
        "log_content_words": math.log1p(features.content_words),
        "evidence_recall": features.evidence_recall,
        "similarity": features.similarity if features.similarity is not None else 0.0,
        "whole_recall": features.whole_recall,
        "sentence_recall": reading.sentence_recall if reading is not None else 0.0,
        "log_cited": math.log1p(len(reading.cited)) if reading is not None else 0.0,
        # words of the claim not found at all: a count, since one missing fact is one too many
        "unfound_words": float(features.content_words - len(reading.found)) if reading is not None
        else float(features.content_words),
    }


def _logistic(weights: dict[str, float], x: dict[str, float]) -> float:
    z = sum(weight * x[name] for name, weight in weights.items())
    return 1.0 / (1.0 + math.exp(-z)) if z > -500 else 0.0


def _calibrate(points: Sequence[tuple[float, float]] | None, score: float) -> float:
    """Piecewise-linear interpolation of a calibration curve (identity without one)."""
    if not points:
        return score
    if score <= points[0][0]:
        return points[0][1]
    for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
        if score <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (score - x0) / (x1 - x0)
    return points[-1][1]


@dataclass(frozen=True)
class Scores:
    """Calibrated probabilities from the profile's two models."""

    supported: float  # P(gold SUPPORTED), fitted on pairs whose guards hold (the only ones it can clear)
    any_support: float  # P(gold SUPPORTED or PARTIAL): the evidence backs the claim at least in part


def check_profile(profile: JudgeProfile) -> None:
    """Raise ``JudgeProfileError`` naming every field the offline judge needs and does not find."""
    problems = [FieldProblem(f"weights.{model}", "missing") for model in MODELS if model not in profile.weights]
    problems += [FieldProblem(f"weights.{model}.{name}", "unknown feature")
                 for model, coefficients in profile.weights.items() for name in coefficients
                 if name not in FEATURE_NAMES]
    problems += [FieldProblem(f"thresholds.{name}", "missing") for name in ("supported", "abstain")
                 if name not in profile.thresholds]
    if "abstain" in profile.thresholds and not 0.5 < profile.thresholds["abstain"] <= 1.0:
        problems.append(FieldProblem("thresholds.abstain", "must be above 0.5 and at most 1"))
    if "supported" in profile.thresholds and not 0.0 < profile.thresholds["supported"] <= 1.0:
        problems.append(FieldProblem("thresholds.supported", "must be above 0 and at most 1"))
    if problems:
        raise JudgeProfileError(problems, record=profile.key)


def score(features: Features, profile: JudgeProfile) -> Scores:
    """The profile's logistic models ``weights.supported`` and ``weights.support_any``, calibrated
    (the profile must pass ``check_profile``)."""
    x = feature_vector(features)
    supported = _calibrate(profile.calibration.get("supported"), _logistic(profile.weights["supported"], x))
    any_support = _calibrate(profile.calibration.get("support_any"), _logistic(profile.weights["support_any"], x))
    return Scores(supported, any_support)


def _where(features: Features) -> str:
    """The passages of the cited sentences ("passage 2", "passages 1, 3"), else the best span's."""
    reading = features.reading
    items = sorted({s.item + 1 for s, _parts in reading.cited}) if reading is not None and reading.cited else []
    if not items:
        return f"passage {features.span.item + 1}" if features.span is not None else "no evidence"
    return f"passage{'s' if len(items) > 1 else ''} {', '.join(map(str, items))}"


def _reason(label: str, features: Features) -> str:
    recall = features.whole_recall if features.reading is not None else features.content_recall
    return f"{label}: claim-word recall {recall:.2f} in {_where(features)}"


def _blocker(features: Features) -> str | None:
    """Why a hard guard blocks clearance, or None."""
    if features.missing_numbers:
        return f"number {', '.join(features.missing_numbers[:3])} not in the evidence"
    if features.contradiction:
        return f"candidate contradiction: {features.contradiction}"
    if features.missing_entities:
        return f"{', '.join(features.missing_entities[:3])} not in the evidence"
    return None


# A candidate contradiction is sent to review when the claim is at least this well linked: below it the
# evidence is about something else and "unsupported" is the honest answer.
CONTRADICTION_LINK = 0.5


def decide(features: Features, scores: Scores, profile: JudgeProfile) -> tuple[Label | None, float, str]:
    """The verdict from calibrated scores and hard guards, as (label or None, confidence, reason).

    With ``t_s = thresholds.supported`` and ``t_a = thresholds.abstain`` (> 0.5):

    1. needs review when a negation or antonym cue stands near a found part of a claim whose parts are
       at least half found (a candidate contradiction: word overlap cannot decide it);
    2. SUPPORTED when every guard holds and P(SUPPORTED) >= t_s; confidence P(SUPPORTED);
    3. else UNSUPPORTED when P(not supported at all) = 1 - P(SUPPORTED or PARTIAL) >= t_a;
    4. else PARTIAL ("supported at least in part") when P(SUPPORTED or PARTIAL) >= t_a;
    5. else abstain ("needs review").

    A confidence is the calibrated probability that gold lies in the verdict's family
    (``hri_core.judging.CONFIDENCE_MEANS``). Never CONTRADICTED: word overlap cannot tell it apart.
    """
    t_supported, t_abstain = profile.threshold("supported"), profile.threshold("abstain")
    if features.span is None:
        return None, 0.0, "needs review: no evidence sentence to link the claim to"
    if features.content_words == 0:
        return None, 0.0, "needs review: the claim has no content words to check"
    if features.contradiction and features.whole_recall >= CONTRADICTION_LINK:
        return (None, max(scores.any_support, 1.0 - scores.any_support),
                f"{_reason('needs review', features)}; candidate contradiction: {features.contradiction}")
    if features.guards_pass and scores.supported >= t_supported:
        return Label.SUPPORTED, scores.supported, _reason("supported", features)
    blocker = _blocker(features)
    if blocker is None and scores.supported >= t_supported * 0.75:
        blocker = f"P(supported) {scores.supported:.2f} below the clearance threshold {t_supported:.2f}"
    if 1.0 - scores.any_support >= t_abstain:
        label, confidence = Label.UNSUPPORTED, 1.0 - scores.any_support
    elif scores.any_support >= t_abstain:
        label, confidence = Label.PARTIAL, scores.any_support
    else:
        why = _reason("needs review", features)
        return None, max(scores.any_support, 1.0 - scores.any_support), why + (f"; {blocker}" if blocker else "")
    return label, confidence, _reason(label.value.lower(), features) + (f"; {blocker}" if blocker else "")


class OfflineJudge(Judge):
    """The offline default judge (see the module docstring); ``similarity`` adds the MiniLM feature."""

    def __init__(self, profile: JudgeProfile, similarity: Similarity | None = None) -> None:
        check_profile(profile)
        if similarity is None and any(w.get("similarity") for w in profile.weights.values()):
            # Its thresholds were fitted with the cosine: without it the scores would mean something else.
            raise JudgeProfileError([FieldProblem("weights.*.similarity", "this profile needs a similarity function "
                                                  "(the MiniLM encoder)")], record=profile.key)
        self.profile = profile
        self.similarity = similarity

    def judge(self, claim: str, evidence: Sequence[str]) -> Verdict:
        """Verdict on ``claim``; abstains on empty claims or evidence."""
        if not claim.strip():
            return abstention(self.profile, "empty claim")
        if not any(chunk.strip() for chunk in evidence):
            return abstention(self.profile, "no evidence")
        features = extract_features(claim, evidence, self.similarity)
        label, confidence, reason = decide(features, score(features, self.profile), self.profile)
        span = features.span
        cited = features.reading.cited if features.reading is not None else ()
        return Verdict(label=label, confidence=min(max(confidence, 0.0), 1.0), reason=reason,
                       abstained=label is None, backend=self.profile.backend, profile=self.profile.key,
                       span=span.text if span is not None else None,
                       evidence_index=span.item if span is not None else None,
                       cited=tuple(s.item for s, _parts in cited),
                       cited_sentences=tuple(s.text for s, _parts in cited))
