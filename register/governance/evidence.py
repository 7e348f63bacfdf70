"""The minimum evidence rules (paper Table VIII): versioned data, and every claim evaluated against them.

Called by the evidence rules page (through ``ui.features.governance``), the checklist (checks 1 and 2 read
``evaluate_rules``), the release report and the seeding of the paper register. Saving rules writes a
new version; the newest version approved by a second person is the one in force (four eyes:
``register.access.version_approvals``). ``ensure_default_rules`` makes Table VIII
(``vocabulary.PAPER_RULES``) version 1 of an empty database.
"""

from __future__ import annotations

from datetime import date

import pandas as pd

from register.access import version_approvals
from register.access.permissions import Permission, authorize
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import Problem, ValidationFailed
from register.governance.rows import is_blank, list_value, text_value
from register.governance.vocabulary import (
    CLAIM_TYPES,
    DESIGN_CHOICE,
    HANDLING_STATUSES,
    HANDLINGS,
    NOT_LITERATURE,
    PAPER_RULES,
    PAPER_RULES_AS_WORDED,
    PREPRINT,
    SOURCE_TYPES,
    STATUSES,
    WITHDRAWN_STATUSES,
)

__all__ = ["approve_rules", "current_rule_version", "ensure_default_rules", "evaluate_rules", "list_rules",
           "pending_rule_versions", "rule_versions", "save_rules"]

_RULE_COLUMNS = ("claim_type", "acceptable_source_types", "handling", "guidance", "handled_statuses",
                 "needs_access_date", "preprint_only_without_peer_review", "refused_statuses")
AS_WORDED_REASON = ("paper Table VIII as worded (not reported, no peer-reviewed source, access dates, "
                    "ACCESS_GAP/UNKNOWN)")


KIND = "evidence_rules"  # in approval_steps
# the newest version not waiting for a second person's approval
_IN_FORCE = ("SELECT max(rule_version) FROM evidence_rule_versions v "
             f"WHERE NOT {version_approvals.pending_clause(KIND, 'v.rule_version')}")


def current_rule_version(store: Store | Transaction) -> int | None:
    """The version of the rules in force (the newest approved), or None before any rules exist."""
    return store.scalar(_IN_FORCE)


def rule_versions(store: Store) -> pd.DataFrame:
    """Every rule version, newest first: who wrote it, when and why, and whether it is ``pending`` (waiting
    for a second person) or was approved (``approved_by``)."""
    return store.frame("SELECT rule_version, created_at, created_by, reason, "
                       f"{version_approvals.pending_clause(KIND, 'v.rule_version')} AS pending, "
                       "(SELECT actor_name FROM approval_steps a WHERE a.kind = 'evidence_rules' "
                       "AND a.version = v.rule_version AND a.step = 'approved') AS approved_by "
                       "FROM evidence_rule_versions v ORDER BY rule_version DESC")


def pending_rule_versions(store: Store) -> list[dict]:
    """Rule versions waiting for a second person: version, proposed_by, proposed_role, proposed_at."""
    return version_approvals.pending_versions(store, KIND)


def approve_rules(store: Store, actor: Actor, version: int, reason: str) -> None:
    """A second person (``Permission.RULES_EDIT``, not the one who saved them) puts pending rules in force."""
    authorize(store, actor, Permission.RULES_EDIT, entity_type=KIND, entity_id=version)
    version_approvals.approve(store, actor, KIND, version, reason, Permission.RULES_EDIT,
                              in_force=current_rule_version)


