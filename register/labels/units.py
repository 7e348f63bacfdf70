"""The units of a labelling batch and every annotator's reading of each, in SQL.

A *unit* is what annotators judge: a claim of the labelled revision, or a claim an annotator made by
splitting, merging or adding (``annotations.origin``). Every annotator of the batch has a *state* for
every unit: ``open`` (an original claim not labelled yet, or a made claim not labelled yet),
``labelled``, ``replaced`` (the annotator split it or merged it away) or ``absent`` (a claim another
annotator made). The *reading* is what is compared between annotators: for a labelled unit its sorted
labels, criticality, category and dimensions (and, for a made claim, its text); otherwise its state.

A response is *complete* when no annotator has an open unit in it; a unit of a complete response is
*agreed* when every annotator's reading is the same, *disagreed* otherwise. These queries are shared by
the workbench (progress), the adjudication queue and the agreement figures.
"""

from __future__ import annotations

from register.db.sql import Params

__all__ = ["readings_sql", "unit_status_sql"]


def readings_sql(p: Params, batch_id: int | None = None, response_id: str | None = None) -> str:
    """One row per (batch_id, response_id, unit_id, annotator): origin, position, text, state, labels,
    dimensions, criticality, category, source_id, span, note, reading."""
    where_b = "" if batch_id is None else f"WHERE batch_id = {p(batch_id)}"
    where_r = "" if response_id is None else f"AND i.response_id = {p(response_id)}"
    where_a = "" if response_id is None else f"AND a.response_id = {p(response_id)}"
    return f"""
        WITH b AS (SELECT batch_id, unnest(annotators) AS annotator FROM label_batches {where_b}),
        orig AS (SELECT i.batch_id, i.response_id, c.claim_id AS unit_id, CAST(c.claim_idx AS DOUBLE) AS position,
                        c.text, true AS is_original
                 FROM label_batch_items i
                 JOIN claims c ON c.response_id = i.response_id AND c.revision = i.revision
                 WHERE i.batch_id IN (SELECT DISTINCT batch_id FROM b) {where_r}),
        made AS (SELECT a.batch_id, a.response_id, a.unit_id, min(a.position) AS position,
                        CAST(NULL AS VARCHAR) AS text, false AS is_original
                 FROM annotations a
                 WHERE a.origin <> 'claim' AND a.batch_id IN (SELECT DISTINCT batch_id FROM b) {where_a}
                 GROUP BY ALL),
        units AS (SELECT * FROM orig UNION ALL SELECT * FROM made)
        SELECT u.batch_id, u.response_id, u.unit_id, b.annotator, u.is_original,
               coalesce(a.origin, 'claim') AS origin, a.derived_from, coalesce(a.position, u.position) AS position,
               coalesce(a.text, u.text) AS text,
               coalesce(a.state, CASE WHEN u.is_original THEN 'open' ELSE 'absent' END) AS state,
               a.labels, a.dimensions, a.criticality, a.category, a.source_id, a.span, a.note, a.annotated_at,
               CASE WHEN a.state = 'labelled' THEN
                        array_to_string(list_sort(a.labels), ',') || '|' || a.criticality || '|' ||
                        coalesce(a.category, '') || '|' || coalesce(array_to_string(list_sort(a.dimensions), ','), '')
                        || '|' || CASE WHEN u.is_original THEN '' ELSE coalesce(a.text, '') END
                    ELSE coalesce(a.state, CASE WHEN u.is_original THEN 'open' ELSE 'absent' END) END AS reading
        FROM units u JOIN b ON b.batch_id = u.batch_id
        LEFT JOIN annotations a ON a.batch_id = u.batch_id AND a.response_id = u.response_id
             AND a.unit_id = u.unit_id AND a.annotator = b.annotator"""


def unit_status_sql(p: Params, batch_id: int | None = None, response_id: str | None = None) -> str:
    """One row per unit: batch_id, response_id, unit_id, position, complete (its response is), agreed,
    readings (distinct count), adjudication_id (NULL when not adjudicated), applied (its response's labels
    are in the register)."""
    return f"""
        WITH rd AS ({readings_sql(p, batch_id, response_id)}),
        resp AS (SELECT batch_id, response_id, count(*) FILTER (WHERE state = 'open') = 0 AS complete
                 FROM rd GROUP BY ALL),
        unit AS (SELECT batch_id, response_id, unit_id, min(position) AS position, bool_or(is_original) AS is_original,
                        count(DISTINCT reading) AS readings
                 FROM rd GROUP BY ALL)
        SELECT unit.*, resp.complete, resp.complete AND unit.readings = 1 AS agreed, adj.adjudication_id,
               EXISTS (SELECT 1 FROM label_provenance lp WHERE lp.batch_id = unit.batch_id
                       AND lp.response_id = unit.response_id) AS applied
        FROM unit JOIN resp USING (batch_id, response_id)
        LEFT JOIN adjudications adj ON adj.batch_id = unit.batch_id AND adj.response_id = unit.response_id
             AND adj.unit_id = unit.unit_id"""
