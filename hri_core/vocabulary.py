"""Closed vocabularies of the HRI: claim labels and risk dimensions (paper Tables II and III)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property


class Label(StrEnum):
    """A claim's verdict after comparison with evidence and operational constraints."""

    SUPPORTED = "SUPPORTED"
    PARTIAL = "PARTIAL"
    UNSUPPORTED = "UNSUPPORTED"
    CONTRADICTED = "CONTRADICTED"
    OUTDATED = "OUTDATED"
    OUT_OF_SCOPE = "OUT_OF_SCOPE"
    ACCESS_GAP = "ACCESS_GAP"
    VALIDATED_NEGATIVE_FEEDBACK = "VALIDATED_NEGATIVE_FEEDBACK"


class Dimension(StrEnum):
    """The seven risk dimensions, in the paper's order (which is also the summation order)."""

    F = "F"  # factual inconsistency
    C = "C"  # context deviation
    U = "U"  # unsupportedness
    O = "O"  # obsolescence  # noqa: E741
    S = "S"  # scope mismatch
    P = "P"  # permission gap
    H = "H"  # validated human feedback


LABELS: tuple[Label, ...] = tuple(Label)
DIMENSIONS: tuple[Dimension, ...] = tuple(Dimension)

DIMENSION_NAMES: dict[Dimension, str] = {
    Dimension.F: "Factual inconsistency",
    Dimension.C: "Context deviation",
    Dimension.U: "Unsupportedness",
    Dimension.O: "Obsolescence",
    Dimension.S: "Scope mismatch",
    Dimension.P: "Permission gap",
    Dimension.H: "Validated human feedback",
}

# Bit position of each label and dimension: the register stores claims with bit masks so that
# the bulk scorer can test membership with integer arithmetic instead of unnesting lists.
LABEL_BIT: dict[Label, int] = {label: 1 << i for i, label in enumerate(LABELS)}
DIMENSION_BIT: dict[Dimension, int] = {dim: 1 << i for i, dim in enumerate(DIMENSIONS)}


_LABEL_BIT_OF_TEXT: dict[str, int] = {label.value: bit for label, bit in LABEL_BIT.items()}


def label_mask(labels: Iterable[Label | str]) -> int:
    """Bit mask of a collection of labels (``ValueError`` for one that is no label)."""
    mask = 0
    for label in labels:
        # a label's own text (or the label: a StrEnum equals its text) is looked up directly; anything else is
        # read as ``Label`` reads it, which refuses it. Called for every claim pydantic validates.
        bit = _LABEL_BIT_OF_TEXT.get(label) if isinstance(label, str) else None
        mask |= bit if bit is not None else LABEL_BIT[Label(label)]
    return mask


def dimension_mask(dimensions: Iterable[Dimension | str]) -> int:
    """Bit mask of a collection of dimensions."""
    mask = 0
    for dim in dimensions:
        mask |= DIMENSION_BIT[Dimension(dim)]
    return mask

# --- richer answers (DOMAIN.md section 4): stakes, claim categories, contradiction source ---------

# How costly a wrong answer is for the use case (the CLAIM paper's examples: an internal tool is low,
# a clinical or legal answer high). Mitigation reads it; the score does not.
STAKES: tuple[str, ...] = ("low", "medium", "high", "critical")

# What a claim is about, for the labelling rubric's criticality guide and the authority rules. The
# first seven are seed 003's critical-information categories ("legal, financial, safety, health,
# security, eligibility, or discrimination / bias risk"); contractual and compliance complete the
# paper's "higher operational consequence, such as legal, financial, safety, contractual, or
# compliance-critical claims" (section V); general is everything else.
CATEGORIES: tuple[str, ...] = ("legal", "financial", "safety", "health", "security", "eligibility",
                               "discrimination/bias", "contractual", "compliance", "general")
CRITICAL_INFORMATION_CATEGORIES: tuple[str, ...] = CATEGORIES[:7]
# A claim of at least this criticality v_i is of high criticality (DOMAIN.md: "1 default; 2 medium; >= 3 high:
# legal, financial, safety, contractual, compliance"). A claim is critical information when its category is one of
# the above or its criticality is high (the monitors' critical-information hallucination, register.monitors).
HIGH_CRITICALITY = 3
# The labels that make a claim hallucinated in seed 003's sense, "unsupported by the retrieved references and
# incorrect with respect to the target": UNSUPPORTED (nothing backs it) and CONTRADICTED (the evidence says
# otherwise); the RAGChecker mapping (hri_core/rag_import.py) labels every claim it finds hallucinated with one of them.
HALLUCINATED_LABELS: tuple[Label, ...] = (Label.UNSUPPORTED, Label.CONTRADICTED)

# Where a contradiction was found: in the retrieved/provided context (Table III: "(F), and (C) if
# contradicted by context") or only against the world (a reliable source or the target answer).
CONTRADICTED_BY: tuple[str, ...] = ("context", "world")

# A use case's status in the approved-use-case register (issue 37; the paper's Scope check, Fig. 1, and Table II's
# S dimension, "outside the approved use case"). Only an approved use case is in scope; a proposed one is not yet,
# a suspended or retired one no longer. The register (register/governance) and the scorer (register/scoring, which
# may not import governance) read the words from here.
USE_CASE_PROPOSED, USE_CASE_APPROVED = "proposed", "approved"
USE_CASE_SUSPENDED, USE_CASE_RETIRED = "suspended", "retired"
USE_CASE_STATUSES: tuple[str, ...] = (USE_CASE_PROPOSED, USE_CASE_APPROVED, USE_CASE_SUSPENDED, USE_CASE_RETIRED)

