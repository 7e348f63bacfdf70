"""Reading a claim against all of its evidence: comparable terms, sentences, the parts each sentence carries.

A claim's facts are often spread over several sentences of the evidence ("X was born in Y." ... "He
moved to Z in 1932."). ``read_evidence`` checks every *atomic part* of a claim -- its content words
(the predicate and the rest), entities, numbers and dates -- against every sentence it is given, and
combines them:

- a part is **found** when some sentence carries it; a number or date counts only in a sentence that
  also carries another of the claim's words (its context: "Arsenal won the FA Cup in 1993" is not
  backed by "The sixth round was played in March 1993.");
- the **cited** sentences are a small cover of the found parts, chosen greedily (the sentence adding
  the most parts first), so that a verdict can say which sentences carried what;
- **candidate contradictions**: a negation cue in scope of a found part ("was *not* born in"), a claim
  negation the cited sentences do not share, or an antonym of a claim word in a cited sentence
  ("won" against "lost"). Lexical overlap cannot decide these; the judge sends them to review.

Terms are compared after normalisation (``hri_core.quantities``): numbers, spelled-out numbers,
dates and units have one written form each; words are lower-cased and lightly stemmed.

Pure: stdlib only. Callers: ``hri_core.offline_judge``, ``register.verify.llm_judge``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .quantities import lex, normalise_text

__all__ = [
    "ANTONYMS",
    "NEGATIONS",
    "STOPWORDS",
    "ClaimTerms",
    "Reading",
    "Sentence",
    "TextTerms",
    "claim_terms",
    "read_evidence",
    "split_sentences",
    "stem",
    "text_terms",
    "tokenize",
]

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
# A negation cue scopes over the next few content words ("was not born in" -> born).
NEGATION_SCOPE = 3
# Pairs of opposites, on lower-case words as written and on their stems (both directions are read).
_ANTONYM_PAIRS = """
increase decrease | increased decreased | rise fall | rose fell | more less | more fewer | higher lower |
larger smaller | largest smallest | highest lowest | before after | above below | win lose | won lost |
winning losing | victory defeat | gain loss | first last | earliest latest | oldest youngest | older younger |
north south | east west | maximum minimum | majority minority | success failure | successful unsuccessful |
accepted rejected | accept reject | approved rejected | allow forbid | allowed banned | legal illegal |
alive dead | born died | open closed | opened closed | start end | began ended | true false | positive negative |
include exclude | included excluded | public private | male female | men women | up down | entered left |
joined left | hired fired | appointed dismissed | elected defeated | cheaper dearer | long short | longest shortest
"""
ANTONYMS: dict[str, frozenset[str]] = {}
for _pair in _ANTONYM_PAIRS.replace("\n", " ").split("|"):
    _a, _b = _pair.split()
    ANTONYMS[_a] = ANTONYMS.get(_a, frozenset()) | {_b}
    ANTONYMS[_b] = ANTONYMS.get(_b, frozenset()) | {_a}

_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+(?:'[^\W\d_]+)*(?:#|\+\+)?")
# Sentence ends: . ! ? (and closing quotes/brackets) followed by space and an upper-case letter, digit
# or opening quote. Abbreviations and initials ("U.S.", "Jr.", "William O. Douglas") are re-joined below.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_ABBREVIATION = re.compile(r"(?:\b[A-Z]|\b(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|Prof|Gen|Col|Lt|Sgt|Capt|Rev|Gov|Sen|Rep|"
                           r"No|Vol|vs|v|etc|e\.g|i\.e|Inc|Ltd|Co|Corp|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|"
                           r"Nov|Dec|U\.S|U\.K|a\.m|p\.m))\.$")


def tokenize(text: str) -> list[str]:
    """Word and number tokens of ``text``, original case ("didn't" stays one token)."""
    return _TOKEN.findall(normalise_text(text))


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


def _word_parts(token: str) -> tuple[str, bool]:
    """Lower-case word without a trailing "'s", and whether it carried the contraction "n't"."""
    low = token.lower()
    if low.endswith("n't"):
        return low[:-3], True
    if low.endswith("'s"):
        low = low[:-2]
    return low.replace("'", ""), False


@dataclass
class _Scan:
    content: list[str] = field(default_factory=list)
    entities: set[str] = field(default_factory=set)
    numbers: set[str] = field(default_factory=set)
    vouched: set[str] = field(default_factory=set)  # what the dates of an evidence text also back
    negated_stems: set[str] = field(default_factory=set)
    words: set[str] = field(default_factory=set)  # every lower-case word, stop words included (antonyms)
    negated: bool = False


def _scan(text: str) -> _Scan:
    """One pass over the lexemes: content stems in order (numbers, dates, units and ordinals in their one
    written form among them), entities (capitalised content words, the first too: a claim often opens
    with its subject), numbers and dates, negation cues and the stems in their scope."""
    scan = _Scan()
    scope = 0
    for lexeme in lex(text):
        if lexeme.kind == "word":
            word, contraction = _word_parts(lexeme.text)
            scan.words.add(word)
            if contraction or word in NEGATIONS:
                scan.negated, scope = True, NEGATION_SCOPE
                continue
            if word in STOPWORDS or len(word) < 2:
                continue
            stemmed = stem(word)
            if lexeme.text[0].isupper():
                scan.entities.add(stemmed)
        else:
            stemmed = lexeme.value
            if lexeme.kind in ("number", "date"):
                scan.numbers.add(stemmed)
                scan.vouched.update(lexeme.covers)
        scan.content.append(stemmed)
        if scope:
            scan.negated_stems.add(stemmed)
            scope -= 1
    return scan


@dataclass(frozen=True)
class ClaimTerms:
    """What a claim asserts, as comparable terms."""

    content: tuple[str, ...]
    entities: frozenset[str]
    numbers: frozenset[str]
    negated: bool
    bigrams: frozenset[tuple[str, str]]
    negated_stems: frozenset[str] = frozenset()
    words: frozenset[str] = frozenset()


@dataclass(frozen=True)
class TextTerms:
    """The comparable terms of a text: content stems (numbers and dates in canonical form among them, a
    date with every coarser form it backs), numbers, whether it has a negation cue, the stems within
    ``NEGATION_SCOPE`` words after one, bigrams, and its lower-case words."""

    stems: frozenset[str]
    numbers: frozenset[str]
    negated: bool
    negated_stems: frozenset[str]
    bigrams: frozenset[tuple[str, str]]
    words: frozenset[str] = frozenset()


def claim_terms(claim: str) -> ClaimTerms:
    """Content stems (unique, in order), entities, numbers and dates, negation and content bigrams of a claim.

    Ordinals ("first", "11th") count as content words but not as numbers the evidence must state."""
    scan = _scan(claim)
    return ClaimTerms(
        content=tuple(dict.fromkeys(scan.content)),
        entities=frozenset(scan.entities),
        numbers=frozenset(scan.numbers),
        negated=scan.negated,
        bigrams=frozenset(zip(scan.content, scan.content[1:], strict=False)),
        negated_stems=frozenset(scan.negated_stems),
        words=frozenset(scan.words),
    )


def text_terms(text: str) -> TextTerms:
    """The comparable terms of an evidence text."""
    scan = _scan(text)
    return TextTerms(frozenset(scan.content) | scan.vouched, frozenset(scan.numbers) | scan.vouched, scan.negated,
                     frozenset(scan.negated_stems), frozenset(zip(scan.content, scan.content[1:], strict=False)),
                     frozenset(scan.words))


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
class Sentence:
    """Sentence ``index`` (0-based) of evidence item ``item``, its text and terms."""

    item: int
    index: int
    text: str
    terms: TextTerms


def evidence_sentences(evidence: Sequence[str]) -> list[list[Sentence]]:
    """Every evidence item split into sentences, each tokenised once."""
    return [[Sentence(item, i, text, text_terms(text)) for i, text in enumerate(split_sentences(chunk))]
            for item, chunk in enumerate(evidence)]


@dataclass(frozen=True)
class Reading:
    """A claim read against all of its evidence (see the module docstring).

    ``found``: the claim's parts some sentence carries (numbers and dates only with context);
    ``cited``: the sentences of the cover, in evidence order, with the parts each was cited for;
    ``recall``: share of the claim's parts found; ``sentence_recall``: the best single sentence's share;
    ``loose_recall``: share found anywhere, context or not; ``contradiction``: why the evidence may
    deny the claim (the first cue found), or None.
    """

    found: frozenset[str]
    cited: tuple[tuple[Sentence, tuple[str, ...]], ...]
    recall: float
    sentence_recall: float
    loose_recall: float
    bigram_recall: float
    missing_numbers: tuple[str, ...]
    missing_entities: tuple[str, ...]
    contradiction: str | None


def _hits(terms: ClaimTerms, sentence: TextTerms) -> set[str]:
    """The claim's parts ``sentence`` carries; numbers and dates only beside another claim word."""
    words = {p for p in terms.content if p not in terms.numbers and p in sentence.stems}
    if not words:
        return set()
    return words | {p for p in terms.content if p in terms.numbers and p in sentence.numbers}


