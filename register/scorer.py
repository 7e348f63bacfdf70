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


def _claim_terms(profile: ScoringProfile, as_of: datetime, p: _Params) -> tuple[dict, str, str]:
    """SQL expressions per claim: m_ik per dimension, phi, and the decisive rule of that claim."""
    vnf = Label.VALIDATED_NEGATIVE_FEEDBACK
    decay = (f"(CASE WHEN feedback_at IS NULL THEN 1.0 WHEN feedback_at > {p(as_of)}::TIMESTAMPTZ THEN 0.0 "
             f"ELSE exp(-{p(profile.decay_lambda)} * (epoch_us({p(as_of)}::TIMESTAMPTZ) - epoch_us(feedback_at)) "
             f"/ 86400000000.0) END)")
    m_exprs = {}
    for dim in DIMENSIONS:
        terms = []
        for label in Label:
            if label == Label.SUPPORTED:
                continue  # a supported claim adds nothing, whatever its dimensions
            has_label = f"(label_mask & {LABEL_BIT[label]}) <> 0"
            explicit = f"(dim_mask & {DIMENSION_BIT[dim]}) <> 0"
            applies = f"(dim_mask IS NULL OR {explicit})" if dim in profile.default_dimensions[label] else explicit
            value = p(profile.contributions[label])
            if label == vnf:
                value = f"{value} * {decay}"
            terms.append(f"CASE WHEN {has_label} AND {applies} THEN {value} ELSE 0.0 END")
        m_exprs[dim] = f"greatest(0.0, {', '.join(terms)})"

    floor_terms, fired_terms = [], []
    for rule in profile.floors:
        cond = [f"(label_mask & {LABEL_BIT[rule.label]}) <> 0", f"criticality >= {p(rule.min_criticality)}"]
        if rule.max_criticality is not None:
            cond.append(f"criticality <= {p(rule.max_criticality)}")
        if rule.condition == "repeated_or_unresolved":
            cond.append(f"(feedback_at IS NULL OR feedback_at <= {p(as_of)}::TIMESTAMPTZ)")
            cond.append(f"(coalesce(feedback_count, 0) >= {p(rule.min_feedback_count)} "
                        f"OR feedback_resolved IS DISTINCT FROM true)")
        condition = " AND ".join(cond)
        floor_terms.append((condition, rule))
    phi = "0.0"
    if floor_terms:
        phi = "greatest(0.0, " + ", ".join(
            f"CASE WHEN {c} THEN {p(r.value)} ELSE 0.0 END" for c, r in floor_terms) + ")"
        fired_terms = [f"CASE WHEN {c} THEN {{'claim_id': claim_id, 'rule_id': {p(r.rule_id)}, "
                       f"'value': {p(r.value)}::DOUBLE}} END" for c, r in floor_terms]
    fired = f"list_filter([{', '.join(fired_terms)}], lambda x: x IS NOT NULL)" if fired_terms else "[]"
    return m_exprs, phi, fired


