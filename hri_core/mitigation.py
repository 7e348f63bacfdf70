"""CLAIM's Mitigation step as versioned data: from per-claim verdicts to answer / revise / ask / abstain /
escalate (seed 004, "M: Mitigation"; DOMAIN.md section 5).

The seed's decision table::

    Situation across claims                              Action    Why
    All claims SUPPORTED, authority passes               Answer    The chain is intact end to end
    Some claims OVERREACH or UNLINKED, but fixable       Revise    Drop or hedge the unsupported claims, re-answer
    Query was ambiguous; evidence is fine                Ask       Clarify before answering; ambiguity drove the gap
    Core claims UNLINKED and not recoverable             Abstain   No evidence exists; say so
    CONTRADICTED or high-stakes + authority fails        Escalate  Hand to a human; the cost of being wrong is high

and its code, which the default policy reproduces exactly on the seed's four verdicts::

    def decide(claims, query_ambiguous, stakes):
        verdicts = [c.label for c in claims]
        if any(v == "CONTRADICTED" for v in verdicts):
            return "ESCALATE" if stakes == "high" else "REVISE"
        core_unsupported = [c for c in claims
                            if c.is_core and c.label in ("UNLINKED", "OVERREACH")]
        if not core_unsupported:
            return "ANSWER"
        if query_ambiguous:
            return "ASK"
        if stakes == "high":
            return "ESCALATE"
        if recoverable(core_unsupported):
            return "REVISE"
        return "ABSTAIN"

``decide`` follows that code step by step and adds the table's authority row, which the code leaves
out: (1) any CONTRADICTED claim -> escalate at high stakes, else revise; (2) any claim failing
Authority (or Scope) at high stakes -> escalate ("high-stakes + authority fails"); (3) no core claim
unsupported -> answer, unless a claim failed Authority, then revise (the table answers only when
"authority passes"); (4) query ambiguous -> ask; (5) high stakes -> escalate; (6) recoverable ->
revise; (7) abstain. Without authority failures the steps are the seed's, in the seed's order.

What the policy fixes as data (``MitigationPolicy``; every default is a provisional design choice):

* ``readings``: how each HRI label reads in CLAIM's terms. SUPPORTED -> SUPPORTED; PARTIAL -> OVERREACH
  at Inference; UNSUPPORTED -> UNLINKED at Link; CONTRADICTED -> CONTRADICTED at Inference (DOMAIN.md's
  mapping, reversed). The other four are not Inference verdicts: OUTDATED is an Authority failure
  ("stale": the seed's "faithful falsehood" on an obsolete source) and ACCESS_GAP one ("not allowed":
  "a leak, not an answer"), both on a claim otherwise SUPPORTED; OUT_OF_SCOPE fails the HRI's Scope
  check (paper Figure 1) and is treated as an authority failure ("outside the approved scope"); a
  VALIDATED_NEGATIVE_FEEDBACK claim was confirmed wrong by a reviewer and reads as CONTRADICTED (at
  "Feedback"). A claim with several labels takes the worst verdict (CONTRADICTED > UNLINKED > OVERREACH
  > SUPPORTED) and every authority failure of its labels, plus those found by the register's authority
  checks (``authority``: claim id -> failure words, ``hri_core.authority.AuthorityResult.failures``).
* ``high_stakes``: the stakes that count as the seed's "high" (high and critical). ``unknown_stakes``:
  what a response without stakes is taken to be (high: unsure fails closed).
* ``unmarked_claims_core``: whether a claim with no ``is_core`` counts as core (yes: fail closed).
  A response with no ``query_ambiguous`` is not ambiguous (asking needs a positive signal).
* ``core_authority_failure_is_unsupported``: a core claim whose source failed Authority has no valid
  link, so it counts among the seed's ``core_unsupported`` (yes).
* Recoverability (the seed's ``recoverable``, which it leaves undefined): a core unsupported claim is
  recoverable when its verdict is in ``recoverable_verdicts`` (OVERREACH: a span exists, hedge the claim
  to it), or, with ``recover_with_linked_evidence``, when it is UNLINKED yet evidence is linked to it
  (it carries a span, or its source id is the id or source of a retrieved chunk); a claim's authority
  failures are recoverable only if all are in ``recoverable_authority_failures`` (stale: re-source it
  from the current version; "not allowed" is not: the evidence may not be used, so say so). The
  response is recoverable when ``recoverable_when`` = all (default) / any of its core unsupported
  claims are.
* ``non_core_unsupported_action``: the seed's code answers when only non-core claims are unsupported
  (default "answer"); the table's "Some claims ... but fixable -> Revise" reading is "revise".
* ``no_claims_action``: a response without claims was never checked (escalate; the seed's code would
  answer an empty list, which would release an unchecked answer).

Each decision carries ONE sentence naming the step that failed, e.g. "escalate: claim 3 CONTRADICTED
at Inference, high stakes, source failed Authority as stale".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .errors import FieldProblem, HRIError
from .fingerprint import fingerprint as json_fingerprint
from .models import Response, problems_from_validation
from .vocabulary import LABELS, Label

__all__ = [
    "MITIGATION_ACTIONS", "RULES", "VERDICTS", "AuthorityFailure", "ClaimReading", "LabelReading",
    "DecisionStep", "MitigationDecision", "MitigationPolicy", "MitigationPolicyError", "decide", "decide_readings",
    "default_mitigation_policy",
    "mitigation_policy_from_dict", "read_claims",
]

Verdict = Literal["SUPPORTED", "OVERREACH", "UNLINKED", "CONTRADICTED"]
Step = Literal["Claim", "Link", "Authority", "Inference", "Scope", "Feedback"]
MitigationAction = Literal["answer", "revise", "ask", "abstain", "escalate"]
StakesLevel = Literal["low", "medium", "high", "critical"]

MITIGATION_ACTIONS: tuple[str, ...] = ("answer", "revise", "ask", "abstain", "escalate")
VERDICTS: tuple[str, ...] = ("SUPPORTED", "OVERREACH", "UNLINKED", "CONTRADICTED")  # in increasing severity
_VERDICT_RANK = {verdict: rank for rank, verdict in enumerate(VERDICTS)}
_UNSUPPORTED: tuple[str, ...] = ("UNLINKED", "OVERREACH")  # the seed's core_unsupported verdicts
Rule = Literal["no-claims", "contradicted", "authority-high-stakes", "answer", "authority", "non-core-unsupported",
               "ask", "escalate-high-stakes", "revise-recoverable", "abstain"]
RULES: tuple[str, ...] = get_args(Rule)  # the rows of the decision, in order


class MitigationPolicyError(HRIError):
    """A mitigation policy is invalid."""

    title = "Invalid mitigation policy"


class LabelReading(BaseModel):
    """How one HRI label reads in CLAIM's terms: its verdict, the step that failed, and whether it is an
    authority failure (``authority_failure``: the failure word, e.g. "stale")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    verdict: Verdict
    step: Step | None = None
    authority_failure: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> LabelReading:
        failed = self.verdict != "SUPPORTED" or self.authority_failure is not None
        if failed and self.step is None:
            raise ValueError("step: a failing reading must name the CLAIM step that failed")
        if not failed and self.step is not None:
            raise ValueError("step: a SUPPORTED reading without an authority failure fails no step")
        return self


