"""The response explorer's export, written by DuckDB to a file (``register.db.export.copy_csv``).

The rows are the page's filtered view as ``queries.explorer.export_select`` builds it, every filter value a bound
parameter; the file has the header of the CSV the page built before from a DataFrame, with formulas
neutralised in SQL. The page writes it once and offers the file (``ui.framework.exports.prepare_export``).
"""

from __future__ import annotations

from pathlib import Path

from register.console.queries.explorer import EXPORT_LIMIT, export_select
from register.console.queries.filters import Filters
from register.db.export import FORMULA_PREFIXES, CsvExport, copy_csv
from register.db.sql import Params
from register.db.store import Store

__all__ = ["FORMULA_PREFIXES", "CsvExport", "write_csv"]


def write_csv(store: Store, f: Filters, path: str | Path, *, search: str | None = None, sort_by: str = "score",
              descending: bool = True, limit: int = EXPORT_LIMIT, authority: str | None = None,
              frame_up_to: int = 0) -> CsvExport:
    """Write the export view of ``f`` (the rows ``queries.explorer.export_rows`` returns for the same arguments, in its
    order) to the CSV file ``path``; ``frame_up_to``: also return them as a DataFrame (for the Excel file) when
    there are at most that many (0: never)."""
    p = Params()
    view = export_select(store, f, p, search=search, sort_by=sort_by, descending=descending, limit=limit,
                         authority=authority)
    return copy_csv(store, view, p.values, path, frame_up_to=frame_up_to)
