"""Bulk HRI scoring in DuckDB SQL: one set-based statement over the claims table.

``score_select`` builds a SELECT that scores every current response (or one batch) under a profile
at an as-of time; it computes exactly what ``hri_core.score_response`` computes (a property test
holds the two to 1e-9). The SQL *shape* follows the profile's structure (which labels hit which
dimension by default, which floor rules exist); every *number* (contributions, weights, floor
values, band bounds, decay rate, as-of time) is a bound parameter of a ``register.db.sql.Params``,
which callers may share to embed the SELECT in a larger statement (``score_query`` is the SELECT on
its own, with its parameters). Called by ``rescore`` / ``score_imported`` here, the impact preview,
the checklist's reproducibility check and the benchmarks.

Labels and explicit dimensions are stored as bit masks (``hri_core.vocabulary.LABEL_BIT``), so a
claim's contribution to a dimension is a handful of integer tests and one GREATEST, computed once per
distinct claim shape; the score is one GROUP BY of the claims for the dimensions and one of the few
claims that can fire a floor (see ``score_select``).

No response can stop the scoring of the others. The arithmetic cannot overflow (sums are HUGEINT or
DOUBLE and stored as BIGINT: nothing is cast to 32 bits), and a response the scorer must not score
fails closed instead of failing the statement: a claim stored outside the model's bounds (criticality
outside 1..``MAX_CRITICALITY``, no known label, an unknown dimension, labels that contradict each other
(``hri_core.vocabulary.LABEL_CONFLICTS``) -- a record stored before a bound or rule existed, or edited by
hand), or a result outside [0, 1], gives a score row whose ``scoring_failure``
says why, with the worst-case numbers (every dimension 1, HRI 1, score 100, the top band) and the action
``review``. ``rescore`` reports those responses by id (``RescoreSummary.failed``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hri_core import DIMENSIONS, Label, ScoringProfile
from hri_core.models import ensure_utc
from hri_core.profile import ACTION_SEVERITY, ACTIONS, SCORE_DECIMALS
from hri_core.vocabulary import DIMENSION_BIT, LABEL_BIT
from register.access.permissions import Permission, authorize
from register.db.sql import Params
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import RegisterError
from register.readmodels import version_views
from register.readmodels.hub import ScoresWritten, scores_written
from register.scoring import publishes
from register.scoring.claim_conditions import (
    BAD_SHAPE,
    OUT_OF_RANGE,
    bad_shape,
    floor_condition,
    reads_feedback,
    repeat_since,
)
from register.scoring.decision import (
    AUTHORITY_TABLE,
    DECISION_COLUMNS,
    authority_found,
    decision_parts,
    decision_values,
    parts_join,
)
from register.scoring.dialect import DUCKDB, SPARK, Dialect
from register.scoring.lens_passes import DECIDED, LENS_INFO, LENS_OF, MITIGATED, ProfilePass, lens_passes
from register.scoring.lenses import LensGroup, lens_groups
from register.scoring.mitigation import MITIGATION_VALUES, decided

__all__ = ["DUCKDB", "SPARK", "Dialect", "RescoreSummary", "fired_floors_query", "fired_floors_select", "rescore",
           "score_imported", "score_query", "score_select"]

DIM_COLUMNS = {d: f"s_{d.value.lower()}" for d in DIMENSIONS}  # allow-listed identifiers
FAILED_ACTION = "review"  # where a response the scorer cannot score goes: to a person
SCOPE_ALL = "all"  # score_runs.scope of a run that scored every current response
SCOPE_BATCH_PREFIX = "batch:"  # ... and of one that scored an import batch's: "batch:<id>"
FAILURE_REPORT_LIMIT = 100  # failed responses named in a RescoreSummary (all are in the scores table)
# the columns of score_floors that fired_floors_select gives, in its order
_FLOOR_COLUMNS = "response_id, revision, claim_idx, claim_id, rule_id, label, criticality, value"

KEYS_TABLE = "_scored_keys"  # the response keys of a keyed run (``_write_scores``'s ``keys``), while it runs


def _scope(p: Params, batch_id: int | None, alias: str, keyed: bool = False) -> str:
    """Rows of current responses, optionally of one import batch (claims reach it via response_key) or of the
    keys in ``KEYS_TABLE`` (``keyed``)."""
    if keyed:
        return f"{alias}.is_current AND {alias}.response_key IN (SELECT response_key FROM {KEYS_TABLE})"
    if batch_id is None:
        return f"{alias}.is_current"
    batch = p(batch_id)
    if alias == "r":
        return f"r.is_current AND r.batch_id = {batch}"
    return (f"{alias}.is_current AND {alias}.response_key IN "
            f"(SELECT response_key FROM responses WHERE is_current AND batch_id = {batch})")


def _floor_label_mask(profile: ScoringProfile) -> int:
    mask = 0
    for rule in profile.floors:
        mask |= LABEL_BIT[rule.label]
    return mask


_CLAIM_IDX_SPAN = 2 ** 31  # claim_idx is a non-negative INTEGER: 31 bits


def _floor_keys(profile: ScoringProfile) -> tuple[list[float], list[str], int, int]:
    """The decisive-floor ordering as exact integers (see ``score_select``).

    Returns the sorted distinct floor values (rank r is values[r - 1], r >= 1), the rule ids in profile
    order, the rule-position span R (a power of two > the number of rules) and the rank multiplier
    B = 2^31 * R. A fired (rule, claim) pair has the key rank * B + (2^31 - 1 - claim_idx) * R + (R - 1 - pos):
    larger value first, then the earlier claim, then the earlier rule -- what ``max(fired, key=value)``
    picks in ``hri_core.score_response``.
    """
    values = sorted({rule.value for rule in profile.floors})
    span = 1
    while span <= len(profile.floors):
        span *= 2
    if (len(values) + 1) * _CLAIM_IDX_SPAN * span >= 2 ** 63:  # the key is a BIGINT: ~32,000 rules
        raise ValueError(f"too many floor rules for the bulk scorer: {len(profile.floors)}")
    return values, [rule.rule_id for rule in profile.floors], span, _CLAIM_IDX_SPAN * span


def score_query(profile: ScoringProfile, as_of: datetime, *, batch_id: int | None = None,
                dialect: Dialect = DUCKDB) -> tuple[str, dict[str, Any]]:
    """``score_select`` as a statement of its own: the SELECT and its bound parameters."""
    p = Params(dialect.marker)
    return score_select(profile, as_of, p, batch_id=batch_id, dialect=dialect), p.values


def score_select(profile: ScoringProfile, as_of: datetime, p: Params, *, batch_id: int | None = None,
                 dialect: Dialect = DUCKDB, with_key: bool = False, keyed: bool = False) -> str:
    """SELECT of one score row per current response: dimension scores, HRI, band, action, floors.

    Its values are bound through ``p``, so that it can be part of a larger statement sharing ``p``
    (the impact preview joins two; the checklist compares one with the stored scores).

    Columns: response_id, revision, s_f..s_h, hri_add, hri, score, band, action, no_claims,
    total_criticality, floors_fired, decisive_claim_id, decisive_rule_id, scoring_failure (NULL, or why
    the response fails closed: see the module docstring), action_floor_claim_id and action_floor_rule_id
    (the fired floor whose ``min_action`` raised the band's action, ``hri_core.ScoreResult.action_floor``);
    ``with_key`` adds response_key (the revision's integer key) after revision, for the rows ``rescore`` stores;
    ``keyed`` scores the current revisions in ``KEYS_TABLE`` only (a re-decision: ``register.scoring.redecide``).

    A CONTRADICTED claim with ``contradicted_by = 'context'`` and no explicit dimensions hits the
    profile's ``context_contradiction_dimensions`` (a flag of the claim shape); a fired floor's
    ``min_action`` raises the action to at least that action whatever the band, as in ``score_response``.

    Shape of the computation (why it is fast): what a claim contributes -- v_i * m_ik for the seven
    dimensions, the floor rules it fires and the best of them -- depends only on its label mask,
    dimension mask and criticality, except for what reads the claim's feedback (the decay of validated
    negative feedback, the repeated-or-unresolved floors). So it is computed once per distinct claim
    shape (tens of rows, ``k``) and joined back to the claims; only claims with a feedback-dependent
    label get per-row work. The dimension sums are one GROUP BY on the integer response key over
    claims that read nothing but four integer columns (``a``). Floors are aggregated only over claims
    whose shape can fire one (``f``): the number fired, and the decisive floor as the max of an exact
    integer key (value rank, then the earliest claim, then the earliest rule: ``_floor_keys``) with
    arg_max for its claim id; the rank maps back to the floor value and the rule position to its id
    through two bound lists. ``dialect`` spells it for DuckDB (the default) or Spark SQL.
    """
    as_of = ensure_utc(as_of)
    dl = dialect
    at = dl.cast(p(as_of), "TIMESTAMPTZ")
    vnf = Label.VALIDATED_NEGATIVE_FEEDBACK
    static_labels = [lab for lab in Label if lab not in (Label.SUPPORTED, vnf)]
    low = {d: d.value.lower() for d in DIMENSIONS}

    def applies(dim, labels, value: str, dim_mask: str) -> str:
        """m_ik of a claim whose labels ``labels`` contribute ``value`` (its max over them): an explicit
        dimension list (the column ``dim_mask``) applies to every label but SUPPORTED; else the labels'
        profile defaults do."""
        default = [lab for lab in labels if dim in profile.default_dimensions[lab]]
        return (f"CASE WHEN {dim_mask} IS NULL THEN {value if default else '0.0'} "
                f"WHEN ({dim_mask} & {DIMENSION_BIT[dim]}) <> 0 THEN {value} ELSE 0.0 END")

    # --- per shape: max contribution of the static labels (one per default-dimension group)
    def max_of(labels) -> str:
        terms = [f"CASE WHEN (label_mask & {LABEL_BIT[lab]}) <> 0 THEN {p(profile.contributions[lab])} END"
                 for lab in labels]
        return f"coalesce({dl.greatest(terms)}, 0.0)" if terms else "0.0"

    # a CONTRADICTED claim contradicted by the retrieved context hits the profile's context-contradiction
    # dimensions instead of CONTRADICTED's defaults (when it names none): a claim shape carries that flag
    # (``ctx``) only when the two differ
    uses_ctx = set(profile.context_contradiction_dimensions) != set(profile.default_dimensions[Label.CONTRADICTED])

    def defaults_of(label: Label, ctx: bool) -> tuple:
        if ctx and label == Label.CONTRADICTED:
            return profile.context_contradiction_dimensions
        return profile.default_dimensions[label]

    shape_max = {"mx": max_of(static_labels)}
    names: dict[tuple, str] = {tuple(static_labels): "mx"}
    shape_vm = {}
    for d in DIMENSIONS:
        picked = []
        for ctx in ((False, True) if uses_ctx else (False,)):
            default = tuple(lab for lab in static_labels if d in defaults_of(lab, ctx))
            name = names.setdefault(default, f"md_{len(names)}")
            shape_max.setdefault(name, max_of(default))
            picked.append(name)
        default_expr = picked[0] if len(set(picked)) == 1 else f"CASE WHEN ctx THEN {picked[1]} ELSE {picked[0]} END"
        shape_vm[d] = (f"criticality * CASE WHEN dim_mask IS NULL THEN {default_expr} "
                       f"WHEN (dim_mask & {DIMENSION_BIT[d]}) <> 0 THEN mx ELSE 0.0 END")
    # the shape's ctx flag, and the join of a claim row to its shape
    ctx_of = "coalesce(contradicted_by = 'context', false)" if uses_ctx else "false"

    def shape_join(alias: str) -> str:
        on = (f"k.k_label = {alias}.label_mask AND k.k_crit = {alias}.criticality "
              f"AND k.k_dim IS NOT DISTINCT FROM {alias}.dim_mask")
        return on + (f" AND k.k_ctx = coalesce({alias}.contradicted_by = 'context', false)" if uses_ctx else "")
    values, rule_ids, span, rank_mult = _floor_keys(profile)
    static_rules = [(i, r) for i, r in enumerate(profile.floors) if not reads_feedback(r)]
    dynamic_rules = [(i, r) for i, r in enumerate(profile.floors) if reads_feedback(r)]
    since = repeat_since(profile, as_of, p, dl)
    rank_p = dl.cast(p(rank_mult), "BIGINT") if profile.floors else ""  # no unused parameter without floors

    def part(i: int, rule) -> str:  # rank * B + (R - 1 - pos): the claim-independent part of the key
        return f"({dl.cast(p(values.index(rule.value) + 1), 'BIGINT')} * {rank_p} + {p(span - 1 - i)})"

    fired = {f"f{i}": floor_condition(r, at, since, p) for i, r in static_rules}
    shape_nf = " + ".join(dl.cast(f"f{i}", "INTEGER") for i, _ in static_rules) or "0"
    shape_part = (dl.greatest([f"CASE WHEN f{i} THEN {part(i, r)} END" for i, r in static_rules])
                  if static_rules else dl.cast("NULL", "BIGINT"))

    # floors' minimum actions: the strictest min_action among the fired floors, and the first fired floor
    # (claim order, then profile order) carrying it -- an exact integer key like the decisive floor's, with
    # the action's severity in place of the value rank
    def ma_part(i: int, rule) -> str:
        return f"({dl.cast(p(ACTION_SEVERITY[rule.min_action]), 'BIGINT')} * {rank_p} + {p(span - 1 - i)})"

    static_ma = [(i, r) for i, r in static_rules if r.min_action is not None]
    dynamic_ma = [(i, r) for i, r in dynamic_rules if r.min_action is not None]
    with_ma = bool(static_ma or dynamic_ma)
    shape_ma = (dl.greatest([f"CASE WHEN f{i} THEN {ma_part(i, r)} END" for i, r in static_ma])
                if static_ma else dl.cast("NULL", "BIGINT"))

    # --- per row, only for claims with a feedback-dependent label
    dyn_mask = LABEL_BIT[vnf]
    for _, rule in dynamic_rules:
        dyn_mask |= LABEL_BIT[rule.label]
    vnf_value = (f"CASE WHEN (label_mask & {LABEL_BIT[vnf]}) = 0 THEN 0.0 WHEN feedback_at IS NULL THEN 1.0 "
                 f"WHEN feedback_at > {at} THEN 0.0 ELSE exp(-{p(profile.decay_lambda)} * "
                 f"({dl.epoch_us(at)} - {dl.epoch_us('feedback_at')}) / 86400000000.0) END "
                 f"* {p(profile.contributions[vnf])}")
    row_vm = ", ".join(f"greatest(k.vm_{low[d]}, c.criticality * {applies(d, [vnf], 'c.fb', 'c.dim_mask')}) "
                       f"AS vm_{low[d]}" for d in DIMENSIONS)
    static_vm = ", ".join(f"k.vm_{low[d]}" for d in DIMENSIONS)
    dyn_fired = [(i, r, floor_condition(r, at, since, p)) for i, r in dynamic_rules]
    is_dyn = f"(cl.label_mask & {dyn_mask}) <> 0"
    if dyn_fired:
        row_nf = (f"CASE WHEN {is_dyn} THEN k.k_nf + " +
                  " + ".join(dl.cast(f"({c})", "INTEGER") for _, _, c in dyn_fired) +
                  " ELSE k.k_nf END")
        row_part = (f"CASE WHEN {is_dyn} THEN greatest(k.k_part, " +
                    ", ".join(f"CASE WHEN {c} THEN {part(i, r)} END" for i, r, c in dyn_fired) + ") ELSE k.k_part END")
    else:
        row_nf, row_part = "k.k_nf", "k.k_part"
    dyn_ma = [(i, r, c) for i, r, c in dyn_fired if r.min_action is not None]
    row_ma = (f"CASE WHEN {is_dyn} THEN greatest(k.k_ma, " +
              ", ".join(f"CASE WHEN {c} THEN {ma_part(i, r)} END" for i, r, c in dyn_ma) + ") ELSE k.k_ma END"
              if dyn_ma else "k.k_ma")
    if profile.floors:
        # a claim carrying a label of mask M has label_mask >= the lowest bit of M: a filter DuckDB
        # pushes into the scan, so claim ids and feedback columns are read only for candidate claims
        floor_mask = dyn_mask | _floor_label_mask(profile)
        row_key = f"{row_part} + ({dl.cast(p(_CLAIM_IDX_SPAN - 1), 'BIGINT')} - cl.claim_idx) * {p(span)}"
        values_p, rules_p = f"({dl.cast(p(values), 'DOUBLE[]')})", f"({dl.cast(p(rule_ids), 'VARCHAR[]')})"
        claim_key = f"({dl.cast(p(_CLAIM_IDX_SPAN - 1), 'BIGINT')} - cl.claim_idx) * {p(span)}"
        null_bigint, null_text = dl.cast("NULL", "BIGINT"), dl.cast("NULL", "VARCHAR")
        if with_ma:
            ma_rule = dl.item(rules_p, dl.cast(f"({p(span)} - ma_key % {p(span)})", "BIGINT"))
            ma_cols = f", {dl.int_div('ma_key', rank_p)} AS ma_sev, ma_claim, {ma_rule} AS ma_rule"
            ma_aggs = f", max(ma_key) AS ma_key, {dl.arg_max}(claim_id, ma_key) AS ma_claim"
            ma_row = f", {row_ma} + {claim_key} AS ma_key"
        else:
            ma_cols = f", {null_bigint} AS ma_sev, {null_text} AS ma_claim, {null_text} AS ma_rule"
            ma_aggs = ma_row = ""
        phi = dl.item(values_p, dl.cast(f"({dl.int_div('top_key', rank_p)})", "BIGINT"))
        top_rule = dl.item(rules_p, dl.cast(f"({p(span)} - top_key % {p(span)})", "BIGINT"))
        floors_cte = f"""
    SELECT response_key, n_fired, {phi} AS phi, top_claim,
           {top_rule} AS top_rule{ma_cols}
    FROM (SELECT response_key, sum(n_fired) AS n_fired, max(key) AS top_key, {dl.arg_max}(claim_id, key) AS top_claim
                 {ma_aggs}
          FROM (SELECT cl.response_key, cl.claim_id, {row_nf} AS n_fired, {row_key} AS key{ma_row}
                FROM claims cl JOIN k ON {shape_join("cl")} AND (k.k_part IS NOT NULL OR k.k_dyn)
                WHERE {_scope(p, batch_id, "cl")} AND cl.label_mask >= {floor_mask & -floor_mask})
          WHERE n_fired > 0  -- a floor of value 0 still fires (and is counted)
          GROUP BY response_key)"""
    else:
        null_bigint, null_text = dl.cast("NULL", "BIGINT"), dl.cast("NULL", "VARCHAR")
        floors_cte = (f"SELECT {null_bigint} AS response_key, 0 AS n_fired, {dl.cast('NULL', 'DOUBLE')} AS phi, "
                      f"{null_text} AS top_claim, {null_text} AS top_rule, {null_bigint} AS ma_sev, "
                      f"{null_text} AS ma_claim, {null_text} AS ma_rule WHERE false")
    sums = ", ".join(f"sum(vm_{low[d]}) AS n_{low[d]}" for d in DIMENSIONS)
    dims = ",\n    ".join(f"coalesce(a.n_{low[d]} / a.tv, 0.0) AS {DIM_COLUMNS[d]}" for d in DIMENSIONS)
    weighted = " + ".join(f"{p(profile.weights[d])} * {DIM_COLUMNS[d]}" for d in DIMENSIONS)
    bands = profile.bands
    # a one-band profile is valid: "CASE ELSE x END" is not SQL, so it is the band's value itself
    band_case = ("CASE " + " ".join(
        f"WHEN score9 <= {p(b.upper)} THEN {p(b.name)}" for b in bands[:-1]) +
        f" ELSE {p(bands[-1].name)} END") if len(bands) > 1 else p(bands[0].name)
    action_case = ("CASE " + " ".join(
        f"WHEN score9 <= {p(b.upper)} THEN {p(b.action)}" for b in bands[:-1]) +
        f" ELSE {p(bands[-1].action)} END") if len(bands) > 1 else p(bands[0].action)
    shape_cols = ", ".join(f"{shape_vm[d]} AS vm_{low[d]}" for d in DIMENSIONS)
    actions_p = f"({dl.cast(p(list(ACTIONS)), 'VARCHAR[]')})"
    shape_base = ", ".join([*(f"{expr} AS {name}" for name, expr in shape_max.items()),
                            *(f"{cond} AS {name}" for name, cond in fired.items())])
    scope_cl = _scope(p, batch_id, "cl", keyed)
    # why a response fails closed: its claims' bad-shape bits, or a result outside [0, 1] (NaN included:
    # NaN is not BETWEEN anything)
    checked = (*DIM_COLUMNS.values(), "hri_add0", "greatest(hri_add0, phi)")
    in_range = " AND ".join(f"{expr} BETWEEN 0 AND 1" for expr in checked)
    failure_parts = ", ".join([*(f"CASE WHEN (bad & {bit}) <> 0 THEN {p(reason)} END"
                                 for bit, reason in BAD_SHAPE.items()),
                               f"CASE WHEN NOT ({in_range}) THEN {p(OUT_OF_RANGE)} END"])
    key = "response_key, " if with_key else ""
    failed_dims = ", ".join(f"CASE WHEN scoring_failure IS NULL THEN {col} ELSE 1.0 END AS {col}"
                            for col in DIM_COLUMNS.values())
    counts = (f"{dl.cast('total_criticality', 'BIGINT')} AS total_criticality, "
              f"{dl.cast('floors_fired', 'BIGINT')} AS floors_fired")
    sql = f"""
WITH k AS (
    SELECT label_mask AS k_label, dim_mask AS k_dim, criticality AS k_crit, ctx AS k_ctx, {shape_cols},
           {shape_nf} AS k_nf, {shape_part} AS k_part, {shape_ma} AS k_ma, (label_mask & {dyn_mask}) <> 0 AS k_dyn,
           k_bad
    FROM (SELECT label_mask, dim_mask, criticality, ctx, {shape_base}, {bad_shape(p)} AS k_bad
          FROM (SELECT DISTINCT label_mask, dim_mask, criticality, {ctx_of} AS ctx FROM claims cl WHERE {scope_cl}))
), a AS (
    SELECT response_key, sum(criticality) AS tv, {sums}, bit_or(k_bad) AS bad
    FROM (SELECT cl.response_key, cl.criticality, {static_vm}, k.k_bad
          FROM claims cl JOIN k ON {shape_join("cl")} AND NOT k.k_dyn
          WHERE {scope_cl}
          UNION ALL
          SELECT c.response_key, c.criticality, {row_vm}, k.k_bad
          FROM (SELECT response_key, criticality, label_mask, dim_mask, contradicted_by, {vnf_value} AS fb
                FROM claims cl WHERE {scope_cl} AND cl.label_mask >= {dyn_mask & -dyn_mask}) c
               JOIN k ON {shape_join("c")} AND k.k_dyn)
    GROUP BY response_key
), f AS ({floors_cte}
), s AS (
    SELECT r.response_id, r.revision, r.response_key,
    {dims},
    coalesce(f.phi, 0.0) AS phi,
    coalesce(a.tv, 0) AS total_criticality,
    a.tv IS NULL AS no_claims,
    coalesce(a.bad, 0) AS bad,
    coalesce(f.n_fired, 0) AS floors_fired,
    f.top_claim, f.top_rule, f.ma_sev, f.ma_claim, f.ma_rule
    FROM responses r LEFT JOIN a ON a.response_key = r.response_key LEFT JOIN f ON f.response_key = r.response_key
    WHERE {_scope(p, batch_id, "r", keyed)}
), h AS (
    SELECT *, least(1.0, {weighted}) AS hri_add0 FROM s
), g AS (
    SELECT *, greatest(hri_add0, phi) AS hri0,
        nullif(concat_ws('; ', {failure_parts}), '') AS scoring_failure FROM h
), v AS (
    SELECT *, CASE WHEN scoring_failure IS NULL THEN hri_add0 ELSE 1.0 END AS hri_add,
        CASE WHEN scoring_failure IS NULL THEN hri0 ELSE 1.0 END AS hri FROM g
), w AS (
    SELECT *, round(100.0 * hri, {SCORE_DECIMALS}) AS score9 FROM v
), x AS (
    SELECT *, {band_case} AS band,
        CASE WHEN scoring_failure IS NOT NULL THEN {p(FAILED_ACTION)} WHEN no_claims THEN {p(profile.no_claims_action)}
             ELSE {action_case} END AS band_action FROM w
), y AS (
    -- a fired floor's min_action raises the action when strictly stricter (never for a failed score: review)
    SELECT *, scoring_failure IS NULL AND ma_sev IS NOT NULL
              AND ma_sev > {dl.position0(actions_p, 'band_action')} AS raised FROM x
)
SELECT response_id, revision, {key}{failed_dims}, hri_add, hri, 100.0 * hri AS score, band,
    CASE WHEN raised THEN {dl.item(actions_p, 'ma_sev + 1')} ELSE band_action END AS action,
    no_claims, {counts},
    CASE WHEN phi > hri_add THEN top_claim END AS decisive_claim_id,
    CASE WHEN phi > hri_add THEN top_rule END AS decisive_rule_id,
    scoring_failure,
    CASE WHEN raised THEN ma_claim END AS action_floor_claim_id,
    CASE WHEN raised THEN ma_rule END AS action_floor_rule_id
FROM y
"""
    return sql


def fired_floors_query(profile: ScoringProfile, as_of: datetime, *, batch_id: int | None = None,
                       dialect: Dialect = DUCKDB) -> tuple[str, dict[str, Any]]:
    """``fired_floors_select`` as a statement of its own: the SELECT and its bound parameters."""
    p = Params(dialect.marker)
    return fired_floors_select(profile, as_of, p, batch_id=batch_id, dialect=dialect), p.values


def fired_floors_select(profile: ScoringProfile, as_of: datetime, p: Params, *, batch_id: int | None = None,
                        dialect: Dialect = DUCKDB, with_key: bool = False, keyed: bool = False) -> str:
    """SELECT of every floor that fires: response_id, revision, claim_idx, claim_id, rule_id, label,
    criticality, value (one row per claim and rule, in claim then profile order); values bound through ``p``.
    ``with_key`` adds response_key (the revision's integer key) at the end, for the rows ``rescore`` stores."""
    as_of = ensure_utc(as_of)
    dl = dialect
    # only the feedback floors read the as-of time: an unused named parameter is an error in DuckDB
    at = dl.cast(p(as_of), "TIMESTAMPTZ") if any(reads_feedback(r) for r in profile.floors) else ""
    since = repeat_since(profile, as_of, p, dl)
    if not profile.floors:
        v, i, f = dl.cast("NULL", "VARCHAR"), dl.cast("NULL", "INTEGER"), dl.cast("NULL", "DOUBLE")
        return (f"SELECT {v} AS response_id, {i} AS revision, {i} AS claim_idx, "
                f"{v} AS claim_id, {v} AS rule_id, {v} AS label, "
                f"{i} AS criticality, {f} AS value{', NULL::BIGINT AS response_key' if with_key else ''} WHERE false")
    branches = " UNION ALL ".join(
        f"SELECT response_id, revision, claim_idx, claim_id, {p(rule.rule_id)} AS rule_id, "
        f"{p(rule.label.value)} AS label, criticality, {dl.cast(p(rule.value), 'DOUBLE')} AS value, {i} AS rule_order"
        f"{', response_key' if with_key else ''} "
        f"FROM claims cl WHERE {_scope(p, batch_id, 'cl', keyed)} AND {floor_condition(rule, at, since, p)} "
        f"AND cl.label_mask >= {LABEL_BIT[rule.label]}"  # implied by the label test; pushed into the scan
        for i, rule in enumerate(profile.floors))
    return (f"SELECT response_id, revision, claim_idx, claim_id, rule_id, label, criticality, value"
            f"{', response_key' if with_key else ''} FROM ({branches}) ORDER BY response_id, revision, claim_idx, "
            "rule_order")


@dataclass(frozen=True)
class RescoreSummary:
    """What a score run did; ``failed`` maps the responses that failed closed (the first
    ``FAILURE_REPORT_LIMIT``, by id) to why, and ``failed_count`` counts them all."""

    run_id: int
    profile_version: int
    as_of: datetime
    responses_scored: int
    failed: dict[str, str] = field(default_factory=dict)
    failed_count: int = 0


def rescore(store: Store, actor: Actor, profile: ScoringProfile, *, as_of: datetime | None = None,
            batch_id: int | None = None) -> RescoreSummary:
    """Score current responses (all, or one batch) under ``profile`` in one transaction.

    Earlier scores are kept; the new rows become the current scores of their responses, recording
    the run, the profile version and the as-of time. Needs ``Permission.RESCORE``.
    """
    authorize(store, actor, Permission.RESCORE, entity_type="score_run")
    return _write_scores(store, actor, profile, as_of=as_of, batch_id=batch_id)


def score_imported(store: Store, actor: Actor, profile: ScoringProfile, *, batch_id: int,
                   as_of: datetime | None = None) -> RescoreSummary:
    """The scoring step of an import: one import batch scored under the active profile as part of bringing
    it in. Needs ``Permission.IMPORT``; ``profile`` must be the active one (an importer cannot make a draft's
    scores current). Rescoring everything, or under another profile, is ``rescore`` (admins)."""
    authorize(store, actor, Permission.IMPORT, entity_type="score_run", entity_id=f"batch:{batch_id}")
    active = store.scalar("SELECT max(profile_version) FROM scoring_profiles WHERE status = 'active'")
    if profile.version != active or not isinstance(batch_id, int):
        raise RegisterError(f"the scoring step of an import scores one batch under the active profile "
                            f"(v{active}), not v{profile.version}: use rescore (admins) for anything else")
    return _write_scores(store, actor, profile, as_of=as_of, batch_id=batch_id)


def _write_scores(store: Store, actor: Actor, profile: ScoringProfile, *, as_of: datetime | None,
                  batch_id: int | None, keys: tuple[str, str, dict] | None = None) -> RescoreSummary:
    """Score current responses (all, one batch, or ``keys``: (scope, SELECT of response keys, its parameters))
    under ``profile`` in one audited transaction -- each use case under its lens (``register.scoring.lenses``): the
    use cases a lens binds under its profile, policy and steps, the rest under ``profile``. One set-based pass per
    lens group (``_score_group``); without a lens in force, one pass over the run's scope as it always was."""
    as_of = ensure_utc(as_of or utc_now())
    scope = SCOPE_ALL if batch_id is None else f"{SCOPE_BATCH_PREFIX}{batch_id}"
    scope = keys[0] if keys is not None else scope
    keyed = keys is not None

    def fn(tx: Transaction) -> Change:
        if keys is not None:
            tx.execute(f"CREATE OR REPLACE TEMP TABLE {KEYS_TABLE} AS {keys[1]}", keys[2])
        run_id = tx.scalar("SELECT nextval('seq_score_run')")
        tx.execute("INSERT INTO score_runs (run_id, profile_version, as_of, started_at, actor_name, scope, "
                   "profile_fingerprint) VALUES (?, ?, ?, ?, ?, ?, ?)",
                   [run_id, profile.version, as_of, utc_now(), actor.name, scope, profile.fingerprint()])
        groups = lens_groups(tx, profile)
        # the read models follow the run (register.readmodels.hub): everything, or the batch's current revisions
        change = (ScoresWritten(profile.version, run_id, f"SELECT response_key FROM {KEYS_TABLE}") if keyed else
                  ScoresWritten(profile.version, run_id) if batch_id is None else
                  ScoresWritten(profile.version, run_id, "SELECT response_key FROM responses "
                                "WHERE is_current AND batch_id = $batch", {"batch": batch_id}))
        with scores_written(tx, change) as kept:
            for version in {g.profile.version for g in groups} - {profile.version}:
                version_views.forget(tx, version)  # a bound version's rows change too: its kept view goes
            # the responses score_select scores (current, of the batch if any) lose their current score, then
            # the new rows are inserted straight from the SELECT (no temp table: the INSERT reports its count)
            scored, scored_params = _run_scope(batch_id, keyed)
            tx.execute("UPDATE scores SET is_current = false WHERE is_current AND response_id IN "
                       f"(SELECT response_id FROM responses r WHERE {scored})", scored_params)
            if len(groups) == 1:  # no lens in force: the run's scope in one pass, as before lenses
                count = _score_group(tx, run_id, groups[0], as_of, batch_id, keyed)
            else:
                count = _score_groups(tx, run_id, groups, as_of, batch_id, keyed)
        bound = sorted({g.profile.version for g in groups} - {profile.version})  # read by the profile filter
        tx.execute("UPDATE score_runs SET responses_scored = ?, bound_profile_versions = ? WHERE run_id = ?",
                   [count, bound or None, run_id])
        failed_count = tx.scalar("SELECT count(*) FROM scores WHERE run_id = ? AND scoring_failure IS NOT NULL",
                                 [run_id])
        failed = dict(tx.query("SELECT response_id, scoring_failure FROM scores WHERE run_id = ? "
                               "AND scoring_failure IS NOT NULL ORDER BY response_id LIMIT ?",
                               [run_id, FAILURE_REPORT_LIMIT])) if failed_count else {}
        tx.execute(f"DROP TABLE IF EXISTS {KEYS_TABLE}")
        summary = RescoreSummary(run_id, profile.version, as_of, count, failed, failed_count)
        after: dict[str, Any] = {"profile_version": profile.version, "as_of": as_of.isoformat(), "scope": scope,
                                 "responses_scored": count}
        if len(groups) > 1:
            after["lens_version"] = groups[0].lens_version
            after["bound_profile_versions"] = sorted({g.profile.version for g in groups[1:]})
        if failed_count:
            after.update(scoring_failures=failed_count, failed_responses=failed)
        if kept is not None:
            after["kept_view_of_version"] = kept
        if scope == SCOPE_ALL and publishes.complete(tx, profile.version, profile.fingerprint(), run_id):
            after["completes_publish_of_version"] = profile.version  # the publish's second step (publishes.py)
        return Change("score_run", str(run_id), None, after, result=summary)

    return store.write(actor, "scores.rescore", fn)


def _run_scope(batch_id: int | None, keyed: bool) -> tuple[str, dict[str, Any]]:
    """The revisions a pass scores, as a condition on ``responses r`` and its named parameters."""
    if keyed:
        return f"r.is_current AND r.response_key IN (SELECT response_key FROM {KEYS_TABLE})", {}
    return ("r.is_current", {}) if batch_id is None else ("r.is_current AND r.batch_id = $batch", {"batch": batch_id})


def _score_groups(tx: Transaction, run_id: int, groups: list[LensGroup], as_of: datetime, batch_id: int | None,
                  keyed: bool) -> int:
    """Score the run's scope under its lens groups, set-based across them (``register.scoring.lens_passes``): the
    Authority checks once, the Mitigation step once per policy, then one scoring pass per distinct profile (its
    groups' keys in KEYS_TABLE unless it covers the whole scope). Never one pass per answer."""
    run_scope, params = _run_scope(batch_id, keyed)
    count = 0
    with lens_passes(tx, groups, as_of, run_scope, params) as passes:
        for profile_pass in passes:
            if not profile_pass.whole:
                tx.execute(f"CREATE OR REPLACE TEMP TABLE {KEYS_TABLE} AS SELECT response_key FROM {LENS_OF} "
                           f"WHERE g IN ({', '.join(str(int(g)) for g in profile_pass.groups)})")
            count += _score_group(tx, run_id, groups[profile_pass.groups[0]], as_of, batch_id if profile_pass.whole
                                  else None, keyed or not profile_pass.whole, profile_pass=profile_pass)
        if keyed and len(passes) > 1:  # the read models refresh the run's keys (ScoresWritten): put them back
            tx.execute(f"CREATE OR REPLACE TEMP TABLE {KEYS_TABLE} AS SELECT response_key FROM {LENS_OF}")
    return count


def _score_group(tx: Transaction, run_id: int, group: LensGroup, as_of: datetime, batch_id: int | None,
                 keyed: bool, profile_pass: ProfilePass | None = None) -> int:
    """Write the score rows of one lens group (the run's scope, or the keys in KEYS_TABLE) with their fired floors
    and decision; returns how many. CLAIM's steps as the group's lens says: Scope, Authority and Mitigation run or
    not; human review wired into Mitigation raises the decision to at least review. With ``profile_pass``, the
    groups of one profile pass of a run with lens groups: Authority and Mitigation were decided for every group
    (``lens_passes``' tables), and each row takes its group's steps and human review from ``LENS_INFO``."""
    profile, policy, lens = group.profile, group.policy, group.lens
    # the fired floors first: the decision reads those with a minimum action
    p = Params()
    floors = fired_floors_select(profile, as_of, p, batch_id=batch_id, with_key=True, keyed=keyed)
    tx.execute(f"INSERT INTO score_floors (run_id, {_FLOOR_COLUMNS}, response_key) "
               f"SELECT {p(run_id)}, * FROM ({floors})", p.values)
    # CLAIM's Authority checks and Mitigation step (under the group's mitigation policy, reading the checks),
    # decided for the same revisions first and joined in as the rows are written with their decision
    # (deciding afterwards rewrote every new row: docs/performance.md)
    scope_sql, scope_params = _run_scope(batch_id, keyed)
    p = Params()
    select = score_select(profile, as_of, p, batch_id=batch_id, with_key=True, keyed=keyed)
    columns = ("response_key, s_f, s_c, s_u, s_o, s_s, s_p, s_h, hri_add, hri, score, band, action, "
               "no_claims, total_criticality, floors_fired, decisive_claim_id, decisive_rule_id, "
               "scoring_failure, action_floor_claim_id, action_floor_rule_id")
    mitigation = ", ".join(MITIGATION_VALUES)
    decision = ", ".join(MITIGATION_VALUES.values())
    if profile_pass is None:
        answer = decision_values(p, profile, score="n", action="d.action", reason="d.reason",
                                 human_review=lens.human_review)
        lens_columns = f"{p(list(lens.steps))}::VARCHAR[], {p(lens.human_review)}"
        policy_version = f"CASE WHEN m.response_key IS NOT NULL THEN {p(policy.version)} END"
        tables, lens_join = ("_mitigated", "_mitigation_decided"), ""
    else:
        answer = decision_values(p, profile, score="n", action="d.action", reason="d.reason",
                                 human_review_sql="gi.human_review")
        lens_columns, policy_version, tables = "gi.steps, gi.human_review", "d.policy_version", (MITIGATED, DECIDED)
        lens_join = (f"JOIN {LENS_OF} lo ON lo.response_key = n.response_key JOIN {LENS_INFO} gi ON gi.g = lo.g ")

    def insert() -> int:
        return tx.execute(
            f"INSERT INTO scores (run_id, response_id, revision, profile_version, as_of, is_current, "
            f"{columns}, {mitigation}, mitigation_policy_version, {', '.join(DECISION_COLUMNS)}, "
            f"lens_version, claim_steps, human_review) "
            f"SELECT {p(run_id)}, n.response_id, n.revision, {p(profile.version)}, {p(as_of)}, true, "
            f"{', '.join(f'n.{c}' for c in columns.split(', '))}, {decision}, {policy_version}, "
            f"{', '.join(answer[c] for c in DECISION_COLUMNS)}, {p(group.lens_version)}::INTEGER, {lens_columns} "
            f"FROM ({select}) AS n {lens_join}LEFT JOIN {tables[0]} m ON m.response_key = n.response_key "
            f"LEFT JOIN {tables[1]} d ON d.decision = m.decision {parts_join('n')}",
            p.values) or 0

    if profile_pass is not None:  # the Scope step for the pass's groups that run it
        every = profile_pass.scope_groups == profile_pass.groups
        with decision_parts(tx, profile, profile_pass.policy, run_id, AUTHORITY_TABLE, scope_sql, scope_params,
                            scope=bool(profile_pass.scope_groups),
                            scope_responses=None if every else profile_pass.scope_members):
            return insert()
    with (authority_found(tx, as_of, scope_sql, scope_params, run=lens.runs("authority")) as authority,
          decided(tx, policy, scope_sql, scope_params, authority=authority, run=lens.runs("mitigation")),
          decision_parts(tx, profile, policy, run_id, authority, scope_sql, scope_params, scope=lens.runs("scope"))):
        return insert()
