"""Export current scores (CSV, Parquet, JSON Lines) and the open quarantine (JSON Lines, to fix and re-import).

Called by the CLI (``python -m register export`` / ``quarantine export``) and the pages' download
buttons. Scores are written by DuckDB itself (``COPY (SELECT ...) TO``), so an export of millions of
rows never passes through Python. CSV is opened by spreadsheets, which run a cell starting with
``= + - @`` (or a tab / carriage return) as a formula: every text cell starting so is prefixed with a
single quote, in the SELECT itself (a CASE per text column), so the export stays one vectorised
statement. Parquet and JSON Lines keep values exactly (typed numbers, no prefix).
"""

from __future__ import annotations

import json
from pathlib import Path

from hri_core.readers import decode_json, group_flat_rows
from register.db.export import escape_formulas_sql
from register.db.sql import Params, file_literal
from register.db.store import Store
from register.errors import RegisterError
from register.ingest.items import QUARANTINE_KEY

__all__ = ["EXPORT_COLUMNS", "EXPORT_FORMATS", "export_format", "export_quarantine", "export_scores"]

EXPORT_FORMATS = {".csv": "csv", ".parquet": "parquet", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl"}

# (column, SQL expression, kind): the allow-list of what an export holds, in order.
EXPORT_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("response_id", "r.response_id", "text"),
    ("revision", "r.revision", "number"),
    ("use_case", "r.use_case", "text"),
    ("model", "r.model", "text"),
    ("created_at", "r.created_at", "time"),
    ("hri_add", "s.hri_add", "number"),
    ("hri", "s.hri", "number"),
    ("score", "s.score", "number"),
    ("band", "s.band", "text"),
    ("action", "s.action", "text"),
    *((f"s_{d}", f"s.s_{d}", "number") for d in "fcuosph"),
    ("floors_fired", "s.floors_fired", "number"),
    ("decisive_claim_id", "s.decisive_claim_id", "text"),
    ("decisive_rule_id", "s.decisive_rule_id", "text"),
    ("profile_version", "s.profile_version", "number"),
    ("as_of", "s.as_of", "time"),
    ("scoring_failure", "s.scoring_failure", "text"),  # set when the score failed closed (worst case, review)
    # the richer answer (issue 12): what the mitigation step read, and the floor that raised the action
    ("stakes", "r.stakes", "text"),
    ("query_ambiguous", "r.query_ambiguous", "boolean"),
    ("gt_answer", "r.gt_answer", "text"),
    ("retrieved_context", "r.retrieved_context::VARCHAR", "text"),  # the chunks as JSON text
    ("action_floor_claim_id", "s.action_floor_claim_id", "text"),
    ("action_floor_rule_id", "s.action_floor_rule_id", "text"),
    # CLAIM's Mitigation step: answer / revise / ask / abstain / escalate, and why in one sentence
    ("mitigation_action", "s.mitigation_action", "text"),
    ("mitigation_rule", "s.mitigation_rule", "text"),
    ("mitigation_reason", "s.mitigation_reason", "text"),
    ("mitigation_claim_id", "s.mitigation_claim_id", "text"),
    ("mitigation_policy_version", "s.mitigation_policy_version", "number"),
    # the one decision on the answer (issue 33: release / caution / review / block) and its reasons in order: a
    # list in JSON Lines and Parquet, joined with "; " in CSV
    ("decision", "s.decision", "text"),
    ("decision_reasons", "s.decision_reasons", "list"),
)


def export_format(path: str | Path, fmt: str | None = None) -> str:
    """The export format: as given, else from the file extension."""
    if fmt:
        if fmt not in set(EXPORT_FORMATS.values()):
            raise RegisterError(f"unknown export format {fmt!r}; expected csv, parquet or jsonl")
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix not in EXPORT_FORMATS:
        raise RegisterError(f"cannot tell the export format from {Path(path).name!r}; "
                            "use a .csv, .parquet or .jsonl name, or give the format")
    return EXPORT_FORMATS[suffix]


