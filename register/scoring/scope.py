"""CLAIM's Scope check over the register: every current answer against the approved-use-case register, in one query.

The paper's pipeline starts with a Scope check (Fig. 1); Table II's S dimension is "outside the approved use case".
An answer is out of scope when its use case is unknown to the register (``use_case_register``, migration 049: its
live rows), not approved yet (proposed), suspended, retired, or approved but past its review-by date; a claim is out
of scope when its category is not among its use case's ``allowed_categories`` (a use case that lists none restricts
none; an uncategorised claim is not judged). Each such finding carries its reason and a *proposed* OUT_OF_SCOPE label
(the S dimension's) for a person to confirm, as an Authority finding carries its proposed label
(``register.scoring.authority``; ``findings`` lists both, ``python -m register authority check`` prints them). No
label is rewritten by the check.

A register with no use cases at all finds nothing (a team that keeps none sees no change). The decision part of the
check (at least review for a suspended, retired or unknown use case) is made when the answer is scored:
``hri_core.decision.scope_finding`` and ``register.scoring.decision.scope_held_select``.

Called by ``register.scoring.authority.findings``, the overview (``scope_overview``) and the checklist
(``register.governance.checks``).
"""

from __future__ import annotations

from datetime import date

from hri_core.vocabulary import (
    USE_CASE_APPROVED,
    USE_CASE_PROPOSED,
    USE_CASE_RETIRED,
    USE_CASE_SUSPENDED,
    Label,
)
from register.db.sql import Params

__all__ = ["CHECK", "OUTSIDE_CATEGORIES", "PROBLEMS", "REVIEW_OVERDUE", "SCOPE_STATUSES", "UNKNOWN_USE_CASE",
           "answer_scope_select", "scope_findings_select"]

CHECK = "scope"  # the ``check`` column of its findings, beside Authority's allowed / current / authoritative
UNKNOWN_USE_CASE, NOT_APPROVED = "unknown use case", "use case not approved"
SUSPENDED, RETIRED = "use case suspended", "use case retired"
REVIEW_OVERDUE, OUTSIDE_CATEGORIES = "review date passed", "category outside the use case"
PROBLEMS = (UNKNOWN_USE_CASE, NOT_APPROVED, SUSPENDED, RETIRED, REVIEW_OVERDUE, OUTSIDE_CATEGORIES)
# an answer's scope status (the overview's breakdown), in this order; "in scope" is approved and within its date
IN_SCOPE, OVERDUE, UNKNOWN, NO_REGISTER = "in scope", "approved, review overdue", "unknown", "no use-case register"
SCOPE_STATUSES = (IN_SCOPE, OVERDUE, USE_CASE_PROPOSED, USE_CASE_SUSPENDED, USE_CASE_RETIRED, UNKNOWN)


def answer_scope_select(p: Params, today: date, answers: str) -> str:
    """SELECT of one row per answer of ``answers`` (a relation with response_key and use_case): response_key,
    use_case, scope_status (one of ``SCOPE_STATUSES``; ``NO_REGISTER`` when the register has no live row), problem
    (one of ``PROBLEMS`` but the category one, NULL in scope) and reason (a sentence, NULL in scope)."""
    day = f"{p(today)}::DATE"
    return f"""
    SELECT a.response_key, a.use_case,
           CASE WHEN NOT EXISTS (SELECT 1 FROM use_case_register WHERE NOT deleted) THEN {p(NO_REGISTER)}
                WHEN u.use_case_id IS NULL THEN {p(UNKNOWN)}
                WHEN u.status = {p(USE_CASE_APPROVED)} AND u.review_by < {day} THEN {p(OVERDUE)}
                WHEN u.status = {p(USE_CASE_APPROVED)} THEN {p(IN_SCOPE)}
                ELSE u.status END AS scope_status,
           CASE WHEN NOT EXISTS (SELECT 1 FROM use_case_register WHERE NOT deleted) THEN NULL
                WHEN u.use_case_id IS NULL THEN {p(UNKNOWN_USE_CASE)}
                WHEN u.status = {p(USE_CASE_PROPOSED)} THEN {p(NOT_APPROVED)}
                WHEN u.status = {p(USE_CASE_SUSPENDED)} THEN {p(SUSPENDED)}
                WHEN u.status = {p(USE_CASE_RETIRED)} THEN {p(RETIRED)}
                WHEN u.review_by < {day} THEN {p(REVIEW_OVERDUE)} END AS problem,
           CASE WHEN NOT EXISTS (SELECT 1 FROM use_case_register WHERE NOT deleted) THEN NULL
                WHEN a.use_case IS NULL THEN 'the answer names no use case; the use-case register lists its own'
                WHEN u.use_case_id IS NULL THEN 'use case ' || a.use_case || ' is not in the use-case register'
                WHEN u.status = {p(USE_CASE_PROPOSED)}
                     THEN 'use case ' || a.use_case || ' is proposed, not approved yet'
                WHEN u.status IN ({p(USE_CASE_SUSPENDED)}, {p(USE_CASE_RETIRED)})
                     THEN 'use case ' || a.use_case || ' is ' || u.status
                WHEN u.review_by < {day} THEN 'use case ' || a.use_case || ' was to be reviewed by '
                     || strftime(u.review_by, '%Y-%m-%d') END AS reason
    FROM {answers} a LEFT JOIN use_case_register u ON u.use_case_id = a.use_case AND NOT u.deleted"""


def scope_findings_select(p: Params, today: date) -> str:
    """SELECT of one row per Scope finding of the current answers, in ``register.scoring.authority.findings``'
    columns: response_id, revision, response_key, claim_idx and claim_id and claim (NULL for a finding on the whole
    answer), source_id (NULL), check (``CHECK``), problem (``PROBLEMS``), reason, proposed_label (OUT_OF_SCOPE; None
    when the claim already carries it). Empty while the register has no live row."""
    oos = p(Label.OUT_OF_SCOPE.value)
    answers = "(SELECT response_key, use_case FROM responses WHERE is_current)"
    return f"""
    WITH sc AS ({answer_scope_select(p, today, answers)}),
    reg AS (SELECT use_case_id, allowed_categories FROM use_case_register
            WHERE NOT deleted AND len(allowed_categories) > 0)
    SELECT r.response_id, r.revision, r.response_key, NULL::INTEGER AS claim_idx, NULL::VARCHAR AS claim_id,
           NULL::VARCHAR AS claim, NULL::VARCHAR AS source_id, {p(CHECK)} AS "check", sc.problem, sc.reason,
           {oos} AS proposed_label
    FROM sc JOIN responses r ON r.response_key = sc.response_key
    WHERE sc.problem IS NOT NULL
    UNION ALL
    SELECT c.response_id, c.revision, c.response_key, c.claim_idx, c.claim_id, c.text, NULL, {p(CHECK)},
           {p(OUTSIDE_CATEGORIES)},
           'category ' || c.category || ' is not among use case ' || u.use_case_id || '''s allowed categories ('
           || array_to_string(u.allowed_categories, ', ') || ')',
           CASE WHEN NOT list_contains(c.labels, {oos}) THEN {oos} END
    FROM claims c JOIN responses r ON r.response_key = c.response_key AND r.is_current
    JOIN reg u ON u.use_case_id = r.use_case
    WHERE c.is_current AND c.category IS NOT NULL AND NOT list_contains(u.allowed_categories, c.category)"""
