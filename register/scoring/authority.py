"""CLAIM's Authority step over the register: every sourced claim of every current answer, in one query.

For each current claim with a ``source_id`` -- at its answer's time (``responses.created_at``, else the
scoring time of its current score, else now) and against the *current* source register (deleted rows
are unknown) -- the three questions of ``hri_core.authority`` (its docstring quotes seed 004):

* allowed: the source's ``restricted_to`` against the requester roles of the response's use case
  (``register.scoring.authority_rules``); restricted and the use case not listed: undecided;
* current: not superseded, and ``valid_until`` (a DATE, inclusive in UTC unless the rules say
  otherwise) not passed at the answer's time;
* authoritative: the source's ``authority_tier`` and/or ``source_type`` within the rule of the claim's
  category (``uncategorised`` without one).

No check is stored: the checks are a query (over the claims, or over what they read of them, kept in step by
every write: ``register.readmodels.claim_counts``), so superseding or restricting a source shows at once, and
a claim's labels are never rewritten. A SUPPORTED claim that fails a check gets a *proposed* label
(ACCESS_GAP when not allowed, OUTDATED when stale, "needs review" when authority is insufficient or a
check is undecided or the source is unknown), as ``hri_core.authority.check_claim`` proposes it (a
parity test holds the two equal). A response whose SUPPORTED claim rests on a source that *failed* a
check -- forbidden, stale or of insufficient authority -- joins the review queue
(``register.console.queries.queue.flag_queued``). An unknown source or an undecided check is flagged, shown,
counted and listed by the CLI and the checklist, but queues nothing: the answer is not known to be wrong,
the register is incomplete (the demo's answers cite web pages the source register does not list), and
its keepers complete it (record the source, its tier, the use case's requesters).

The claim's category is the stored ``claims.category`` (normalised by ``hri_core.models`` at import,
migration 009); a claim without one is uncategorised.

Called by the console queries (responses page, detail, queue, overview), the checklist and
``python -m register authority check``.
"""

from __future__ import annotations

from datetime import datetime

import pandas as pd

from hri_core.authority import NEEDS_REVIEW, AuthorityRules
from hri_core.vocabulary import LABEL_BIT, Label
from register.db.sql import Params
from register.db.store import Store, utc_now
from register.scoring.authority_rules import authority_rules, requester_roles
from register.scoring.scope import scope_findings_select

__all__ = ["ACCESS_UNDECIDED", "AUTHORITY_UNDECIDED", "CHECK_NAMES", "FILTERS", "FORBIDDEN", "INSUFFICIENT",
           "PROBLEMS", "STALE", "UNKNOWN", "claim_checks", "claim_checks_select", "findings",
           "findings_select", "flagged_counted", "response_authority_select", "review_keys_select", "cited_sources",
           "dated_source_cited",
           "may_fail_cited"]

# What a failed (False) or undecided (None) check is called on the pages, in the CLI and the checklist.
UNKNOWN, FORBIDDEN, ACCESS_UNDECIDED = "unknown source", "forbidden source", "access undecided"
STALE, INSUFFICIENT, AUTHORITY_UNDECIDED = "stale source", "insufficient authority", "authority undecided"
PROBLEMS = (UNKNOWN, FORBIDDEN, ACCESS_UNDECIDED, STALE, INSUFFICIENT, AUTHORITY_UNDECIDED)
# the check each problem belongs to (the CLI's ``check`` field)
CHECK_NAMES = {UNKNOWN: "source", FORBIDDEN: "allowed", ACCESS_UNDECIDED: "allowed", STALE: "current",
               INSUFFICIENT: "authoritative", AUTHORITY_UNDECIDED: "authoritative"}
# the responses page's Authority filter: value -> what it keeps
FILTERS = ("any finding", "proposed label", *PROBLEMS)


def _may_fail(p: Params, rules: AuthorityRules) -> str:
    """SELECT of the source ids that can fail a check (not merely be undecided) under ``rules``: superseded, with
    a valid-until date, restricted, of a tier above some rule's largest, or (when a rule names source types)
    any. The review queue reads only the claims resting on these: in a register whose sources are all
    current and strong, it reads none."""
    all_rules = [*rules.rules.values(), rules.uncategorised]
    tiers = [r.max_tier for r in all_rules if r.max_tier is not None]
    typed = any(r.source_types for r in all_rules)
    tier = f" OR authority_tier > {p(min(tiers))}" if tiers else ""
    return ("SELECT source_id FROM sources WHERE NOT deleted AND (" + ("true" if typed else
            f"nullif(trim(superseded_by), '') IS NOT NULL OR valid_until IS NOT NULL "
            f"OR len(coalesce(restricted_to, [])) > 0{tier}") + ")")


