"""The lens in force per use case: which profile version scores it, which mitigation policy decides it, which CLAIM
steps run and whether human review is wired into Mitigation (issue 37, item 3) -- the read side.

A lens version (tables ``lens_versions`` / ``use_case_lenses``, migration 055) is the whole table of bindings; the
newest version a second person approved is in force (``register.scoring.lens_versions`` saves and approves them).
A use case without a row, and every answer when no version is in force, is scored under the default: the profile
the run is asked to score under (the active one), the active mitigation policy, every step
(``hri_core.lens.FULL_LENS``).

``lens_groups`` groups the use cases by what scores them: a score run makes one set-based pass per group (one per
distinct bound profile, policy and steps), never one per answer (``register.scoring.scorer``). Read by the scorer,
the impact preview (``register.scoring.impact``), the Profiles and Use cases pages and the response detail.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hri_core import ScoringProfile
from hri_core.lens import FULL_LENS, ClaimLens
from hri_core.mitigation import MitigationPolicy
from register.access import version_approvals
from register.db.store import Store, Transaction
from register.errors import NotFound
from register.scoring.mitigation import active_policy, get_policy

__all__ = ["LENS_KIND", "LensGroup", "bound_use_cases", "bound_with_other_bands", "draft_binding", "draft_use_cases",
           "lens_groups", "lens_rows", "lens_version", "score_lens"]

LENS_KIND = "use_case_lens"  # in approval_steps
IN_FORCE = ("SELECT max(version) FROM lens_versions v "
            f"WHERE NOT {version_approvals.pending_clause(LENS_KIND, 'v.version')}")


@dataclass(frozen=True)
class LensGroup:
    """Use cases scored alike: under ``profile``, decided under ``policy``, with ``lens``'s steps. ``use_cases``
    empty and ``default`` true: every answer whose use case has no row (or names none)."""

    profile: ScoringProfile
    policy: MitigationPolicy
    lens: ClaimLens
    use_cases: tuple[str, ...]
    default: bool
    lens_version: int | None  # the lens version in force (None: none is)


def lens_version(reader: Store | Transaction) -> int | None:
    """The lens version in force (the newest approved one), or None before any took effect."""
    return reader.scalar(IN_FORCE)


def lens_rows(reader: Store | Transaction, version: int | None = None) -> list[dict[str, Any]]:
    """The rows of one lens version (the one in force by default), by use case: use_case, profile_version,
    policy_version (None: the default), steps, human_review, note."""
    version = version if version is not None else lens_version(reader)
    if version is None:
        return []
    return reader.dicts("SELECT use_case, profile_version, policy_version, steps, human_review, note "
                        "FROM use_case_lenses WHERE version = ? ORDER BY use_case", [version])


def _profile(reader: Store | Transaction, version: int) -> ScoringProfile:
    row = reader.query_one("SELECT name, params FROM scoring_profiles WHERE profile_version = ?", [version])
    if row is None:
        raise NotFound(f"scoring profile version {version}, bound by the lens in force, does not exist")
    name, params = row
    data = json.loads(params) if isinstance(params, str) else dict(params)
    data.update({"name": name, "version": version})
    return ScoringProfile.model_validate(data)


def lens_groups(tx: Store | Transaction, default_profile: ScoringProfile) -> list[LensGroup]:
    """The groups of a score run under ``default_profile``: the default group first, then one per distinct (profile
    version, policy version, steps, human review) of the lens in force. Without a lens in force, the default only."""
    version = lens_version(tx)
    policy = active_policy(tx)
    default = LensGroup(default_profile, policy, FULL_LENS, (), True, version)
    grouped: dict[tuple, list[str]] = {}
    for row in lens_rows(tx, version):
        key = (row["profile_version"], row["policy_version"], tuple(row["steps"]), bool(row["human_review"]))
        grouped.setdefault(key, []).append(row["use_case"])
    groups = [default]
    for (profile_version, policy_version, steps, human_review), use_cases in grouped.items():
        profile = default_profile if profile_version is None else _profile(tx, int(profile_version))
        chosen = policy if policy_version is None else get_policy(tx, int(policy_version))
        groups.append(LensGroup(profile, chosen, ClaimLens(steps=steps, human_review=human_review),
                                tuple(sorted(use_cases)), False, version))
    return groups


def bound_use_cases(reader: Store | Transaction) -> dict[str, int]:
    """``{use case: profile version}`` of the use cases the lens in force binds to a profile of their own."""
    return {row["use_case"]: int(row["profile_version"]) for row in lens_rows(reader)
            if row["profile_version"] is not None}


def bound_with_other_bands(reader: Store | Transaction, active: ScoringProfile) -> dict[str, int]:
    """The bound use cases (``bound_use_cases``) whose profile's band bounds or names differ from ``active``'s: a
    figure that places answers in bands by ``active``'s bounds (the overview's score histogram) misplaces theirs."""
    return {use_case: version for use_case, version in bound_use_cases(reader).items()
            if _profile(reader, version).bands != active.bands}


def draft_use_cases(reader: Store | Transaction, profile_version: int) -> tuple[str, ...] | None:
    """The use cases ``profile_version`` is bound to, or would be: by the newest lens version naming it (pending or
    in force). None when no lens names it (published, it would be the default for the use cases no lens binds)."""
    binding = draft_binding(reader, profile_version)
    return None if binding is None else binding[1]


def draft_binding(reader: Store | Transaction, profile_version: int) -> tuple[int, tuple[str, ...], bool] | None:
    """The newest lens version naming ``profile_version`` (pending or in force), the use cases it binds it to and
    whether that version still waits for a second person; None when no lens names it."""
    row = reader.query_one("SELECT max(version) FROM use_case_lenses WHERE profile_version = ?", [profile_version])
    if row is None or row[0] is None:
        return None
    version = int(row[0])
    cases = tuple(r[0] for r in reader.query("SELECT use_case FROM use_case_lenses WHERE version = ? "
                                             "AND profile_version = ? ORDER BY use_case", [version, profile_version]))
    pending = bool(reader.scalar(f"SELECT {version_approvals.pending_clause(LENS_KIND, '?')}", [version]))
    return version, cases, pending


def score_lens(reader: Store | Transaction, response_id: str) -> dict[str, Any] | None:
    """The lens an answer's current score was made under: profile_version, mitigation_policy_version, lens_version,
    claim_steps (None: every step), human_review; None when it has no current score."""
    return reader.one("SELECT profile_version, mitigation_policy_version, lens_version, claim_steps, human_review "
                      "FROM scores WHERE is_current AND response_id = ? ORDER BY run_id DESC LIMIT 1",
                      [str(response_id)])
