"""The offline default judge: claim-word evidence features, a calibrated score, conservative verdicts.

No model download, no network: the judge links a claim to its best evidence span by the claim's own
words and decides from how much of the claim that span covers. It cannot tell a contradiction from
agreement (the same words, one of them changed), so it **never says CONTRADICTED**, and it clears a
claim (SUPPORTED) only when a calibrated score is high *and* hard guards hold:

- every number the claim states (years, dates, amounts, counts) appears in the span's anchor sentence,
  the one that carries most of the claim's words;
- every named entity of the claim (its capitalised words other than stop words) appears in the span;
- the claim and the span agree on negation (both or neither say "not", "never", "no"...).

Below the profile's thresholds it abstains ("needs review"). Steps, each a pure function:

1. ``claim_terms`` / ``text_terms``: tokens (NFKC, lower case), content-word stems (English stop words
   dropped, light suffix stripping), numbers (digits normalised, "1,200" -> "1200", number words ->
   digits), entities, negation cues, content bigrams.
2. ``candidate_spans``: each evidence item split into sentences (``split_sentences``), and windows of
   up to ``MAX_WINDOW`` consecutive sentences of one item.
3. ``extract_features``: the span that covers the most claim words (shortest on ties) and its
   features: claim-word recall, entity and number recall, bigram recall, negation agreement, and
   (optionally) the best MiniLM cosine of the claim against an evidence sentence, which a caller
   supplies through a ``similarity`` function (see ``register.verify.embeddings``).
4. ``OfflineJudge.judge``: two logistic scores from the profile's weights -- P(gold SUPPORTED) and
   P(gold SUPPORTED or PARTIAL) -- calibrated on a dev split; then the decision described in
   ``decide``. The reason names the deciding number and the passage: "claim-word recall 0.82 in
   passage 3".

Pure: stdlib only. Callers: ``register.verify.judge_cli`` and the verification pipeline.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import dataclass

from .errors import FieldProblem
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

# English function words: they carry no checkable content (a word list reads best as text).
_STOPWORD_TEXT = """
a about above after again against all also am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have having
he her here hers herself him himself his how i if in into is it its itself just me more most my myself
of off on once only or other our ours ourselves out over own same she should so some such than that the
their theirs them themselves then there these they this those through to too under until up very was we
were what when where which while who whom why will with would you your yours yourself yourselves
s t d ll m re ve y o
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
NEGATIONS = frozenset({"not", "no", "never", "none", "nor", "neither", "nobody", "nothing", "nowhere",
                       "without", "cannot", "nt"})
NUMBER_WORDS = {
    "zero": "0", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
    "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "thirteen": "13", "fourteen": "14",
    "fifteen": "15", "sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20",
    "thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
    "ninety": "90", "hundred": "100", "thousand": "1000", "first": "1st", "second": "2nd", "third": "3rd",
}
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+(?:'[^\W\d_]+)*(?:#|\+\+)?")
# Sentence ends: . ! ? (and closing quotes/brackets) followed by space and an upper-case letter, digit
# or opening quote. Abbreviations and initials ("U.S.", "Jr.", "William O. Douglas") are re-joined below.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_ABBREVIATION = re.compile(r"(?:\b[A-Z]|\b(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|Prof|Gen|Col|Lt|Sgt|Capt|Rev|Gov|Sen|Rep|"
                           r"No|Vol|vs|v|etc|e\.g|i\.e|Inc|Ltd|Co|Corp|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|"
                           r"Nov|Dec|U\.S|U\.K|a\.m|p\.m))\.$")


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    return text.replace("\u2019", "'").replace("\u2018", "'").replace("\u2013", "-").replace("\u2014", "-")


def tokenize(text: str) -> list[str]:
    """Word and number tokens of ``text``, original case ("didn't" stays one token)."""
    return _TOKEN.findall(_normalise(text))


def stem(word: str) -> str:
    """A light, symmetric suffix stripper (plural, -ed, -ing) of a lower-case word."""
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 4 and word.endswith("es") and (word[-3] in "sxz" or word[-4:-2] in ("ch", "sh")):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and word.endswith("ed"):
        word = word[:-2]
    return word


def _number(token: str) -> str | None:
    """The canonical form of a number token ("6,650" -> "6650", "2.50" -> "2.5"), or None."""
    if token[0].isdigit():
        digits = token.replace(",", "") if re.fullmatch(r"\d{1,3}(?:,\d{3})+", token) else token
        if re.fullmatch(r"\d+\.\d+", digits):
            digits = digits.rstrip("0").rstrip(".")
        return digits.lstrip("0") or "0"
    return NUMBER_WORDS.get(token.lower())


def _word_parts(token: str) -> tuple[str, bool]:
    """Lower-case word without a trailing "'s", and whether it carried the contraction "n't"."""
    low = token.lower()
    if low.endswith("n't"):
        return low[:-3], True
    if low.endswith("'s"):
        low = low[:-2]
    return low.replace("'", ""), False