def _default_readings() -> dict[Label, LabelReading]:
    return {
        Label.SUPPORTED: LabelReading(verdict="SUPPORTED"),
        Label.PARTIAL: LabelReading(verdict="OVERREACH", step="Inference"),
        Label.UNSUPPORTED: LabelReading(verdict="UNLINKED", step="Link"),
        Label.CONTRADICTED: LabelReading(verdict="CONTRADICTED", step="Inference"),
        Label.OUTDATED: LabelReading(verdict="SUPPORTED", step="Authority", authority_failure="stale"),
        Label.ACCESS_GAP: LabelReading(verdict="SUPPORTED", step="Authority", authority_failure="not allowed"),
        Label.OUT_OF_SCOPE: LabelReading(verdict="SUPPORTED", step="Scope",
                                         authority_failure="outside the approved scope"),
        Label.VALIDATED_NEGATIVE_FEEDBACK: LabelReading(verdict="CONTRADICTED", step="Feedback"),
    }


class MitigationPolicy(BaseModel):
    """The versioned parameters of CLAIM's Mitigation step (module docstring: what each one means)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "claim-seed"
    version: int = Field(default=1, ge=1)
    readings: dict[Label, LabelReading] = Field(default_factory=_default_readings)
    high_stakes: tuple[StakesLevel, ...] = ("high", "critical")
    unknown_stakes: StakesLevel = "high"
    unmarked_claims_core: bool = True
    core_authority_failure_is_unsupported: bool = True
    escalate_high_stakes_authority_failures: bool = True
    authority_failure_action: MitigationAction = "revise"
    non_core_unsupported_action: MitigationAction = "answer"
    recoverable_verdicts: tuple[Literal["OVERREACH", "UNLINKED"], ...] = ("OVERREACH",)
    recover_with_linked_evidence: bool = True
    recoverable_authority_failures: tuple[str, ...] = ("stale",)
    recoverable_when: Literal["all", "any"] = "all"
    no_claims_action: MitigationAction = "escalate"

    @model_validator(mode="after")
    def _complete(self) -> MitigationPolicy:
        missing = [label.value for label in LABELS if label not in self.readings]
        if missing:
            raise ValueError(f"readings: missing label(s) {', '.join(missing)}")
        return self

    def fingerprint(self) -> str:
        """SHA-256 of the canonical JSON of the parameters (name and version excluded)."""
        payload = self.model_dump(mode="json", exclude={"name", "version"})
        return json_fingerprint(payload)


def default_mitigation_policy() -> MitigationPolicy:
    """Version 1: the seed's ``decide`` plus its table's authority row (module docstring)."""
    return MitigationPolicy()


_DEFAULT_POLICY = default_mitigation_policy()  # what ``decide`` uses when given no policy (never handed out)


def mitigation_policy_from_dict(data: Any) -> MitigationPolicy:
    """A policy from a (possibly partial) JSON mapping over the defaults; ``readings`` merge label by label.

    Raises ``MitigationPolicyError`` naming every bad field (``readings.PARTIAL.verdict``, ``high_stakes[0]``).
    """
    if not isinstance(data, dict):
        raise MitigationPolicyError(f"a mitigation policy must be a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - set(MitigationPolicy.model_fields))
    if unknown:
        raise MitigationPolicyError([FieldProblem(name, "unknown mitigation policy field") for name in unknown])
    merged = default_mitigation_policy().model_dump(mode="json")
    for key, value in data.items():
        if key == "readings" and isinstance(value, dict):
            merged["readings"] = {**merged["readings"], **value}
        else:
            merged[key] = value
    try:
        return MitigationPolicy.model_validate(merged)
    except ValidationError as error:
        raise MitigationPolicyError(problems_from_validation(error)) from error


# --- reading the claims --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AuthorityFailure:
    """One failed governance check of a claim: the step (Authority or Scope) and the failure word."""

    step: str
    failure: str

    def phrase(self, position: int | None = None) -> str:
        """``claim 2's source failed Authority as stale`` (or without the claim: ``source failed ...``)."""
        if self.step == "Authority":
            owner = f"claim {position}'s source" if position is not None else "source"
            return f"{owner} failed Authority as {self.failure}"
        owner = f"claim {position} " if position is not None else ""
        return f"{owner}failed {self.step} as {self.failure}"