def score_query(profile: ScoringProfile, as_of: datetime, *, batch_id: int | None = None,
                response_ids_table: str | None = None) -> tuple[str, dict[str, Any]]:
    """SELECT of one score row per current response: dimension scores, HRI, band, action, floors.

    Columns: response_id, revision, s_f..s_h, hri_add, hri, score, band, action, no_claims,
    total_criticality, floors_fired, decisive_claim_id, decisive_rule_id, floors (list of structs).
    """
    as_of = ensure_utc(as_of)
    p = _Params()
    m_exprs, phi, fired = _claim_terms(profile, as_of, p)
    scope = "r.is_current"
    if batch_id is not None:
        scope += f" AND r.batch_id = {p(batch_id)}"  # the same named parameter serves both uses
    claim_cols = ",\n        ".join(f"{m_exprs[d]} AS m_{d.value.lower()}" for d in DIMENSIONS)
    sums = ",\n        ".join(f"sum(criticality * m_{d.value.lower()}) AS n_{d.value.lower()}" for d in DIMENSIONS)
    dims = ",\n    ".join(
        f"coalesce(a.n_{d.value.lower()} / a.tv, 0.0) AS {DIM_COLUMNS[d]}" for d in DIMENSIONS)
    weighted = " + ".join(f"{p(profile.weights[d])} * coalesce(a.n_{d.value.lower()} / a.tv, 0.0)"
                          for d in DIMENSIONS)
    bands = profile.bands
    band_case = "CASE " + " ".join(
        f"WHEN round(100.0 * hri, 9) <= {p(b.upper)} THEN {p(b.name)}" for b in bands[:-1]) + \
        f" ELSE {p(bands[-1].name)} END" if len(bands) > 1 else p(bands[0].name)
    action_case = "CASE " + " ".join(
        f"WHEN round(100.0 * hri, 9) <= {p(b.upper)} THEN {p(b.action)}" for b in bands[:-1]) + \
        f" ELSE {p(bands[-1].action)} END" if len(bands) > 1 else p(bands[0].action)
    no_claims_action = p(profile.no_claims_action)
    sql = f"""
WITH c AS (
    SELECT cl.response_id, cl.revision, cl.claim_idx, cl.claim_id, cl.criticality, cl.label_mask,
           cl.dim_mask, cl.feedback_at, cl.feedback_count, cl.feedback_resolved
    FROM claims cl JOIN responses r ON r.response_id = cl.response_id AND r.revision = cl.revision
    WHERE {scope}
), m AS (
    SELECT response_id, revision, claim_idx, claim_id, criticality,
        {claim_cols},
        {phi} AS phi,
        CASE WHEN {phi} > 0 THEN {fired} END AS fired
    FROM c
), a AS (
    SELECT response_id, revision, sum(criticality) AS tv,
        {sums},
        max(phi) AS phi,
        arg_max(fired, [phi, -claim_idx]) AS top_fired,
        flatten(list(fired ORDER BY claim_idx) FILTER (WHERE phi > 0)) AS floors
    FROM m GROUP BY response_id, revision
), s AS (
    SELECT r.response_id, r.revision,
    {dims},
    least(1.0, {weighted}) AS hri_add,
    coalesce(a.phi, 0.0) AS phi,
    coalesce(a.tv, 0) AS total_criticality,
    a.tv IS NULL AS no_claims,
    coalesce(a.floors, []) AS floors,
    a.top_fired
    FROM responses r LEFT JOIN a ON a.response_id = r.response_id AND a.revision = r.revision
    WHERE {scope}
), h AS (
    SELECT *, greatest(hri_add, phi) AS hri FROM s
)
SELECT response_id, revision, {', '.join(DIM_COLUMNS.values())}, hri_add, hri, 100.0 * hri AS score,
    {band_case} AS band,
    CASE WHEN no_claims THEN {no_claims_action} ELSE {action_case} END AS action,
    no_claims, total_criticality::INTEGER AS total_criticality, len(floors)::INTEGER AS floors_fired,
    CASE WHEN phi > hri_add THEN list_filter(top_fired, lambda x: x.value = phi)[1].claim_id END AS decisive_claim_id,
    CASE WHEN phi > hri_add THEN list_filter(top_fired, lambda x: x.value = phi)[1].rule_id END AS decisive_rule_id,
    floors
FROM h
"""
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
            "INSERT INTO scores SELECT $run_id, response_id, revision, $version, $as_of, true, s_f, s_c, s_u, s_o, s_s, s_p, s_h, "
            "hri_add, hri, score, band, action, no_claims, total_criticality, floors_fired, decisive_claim_id, "
            "decisive_rule_id, to_json(floors) FROM _new_scores",
            {"run_id": run_id, "version": profile.version, "as_of": as_of})
        count = cur.execute("SELECT count(*) FROM _new_scores").fetchone()[0]
        cur.execute("DROP TABLE _new_scores")
        cur.execute("UPDATE score_runs SET responses_scored = ? WHERE run_id = ?", [count, run_id])
        summary = RescoreSummary(run_id, profile.version, as_of, count)
        return Change("score_run", str(run_id), None,
                      {"profile_version": profile.version, "as_of": as_of.isoformat(), "scope": scope,
                       "responses_scored": count}, result=summary)

    return store.write(actor, "scores.rescore", fn)
