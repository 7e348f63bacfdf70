"""``claim_source_counts`` (migrations 024, 025, 031): the current claims that cite a source, counted by label mask,
source and category -- what the Authority checks read of a claim apart from its response -- by their answer's use
case and model (the filters the overview's Authority figures can then be read under from here) and by the UTC day
of its creation time (``created_day``, NULL without one: what a dated source's check reads of the answer).

They hold exactly the count and the answers of ``claims`` where ``is_current`` and ``source_id`` is set, and are kept
so by the hub (``register.readmodels.hub.revisions_written``: ``counted`` before the write, ``move`` after it) in
the transaction of each write that changes which claims are current: an import (``register.ingest.records``: the
claims of a revised response stop being current, the new revision's start) and the synthetic copies
(``register.ingest.replicate``). Claims are never rewritten otherwise. ``check`` compares both with a recount (the
hub's check: every test's store is checked at teardown); ``rebuild`` counts again (the hub's rebuild).

Readers: the overview's Authority figures over every current response (``register.scoring.authority``) and the
sources the current claims cite (``authority.cited_sources``).
"""

from __future__ import annotations

import pyarrow as pa

from register.db.store import Cursor, Store

__all__ = ["check", "counted", "move", "rebuild"]

_KEY = "label_mask, source_id, category, use_case, model, created_day"
# ``where`` is a condition on ``claims`` alone (it is applied before the claims meet their responses)
_COUNT = ("SELECT c.label_mask, c.source_id, c.category, r.use_case, r.model, "
          "(r.created_at AT TIME ZONE 'UTC')::DATE AS created_day, count(*) AS claims "
          "FROM (SELECT label_mask, source_id, category, response_key FROM claims "
          "      WHERE is_current AND source_id IS NOT NULL AND ({where})) c "
          "JOIN responses r ON r.response_key = c.response_key GROUP BY ALL")
_ANSWER_COLUMNS = "source_id, label_mask, category, use_case, created_day, response_key"
# the answers of the current sourced claims that meet ``where`` (a condition on ``claims`` alone), one row each
_ANSWERS = ("SELECT c.source_id, c.label_mask, c.category, r.use_case, "
            "(r.created_at AT TIME ZONE 'UTC')::DATE AS created_day, c.response_key "
            "FROM (SELECT DISTINCT source_id, label_mask, category, response_key FROM claims "
            "      WHERE is_current AND source_id IS NOT NULL AND ({where})) c "
            "JOIN responses r ON r.response_key = c.response_key")


def counted(cur: Cursor, where: str, params: dict | None = None) -> pa.Table:
    """The counts of the current sourced claims that meet ``where`` (a condition on ``claims``; named ``$``
    parameters in ``params``): take them before a write makes those claims not current, give them to ``move``."""
    return cur.arrow(_COUNT.format(where=where), params or {})


def move(cur: Cursor, gone: pa.Table | None, added_where: str, params: dict | None = None, *,
         gone_keys: str | None = None) -> None:
    """Take the counts ``gone`` (from ``counted``, before the write) away and add those of the current sourced
    claims that meet ``added_where`` (after it); a group left with no claim goes. The table is small (one row per
    label mask, source, category, use case and model), so it is summed again whole. ``claim_source_answers`` loses
    the rows of the revisions ``gone_keys`` (a SELECT of the response keys whose claims stopped being current) and
    gains those of the claims that meet ``added_where``, sorted by source and day (so that its row groups stay
    narrow in source)."""
    if gone_keys is not None:
        cur.execute(f"DELETE FROM claim_source_answers WHERE response_key IN ({gone_keys})")
    cur.execute(f"INSERT INTO claim_source_answers {_ANSWERS.format(where=added_where)} ORDER BY 1, 5, 6",
                params or {})
    text = pa.array([], pa.string())
    gone = gone if gone is not None else pa.table({"label_mask": pa.array([], pa.int32()), "source_id": text,
                                                   "category": text, "use_case": text, "model": text,
                                                   "created_day": pa.array([], pa.date32()),
                                                   "claims": pa.array([], pa.int64())})
    with cur.relation("_claim_counts_gone", gone):
        cur.execute(f"""CREATE OR REPLACE TEMP TABLE _claim_counts AS
            SELECT {_KEY}, sum(claims)::BIGINT AS claims FROM (
                SELECT {_KEY}, claims FROM claim_source_counts
                UNION ALL SELECT {_KEY}, -claims FROM _claim_counts_gone
                UNION ALL {_COUNT.format(where=added_where)})
            GROUP BY ALL HAVING sum(claims) <> 0""", params or {})
    cur.execute("DELETE FROM claim_source_counts")
    cur.execute("INSERT INTO claim_source_counts SELECT * FROM _claim_counts")
    cur.execute("DROP TABLE _claim_counts")


def rebuild(cur: Cursor) -> None:
    """Count every current sourced claim again, and list their answers again."""
    cur.execute("DELETE FROM claim_source_counts")
    cur.execute("INSERT INTO claim_source_counts " + _COUNT.format(where="true"))
    cur.execute("DELETE FROM claim_source_answers")
    cur.execute(f"INSERT INTO claim_source_answers {_ANSWERS.format(where='true')} ORDER BY 1, 5, 6")


def check(cur: Cursor | Store, limit: int = 5) -> list[str]:
    """The groups where the counts and a recount differ, and the rows where ``claim_source_answers`` and a recount
    differ, as sentences (at most ``limit``); [] when both agree."""
    rows = cur.query(f"""
        SELECT coalesce(t.label_mask, j.label_mask), coalesce(t.source_id, j.source_id),
               coalesce(t.category, j.category), coalesce(t.use_case, j.use_case), coalesce(t.model, j.model),
               coalesce(t.created_day, j.created_day), t.claims, j.claims
        FROM claim_source_counts t FULL JOIN ({_COUNT.format(where="true")}) j
          ON t.label_mask = j.label_mask AND t.source_id = j.source_id AND t.category IS NOT DISTINCT FROM j.category
             AND t.use_case IS NOT DISTINCT FROM j.use_case AND t.model IS NOT DISTINCT FROM j.model
             AND t.created_day IS NOT DISTINCT FROM j.created_day
        WHERE t.claims IS DISTINCT FROM j.claims ORDER BY ALL LIMIT ?""", [int(limit)])
    found = [f"claims of source {source!r}, category {category!r}, use case {use_case!r}, model {model!r}, "
             f"created {day.isoformat() if day else 'at no recorded time'}, label mask {mask}: counted {held}, "
             f"recounted {actual}"
             for mask, source, category, use_case, model, day, held, actual in rows]
    answers = cur.query(f"""
        WITH t AS (SELECT {_ANSWER_COLUMNS} FROM claim_source_answers), j AS ({_ANSWERS.format(where="true")})
        SELECT 'held, not in a recount' AS why, * FROM (FROM t EXCEPT ALL FROM j)
        UNION ALL SELECT 'in a recount, not held', * FROM (FROM j EXCEPT ALL FROM t)
        ORDER BY ALL LIMIT ?""", [int(limit)])
    found += [f"claim_source_answers: response key {key}, source {source!r}, label mask {mask}, category {category!r}, "
              f"use case {use_case!r}, created {day.isoformat() if day else 'at no recorded time'}: {why}"
              for why, source, mask, category, use_case, day, key in answers]
    return found[:limit]