# RAGChecker's entailment verdicts (claim-level checks kept on imported records).
ENTAILMENT_LABELS: tuple[str, ...] = ("Entailment", "Neutral", "Contradiction")

# --- label sets: which labels one claim may carry together ----------------------------------------


@dataclass(frozen=True)
class LabelConflict:
    """Labels that cannot describe one claim together: ``label`` with any of ``excludes``.

    ``reason`` is the named reason every entry point gives when it refuses such a set (an import's
    quarantine, the workbench, the grid, verification, ``python -m hri_core score``); ``yields`` is the
    label that gives way when readings are merged into the most cautious one (the adjudication's
    escalation rule, a validated feedback label added to a claim): dropping it never lowers the
    claim's worst verdict.
    """

    label: Label
    excludes: frozenset[Label]
    reason: str
    yields: Label

    @property
    def mask(self) -> int:
        """Bit mask of ``label`` (``LABEL_BIT``)."""
        return LABEL_BIT[self.label]

    @cached_property
    def excludes_mask(self) -> int:
        """Bit mask of ``excludes`` (computed once: every label set pydantic validates asks for it)."""
        return label_mask(self.excludes)

    def refuses(self, mask: int) -> bool:
        """True when a claim whose labels have the bit mask ``mask`` carries ``label`` and an excluded label."""
        return bool(mask & self.mask) and bool(mask & self.excludes_mask)


LABEL_CONFLICTS: tuple[LabelConflict, ...] = (
    # Table III gives SUPPORTED the contribution 0.00: every other label says the claim is *not* backed as
    # stated. The rubric: "The evidence linked to the claim ... entails it: if the evidence is true, the
    # claim must be true." A claim that is also PARTIAL, UNSUPPORTED, CONTRADICTED, OUTDATED, OUT_OF_SCOPE,
    # ACCESS_GAP or confirmed wrong by validated feedback is not that claim; seed 004 (CLAIM) reads SUPPORTED
    # only when every step passes ("All claims SUPPORTED, authority passes -> Answer").
    LabelConflict(Label.SUPPORTED, frozenset(label for label in Label if label is not Label.SUPPORTED),
                  "SUPPORTED stands alone", yields=Label.SUPPORTED),
    # PARTIAL: "on topic and partly backed by the evidence but says more than it does (an overreach)";
    # UNSUPPORTED: "No evidence available to the system backs the claim" (Table II: "Claim lacks explicit
    # evidence"). Partly backed and backed by nothing cannot both hold; seed 004 makes them two different
    # verdicts of one claim (OVERREACH: a span that does not entail; UNLINKED: no span at all). UNLINKED is
    # the more severe, so PARTIAL yields when readings are merged.
    LabelConflict(Label.PARTIAL, frozenset({Label.UNSUPPORTED}),
                  "PARTIAL and UNSUPPORTED exclude each other (partly backed by the evidence, or backed by none)",
                  yields=Label.PARTIAL),
)
"""The one list of refused label combinations; every other non-empty set of labels is allowed.

Kept on purpose (the paper: "A claim may contribute to more than one risk dimension simultaneously ...
not mutually exclusive in operational settings"): CONTRADICTED with OUTDATED (a claim that follows a
superseded document the current one contradicts), UNSUPPORTED or PARTIAL with ACCESS_GAP (the backing
exists only where the requester may not look: Table II's "Relevant evidence exists but cannot be accessed
or used"), UNSUPPORTED with CONTRADICTED (seed 003's hallucination: "unsupported by the retrieved references
and incorrect with respect to the target"; section VI: "a claim without evidence ... is not necessarily
contradicted", so the two are separate findings), PARTIAL with CONTRADICTED (partly backed by the context,
contradicted by another reliable source), OUT_OF_SCOPE with any error label, and VALIDATED_NEGATIVE_FEEDBACK
with any error label (a reviewer confirmed what the label says).
"""


def label_set_problem(labels: Iterable[Label | str]) -> str | None:
    """Why a claim may not carry ``labels`` together (``LABEL_CONFLICTS``), or None when it may.

    The message names the rule and the labels given, in the vocabulary's order
    ("SUPPORTED stands alone; got SUPPORTED, UNSUPPORTED"). Unknown labels raise ``ValueError``.
    """
    mask = label_mask(labels)
    reasons = [conflict.reason for conflict in LABEL_CONFLICTS if conflict.refuses(mask)]
    if not reasons:
        return None
    given = ", ".join(label.value for label in LABELS if mask & LABEL_BIT[label])
    return f"{'; '.join(reasons)}; got {given}"


def allowed_label_mask(mask: int) -> bool:
    """True when the label set with bit mask ``mask`` is non-empty, known and refused by no conflict."""
    return 0 < mask < (1 << len(LABELS)) and not any(conflict.refuses(mask) for conflict in LABEL_CONFLICTS)


ALLOWED_LABEL_MASKS: frozenset[int] = frozenset(m for m in range(1, 1 << len(LABELS)) if allowed_label_mask(m))


def cautious_label_set(labels: Iterable[Label | str]) -> tuple[Label, ...]:
    """``labels`` (in their order, each once) with every conflict resolved towards the more cautious reading:
    the label a conflict ``yields`` is dropped while the labels it excludes are there (SUPPORTED beside any
    other label, PARTIAL beside UNSUPPORTED). For merging readings, never for checking input: input with a
    refused set is refused, not repaired."""
    chosen = list(dict.fromkeys(Label(label) for label in labels))
    for conflict in LABEL_CONFLICTS:
        if conflict.refuses(label_mask(chosen)):
            chosen = [label for label in chosen if label is not conflict.yields]
    return tuple(chosen)
