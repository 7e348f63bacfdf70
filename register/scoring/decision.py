"""The one decision on each answer, in the register's SQL: ``hri_core.decision.decide_answer`` in bulk.

A score run (``register.scoring.scorer``) and the import of a Spark job's scores (``register.scoring.spark_exchange``)
store on every score row ``decision`` (release | caution | review | block) and ``decision_reasons`` (its sentences:
the band, each fired floor with a minimum action and its claim, each failed Authority check with its claim and
source, the Mitigation step), computed here as ``hri_core.decision`` computes them (a property test holds the two
equal, sentence for sentence):

* ``authority_found``: the register's Authority checks (``register.scoring.authority.claim_checks_select``) of the
  scored revisions' sourced claims, at each answer's time (``created_at``, else the run's as-of time), against the
  source register, the authority rules and the use cases' requesters as they are when the run happens. Only claims
  whose source can fail a check, be undecided or is unknown are read (a register of current strong sources costs
  nothing). The Mitigation step reads the failure words of these claims (``register.scoring.mitigation.decided``),
  the decision the failed (``False``) checks;
* ``decision_parts``: per revision, the Scope check (its use case suspended or retired in ``use_case_register``, or
  unknown to a register that approves some use case: at least review, ``hri_core.decision.scope_finding``), the
  fired floors with a minimum action (from the run's ``score_floors``), the claims whose validated negative feedback
  is dated after the run's as-of time (``hri_core.decision``: at least review, fail closed) and the failed Authority
  checks, each as its severity and its sentence, in order;
* ``decision_values``: the two stored columns as SQL over a score row, its Mitigation decision and those parts;
* ``apply_decision``: the same on the stored rows of a run written elsewhere (a Spark job's, imported).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from hri_core import ScoringProfile
from hri_core.authority import (
    ACCESS_UNKNOWN,
    AUTHORITY_UNKNOWN,
    INSUFFICIENT,
    NOT_ALLOWED,
    STALE,
    UNKNOWN_SOURCE,
)
from hri_core.decision import (
    CHECK_PROBLEMS,
    FAILED_SCORING_DECISION,
    LATE_FEEDBACK_DECISION,
    MITIGATION_MINIMUM,
    SCOPE_DECISION,
    SCOPE_HELD_STATUSES,
    SERIOUS_CRITICALITY,
    ScopeFinding,
    human_review_reason,
    late_feedback_reason,
    scope_reason,
)
from hri_core.lens import HUMAN_REVIEW_DECISION
from hri_core.mitigation import MitigationPolicy
from hri_core.models import ensure_utc
from hri_core.profile import ACTION_SEVERITY, ACTIONS
from hri_core.vocabulary import LABEL_BIT, USE_CASE_APPROVED, Label
from register.db.sql import Params
from register.db.store import Transaction
from register.scoring.authority import claim_checks_select
from register.scoring.authority_rules import authority_rules, requester_roles

__all__ = ["AUTHORITY_TABLE", "DECISION_COLUMNS", "apply_decision", "authority_found", "decision_parts",
           "decision_values", "parts_join", "scope_held_select"]

DECISION_COLUMNS = ("decision", "decision_reasons")
AUTHORITY_TABLE = "_authority_found"  # while ``authority_found`` is open
# while ``decision_parts`` is open
_FLOORS, _LATE, _AUTHORITY = "_decision_floors", "_decision_late_feedback", "_decision_authority"
_SCOPE = "_decision_scope"


@contextlib.contextmanager
def authority_found(tx: Transaction, as_of: datetime, responses: str,
                    params: dict[str, Any] | None = None, *, run: bool = True) -> Iterator[str]:
    """Check the sourced claims of the revisions ``responses`` (a condition on ``responses r``, named ``$``
    parameters in ``params``) and hold the claims flagged; yields the table's name (``AUTHORITY_TABLE``).

    One row per flagged claim: response_key, claim_idx, claim_id, source_id, labels, label_mask, is_core,
    criticality, span, allowed / current / authoritative (NULL undecided) and failures, the words
    ``hri_core.authority.AuthorityResult.failures`` gives (an unknown source: that alone). Dropped on leaving.
    ``run`` false (a CLAIM lens that skips Authority, ``hri_core.lens``): the table is empty, nothing is checked.
    """
    p = Params()
    rules, roles = authority_rules(tx), requester_roles(tx)
    at = ensure_utc(as_of)
    answers = (f"(SELECT r.response_key, r.use_case, r.created_at, {p(at)}::TIMESTAMPTZ AS as_of "
               f"FROM responses r WHERE {responses})")
    checks = claim_checks_select(p, rules, roles, at, answers=answers, flaggable_only=True)
    failures = (f"CASE WHEN unknown_source THEN [{p(UNKNOWN_SOURCE)}] ELSE list_filter(["
                f"CASE WHEN allowed IS NULL THEN {p(ACCESS_UNKNOWN)} WHEN NOT allowed THEN {p(NOT_ALLOWED)} END, "
                f"CASE WHEN current = false THEN {p(STALE)} END, "
                f"CASE WHEN authoritative IS NULL THEN {p(AUTHORITY_UNKNOWN)} "
                f"WHEN NOT authoritative THEN {p(INSUFFICIENT)} END], lambda x: x IS NOT NULL) END")
    try:
        tx.execute(f"""CREATE OR REPLACE TEMP TABLE {AUTHORITY_TABLE} AS
            SELECT response_key, claim_idx, claim_id, source_id, labels, label_mask, is_core, criticality, span,
                   allowed, current, authoritative, {failures} AS failures
            FROM ({checks})
            WHERE {'' if run else 'false AND '}(unknown_source OR allowed IS NOT true OR current = false
                   OR authoritative IS NOT true)""",
                   {**(params or {}), **p.values})
        yield AUTHORITY_TABLE
    finally:
        tx.execute(f"DROP TABLE IF EXISTS {AUTHORITY_TABLE}")


def _late_feedback_select(run_id: int, responses: str) -> tuple[str, Params]:
    """Per revision of ``responses`` (a condition on ``responses r``), its claims carrying VALIDATED_NEGATIVE_FEEDBACK
    dated after run ``run_id``'s as-of time, as the severity of ``LATE_FEEDBACK_DECISION`` and the sentences of
    ``hri_core.decision.late_feedback_reason`` in claim order (its own words, split around the claim id)."""
    p = Params()
    before, _, after = late_feedback_reason("\x00").partition("\x00")
    vnf = LABEL_BIT[Label.VALIDATED_NEGATIVE_FEEDBACK]
    return (f"""SELECT cl.response_key, {p(ACTION_SEVERITY[LATE_FEEDBACK_DECISION])} AS sev,
        list({p(before)} || cl.claim_id || {p(after)} ORDER BY cl.claim_idx) AS reasons
        FROM claims cl
        WHERE cl.label_mask >= {vnf} AND (cl.label_mask & {vnf}) <> 0
          AND cl.feedback_at > (SELECT as_of FROM score_runs WHERE run_id = {p(int(run_id))})
          AND cl.response_key IN (SELECT r.response_key FROM responses r WHERE {responses})
        GROUP BY cl.response_key""", p)


def _use_cases_registered(tx: Transaction) -> bool:
    """Whether the use-case register has a live row (a register older than migration 049 has none to read)."""
    if not tx.scalar("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'use_case_register'"):
        return False
    return bool(tx.scalar("SELECT count(*) FROM use_case_register WHERE NOT deleted"))


def scope_held_select(p: Params, responses: str) -> str:
    """Per revision of ``responses`` (a condition on ``responses r``) that the Scope check holds for a person
    (``hri_core.decision.scope_finding``): its use case suspended or retired in the live rows of
    ``use_case_register``, or unknown (or not named) while some live use case is approved -- as the severity of
    ``SCOPE_DECISION`` and the one sentence of ``hri_core.decision.scope_reason`` (its own words, split around the
    use case and the status). One join of the revisions to the register, a few rows: set-based at any size."""
    def words(use_case: str | None, status: str | None) -> tuple[str, str, str]:
        text = scope_reason(ScopeFinding(use_case, status))
        if use_case is None:
            return text, "", ""
        before, _, rest = text.partition(use_case)
        if status is None:
            return before, rest, ""
        middle, _, after = rest.partition(status)
        return before, middle, after

    no_case, _, _ = words(None, None)
    u_before, u_after, _ = words("\x00", None)
    s_before, s_middle, s_after = words("\x00", "\x01")
    held = p(list(SCOPE_HELD_STATUSES))
    return f"""SELECT r.response_key, {p(ACTION_SEVERITY[SCOPE_DECISION])} AS sev,
        [CASE WHEN u.use_case_id IS NOT NULL THEN {p(s_before)} || u.use_case_id || {p(s_middle)} || u.status
                                                  || {p(s_after)}
              WHEN r.use_case IS NULL THEN {p(no_case)}
              ELSE {p(u_before)} || r.use_case || {p(u_after)} END] AS reasons
        FROM responses r LEFT JOIN use_case_register u ON u.use_case_id = r.use_case AND NOT u.deleted
        WHERE ({responses})
          AND (list_contains({held}::VARCHAR[], u.status)
               OR (u.use_case_id IS NULL AND EXISTS (SELECT 1 FROM use_case_register a
                                                    WHERE NOT a.deleted AND a.status = {p(USE_CASE_APPROVED)})))"""


@contextlib.contextmanager
def decision_parts(tx: Transaction, profile: ScoringProfile, policy: MitigationPolicy, run_id: int,
                   authority: str, responses: str, params: dict[str, Any] | None = None, *,
                   scope: bool = True, scope_responses: str | None = None) -> Iterator[None]:
    """Hold, per revision of run ``run_id``, the decision's Scope, floor, late-feedback and Authority parts
    (``decision_values`` joins them): TEMP TABLEs ``_decision_scope``, ``_decision_floors``,
    ``_decision_late_feedback`` and ``_decision_authority`` (response_key, sev: the most severe minimum, as an index
    of ``ACTIONS``; reasons: the sentences in order). The Scope part is read from the revisions ``responses`` against
    ``use_case_register`` as it is now (``scope_held_select``; nothing is read while the register is empty). The
    floors are read from the run's ``score_floors`` (written first), the late feedback from
    the claims of the revisions ``responses`` (a condition on ``responses r``, named ``$`` parameters in ``params``)
    against the run's as-of time (its ``score_runs`` row, written first), the Authority findings from ``authority``
    (``authority_found``'s table). Dropped on leaving. ``scope`` false: a CLAIM lens that skips the Scope step
    (``hri_core.lens``) -- its part is empty; ``scope_responses``: the revisions it runs for when not all of
    ``responses`` (a condition on ``responses r`` without parameters: a run's lens groups, some skipping it)."""
    p = Params()
    with_min = [rule for rule in profile.floors if rule.min_action is not None]
    rule_ids = p([rule.rule_id for rule in profile.floors])
    mins = p([rule.min_action for rule in with_min])
    named = p([rule.rule_id for rule in with_min])
    actions = p(list(ACTIONS))
    floors = (f"""SELECT response_key, max(sev) AS sev, list(reason ORDER BY claim_idx, rule_order) AS reasons FROM (
        SELECT f.response_key, f.claim_idx, list_position({rule_ids}::VARCHAR[], f.rule_id) AS rule_order,
               list_position({actions}::VARCHAR[], m.min_action) - 1 AS sev,
               'floor ' || f.rule_id || ' on claim ' || f.claim_id || ' (' || f.label || ', criticality '
               || f.criticality || '): at least ' || m.min_action AS reason
        FROM score_floors f JOIN (SELECT unnest({named}::VARCHAR[]) AS rule_id,
                                         unnest({mins}::VARCHAR[]) AS min_action) m ON m.rule_id = f.rule_id
        WHERE f.run_id = {p(int(run_id))}) GROUP BY response_key""" if with_min else
              "SELECT NULL::BIGINT AS response_key, NULL::INTEGER AS sev, NULL::VARCHAR[] AS reasons WHERE false")
    a = Params()  # the Authority part's own (the floors' statement may bind nothing)
    review, caution = a("review"), a("caution")
    checks = " UNION ALL ".join(f"SELECT {i} AS k, {a(check)} AS chk, {a(problem)} AS problem"
                                for i, (check, problem) in enumerate(CHECK_PROBLEMS))
    failed = " OR ".join(f"(u.k = {i} AND a.{check} = false)" for i, (check, _) in enumerate(CHECK_PROBLEMS))
    serious = f"(a.core OR a.criticality >= {a(SERIOUS_CRITICALITY)})"
    found = f"""SELECT response_key, max(sev) AS sev, list(reason ORDER BY claim_idx, k) AS reasons FROM (
        SELECT a.response_key, a.claim_idx, u.k,
               CASE WHEN {serious} THEN {a(ACTION_SEVERITY['review'])} ELSE {a(ACTION_SEVERITY['caution'])} END AS sev,
               'Authority: ' || CASE WHEN a.core THEN 'core claim' ELSE 'claim' END || ' ' || a.claim_id
               || ' (criticality ' || a.criticality || ') rests on ' || a.source_id || ', which failed ' || u.chk
               || ' (' || u.problem || '): at least ' || CASE WHEN {serious} THEN {review} ELSE {caution} END AS reason
        FROM (SELECT *, coalesce(is_core, {a(policy.unmarked_claims_core)}) AS core FROM {authority}) a, ({checks}) u
        WHERE {failed}) GROUP BY response_key"""
    late, lp = _late_feedback_select(run_id, responses)
    sp = Params()
    # a register without use cases holds nothing: no answer is read (the teams that keep none pay nothing)
    held = (scope_held_select(sp, scope_responses or responses) if scope and _use_cases_registered(tx)
            else "SELECT NULL::BIGINT AS response_key, NULL::INTEGER AS sev, NULL::VARCHAR[] AS reasons WHERE false")
    try:
        tx.execute(f"CREATE OR REPLACE TEMP TABLE {_SCOPE} AS {held}", {**(params or {}), **sp.values}
                   if sp.values else {})
        tx.execute(f"CREATE OR REPLACE TEMP TABLE {_FLOORS} AS {floors}", p.values if with_min else {})
        tx.execute(f"CREATE OR REPLACE TEMP TABLE {_LATE} AS {late}", {**(params or {}), **lp.values})
        tx.execute(f"CREATE OR REPLACE TEMP TABLE {_AUTHORITY} AS {found}", a.values)
        yield
    finally:
        for table in (_SCOPE, _FLOORS, _LATE, _AUTHORITY):
            tx.execute(f"DROP TABLE IF EXISTS {table}")


def parts_join(score: str) -> str:
    """The LEFT JOINs of ``decision_parts``' tables to the score rows ``score`` (an alias with response_key), under
    the aliases ``decision_values`` reads."""
    return " ".join(f"LEFT JOIN {table} {alias} ON {alias}.response_key = {score}.response_key"
                    for table, alias in ((_SCOPE, "ds"), (_FLOORS, "df"), (_LATE, "dl"), (_AUTHORITY, "da")))


def decision_values(p: Params, profile: ScoringProfile, *, score: str, action: str, reason: str,
                    human_review: bool = False, human_review_sql: str | None = None) -> dict[str, str]:
    """The stored decision columns as SQL: ``score`` is the alias of a score row (band, no_claims, scoring_failure,
    response_key), ``action`` and ``reason`` the expressions of its Mitigation action and sentence (NULL: none
    decided); the statement LEFT JOINs ``_decision_scope ds``, ``_decision_floors df``, ``_decision_late_feedback dl``
    and ``_decision_authority da`` on response_key (``parts_join``). ``human_review``: the use case's lens wires human
    review into Mitigation (at least ``HUMAN_REVIEW_DECISION``, with ``hri_core.decision.human_review_reason``);
    ``human_review_sql``, a BOOLEAN expression in its place when it differs row by row (a run's lens groups)."""
    s = score
    names, band_actions = p([b.name for b in profile.bands]), p([b.action for b in profile.bands])
    actions = f"({p(list(ACTIONS))}::VARCHAR[])"
    failed = p(FAILED_SCORING_DECISION)
    band_action = (f"CASE WHEN {s}.scoring_failure IS NOT NULL THEN {failed} "
                   f"WHEN {s}.no_claims THEN {p(profile.no_claims_action)} "
                   f"ELSE ({band_actions}::VARCHAR[])[list_position({names}::VARCHAR[], {s}.band)] END")
    minimum = "CASE " + " ".join(f"WHEN {action} = {p(step)} THEN {p(least)}"
                                 for step, least in MITIGATION_MINIMUM.items()) + " END"
    reviewed_sev = (f"CASE WHEN {human_review_sql} THEN {p(ACTION_SEVERITY[HUMAN_REVIEW_DECISION])} ELSE 0 END"
                    if human_review_sql else p(ACTION_SEVERITY[HUMAN_REVIEW_DECISION]) if human_review else "0")
    sev = (f"greatest(list_position({actions}, {band_action}) - 1, coalesce(ds.sev, 0), coalesce(df.sev, 0), "
           "coalesce(dl.sev, 0), "
           "coalesce(da.sev, 0), "
           f"coalesce(list_position({actions}, {minimum}) - 1, 0), "
           f"{reviewed_sev}, "
           f"CASE WHEN {s}.scoring_failure IS NOT NULL THEN {p(ACTION_SEVERITY[FAILED_SCORING_DECISION])} ELSE 0 END)")
    reviewed = (f"CASE WHEN {human_review_sql} THEN [{p(human_review_reason())}] ELSE []::VARCHAR[] END"
                if human_review_sql else f"[{p(human_review_reason())}]" if human_review else "[]::VARCHAR[]")
    reasons = (f"list_concat(list_concat(list_concat(list_concat(list_concat(list_concat(list_concat("
               f"[CASE WHEN {s}.no_claims "
               f"THEN 'no claims: ' ELSE 'band ' || {s}.band || ': ' END || {band_action}], "
               "coalesce(ds.reasons, []::VARCHAR[])), "
               "coalesce(df.reasons, []::VARCHAR[])), coalesce(dl.reasons, []::VARCHAR[])), "
               "coalesce(da.reasons, []::VARCHAR[])), "
               f"CASE WHEN {action} IS NOT NULL THEN ['mitigation ' || {reason} || ': at least ' || {minimum}] "
               f"ELSE []::VARCHAR[] END), {reviewed}), "
               f"CASE WHEN {s}.scoring_failure IS NOT NULL THEN ['scoring failed (' || {s}.scoring_failure || '): ' "
               f"|| {failed}] ELSE []::VARCHAR[] END)")
    return {"decision": f"{actions}[{sev} + 1]", "decision_reasons": reasons}


def apply_decision(tx: Transaction, run_id: int, profile: ScoringProfile, policy: MitigationPolicy,
                   authority: str) -> None:
    """Decide every score row of ``run_id`` and store the decision on it, from the row's stored band, failure and
    mitigation, the run's ``score_floors`` and ``authority`` (``authority_found``'s table, the one its mitigation
    read). A score run of the register decides as it writes; this is for rows written elsewhere: a Spark job's."""
    p = Params()
    values = decision_values(p, profile, score="s", action="s.mitigation_action", reason="s.mitigation_reason")
    scored = "r.response_key IN (SELECT response_key FROM scores WHERE run_id = $decided_run)"
    with decision_parts(tx, profile, policy, run_id, authority, scored, {"decided_run": int(run_id)}):
        tx.execute(f"""CREATE OR REPLACE TEMP TABLE _decided_rows AS
            SELECT s.response_key, {values['decision']} AS decision, {values['decision_reasons']} AS decision_reasons
            FROM scores s {parts_join('s')}
            WHERE s.run_id = {p(int(run_id))}""", p.values)
    try:
        tx.execute("UPDATE scores SET decision = u.decision, decision_reasons = u.decision_reasons "
                   "FROM _decided_rows u WHERE scores.run_id = $run AND scores.response_key = u.response_key",
                   {"run": int(run_id)})
    finally:
        tx.execute("DROP TABLE IF EXISTS _decided_rows")
