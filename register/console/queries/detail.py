"""Everything the response detail page shows about one response (``response_detail``).

The revision's fields, its score, its claims with their Authority checks, the floors that fired, the
response's score history and its review decisions, all read by the revisions' integer keys.

Called by ``ui.features.responses`` (the detail page).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from register.console.queries.filters import DIM_COLUMNS, NO_CLAIMS_STATE
from register.db.store import Store
from register.readmodels import response_ids
from register.scoring.authority import claim_checks

__all__ = ["response_detail"]

_RESPONSE_FIELDS = ("response_id", "revision", "response_key", "is_current", "content_hash", "batch_id",
                    "imported_at", "use_case", "model", "created_at", "question", "answer", "stakes", "claim_count",
                    "query_ambiguous", "gt_answer")
_SCORE_FIELDS = ("run_id", "response_id", "revision", "profile_version", "as_of", "is_current", *DIM_COLUMNS,
                 "hri_add", "hri", "score", "band", "action", "no_claims", "total_criticality", "floors_fired",
                 "decisive_claim_id", "decisive_rule_id", "action_floor_claim_id", "action_floor_rule_id",
                 "mitigation_action", "mitigation_rule", "mitigation_reason", "mitigation_claim_id",
                 "mitigation_policy_version", "decision", "decision_reasons", "lens_version", "claim_steps",
                 "human_review")


_AUTHORITY_FIELDS = ("authority", "allowed", "allowed_reason", "current", "current_reason", "authoritative",
                     "authoritative_reason", "proposals")


def _as_list(value: Any) -> list | None:
    """A DuckDB list cell (numpy array) as a Python list; a missing one as None."""
    return None if value is None or isinstance(value, (float, type(pd.NA))) else [str(v) for v in value]


def _with_authority(claims: pd.DataFrame, checks: pd.DataFrame) -> pd.DataFrame:
    """The claims with their Authority checks by claim position ("no source" for a claim without one)."""
    checks = checks.set_index("claim_idx")
    out = claims.copy()
    for field in _AUTHORITY_FIELDS:
        values = [checks.at[i, field] if i in checks.index else None for i in out["claim_idx"]]
        out[field] = pd.Series(values, index=out.index, dtype=object)
    for check in ("allowed", "current", "authoritative"):  # True / False / None (undecided), as Python values
        out[check] = pd.Series([None if v is None or pd.isna(v) else bool(v) for v in out[check]], index=out.index,
                               dtype=object)
    out["proposals"] = pd.Series([_as_list(v) or [] for v in out["proposals"]], index=out.index, dtype=object)
    out["authority"] = out["authority"].where(out["authority"].notna(), "no source")
    return out


def response_detail(store: Store, response_id: str, revision: int | None = None) -> dict | None:
    """Everything the detail view shows about one response (its current revision unless ``revision``).

    None when the response (or that revision) is unknown. Keys: ``response`` (dict), ``score`` (dict of
    the revision's current score, or its latest when it is no longer current; None when unscored),
    ``claims`` (with each sourced claim's Authority checks: ``authority``, ``allowed``, ``current``,
    ``authoritative``, their ``*_reason``, ``proposals``; "no source" without one), ``floors`` (the floors
    that fired in that score's run), ``history`` (every score of the response, every revision and run,
    oldest run first), ``revisions`` (list of ints), ``keys`` (each revision's response key, ``{revision: key}``:
    ``register.scoring.reproduce.reproduce`` takes them rather than looking the id up again),
    ``decisions`` (review decisions, oldest first).
    """
    # The response's revisions are found by its id once (a scan of one string column); everything else is read
    # by the revisions' integer keys, which DuckDB's zone maps narrow to a few row groups. By id, every score run
    # scanned every score row's id again, a cost growing with each run (docs/performance.md).
    known = response_ids.revisions(store, response_id)
    chosen = [key for rev, key, current in known if (current if revision is None else rev == int(revision))]
    if not chosen:
        return None
    key = chosen[0]
    response = store.one(f"SELECT {', '.join(_RESPONSE_FIELDS)} FROM responses WHERE response_key = ?", [key])
    if response is None:
        return None
    response.pop("response_key")
    score = store.one(
        f"SELECT {', '.join(_SCORE_FIELDS)} FROM scores WHERE response_key = ? "
        "ORDER BY is_current DESC, run_id DESC LIMIT 1", [key])
    claims = store.frame(
        "SELECT claim_idx, claim_id, text, labels, dimensions, criticality, source_id, span, feedback_at, "
        "feedback_count, feedback_resolved, category, is_core, contradicted_by FROM claims WHERE response_key = ? "
        "ORDER BY claim_idx", [key])
    claims["labels"] = pd.Series([_as_list(v) for v in claims["labels"]], index=claims.index, dtype=object)
    claims["dimensions"] = pd.Series([_as_list(v) for v in claims["dimensions"]], index=claims.index, dtype=object)
    claims = _with_authority(claims, claim_checks(store, response_key=key))
    floors = store.frame(
        "SELECT claim_id, rule_id, label, criticality, value FROM score_floors "
        "WHERE run_id = ? AND response_key = ? ORDER BY claim_idx, rule_id",
        [None if score is None else score["run_id"], key])
    history = store.frame(
        "SELECT run_id, revision, profile_version, as_of, score, CASE WHEN no_claims THEN ? ELSE band END AS band, "
        "action, mitigation_action, decision, hri_add, is_current FROM scores WHERE list_contains(?, response_key) "
        "ORDER BY run_id, revision", [NO_CLAIMS_STATE, [k for _, k, _ in known]])
    revisions = [r for r, _, _ in known]
    decisions = store.frame(
        "SELECT decision_id, revision, decision, reason, decided_by, decided_role, decided_at, score_at_decision, "
        "band_at_decision, action_at_decision, profile_version FROM review_decisions WHERE response_id = ? "
        "ORDER BY decided_at, decision_id", [response_id])
    return {"response": response, "score": score, "claims": claims, "floors": floors, "history": history,
            "revisions": revisions, "keys": {r: k for r, k, _ in known}, "decisions": decisions}