def _never_flagged(p: Params, rules: AuthorityRules) -> str:
    """SELECT of the registered source ids whose three checks pass whatever claim cites them under ``rules``: those
    that cannot fail (not ``_may_fail``) and, when a rule reads a tier, have one (else authority is undecided)."""
    tiers = any(r.max_tier is not None for r in [*rules.rules.values(), rules.uncategorised])
    return (f"SELECT source_id FROM sources WHERE NOT deleted AND source_id NOT IN ({_may_fail(p, rules)})"
            + (" AND authority_tier IS NOT NULL" if tiers else ""))


def _labels(p: Params) -> tuple[str, str, str, str]:
    """Placeholders of the labels the checks read and propose (vocabulary values are bound, never typed)."""
    return p(Label.ACCESS_GAP.value), p(Label.OUTDATED.value), p(Label.SUPPORTED.value), p(NEEDS_REVIEW)


def claim_checks_select(p: Params, rules: AuthorityRules, roles: dict[str, tuple[str, ...]], now: datetime,
                        *, response_key: int | None = None, keys: str | None = None, supported_only: bool = False,
                        failing_only: bool = False, grouped_over: str | None = None,
                        over_every_current: bool = False, use_cases: tuple[str, ...] = (),
                        models: tuple[str, ...] = (), any_dated: bool = True, answers: str | None = None,
                        flaggable_only: bool = False) -> str:
    """SELECT of one row per current sourced claim (or those of one revision, ``response_key``) with its checks.

    Narrower selections, for the queries that read only part of it: ``keys`` (a SELECT of response keys: those
    responses only), ``supported_only`` (SUPPORTED claims), ``failing_only`` (SUPPORTED claims on a source that
    can fail a check: superseded, dated, restricted, or weaker than some rule allows -- ``_may_fail``; for finding
    the answers to review, so their rows carry the response key and the checks only: response_id, revision,
    claim_idx, claim_id and text are NULL, and ``labels`` are read from the claims' bit masks with a NULL in place
    of each absent label).

    Columns: response_id, revision, response_key, claim_idx, claim_id, text, labels (and their bits, label_mask),
    source_id,
    category, rule (the rule applied), answered_at, use_case (the answer's; counted: only where a restricted source's
    check reads it), unknown_source, allowed / current / authoritative (BOOLEAN,
    NULL undecided) each with a ``*_reason``, supported, problems (``PROBLEMS`` found, in order),
    proposals (labels proposed, in order: ACCESS_GAP, OUTDATED, needs review), to_review (a proposal that
    comes from a failed check: the answer goes to the review queue), authority (one line: "stale source,
    proposed OUTDATED; ...", or "ok"), n (the claims the row stands for: 1).

    ``grouped_over`` (a relation of responses with response_key, use_case, created_at and as_of, the as-of
    time of each one's current score): the checks of those responses' current sourced claims *counted*, not
    listed -- one row per distinct input of the checks (source, category, labels, use case, and the answer's
    time for a source with a valid-until date, the only check that reads it) with ``n`` claims; the
    per-claim columns (response_id .. text) are NULL. The checks themselves are the same expressions, so
    the counts equal those of the listed rows (a test holds them equal), at a fraction of the cost: the
    SUPPORTED sourced claims cite few sources, so millions of them become a few thousand rows.
    ``answers``: a relation of the responses whose claims are listed (response_key, use_case, created_at and as_of,
    the as-of time of each one's current score), read for the answer's time and use case instead of joining the
    responses and their current scores (with a much-cited dated source, those two joins were most of the Authority
    figures' time).
    ``over_every_current``: the caller knows ``grouped_over`` holds every current response (of ``use_cases`` and
    ``models`` when given), so the claims of sources without a valid-until date are read from their counts
    (``claim_source_counts``, by use case and model since migration 025: a restricted source's check reads the use
    case, which the counts hold; nothing else of the response is read but a dated source's answer time) instead
    of joining every claim to it (the join was most of the query's time). A dated source's claims are read from
    there too, by their answer's creation day (migration 031: the check compares the answer's time with a midnight
    in UTC, so the day decides it exactly) -- all but those of answers without a creation time, checked at their
    current score's as-of time, which are joined. ``any_dated``: False when the caller has found no current claim
    of such an answer citing a dated source (``dated_source_cited(store, untimed=True)``) -- then no claim is
    joined to the responses at all (the join built its hash table of the filtered responses even when it found no
    claim). The figures behind these choices: docs/performance.md, "Figures behind the code".
    ``flaggable_only`` (with ``answers``, for a score run's decision): the claims, of any label, whose source can
    fail a check, be undecided or is unknown (``_never_flagged`` are left out), with three more columns, is_core,
    criticality and span: a claim on a registered, current, unrestricted, strong source is not read.
    """
    gap, outdated, supported, review = _labels(p)
    names = list(rules.rules)
    rule_keys = p([*names, "uncategorised"])
    tiers = p([*(rules.rules[n].max_tier for n in names), rules.uncategorised.max_tier])
    types = p([list(rules.rules[n].source_types or ()) for n in names] + [list(rules.uncategorised.source_types or ())])
    uc_names, uc_roles = p(list(roles)), p([list(v) for v in roles.values()])
    extra_day = p(1 if rules.valid_until_inclusive else 0)
    bound = p("inclusive" if rules.valid_until_inclusive else "exclusive")
    # one revision: its claims whether or not it is still the current one (the detail page shows old ones too)
    key = None if response_key is None else p(int(response_key))
    which = "c.is_current" if key is None else f"c.response_key = {key}"
    if keys is not None:  # the caller's responses only (a page of them): the checks of the rest are not read
        which += f" AND c.response_key IN ({keys})"
    table_where = None  # the condition on claim_source_counts standing for ``which`` (over_every_current)
    if over_every_current:
        if grouped_over is None or keys is not None or failing_only or key is not None:
            raise ValueError("over_every_current counts every current claim: grouped_over only, no narrower set")
        table_where = f"(label_mask & {p(LABEL_BIT[Label.SUPPORTED])}) <> 0" if supported_only else "true"
        if use_cases:  # as the console's filter reads them (register.console.queries.filters.group_conditions)
            table_where += f" AND use_case IN {p.in_list(use_cases)}"
        if models:
            table_where += f" AND model IN {p.in_list(models)}"
    if supported_only or failing_only:  # by the labels' bit mask: reading the label lists was slow
        which += f" AND (c.label_mask & {p(LABEL_BIT[Label.SUPPORTED])}) <> 0"
    if failing_only:
        which += f" AND c.source_id IN ({_may_fail(p, rules)})"
    if flaggable_only:
        if answers is None or grouped_over is not None or failing_only:
            raise ValueError("flaggable_only lists the claims of the caller's answers")
        which += f" AND c.source_id NOT IN ({_never_flagged(p, rules)})"
    missing = "'source ''' || source_id || ''' is not in the source register'"
    tier_failed = ("CASE WHEN tier_state = 'failed' THEN 'tier ' || authority_tier || ' is weaker than the tier <= ' "
                   "|| max_tier || ' required for ' || rule || ' claims' END")
    type_failed = ("CASE WHEN type_state = 'failed' THEN 'a ' || source_type || ' is not acceptable for ' || rule "
                   "|| ' claims (acceptable: ' || array_to_string(rule_types, ', ') || ')' END")
    tier_undecided = ("CASE WHEN tier_state = 'undecided' THEN 'no authority tier recorded (' || rule "
                      "|| ' claims need tier <= ' || max_tier || ')' END")
    type_undecided = ("CASE WHEN type_state = 'undecided' THEN 'no source type recorded (' || rule "
                      "|| ' claims need one of ' || array_to_string(rule_types, ', ') || ')' END")
    return f"""
    WITH rl AS (SELECT unnest({rule_keys}::VARCHAR[]) AS rule_key, unnest({tiers}::INTEGER[]) AS max_tier,
                       unnest({types}::VARCHAR[][]) AS source_types),
    uc AS (SELECT unnest({uc_names}::VARCHAR[]) AS use_case, unnest({uc_roles}::VARCHAR[][]) AS roles),
    {_claims_part(p, which, now, supported, grouped_over, table_where, any_dated, answers, narrow=failing_only,
                  claim_columns=flaggable_only)},
    j AS (
        SELECT cl.*, coalesce(rc.rule_key, 'uncategorised') AS rule,
               coalesce(rc.max_tier, ru.max_tier) AS max_tier,
               CASE WHEN rc.rule_key IS NULL THEN ru.source_types ELSE rc.source_types END AS rule_types,
               s.source_id IS NULL AS unknown_source, s.source_type, s.authority_tier, s.valid_until,
               nullif(trim(s.superseded_by), '') AS superseded_by,
               CASE WHEN len(coalesce(s.restricted_to, [])) = 0 THEN NULL ELSE s.restricted_to END AS restricted_to,
               uc.use_case IS NOT NULL AS roles_known, uc.roles
        FROM cl LEFT JOIN sources s ON s.source_id = cl.source_id AND NOT s.deleted
        LEFT JOIN rl rc ON rc.rule_key = cl.category AND rc.rule_key <> 'uncategorised'
        LEFT JOIN rl ru ON ru.rule_key = 'uncategorised'
        LEFT JOIN uc ON uc.use_case = cl.use_case),
    k AS (
        SELECT *,
            epoch_us(answered_at) >= epoch_us((valid_until + {extra_day})::TIMESTAMP) AS expired,
            CASE WHEN max_tier IS NULL THEN NULL WHEN authority_tier IS NULL THEN 'undecided'
                 WHEN authority_tier > max_tier THEN 'failed' ELSE 'passed' END AS tier_state,
            CASE WHEN len(coalesce(rule_types, [])) = 0 THEN NULL WHEN source_type IS NULL THEN 'undecided'
                 WHEN NOT list_contains(rule_types, source_type) THEN 'failed' ELSE 'passed' END AS type_state
        FROM j),
    v AS (
        SELECT *,
            CASE WHEN unknown_source THEN NULL WHEN restricted_to IS NULL THEN true WHEN NOT roles_known THEN NULL
                 ELSE len(list_intersect(restricted_to, roles)) > 0 END AS allowed,
            CASE WHEN unknown_source THEN {missing}
                 WHEN restricted_to IS NULL THEN 'unrestricted source'
                 WHEN NOT roles_known THEN 'restricted to ' || array_to_string(restricted_to, ', ')
                      || '; the use case''s requester roles are unknown'
                 WHEN len(list_intersect(restricted_to, roles)) > 0
                      THEN 'restricted to ' || array_to_string(restricted_to, ', ') || '; requesters include '
                           || list_sort(list_intersect(restricted_to, roles))[1]
                 ELSE 'restricted to ' || array_to_string(restricted_to, ', ') || '; the use case''s requesters ('
                      || coalesce(nullif(array_to_string(list_sort(roles), ', '), ''), 'none') || ') may not read it'
            END AS allowed_reason,
            CASE WHEN unknown_source THEN NULL
                 ELSE superseded_by IS NULL AND NOT coalesce(expired, false) END AS current,
            CASE WHEN unknown_source THEN {missing}
                 WHEN superseded_by IS NOT NULL OR coalesce(expired, false) THEN concat_ws('; ',
                      CASE WHEN superseded_by IS NOT NULL THEN 'superseded by ' || superseded_by END,
                      CASE WHEN expired THEN 'expired: valid until ' || strftime(valid_until, '%Y-%m-%d') || ' ('
                           || {bound} || ', UTC), answer at '
                           || strftime(answered_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S+00:00')
                      END)
                 WHEN valid_until IS NULL THEN 'not superseded, no expiry date'
                 ELSE 'not superseded, valid until ' || strftime(valid_until, '%Y-%m-%d') END AS current_reason,
            CASE WHEN unknown_source THEN NULL
                 WHEN 'failed' IN (tier_state, type_state) THEN false
                 WHEN 'undecided' IN (tier_state, type_state) THEN NULL ELSE true END AS authoritative,
            CASE WHEN unknown_source THEN {missing}
                 WHEN 'failed' IN (tier_state, type_state) THEN concat_ws('; ', {tier_failed}, {type_failed},
                                                                         {tier_undecided}, {type_undecided})
                 WHEN 'undecided' IN (tier_state, type_state) THEN concat_ws('; ', {tier_undecided}, {type_undecided})
                 ELSE concat_ws(' and ', CASE WHEN tier_state = 'passed' THEN 'tier ' || authority_tier || ' <= '
                                                                             || max_tier END,
                                CASE WHEN type_state = 'passed' THEN 'a ' || source_type END)
                      || ' for ' || rule || ' claims'
            END AS authoritative_reason
        FROM k),
    pr AS (
        SELECT *,
            list_filter([
                CASE WHEN unknown_source THEN {p(UNKNOWN)} END,
                CASE WHEN allowed = false THEN {p(FORBIDDEN)} END,
                CASE WHEN allowed IS NULL AND NOT unknown_source THEN {p(ACCESS_UNDECIDED)} END,
                CASE WHEN current = false THEN {p(STALE)} END,
                CASE WHEN authoritative = false THEN {p(INSUFFICIENT)} END,
                CASE WHEN authoritative IS NULL AND NOT unknown_source THEN {p(AUTHORITY_UNDECIDED)} END
            ], lambda x: x IS NOT NULL) AS problems,
            CASE WHEN NOT supported THEN []::VARCHAR[] ELSE list_filter([
                CASE WHEN allowed = false AND NOT list_contains(labels, {gap}) THEN {gap} END,
                CASE WHEN current = false AND NOT list_contains(labels, {outdated}) THEN {outdated} END,
                CASE WHEN unknown_source OR allowed IS NULL OR authoritative IS NOT true THEN {review} END
            ], lambda x: x IS NOT NULL) END AS proposals
        FROM v)
    SELECT response_id, revision, response_key, claim_idx, claim_id, text, labels, label_mask, source_id, category,
           rule, answered_at, use_case, unknown_source, allowed, allowed_reason, current, current_reason,
           authoritative, authoritative_reason,
           supported, problems, proposals, n,{" is_core, criticality, span," if flaggable_only else ""}
           len(proposals) > 0 AND (allowed = false OR current = false OR authoritative = false) AS to_review,
           CASE WHEN len(problems) = 0 THEN 'ok' ELSE array_to_string(list_transform(problems, lambda x: x || CASE
                WHEN x = {p(FORBIDDEN)} AND list_contains(proposals, {gap}) THEN ', proposed ' || {gap}
                WHEN x = {p(STALE)} AND list_contains(proposals, {outdated}) THEN ', proposed ' || {outdated}
                WHEN x IN ({p(UNKNOWN)}, {p(ACCESS_UNDECIDED)}, {p(INSUFFICIENT)}, {p(AUTHORITY_UNDECIDED)})
                     AND list_contains(proposals, {review}) THEN ', proposed ' || {review}
                ELSE '' END), '; ') END AS authority
    FROM pr"""


