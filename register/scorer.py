"""Bulk HRI scoring in DuckDB SQL: one set-based statement over the claims table.

``score_query`` builds a SELECT that scores every current response (or one batch) under a profile
at an as-of time; it computes exactly what ``hri_core.score_response`` computes (a property test
holds the two to 1e-9). The SQL *shape* follows the profile's structure (which labels hit which
dimension by default, which floor rules exist); every *number* (contributions, weights, floor
values, band bounds, decay rate, as-of time) is a bound parameter.

Labels and explicit dimensions are stored as bit masks (``hri_core.vocabulary.LABEL_BIT``), so a
claim's contribution to a dimension is a handful of integer tests and one GREATEST, and the whole
score is one GROUP BY over the claims.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hri_core import DIMENSIONS, Label, ScoringProfile
from hri_core.models import ensure_utc
from hri_core.vocabulary import DIMENSION_BIT, LABEL_BIT

from .store import Actor, Change, Store, utc_now

DIM_COLUMNS = {d: f"s_{d.value.lower()}" for d in DIMENSIONS}  # allow-listed identifiers


class _Params:
    """Collects bound parameters under generated names (``$p1``, ``$p2`` ...)."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def __call__(self, value: Any) -> str:
        name = f"p{len(self.values) + 1}"
        self.values[name] = value
        return f"${name}"


def _m_expr(profile: ScoringProfile, dim, labels, value_of) -> str:
    """m_ik for one dimension: the largest contribution among the claim's labels that hit it."""
    terms = []
    for label in labels:
        has_label = f"(label_mask & {LABEL_BIT[label]}) <> 0"
        explicit = f"(dim_mask & {DIMENSION_BIT[dim]}) <> 0"
        applies = f"(dim_mask IS NULL OR {explicit})" if dim in profile.default_dimensions[label] else explicit
        terms.append(f"CASE WHEN {has_label} AND {applies} THEN {value_of(label)} ELSE 0.0 END")
    return f"greatest(0.0, {', '.join(terms)})" if terms else "0.0"


def _floor_condition(rule, as_of_param: str, p: _Params) -> str:
    cond = [f"(label_mask & {LABEL_BIT[rule.label]}) <> 0", f"criticality >= {p(rule.min_criticality)}"]
    if rule.max_criticality is not None:
        cond.append(f"criticality <= {p(rule.max_criticality)}")
    if rule.condition == "repeated_or_unresolved":
        cond.append(f"(feedback_at IS NULL OR feedback_at <= {as_of_param})")
        cond.append(f"(coalesce(feedback_count, 0) >= {p(rule.min_feedback_count)} "
                    f"OR feedback_resolved IS DISTINCT FROM true)")
    return " AND ".join(cond)


def _scope(p: _Params, batch_id: int | None, alias: str) -> str:
    """Rows of current responses, optionally of one import batch (claims reach it via response_key)."""
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


