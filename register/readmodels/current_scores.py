"""The console's read model of the current scores: ``current_scores``, one row per current response.

Each row is a current response (``responses.is_current``) joined to its current score (``scores.is_current``),
with the columns the console filters, groups and sorts by (``COLUMNS``). It holds exactly what that join
holds, and is kept so by every write that changes either side, in the write's own transaction, through the
hub (``register.readmodels.hub``), which calls ``refresh`` and ``rebuild``:

* a score run (``register.scoring.scorer``: a batch, or everything; ``hub.scores_written``) refreshes the
  responses it scored, or rebuilds the table;
* an import of Spark scores (``register.scoring.spark_exchange``; ``hub.scores_written``) refreshes the responses
  it scored;
* an import that revises responses (``register.ingest.records``; ``hub.revisions_written``) refreshes them: a
  revision not scored yet drops out, as it drops out of the join.

Why a table: the console's views of the current scores read these 30 narrow columns instead of joining every
response to every score row (seconds per view at scale, where an aggregate over this table takes a fraction of a
second; docs/performance.md, "Figures behind the code"). The join itself is on the revision's integer key
(``scores.response_key``, migration 019).
``check`` compares it with the join (the hub's check: every test's store is checked at teardown); ``rebuild``
makes it again from the join.

Beside it, ``score_summary`` (migration 022) holds the read model counted by the overview's groups -- use case,
model, creation day and week, band, no claims -- with the counts and sums the overview's figures add up
(``SUMMARY_SELECT``; a few thousand rows however many responses there are). The same writes keep it
in step: ``refresh`` moves the groups by the rows it takes away and adds, ``rebuild`` counts everything again.
"""

from __future__ import annotations

from register.db.store import Cursor, Store

__all__ = ["COLUMNS", "SUMMARY_GROUPS", "SUMMARY_SELECT", "WEEK", "check", "join_select", "key_slices", "rebuild",
           "rebuild_summary", "refresh"]

_DIMS = ("s_f", "s_c", "s_u", "s_o", "s_s", "s_p", "s_h")
# (column, expression over the join of responses r and scores s)
COLUMNS = (
    ("response_key", "r.response_key"), ("response_id", "r.response_id"), ("revision", "r.revision"),
    ("use_case", "r.use_case"), ("model", "r.model"), ("created_at", "r.created_at"),
    ("imported_at", "r.imported_at"), ("claim_count", "r.claim_count"), ("run_id", "s.run_id"),
    ("profile_version", "s.profile_version"), ("as_of", "s.as_of"),
    *((c, f"s.{c}") for c in (*_DIMS, "hri_add", "hri", "score", "band",
                              "action", "no_claims", "floors_fired", "decisive_claim_id", "decisive_rule_id",
                              "scoring_failure", "action_floor_rule_id", "mitigation_action", "mitigation_reason",
                              "decision", "decision_reasons")),
)
_NAMES = ", ".join(name for name, _ in COLUMNS)
REBUILD_SLICE = 2_500_000  # response keys per statement of ``rebuild``


def join_select(scores: str = "s.is_current") -> str:
    """SELECT of the read model's columns from current responses ``r`` joined to their score rows ``s`` that meet
    ``scores`` (the current score by default: the read model's definition)."""
    return (f"SELECT {', '.join(expr for _, expr in COLUMNS)} "
            f"FROM responses r JOIN scores s ON s.response_key = r.response_key WHERE r.is_current AND {scores}")


_JOIN = join_select()

# The Monday (a DATE) of ``created_at``'s ISO week in UTC, the overview's time axis, by integer arithmetic from
# Monday 1970-01-05: equal to date_trunc('week', ...) in UTC and far cheaper (date_trunc on TIMESTAMPTZ goes
# through the ICU calendar, row by row). The console's weekly figures and the summary's week read this one.
WEEK = "(DATE '1970-01-05' + 7 * (floor((epoch_us(created_at) - 345600000000) / 604800000000.0))::INTEGER)"
SUMMARY_GROUPS = ("use_case", "model", "day", "week", "band", "no_claims")
# a read-model row's group, as expressions over its columns (the day decides the week)
_GROUP_OF = {"use_case": "c.use_case", "model": "c.model", "day": "(c.created_at AT TIME ZONE 'UTC')::DATE",
             "week": WEEK.replace("created_at", "c.created_at"), "band": "c.band", "no_claims": "c.no_claims"}