# the sources whose checks read something of the answer: its time (a valid-until date) or its use case (a restriction)
_DATED = "SELECT source_id FROM sources WHERE NOT deleted AND valid_until IS NOT NULL"
_RESTRICTED = "SELECT source_id FROM sources WHERE NOT deleted AND len(coalesce(restricted_to, [])) > 0"


def _claims_part(p: Params, which: str, now: datetime, supported: str, grouped_over: str | None,
                 table_where: str | None = None, any_dated: bool = True, answers: str | None = None,
                 narrow: bool = False, claim_columns: bool = False) -> str:
    """WITH items ``c0`` and ``cl``: the claims the checks read, one row each or (``grouped_over``) counted;
    ``narrow``: listed with their response key and what the checks read only."""
    if grouped_over is None:
        if narrow:
            # the response key and what the checks read only, the labels from their bit mask with a NULL in place of
            # each absent one (the checks ask only whether a label is present): with a much-cited dated source,
            # reading every column of those claims and their label lists, and filtering a list by a lambda, was
            # most of the review queue's time (docs/performance.md)
            ident = ("NULL::VARCHAR AS response_id, NULL::INTEGER AS revision, c.response_key, "
                     "NULL::INTEGER AS claim_idx, NULL::VARCHAR AS claim_id, NULL::VARCHAR AS text")
            labels = _labels_from_mask(p, "c.label_mask")
            picked = "c.response_key, c.label_mask, c.source_id, c.category"
        else:
            ident = "c.response_id, c.revision, c.response_key, c.claim_idx, c.claim_id, c.text"
            labels, picked = "c.labels", "*"
        listed = (f"{ident}, {labels} AS labels, c.label_mask, c.source_id, c.category, {{time}} AS answered_at, "
                  f"{{use_case}} AS use_case, list_contains({labels}, {supported}) AS supported, 1::BIGINT AS n"
                  + (", c.is_core, c.criticality, c.span" if claim_columns else ""))
        now_at = f"{p(now)}::TIMESTAMPTZ"
        chosen = f"SELECT {picked} FROM claims c WHERE {which} AND c.source_id IS NOT NULL"
        if answers is not None:  # the caller's answers, with their times and use cases (one join)
            return f"""c0 AS ({chosen}),
    cl AS (
        SELECT {listed.format(time=f"coalesce(g.created_at, g.as_of, {now_at})", use_case="g.use_case")}
        FROM c0 c JOIN {answers} g ON g.response_key = c.response_key
    )"""
        # the as-of time of a current score is read only for an answer without a creation time: for every claim of
        # a listing (a page, a detail) when there are few, for the answers without one when there are many (the
        # review queue's: building the set of millions of claims' answers to read their scores was costly)
        untimed = "responses WHERE created_at IS NULL" if narrow else "c0"
        return f"""c0 AS MATERIALIZED ({chosen}),
    cl AS (
        SELECT {listed.format(time=f"coalesce(r.created_at, sc.as_of, {now_at})", use_case="r.use_case")}
        FROM c0 c JOIN responses r ON r.response_key = c.response_key
        -- the current scores of these claims' revisions only: a LEFT JOIN builds its hash table on the right side,
        -- which was every current score (10M at 10M responses, 1.5 s) even when no claim was to be checked
        LEFT JOIN (SELECT response_key, as_of FROM scores WHERE is_current
                   AND response_key IN (SELECT response_key FROM {untimed})) sc ON sc.response_key = c.response_key
    )"""
    # The answer's time matters only against a valid-until date and its use case only against a restricted source
    # (the requesters' roles): elsewhere both are left out of the grouping. The labels matter only by which are
    # present (the checks ask list_contains of them): grouped by their bit mask, and made a list again per group.
    def joined() -> str:  # the claims joined to their answers (the bound ``now`` only where this is read)
        return f"""SELECT c.label_mask, c.source_id, c.category,
               CASE WHEN c.source_id IN ({_RESTRICTED}) THEN g.use_case END AS use_case,
               CASE WHEN c.source_id IN ({_DATED}) THEN coalesce(g.created_at, g.as_of, {p(now)}::TIMESTAMPTZ) END
                   AS answered_at,
               count(*) AS n
        FROM claims c JOIN {grouped_over} g ON g.response_key = c.response_key
        WHERE {which} AND c.source_id IS NOT NULL"""
    if table_where is not None:
        # every current response is in the view: the claims are read from their counts (claim_source_counts,
        # migrations 024, 025, 031: one row per label mask, source, category, use case, model and creation day),
        # with their use case where a restricted source's check reads it and their answer's day (as its midnight in
        # UTC) where a dated source's does; only a dated source's claims of answers without a creation time (their
        # time is their current score's as-of) need the join
        counted = (f"SELECT label_mask, source_id, category, CASE WHEN source_id IN ({_RESTRICTED}) THEN use_case END "
                   f"AS use_case, CASE WHEN source_id IN ({_DATED}) THEN created_day::TIMESTAMP AT TIME ZONE 'UTC' "
                   f"END AS answered_at, claims AS n FROM claim_source_counts WHERE {table_where}")
        rows = (f"{joined()} AND c.source_id IN ({_DATED}) AND g.created_at IS NULL GROUP BY ALL UNION ALL {counted} "
                f"AND NOT (source_id IN ({_DATED}) AND created_day IS NULL)" if any_dated else counted)
    else:
        rows = f"{joined()} GROUP BY ALL"
    return f"""cm AS ({rows}),
    c0 AS MATERIALIZED (
        SELECT {_labels_from_mask(p, "label_mask")} AS labels, label_mask, source_id, category, use_case, answered_at,
               n
        FROM (SELECT label_mask, source_id, category, use_case, answered_at, sum(n)::BIGINT AS n FROM cm
              GROUP BY ALL)),
    cl AS (
        SELECT NULL::VARCHAR AS response_id, NULL::INTEGER AS revision, NULL::BIGINT AS response_key,
               NULL::INTEGER AS claim_idx, NULL::VARCHAR AS claim_id, NULL::VARCHAR AS text, labels, label_mask,
               source_id, category, answered_at, use_case, list_contains(labels, {supported}) AS supported, n
        FROM c0
    )"""


