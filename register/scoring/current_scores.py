"""The console's read model of the current scores: ``current_scores``, one row per current response.

Each row is a current response (``responses.is_current``) joined to its current score (``scores.is_current``),
with the columns the console filters, groups and sorts by (``COLUMNS``). It holds exactly what that join
holds, and is kept so by every write that changes either side, in the write's own transaction:

* a score run (``register.scoring.scorer``: a batch, or everything) refreshes the responses it scored;
* an import of Spark scores (``register.scoring.spark_exchange``) refreshes the responses it scored;
* an import that revises responses (``register.ingest.records``) refreshes them: a revision not scored yet
  drops out, as it drops out of the join.

Why a table: the console's views of the current scores read these 30 narrow columns instead of joining
10 million responses to 40 million score rows (at 10M, 5-17 s per view before; an aggregate over this table
takes 0.1-0.4 s). The join itself is on the revision's integer key (``scores.response_key``, migration 019).
``check`` compares it with the join (every test's store is checked at teardown); ``rebuild`` makes it again
from the join.
"""

from __future__ import annotations

from register.db.store import Cursor, Store

__all__ = ["COLUMNS", "check", "rebuild", "refresh"]

# (column, expression over the join of responses r and scores s)
COLUMNS = (
    ("response_key", "r.response_key"), ("response_id", "r.response_id"), ("revision", "r.revision"),
    ("use_case", "r.use_case"), ("model", "r.model"), ("created_at", "r.created_at"),
    ("imported_at", "r.imported_at"), ("claim_count", "r.claim_count"), ("run_id", "s.run_id"),
    ("profile_version", "s.profile_version"), ("as_of", "s.as_of"),
    *((c, f"s.{c}") for c in ("s_f", "s_c", "s_u", "s_o", "s_s", "s_p", "s_h", "hri_add", "hri", "score", "band",
                              "action", "no_claims", "floors_fired", "decisive_claim_id", "decisive_rule_id",
                              "scoring_failure", "action_floor_rule_id", "mitigation_action", "mitigation_reason")),
)
_NAMES = ", ".join(name for name, _ in COLUMNS)
REBUILD_SLICE = 2_500_000  # response keys per statement of ``rebuild``
_JOIN = (f"SELECT {', '.join(expr for _, expr in COLUMNS)} "
         "FROM responses r JOIN scores s ON s.response_key = r.response_key "
         "WHERE r.is_current AND s.is_current")


def refresh(cur: Cursor, response_ids: str, params: dict | None = None) -> None:
    """Make the rows of the responses ``response_ids`` (a SELECT of response ids; named ``$`` parameters in
    ``params``) what the join says they are now: removed, then those still current and scored inserted."""
    cur.execute(f"DELETE FROM current_scores WHERE response_id IN ({response_ids})", params or {})
    cur.execute(f"INSERT INTO current_scores ({_NAMES}) {_JOIN} AND r.response_id IN ({response_ids})", params or {})


def rebuild(cur: Cursor) -> None:
    """Make the whole table again from the join (after a run that scored everything: cheaper than by id).

    In slices of ``REBUILD_SLICE`` response keys: the join's hash table holds one slice's rows, not every
    response's (at 10M, in the transaction of a full rescore, the whole join ran out of DuckDB's 4 GB; a
    slice's scans skip the other keys' row groups, so four slices cost what one pass did: 16-17 s).
    """
    cur.execute("DELETE FROM current_scores")
    bounds = cur.query_one("SELECT min(response_key), max(response_key) FROM responses WHERE is_current")
    if bounds is None or bounds[0] is None:
        return
    for start in range(int(bounds[0]), int(bounds[1]) + 1, REBUILD_SLICE):
        cur.execute(f"INSERT INTO current_scores ({_NAMES}) {_JOIN} AND r.response_key >= $lo AND r.response_key < $hi "
                    "AND s.response_key >= $lo AND s.response_key < $hi", {"lo": start, "hi": start + REBUILD_SLICE})


def check(cur: Cursor | Store, limit: int = 5) -> list[str]:
    """The differences between the table and the join, as sentences (at most ``limit``); [] when they agree."""
    rows = cur.query(f"""
        WITH t AS (SELECT {_NAMES} FROM current_scores), j AS ({_JOIN}),
        extra AS (SELECT 'in the table, not in the join' AS why, response_id, revision
                  FROM (FROM t EXCEPT ALL FROM j)),
        missing AS (SELECT 'in the join, not in the table' AS why, response_id, revision
                    FROM (FROM j EXCEPT ALL FROM t))
        SELECT why, response_id, revision FROM (FROM extra UNION ALL FROM missing)
        ORDER BY why, response_id, revision LIMIT ?""", [int(limit)])
    return [f"response {rid} revision {rev}: {why}" for why, rid, rev in rows]
