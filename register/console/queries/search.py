"""A search's matches on the Responses page and in its export.

The response keys the search index finds for a text (``register.readmodels.search_index``), read as a set of
keys or, when they are many, as a bitmap the reading cursor holds in a variable (``search_matches``), and
the filtered scored set narrowed to them (``searched``).

Called by ``register.console.queries.explorer``.
"""

from __future__ import annotations

from dataclasses import dataclass

from register.console.queries.filters import RESPONSE_COLUMNS, Filters, ReadModel, model_rows
from register.db.sql import Params
from register.db.store import Store
from register.readmodels import response_ids
from register.readmodels.search_index import SLICE_KEYS, Lookup, lookup, search_select

__all__ = ["BITMAP_SHARE", "search_matches", "searched"]

# A search whose index lookup names at least one revision in BITMAP_SHARE of the register's keys reads its matches as
# a bitmap of response keys (``_Matches``); fewer, as a set of keys.
BITMAP_SHARE = 4
_BITMAP_KEYS = 2**31 - 1  # get_bit takes an INTEGER position: beyond it, the set of keys
# the variable a searched page's cursor holds its bitmap in (each read has a cursor, a connection, of its own)
_MATCHES_VARIABLE = "hri_search_matches"


@dataclass(frozen=True)
class _Matches:
    """A search's matches: ``keys``, the SELECT of their response keys (its values bound in the statement's
    ``Params``), read as a set; or, with ``prepare`` (a statement and its values, run first on the statement's cursor),
    a bitmap of the keys up to ``upto`` that ``prepare`` stores in the cursor's variable ``_MATCHES_VARIABLE``, with
    the list of any keys above it."""

    keys: str
    prepare: tuple[str, dict] | None = None
    upto: int = 0


def search_matches(store: Store, search: str | None, p: Params, *, bitmap: bool = False) -> _Matches | None:
    """The matches of ``search`` (None when there is nothing to search); read as a bitmap (``bitmap`` allowing) when
    they are many.

    For a text found in millions of answers the set of keys was most of a search's cost: made distinct (a word held
    by nearly every answer, ``the``, has more postings than answers) and built into the hash table that narrows the
    read model to them. A bitmap of the keys (``bitstring_agg``) takes the lookup's rows as they come, repeats
    included, and the read model's scan tests one bit per row, in well under half the time. That test is paid for
    every row of the read model (even for a word found once), so a lookup read from the index alone
    (``search_index.Lookup.exact``) with at most a catch-up slice of revisions above the index's mark (scanned) is
    counted first, and only one naming at least one key in ``BITMAP_SHARE`` of the register's is read as a bitmap:
    the count reads no text beyond that slice (a register whose index is far behind searches by keys, uncounted).
    The bitmap is computed by a statement of its own into a variable of the cursor: as a scalar subquery of the
    page's statement DuckDB sometimes joined it to every row (half a minute for a rare letter). The figures:
    docs/performance.md, "Figures behind the code".
    """
    if search is None or not search.strip():
        return None
    if bitmap:
        counted = Params()
        found = lookup(store, search, counted)
        if found is None:
            return None
        top = response_ids.largest_key(store)
        if found.exact and top - found.indexed_through <= SLICE_KEYS:
            rows = int(store.scalar(f"SELECT count(*) FROM ({found.sql})", counted.values) or 0)
            if 0 < top <= _BITMAP_KEYS and rows * BITMAP_SHARE >= top:
                return _bitmap(found, counted, top)
    keys = search_select(store, search, p)
    return None if keys is None else _Matches(keys)


def _bitmap(found: Lookup, p: Params, upto: int) -> _Matches:
    """``_Matches`` read as a bitmap of the keys up to ``upto`` of the lookup ``found`` (the one counted: its values
    bound in ``p``, which the bitmap's statement binds; not looked up again): keys above it (revisions imported since
    it was read) are listed beside it, none as a rule, and never lost when there are."""
    bound = p(upto)
    prepare = (f"SET VARIABLE {_MATCHES_VARIABLE} = (SELECT {{"
               f"'bits': bitstring_agg(response_key, 0, {bound}) FILTER (WHERE response_key <= {bound}), "
               f"'above': list(response_key) FILTER (WHERE response_key > {bound})}} FROM ({found.sql}))")
    return _Matches(found.sql, (prepare, p.values), upto)


def _matched(matches: _Matches, p: Params) -> tuple[str, str]:
    """(WITH-clause items, condition on ``response_key``): whether a revision is one of the matches -- the keys
    materialised as ``m``, or the bitmap in the cursor's variable (``_Matches.prepare`` run first)."""
    if matches.prepare is None:
        return f"m AS MATERIALIZED ({matches.keys}), ", "response_key IN (SELECT response_key FROM m)"
    upto, found = p(matches.upto), f"getvariable('{_MATCHES_VARIABLE}')"
    return "", (f"CASE WHEN response_key <= {upto} "
                f"THEN coalesce(get_bit({found}.bits, response_key::INTEGER) = 1, false) "
                f"ELSE coalesce(list_contains({found}.above, response_key), false) END")


def searched(store: Store, resolved: tuple[Filters, ReadModel | None], p: Params, matches: _Matches, *,
              text_columns: bool = False) -> str:
    """WITH-clause items ending in ``fr``: the filtered scored set of the responses matching a search, ``resolved``
    being where its scores are read (``read_model``).

    The matches are materialised first (a CTE barrier, or the bitmap's statement of its own: ``_matched``), so the
    scored set is narrowed to them whatever the optimiser estimates (with score history in the table it otherwise
    joined all responses first and filtered after, which was slower; docs/performance.md). The
    read model holds the response columns and only current revisions, so the page narrows it by the keys without
    reading ``responses``; the export, which needs the texts, reads the matching current responses first.
    """
    items, matched = _matched(matches, p)
    if not text_columns:
        return f"{items}fr AS NOT MATERIALIZED (SELECT * FROM ({model_rows(store, *resolved, p)}) WHERE {matched})"
    return (f"{items}"
            f"rm AS MATERIALIZED (SELECT {RESPONSE_COLUMNS}, question, answer FROM responses "
            f"WHERE is_current AND {matched}), "
            f"fr AS NOT MATERIALIZED ({model_rows(store, *resolved, p, responses='rm', text_columns=True)})")