def _select(fmt: str, p: Params) -> str:
    columns = []
    for name, expr, kind in EXPORT_COLUMNS:
        if fmt == "csv" and kind == "list":
            expr = escape_formulas_sql(f"array_to_string({expr}, '; ')", p)
        elif fmt == "csv" and kind == "text":
            expr = escape_formulas_sql(expr, p)
        elif fmt != "parquet" and kind == "time":  # ISO 8601 in UTC for text formats
            expr = f"strftime({expr} AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%fZ')"
        columns.append(f"{expr} AS {name}")
    return (f"SELECT {', '.join(columns)} FROM scores s JOIN responses r "
            "ON r.response_id = s.response_id AND r.revision = s.revision "
            "WHERE s.is_current AND r.is_current AND ($batch IS NULL OR r.batch_id = $batch) "
            "ORDER BY r.response_id")


def export_scores(store: Store, path: str | Path, *, fmt: str | None = None, batch_id: int | None = None) -> int:
    """Write the current score of every current response (or one batch's) to ``path``; return the row count."""
    fmt = export_format(path, fmt)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    options = {"csv": "FORMAT csv, HEADER", "parquet": "FORMAT parquet", "jsonl": "FORMAT json"}[fmt]
    p = Params()  # the formula prefixes of a CSV's text columns
    select = _select(fmt, p)
    with store.cursor() as cur:
        count = cur.execute(f"COPY ({select}) TO {file_literal(path)} ({options})",
                            {"batch": batch_id, **p.values})
    return count or 0


def _fixable_line(quarantine_id: int, source_name: str, location: str, response_id: str | None, raw: str,
                  reasons, created_at) -> dict:
    """One quarantine row as a JSON Lines record the user can correct and import again.

    The ``_quarantine`` key says what was wrong (and which row a fixed line resolves); the other keys
    are the record itself when its raw text was a JSON object or a flat table's rows. A record whose
    raw text cannot be read back as JSON -- not JSON at all, or JSON the importer refuses (nested too
    deeply, a number too long, a duplicate key, NaN: ``decode_json``) -- keeps it verbatim under
    ``_quarantine.raw``, beside the reasons it was quarantined for.
    """
    meta = {"quarantine_id": quarantine_id, "source_name": source_name, "location": location,
            "response_id": response_id, "reasons": json.loads(reasons) if isinstance(reasons, str) else reasons,
            "created_at": created_at.isoformat() if created_at else None}
    data, _ = decode_json(raw)
    if isinstance(data, list) and data and all(isinstance(row, dict) for row in data):
        grouped = [record for _, _, record in group_flat_rows(enumerate(data, start=1))]
        data = grouped[0] if len(grouped) == 1 and isinstance(grouped[0], dict) else None
    if isinstance(data, dict):
        data.pop(QUARANTINE_KEY, None)
        return {QUARANTINE_KEY: meta, **data}
    return {QUARANTINE_KEY: {**meta, "raw": raw}}


def export_quarantine(store: Store, path: str | Path, *, include_resolved: bool = False) -> int:
    """Write the open quarantine rows (or all rows) as JSON Lines to fix and re-import; return the row count.

    Every row is written, whatever its raw text holds (``_fixable_line``). The lines go to a file beside
    ``path`` that replaces it only once complete, so a failed export never leaves an empty or partial file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    where = "" if include_resolved else "WHERE status = 'open'"
    count = 0
    special = path.exists() and not path.is_file()  # /dev/stdout, a pipe: written as it goes
    target = path if special else path.with_name(f".{path.name}.partial")
    try:
        with store.cursor() as cur, target.open("w", encoding="utf-8") as handle:
            for row in cur.stream("SELECT quarantine_id, source_name, location, response_id, raw, reasons, "
                                  f"created_at FROM quarantine {where} ORDER BY quarantine_id"):
                handle.write(json.dumps(_fixable_line(*row), ensure_ascii=False, default=str) + "\n")
                count += 1
        if not special:
            target.replace(path)
    finally:
        if not special:
            target.unlink(missing_ok=True)
    return count