_SUMS = tuple(f"sum_{d}" for d in _DIMS)
_COUNTED = ("responses", "claims", "floors_fired", *_SUMS)
# the summary's rows counted from the rows of ``{table}`` (the read model's columns; alias c) that meet ``{where}``;
# ``{sign}``: 1, or -1 for the rows a refresh takes away
SUMMARY_SELECT = (f"SELECT {', '.join(f'{expr} AS {name}' for name, expr in _GROUP_OF.items())}, "
                  "{sign} * count(*) AS responses, {sign} * sum(c.claim_count)::BIGINT AS claims, "
                  "{sign} * count(c.decisive_claim_id) AS floors_fired, "
                  + ", ".join(f"{{sign}} * sum(c.{d}) AS sum_{d}" for d in _DIMS)
                  + " FROM {table} c WHERE {where} GROUP BY ALL")
_SAME_GROUP = " AND ".join(f"d.{name} IS NOT DISTINCT FROM s.{name}" for name in SUMMARY_GROUPS)


def refresh(cur: Cursor, gone: str, added: str | None, params: dict | None = None, *,
            table: str = "current_scores", summary: str = "score_summary") -> None:
    """Take the rows with the response keys ``gone`` out of the read model and add the join's rows of the keys
    ``added`` (each a SELECT of response keys, named ``$`` parameters in ``params``; None adds nothing), their
    summary groups moved by what they took away and added. The callers name the refreshed responses' current
    revisions before the write (``gone``) and after it (``added``): the read model holds current revisions only, so
    its rows of those responses are the rows of those keys. ``table`` and ``summary`` name another read model of
    the same columns (``register.readmodels.version_views``).

    By the revisions' integer keys, not their ids: by id, taking rows out read every column of the table and joined
    every response to its current score; by key it costs a small fraction of that. The summary moves by
    differences (the rows taken away counted negative, the rows added positive), never by counting a group again:
    a recount scans every row of the read model in the touched groups, the differences only the refreshed rows,
    kept aside as they are taken away and added. A group left with no response goes. (The figures:
    docs/performance.md, "Figures behind the code".)"""
    cur.execute(f"CREATE OR REPLACE TEMP TABLE _refresh_gone AS SELECT * FROM {table} "
                f"WHERE response_key IN ({gone})", params or {})
    cur.execute(f"DELETE FROM {table} WHERE response_key IN (SELECT response_key FROM _refresh_gone)")
    keys = f"AND r.response_key IN ({added})" if added is not None else "AND false"
    cur.execute(f"CREATE OR REPLACE TEMP TABLE _refresh_added AS SELECT * FROM ({_JOIN} {keys})", params or {})
    cur.execute(f"INSERT INTO {table} ({_NAMES}) SELECT * FROM _refresh_added")
    touched = f"EXISTS (SELECT 1 FROM _refresh_delta d WHERE {_SAME_GROUP})"
    groups, counted = ", ".join(SUMMARY_GROUPS), ", ".join(f"sum({c}) AS {c}" for c in _COUNTED)
    cur.execute(f"CREATE OR REPLACE TEMP TABLE _refresh_delta AS {_summary('true', '_refresh_gone', sign=-1)} "
                f"UNION ALL {_summary('true', '_refresh_added')}")
    cur.execute(f"""CREATE OR REPLACE TEMP TABLE _refresh_moved AS
        SELECT {groups}, {counted} FROM (SELECT * FROM {summary} s WHERE {touched} UNION ALL
                                         SELECT * FROM _refresh_delta)
        GROUP BY ALL HAVING sum(responses) <> 0""")
    cur.execute(f"DELETE FROM {summary} s WHERE {touched}")
    cur.execute(f"INSERT INTO {summary} SELECT * FROM _refresh_moved")
    for table in ("_refresh_gone", "_refresh_added", "_refresh_delta", "_refresh_moved"):
        cur.execute(f"DROP TABLE {table}")