@dataclass(frozen=True)
class ClaimTerms:
    """What a claim asserts, as comparable terms."""

    content: tuple[str, ...]
    entities: frozenset[str]
    numbers: frozenset[str]
    negated: bool
    bigrams: frozenset[tuple[str, str]]


@dataclass(frozen=True)
class TextTerms:
    """The comparable terms of a text: content stems (numbers in canonical form among them), numbers,
    whether it has a negation cue, the stems within ``NEGATION_SCOPE`` tokens after one, bigrams."""

    stems: frozenset[str]
    numbers: frozenset[str]
    negated: bool
    negated_stems: frozenset[str]
    bigrams: frozenset[tuple[str, str]]


# A negation cue scopes over the next few content words ("was not born in" -> born).
NEGATION_SCOPE = 3


@dataclass
class _Scan:
    content: list[str]
    entities: set[str]
    numbers: set[str]
    negated_stems: set[str]
    negated: bool = False


def _scan(text: str) -> _Scan:
    """One pass over the tokens: content stems in order, entities (capitalised content words, the first too:
    a claim often opens with its subject, "Brennan was the oldest justice"),
    numbers, negation cues and the stems in their scope."""
    scan = _Scan([], set(), set(), set())
    scope = 0
    for token in tokenize(text):
        number = _number(token)
        word, contraction = ("", False) if number is not None else _word_parts(token)
        if contraction or word in NEGATIONS:
            scan.negated, scope = True, NEGATION_SCOPE
            continue
        if number is not None:
            scan.numbers.add(number)
            stemmed = number
        elif word in STOPWORDS or len(word) < 2:
            continue
        else:
            stemmed = stem(word)
            if token[0].isupper():
                scan.entities.add(stemmed)
        scan.content.append(stemmed)
        if scope:
            scan.negated_stems.add(stemmed)
            scope -= 1
    return scan


def claim_terms(claim: str) -> ClaimTerms:
    """Content stems (unique, in order), entities, numbers, negation and content bigrams of a claim.

    Ordinals ("first") count as content words but not as numbers the evidence must state in digits."""
    scan = _scan(claim)
    return ClaimTerms(
        content=tuple(dict.fromkeys(scan.content)),
        entities=frozenset(scan.entities),
        numbers=frozenset(n for n in scan.numbers if not n.endswith(("st", "nd", "rd"))),
        negated=scan.negated,
        bigrams=frozenset(zip(scan.content, scan.content[1:], strict=False)),
    )


def text_terms(text: str) -> TextTerms:
    """The comparable terms of an evidence text."""
    scan = _scan(text)
    return TextTerms(frozenset(scan.content), frozenset(scan.numbers), scan.negated,
                     frozenset(scan.negated_stems), frozenset(zip(scan.content, scan.content[1:], strict=False)))


def negation_differs(claim: ClaimTerms, span: TextTerms) -> bool:
    """True when the claim is negated and the span is not, or the span negates one of the claim's words
    ("X was not born in Y" against "X was born in Y"). An unrelated "not" elsewhere in the span is fine."""
    if claim.negated:
        return not span.negated
    return any(word in span.negated_stems for word in claim.content)


def split_sentences(text: str) -> list[str]:
    """Sentences of a passage: split at . ! ? before a capital, digit or quote, not after abbreviations
    or initials. Whitespace is collapsed; empty input gives no sentence."""
    text = " ".join(text.split())
    if not text:
        return []
    pieces = _SENTENCE_END.split(text)
    sentences: list[str] = []
    for piece in pieces:
        if sentences and _ABBREVIATION.search(sentences[-1]):
            sentences[-1] = f"{sentences[-1]} {piece}"
        else:
            sentences.append(piece)
    return [s.strip() for s in sentences if s.strip()]


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


def _spans_with_terms(evidence: Sequence[str], max_window: int) -> list[tuple[Span, list[TextTerms]]]:
    """Candidate spans with the terms of each of their sentences (each sentence tokenised once)."""
    out: list[tuple[Span, list[TextTerms]]] = []
    for item, chunk in enumerate(evidence):
        sentences = split_sentences(chunk)
        terms = [text_terms(sentence) for sentence in sentences]
        for first in range(len(sentences)):
            for last in range(first, min(first + max_window, len(sentences))):
                out.append((Span(item, first, last, " ".join(sentences[first:last + 1])), terms[first:last + 1]))
    return out


@dataclass(frozen=True)
class Features:
    """Evidence features of one claim against its best span (recalls are shares of the claim's terms)."""

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

    @property
    def guards_pass(self) -> bool:
        """The hard conditions of a SUPPORTED verdict: no missing number or entity, same negation."""
        return self.span is not None and not self.missing_numbers and not self.missing_entities \
            and not self.negation_mismatch and self.content_words > 0


def _share(wanted: Collection[Hashable], have: frozenset[Hashable] | frozenset[str]) -> float:
    """Share of ``wanted`` found in ``have`` (1.0 when nothing is wanted)."""
    return sum(1 for w in wanted if w in have) / len(wanted) if wanted else 1.0