def _labels_from_mask(p: Params, mask: str) -> str:
    """The list of the labels whose bits are set in ``mask`` (``LABEL_BIT``), a NULL in place of each absent one: the
    checks ask only whether a label is present (``list_contains``), and a list filtered by a lambda cost far more
    over millions of claims."""
    return "[" + ", ".join(f"CASE WHEN ({mask} & {p(bit)}) <> 0 THEN {p(label.value)} END"
                           for label, bit in LABEL_BIT.items()) + "]"


def _inputs(store: Store) -> tuple[AuthorityRules, dict[str, tuple[str, ...]]]:
    return authority_rules(store), requester_roles(store)


def claim_checks(store: Store, *, response_key: int | None = None, now: datetime | None = None) -> pd.DataFrame:
    """The checks of every current sourced claim (or of one revision's, ``response_key``), in response and claim
    order (``claim_checks_select``'s columns)."""
    p = Params()
    rules, roles = _inputs(store)
    sql = claim_checks_select(p, rules, roles, now or utc_now(), response_key=response_key)
    return store.frame(f"{sql} ORDER BY response_id, claim_idx", p.values)


def findings_select(p: Params, rules: AuthorityRules, roles: dict[str, tuple[str, ...]], now: datetime) -> str:
    """SELECT of one row per failed or undecided check: response_id, revision, response_key, claim_idx,
    claim_id, claim (its text), source_id, check, problem, reason, proposed_label (None when the claim is
    not SUPPORTED or already carries the label)."""
    checks = claim_checks_select(p, rules, roles, now)
    gap, outdated, _, review = _labels(p)
    return f"""
    WITH ch AS ({checks}), f AS (SELECT *, unnest(problems) AS problem FROM ch)
    SELECT response_id, revision, response_key, claim_idx, claim_id, text AS claim, source_id,
           CASE problem WHEN {p(UNKNOWN)} THEN 'source' WHEN {p(FORBIDDEN)} THEN 'allowed'
                WHEN {p(ACCESS_UNDECIDED)} THEN 'allowed' WHEN {p(STALE)} THEN 'current'
                ELSE 'authoritative' END AS "check",
           problem,
           CASE WHEN problem IN ({p(FORBIDDEN)}, {p(ACCESS_UNDECIDED)}) THEN allowed_reason
                WHEN problem = {p(STALE)} THEN current_reason
                ELSE authoritative_reason END AS reason,
           CASE WHEN problem = {p(FORBIDDEN)} AND list_contains(proposals, {gap}) THEN {gap}
                WHEN problem = {p(STALE)} AND list_contains(proposals, {outdated}) THEN {outdated}
                WHEN problem IN ({p(UNKNOWN)}, {p(ACCESS_UNDECIDED)}, {p(INSUFFICIENT)}, {p(AUTHORITY_UNDECIDED)})
                     AND list_contains(proposals, {review}) THEN {review} END AS proposed_label
    FROM f"""