def score_query(profile: ScoringProfile, as_of: datetime, *, batch_id: int | None = None) -> tuple[str, dict[str, Any]]:
    """SELECT of one score row per current response: dimension scores, HRI, band, action, floors.

    Columns: response_id, revision, s_f..s_h, hri_add, hri, score, band, action, no_claims,
    total_criticality, floors_fired, decisive_claim_id, decisive_rule_id.

    Shape of the computation (why it is fast): a claim's contributions depend only on its label mask,
    dimension mask and criticality, except for validated negative feedback, which decays per claim.
    So m_ik is computed once per distinct claim shape (tens of rows), joined back to the claims on one
    integer key, and only feedback claims get per-row work; grouping is on an integer response key.
    Floors are evaluated only on claims carrying a label that some floor rule names (a small scan).
    """
    as_of = ensure_utc(as_of)
    p = _Params()
    at = p(as_of) + "::TIMESTAMPTZ"
    vnf = Label.VALIDATED_NEGATIVE_FEEDBACK
    static_labels = [lab for lab in Label if lab not in (Label.SUPPORTED, vnf)]
    shape_m = {d: _m_expr(profile, d, static_labels, lambda lab: p(profile.contributions[lab])) for d in DIMENSIONS}
    decay = (f"(CASE WHEN feedback_at IS NULL THEN 1.0 WHEN feedback_at > {at} THEN 0.0 "
             f"ELSE exp(-{p(profile.decay_lambda)} * (epoch_us({at}) - epoch_us(feedback_at)) / 86400000000.0) END)")
    vnf_value = f"{p(profile.contributions[vnf])} * {decay}"
    vnf_m = {d: _m_expr(profile, d, [vnf], lambda lab: vnf_value) for d in DIMENSIONS}

    low = {d: d.value.lower() for d in DIMENSIONS}
    vnf_bit = LABEL_BIT[vnf]
    shape_key = "(label_mask::BIGINT + 256 * coalesce(dim_mask, 255) + 65536 * criticality::BIGINT)"
    shape_cols = ", ".join(f"{shape_m[d]} AS m_{low[d]}" for d in DIMENSIONS)
    claim_m = ", ".join(
        f"CASE WHEN (label_mask & {vnf_bit}) <> 0 THEN greatest(k.m_{low[d]}, {vnf_m[d]}) ELSE k.m_{low[d]} END "
        f"AS m_{low[d]}" for d in DIMENSIONS)
    sums = ", ".join(f"sum(criticality * m_{low[d]}) AS n_{low[d]}" for d in DIMENSIONS)
    dims = ",\n    ".join(f"coalesce(a.n_{low[d]} / a.tv, 0.0) AS {DIM_COLUMNS[d]}" for d in DIMENSIONS)
    weighted = " + ".join(f"{p(profile.weights[d])} * {DIM_COLUMNS[d]}" for d in DIMENSIONS)

    # floors: phi per claim, the number of rules fired, and the decisive rule (first in profile order
    # among those with the claim's top value) -- only over claims that carry a floor label
    rules = [(rule, _floor_condition(rule, at, p), p(rule.value), p(rule.rule_id)) for rule in profile.floors]
    if rules:
        phi = "greatest(" + ", ".join(f"CASE WHEN {c} THEN {v} ELSE 0.0 END" for _, c, v, _ in rules) + ")"
        fired_count = " + ".join(f"({c})::INTEGER" for _, c, _, _ in rules)
        rule_of = "CASE " + " ".join(f"WHEN ({c}) AND {v} = phi THEN {rid}" for _, c, v, rid in rules) + " END"
        floors_cte = f"""
, fc AS (
    SELECT response_key, claim_idx, claim_id, {phi} AS phi, {fired_count} AS n_fired,
           label_mask, dim_mask, criticality, feedback_at, feedback_count, feedback_resolved
    FROM claims cl WHERE {_scope(p, batch_id, "cl")} AND (label_mask & {p(_floor_label_mask(profile))}) <> 0
), fa AS (
    SELECT response_key, max(phi) AS phi, sum(n_fired) AS n_fired,
           arg_max({{'claim_id': claim_id, 'rule_id': {rule_of}}}, [phi, -claim_idx]) AS top
    FROM fc WHERE n_fired > 0 GROUP BY response_key  -- a floor of value 0 still fires (and is counted)
)"""
    else:
        floors_cte = ", fa AS (SELECT NULL::BIGINT AS response_key, 0.0 AS phi, 0 AS n_fired, " \
                     "NULL::STRUCT(claim_id VARCHAR, rule_id VARCHAR) AS top WHERE false)"
    bands = profile.bands
    # a one-band profile is valid: "CASE ELSE x END" is not SQL, so it is the band's value itself
    band_case = ("CASE " + " ".join(
        f"WHEN round(100.0 * hri, 9) <= {p(b.upper)} THEN {p(b.name)}" for b in bands[:-1]) +
        f" ELSE {p(bands[-1].name)} END") if len(bands) > 1 else p(bands[0].name)
    action_case = ("CASE " + " ".join(
        f"WHEN round(100.0 * hri, 9) <= {p(b.upper)} THEN {p(b.action)}" for b in bands[:-1]) +
        f" ELSE {p(bands[-1].action)} END") if len(bands) > 1 else p(bands[0].action)
    sql = f"""
WITH shapes AS (
    SELECT shape_key, {shape_cols}
    FROM (SELECT DISTINCT {shape_key} AS shape_key, label_mask, dim_mask, criticality
          FROM claims cl WHERE {_scope(p, batch_id, "cl")})
), a AS (
    SELECT response_key, sum(criticality) AS tv, {sums}
    FROM (SELECT cl.response_key, cl.criticality, {claim_m}
          FROM claims cl JOIN shapes k ON k.shape_key = {shape_key.replace("label_mask", "cl.label_mask")
                                                        .replace("dim_mask", "cl.dim_mask")
                                                        .replace("criticality", "cl.criticality")}
          WHERE {_scope(p, batch_id, "cl")})
    GROUP BY response_key
){floors_cte}, s AS (
    SELECT r.response_id, r.revision,
    {dims},
    coalesce(fa.phi, 0.0) AS phi,
    coalesce(a.tv, 0) AS total_criticality,
    a.tv IS NULL AS no_claims,
    coalesce(fa.n_fired, 0) AS floors_fired,
    fa.top
    FROM responses r
    LEFT JOIN a ON a.response_key = r.response_key
    LEFT JOIN fa ON fa.response_key = r.response_key
    WHERE {_scope(p, batch_id, "r")}
), h AS (
    SELECT *, least(1.0, {weighted}) AS hri_add FROM s
), g AS (
    SELECT *, greatest(hri_add, phi) AS hri FROM h
)
SELECT response_id, revision, {', '.join(DIM_COLUMNS.values())}, hri_add, hri, 100.0 * hri AS score,
    {band_case} AS band,
    CASE WHEN no_claims THEN {p(profile.no_claims_action)} ELSE {action_case} END AS action,
    no_claims, total_criticality::INTEGER AS total_criticality, floors_fired::INTEGER AS floors_fired,
    CASE WHEN phi > hri_add THEN top.claim_id END AS decisive_claim_id,
    CASE WHEN phi > hri_add THEN top.rule_id END AS decisive_rule_id
FROM g
"""
    return sql, p.values