def list_rules(store: Store, version: int | None = None) -> pd.DataFrame:
    """The rules of one version (the one in force by default), one row per claim type."""
    version = version if version is not None else current_rule_version(store)
    return store.frame(f"SELECT rule_version, {', '.join(_RULE_COLUMNS)} "
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
        for field in ("handled_statuses", "refused_statuses"):
            problems += [Problem(n, field, f"{v!r} is not a verification status ({', '.join(STATUSES)})")
                         for v in r[field] or () if v not in STATUSES]
    return problems


def _flag(value) -> bool:
    """A rule's yes/no field from an edited table: blank (None, NaN, NA) is no."""
    return False if is_blank(value) else bool(value)


def _statuses(value) -> list[str] | None:
    """None keeps version 1's handling mapping (a rule saved without the field); a list is the rule's own."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    return list_value(value)  # a blank cell of an edited list is an empty list: no status


def save_rules(store: Store, actor: Actor, rules: list[dict], reason: str) -> int:
    """Write ``rules`` as a new version: claim_type, acceptable_source_types, handling, guidance, and
    (optional) handled_statuses (the statuses that show the handling applied; absent: version 1's mapping
    ``HANDLING_STATUSES``), needs_access_date, preprint_only_without_peer_review, refused_statuses.

    Four eyes: a person's version is pending until a different person approves it (``approve_rules``); the
    ``system`` role's and the very first version are in force at once
    (``version_approvals.takes_effect_at_once``)."""
    return _save_rules(store, actor, rules, reason, set_up=False)


def _save_rules(store: Store, actor: Actor, rules: list[dict], reason: str, *, set_up: bool) -> int:
    """``save_rules``; ``set_up``: the paper's own rules installed by ``ensure_default_rules``, in force at once."""
    authorize(store, actor, Permission.RULES_EDIT, entity_type="evidence_rules")
    rules = [{"claim_type": text_value(r.get("claim_type")),
              "acceptable_source_types": list_value(r.get("acceptable_source_types")),
              "handling": list_value(r.get("handling")), "guidance": text_value(r.get("guidance")),
              "handled_statuses": _statuses(r.get("handled_statuses")),
              "needs_access_date": _flag(r.get("needs_access_date")),
              "preprint_only_without_peer_review": _flag(r.get("preprint_only_without_peer_review")),
              "refused_statuses": _statuses(r.get("refused_statuses")) or []} for r in rules]
    problems = _rule_problems(rules)
    if not (reason or "").strip():
        problems.append(Problem(None, "reason", "say why the rules change"))
    if problems:
        raise ValidationFailed(problems)

    at_once = set_up or version_approvals.takes_effect_at_once(actor, current_rule_version(store))

    def fn(tx: Transaction) -> Change:
        previous = current_rule_version(tx)
        before = None
        if previous is not None:
            before = tx.dicts(f"SELECT {', '.join(_RULE_COLUMNS)} FROM evidence_rules WHERE rule_version = ? "
                              "ORDER BY claim_type", [previous])
        version = int(tx.scalar("SELECT coalesce(max(rule_version), 0) + 1 FROM evidence_rule_versions"))
        tx.execute("INSERT INTO evidence_rule_versions VALUES (?, ?, ?, ?)",
                   [version, utc_now(), actor.name, reason.strip()])
        for r in rules:
            tx.execute(f"INSERT INTO evidence_rules (rule_version, {', '.join(_RULE_COLUMNS)}) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [version, *(r[c] for c in _RULE_COLUMNS)])
        if not at_once:
            version_approvals.record_proposal(tx, KIND, version, actor)
        return Change("evidence_rules", str(version), before, rules, result=version)

    return store.write(actor, "evidence_rules.publish" if at_once else "evidence_rules.propose", fn)


def _as_worded_rows() -> list[dict]:
    return [{**rule._asdict(), "acceptable_source_types": list(rule.acceptable_source_types),
             "handling": list(rule.handling), "handled_statuses": list(rule.handled_statuses),
             "refused_statuses": list(rule.refused_statuses)} for rule in PAPER_RULES_AS_WORDED]


def _first_reading(rows: list[dict]) -> bool:
    """Are these rules exactly version 1's reading of Table VIII (``PAPER_RULES``), untouched by anyone?"""
    def key(r):
        handled = _statuses(r.get("handled_statuses"))
        return (r["claim_type"], tuple(list_value(r["acceptable_source_types"])), tuple(list_value(r["handling"])),
                r["guidance"], None if handled is None else tuple(handled), _flag(r.get("needs_access_date")),
                _flag(r.get("preprint_only_without_peer_review")), tuple(_statuses(r.get("refused_statuses")) or ()))
    first = [{"claim_type": t, "acceptable_source_types": a, "handling": h, "guidance": g}
             for t, a, h, g in PAPER_RULES]
    return sorted(map(key, rows)) == sorted(map(key, first))


def ensure_default_rules(store: Store, actor: Actor) -> int:
    """The paper's Table VIII as the rules in force: version 1 (``PAPER_RULES``) when no rules exist yet, then
    Table VIII as worded (``PAPER_RULES_AS_WORDED``) as the next version while the rules in force are still
    version 1's untouched reading. Rules someone edited are left alone. Returns the version in force. The
    paper's own text is set-up, not a person's change: in force at once, whoever runs it.
    Needs ``Permission.RULES_EDIT`` even when the rules exist: it is a write whether or not there is
    something to do."""
    authorize(store, actor, Permission.RULES_EDIT, entity_type="evidence_rules")
    version = current_rule_version(store)
    if version is None:
        version = _save_rules(store, actor, [{"claim_type": t, "acceptable_source_types": list(a),
                                              "handling": list(h), "guidance": g} for t, a, h, g in PAPER_RULES],
                              "paper Table VIII (minimum evidence rules)", set_up=True)
    if _first_reading(list_rules(store, version).to_dict("records")):
        version = _save_rules(store, actor, _as_worded_rows(), AS_WORDED_REASON, set_up=True)
    return version


def evaluate_rules(store: Store, version: int | None = None, *, today: date | None = None) -> pd.DataFrame:
    """Every register claim against the rules in force: compliant, or violation with the required handling.

    One SQL statement. A claim complies when it is withdrawn (not claimed / removed), or -- unless it carries
    a status its rule refuses (the paper's own contribution marked verified) -- has a linked, current (not
    expired, not superseded, not deleted) source of an acceptable type (with its access date when the rule
    needs one; a preprint only when the claim says no peer-reviewed source exists, when the rule says so),
    or carries a status that shows the required handling was applied (the rule's ``handled_statuses``;
    version 1's rules, without them, read ``HANDLING_STATUSES``: e.g. hypothesis).
    """
    version = version if version is not None else current_rule_version(store)
    handling, status = zip(*HANDLING_STATUSES, strict=True)
    return store.frame("""
        WITH c AS (SELECT * FROM register_claims WHERE NOT deleted),
        r AS (SELECT * FROM evidence_rules WHERE rule_version = $version),
        hs AS (SELECT unnest($handling) AS handling, unnest($status) AS status),
        links AS (SELECT claim_key, unnest(source_ids) AS source_id FROM c),
        linked AS (
            SELECT l.claim_key, s.source_id, s.source_type,
                   list_contains(r.acceptable_source_types, s.source_type)
                   AND (s.valid_until IS NULL OR s.valid_until >= $today) AND s.superseded_by IS NULL AS usable,
                   coalesce(r.needs_access_date, false) AND s.access_date IS NULL AS undated,
                   s.source_type = $preprint AND coalesce(r.preprint_only_without_peer_review, false)
                   AND NOT coalesce(c.no_peer_reviewed_source, false) AS preprint_barred
            FROM links l JOIN c ON c.claim_key = l.claim_key
            JOIN r ON r.claim_type = c.claim_type
            JOIN sources s ON s.source_id = l.source_id AND NOT s.deleted),
        ok AS (
            SELECT claim_key, string_agg(source_id, '; ' ORDER BY source_id) AS acceptable_sources
            FROM linked WHERE usable AND NOT undated AND NOT preprint_barred GROUP BY claim_key),
        barred AS (
            SELECT claim_key,
                   string_agg(source_id, ', ' ORDER BY source_id) FILTER (WHERE usable AND undated) AS undated,
                   string_agg(source_id, ', ' ORDER BY source_id) FILTER (WHERE usable AND preprint_barred) AS preprints
            FROM linked GROUP BY claim_key),
        handled AS (
            SELECT DISTINCT c.claim_key FROM c JOIN r ON r.claim_type = c.claim_type
            LEFT JOIN hs ON r.handled_statuses IS NULL AND list_contains(r.handling, hs.handling)
                 AND hs.status = c.verification_status
            WHERE list_contains(r.handled_statuses, c.verification_status) OR hs.status IS NOT NULL),
        refused AS (
            SELECT c.claim_key FROM c JOIN r ON r.claim_type = c.claim_type
            WHERE list_contains(r.refused_statuses, c.verification_status)),
        e AS (
            SELECT c.*, r.claim_type AS rule_type, r.acceptable_source_types, r.handling, r.guidance,
                   list_contains($withdrawn, c.verification_status) AS withdrawn,
                   refused.claim_key IS NOT NULL AS refused,
                   ok.acceptable_sources, handled.claim_key IS NOT NULL AS handled, barred.undated, barred.preprints
            FROM c LEFT JOIN r ON r.claim_type = c.claim_type
            LEFT JOIN ok ON ok.claim_key = c.claim_key
            LEFT JOIN handled ON handled.claim_key = c.claim_key
            LEFT JOIN refused ON refused.claim_key = c.claim_key
            LEFT JOIN barred ON barred.claim_key = c.claim_key)
        SELECT claim_key, statement, claim_type, verification_status, source_ids,
               CASE WHEN withdrawn OR (NOT refused AND (acceptable_sources IS NOT NULL OR handled))
                    THEN 'compliant' ELSE 'violation' END AS outcome,
               CASE WHEN withdrawn THEN 'withdrawn: ' || verification_status
                    WHEN refused THEN 'marked ' || verification_status || ': a claim of this type may not be; '
                                      || CASE WHEN claim_type = $design THEN 'an original contribution is '
                                              || $not_literature || ', not a verified literature claim'
                                         ELSE 'change its status' END
                    WHEN acceptable_sources IS NOT NULL THEN 'acceptable source: ' || acceptable_sources
                    WHEN handled THEN 'handled: marked ' || verification_status
                    WHEN rule_type IS NULL THEN 'no rule for this claim type'
                    ELSE concat_ws('; ',
                         'no acceptable source; needs one of: ' || array_to_string(acceptable_source_types, ', '),
                         CASE WHEN undated IS NOT NULL THEN 'without an access date: ' || undated END,
                         CASE WHEN preprints IS NOT NULL THEN 'a preprint counts only when no peer-reviewed source '
                              || 'exists (the claim does not say so): ' || preprints END)
               END AS reason,
               CASE WHEN withdrawn OR (NOT refused AND (acceptable_sources IS NOT NULL OR handled)) THEN NULL
                    ELSE array_to_string(handling, ' / ') END AS required_handling,
               guidance, $version AS rule_version
        FROM e
        ORDER BY outcome DESC, created_at, claim_key""",
        {"version": version, "handling": list(handling), "status": list(status), "today": today or date.today(),
         "withdrawn": list(WITHDRAWN_STATUSES), "preprint": PREPRINT, "design": DESIGN_CHOICE,
         "not_literature": NOT_LITERATURE})