def extract_features(claim: str, evidence: Sequence[str], similarity: Similarity | None = None) -> Features:
    """Link ``claim`` to its best span of ``evidence`` and measure how much of the claim it covers.

    The best span has the highest claim-word recall (content words and numbers); ties go to the
    shorter span, then the earlier one. ``similarity`` (optional) scores the claim against every
    evidence sentence; its best cosine becomes the ``similarity`` feature.
    """
    terms = claim_terms(claim)
    spans = _spans_with_terms(evidence, MAX_WINDOW)
    best: tuple[float, int, Span, list[TextTerms], TextTerms] | None = None
    union: set[str] = set()
    for span, parts in spans:
        have = _merge(parts)
        if span.first == span.last:
            union |= have.stems
        recall = _share(terms.content, have.stems)
        key = (recall, -(span.last - span.first))
        if best is None or key > (best[0], best[1]):
            best = (recall, key[1], span, parts, have)
    cosine = None
    if similarity is not None:
        sentences = [span.text for span, _parts in spans if span.first == span.last]
        scores = list(similarity(claim, sentences)) if sentences else []
        cosine = max(scores) if scores else 0.0
    if best is None:
        return Features(0.0, 0.0, 0.0, 0.0, False, tuple(sorted(terms.numbers)), tuple(sorted(terms.entities)),
                        len(terms.content), 0.0, cosine, None)
    recall, _size, span, parts, have = best
    # The claim's numbers must stand in the span's anchor sentence (the one with most claim words):
    # "Arsenal won the FA Cup in 1993" is not backed by "... March 1993. Arsenal ... first FA Cup win since 1979".
    anchor = max(parts, key=lambda p: _share(terms.content, p.stems))
    return Features(
        content_recall=recall,
        entity_recall=_share(terms.entities, have.stems),
        number_recall=_share(terms.numbers, anchor.numbers),
        bigram_recall=_share(terms.bigrams, have.bigrams),
        negation_mismatch=negation_differs(terms, have),
        missing_numbers=tuple(sorted(n for n in terms.numbers if n not in anchor.numbers)),
        missing_entities=tuple(sorted(e for e in terms.entities if e not in have.stems)),
        content_words=len(terms.content),
        evidence_recall=_share(terms.content, frozenset(union)),
        similarity=cosine,
        span=span,
    )


# Feature names as the profile's weights spell them; ``feature_vector`` is their single definition.
MODELS = ("supported", "support_any")
FEATURE_NAMES: tuple[str, ...] = (
    "bias", "content_recall", "entity_recall", "number_recall", "bigram_recall", "negation_mismatch",
    "missing_number", "missing_entity", "log_content_words", "evidence_recall", "similarity",
)


def feature_vector(features: Features) -> dict[str, float]:
    """The model inputs of ``features`` by name (``similarity`` 0 when not measured)."""
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


def _reason(label: str, features: Features) -> str:
    span = features.span
    where = f"passage {span.item + 1}" if span is not None else "no evidence"
    return f"{label}: claim-word recall {features.content_recall:.2f} in {where}"


def _blocker(features: Features) -> str | None:
    """Why a hard guard blocks clearance, or None."""
    if features.missing_numbers:
        return f"number {', '.join(features.missing_numbers[:3])} not in the span"
    if features.negation_mismatch:
        return "negation differs between claim and span"
    if features.missing_entities:
        return f"{', '.join(features.missing_entities[:3])} not in the span"
    return None


def decide(features: Features, scores: Scores, profile: JudgeProfile) -> tuple[Label | None, float, str]:
    """The verdict from calibrated scores and hard guards, as (label or None, confidence, reason).

    With ``t_s = thresholds.supported`` and ``t_a = thresholds.abstain`` (> 0.5):

    1. SUPPORTED when every guard holds and P(SUPPORTED) >= t_s; confidence P(SUPPORTED);
    2. else UNSUPPORTED when P(not supported at all) = 1 - P(SUPPORTED or PARTIAL) >= t_a;
    3. else PARTIAL ("supported at least in part") when P(SUPPORTED or PARTIAL) >= t_a;
    4. else abstain ("needs review").

    A confidence is the calibrated probability that gold lies in the verdict's family
    (``hri_core.judging.CONFIDENCE_MEANS``). Never CONTRADICTED: word overlap cannot tell it apart.
    """
    t_supported, t_abstain = profile.threshold("supported"), profile.threshold("abstain")
    if features.span is None:
        return None, 0.0, "needs review: no evidence sentence to link the claim to"
    if features.content_words == 0:
        return None, 0.0, "needs review: the claim has no content words to check"
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
        return Verdict(label=label, confidence=min(max(confidence, 0.0), 1.0), reason=reason,
                       abstained=label is None, backend=self.profile.backend, profile=self.profile.key,
                       span=span.text if span is not None else None,
                       evidence_index=span.item if span is not None else None)