def findings(store: Store, *, now: datetime | None = None) -> pd.DataFrame:
    """Every failed or undecided check of the current answers' sourced claims (``findings_select``), and every
    Scope finding of the current answers (``register.scoring.scope``: check ``scope``, an OUT_OF_SCOPE proposal;
    none while the use-case register is empty)."""
    p = Params()
    rules, roles = _inputs(store)
    now = now or utc_now()
    sql = findings_select(p, rules, roles, now)
    scope = scope_findings_select(p, now.date())
    return store.frame(f"SELECT * FROM ({sql}) UNION ALL SELECT * FROM ({scope}) "
                       "ORDER BY response_id, claim_idx NULLS FIRST, \"check\", problem", p.values)


def response_authority_select(store: Store, p: Params, now: datetime | None = None, *, keys: str | None = None) -> str:
    """SELECT of one row per current response with a sourced claim that has a finding: response_key,
    authority (its claims' lines, "c2: stale source, proposed OUTDATED; ..."), findings (count),
    proposals (count of SUPPORTED claims with a proposed label), to_review (those of them the review queue
    takes), problems (the distinct ``PROBLEMS``). ``keys``: a SELECT of the response keys to check (all else)."""
    rules, roles = _inputs(store)
    checks = claim_checks_select(p, rules, roles, now or utc_now(), keys=keys)
    return f"""
    SELECT response_key, string_agg(claim_id || ': ' || authority, '; ' ORDER BY claim_idx) AS authority,
           sum(len(problems))::BIGINT AS findings, count(*) FILTER (WHERE len(proposals) > 0) AS proposals,
           count(*) FILTER (WHERE to_review) AS to_review,
           list_distinct(flatten(list(problems))) AS problems
    FROM ({checks}) WHERE len(problems) > 0 GROUP BY response_key"""


