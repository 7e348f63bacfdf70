"""RAG evaluation results as import files: RAGChecker's checking output and RAGAS result tables.

Called by ``register.ingest.importer`` for every file it imports: ``rag_kind`` looks at the content
(never the name) and says whether the file is one of them, ``rag_items`` reads it into ``Item``s that
the batch writer stores like any other record (validated again, quarantined with reasons when bad,
``accepted + quarantined == records``). The conversion itself is ``hri_core.rag_import``'s.

- ``ragchecker``: a ``.json``/``.jsonl`` file holding RAGChecker's results as one JSON document
  (``{"results": [...], "metrics": ...}`` as ``checking_outputs.json`` is written, or a list of checked
  query objects). One record per query, at location ``query N`` (1-based). Each query is cut from the
  document and decoded on its own, as strictly as a JSON Lines line (``hri_core.strict_json``), so a query
  that cannot be read (a lone surrogate, a duplicate key, NaN, nesting too deep) is quarantined alone.
  Response ids are ``id_prefix + query_id``.
- ``ragas``: a CSV or Parquet table with RAGAS's columns (``user_input`` or ``retrieved_contexts``; the
  legacy ``question`` + ``contexts``) and no ``labels`` column (that would be the interchange flat
  table). One record per row, at ``row N`` (CSV: the header is row 1; Parquet: data rows from 1); the
  row's metric columns travel in ``Item.extra`` to ``register.ingest.rag_inputs``. Response ids are a
  ``response_id`` column's (text or an integer), else ``id_prefix + row number``. A cell or Parquet value
  that cannot be read fails its row alone, never the file.

The default ``id_prefix`` is the file's stem and a colon (``checking_outputs:0``), so two result files
never overwrite each other's queries and importing the same file again is idempotent.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from hri_core import FieldProblem, RecordError
from hri_core.rag_import import Conversion, RagasConversion, ragas_rows, ragchecker_query_texts, ragchecker_results
from hri_core.ragmetrics import CHECKS, RAGCheckError
from hri_core.strict_json import decode_json, json_list_items
from register.errors import ImportRejected
from register.ingest.files import open_parquet
from register.ingest.items import Item
from register.ingest.rag_inputs import RAGAS_EXTRA
from register.ingest.readers import arrow_rows
from register.ingest.regular_files import open_file

__all__ = ["RAG_KINDS", "RagOptions", "rag_items", "rag_kind"]

RAG_KINDS = ("ragchecker", "ragas")
_RAGAS_MARKERS = ("user_input", "retrieved_contexts")


@dataclass(frozen=True)
class RagOptions:
    """What a RAG result file does not say and the importer may add: fields set on every record
    (``use_case``, ``model``, ``stakes``, ``created_at`` ISO 8601; ``category`` on every RAGChecker
    claim) and the response id prefix (None: the file's stem and a colon)."""

    id_prefix: str | None = None
    use_case: str | None = None
    model: str | None = None
    stakes: str | None = None
    created_at: str | None = None
    category: str | None = None

    def prefix(self, path: Path) -> str:
        return self.id_prefix if self.id_prefix is not None else f"{path.stem}:"


def _is_query(item: Any) -> bool:
    return isinstance(item, dict) and any(check in item for check in CHECKS)


def _is_ragchecker(data: Any) -> bool:
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        data = data["results"]
    return isinstance(data, list) and bool(data) and any(_is_query(item) for item in data)


def _document(path: Path) -> str | None:
    """The file's text, or None when it is not UTF-8 text (then it is no RAGChecker file)."""
    try:
        with open_file(path) as handle:
            return handle.read().decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def _looks_like_ragchecker(text: str) -> bool:
    """Whether the document holds RAGChecker queries: a query of its list (cut without decoding the document,
    ``json_list_items``) that decodes to an object with RAGChecker's checks. A query that does not decode does
    not count; the others decide."""
    parts = json_list_items(text, "results")
    if parts is not None:
        return any(_is_query(decode_json(item)[0]) for item in parts[0])
    data, problems = decode_json(text)
    return not problems and _is_ragchecker(data)


def _csv_header(path: Path) -> list[str]:
    with open_file(path, "r", encoding="utf-8-sig", errors="replace", newline="") as handle:
        for row in csv.reader(handle):
            if any(cell.strip() for cell in row):
                return [cell.strip() for cell in row]
    return []


def _is_ragas(columns: list[str]) -> bool:
    present = set(columns)
    if "labels" in present:  # the interchange flat table (its required column)
        return False
    return any(name in present for name in _RAGAS_MARKERS) or {"question", "contexts"} <= present


def rag_kind(path: Path, fmt: str) -> str | None:
    """``ragchecker``, ``ragas`` or None (an interchange file) for a file ``check_file`` accepted as ``fmt``.

    Only the head of a JSON Lines file is looked at unless it starts like one JSON document; a file
    that cannot be read as either is left to the interchange readers, which say what is wrong.
    """
    try:
        if fmt == "jsonl":
            with open_file(path) as handle:
                head = handle.read(4096).decode("utf-8-sig", errors="replace").lstrip()
            if not head.startswith(("{", "[")):
                return None
            first, _ = decode_json(head.split("\n", 1)[0].strip())  # None: a document over several lines
            if isinstance(first, dict) and "results" not in first:
                return None  # a complete object on line 1: JSON Lines of interchange records
            text = _document(path)
            return "ragchecker" if text is not None and _looks_like_ragchecker(text) else None
        if fmt == "csv":
            return "ragas" if _is_ragas(_csv_header(path)) else None
        if fmt == "parquet":
            return "ragas" if _is_ragas([n.strip() for n in open_parquet(path).schema_arrow.names]) else None
    except (OSError, UnicodeError, csv.Error):
        return None
    return None


def _items(conversion: Conversion, location: str, extra_of: dict[str, dict] | None = None) -> Iterator[Item]:
    """The conversion's records and failures as ``Item``s in input order (``number`` -> ``location``)."""
    items: list[tuple[int, Item]] = []
    for record in conversion.records:
        extra = (extra_of or {}).get(record.response.response_id)
        items.append((record.number, Item(location.format(record.number), record.raw, record.record, [],
                                          record.response.response_id, extra=extra)))
    for failure in conversion.failures:
        error = failure.error
        problems = list(error.problems) if isinstance(error, RecordError) else [FieldProblem("", str(error))]
        items.append((failure.line, Item(location.format(failure.line), failure.raw, None, problems,
                                         failure.response_id, check_model=False)))
    for _, item in sorted(items, key=lambda pair: pair[0]):
        yield item


def _ragchecker_items(path: Path, options: RagOptions, notes: list[str]) -> Iterator[Item]:
    """One item per query, each decoded on its own (``ragchecker_query_texts``): a query that cannot be read
    is quarantined alone, as a JSON Lines line is, and the others are imported."""
    text = _document(path) or ""
    given: dict[str, Any] = {"id_prefix": options.prefix(path), "use_case": options.use_case, "model": options.model,
                             "stakes": options.stakes, "created_at": options.created_at, "category": options.category}
    parts = json_list_items(text, "results")
    try:
        if parts is not None:
            conversion = ragchecker_query_texts(parts[0], **given)
            keys = parts[1]
        else:  # a document the cutter could not take apart (rag_kind decoded it whole)
            data, problems = decode_json(text)
            if problems:  # rag_kind saw results; this is a guard, not an expected path
                raise ImportRejected(f"{path.name}: not readable as RAGChecker results: "
                                     + "; ".join(map(str, problems)))
            conversion = ragchecker_results(data, **given)
            keys = list(data) if isinstance(data, dict) else []
    except RAGCheckError as error:  # rag_kind saw results; this is a guard, not an expected path
        raise ImportRejected(f"{path.name}: not RAGChecker results: {error}") from error
    if "metrics" in keys:
        notes.append("RAGChecker's own metrics in the file are not imported: they are recomputed from the labels")
    return iter(list(_items(conversion, "query {}")))


def _ragas_rows(path: Path, fmt: str) -> tuple[list[dict[str, Any]], dict[int, list[FieldProblem]], int]:
    """The table's rows, the problems of rows that are not whole (CSV field count, bad bytes) and the
    number of the first row."""
    problems: dict[int, list[FieldProblem]] = {}
    if fmt == "parquet":  # value by value as the flat reader does: one value never refuses the file
        parquet = open_parquet(path)
        columns = [name.strip() for name in parquet.schema_arrow.names]
        table_rows: list[dict[str, Any]] = []
        for batch in parquet.iter_batches():
            batch_rows, batch_problems = arrow_rows(batch, columns)
            for index, found in batch_problems.items():
                problems[len(table_rows) + index + 1] = [FieldProblem(column, message) for column, message in found]
            table_rows += batch_rows
        return table_rows, problems, 1
    csv.field_size_limit(max(csv.field_size_limit(), 1 << 28))
    rows: list[dict[str, Any]] = []
    with open_file(path, "r", encoding="utf-8-sig", errors="surrogateescape", newline="") as handle:
        reader = csv.reader(handle)
        header = next((row for row in reader if any(cell.strip() for cell in row)), [])
        columns = [cell.strip() for cell in header]
        for values in reader:
            if not values:
                continue
            number = len(rows) + 2
            row_problems = []
            try:
                "".join(values).encode("utf-8")
            except UnicodeEncodeError:
                values = [v.encode("utf-8", "surrogateescape").decode("utf-8", "replace") for v in values]
                row_problems.append(FieldProblem("", "the row is not valid UTF-8 text"))
            if len(values) != len(columns):
                row_problems.append(FieldProblem("", f"the row has {len(values)} fields but the header has "
                                                     f"{len(columns)}"))
            if row_problems:
                problems[number] = row_problems
            rows.append(dict(zip(columns, values, strict=False)))
    return rows, problems, 2


def _ragas_items(path: Path, fmt: str, options: RagOptions, notes: list[str]) -> Iterator[Item]:
    try:
        rows, row_problems, first_row = _ragas_rows(path, fmt)
    except (pa.ArrowException, OverflowError, ValueError, csv.Error) as error:  # refused before the batch starts
        raise ImportRejected(f"{path.name}: the RAGAS table cannot be read: {error}") from error
    conversion: RagasConversion = ragas_rows(rows, first_row=first_row, id_prefix=options.prefix(path),
                                             use_case=options.use_case, model=options.model, stakes=options.stakes)
    if options.created_at is not None:
        for record in conversion.records:
            record.record.setdefault("created_at", options.created_at)
    notes.append("RAGAS metric columns: " + (", ".join(conversion.metric_columns) or "none"))
    categories = {first_row + i: row.get("category") for i, row in enumerate(rows)}
    extra_of = {s.response_id: {RAGAS_EXTRA: {"metrics": s.values, "category": categories.get(s.row)}}
                for s in conversion.scores}
    items = []
    for item in _items(conversion, "row {}", extra_of):
        number = int(item.location.split()[1])
        if number in row_problems:  # a row not whole (values in the wrong columns?) or with a value unreadable
            item = Item(item.location, item.raw, None, row_problems[number] + item.problems, item.response_id,
                        check_model=False)
        items.append(item)
    return iter(items)  # read whole here, so a file that cannot be read is refused before its batch starts


def rag_items(kind: str, path: Path, fmt: str, options: RagOptions, notes: list[str]) -> Iterator[Item]:
    """The file's records as ``Item``s (``kind`` from ``rag_kind``; ``fmt`` from ``check_file``)."""
    if kind == "ragchecker":
        return _ragchecker_items(path, options, notes)
    if kind == "ragas":
        return _ragas_items(path, fmt, options, notes)
    raise ValueError(f"unknown RAG result kind {kind!r}; expected one of {', '.join(RAG_KINDS)}")