def _contradiction(terms: ClaimTerms, cited: Sequence[tuple[Sentence, tuple[str, ...]]]) -> str | None:
    """The first negation or antonym cue near the parts the cited sentences carry, as a reason, or None."""
    for sentence, parts in cited:
        where = f"sentence {sentence.index + 1} of passage {sentence.item + 1}"
        denied = [p for p in parts if p in sentence.terms.negated_stems and p not in terms.negated_stems]
        if denied:
            return f"a negation before '{denied[0]}' in {where}"
        for word in sorted(terms.words):
            opposite = sorted(a for a in ANTONYMS.get(word, ()) if a in sentence.terms.words and a not in terms.words)
            if opposite and word not in sentence.terms.words:
                return f"'{opposite[0]}' in {where} against the claim's '{word}'"
    if terms.negated and cited and not any(s.terms.negated for s, _parts in cited):
        return "the claim is negated, the cited sentences are not"
    return None


def read_evidence(terms: ClaimTerms, sentences: Sequence[Sentence], max_cited: int = 6) -> Reading:
    """Check every part of the claim against every sentence, and cite a small cover (see ``Reading``)."""
    parts = terms.content
    hits = [_hits(terms, s.terms) for s in sentences]
    anywhere: set[str] = set()
    bigrams: set[tuple[str, str]] = set()
    for sentence in sentences:
        anywhere |= {p for p in parts if p in sentence.terms.stems}
        bigrams |= sentence.terms.bigrams & terms.bigrams
    covered: set[str] = set()
    chosen: dict[int, tuple[str, ...]] = {}
    while len(chosen) < max_cited:
        gains = [(len(h - covered), -i) for i, h in enumerate(hits) if i not in chosen]
        if not gains:
            break
        gain, negative_i = max(gains)
        if gain == 0:
            break
        i = -negative_i
        chosen[i] = tuple(p for p in parts if p in hits[i] and p not in covered)
        covered |= hits[i]
    cited = tuple((sentences[i], chosen[i]) for i in sorted(chosen))
    n = len(parts)

    def share(found: set[str]) -> float:
        return len(found) / n if n else 1.0

    return Reading(
        found=frozenset(covered),
        cited=cited,
        recall=share(covered),
        sentence_recall=max((share(h) for h in hits), default=0.0),
        loose_recall=share(anywhere),
        bigram_recall=len(bigrams) / len(terms.bigrams) if terms.bigrams else 1.0,
        missing_numbers=tuple(sorted(p for p in terms.numbers if p not in covered)),
        missing_entities=tuple(sorted(e for e in terms.entities if e not in covered)),
        contradiction=_contradiction(terms, cited),
    )