@dataclass(frozen=True, slots=True)
class ClaimReading:
    """One claim in CLAIM's terms: its worst verdict, the step that failed, core or not, and what could
    recover it."""

    claim_id: str
    position: int  # 1-based, as sentences name it ("claim 3")
    verdict: Verdict
    step: str | None
    is_core: bool
    authority_failures: tuple[AuthorityFailure, ...]
    linked_evidence: bool  # a span, or a source that is one of the retrieved chunks

    @property
    def unsupported(self) -> bool:
        """The seed's ``c.label in ("UNLINKED", "OVERREACH")``."""
        return self.verdict in _UNSUPPORTED

    def verdict_phrase(self) -> str:
        """``CONTRADICTED at Inference`` / ``CONTRADICTED by validated feedback``."""
        if self.step == "Feedback":
            return f"{self.verdict} by validated feedback"
        return f"{self.verdict} at {self.step}" if self.step else self.verdict


def _linked_evidence(response: Response, span: str | None, source_id: str | None) -> bool:
    if span is not None and span.strip():
        return True
    if source_id is None:
        return False
    return any(source_id in (chunk.id, chunk.source_id) for chunk in response.retrieved_context or ())


def read_claims(response: Response, policy: MitigationPolicy,
                authority: Mapping[str, Iterable[str]] | None = None) -> tuple[ClaimReading, ...]:
    """Each claim of the response in CLAIM's terms (policy readings of its labels plus register checks)."""
    readings = []
    for position, claim in enumerate(response.claims, start=1):
        claim_id = claim.claim_id or f"{response.response_id}-{position}"
        label_readings = [policy.readings[label] for label in claim.labels]
        worst = max(label_readings, key=lambda r: _VERDICT_RANK[r.verdict])  # first of the worst on a tie
        failures: dict[tuple[str, str], None] = {}
        for reading in label_readings:
            if reading.authority_failure is not None:
                failures[(reading.step or "Authority", reading.authority_failure)] = None
        for failure in (authority or {}).get(claim_id, ()):
            failures[("Authority", failure)] = None
        readings.append(ClaimReading(
            claim_id=claim_id, position=position, verdict=worst.verdict,
            step=worst.step if worst.verdict != "SUPPORTED" else None,
            is_core=policy.unmarked_claims_core if claim.is_core is None else claim.is_core,
            authority_failures=tuple(AuthorityFailure(step=s, failure=f) for s, f in failures),
            linked_evidence=_linked_evidence(response, claim.span, claim.source_id),
        ))
    return tuple(readings)


