"""Claim highlighting: where each claim sits in the answer, and the answer drawn with its claims marked.

Called by the response detail page. Claims are often not copied word for word from the answer (an
annotator or a claim extractor rewrites them: "Brett Kavanaugh is a female U.S. Supreme Court justice."
for the answer's line "4. Brett Kavanaugh - appointed by ..."), so each claim is aligned tolerantly, in
this order, and the first that finds it wins:

1. ``exact``: the claim's text, ignoring case and surrounding whitespace;
2. ``normalised``: the same words, ignoring case, whitespace and punctuation (``O'Connor`` = ``O’Connor``);
3. ``sentence``: the answer's sentence (or list line) sharing the most *distinctive* words with the claim,
   words weighted by how few of the claims and sentences use them (so the subject's name counts more than
   "Supreme Court", which every claim repeats); taken only when it covers enough of the claim's weight.

Several claims may land on the same words (a line that states two claims): there the mark takes the
worst label. Colours are the Okabe-Ito palette (distinguishable with the common colour-vision
deficiencies), and every mark also carries its claim numbers, so colour is never the only cue. Pure
functions: no Streamlit, no database; the HTML escapes every character of the answer (``ui.framework.text``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hri_core.vocabulary import Label
from ui.framework.text import escape_html

__all__ = ["LABEL_COLORS", "LABEL_SEVERITY", "OTHER_COLOR", "Alignment", "Piece", "align_claims", "answer_html",
           "highlight_pieces", "highlight_segments", "label_color", "legend_html", "worst_label"]

# Okabe & Ito (2008), "Color Universal Design": eight colours told apart with protanopia, deuteranopia
# and tritanopia. The marks use them as a strong underline and a 35 % tint behind the text.
LABEL_COLORS: dict[str, str] = {
    Label.SUPPORTED.value: "#009E73",                    # bluish green
    Label.PARTIAL.value: "#F0E442",                      # yellow
    Label.UNSUPPORTED.value: "#E69F00",                  # orange
    Label.CONTRADICTED.value: "#D55E00",                 # vermillion
    Label.OUTDATED.value: "#CC79A7",                     # reddish purple
    Label.OUT_OF_SCOPE.value: "#56B4E9",                 # sky blue
    Label.ACCESS_GAP.value: "#999999",                   # grey
    Label.VALIDATED_NEGATIVE_FEEDBACK.value: "#0072B2",  # blue
}
OTHER_COLOR = "#BDBDBD"

# Tie-break order of ``worst_label``, worst first. Only breaks ties: the profile's contributions decide.
LABEL_SEVERITY: tuple[str, ...] = (
    Label.CONTRADICTED.value,
    Label.VALIDATED_NEGATIVE_FEEDBACK.value,
    Label.UNSUPPORTED.value,
    Label.OUTDATED.value,
    Label.OUT_OF_SCOPE.value,
    Label.ACCESS_GAP.value,
    Label.PARTIAL.value,
    Label.SUPPORTED.value,
)

# A sentence is taken for a claim when the words they share carry at least this share of the claim's
# word weight, and they share at least two words (one word is a coincidence, e.g. a name said twice).
MIN_SENTENCE_COVERAGE = 0.35
MIN_SHARED_WORDS = 2
_STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "for", "from", "had", "has", "have", "he",
    "her", "his", "i", "in", "is", "it", "its", "of", "on", "or", "our", "she", "so", "that", "the", "their",
    "them", "there", "they", "this", "to", "was", "we", "were", "what", "when", "which", "who", "will", "with",
    "you", "your", "not", "no"))
_WORD = re.compile(r"[^\W_]+")
_LINE = re.compile(r"[^\r\n]+")
# a sentence ends at . ! or ? followed by space and a capital letter, a digit or a quote
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'“‘(\[])")


def _text(value: Any) -> str:
    return str(getattr(value, "value", value))


def label_color(label: Any) -> str:
    """Colour of an HRI label (``OTHER_COLOR`` for ``None`` or an unknown label)."""
    if label is None:
        return OTHER_COLOR
    return LABEL_COLORS.get(_text(label), OTHER_COLOR)


def _severity_rank(label: str) -> int:
    return LABEL_SEVERITY.index(label) if label in LABEL_SEVERITY else len(LABEL_SEVERITY)


def worst_label(labels: Iterable[Any], contributions: Mapping[Any, float]) -> str | None:
    """The label of ``labels`` with the highest contribution (the profile's ``contributions``; a label
    missing there counts 0); ties go to the more severe label of ``LABEL_SEVERITY``. ``None`` if empty.
    """
    values = {_text(k): float(v) for k, v in contributions.items()}
    names = list(dict.fromkeys(_text(label) for label in labels))
    if not names:
        return None
    return min(names, key=lambda name: (-values.get(name, 0.0), _severity_rank(name)))


# --- alignment --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Alignment:
    """Where a claim sits in the answer: ``answer[start:end]``, found by ``method``."""

    start: int
    end: int
    method: str  # "exact", "normalised" or "sentence"


def _words(text: str) -> list[tuple[str, int, int]]:
    """(casefolded word, start, end) of every run of letters and digits."""
    return [(m.group(0).casefold(), m.start(), m.end()) for m in _WORD.finditer(text)]


def _stem(word: str) -> str:
    """A light plural fold ("justices" ~ "justice"): enough to match a claim to its sentence."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _overlaps(start: int, end: int, taken: Sequence[tuple[int, int]]) -> bool:
    return any(start < e and s < end for s, e in taken)


