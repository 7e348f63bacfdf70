"""The response explorer: one page of the filtered responses and the export of the same view.

``responses_page`` reads a page of the filtered set (``PAGE_COLUMNS``), sorted by an allow-listed key
(``SORT_COLUMNS``), searched (``register.console.queries.search``) and narrowed by the Authority filter
(``AUTHORITY_FILTERS``); ``export_select`` and ``export_rows`` read the same view with the texts
(``EXPORT_COLUMNS``, at most ``EXPORT_LIMIT`` rows).

Called by ``ui.features.responses`` (the Responses page), by ``register.console.exports`` (the export file) and by
``register.console.review`` (``check_window``: the queue pages the same way).
"""

from __future__ import annotations

import pandas as pd

from register.console.queries.filters import Filters, filtered_scores, model_rows, read_model
from register.console.queries.search import search_matches, searched
from register.db.export import EXPORT_LIMIT  # rows of one export of the response explorer
from register.db.sql import Params
from register.db.store import Store
from register.scoring.authority import FILTERS as AUTHORITY_FILTERS
from register.scoring.authority import PROBLEMS as AUTHORITY_PROBLEMS
from register.scoring.authority import response_authority_select

__all__ = ["AUTHORITY_FILTERS", "EXPORT_COLUMNS", "EXPORT_LIMIT", "PAGE_COLUMNS", "SORT_COLUMNS", "check_window",
           "export_rows", "export_select", "responses_page"]

# the decision (what a person acts on) beside the band, before the HRI action and the mitigation it is made of; its
# reasons are on the response's detail
PAGE_COLUMNS = ("response_id", "revision", "use_case", "model", "created_at", "score", "band", "decision", "action",
                "mitigation_action", "mitigation_reason", "hri_add", "hri", "floors_fired", "decisive_claim_id",
                "no_claims", "claim_count", "profile_version", "as_of", "authority")
EXPORT_COLUMNS = PAGE_COLUMNS + ("question", "answer")

# sort key -> SQL expression over the scored set (allow-list: nothing else reaches ORDER BY).
# Bands sort by score: within a profile the bands are score ranges, so that is their risk order.
SORT_COLUMNS = {
    "score": "score", "hri": "hri", "hri_add": "hri_add", "band": "score", "action": "action",
    "created_at": "created_at", "response_id": "response_id", "revision": "revision", "use_case": "use_case",
    "model": "model", "floors_fired": "floors_fired", "claim_count": "claim_count", "no_claims": "no_claims",
    "decisive_claim_id": "decisive_claim_id", "profile_version": "profile_version", "as_of": "as_of",
    "mitigation_action": "mitigation_action",
}


def _sort_key(sort_by: str) -> str:
    """The SQL expression of an allow-listed sort key (``SORT_COLUMNS``); ValueError for anything else."""
    expr = SORT_COLUMNS.get(sort_by) if isinstance(sort_by, str) else None
    if expr is None:
        raise ValueError(f"cannot sort by {sort_by!r}; choose one of {', '.join(SORT_COLUMNS)}")
    return expr


def _order_by(sort_by: str, descending: bool, *, key: str | None = None) -> str:
    """ORDER BY ``sort_by`` (or the column ``key`` holding its value), then the stable order for paging."""
    direction = "DESC" if descending else "ASC"
    return f"{key or _sort_key(sort_by)} {direction} NULLS LAST, response_id, revision"


def check_window(limit: int, offset: int) -> None:
    for name, value in (("limit", limit), ("offset", offset)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"{name} must be an integer >= 0, got {value!r}")


def _authority_view(p: Params, store: Store, authority: str | None) -> str:
    """WITH-clause items after ``fr``: ``fa``, the rows of ``fr`` kept by the Authority filter -- None (all),
    "any finding", "proposed label" or one of ``authority.PROBLEMS`` -- with the responses' ``authority`` line
    when the filter needed it (NULL otherwise: ``_paged_authority`` adds it to the page's rows only)."""
    if authority is None:
        return "fa AS (SELECT fr.*, NULL::VARCHAR AS authority FROM fr)"
    if authority == "any finding":
        cond = "au.response_key IS NOT NULL"
    elif authority == "proposed label":
        cond = "coalesce(au.proposals, 0) > 0"
    elif authority in AUTHORITY_PROBLEMS:
        cond = f"list_contains(au.problems, {p(authority)})"
    else:
        raise ValueError(f"authority filter {authority!r} is not one of: {', '.join(AUTHORITY_FILTERS)}")
    return (f"au AS ({response_authority_select(store, p)}), "
            f"fa AS (SELECT fr.*, au.authority FROM fr LEFT JOIN au ON au.response_key = fr.response_key "
            f"WHERE {cond})")


def _paged_authority(store: Store, p: Params, page: str, columns: tuple[str, ...], order: str) -> str:
    """WITH item ``pa`` (the Authority lines of the responses in ``page``, a CTE with response_key and
    authority) and the final SELECT of ``columns`` from ``page``: the checks run for the page's rows only
    (the whole set's checks cost many times the page query; docs/performance.md)."""
    picked = ", ".join("coalesce(pg.authority, pa.authority) AS authority" if c == "authority" else f"pg.{c}"
                       for c in columns)
    keys = f"SELECT response_key FROM {page}"
    return (f"pa AS ({response_authority_select(store, p, keys=keys)}) "
            f"SELECT {picked} FROM {page} pg LEFT JOIN pa ON pa.response_key = pg.response_key ORDER BY {order}")


