"""The minimum evidence rules (paper Table VIII): versioned data, and every claim evaluated against them.

Called by the evidence rules page (through ``ui.governance``), the checklist (checks 1 and 2 read
``evaluate_rules``), the release report and the seeding of the paper register. Saving rules writes a
new version; the newest version is the one in force. ``ensure_default_rules`` makes Table VIII
(``vocabulary.PAPER_RULES``) version 1 of an empty database.
"""

from __future__ import annotations

from datetime import date

import pandas as pd

from register.access.permissions import Permission, authorize
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import Problem, ValidationFailed
from register.governance.rows import list_value, text_value
from register.governance.vocabulary import (
    CLAIM_TYPES,
    HANDLING_STATUSES,
    HANDLINGS,
    PAPER_RULES,
    SOURCE_TYPES,
    WITHDRAWN_STATUSES,
)

__all__ = ["current_rule_version", "ensure_default_rules", "evaluate_rules", "list_rules", "rule_versions",
           "save_rules"]

_RULE_COLUMNS = ("claim_type", "acceptable_source_types", "handling", "guidance")


def current_rule_version(store: Store) -> int | None:
    """The version of the rules in force (the newest), or None before any rules exist."""
    return store.scalar("SELECT max(rule_version) FROM evidence_rule_versions")


def rule_versions(store: Store) -> pd.DataFrame:
    """Every rule version, newest first: who wrote it, when and why."""
    return store.frame("SELECT rule_version, created_at, created_by, reason FROM evidence_rule_versions "
                       "ORDER BY rule_version DESC")


def list_rules(store: Store, version: int | None = None) -> pd.DataFrame:
    """The rules of one version (the one in force by default), one row per claim type."""
    version = version if version is not None else current_rule_version(store)
    return store.frame("SELECT rule_version, claim_type, acceptable_source_types, handling, guidance "
                       "FROM evidence_rules WHERE rule_version = ? ORDER BY claim_type", [version])


def _rule_problems(rules: list[dict]) -> list[Problem]:
    problems = []
    seen = set()
    for n, r in enumerate(rules, start=1):
        if r["claim_type"] not in CLAIM_TYPES:
            problems.append(Problem(n, "claim_type", f"{r['claim_type']!r} is not one of: {', '.join(CLAIM_TYPES)}"))
        elif r["claim_type"] in seen:
            problems.append(Problem(n, "claim_type", f"{r['claim_type']} has two rules"))
        seen.add(r["claim_type"])
        if not r["acceptable_source_types"]:
            problems.append(Problem(n, "acceptable_source_types", "name at least one source type"))
        problems += [Problem(n, "acceptable_source_types", f"{t!r} is not a source type")
                     for t in r["acceptable_source_types"] if t not in SOURCE_TYPES]
        if not r["handling"]:
            problems.append(Problem(n, "handling", "name the required handling"))
        problems += [Problem(n, "handling", f"{h!r} is not one of: {', '.join(HANDLINGS)}")
                     for h in r["handling"] if h not in HANDLINGS]
    return problems


def save_rules(store: Store, actor: Actor, rules: list[dict], reason: str) -> int:
    """Write ``rules`` (claim_type, acceptable_source_types, handling, guidance) as a new version in force."""
    authorize(store, actor, Permission.RULES_EDIT, entity_type="evidence_rules")
    rules = [{"claim_type": text_value(r.get("claim_type")),
              "acceptable_source_types": list_value(r.get("acceptable_source_types")),
              "handling": list_value(r.get("handling")), "guidance": text_value(r.get("guidance"))} for r in rules]
    problems = _rule_problems(rules)
    if not (reason or "").strip():
        problems.append(Problem(None, "reason", "say why the rules change"))
    if problems:
        raise ValidationFailed(problems)

    def fn(tx: Transaction) -> Change:
        previous = tx.scalar("SELECT max(rule_version) FROM evidence_rule_versions")
        before = None
        if previous is not None:
            before = tx.dicts(f"SELECT {', '.join(_RULE_COLUMNS)} FROM evidence_rules WHERE rule_version = ? "
                              "ORDER BY claim_type", [previous])
        version = (previous or 0) + 1
        tx.execute("INSERT INTO evidence_rule_versions VALUES (?, ?, ?, ?)",
                   [version, utc_now(), actor.name, reason.strip()])
        for r in rules:
            tx.execute("INSERT INTO evidence_rules (rule_version, claim_type, acceptable_source_types, handling, "
                       "guidance) VALUES (?, ?, ?, ?, ?)",
                       [version, r["claim_type"], r["acceptable_source_types"], r["handling"], r["guidance"]])
        return Change("evidence_rules", str(version), before, rules, result=version)

    return store.write(actor, "evidence_rules.publish", fn)