# --- the decision ----------------------------------------------------------------------------------------


class MitigationDecision(BaseModel):
    """The action for a whole response, the rule of the decision table that chose it, and one sentence."""

    model_config = ConfigDict(frozen=True)

    response_id: str
    action: MitigationAction
    rule: Rule
    reason: str
    claim_id: str | None  # the claim the sentence names
    stakes: str  # the stakes the decision used
    stakes_assumed: bool  # the response had no stakes: ``unknown_stakes`` was used
    policy_name: str
    policy_version: int
    claims: tuple[ClaimReading, ...]


def _more(items: Sequence[Any], kind: str) -> str:
    """`` (and 2 more contradicted claims)`` when the sentence names only the first of several."""
    extra = len(items) - 1
    return f" (and {extra} more {kind} claim{'s' if extra > 1 else ''})" if extra > 0 else ""


def _claim_recoverable(reading: ClaimReading, policy: MitigationPolicy) -> bool:
    if reading.unsupported:
        verdict_ok = (reading.verdict in policy.recoverable_verdicts
                      or (reading.verdict == "UNLINKED" and policy.recover_with_linked_evidence
                          and reading.linked_evidence))
    else:
        verdict_ok = True  # counted only for its authority failures
    return verdict_ok and all(f.failure in policy.recoverable_authority_failures for f in reading.authority_failures)


def _why_recoverable(reading: ClaimReading) -> str:
    if reading.verdict == "OVERREACH":
        return "hedge it to its span"
    if reading.verdict == "UNLINKED":
        return "evidence is linked to it"
    return "re-source it from a current, allowed source"


def _why_not(reading: ClaimReading, policy: MitigationPolicy) -> str:
    blocking = [f for f in reading.authority_failures if f.failure not in policy.recoverable_authority_failures]
    if blocking:
        return f"revising cannot undo a source that is {blocking[0].failure}"
    return "no evidence is linked to it"


def _core_phrase(reading: ClaimReading) -> str:
    if reading.unsupported:
        return f"core claim {reading.position} {reading.verdict_phrase()}"
    return "core " + reading.authority_failures[0].phrase(reading.position)


def decide(response: Response, policy: MitigationPolicy | None = None, *,
           authority: Mapping[str, Iterable[str]] | None = None) -> MitigationDecision:
    """The Mitigation action for ``response`` under ``policy`` (default: version 1).

    ``authority`` maps claim ids to the failure words of the register's authority checks
    (``AuthorityResult.failures``: "stale", "not allowed", "insufficient authority", "unknown source",
    ...); labels such as OUTDATED already count as failures on their own.
    """
    policy = policy or _DEFAULT_POLICY
    claims = read_claims(response, policy, authority)
    step = decide_readings(claims, policy, stakes=response.stakes, query_ambiguous=response.query_ambiguous)
    # every value is already validated (the policy's, the response's): no second validation
    return MitigationDecision.model_construct(
        response_id=response.response_id, action=step.action, rule=step.rule, reason=step.reason,
        claim_id=step.claim_id, stakes=response.stakes or policy.unknown_stakes,
        stakes_assumed=response.stakes is None, policy_name=policy.name, policy_version=policy.version,
        claims=claims)


