"""Downloads of the current view: CSV and Excel with spreadsheet formulas neutralised.

A cell that starts with = + - @ (or a tab / carriage return) would be run as a formula by
spreadsheet programs; such cells get a leading apostrophe (the OWASP "CSV injection" advice). The
apostrophe stays in the file: a reader gets the escaped value back, not the formula.

CSV is RFC 4180: rows end with CRLF and every field holding a comma, a quote, a CR or an LF is quoted.
(With pandas' default LF line ending a field with a bare CR was written unquoted, and every reader
split its row in two.)

Large views are not built here: the Responses page has DuckDB write its export to a temporary file once
(``prepare_export``, ``register.console.exports``) and serves that file; a rerun of the page rebuilds
nothing. ``to_csv_bytes`` / ``to_excel_bytes`` are for small frames (a register, a template).
"""

from __future__ import annotations

import csv
import io
import shutil
import tempfile
import time
from collections.abc import Callable, Hashable, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from register.console.exports import CsvExport
from register.db.export import FORMULA_PREFIXES, escape_formulas

__all__ = ["EXPORT_DIR_PREFIX", "FORMULA_PREFIXES", "STALE_SECONDS", "XLSX_MIME", "PreparedExport", "discard",
           "escape_formulas", "file_reader", "prepare_export", "to_csv_bytes", "to_excel_bytes", "write_excel",
           "written_bytes"]

XLSX_MIME = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
EXPORT_DIR_PREFIX = "hri-export-"  # each prepared export is a temporary folder of its own with this prefix
# A prepared export whose session ended without replacing it is removed by the next export after this long
STALE_SECONDS = 24 * 3600


def _naive_times(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for column in out.columns:
        if isinstance(out[column].dtype, pd.DatetimeTZDtype):
            out[column] = out[column].dt.tz_convert("UTC").dt.tz_localize(None)  # Excel has no time zones
    return out


def to_csv_bytes(frame: pd.DataFrame) -> bytes:
    """``frame`` as UTF-8 CSV (RFC 4180, formulas escaped); read back by ``csv`` or pandas row for row."""
    # QUOTE_MINIMAL quotes a field holding any character of the line terminator: with CRLF, both CR and LF
    return escape_formulas(frame).to_csv(index=False, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL).encode("utf-8")


def write_excel(frame: pd.DataFrame, target: Any, sheet: str = "responses") -> None:
    """``frame`` as an Excel workbook (formulas escaped, times in UTC without a zone) into ``target``, a path
    or a binary file object."""
    with pd.ExcelWriter(target, engine="openpyxl") as writer:
        _naive_times(escape_formulas(frame)).to_excel(writer, index=False, sheet_name=sheet)


def to_excel_bytes(frame: pd.DataFrame, sheet: str = "responses") -> bytes:
    """``frame`` as the bytes of an Excel workbook (``write_excel``)."""
    buffer = io.BytesIO()
    write_excel(frame, buffer, sheet)
    return buffer.getvalue()


# --- exports prepared once, as files ----------------------------------------------------------------


@dataclass(frozen=True)
class PreparedExport:
    """One prepared export: the ``view`` it shows (the page offers it only while that view is on screen), its
    folder (temporary, its own), the CSV of ``rows`` rows and the Excel file (None: not offered, too many rows).
    This, not the rows, is what a session keeps."""

    view: Hashable
    folder: Path
    csv: Path
    rows: int
    excel: Path | None = None

    def available(self) -> bool:
        """Its files are still there (a folder can be swept away after ``STALE_SECONDS``)."""
        return self.csv.is_file() and (self.excel is None or self.excel.is_file())


def discard(prepared: PreparedExport | None) -> None:
    """Remove a prepared export's folder (nothing when None or gone already)."""
    if prepared is not None:
        shutil.rmtree(prepared.folder, ignore_errors=True)


def _sweep_stale(now: float) -> None:
    """Remove the export folders older than ``STALE_SECONDS`` (sessions that ended leave theirs behind)."""
    for folder in Path(tempfile.gettempdir()).glob(EXPORT_DIR_PREFIX + "*"):
        try:
            if folder.is_dir() and now - folder.stat().st_mtime > STALE_SECONDS:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue  # another process removed it first


def prepare_export(state: MutableMapping[str, Any], key: str, view: Hashable, name: str,
                   write: Callable[[Path], CsvExport], *, sheet: str = "responses") -> PreparedExport:
    """Write a view's export once and keep only its ``PreparedExport`` in ``state[key]``.

    The export this replaces is removed first. ``write(csv_path)`` writes the CSV (DuckDB's COPY) and returns
    the rows as a frame when an Excel file is to be offered too; the Excel file is then written beside it.
    Files are ``<name>.csv`` / ``<name>.xlsx`` in a new temporary folder; a failure leaves no folder behind.
    """
    discard(state.pop(key, None))
    _sweep_stale(time.time())
    folder = Path(tempfile.mkdtemp(prefix=EXPORT_DIR_PREFIX))
    try:
        written = write(folder / f"{name}.csv")
        excel = None
        if written.frame is not None:
            excel = folder / f"{name}.xlsx"
            write_excel(written.frame, excel, sheet)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    prepared = PreparedExport(view, folder, written.path, written.rows, excel)
    state[key] = prepared
    return prepared


def written_bytes(write: Callable[[Path], CsvExport]) -> bytes:
    """The bytes of the CSV ``write(path)`` writes into a temporary folder, removed afterwards: a download
    button's deferred data (``lambda: written_bytes(...)``), so the export runs when the button is clicked,
    never on a rerun."""
    with tempfile.TemporaryDirectory(prefix=EXPORT_DIR_PREFIX) as folder:
        return write(Path(folder) / "export.csv").path.read_bytes()


def file_reader(path: Path) -> Callable[[], bytes]:
    """A download button's deferred data: the file's bytes, read when the button is clicked (not on a rerun)."""
    return path.read_bytes