def _pick(candidates: list[tuple[int, int]], taken: Sequence[tuple[int, int]]) -> tuple[int, int] | None:
    """The first candidate no earlier claim took, else the first (two claims may share words)."""
    for start, end in candidates:
        if not _overlaps(start, end, taken):
            return start, end
    return candidates[0] if candidates else None


def _exact(answer: str, needle: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(re.escape(needle), answer, re.IGNORECASE)]


def _normalised(words: list[tuple[str, int, int]], needle: str) -> list[tuple[int, int]]:
    target = [w for w, _, _ in _words(needle)]
    if not target:
        return []
    n = len(target)
    tokens = [w for w, _, _ in words]
    return [(words[i][1], words[i + n - 1][2]) for i in range(len(tokens) - n + 1) if tokens[i:i + n] == target]


def _sentences(answer: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence: lines first (list items are lines), then sentence ends; a piece with
    no letters ("1.") joins the next."""
    spans: list[tuple[int, int]] = []
    for line in _LINE.finditer(answer):
        start = line.start()
        pieces = []
        for boundary in _SENTENCE_END.finditer(line.group(0)):
            pieces.append((start, line.start() + boundary.start()))
            start = line.start() + boundary.end()
        pieces.append((start, line.end()))
        merged: list[tuple[int, int]] = []
        carry: int | None = None
        for s, e in pieces:
            if not re.search(r"[^\W\d_]", answer[s:e]):
                carry = s if carry is None else carry
                continue
            merged.append((carry if carry is not None else s, e))
            carry = None
        if carry is not None:
            merged.append((carry, pieces[-1][1]))
        spans += [(s + len(answer[s:e]) - len(answer[s:e].lstrip()), s + len(answer[s:e].rstrip()))
                  for s, e in merged if answer[s:e].strip()]
    return spans


def _content(text: str) -> set[str]:
    return {_stem(w) for w, _, _ in _words(text) if w not in _STOPWORDS}


def _best_sentences(answer: str, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
    """For each claim text: the sentences that pass ``MIN_SENTENCE_COVERAGE``, best first."""
    sentences = _sentences(answer)
    sentence_words = [_content(answer[s:e]) for s, e in sentences]
    claim_words = [_content(t) for t in texts]
    documents = sentence_words + claim_words
    df: dict[str, int] = {}
    for words in documents:
        for w in words:
            df[w] = df.get(w, 0) + 1
    idf = {w: math.log((len(documents) + 1) / (n + 0.5)) for w, n in df.items()}
    out = []
    for words in claim_words:
        total = sum(idf[w] for w in words)
        scored = []
        for span, have in zip(sentences, sentence_words, strict=True):
            shared = words & have
            coverage = sum(idf[w] for w in shared) / total if total > 0 else 0.0
            if len(shared) >= min(MIN_SHARED_WORDS, len(words)) and coverage >= MIN_SENTENCE_COVERAGE:
                scored.append((-coverage, span))
        out.append([span for _, span in sorted(scored)])
    return out


def align_claims(answer: str, texts: Sequence[str | None]) -> list[Alignment | None]:
    """Where each claim text sits in ``answer`` (``None``: not found, or no text). Claims are placed in
    order; a claim prefers words no earlier claim took, but may share them."""
    words = _words(answer)
    best = _best_sentences(answer, [t or "" for t in texts])
    taken: list[tuple[int, int]] = []
    out: list[Alignment | None] = []
    for text, sentences in zip(texts, best, strict=True):
        needle = (text or "").strip()
        found: Alignment | None = None
        if needle:
            for method, candidates in (("exact", _exact(answer, needle)), ("normalised", _normalised(words, needle)),
                                       ("sentence", sentences)):
                span = _pick(candidates, taken)
                if span is not None:
                    found = Alignment(span[0], span[1], method)
                    break
        if found is not None:
            taken.append((found.start, found.end))
        out.append(found)
    return out


# --- segments and HTML ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Piece:
    """A stretch of the answer: its text, the worst label of the claims on it (None: no claim), the claims
    on it (1-based positions) and the claims whose mark ends with it."""

    text: str
    label: str | None
    claims: tuple[int, ...] = ()
    ends: tuple[int, ...] = ()


def highlight_pieces(answer: str, claims: Sequence[Mapping[str, Any]],
                     contributions: Mapping[Any, float] | None = None) -> list[Piece]:
    """Split ``answer`` into pieces at every claim boundary; joined, the texts give ``answer`` back exactly.

    ``claims`` are ``{"text", "labels"}`` in the order of the claims table; a claim with no labels or no
    text is not marked. A piece under several claims takes their worst label (``worst_label`` under
    ``contributions``, severity order alone when none are given).
    """
    labels = [worst_label(c.get("labels") or (), contributions or {}) for c in claims]
    texts = [str(c.get("text") or "") if label is not None else "" for c, label in zip(claims, labels, strict=True)]
    spans = [(a.start, a.end, i + 1) for i, a in enumerate(align_claims(answer, texts)) if a is not None]
    cuts = sorted({0, len(answer), *(s for s, _, _ in spans), *(e for _, e, _ in spans)})
    pieces: list[Piece] = []
    for start, end in zip(cuts, cuts[1:], strict=False):
        if start == end:
            continue
        on = tuple(n for s, e, n in spans if s <= start and end <= e)
        label = worst_label([labels[n - 1] for n in on], contributions or {}) if on else None
        ends = tuple(n for s, e, n in spans if e == end)
        if pieces and not on and not pieces[-1].claims:  # merge unmarked stretches
            pieces[-1] = Piece(pieces[-1].text + answer[start:end], None)
        else:
            pieces.append(Piece(answer[start:end], label, on, ends))
    return pieces


def highlight_segments(answer: str, claims: Sequence[Mapping[str, Any]],
                       contributions: Mapping[Any, float] | None = None) -> list[tuple[str, str | None]]:
    """``highlight_pieces`` as ``(text, label)`` pairs (label None where no claim is)."""
    return [(p.text, p.label) for p in highlight_pieces(answer, claims, contributions)]


def _mark(piece: Piece) -> str:
    color = label_color(piece.label)
    title = escape_html(f"claim {', '.join(map(str, piece.claims))}: {piece.label}")
    return (f'<mark title="{title}" data-label="{escape_html(piece.label)}" style="background: {color}59; '
            f'color: inherit; border-bottom: 3px solid {color}; padding: 0 1px; border-radius: 2px">'
            f"{escape_html(piece.text)}</mark>")


def _claim_numbers(piece: Piece) -> str:
    numbers = ",".join(str(n) for n in piece.ends)
    return (f'<sup data-claims="{numbers}" style="font-size: 0.7em; font-weight: 600; color: inherit; '
            f'padding: 0 1px">{numbers}</sup>')


def answer_html(pieces: Sequence[Piece]) -> str:
    """The answer as HTML: every character escaped, line breaks kept (``pre-wrap``), each claim marked in
    its label's colour with its claim number(s) after it."""
    body = []
    for piece in pieces:
        if piece.claims:
            body.append(_mark(piece))
            if piece.ends:
                body.append(_claim_numbers(piece))
        else:
            body.append(escape_html(piece.text))
    return ('<div class="hri-answer" style="white-space: pre-wrap; line-height: 1.8; overflow-wrap: anywhere">'
            + "".join(body).replace("\r\n", "\n").replace("\r", "\n") + "</div>")


def legend_html(labels: Iterable[str]) -> str:
    """A legend of the label colours used, in severity order."""
    present = sorted(set(labels), key=_severity_rank)
    swatches = "".join(
        f'<span style="display: inline-flex; align-items: center; margin-right: 1em; white-space: nowrap">'
        f'<span style="display: inline-block; width: 1.6em; height: 0.9em; margin-right: 0.35em; '
        f'background: {label_color(label)}59; border-bottom: 3px solid {label_color(label)}"></span>'
        f"{escape_html(label)}</span>" for label in present)
    return (f'<div class="hri-legend" style="font-size: 0.85em; opacity: 0.85">{swatches}'
            "<span>· superscripts: claim numbers in the table below</span></div>")
