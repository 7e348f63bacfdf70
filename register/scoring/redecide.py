"""Keep decisions current when governance changes: the answers a write to the source register, the authority rules
or the use cases' requesters affects are decided again at once.

A decision reads the Authority checks as the register stood when its score run happened
(``register.scoring.decision``). After a write that can change a check -- a source superseded, restricted, given
another tier, type or valid-until date, deleted or restored; a new authority-rule version; new requesters of a use
case; a use case of the approved-use-case register
added, approved, suspended, retired, deleted or given other requesters (the Scope check) -- the affected current
answers are scored again under the active profile, in a score run of their own (its
scope says why: ``sources:<ids>``, ``authority-rules:v<n>``, ``use-cases:<names>``,
``scope:<ids>``, ``scope:all``), so that their decision and
their place in the review queue follow at once; the hub keeps the read models (``register.scoring.scorer``). Only
answers with a current score are decided again: an answer imported without scoring stays unscored.

It is a consequence of a write the actor was allowed to make, so it asks for that write's permission (the source
register's edit, the rules' edit); like every score run it is audited (``scores.rescore``). A change of scope no
answer cites writes no run.
"""

from __future__ import annotations

from collections.abc import Iterable

from hri_core.vocabulary import USE_CASE_APPROVED
from register.access.permissions import Permission, authorize
from register.db.store import Actor, Store
from register.errors import NotFound
from register.scoring.profiles import active_profile
from register.scoring.scorer import RescoreSummary, _write_scores

__all__ = ["SCOPE_LIMIT", "any_approved_use_case", "redecide_all_sourced", "redecide_scope", "redecide_sources",
           "redecide_use_cases"]

SCOPE_LIMIT = 10  # names listed in a run's scope; more are counted
_SCORED = "response_key IN (SELECT response_key FROM current_scores)"


def _scope(prefix: str, names: list[str]) -> str:
    shown = ",".join(names[:SCOPE_LIMIT])
    return f"{prefix}:{shown}" + (f",+{len(names) - SCOPE_LIMIT}" if len(names) > SCOPE_LIMIT else "")


def _run(store: Store, actor: Actor, scope: str, keys: str, params: dict) -> RescoreSummary | None:
    if not store.scalar(f"SELECT count(*) FROM ({keys})", params):
        return None
    try:
        profile = active_profile(store)
    except NotFound:  # a register not initialised yet has no score to decide again
        return None
    return _write_scores(store, actor, profile, as_of=None, batch_id=None, keys=(scope, keys, params))


def redecide_sources(store: Store, actor: Actor, source_ids: Iterable[str]) -> RescoreSummary | None:
    """Decide again the current scored answers whose current claims cite one of ``source_ids``."""
    authorize(store, actor, Permission.REGISTER_EDIT, entity_type="scores")
    ids = sorted({str(s) for s in source_ids if s})
    if not ids:
        return None
    keys = (f"SELECT DISTINCT response_key FROM claim_source_answers WHERE list_contains($ids, source_id) "
            f"AND {_SCORED}")
    return _run(store, actor, _scope("sources", ids), keys, {"ids": ids})


def redecide_all_sourced(store: Store, actor: Actor, why: str) -> RescoreSummary | None:
    """Decide again every current scored answer with a sourced claim (a new authority-rule version: any check of
    any source may change)."""
    authorize(store, actor, Permission.RULES_EDIT, entity_type="scores")
    keys = f"SELECT DISTINCT response_key FROM claim_source_answers WHERE {_SCORED}"
    return _run(store, actor, why, keys, {})


def redecide_use_cases(store: Store, actor: Actor, use_cases: Iterable[str]) -> RescoreSummary | None:
    """Decide again the current scored answers of ``use_cases`` that cite a restricted source (new requesters change
    only the allowed check, which reads the use case only against a restricted source)."""
    authorize(store, actor, Permission.RULES_EDIT, entity_type="scores")
    names = sorted({str(u) for u in use_cases if u})
    if not names:
        return None
    keys = ("SELECT DISTINCT a.response_key FROM claim_source_answers a JOIN sources s ON s.source_id = a.source_id "
            "AND NOT s.deleted AND len(coalesce(s.restricted_to, [])) > 0 "
            f"WHERE list_contains($names, a.use_case) AND a.{_SCORED}")
    return _run(store, actor, _scope("use-cases", names), keys, {"names": names})


def any_approved_use_case(store: Store) -> bool:
    """Whether the approved-use-case register approves some use case (then the Scope check holds the answers of use
    cases it does not know: ``hri_core.decision.scope_finding``)."""
    return bool(store.scalar("SELECT count(*) FROM use_case_register WHERE NOT deleted AND status = ?",
                             [USE_CASE_APPROVED]))


def redecide_scope(store: Store, actor: Actor, use_case_ids: Iterable[str], *,
                   approved_before: bool) -> RescoreSummary | None:
    """Decide again after a write to the approved-use-case register: the current scored answers of ``use_case_ids``
    (their status or requester roles changed), or every current scored answer when whether some use case is approved
    changed (``approved_before``: ``any_approved_use_case`` read before the write) -- the unknown use cases' answers
    are then held by the Scope check, or no longer."""
    authorize(store, actor, Permission.REGISTER_EDIT, entity_type="scores")
    if any_approved_use_case(store) != approved_before:
        return _run(store, actor, "scope:all", f"SELECT response_key FROM current_scores WHERE {_SCORED}", {})
    names = sorted({str(u) for u in use_case_ids if u})
    if not names:
        return None
    keys = ("SELECT response_key FROM responses WHERE is_current AND list_contains($names, use_case) "
            f"AND {_SCORED}")
    return _run(store, actor, _scope("scope", names), keys, {"names": names})
