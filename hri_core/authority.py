"""CLAIM's Authority step, the pure part: is a claim's source allowed, current and authoritative?

Seed 004 ("A: Authority: a real source can still be the wrong source") asks three questions of the
linked source -- "Allowed? Is this user permitted to see this source?", "Current? Is the source the
current version, or has it been superseded?", "Authoritative? Is this source the right kind of source
for this claim?" -- and checks them as::

    allowed=source_index.user_can_read(claim.source_id),
    current=not src.superseded and (src.valid_until is None or src.valid_until > now()),
    authoritative=src.authority_tier <= source_index.required_tier(claim.claim_type)

Here, for one claim with a ``source_id`` and the source register's row for it (``SourceRecord``):

* allowed: the source's ``restricted_to`` roles against the use case's requester roles. No
  restriction: allowed. Restricted and the requesters unknown (None): undecided (None), never allowed.
* current: not superseded (``superseded_by`` empty) and not expired at the answer's time ``at``
  (the response's ``created_at``, else the scoring time). ``valid_until`` is a DATE and is read as
  *inclusive* in UTC: a source valid until 2026-03-31 is current for an answer given at any moment of
  31 March UTC and stale from 2026-04-01T00:00Z. ``AuthorityRules.valid_until_inclusive = False`` makes
  the date the first day it is no longer valid (the seed's strict ``valid_until > now()`` on dates).
  A superseded source is stale whenever the answer was given: the register does not record when it
  was superseded, and the check runs "at the response's scoring time" (issue 12).
* authoritative: the rule of the claim's category (``AuthorityRules.rules``; ``uncategorised`` for a
  claim without one or a category without a rule) gives the largest acceptable ``authority_tier``
  (1 strongest; the seed's ``authority_tier <= required_tier``) and/or the acceptable source types;
  when it gives both, both must hold. A source without the tier or type the rule reads: undecided.

An unknown ``source_id`` (not in the register) is flagged ``unknown_source`` and every check is
undecided. For a claim labelled SUPPORTED, each failure becomes a *proposed* label with its reason --
ACCESS_GAP when not allowed, OUTDATED when not current, "needs review" when authority is insufficient
or any check is undecided -- never a change of the claim's labels (a label the claim already carries
is not proposed again). ``AuthorityResult.failures`` names the failures in the words the mitigation
policy reads ("not allowed", "stale", "insufficient authority", "access unknown", "authority unknown",
"unknown source").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, datetime, time, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .errors import HRIError
from .fingerprint import fingerprint as json_fingerprint
from .models import Claim, Response, ensure_utc, problems_from_validation
from .vocabulary import CATEGORIES, Label

__all__ = [
    "FAILURES", "AuthorityCheck", "AuthorityResult", "AuthorityRule", "AuthorityRules", "AuthorityRulesError",
    "Proposal", "SourceRecord", "authority_rules_from_dict", "check_claim", "check_response",
    "default_authority_rules", "expiry",
]

NOT_ALLOWED, STALE, INSUFFICIENT = "not allowed", "stale", "insufficient authority"
ACCESS_UNKNOWN, AUTHORITY_UNKNOWN, UNKNOWN_SOURCE = "access unknown", "authority unknown", "unknown source"
FAILURES: tuple[str, ...] = (NOT_ALLOWED, STALE, INSUFFICIENT, ACCESS_UNKNOWN, AUTHORITY_UNKNOWN, UNKNOWN_SOURCE)
NEEDS_REVIEW: Literal["needs review"] = "needs review"


class AuthorityRulesError(HRIError):
    """An authority rule table is invalid."""

    title = "Invalid authority rules"


class SourceRecord(BaseModel):
    """The fields of a source register row that the Authority step reads."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    source_id: str = Field(min_length=1)
    source_type: str | None = None
    authority_tier: int | None = Field(default=None, ge=1)
    valid_until: date | None = None
    superseded_by: str | None = None
    restricted_to: tuple[str, ...] = ()

    @field_validator("restricted_to", mode="before")
    @classmethod
    def _roles(cls, value: Any) -> Any:
        return () if value is None else value

    @field_validator("superseded_by", mode="before")
    @classmethod
    def _blank(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value


class AuthorityRule(BaseModel):
    """What makes a source authoritative for one kind of claim: a largest acceptable tier, acceptable
    source types, or both (both must then hold)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_tier: int | None = Field(default=None, ge=1)
    source_types: tuple[str, ...] | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _says_something(self) -> AuthorityRule:
        if self.max_tier is None and not self.source_types:
            raise ValueError("max_tier: a rule needs max_tier, source_types, or both")
        return self

    def describe(self) -> str:
        parts = []
        if self.max_tier is not None:
            parts.append(f"tier <= {self.max_tier}")
        if self.source_types:
            parts.append("type in (" + ", ".join(self.source_types) + ")")
        return " and ".join(parts)


class AuthorityRules(BaseModel):
    """The versioned table: claim category (or claim type) -> ``AuthorityRule``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "paper-provisional"
    version: int = Field(default=1, ge=1)
    rules: dict[str, AuthorityRule]
    uncategorised: AuthorityRule
    valid_until_inclusive: bool = True

    def rule_for(self, category: str | None) -> tuple[str, AuthorityRule]:
        """The rule of a category and the name it is known by ("uncategorised" for the fallback)."""
        if category is not None and category in self.rules:
            return category, self.rules[category]
        return "uncategorised", self.uncategorised

    def fingerprint(self) -> str:
        """SHA-256 of the canonical JSON of the table (name and version excluded)."""
        payload = self.model_dump(mode="json", exclude={"name", "version"})
        return json_fingerprint(payload)


# Provisional design parameters (tiers 1 strongest .. 5, as the source register records them): the
# critical-information categories need a tier 1-2 source, general claims accept up to tier 4, and a
# claim nobody categorised sits between (3).
def default_authority_rules() -> AuthorityRules:
    """Version 1 of the authority rules (provisional: edit them like the evidence rules)."""
    critical = AuthorityRule(max_tier=2, note="higher operational consequence: primary or official sources only")
    rules = {category: critical for category in CATEGORIES if category != "general"}
    rules["general"] = AuthorityRule(max_tier=4, note="general information: any but the weakest sources")
    return AuthorityRules(rules=rules, uncategorised=AuthorityRule(max_tier=3, note="category not given"))


def authority_rules_from_dict(data: Any) -> AuthorityRules:
    """Validate an authority rule table from its JSON form; ``AuthorityRulesError`` names every bad field."""
    if not isinstance(data, dict):
        raise AuthorityRulesError(f"authority rules must be a JSON object, got {type(data).__name__}")
    try:
        return AuthorityRules.model_validate(data)
    except ValidationError as error:
        raise AuthorityRulesError(problems_from_validation(error)) from error


# --- the checks ----------------------------------------------------------------------------------------


class AuthorityCheck(BaseModel):
    """One of the three questions: passed (True), failed (False) or undecided (None), and why."""

    model_config = ConfigDict(frozen=True)

    passed: bool | None
    reason: str


class Proposal(BaseModel):
    """A label the checks propose for a SUPPORTED claim (never applied by this module)."""

    model_config = ConfigDict(frozen=True)

    proposal: Literal["ACCESS_GAP", "OUTDATED", "needs review"]
    reason: str


class AuthorityResult(BaseModel):
    """Allowed / current / authoritative for one claim's source at the answer's time."""

    model_config = ConfigDict(frozen=True)

    claim_id: str
    source_id: str
    at: datetime
    rules_version: int
    category_rule: str  # the rule applied: a category, or "uncategorised"
    unknown_source: bool
    allowed: AuthorityCheck
    current: AuthorityCheck
    authoritative: AuthorityCheck
    proposals: tuple[Proposal, ...]

    @property
    def passes(self) -> bool:
        """The seed's ``allowed and current and authoritative``; undecided counts as not passing."""
        return bool(self.allowed.passed and self.current.passed and self.authoritative.passed)

    @property
    def failures(self) -> tuple[str, ...]:
        """The failed or undecided checks in the mitigation policy's words (``FAILURES``)."""
        if self.unknown_source:
            return (UNKNOWN_SOURCE,)
        out = []
        if self.allowed.passed is not True:
            out.append(NOT_ALLOWED if self.allowed.passed is False else ACCESS_UNKNOWN)
        if self.current.passed is False:
            out.append(STALE)
        if self.authoritative.passed is not True:
            out.append(INSUFFICIENT if self.authoritative.passed is False else AUTHORITY_UNKNOWN)
        return tuple(out)


def _allowed(source: SourceRecord, requester_roles: Iterable[str] | None) -> AuthorityCheck:
    if not source.restricted_to:
        return AuthorityCheck(passed=True, reason="unrestricted source")
    restricted = ", ".join(source.restricted_to)
    if requester_roles is None:
        return AuthorityCheck(passed=None, reason=f"restricted to {restricted}; the use case's requester roles "
                                                  "are unknown")
    roles = sorted(set(requester_roles))
    shared = [role for role in roles if role in source.restricted_to]
    if shared:
        return AuthorityCheck(passed=True, reason=f"restricted to {restricted}; requesters include {shared[0]}")
    return AuthorityCheck(passed=False, reason=f"restricted to {restricted}; the use case's requesters "
                                               f"({', '.join(roles) or 'none'}) may not read it")


def expiry(valid_until: date, inclusive: bool) -> datetime:
    """The first UTC instant at which a source valid until ``valid_until`` is no longer current."""
    day = valid_until + timedelta(days=1) if inclusive else valid_until
    return ensure_utc(datetime.combine(day, time.min))


def _current(source: SourceRecord, at: datetime, inclusive: bool) -> AuthorityCheck:
    problems = []
    if source.superseded_by is not None:
        problems.append(f"superseded by {source.superseded_by}")
    if source.valid_until is not None and at >= expiry(source.valid_until, inclusive):
        bound = "inclusive" if inclusive else "exclusive"
        problems.append(f"expired: valid until {source.valid_until.isoformat()} ({bound}, UTC), "
                        f"answer at {at.isoformat()}")
    if problems:
        return AuthorityCheck(passed=False, reason="; ".join(problems))
    if source.valid_until is None:
        return AuthorityCheck(passed=True, reason="not superseded, no expiry date")
    return AuthorityCheck(passed=True, reason=f"not superseded, valid until {source.valid_until.isoformat()}")


def _authoritative(source: SourceRecord, name: str, rule: AuthorityRule) -> AuthorityCheck:
    failed, undecided, passed = [], [], []
    if rule.max_tier is not None:
        if source.authority_tier is None:
            undecided.append(f"no authority tier recorded ({name} claims need tier <= {rule.max_tier})")
        elif source.authority_tier > rule.max_tier:
            failed.append(f"tier {source.authority_tier} is weaker than the tier <= {rule.max_tier} "
                          f"required for {name} claims")
        else:
            passed.append(f"tier {source.authority_tier} <= {rule.max_tier}")
    if rule.source_types:
        if source.source_type is None:
            undecided.append(f"no source type recorded ({name} claims need one of {', '.join(rule.source_types)})")
        elif source.source_type not in rule.source_types:
            failed.append(f"a {source.source_type} is not acceptable for {name} claims "
                          f"(acceptable: {', '.join(rule.source_types)})")
        else:
            passed.append(f"a {source.source_type}")
    if failed:
        return AuthorityCheck(passed=False, reason="; ".join(failed + undecided))
    if undecided:
        return AuthorityCheck(passed=None, reason="; ".join(undecided))
    return AuthorityCheck(passed=True, reason=f"{' and '.join(passed)} for {name} claims")


def _proposals(claim: Claim, allowed: AuthorityCheck, current: AuthorityCheck, authoritative: AuthorityCheck,
               unknown: str | None) -> tuple[Proposal, ...]:
    if Label.SUPPORTED not in claim.labels:
        return ()
    out = []
    if allowed.passed is False and Label.ACCESS_GAP not in claim.labels:
        out.append(Proposal(proposal="ACCESS_GAP", reason=f"source not allowed: {allowed.reason}"))
    if current.passed is False and Label.OUTDATED not in claim.labels:
        out.append(Proposal(proposal="OUTDATED", reason=f"stale source: {current.reason}"))
    review = [unknown] if unknown else []
    if allowed.passed is None and not unknown:
        review.append(f"access undecided: {allowed.reason}")
    if authoritative.passed is False:
        review.append(f"insufficient authority: {authoritative.reason}")
    elif authoritative.passed is None and not unknown:
        review.append(f"authority undecided: {authoritative.reason}")
    if review:
        out.append(Proposal(proposal=NEEDS_REVIEW, reason="; ".join(review)))
    return tuple(out)


def check_claim(claim: Claim, source: SourceRecord | None, *, at: datetime, requester_roles: Iterable[str] | None,
                rules: AuthorityRules) -> AuthorityResult:
    """The three checks of one claim that has a ``source_id``; ``source`` is its register row (None: unknown).

    ``at`` is the answer's time (naive = UTC). ``requester_roles`` are the roles that may ask the use
    case's questions (None: unknown). Raises ``ValueError`` for a claim without a source id.
    """
    if claim.source_id is None:
        raise ValueError(f"claim {claim.claim_id}: no source_id, so there is no source to check")
    at = ensure_utc(at)
    name, rule = rules.rule_for(claim.category)
    if source is None:
        why = f"source {claim.source_id!r} is not in the source register"
        undecided = AuthorityCheck(passed=None, reason=why)
        allowed = current = authoritative = undecided
        unknown: str | None = f"unknown source: {why}"
    else:
        allowed = _allowed(source, requester_roles)
        current = _current(source, at, rules.valid_until_inclusive)
        authoritative = _authoritative(source, name, rule)
        unknown = None
    return AuthorityResult(
        claim_id=claim.claim_id or "", source_id=claim.source_id, at=at, rules_version=rules.version,
        category_rule=name, unknown_source=source is None, allowed=allowed, current=current,
        authoritative=authoritative, proposals=_proposals(claim, allowed, current, authoritative, unknown))


def check_response(response: Response, sources: Mapping[str, SourceRecord], *, as_of: datetime,
                   requester_roles: Iterable[str] | None, rules: AuthorityRules | None = None,
                   ) -> tuple[AuthorityResult, ...]:
    """Authority results for every claim of ``response`` that has a ``source_id``, in claim order.

    The answer's time is ``response.created_at``, or ``as_of`` (the scoring time) when it has none.
    ``sources`` maps source ids to register rows (deleted rows left out: they are unknown).
    """
    rules = rules or default_authority_rules()
    at = response.created_at or ensure_utc(as_of)
    roles = None if requester_roles is None else tuple(requester_roles)
    return tuple(check_claim(claim, sources.get(claim.source_id), at=at, requester_roles=roles, rules=rules)
                 for claim in response.claims if claim.source_id is not None)