def responses_page(store: Store, f: Filters, *, search: str | None = None, sort_by: str = "score",
                   descending: bool = True, limit: int = 50, offset: int = 0,
                   authority: str | None = None) -> tuple[pd.DataFrame, int]:
    """One page of the filtered responses (``PAGE_COLUMNS``) and the size of the whole filtered set.

    ``search`` is a case-insensitive literal substring of the question, the answer or any claim's
    text (``register.readmodels.search_index.search_select``: looked up in the search index). ``sort_by`` must be one
    of ``SORT_COLUMNS``. ``authority`` keeps the
    responses with an Authority finding (``AUTHORITY_FILTERS``: any, a proposed label, or one problem);
    the ``authority`` column is the Authority line of each response on the page (NULL: no finding).
    """
    order = _order_by(sort_by, descending)
    check_window(limit, offset)
    p = Params()
    matches = search_matches(store, search, p, bitmap=True)
    columns = ", ".join((*PAGE_COLUMNS, "response_key"))
    if matches is None:
        # two statements: a top-N over the join and a bare count are cheaper than one statement
        # that shares the join between them (measured: docs/performance.md)
        frame = store.frame(f"WITH fr AS ({filtered_scores(store, f, p)}), {_authority_view(p, store, authority)}, "
                            f"page AS MATERIALIZED (SELECT {columns} FROM fa ORDER BY {order} "
                            f"LIMIT {p(limit)} OFFSET {p(offset)}), "
                            f"{_paged_authority(store, p, 'page', PAGE_COLUMNS, order)}", p.values)
        p2 = Params()
        if authority is None:
            total = store.scalar(f"SELECT count(*) FROM ({filtered_scores(store, f, p2)})", p2.values)
        else:
            total = store.scalar(f"WITH fr AS ({filtered_scores(store, f, p2)}), "
                                 f"{_authority_view(p2, store, authority)} SELECT count(*) FROM fa", p2.values)
        return frame, int(total)
    # searching: the matches are found once (materialised keys); their sort keys are read once into ``hits``, which
    # gives the total and the page's keys, and only the page's rows are read whole (a search that matches millions
    # of answers: one pass over the read model, not one per consumer carrying every column). The page's rows
    # are the view's rows of the page's keys, read by those keys alone: read through the matches again, under a
    # use-case filter DuckDB built its hash table on every filtered row with every column (it misjudges how many
    # keys match), much slower (docs/performance.md).
    # The LEFT JOIN keeps the total when the page is past the end.
    hit_order = _order_by(sort_by, descending, key="_sort")
    resolved = read_model(store, f)  # once: the matches and the page's rows read the same source
    page_sql = f"""
        WITH {searched(store, resolved, p, matches)}, {_authority_view(p, store, authority)},
        hits AS MATERIALIZED (SELECT response_key, {_sort_key(sort_by)} AS _sort, response_id, revision FROM fa),
        total AS (SELECT count(*) AS _total FROM hits),
        top AS MATERIALIZED (SELECT response_key FROM hits ORDER BY {hit_order} LIMIT {p(limit)} OFFSET {p(offset)}),
        page AS MATERIALIZED (SELECT {columns}
                              FROM ({model_rows(store, *resolved, p, responses='top')}) CROSS JOIN
                                   (SELECT NULL::VARCHAR AS authority)),
        rows AS (WITH {_paged_authority(store, p, 'page', PAGE_COLUMNS, order)})
        SELECT rows.*, total._total FROM total LEFT JOIN rows ON true
        ORDER BY {order}"""
    with store.cursor() as cur:
        if matches.prepare is not None:
            cur.execute(*matches.prepare)
        frame = cur.frame(page_sql, p.values)
    total = int(frame["_total"].iloc[0])
    frame = frame[frame["response_id"].notna()].drop(columns="_total").reset_index(drop=True)
    return frame, total


def export_select(store: Store, f: Filters, p: Params, *, search: str | None = None, sort_by: str = "score",
                  descending: bool = True, limit: int = EXPORT_LIMIT, authority: str | None = None) -> str:
    """The SELECT of the export view (``EXPORT_COLUMNS``, at most ``limit`` rows in the page's order), its
    values bound in ``p``: ``export_rows`` reads it into a frame, ``register.console.exports`` copies it to a
    file."""
    order = _order_by(sort_by, descending)
    check_window(limit, 0)
    matches = search_matches(store, search, p)
    scored = (searched(store, read_model(store, f), p, matches, text_columns=True) if matches
              else f"fr AS ({filtered_scores(store, f, p, text_columns=True)})")
    columns = ", ".join((*EXPORT_COLUMNS, "response_key"))
    return (f"WITH {scored}, {_authority_view(p, store, authority)}, "
            f"rows AS MATERIALIZED (SELECT {columns} FROM fa ORDER BY {order} LIMIT {p(limit)}), "
            f"{_paged_authority(store, p, 'rows', EXPORT_COLUMNS, order)}")


def export_rows(store: Store, f: Filters, *, search: str | None = None, sort_by: str = "score",
                descending: bool = True, limit: int = EXPORT_LIMIT, authority: str | None = None) -> pd.DataFrame:
    """The filtered view for CSV/Excel export: ``EXPORT_COLUMNS`` (the page's plus question, answer)."""
    p = Params()
    sql = export_select(store, f, p, search=search, sort_by=sort_by, descending=descending, limit=limit,
                        authority=authority)
    return store.frame(sql, p.values)
