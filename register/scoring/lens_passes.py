"""A score run with lens groups (``register.scoring.lenses``) made set-based across the groups: what does not depend
on a group is done once for all of them.

* each revision of the run is assigned its group once (TEMP TABLE ``_lens_of``: response_key, g, the group's index
  in ``lens_groups``' order; 0 is the default group), from the few (use case, group) pairs of the lens in force;
* the Authority checks run once, over every revision whose group runs the Authority step (``authority_found``:
  they read the answer, its use case and the source register, never the group's profile or policy);
* the Mitigation step decides once per distinct mitigation policy, over every revision whose group runs it under
  that policy (``decided``: each distinct input tuple once per policy); the decisions of every policy are held in
  ``_lens_mitigated`` (response_key, decision, claim_id) and ``_lens_decided`` (decision, action, rule, reason,
  policy_version), the columns and aliases a score run's INSERT reads (``register.scoring.mitigation``'s
  ``MITIGATION_VALUES``);
* the scoring SELECT runs once per distinct profile (``ProfilePass``; split further only where the groups of one
  profile read unmarked claims differently in the Authority part of the decision), each row taking its group's
  steps and human review from ``_lens_info`` (g, steps, human_review).

Measured against the one pass per group it replaces: docs/performance.md.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hri_core import ScoringProfile
from hri_core.mitigation import MitigationPolicy
from register.db.store import Transaction
from register.scoring.decision import authority_found
from register.scoring.lenses import LensGroup
from register.scoring.mitigation import decided

__all__ = ["DECIDED", "LENS_INFO", "LENS_OF", "MITIGATED", "ProfilePass", "lens_passes"]

LENS_OF, LENS_INFO = "_lens_of", "_lens_info"
MITIGATED, DECIDED = "_lens_mitigated", "_lens_decided"


def _members(groups: tuple[int, ...]) -> str:
    """The revisions of ``groups`` as a condition on ``responses r`` (the indexes are the run's own integers)."""
    listed = ", ".join(str(int(g)) for g in groups)
    return f"r.is_current AND r.response_key IN (SELECT response_key FROM {LENS_OF} WHERE g IN ({listed}))"


@dataclass(frozen=True)
class ProfilePass:
    """One scoring SELECT of a run with lens groups: the groups ``groups`` scored under ``profile``; ``policy`` is
    one of theirs (all read unmarked claims alike in the decision's Authority part). ``whole``: the pass covers the
    run's whole scope (no key filter needed). ``scope_groups``: those of ``groups`` whose lens runs the Scope step."""

    profile: ScoringProfile
    policy: MitigationPolicy
    groups: tuple[int, ...]
    scope_groups: tuple[int, ...]
    whole: bool

    @property
    def members(self) -> str:
        """The pass's revisions, as a condition on ``responses r``."""
        return _members(self.groups)

    @property
    def scope_members(self) -> str | None:
        """The revisions the Scope step runs for (a condition on ``responses r``), None when none."""
        return _members(self.scope_groups) if self.scope_groups else None


def _passes(groups: list[LensGroup]) -> list[ProfilePass]:
    keyed: dict[tuple[int, bool], list[int]] = {}
    for index, group in enumerate(groups):
        keyed.setdefault((group.profile.version, group.policy.unmarked_claims_core), []).append(index)
    return [ProfilePass(groups[members[0]].profile, groups[members[0]].policy, tuple(members),
                        tuple(g for g in members if groups[g].lens.runs("scope")), len(keyed) == 1)
            for members in keyed.values()]


@contextlib.contextmanager
def lens_passes(tx: Transaction, groups: list[LensGroup], as_of: datetime, run_scope: str,
                params: dict[str, Any]) -> Iterator[list[ProfilePass]]:
    """Assign the run's revisions (``run_scope``, a condition on ``responses r`` with named ``$`` parameters
    ``params``) to ``groups``, check Authority once and decide Mitigation once per policy (module doc); yields the
    profile passes to score. The tables named in the module doc, and ``authority_found``'s, are held while open."""
    cases = [case for group in groups for case in group.use_cases]
    of = [index for index, group in enumerate(groups) for _ in group.use_cases]
    tables = (LENS_OF, LENS_INFO, MITIGATED, DECIDED)
    try:
        tx.execute(f"CREATE OR REPLACE TEMP TABLE {LENS_OF} AS SELECT r.response_key, "
                   "coalesce(list_extract($lens_groups::INTEGER[], list_position($lens_cases::VARCHAR[], r.use_case)),"
                   f" 0)::INTEGER AS g FROM responses r WHERE {run_scope}",
                   {**params, "lens_cases": cases, "lens_groups": of})
        tx.execute(f"CREATE OR REPLACE TEMP TABLE {LENS_INFO} (g INTEGER, steps VARCHAR[], human_review BOOLEAN)")
        for index, group in enumerate(groups):  # a handful of rows: one per group
            tx.execute(f"INSERT INTO {LENS_INFO} VALUES (?, ?, ?)",
                       [index, list(group.lens.steps), group.lens.human_review])
        tx.execute(f"CREATE OR REPLACE TEMP TABLE {MITIGATED} (response_key BIGINT, decision INTEGER, "
                   "claim_id VARCHAR)")
        tx.execute(f"CREATE OR REPLACE TEMP TABLE {DECIDED} (decision INTEGER, action VARCHAR, rule VARCHAR, "
                   "reason VARCHAR, policy_version INTEGER)")
        everyone = tuple(range(len(groups)))

        def scope_of(members: tuple[int, ...]) -> tuple[str, dict[str, Any]]:
            return (run_scope, params) if members == everyone else (_members(members), {})

        checked = tuple(i for i, group in enumerate(groups) if group.lens.runs("authority"))
        with authority_found(tx, as_of, *scope_of(checked or everyone), run=bool(checked)) as authority:
            by_policy: dict[int, list[int]] = {}
            for index, group in enumerate(groups):
                if group.lens.runs("mitigation"):
                    by_policy.setdefault(group.policy.version, []).append(index)
            offset = 0
            for version, members in by_policy.items():
                policy = groups[members[0]].policy
                responses, scope_params = scope_of(tuple(members))
                with decided(tx, policy, responses, scope_params, authority=authority) as count:
                    # each policy's decisions numbered after the previous policies': one pair of tables for all
                    tx.execute(f"INSERT INTO {MITIGATED} SELECT response_key, decision + ?, claim_id FROM _mitigated",
                               [offset])
                    tx.execute(f"INSERT INTO {DECIDED} SELECT decision + ?, action, rule, reason, ? "
                               "FROM _mitigation_decided", [offset, version])
                offset += int(count)
            yield _passes(groups)
    finally:
        for table in tables:
            tx.execute(f"DROP TABLE IF EXISTS {table}")
