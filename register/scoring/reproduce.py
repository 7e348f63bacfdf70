"""Recompute stored scores exactly: the response as stored, the profile version and as-of time the
score recorded, through the reference scorer ``hri_core.score_response`` (and the stored mitigation
decision through ``hri_core.mitigation.decide`` under the policy version it recorded).

Used by the response detail page ("recomputed: matches") and by the reproducibility check of the
pre-submission checklist.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass

from hri_core import Response, ScoreResult, parse_response, score_response
from hri_core.authority import AuthorityResult, SourceRecord, check_response
from hri_core.mitigation import MitigationDecision, decide
from hri_core.models import NO_TEXT_LIMITS
from hri_core.vocabulary import DIMENSIONS
from register.db.store import Store
from register.errors import NotFound
from register.readmodels import response_ids
from register.readmodels.response_ids import revisions_select
from register.scoring.authority_rules import authority_rules, requester_roles
from register.scoring.mitigation import get_policy as get_policy_version
from register.scoring.profiles import get_profile


def authority_results(store: Store, response: Response, as_of) -> tuple[AuthorityResult, ...]:
    """``hri_core.authority.check_response`` of ``response`` against the store's source register (deleted rows left
    out), authority rules and its use case's requesters, at its time (else ``as_of``)."""
    cited = sorted({c.source_id for c in response.claims if c.source_id is not None})
    sources = {row["source_id"]: SourceRecord.model_validate(row) for row in store.dicts(
        "SELECT source_id, source_type, authority_tier, valid_until, superseded_by, restricted_to FROM sources "
        "WHERE NOT deleted AND list_contains(?, source_id)", [cited])} if cited else {}
    return check_response(response, sources, as_of=as_of, rules=authority_rules(store),
                          requester_roles=requester_roles(store).get(response.use_case or ""))


TOLERANCE = 1e-9  # how far a stored HRI (0-1) may be from its recomputation (here and checklist item 7)
_JSON_COLUMNS = ("retrieved_context", "gt_claims")


def load_response(store: Store, response_id: str, revision: int | None = None) -> Response:
    """The stored response (current revision unless one is named) as an ``hri_core.Response``."""
    which, params = ("is_current", []) if revision is None else ("revision = ?", [int(revision)])
    # the revisions found through the id's hash (``response_ids``): the id is bound twice, then the condition's
    return _load_response(store, response_id, revision, f"{revisions_select('?')} AND {which}",
                          [response_id, response_id, *params])


def _load_response(store: Store, response_id: str, revision: int | None, where: str, params: list) -> Response:
    """The stored revision of ``response_id`` that ``where`` (a condition on ``responses``, bound with ``params``)
    picks, with its claims."""
    record = store.one(
        "SELECT response_key, use_case, model, created_at, question, answer, stakes, retrieved_context, gt_answer, "
        f"query_ambiguous, gt_claims FROM responses WHERE {where}", params)
    if record is None:
        raise NotFound(f"response {response_id!r} does not exist" if revision is None
                       else f"response {response_id!r} has no revision {revision}")
    # its claims by the revision's integer key (claims are stored in key order: a few row groups are read; by
    # id and revision every claim's id was scanned: docs/performance.md)
    claims = store.dicts(
        "SELECT claim_id, text, labels, dimensions, criticality, source_id, span, feedback_at, feedback_count, "
        "feedback_resolved, category, is_core, contradicted_by, entailment FROM claims "
        "WHERE response_key = ? ORDER BY claim_idx", [record.pop("response_key")])
    record = {k: v for k, v in record.items() if v is not None}
    for name in _JSON_COLUMNS:  # JSON columns come back as text
        if name in record:
            record[name] = json.loads(record[name])
    record["response_id"] = response_id
    record["claims"] = [{k: json.loads(v) if k == "entailment" else v for k, v in c.items() if v is not None}
                        for c in claims]
    return parse_response(record, limits=NO_TEXT_LIMITS)  # stored text met the limits in force at its import