def _summary(where: str, table: str = "current_scores", *, sign: int = 1) -> str:
    return SUMMARY_SELECT.format(where=where, table=table, sign=int(sign))


def rebuild(cur: Cursor) -> None:
    """Make the whole table again from the join (after a run that scored everything: cheaper than by id).

    In slices of ``REBUILD_SLICE`` response keys: the join's hash table holds one slice's rows, not every
    response's (in the transaction of a full rescore of the benchmark database the whole join ran out of memory);
    a slice's scans skip the other keys' row groups, so the slices together cost what one pass did
    (docs/performance.md, "Figures behind the code").
    """
    cur.execute("DELETE FROM current_scores")
    for low, high in key_slices(cur):
        cur.execute(f"INSERT INTO current_scores ({_NAMES}) {_JOIN} AND r.response_key >= $lo "
                    "AND r.response_key < $hi AND s.response_key >= $lo AND s.response_key < $hi",
                    {"lo": low, "hi": high})
    rebuild_summary(cur)


def key_slices(cur: Cursor) -> list[tuple[int, int]]:
    """The current responses' keys cut into ranges ``[low, high)`` of ``REBUILD_SLICE`` keys, lowest first ([] when
    there is no current response): what a statement joining every current response to its scores takes one at a
    time, so that its hash table holds one range's rows."""
    low, high = cur.query_one("SELECT min(response_key), max(response_key) FROM responses WHERE is_current") \
        or (None, None)
    if low is None:
        return []
    return [(start, start + REBUILD_SLICE) for start in range(int(low), int(high) + 1, REBUILD_SLICE)]


def rebuild_summary(cur: Cursor) -> None:
    """Count the whole summary again from the read model."""
    cur.execute("DELETE FROM score_summary")
    cur.execute("INSERT INTO score_summary " + _summary("true"))


def check(cur: Cursor | Store, limit: int = 5, *, table: str = "current_scores", summary: str = "score_summary",
          join: str = _JOIN) -> list[str]:
    """The differences between the table and the join, as sentences (at most ``limit``); [] when they agree.
    ``table``, ``summary`` and ``join``: another read model, its summary and the SELECT it must equal."""
    rows = cur.query(f"""
        WITH t AS (SELECT {_NAMES} FROM {table}), j AS ({join}),
        extra AS (SELECT 'in the table, not in the join' AS why, response_id, revision
                  FROM (FROM t EXCEPT ALL FROM j)),
        missing AS (SELECT 'in the join, not in the table' AS why, response_id, revision
                    FROM (FROM j EXCEPT ALL FROM t))
        SELECT why, response_id, revision FROM (FROM extra UNION ALL FROM missing)
        ORDER BY why, response_id, revision LIMIT ?""", [int(limit)])
    found = [f"response {rid} revision {rev}: {why}" for why, rid, rev in rows]
    # the summary against the read model counted again: counts exactly, sums to their last bits (the order of a
    # parallel sum varies)
    mismatched = cur.query(f"""
        WITH t AS (SELECT * FROM {summary}), j AS ({_summary("true", table)})
        SELECT {", ".join(f"coalesce(t.{g}, j.{g})" for g in SUMMARY_GROUPS)} FROM t FULL JOIN j
            ON {" AND ".join(f"t.{g} IS NOT DISTINCT FROM j.{g}" for g in SUMMARY_GROUPS)}
        WHERE t.responses IS DISTINCT FROM j.responses OR t.claims IS DISTINCT FROM j.claims
           OR t.floors_fired IS DISTINCT FROM j.floors_fired
           OR {" OR ".join(f"NOT (abs(t.{c} - j.{c}) <= 1e-9 * greatest(1.0, abs(j.{c})))" for c in _SUMS)}
        ORDER BY ALL LIMIT ?""", [int(limit)])
    found += [f"score summary group {dict(zip(SUMMARY_GROUPS, row, strict=True))}: not the read model's count"
              for row in mismatched]
    return found[:limit]