def review_keys_select(store: Store, p: Params, now: datetime | None = None, *,
                       use_cases: tuple[str, ...] = ()) -> str:
    """SELECT of the response_key of every current response the review queue takes for its sources: a SUPPORTED
    claim whose source failed a check (forbidden, stale or insufficient authority) and that does not
    carry the proposed label yet. A key may be listed more than once (the callers ask ``IN``).

    When no current claim cites a source that can fail a check (``may_fail_cited``), no claim is read: an empty
    SELECT (the scan of every current claim for the few that cite such a source was a large part of every overview
    and queue read, with none to find). Nor when such sources are cited but no claim fails (of
    ``use_cases``, when the caller reads only those: the console's use-case filter), as the checks counted from
    the claims' counts tell (``flagged_counted``): a dated source still valid, or one whose claims all come from
    other use cases, costs nothing (with a much-cited one, listing its claims was a large part of every overview
    and queue read). Otherwise no claim is read either: the checks run over the counted groups and the failing groups'
    answers are read from ``claim_source_answers`` (``_failing_answers``; listing the claims of the millions of
    answers past a dated source's date took seconds), but for a dated source's claims of answers without a creation
    time, which are checked at their score's as-of time and listed. With ``use_cases`` only the answers of those use
    cases are listed. The figures: docs/performance.md, "Figures behind the code"."""
    rules, roles = _inputs(store)
    now = now or utc_now()
    if not may_fail_cited(store, rules):
        return "SELECT NULL::BIGINT AS response_key WHERE false"
    untimed = dated_source_cited(store, untimed=True)
    if not flagged_counted(store, now, use_cases=use_cases, inputs=(rules, roles), untimed=untimed):
        return "SELECT NULL::BIGINT AS response_key WHERE false"
    keys = _failing_answers(p, _counted_checks(p, rules, roles, now, use_cases, untimed), use_cases)
    if untimed:  # a dated source's claims of answers without a creation time: checked at their score's time, listed
        untimed_keys = ("SELECT response_key FROM responses WHERE is_current AND created_at IS NULL"
                        + (f" AND use_case IN {p.in_list(use_cases)}" if use_cases else ""))
        checks = claim_checks_select(p, rules, roles, now, failing_only=True, keys=untimed_keys)
        keys += f" UNION ALL SELECT response_key FROM ({checks}) WHERE to_review AND source_id IN ({_DATED})"
    return keys


