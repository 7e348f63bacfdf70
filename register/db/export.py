"""Query results written by DuckDB to a CSV file: large exports never pass through Python rows.

``copy_csv`` materialises a bound SELECT into a temporary table of its own cursor, then lets DuckDB
``COPY`` it to a file. The CSV is what ``ui.framework.exports.to_csv_bytes`` writes for the same rows: the same header,
RFC 4180 (rows end with CRLF, a field holding a comma, a quote, a CR or an LF is quoted) and spreadsheet
formulas neutralised -- a text cell starting with one of ``FORMULA_PREFIXES`` gets a leading apostrophe, in
SQL, so the file DuckDB writes is safe as it stands. Values are DuckDB's text: booleans ``true``/``false``,
times ``2026-11-01 09:30:00+00``, a NULL an empty field (an empty text ``""``).

The same table, when the caller asks for it (``frame_up_to``), is read back as a DataFrame for an Excel
writer: one run of the query serves both files.

The register's own documents in Markdown (the release report, ``register.governance.report``) escape every string
that is not the code's own with ``escape_markdown`` / ``markdown_line`` (prose) and ``code_span`` (ids, hashes):
the register's copies of ``ui.framework.text``'s helpers (the register does not import ``ui``; a test holds the two
equal), so that a name, reason or id shows as typed and never formats, links or loads anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from register.db.sql import Params, file_literal

if TYPE_CHECKING:  # register.db.store imports register.db.audit, which exports through this module
    from register.db.store import Bindings, Cursor, Store

__all__ = ["EXPORT_LIMIT", "FORMULA_PREFIXES", "MARKDOWN_SPECIAL", "WORD_JOINER", "CsvExport", "code_span", "copy_csv",
           "escape_formula", "escape_formulas", "escape_formulas_sql", "escape_markdown", "markdown_line"]

# The most rows one export holds (the response explorer's, the audit trail's) and one listing of the audit trail
# shows.
EXPORT_LIMIT = 100_000

# A cell starting with one of these is run as a formula by spreadsheet programs (the OWASP "CSV injection"
# list): such cells get a leading apostrophe. The one escape of every spreadsheet export, in SQL
# (``escape_formulas_sql``: this module's CSV files, ``register.ingest.exporter``'s score exports) and in Python
# (``escape_formula`` per cell, ``escape_formulas`` per frame: ``ui.framework.exports``, the registers' exports).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")

_TABLE = "export_rows"  # a TEMP table: private to the export's own cursor (a connection of its own)
_TEXT_TYPES = ("VARCHAR", "JSON")  # numbers keep their sign: "-2" in a number column is a number


@dataclass(frozen=True)
class CsvExport:
    """What ``copy_csv`` wrote: ``rows`` data rows (the header not counted) to ``path``; ``frame``, the same
    rows unescaped for an Excel writer, when there were at most ``frame_up_to`` of them (else None)."""

    path: Path
    rows: int
    frame: pd.DataFrame | None = None


def escape_formula(value: object) -> object:
    """``value`` with a leading apostrophe when it is text starting with one of ``FORMULA_PREFIXES``; else as it is."""
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_PREFIXES) else value


def escape_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """Copy of ``frame`` whose text cells cannot start a formula: ``escape_formula`` on the cells of its object and
    string columns (the other columns keep their values and dtype: a tz-aware time stays one)."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = out[column].map(escape_formula)
    return out


def escape_formulas_sql(expr: str, p: Params) -> str:
    """SQL: the text ``expr`` with a leading apostrophe when it starts with one of ``FORMULA_PREFIXES`` (bound in
    ``p``); NULL stays NULL."""
    return f"CASE WHEN left({expr}, 1) IN {p.in_list(FORMULA_PREFIXES)} THEN '''' || {expr} ELSE {expr} END"


