"""Readers: a file (or a fixed record typed by a user) -> ``Item``s, streamed.

Called by ``register.ingest.importer``. Formats (DOMAIN.md section 4):

- ``.jsonl`` / ``.json``: JSON Lines, one response per line, decoded line by line so that one bad byte
  quarantines one line, not the file;
- ``.csv``: a flat claim table, one claim per row, response fields repeated (header = row 1);
- ``.parquet``: the same flat table, read in record batches (data rows numbered from 1).

Flat rows are checked by the pandera frame schema (``register.ingest.frame_schema``) a window at a
time and grouped into responses (``hri_core.readers.group_flat_rows``); a flat table missing a
required column quarantines every row with that reason. Readers never drop a record: anything that
cannot become a valid response is still an ``Item``, with its problems.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from hri_core import FieldProblem, RecordError
from hri_core.readers import CLAIM_FIELDS, decode_json, decode_object, group_flat_rows, missing_flat_columns
from hri_core.readers import _clean as _clean_cell  # one notion of "empty cell" for the CLI and the register
from register.errors import ImportRejected
from register.ingest.files import open_parquet
from register.ingest.frame_schema import frame_problems
from register.ingest.items import Item, response_id_of, take_quarantine_ref
from register.ingest.regular_files import open_file

__all__ = ["READERS", "arrow_rows", "csv_items", "decode_line", "flat_items", "jsonl_items", "parquet_items",
           "text_items"]

CSV_FIELD_LIMIT = 1 << 28  # the longest CSV field read (characters); a longer one quarantines its record
_ROWS_LOCATION = re.compile(r"^rows? ([\d,]+)$")


def jsonl_items(path: Path, chunk_size: int, notes: list[str]) -> Iterator[Item]:
    """JSON Lines, split line by line so that one bad byte quarantines one line, not the file.

    The lines are not decoded here: the batch writer checks a chunk of them in one compiled pass
    (``register.ingest.bulk``) and decodes in Python (``decode_line``) only those that are not plain. Blank lines are
    not records.
    """
    first = True
    with open_file(path) as handle:
        for number, data in enumerate(handle, start=1):
            try:
                text, readable = data.decode("utf-8"), True
            except UnicodeDecodeError:
                text, readable = data.decode("utf-8", errors="replace"), False
            text = (text.removeprefix("\ufeff") if number == 1 else text).rstrip("\r\n")
            if not text.strip():
                continue
            if first and (text.lstrip().startswith("[") or text.strip() == "{"):
                notes.append("the file looks like one JSON document (an array, or pretty-printed over several "
                             "lines); the importer reads JSON Lines (one JSON object per line)")
            first = False
            if readable:
                yield Item(f"line {number}", text, None, [], None, decoded=False)
            else:
                yield Item(f"line {number}", text, None, [FieldProblem("", "the line is not valid UTF-8 text")], None)


def decode_line(item: Item) -> Item:
    """Decode a JSON Lines item in Python, strictly (``hri_core.readers.decode_object``): its record, response
    id and quarantine reference, or the problems that make the line unreadable. Returns the item, decoded."""
    if item.decoded:
        return item
    record, problems = decode_object(item.raw, "one response")
    item.decoded = True
    if record is None:
        item.problems = list(problems)
        return item
    item.record, item.ref = take_quarantine_ref(record)
    item.response_id = response_id_of(item.record)
    return item


def csv_items(path: Path, chunk_size: int, notes: list[str]) -> Iterator[Item]:
    """Flat CSV: rows streamed with the csv module; header is row 1, blank lines are not rows.

    A line longer than ``CSV_FIELD_LIMIT`` characters is never held whole (``long_lines``): when a field of it is
    longer than that, its record is quarantined naming the line and the field, and the rows after it are read.
    """
    csv.field_size_limit(max(csv.field_size_limit(), CSV_FIELD_LIMIT))  # long answers are fine, up to the limit
    with open_file(path, "r", encoding="utf-8-sig", errors="surrogateescape", newline="") as handle:
        too_long: dict[int, LongLine] = {}
        reader = csv.reader(long_lines(handle, CSV_FIELD_LIMIT, too_long))

        def records() -> Iterator[list[str]]:
            try:
                yield from reader
            except csv.Error as error:  # the rest of the file cannot be split into rows
                raise ImportRejected(f"{path.name}: line {reader.line_num}: not readable as CSV ({error}); "
                                     "the rows before it were imported") from error

        lines = records()
        header = next(lines, None)
        while header is not None and not any(h.strip() for h in header):
            header = next(lines, None)
        if header is None:
            return
        columns = [h.strip() for h in header]

        def rows() -> Iterator[tuple[int, dict, list] | Item]:
            number = 1
            for values in lines:
                if not values:
                    if reader.line_num in too_long:
                        number += 1
                        yield too_long.pop(reader.line_num).item(path.name, number, columns)
                    continue
                number += 1
                extra = []
                try:
                    "".join(values).encode("utf-8")
                except UnicodeEncodeError:
                    values = [v.encode("utf-8", "surrogateescape").decode("utf-8", "replace") for v in values]
                    extra.append(("", "the row is not valid UTF-8 text"))
                if len(values) != len(columns):  # a cut or shifted row: its values may be in the wrong columns
                    extra.append(("", f"the row has {len(values)} field{'s' if len(values) != 1 else ''} but the "
                                      f"header has {len(columns)}"))
                yield number, {c: v if v.strip() else None for c, v in zip(columns, values, strict=False)}, extra

        yield from flat_items(rows(), columns, chunk_size, notes)


_SEPARATOR_OR_QUOTE = re.compile(r'[",]')
_PIECE = 1 << 20  # characters of a long line read at a time


@dataclass
class LongLine:
    """A line read a piece at a time: which of its fields, if any, is longer than the longest field read."""

    line: int
    limit: int
    start: str  # its first characters, kept as the quarantined record's text
    characters: int = 0
    field: int = 0  # the field being scanned (0-based)
    length: int = 0  # its characters so far
    quoted: bool = False
    quote_pending: bool = False  # a quote ended the last piece inside a quoted field: "" or the closing quote
    long_field: int | None = None

    def feed(self, text: str) -> None:
        """Scan the next piece of the line (CSV quoting: a separator inside quotes is text, "" is one quote)."""
        self.characters += len(text)
        pos, end = 0, len(text)
        while pos < end:
            if self.quote_pending:
                self.quote_pending = False
                if text[pos] == '"':
                    self._grow(1)
                    pos += 1
                    continue
                self.quoted = False
            if self.quoted:
                quote = text.find('"', pos)
                if quote < 0:
                    self._grow(end - pos)
                    return
                self._grow(quote - pos)
                pos = quote + 1
                self.quote_pending = True
                continue
            found = _SEPARATOR_OR_QUOTE.search(text, pos)
            if found is None:
                self._grow(end - pos)
                return
            self._grow(found.start() - pos)
            pos = found.end()
            if found.group() == ",":
                self.field, self.length = self.field + 1, 0
            else:
                self.quoted = True

    def _grow(self, count: int) -> None:
        self.length += count
        if self.long_field is None and self.length > self.limit:
            self.long_field = self.field

    def item(self, source: str, number: int, columns: list[str]) -> Item:
        """The quarantined record of this line (data row ``number``), naming the line and the field."""
        if self.long_field is None:
            where, message = "", (f"line {self.line}: the line holds {self.characters:,} characters, more than the "
                                  f"{self.limit:,} the importer reads in one line")
        else:
            where = columns[self.long_field] if self.long_field < len(columns) else f"field {self.long_field + 1}"
            message = (f"line {self.line}: field {self.long_field + 1} ({where}) holds more than {self.limit:,} "
                       "characters, the longest field the importer reads")
        raw = json.dumps({"file": source, "line": self.line, "characters": self.characters,
                          "start": self.start.rstrip("\r\n")})
        return Item(f"row {number}", raw, None, [FieldProblem(where, message + "; the record is quarantined (its "
                                                             "text kept: the first characters of the line)")],
                    None, check_model=False)


def long_lines(handle, limit: int, too_long: dict[int, LongLine], keep: int = 2000) -> Iterator[str]:
    """The handle's lines (as iterating it gives them), read a piece at a time: a line with a field longer than
    ``limit`` characters is scanned (``LongLine``) as it is read, dropped once the field is found too long, and given
    as an empty line recorded in ``too_long`` by its number (so is a line of more than ``limit`` characters). Memory
    is bounded by ``limit`` (what the CSV reader itself may hold for one field), not by the longest line."""
    number = 0
    while piece := handle.readline(_PIECE):
        number += 1
        if piece.endswith(("\n", "\r")):
            yield piece
            continue
        long = LongLine(number, limit, piece[:keep])
        pieces: list[str] | None = []
        while piece:
            long.feed(piece)
            if pieces is not None:
                pieces.append(piece)
                if long.long_field is not None or long.characters > limit:
                    pieces = None  # never read as CSV: let it go
            if piece.endswith(("\n", "\r")):
                break
            piece = handle.readline(_PIECE)
        if pieces is not None and long.characters <= limit:
            yield "".join(pieces)
            continue
        too_long[number] = long
        yield "\n"


def parquet_items(path: Path, chunk_size: int, notes: list[str]) -> Iterator[Item]:
    """Flat Parquet: streamed in record batches, row group by row group; data rows are numbered from 1.

    Columns are read as the values they hold, whatever their Arrow type: dictionary-encoded columns
    are decoded, binary columns are read as UTF-8 text (never as ``"b'...'"``), blank text and NaN are
    missing values; a value that cannot become a Python value (a binary value that is not UTF-8, a
    timestamp beyond the year 9999) is a problem of its row and column, never of the whole file. A row
    group that cannot be read (a damaged page) is one quarantined record naming the file, the row group and
    its byte and row ranges (``_unreadable_group``); the rows before it in the group are imported, and every
    other row group is read on its own (row groups do not depend on each other).
    """
    parquet = open_parquet(path)
    columns = [name.strip() for name in parquet.schema_arrow.names]
    metadata = parquet.metadata
    batch_size = max(1024, min(chunk_size, 65536))

    def rows() -> Iterator[tuple[int, dict, list] | Item]:
        first = 1  # the number of the row group's first row
        for group in range(metadata.num_row_groups):
            size = metadata.row_group(group).num_rows
            number = first - 1
            try:
                for batch in parquet.iter_batches(batch_size=batch_size, row_groups=[group]):
                    python, problems = arrow_rows(batch, columns)
                    for index, row in enumerate(python):
                        number += 1
                        yield number, row, problems.get(index, [])
            except (pa.ArrowException, OSError) as error:
                yield _unreadable_group(path, metadata, group, number + 1, first + size - 1, error)
            first += size

    yield from flat_items(rows(), columns, chunk_size, notes)


def _unreadable_group(path: Path, metadata, group: int, first: int, last: int, error: Exception) -> Item:
    """The quarantined record of the rows ``first``..``last`` of row group ``group`` that could not be read."""
    chunks = [metadata.row_group(group).column(c) for c in range(metadata.num_columns)]
    starts = [chunk.dictionary_page_offset or chunk.data_page_offset for chunk in chunks]
    start = min(starts)
    end = max(s + chunk.total_compressed_size for s, chunk in zip(starts, chunks, strict=True)) - 1
    reason = " ".join(str(error).split())
    message = (f"{path.name}: row group {group + 1} of {metadata.num_row_groups} (bytes {start:,} to {end:,}, "
               f"rows {first} to {last}) cannot be read: {reason}; the other row groups were read")
    raw = json.dumps({"file": path.name, "row_group": group + 1, "bytes": [start, end], "rows": [first, last],
                      "error": reason})
    return Item(f"rows {first}-{last}", raw, None, [FieldProblem("", message)], None, check_model=False)


_BINARY = (pa.types.is_binary, pa.types.is_large_binary, pa.types.is_fixed_size_binary)
_ID_COLUMNS = ("response_id", "claim_id", "source_id")


def arrow_rows(batch: pa.RecordBatch, columns: list[str]) -> tuple[list[dict], dict[int, list[tuple[str, str]]]]:
    """A Parquet record batch as Python rows (named ``columns``), and the (column, message) problems per row
    index of the values that could not be read: one value never stops the batch (see ``parquet_items``)."""
    batch, problems = _readable(batch, columns)
    return _python_rows(batch, columns, problems), problems


def _readable(batch: pa.RecordBatch, columns: list[str]) -> tuple[pa.RecordBatch, dict[int, list]]:
    """The batch with every column in a type the importer reads, computed by Arrow per column, and the
    (column, message) problems per row index of the values that could not be converted.

    Dictionary columns are decoded; binary columns become UTF-8 text (a value that is not UTF-8 becomes
    missing, with a problem); blank text and NaN become missing values (as ``_clean_cell`` says). An id
    column of floating-point or decimal numbers is a problem of each row that has a value (NaN included):
    an id is text or an integer (``hri_core.models.id_problem``), never ``1.0`` or ``1e+300``.
    """
    import pyarrow.compute as pc  # on use: only flat tables need Arrow's compute kernels

    problems: dict[int, list] = {}
    arrays = []
    for name, array in zip(columns, batch.columns, strict=True):
        if pa.types.is_dictionary(array.type):
            array = array.dictionary_decode()
        if name in _ID_COLUMNS and (pa.types.is_floating(array.type) or pa.types.is_decimal(array.type)):
            for index, value in enumerate(array.to_pylist()):  # only such a column: rare, and every row is refused
                if value is not None:
                    problems.setdefault(index, []).append((name, f"{value} is not an id: the column holds {array.type} "
                                                                 "numbers, and an id is text or an integer"))
        if any(test(array.type) for test in _BINARY):
            array = _binary_as_text(name, array, problems)
        if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
            array = pc.if_else(pc.equal(pc.utf8_trim_whitespace(array), ""), pa.scalar(None, array.type), array)
        elif pa.types.is_floating(array.type):
            array = pc.if_else(pc.is_nan(array), pa.scalar(None, array.type), array)
        arrays.append(array)
    return pa.RecordBatch.from_arrays(arrays, names=columns), problems


def _binary_as_text(name: str, array: pa.Array, problems: dict[int, list]) -> pa.Array:
    if pa.types.is_fixed_size_binary(array.type):
        array = array.cast(pa.binary())
    try:
        return array.cast(pa.string())  # Arrow checks that every value is UTF-8
    except pa.ArrowInvalid:
        pass
    values = []
    for index, value in enumerate(array.to_pylist()):  # only a column that holds a value that is not UTF-8
        try:
            values.append(None if value is None else value.decode("utf-8"))
        except UnicodeDecodeError:
            values.append(None)
            problems.setdefault(index, []).append((name, f"{_short(value)} is binary data that is not UTF-8 text"))
    return pa.array(values, pa.string())


def _python_rows(batch: pa.RecordBatch, columns: list[str], problems: dict[int, list]) -> list[dict]:
    """The rows as dicts; a value Python cannot hold (a date beyond 9999) is missing, with a problem."""
    try:
        return batch.to_pylist()
    except (pa.ArrowException, OverflowError, ValueError):
        pass
    values: dict[str, list] = {}
    for name, array in zip(columns, batch.columns, strict=True):
        try:
            values[name] = array.to_pylist()
            continue
        except (pa.ArrowException, OverflowError, ValueError):
            pass
        values[name] = []
        for index in range(len(array)):  # only a column that holds such a value
            try:
                values[name].append(array[index].as_py())
            except (pa.ArrowException, OverflowError, ValueError) as error:
                values[name].append(None)
                problems.setdefault(index, []).append((name, f"the value cannot be read ({error}); it is "
                                                             "outside what the register can store"))
    return [dict(zip(values, row, strict=True)) for row in zip(*values.values(), strict=True)]


def _short(value: bytes) -> str:
    return repr(value[:40]) + ("..." if len(value) > 40 else "")


def _clean_row(row: dict) -> dict:
    return {str(k).strip(): _clean_cell(v) for k, v in row.items() if k is not None}


def flat_items(rows: Iterator[tuple[int, dict, list] | Item], columns: list[str], chunk_size: int,
                notes: list[str]) -> Iterator[Item]:
    """Rows of a flat table -> response items, validated per window of about ``chunk_size`` responses.

    A window closes only where the response id changes, so a response whose rows are together is
    never split. Rows of one response scattered within a window are grouped (as ``group_flat_rows``
    does); a response id that comes back after its window was closed is quarantined, because taking
    it as a new revision would silently drop the claims imported before. An ``Item`` among the rows (a part of
    the file that could not be read) closes the window and is passed on as it is.
    """
    file_problems = [FieldProblem(c, "required column is missing from the file") for c in missing_flat_columns(columns)]
    file_problems += [FieldProblem(c, "the column appears more than once in the header")
                      for c in sorted({c for c in columns if columns.count(c) > 1})]
    if file_problems:
        notes.append("file-level problem, every row is quarantined: " + "; ".join(map(str, file_problems)))
        for entry in rows:
            if isinstance(entry, Item):  # a part of the file that could not be read
                yield entry
                continue
            number, row, extra = entry
            problems = file_problems + [FieldProblem(c, f"row {number}: {m}") for c, m in extra]
            yield Item(f"row {number}", json.dumps([row], default=str), None, problems,
                       response_id_of(row), check_model=False)
        return
    closed: set[str] = set()
    for window in _windows(rows, chunk_size):
        if isinstance(window, Item):
            yield window
        else:
            yield from _window_items(window, columns, closed, chunk_size)


def _windows(rows: Iterable[tuple[int, dict, list] | Item],
             size: int) -> Iterator[list[tuple[int, dict, list]] | Item]:
    window: list[tuple[int, dict, list]] = []
    ids: set[str | None] = set()
    for entry in rows:
        if isinstance(entry, Item):
            if window:
                yield window
            window, ids = [], set()
            yield entry
            continue
        rid = entry[1].get("response_id")
        key = None if rid is None else str(rid).strip()
        if len(ids) >= size and key not in ids:
            yield window
            window, ids = [], set()
        window.append(entry)
        ids.add(key)
    if window:
        yield window


def _window_items(window: list[tuple[int, dict, list]], columns: list[str], closed: set[str],
                  chunk_size: int) -> Iterator[Item]:
    row_problems = frame_problems(window, columns)
    claim_index: dict[int, int] = {}
    counters: dict[str, int] = {}
    for number, row, _ in window:
        rid = row.get("response_id")
        if rid is not None and any(row.get(name) is not None for name in CLAIM_FIELDS):
            key = str(rid).strip()
            claim_index[number] = counters.get(key, 0)
            counters[key] = claim_index[number] + 1
    seen: set[str] = set()
    for numbers, raw, record in group_flat_rows((n, row) for n, row, _ in window):
        location = ("row " if len(numbers) == 1 else "rows ") + ",".join(map(str, numbers))
        problems: list[FieldProblem] = []
        for n in numbers:
            for column, message in row_problems.get(n, ()):
                loc = f"claims[{claim_index[n]}].{column}" if column in CLAIM_FIELDS and n in claim_index else column
                problems.append(FieldProblem(loc, f"row {n}: {message}"))
        if isinstance(record, RecordError):  # a row without a response id, or with a value that is no id
            known = {p.loc for p in problems}
            problems += [p for p in record.problems if p.loc not in known]
            yield Item(location, raw, None, problems, None)
            continue
        rid = record["response_id"]
        seen.add(rid)
        if rid in closed:
            problems.insert(0, FieldProblem("response_id", (
                f"rows of response {rid!r} also appear more than {chunk_size} responses earlier in the file, "
                "where they were already imported; keep each response's rows together (sort by response_id)")))
        yield Item(location, raw, record, problems, rid, claim_rows=[n for n in numbers if n in claim_index])
    closed.update(seen)


READERS: dict[str, Callable[[Path, int, list[str]], Iterator[Item]]] = {
    "jsonl": jsonl_items, "csv": csv_items, "parquet": parquet_items}


def text_items(text: str, location: str) -> list[Item]:
    """A fixed record typed by a user: one JSON object, or the JSON list of flat rows a quarantine row holds."""
    data, problems = decode_json(text)  # as strictly and within the same limits as an imported line
    if problems:
        return [Item(location, text, None, problems, None)]
    if isinstance(data, list) and data and all(isinstance(row, dict) for row in data):
        match = _ROWS_LOCATION.match(location)
        numbers = [int(n) for n in match.group(1).split(",")] if match else []
        if len(numbers) != len(data):
            numbers = list(range(1, len(data) + 1))
        rows = [_clean_row(row) for row in data]
        columns = list(dict.fromkeys(key for row in rows for key in row))
        numbered: Iterator[tuple[int, dict, list]] = iter([(n, row, []) for n, row in zip(numbers, rows, strict=True)])
        items = list(flat_items(numbered, columns, len(rows) + 1, []))
        for item in items:
            item.raw = text
        return items
    record, _ = take_quarantine_ref(data)
    return [Item(location, text, record, [], response_id_of(record))]