def _counted_checks(p: Params, rules: AuthorityRules, roles: dict[str, tuple[str, ...]], now: datetime,
                    use_cases: tuple[str, ...], untimed: bool) -> str:
    """The checks of the current SUPPORTED sourced claims (of ``use_cases``), counted by what they read
    (``claim_checks_select`` with ``grouped_over``): the query ``flagged_counted`` sums."""
    answers = ("(SELECT r.response_key, r.use_case, r.created_at, cs.as_of FROM responses r "
               "LEFT JOIN current_scores cs ON cs.response_key = r.response_key WHERE r.is_current)")
    return claim_checks_select(p, rules, roles, now, supported_only=True, grouped_over=answers,
                               over_every_current=True, use_cases=use_cases, any_dated=untimed)


def _failing_answers(p: Params, counted: str, use_cases: tuple[str, ...]) -> str:
    """SELECT of the response keys of the answers whose claims fall in a group of ``counted`` (``_counted_checks``)
    that goes to review, read from ``claim_source_answers`` (migration 032): the groups hold exactly what the checks
    read -- the label mask, the source, the category, the use case where the source is restricted, the answer's day
    where it is dated -- so an answer's claim is in a failing group if and only if its own checks fail. A dated
    source's claims of answers without a creation time (no day) are left to the caller. The rows are sorted by
    source: the failing sources' rows are read, the others' row groups skipped."""
    within = f" AND a.use_case IN {p.in_list(use_cases)}" if use_cases else ""
    # A dated source's groups are joined by day too (joined without it, each answer met every day's group of its
    # source: seconds for millions of answers); the failing sources are named to the scan as well as joined, so
    # that their row groups are read and the rest skipped.
    def part(dated: bool) -> str:
        day = " AND a.created_day = g.created_day" if dated else ""
        return f"""
    SELECT a.response_key FROM claim_source_answers a JOIN failing g
      ON a.source_id = g.source_id AND a.label_mask = g.label_mask AND a.category IS NOT DISTINCT FROM g.category{day}
     WHERE {"" if dated else "NOT "}g.dated
       AND a.source_id IN (SELECT source_id FROM failing WHERE {"" if dated else "NOT "}dated){within}
       AND (NOT g.restricted OR a.use_case IS NOT DISTINCT FROM g.use_case)"""

    return f"""
    WITH failing AS MATERIALIZED (
        SELECT DISTINCT label_mask, source_id, category, use_case,
               CASE WHEN source_id IN ({_DATED}) THEN (answered_at AT TIME ZONE 'UTC')::DATE END AS created_day,
               source_id IN ({_DATED}) AS dated, source_id IN ({_RESTRICTED}) AS restricted
        FROM ({counted}) WHERE to_review)
    {part(True)}
    UNION ALL {part(False)}"""