# Markdown: every ASCII punctuation character CommonMark lets a backslash escape that Markdown, GFM or a renderer's
# extensions give a meaning to (emphasis, code, links and images, headings, lists, tables, strikethrough, HTML and
# entities, math, directives and shortcodes); GFM's autolink literals and shortcodes are found in the parsed text,
# escapes resolved, so their patterns are broken with an invisible WORD JOINER (U+2060). As ``ui.framework.text``.
MARKDOWN_SPECIAL = "\\`*_{}[]()#+-.!|<>~$:=&"
WORD_JOINER = "\u2060"
_DEFUSE = re.compile(r"(?i)(?<=https:)(?=//)|(?<=http:)(?=//)|(?<=\bwww)(?=\.)|(?<=@)(?=[\w-])|(?<=:)(?=[\w+/-]+:)")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def escape_markdown(text: object) -> str:
    """``text`` shown as typed in Markdown, never formatted, linked or loaded: Markdown characters backslash-escaped,
    autolink literals and shortcodes defused, line breaks kept as hard breaks."""
    defused = _DEFUSE.sub(WORD_JOINER, str(text))
    escaped = "".join("\\" + ch if ch in MARKDOWN_SPECIAL else ch for ch in defused)
    return _LINE_BREAK.sub("\\\\\n", escaped)


def markdown_line(text: object) -> str:
    """``escape_markdown`` of ``text`` on one line (its line breaks as spaces): for a table cell, a list item or a
    heading, which a line break would end. None is empty."""
    return escape_markdown(_LINE_BREAK.sub(" ", "" if text is None else str(text)))


def code_span(text: object) -> str:
    """``text`` as an inline code span, shown literally and copied exactly: the fence is one backtick longer than the
    longest run of backticks in it, padded with a space each side (CommonMark strips one), line breaks as spaces."""
    value = _LINE_BREAK.sub(" ", str(text))
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {value} {fence}"


def _identifier(name: str) -> str:
    """A column name as a quoted SQL identifier (the names come from the register's own SELECT, quoted anyway)."""
    return '"' + name.replace('"', '""') + '"'


def _escaped_select(cur: Cursor, p: Params) -> str:
    """SELECT of every column of the export table in order, text columns formula-escaped (prefixes bound)."""
    columns = []
    for name, kind, *_ in cur.query(f"DESCRIBE {_TABLE}"):
        column = _identifier(name)
        if kind in _TEXT_TYPES or kind.startswith("ENUM"):
            column = f"{escape_formulas_sql(column, p)} AS {column}"
        columns.append(column)
    return f"SELECT {', '.join(columns)} FROM {_TABLE}"


def copy_csv(store: Store, select: str, params: Bindings, path: str | Path, *, frame_up_to: int = 0) -> CsvExport:
    """Write the rows of ``select`` (bound ``params``; its ORDER BY is kept) to the CSV file ``path``, created or
    replaced, formulas escaped. ``frame_up_to``: also return the rows as a DataFrame when there are at most that
    many (0: never).

    ``select`` is SQL built by the register's code, its values bound; ``path`` is a file name of the caller's
    choosing (COPY takes no parameter for it: it is quoted here).
    """
    path = Path(path)
    target = file_literal(path)
    with store.cursor() as cur:
        # the temporary table keeps the query's order (DuckDB preserves insertion order), so the file does
        cur.execute(f"CREATE OR REPLACE TEMP TABLE {_TABLE} AS {select}", params)
        try:
            p = Params()
            rows = int(cur.execute(f"COPY ({_escaped_select(cur, p)}) TO {target} "
                                   "(FORMAT csv, HEADER, DELIMITER ',', QUOTE '\"', NEW_LINE '\\r\\n')",
                                   p.values) or 0)
            frame = cur.frame(f"SELECT * FROM {_TABLE}") if frame_up_to > 0 and rows <= frame_up_to else None
        finally:
            cur.execute(f"DROP TABLE IF EXISTS {_TABLE}")
    return CsvExport(path, rows, frame)