def fired_floors_query(profile: ScoringProfile, as_of: datetime, *,
                       batch_id: int | None = None) -> tuple[str, dict[str, Any]]:
    """SELECT of every floor that fires: response_id, revision, claim_idx, claim_id, rule_id, label,
    criticality, value (one row per claim and rule, in claim then profile order)."""
    as_of = ensure_utc(as_of)
    p = _Params()
    # only the feedback floor reads the as-of time: an unused named parameter is an error in DuckDB
    at = p(as_of) + "::TIMESTAMPTZ" if any(r.condition == "repeated_or_unresolved" for r in profile.floors) else ""
    if not profile.floors:
        return ("SELECT NULL::VARCHAR AS response_id, NULL::INTEGER AS revision, NULL::INTEGER AS claim_idx, "
                "NULL::VARCHAR AS claim_id, NULL::VARCHAR AS rule_id, NULL::VARCHAR AS label, "
                "NULL::INTEGER AS criticality, NULL::DOUBLE AS value WHERE false", {})
    branches = " UNION ALL ".join(
        f"SELECT response_id, revision, claim_idx, claim_id, {p(rule.rule_id)} AS rule_id, "
        f"{p(rule.label.value)} AS label, criticality, {p(rule.value)}::DOUBLE AS value, {i} AS rule_order "
        f"FROM claims cl WHERE {_scope(p, batch_id, 'cl')} AND {_floor_condition(rule, at, p)}"
        for i, rule in enumerate(profile.floors))
    sql = (f"SELECT response_id, revision, claim_idx, claim_id, rule_id, label, criticality, value "
           f"FROM ({branches}) ORDER BY response_id, revision, claim_idx, rule_order")
    return sql, p.values


@dataclass(frozen=True)
class RescoreSummary:
    run_id: int
    profile_version: int
    as_of: datetime
    responses_scored: int


def rescore(store: Store, actor: Actor, profile: ScoringProfile, *, as_of: datetime | None = None,
            batch_id: int | None = None) -> RescoreSummary:
    """Score current responses (all, or one batch) under ``profile`` in one transaction.

    Earlier scores are kept; the new rows become the current scores of their responses, recording
    the run, the profile version and the as-of time.
    """
    as_of = ensure_utc(as_of or utc_now())
    select_sql, params = score_query(profile, as_of, batch_id=batch_id)
    scope = "all" if batch_id is None else f"batch:{batch_id}"

    def fn(cur) -> Change:
        run_id = cur.execute("SELECT nextval('seq_score_run')").fetchone()[0]
        cur.execute("INSERT INTO score_runs (run_id, profile_version, as_of, started_at, actor_name, scope) "
                    "VALUES (?, ?, ?, ?, ?, ?)", [run_id, profile.version, as_of, utc_now(), actor.name, scope])
        cur.execute(f"CREATE OR REPLACE TEMP TABLE _new_scores AS {select_sql}", params)
        cur.execute("UPDATE scores SET is_current = false WHERE is_current AND response_id IN "
                    "(SELECT response_id FROM _new_scores)")
        cur.execute(
            "INSERT INTO scores SELECT $run_id, response_id, revision, $version, $as_of, true, s_f, s_c, s_u, s_o, "
            "s_s, s_p, s_h, hri_add, hri, score, band, action, no_claims, total_criticality, floors_fired, "
            "decisive_claim_id, decisive_rule_id FROM _new_scores",
            {"run_id": run_id, "version": profile.version, "as_of": as_of})
        floors_sql, floors_params = fired_floors_query(profile, as_of, batch_id=batch_id)
        cur.execute(f"INSERT INTO score_floors SELECT $run_id, * FROM ({floors_sql})",
                    {**floors_params, "run_id": run_id})
        count = cur.execute("SELECT count(*) FROM _new_scores").fetchone()[0]
        cur.execute("DROP TABLE _new_scores")
        cur.execute("UPDATE score_runs SET responses_scored = ? WHERE run_id = ?", [count, run_id])
        summary = RescoreSummary(run_id, profile.version, as_of, count)
        return Change("score_run", str(run_id), None,
                      {"profile_version": profile.version, "as_of": as_of.isoformat(), "scope": scope,
                       "responses_scored": count}, result=summary)

    return store.write(actor, "scores.rescore", fn)