def flagged_counted(store: Store, now: datetime, *, use_cases: tuple[str, ...] = (),
                    inputs: tuple[AuthorityRules, dict[str, tuple[str, ...]]] | None = None,
                    untimed: bool | None = None) -> int:
    """The current SUPPORTED claims (of answers in ``use_cases``, all when empty) whose source failed a check and
    that do not carry the proposed label yet, counted from the claims' counts (``claim_source_counts``) -- the
    claims of dated sources by their answer's creation day, those of answers without a creation time joined to
    their current score's as-of time. The same checks as the listed ones, so the same number. ``inputs``: the rules
    and requester roles, and ``untimed``: ``dated_source_cited(store, untimed=True)``, when the caller has read them."""
    p = Params()
    rules, roles = inputs or _inputs(store)
    untimed = dated_source_cited(store, untimed=True) if untimed is None else untimed
    checks = _counted_checks(p, rules, roles, now, use_cases, untimed)
    return int(store.scalar(f"SELECT coalesce(sum(n), 0) FROM ({checks}) WHERE to_review", p.values) or 0)


def may_fail_cited(store: Store, rules: AuthorityRules) -> bool:
    """Whether a current claim cites a source that can fail a check under ``rules`` (``_may_fail``)."""
    p = Params()
    failing = {source for (source,) in store.query(_may_fail(p, rules), p.values)}
    return bool(failing & cited_sources(store))


def dated_source_cited(store: Store, *, untimed: bool = False) -> bool:
    """Whether a current claim cites a source with a valid-until date (``untimed``: a claim of an answer without a
    creation time, checked at its current score's as-of time). Those are the only claims the counted Authority
    figures over every answer join to the answers (``claim_checks_select``'s ``any_dated``); read from the claims'
    counts (``claim_source_counts``, a few thousand rows)."""
    return bool(store.scalar(f"SELECT count(*) FROM claim_source_counts WHERE source_id IN ({_DATED})"
                             + (" AND created_day IS NULL" if untimed else "")))


def cited_sources(store: Store) -> frozenset[str]:
    """Every ``source_id`` a current claim cites, from the current claims' source counts (``claim_source_counts``,
    migration 024: a few hundred rows; kept in step by every write that changes which claims are current). It
    was a scan of every claim's ``source_id``, slow on a cold start (docs/performance.md)."""
    return frozenset(source for (source,) in store.query("SELECT DISTINCT source_id FROM claim_source_counts"))