def ensure_default_rules(store: Store, actor: Actor) -> int:
    """The paper's Table VIII as rule version 1 when no rules exist yet."""
    version = current_rule_version(store)
    if version is not None:
        return version
    return save_rules(store, actor, [{"claim_type": t, "acceptable_source_types": list(a), "handling": list(h),
                                      "guidance": g} for t, a, h, g in PAPER_RULES],
                      "paper Table VIII (minimum evidence rules)")


def evaluate_rules(store: Store, version: int | None = None, *, today: date | None = None) -> pd.DataFrame:
    """Every register claim against the rules in force: compliant, or violation with the required handling.

    One SQL statement. A claim complies when it is withdrawn (not claimed / removed), has a linked,
    current (not expired, not superseded, not deleted) source of an acceptable type, or carries the
    verification status that shows the required handling was applied (e.g. hypothesis).
    """
    version = version if version is not None else current_rule_version(store)
    handling, status = zip(*HANDLING_STATUSES, strict=True)
    return store.frame("""
        WITH c AS (SELECT * FROM register_claims WHERE NOT deleted),
        r AS (SELECT * FROM evidence_rules WHERE rule_version = $version),
        hs AS (SELECT unnest($handling) AS handling, unnest($status) AS status),
        links AS (SELECT claim_key, unnest(source_ids) AS source_id FROM c),
        ok AS (
            SELECT l.claim_key,
                   string_agg(s.source_id, '; ' ORDER BY s.source_id) AS acceptable_sources
            FROM links l JOIN c ON c.claim_key = l.claim_key
            JOIN r ON r.claim_type = c.claim_type
            JOIN sources s ON s.source_id = l.source_id AND NOT s.deleted
                 AND list_contains(r.acceptable_source_types, s.source_type)
                 AND (s.valid_until IS NULL OR s.valid_until >= $today) AND s.superseded_by IS NULL
            GROUP BY l.claim_key),
        handled AS (
            SELECT DISTINCT c.claim_key FROM c JOIN r ON r.claim_type = c.claim_type
            JOIN hs ON list_contains(r.handling, hs.handling) AND hs.status = c.verification_status)
        SELECT c.claim_key, c.statement, c.claim_type, c.verification_status, c.source_ids,
               CASE WHEN list_contains($withdrawn, c.verification_status) OR ok.claim_key IS NOT NULL
                         OR handled.claim_key IS NOT NULL THEN 'compliant' ELSE 'violation' END AS outcome,
               CASE WHEN list_contains($withdrawn, c.verification_status) THEN 'withdrawn: ' || c.verification_status
                    WHEN ok.claim_key IS NOT NULL THEN 'acceptable source: ' || ok.acceptable_sources
                    WHEN handled.claim_key IS NOT NULL THEN 'handled: marked ' || c.verification_status
                    WHEN r.claim_type IS NULL THEN 'no rule for this claim type'
                    ELSE 'no acceptable source; needs one of: ' || array_to_string(r.acceptable_source_types, ', ')
               END AS reason,
               CASE WHEN list_contains($withdrawn, c.verification_status) OR ok.claim_key IS NOT NULL
                         OR handled.claim_key IS NOT NULL THEN NULL
                    ELSE array_to_string(r.handling, ' / ') END AS required_handling,
               r.guidance, $version AS rule_version
        FROM c LEFT JOIN r ON r.claim_type = c.claim_type
        LEFT JOIN ok ON ok.claim_key = c.claim_key
        LEFT JOIN handled ON handled.claim_key = c.claim_key
        ORDER BY outcome DESC, c.created_at, c.claim_key""",
        {"version": version, "handling": list(handling), "status": list(status), "today": today or date.today(),
         "withdrawn": list(WITHDRAWN_STATUSES)})