@dataclass(frozen=True)
class Reproduction:
    """A stored score next to its recomputation, and whether they agree (to 1e-9, same band/action)."""

    response_id: str
    revision: int
    run_id: int
    stored: dict
    recomputed: ScoreResult
    matches: bool
    differences: tuple[str, ...]
    mitigation: MitigationDecision | None = None  # the Mitigation step recomputed (None: none was stored)
    response: Response | None = None  # the stored response (that revision) it was recomputed from


def reproduce(store: Store, response_id: str, run_id: int | None = None, *,
              keys: Mapping[int, int] | None = None) -> Reproduction:
    """Recompute one stored score (the current one unless ``run_id`` is given).

    ``keys``: the response's revisions and their keys (``{revision: response_key}``, every revision), when the
    caller has looked them up already (the detail page: ``register.console.queries.detail.response_detail``); else
    they are looked up here. Each lookup scans the id hashes of every revision (docs/performance.md)."""
    cols = ("run_id", "revision", "profile_version", "as_of", "hri_add", "hri", "score", "band", "action",
            "no_claims", "decisive_claim_id", "decisive_rule_id", "action_floor_claim_id", "action_floor_rule_id",
            "mitigation_action", "mitigation_rule", "mitigation_reason", "mitigation_claim_id",
            "mitigation_policy_version") + tuple(f"s_{d.value.lower()}" for d in DIMENSIONS)
    where = "run_id = ?" if run_id is not None else "is_current"
    # by the keys of the response's revisions: zone maps skip other responses' score rows of every run
    if keys is None:
        keys = dict(response_ids.revisions(store, response_id, "revision, response_key"))
    params = [list(keys.values())] + ([run_id] if run_id is not None else [])
    stored = store.one(f"SELECT {', '.join(cols)} FROM scores WHERE list_contains(?, response_key) AND {where}",
                       params)
    if stored is None:
        raise NotFound(f"no stored score for response {response_id!r}")
    # that revision read by its key (zone maps skip the rest before the id is compared)
    response = _load_response(store, response_id, stored["revision"], "response_key = ? AND response_id = ?",
                              [keys[stored["revision"]], response_id])
    result = score_response(response, get_profile(store, stored["profile_version"]), stored["as_of"])
    diffs = []
    for name, number in (("hri_add", result.hri_add), ("hri", result.hri), ("score", result.score)):
        if not math.isclose(stored[name], number, rel_tol=0, abs_tol=TOLERANCE * (100 if name == "score" else 1)):
            diffs.append(f"{name}: stored {stored[name]!r}, recomputed {number!r}")
    for d in DIMENSIONS:
        key = f"s_{d.value.lower()}"
        if not math.isclose(stored[key], result.dimensions[d], rel_tol=0, abs_tol=TOLERANCE):
            diffs.append(f"{key}: stored {stored[key]!r}, recomputed {result.dimensions[d]!r}")
    for name, value in (("band", result.band), ("action", result.action), ("no_claims", result.no_claims),
                        ("decisive_claim_id", result.decisive_floor.claim_id if result.decisive_floor else None),
                        ("decisive_rule_id", result.decisive_floor.rule_id if result.decisive_floor else None),
                        ("action_floor_claim_id", result.action_floor.claim_id if result.action_floor else None),
                        ("action_floor_rule_id", result.action_floor.rule_id if result.action_floor else None)):
        if stored[name] != value:
            diffs.append(f"{name}: stored {stored[name]!r}, recomputed {value!r}")
    mitigation = None
    if stored["mitigation_policy_version"] is not None:  # scores stored before migration 009 have none
        # the Authority checks it read: at the answer's time against the register as it stands (every change of the
        # register decides the current answers again: register.scoring.redecide)
        mitigation = decide(response, get_policy_version(store, stored["mitigation_policy_version"]),
                            authority={r.claim_id: r.failures for r in authority_results(store, response,
                                                                                          stored["as_of"])})
        for name, value in (("mitigation_action", mitigation.action), ("mitigation_rule", mitigation.rule),
                            ("mitigation_reason", mitigation.reason), ("mitigation_claim_id", mitigation.claim_id)):
            if stored[name] != value:
                diffs.append(f"{name}: stored {stored[name]!r}, recomputed {value!r}")
    return Reproduction(response_id, stored["revision"], stored["run_id"], stored, result, not diffs, tuple(diffs),
                        mitigation, response)