class DecisionStep(NamedTuple):
    """The row of the decision table that decided (``decide_readings``): action, rule, the one sentence (starting
    with the action) and the claim it names."""

    action: MitigationAction
    rule: Rule
    reason: str
    claim_id: str | None


def decide_readings(claims: tuple[ClaimReading, ...], policy: MitigationPolicy, *, stakes: str | None,
                    query_ambiguous: bool | None) -> DecisionStep:
    """``decide``'s steps on claims already read (``read_claims``), in the decision table's order.

    For callers that decide many responses made of the same few claims (the register's bulk decision reads each
    distinct claim once); ``stakes`` and ``query_ambiguous`` are the response's, already validated.
    """
    given_stakes = stakes
    stakes = given_stakes or policy.unknown_stakes
    high = stakes in policy.high_stakes
    stakes_text = f"{stakes} stakes" + (" (assumed: the response gives none)" if given_stakes is None else "")

    def out(action: MitigationAction, rule: Rule, sentence: str, claim: ClaimReading | None = None) -> DecisionStep:
        return DecisionStep(action, rule, f"{action}: {sentence}", claim.claim_id if claim else None)

    if not claims:
        return out(policy.no_claims_action, "no-claims",
                   "the answer has no claims, so no step of CLAIM could be checked")

    # 1. the seed: any CONTRADICTED -> escalate at high stakes, else revise
    contradicted = [c for c in claims if c.verdict == "CONTRADICTED"]
    if contradicted:
        first = contradicted[0]
        sentence = (f"claim {first.position} {first.verdict_phrase()}{_more(contradicted, 'contradicted')}, "
                    f"{stakes_text}")
        if first.authority_failures:
            sentence += ", " + ", ".join(f.phrase() for f in first.authority_failures)
        return out("escalate" if high else "revise", "contradicted", sentence, first)

    # 2. the table: high stakes + authority fails -> escalate
    failed_authority = [c for c in claims if c.authority_failures]
    if failed_authority and high and policy.escalate_high_stakes_authority_failures:
        first = failed_authority[0]
        return out("escalate", "authority-high-stakes",
                   f"{first.authority_failures[0].phrase(first.position)}{_more(failed_authority, 'failing')}, "
                   f"{stakes_text}", first)

    # 3. the seed: no core claim unsupported -> answer (the table: only if authority passes)
    core_unsupported = [c for c in claims if c.is_core and (
        c.unsupported or (policy.core_authority_failure_is_unsupported and c.authority_failures))]
    if not core_unsupported:
        if failed_authority:
            first = failed_authority[0]
            return out(policy.authority_failure_action, "authority",
                       f"{first.authority_failures[0].phrase(first.position)}{_more(failed_authority, 'failing')}, "
                       f"{stakes_text}: drop or re-source it",
                       first)
        unsupported = [c for c in claims if c.unsupported]
        if unsupported:
            first = unsupported[0]
            return out(policy.non_core_unsupported_action, "non-core-unsupported",
                       f"only non-core claims failed (claim {first.position} {first.verdict_phrase()}"
                       f"{_more(unsupported, 'non-core')}); every core claim is SUPPORTED", first)
        return out("answer", "answer", f"every claim SUPPORTED ({len(claims)} checked) and none failed Authority")

    first = core_unsupported[0]
    more = _more(core_unsupported, "core")
    # 4-5. the seed: ambiguous query -> ask; high stakes -> escalate
    if query_ambiguous:
        return out("ask", "ask", f"the query is ambiguous and {_core_phrase(first)}{more}", first)
    if high:
        return out("escalate", "escalate-high-stakes", f"{_core_phrase(first)}{more}, {stakes_text}", first)
    # 6-7. the seed: recoverable -> revise, else abstain
    verdicts = [_claim_recoverable(c, policy) for c in core_unsupported]
    if all(verdicts) if policy.recoverable_when == "all" else any(verdicts):
        chosen = core_unsupported[verdicts.index(True)]
        return out("revise", "revise-recoverable",
                   f"{_core_phrase(chosen)}{more}, {stakes_text}, recoverable: {_why_recoverable(chosen)}", chosen)
    stuck = core_unsupported[verdicts.index(False)]
    return out("abstain", "abstain",
               f"{_core_phrase(stuck)}{more}, {stakes_text}, not recoverable: {_why_not(stuck, policy)}", stuck)

