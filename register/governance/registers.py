"""The source verification register, the claims register and the minimum evidence rules.

Paper sections XI-XIII (Tables VII and VIII); DOMAIN.md section 7 fixes the vocabularies. Called by
the governance pages (through ``ui.governance``), the checklist (``register.governance.checklist``), the demo
loader and the CLI.

Every write is a service function taking the acting user: it authorizes first, validates the whole
batch (pandera, every failure collected with its row number) before anything is written, checks each
row's version inside the transaction (a stale row refuses the whole save with ``StaleEdit``) and
records one audit event per changed row with its before and after. Deletes are soft (``deleted``)
and can be restored. Evidence rules are versioned data: saving them writes a new version; the
newest version is the one in force.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import pandas as pd

from register.errors import ImportRejected, NotFound, RegisterError, StaleEdit
from register.access.permissions import ROLES, Permission, authorize
from register.db.store import Actor, Change, Store, utc_now

__all__ = [
    "CLAIM_TYPES", "CLAIM_TEMPLATE_COLUMNS", "HANDLINGS", "MUTABLE_SOURCE_TYPES", "PAPER_RULES", "SOURCE_COLUMNS",
    "SOURCE_TYPES", "STATUSES", "ImportResult", "Problem", "RowChanges", "ValidationFailed", "claim_key_for",
    "current_rule_version", "ensure_default_rules", "evaluate_rules", "export_claims", "export_sources",
    "import_register", "list_claims", "list_rules", "list_sources", "read_upload", "restore", "rule_versions",
    "save_claims", "save_rules", "save_sources", "template",
]

# --- vocabularies (DOMAIN.md section 7) ---------------------------------------------------------------

SOURCE_TYPES = (
    "peer-reviewed publication", "recognized conference proceedings", "preprint", "official framework",
    "official dataset card or repository documentation", "vendor documentation",
    "approved internal policy / access-control record", "web page", "original proposal",
)
# sources whose content can change after it was read: an access date is required
MUTABLE_SOURCE_TYPES = ("web page", "vendor documentation", "official dataset card or repository documentation")
CLAIM_TYPES = (
    "scientific/methodological", "benchmark property or number", "vendor capability", "governance framework",
    "internal policy/permission", "original design choice",
)
STATUSES = ("verified", "partially verified", "unverified", "provisional (design parameter)", "hypothesis",
            "not claimed", "removed")
WITHDRAWN_STATUSES = ("not claimed", "removed")  # no longer asserted: no evidence needed
HANDLINGS = ("remove", "soften", "mark as hypothesis", "do not report the number", "classify as vendor claim",
             "classify as ACCESS_GAP/UNKNOWN")
# which verification status shows that a handling was applied (soften and the classifications are
# wording changes no register field can show: a reviewer confirms them in the checklist)
HANDLING_STATUSES = (("remove", "removed"), ("remove", "not claimed"), ("mark as hypothesis", "hypothesis"),
                     ("do not report the number", "removed"), ("do not report the number", "not claimed"),
                     ("do not report the number", "provisional (design parameter)"))

# Table VIII of the paper as the first rule version
PAPER_RULES = (
    ("scientific/methodological",
     ("peer-reviewed publication", "recognized conference proceedings", "preprint"),
     ("remove", "soften", "mark as hypothesis"),
     "Peer-reviewed paper, recognized conference proceedings, or clearly marked preprint when no peer-reviewed "
     "source exists. If missing: remove, soften, or mark explicitly as hypothesis or open question."),
    ("benchmark property or number",
     ("peer-reviewed publication", "recognized conference proceedings",
      "official dataset card or repository documentation"),
     ("do not report the number",),
     "Primary benchmark paper, official dataset card, or official repository documentation. If missing: do not "
     "report the number; state only the qualitative point if supported."),
    ("vendor capability",
     ("vendor documentation", "web page"),
     ("classify as vendor claim",),
     "Official vendor documentation, release note, or product page with access date. If missing: classify as "
     "vendor claim, not independent validation."),
    ("governance framework",
     ("official framework",),
     ("soften",),
     "Official framework document from the issuing body. If missing: do not paraphrase as regulatory "
     "requirement unless the source itself states it."),
    ("internal policy/permission",
     ("approved internal policy / access-control record",),
     ("classify as ACCESS_GAP/UNKNOWN",),
     "Approved policy, access-control record, system log, or authorized process owner confirmation. If "
     "missing: classify as ACCESS_GAP or UNKNOWN rather than infer authorization."),
    ("original design choice",
     ("original proposal",),
     ("mark as hypothesis",),
     "Explicit statement that the element is proposed by this paper. If missing: do not present it as an "
     "established standard or empirically validated result."),
)

SOURCE_COLUMNS = ("source_id", "title", "ref", "source_type", "authority_tier", "publisher", "access_date",
                  "valid_until", "superseded_by", "archive_url", "content_hash", "restricted_to", "notes")
CLAIM_COLUMNS = ("claim_key", "statement", "claim_type", "source_ids", "verification_status", "reviewer",
                 "reviewed_on", "notes")
CLAIM_TEMPLATE_COLUMNS = ("claim_id", "statement", "claim_type", "source_type", "source_ref", "access_date",
                          "verification_status", "reviewer", "review_date", "notes")
MAX_UPLOAD_BYTES = 5 * 1024 * 1024
LIST_SEPARATOR = ";"


class ValidationFailed(RegisterError, ValueError):
    """Rows that cannot be saved; ``problems`` lists every failure (row, column, message). Nothing was written."""

    title = "Not saved: fix these rows"

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems[:20]) + (" ..." if len(problems) > 20 else ""))


@dataclass(frozen=True)
class Problem:
    row: int | None      # 1-based row of the edited table or uploaded file (header excluded)
    column: str | None
    message: str

    def __str__(self) -> str:
        where = f"row {self.row}" if self.row is not None else "file"
        return f"{where}, {self.column}: {self.message}" if self.column else f"{where}: {self.message}"


@dataclass
class RowChanges:
    """An edit of a register table: updates carry the row version they were read at."""

    updates: list[dict] = field(default_factory=list)    # {"key", "row_version", "values": {...}, "row"}
    inserts: list[dict] = field(default_factory=list)    # {"values": {...}, "row"}
    deletes: list[dict] = field(default_factory=list)    # {"key", "row_version"}

    def __bool__(self) -> bool:
        return bool(self.updates or self.inserts or self.deletes)


# --- value normalisation ---------------------------------------------------------------------------


def _blank(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and value != value:
        return True
    if value is pd.NaT:
        return True
    if isinstance(value, str) and not value.strip():
        return True
    try:
        return bool(pd.isna(value)) if not isinstance(value, (list, tuple)) else False
    except (TypeError, ValueError):
        return False


def _text(value: Any) -> str | None:
    return None if _blank(value) else str(value).strip()


def _date(value: Any) -> date | None | str:
    """A date, None when blank, or the original text when it is not a date (validation reports it)."""
    if _blank(value):
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    try:
        return pd.Timestamp(str(value).strip()).date()
    except (ValueError, TypeError):
        return f"\x00{value}"  # marked invalid


def _list(value: Any) -> list[str]:
    if _blank(value):
        return []
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        items = list(value.tolist() if hasattr(value, "tolist") else value)
    else:
        items = re.split(r"[;,]", str(value))
    return [str(i).strip() for i in items if not _blank(i) and str(i).strip()]


def _tier(value: Any) -> int | None | str:
    if _blank(value):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return f"\x00{value}"
    return int(number) if number.is_integer() else f"\x00{value}"


def claim_key_for(statement: str) -> str:
    """The stable key of a claim imported without one: derived from its normalised statement."""
    norm = " ".join(statement.lower().split())
    return "clm-" + hashlib.sha256(norm.encode()).hexdigest()[:12]


def _source_key_for(ref: str) -> str:
    return "src-" + hashlib.sha256(" ".join(ref.lower().split()).encode()).hexdigest()[:10]


def _normalise_source(values: dict) -> dict:
    out = {
        "source_id": _text(values.get("source_id")),
        "title": _text(values.get("title")),
        "ref": _text(values.get("ref")),
        "source_type": _text(values.get("source_type")),
        "authority_tier": _tier(values.get("authority_tier")),
        "publisher": _text(values.get("publisher")),
        "access_date": _date(values.get("access_date")),
        "valid_until": _date(values.get("valid_until")),
        "superseded_by": _text(values.get("superseded_by")),
        "archive_url": _text(values.get("archive_url")),
        "content_hash": _text(values.get("content_hash")),
        "restricted_to": _list(values.get("restricted_to")),
        "notes": _text(values.get("notes")),
    }
    if out["source_id"] is None and (out["ref"] or out["title"]):
        out["source_id"] = _source_key_for(out["ref"] or out["title"])
    return out


def _normalise_claim(values: dict) -> dict:
    out = {
        "claim_key": _text(values.get("claim_key")),
        "statement": _text(values.get("statement")),
        "claim_type": _text(values.get("claim_type")),
        "source_ids": _list(values.get("source_ids")),
        "verification_status": _text(values.get("verification_status")),
        "reviewer": _text(values.get("reviewer")),
        "reviewed_on": _date(values.get("reviewed_on")),
        "notes": _text(values.get("notes")),
    }
    if out["claim_key"] is None and out["statement"]:
        out["claim_key"] = claim_key_for(out["statement"])
    return out


# --- validation (pandera, every failure collected) ---------------------------------------------------


def _is_valid_date(series: pd.Series) -> pd.Series:
    return series.map(lambda v: v is None or isinstance(v, date))


def _schema(kind: str):
    import pandera.pandas as pda

    def col(checks=None, nullable=True):
        return pda.Column(object, checks=checks, nullable=nullable, coerce=False)

    def vocab(values):
        return pda.Check(lambda s: s.isin(values), element_wise=False, error="one of: " + ", ".join(values))

    date_check = pda.Check(_is_valid_date, error="a date (YYYY-MM-DD)")
    if kind == "sources":
        return pda.DataFrameSchema({
            "source_id": col(nullable=False),
            "title": col(nullable=False),
            "source_type": col(vocab(SOURCE_TYPES), nullable=False),
            "authority_tier": col(pda.Check(lambda s: s.map(lambda v: v is None or (isinstance(v, int) and 1 <= v <= 5)),
                                            error="an integer from 1 (strongest) to 5")),
            "access_date": col(date_check),
            "valid_until": col(date_check),
            "restricted_to": col(pda.Check(lambda s: s.map(lambda v: all(r in ROLES for r in v)),
                                           error="roles from: " + ", ".join(ROLES))),
        }, strict=False)
    return pda.DataFrameSchema({
        "claim_key": col(nullable=False),
        "statement": col(nullable=False),
        "claim_type": col(vocab(CLAIM_TYPES), nullable=False),
        "verification_status": col(vocab(STATUSES), nullable=False),
        "reviewed_on": col(date_check),
    }, strict=False)


def _validate(kind: str, rows: list[tuple[int, dict]]) -> list[Problem]:
    """Every failure of every row, by row number (nothing is written when any is found)."""
    import pandera.pandas as pda

    if not rows:
        return []
    frame = pd.DataFrame([values for _, values in rows], index=[n for n, _ in rows], dtype=object)
    frame = frame.astype(object).where(frame.notna(), None)
    problems: list[Problem] = []
    try:
        _schema(kind).validate(frame, lazy=True)
    except pda.errors.SchemaErrors as error:
        cases = error.failure_cases
        for column, check, value, index in cases[["column", "check", "failure_case", "index"]].itertuples(index=False):
            if isinstance(value, str) and value.startswith("\x00"):
                value = value[1:]
            if check == "not_nullable":
                message = "a value is required"
            elif column is None or (isinstance(column, str) and column == kind) or column == "DataFrameSchema":
                column, message = None, str(check)
            else:
                message = f"{value!r} is not {check}"
            row = None if index is None or pd.isna(index) else int(index)
            problems.append(Problem(row, column, message))
    if kind == "sources":  # cross-field rule: mutable sources need the date they were read
        problems += [Problem(n, "access_date", "required for web and other mutable sources")
                     for n, v in rows if v.get("source_type") in MUTABLE_SOURCE_TYPES and v.get("access_date") is None]
    unique: dict[tuple, Problem] = {}
    for p in problems:
        unique.setdefault((p.row, p.column, p.message), p)
    return sorted(unique.values(), key=lambda p: (p.row or 0, p.column or ""))


# --- reads --------------------------------------------------------------------------------------------


def list_sources(store: Store, *, role: str | None = None, include_deleted: bool = False) -> pd.DataFrame:
    """The source register (a role sees unrestricted sources and those restricted to it)."""
    where = ["(NOT deleted OR $all)"]
    params: dict[str, Any] = {"all": include_deleted}
    if role is not None and role not in ("admin", "system"):
        where.append("(restricted_to IS NULL OR len(restricted_to) = 0 OR list_contains(restricted_to, $role))")
        params["role"] = role
    return store.query_df(
        f"SELECT {', '.join(SOURCE_COLUMNS)}, row_version, updated_at, updated_by, deleted FROM sources "
        f"WHERE {' AND '.join(where)} ORDER BY source_id", params)


def list_claims(store: Store, *, include_deleted: bool = False) -> pd.DataFrame:
    return store.query_df(
        f"SELECT {', '.join(CLAIM_COLUMNS)}, row_version, updated_at, updated_by, deleted FROM register_claims "
        "WHERE NOT deleted OR ? ORDER BY created_at, claim_key", [include_deleted])


# --- writes -------------------------------------------------------------------------------------------

_TABLES = {
    "sources": ("sources", "source_id", SOURCE_COLUMNS, "source", _normalise_source),
    "claims": ("register_claims", "claim_key", CLAIM_COLUMNS, "register_claim", _normalise_claim),
}


def _row_state(cur, table: str, key_col: str, columns: tuple[str, ...], key: str) -> dict | None:
    row = cur.execute(
        f"SELECT {', '.join(columns)}, row_version, updated_at, updated_by, deleted FROM {table} WHERE {key_col} = ?",
        [key]).fetchone()
    if row is None:
        return None
    return dict(zip(columns + ("row_version", "updated_at", "updated_by", "deleted"), row))


def _stale(kind: str, key: str, state: dict) -> StaleEdit:
    at = state["updated_at"]
    when = at.strftime("%Y-%m-%d %H:%M:%S UTC") if isinstance(at, datetime) else str(at)
    return StaleEdit(f"{kind[:-1]} {key} was changed by {state['updated_by']} at {when} "
                     f"(now version {state['row_version']}), reload")


def _content(state: dict, columns: tuple[str, ...]) -> dict:
    return {c: (list(state[c]) if isinstance(state[c], (list, tuple)) else state[c]) for c in columns}


def _save(store: Store, actor: Actor, kind: str, changes: RowChanges) -> dict:
    table, key_col, columns, entity, normalise = _TABLES[kind]
    authorize(store, actor, Permission.REGISTER_EDIT, entity_type=entity)
    rows: list[tuple[int, dict]] = []
    problems: list[Problem] = []
    for n, item in enumerate(changes.updates + changes.inserts, start=1):
        row_no = item.get("row", n)
        values = normalise(item["values"])
        if "key" in item and values[key_col] != item["key"]:
            problems.append(Problem(row_no, key_col, f"the key of an existing row cannot change (was {item['key']!r}); "
                                                     "add a new row instead"))
            values[key_col] = item["key"]
        rows.append((row_no, values))
    problems += _validate(kind, rows)
    if problems:
        raise ValidationFailed(problems)
    updates = [(item, values) for item, (_, values) in zip(changes.updates, rows)]
    inserts = [values for _, values in rows[len(changes.updates):]]
    now = utc_now()

    def fn(cur) -> Change:
        events = []
        counts = {"updated": 0, "inserted": 0, "deleted": 0, "unchanged": 0}
        if kind == "claims":
            wanted = sorted({s for _, v in rows for s in v["source_ids"]})
            known = {r[0] for r in cur.execute("SELECT source_id FROM sources WHERE list_contains(?, source_id)",
                                               [wanted]).fetchall()} if wanted else set()
            missing = [Problem(n, "source_ids", f"unknown source {s!r}; add it to the source register first")
                       for n, v in rows for s in v["source_ids"] if s not in known]
            if missing:
                raise ValidationFailed(missing)
        for item, values in updates:
            state = _row_state(cur, table, key_col, columns, item["key"])
            if state is None:
                raise NotFound(f"{kind[:-1]} {item['key']} does not exist (deleted meanwhile?), reload")
            if state["row_version"] != item["row_version"]:
                raise _stale(kind, item["key"], state)
            before = _content(state, columns)
            if before == values:
                counts["unchanged"] += 1
                continue
            _update(cur, table, key_col, columns, values, actor, now)
            counts["updated"] += 1
            events.append((f"{entity}.update", entity, item["key"], before, values))
        for values in inserts:
            state = _row_state(cur, table, key_col, columns, values[key_col])
            if state is not None and not state["deleted"]:
                raise ValidationFailed([Problem(None, key_col, f"{values[key_col]!r} already exists; edit that row")])
            if state is not None:  # a deleted row with this key comes back with the new values
                _update(cur, table, key_col, columns, values, actor, now, undelete=True)
            else:
                cur.execute(
                    f"INSERT INTO {table} ({', '.join(columns)}, row_version, created_at, created_by, updated_at, "
                    f"updated_by, deleted) VALUES ({', '.join('?' for _ in columns)}, 1, ?, ?, ?, ?, false)",
                    [values[c] for c in columns] + [now, actor.name, now, actor.name])
            counts["inserted"] += 1
            events.append((f"{entity}.create", entity, values[key_col], None, values))
        for item in changes.deletes:
            state = _row_state(cur, table, key_col, columns, item["key"])
            if state is None:
                raise NotFound(f"{kind[:-1]} {item['key']} does not exist, reload")
            if state["row_version"] != item["row_version"]:
                raise _stale(kind, item["key"], state)
            cur.execute(f"UPDATE {table} SET deleted = true, row_version = row_version + 1, updated_at = ?, "
                        f"updated_by = ? WHERE {key_col} = ?", [now, actor.name, item["key"]])
            counts["deleted"] += 1
            events.append((f"{entity}.delete", entity, item["key"], _content(state, columns), {"deleted": True}))
        return Change(table, None, None, counts, result=counts, extra_events=events)

    return store.write(actor, f"{entity}.save", fn)


def _update(cur, table, key_col, columns, values, actor, now, undelete=False) -> None:
    sets = ", ".join(f"{c} = ?" for c in columns if c != key_col)
    cur.execute(
        f"UPDATE {table} SET {sets}, row_version = row_version + 1, updated_at = ?, updated_by = ?"
        f"{', deleted = false' if undelete else ''} WHERE {key_col} = ?",
        [values[c] for c in columns if c != key_col] + [now, actor.name, values[key_col]])


def save_sources(store: Store, actor: Actor, changes: RowChanges) -> dict:
    """Apply an edit of the source register; returns counts. ``ValidationFailed`` / ``StaleEdit`` write nothing."""
    return _save(store, actor, "sources", changes)


def save_claims(store: Store, actor: Actor, changes: RowChanges) -> dict:
    """Apply an edit of the claims register; returns counts. ``ValidationFailed`` / ``StaleEdit`` write nothing."""
    return _save(store, actor, "claims", changes)


def restore(store: Store, actor: Actor, kind: str, key: str) -> None:
    """Bring back a soft-deleted source or claim."""
    table, key_col, columns, entity, _ = _TABLES[kind]
    authorize(store, actor, Permission.REGISTER_EDIT, entity_type=entity, entity_id=key)

    def fn(cur) -> Change:
        state = _row_state(cur, table, key_col, columns, key)
        if state is None or not state["deleted"]:
            raise NotFound(f"{kind[:-1]} {key} is not deleted")
        cur.execute(f"UPDATE {table} SET deleted = false, row_version = row_version + 1, updated_at = ?, "
                    f"updated_by = ? WHERE {key_col} = ?", [utc_now(), actor.name, key])
        return Change(entity, key, {"deleted": True}, {"deleted": False})

    store.write(actor, f"{entity}.restore", fn)


# --- import and export --------------------------------------------------------------------------------


@dataclass
class ImportResult:
    rows: int = 0
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    sources_created: int = 0
    rejected: list[Problem] = field(default_factory=list)

    @property
    def rejected_rows(self) -> int:
        return len({p.row for p in self.rejected})


def read_upload(filename: str, data: bytes, *, max_bytes: int = MAX_UPLOAD_BYTES) -> pd.DataFrame:
    """An uploaded register file (CSV or Excel) as text cells; ``ImportRejected`` for size or type."""
    name = filename.lower()
    if len(data) > max_bytes:
        raise ImportRejected(f"{filename} is {len(data) / 1e6:.1f} MB; the limit is {max_bytes / 1e6:.0f} MB")
    if not data:
        raise ImportRejected(f"{filename} is empty")
    try:
        if name.endswith(".xlsx"):
            if not data.startswith(b"PK"):
                raise ImportRejected(f"{filename} is not an Excel workbook (.xlsx)")
            frame = pd.read_excel(io.BytesIO(data), dtype=object)
        elif name.endswith(".csv"):
            if b"\x00" in data[:4096]:
                raise ImportRejected(f"{filename} is not a text CSV file")
            frame = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False, encoding="utf-8-sig")
        else:
            raise ImportRejected(f"{filename}: only .csv and .xlsx files can be imported")
    except ImportRejected:
        raise
    except (ValueError, UnicodeDecodeError, OSError) as error:
        raise ImportRejected(f"{filename} could not be read: {error}") from error
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    # undo the formula escape of our own exports (a leading apostrophe before = + - @)
    return frame.map(lambda v: v[1:] if isinstance(v, str) and len(v) > 1 and v[0] == "'" and v[1] in "=+-@" else v)


def import_register(store: Store, actor: Actor, kind: str, frame: pd.DataFrame) -> ImportResult:
    """Import sources or claims from a template-shaped frame: valid rows are written, keyed by the stable
    key (re-import updates instead of duplicating); bad rows are reported with row number and reason."""
    authorize(store, actor, Permission.REGISTER_EDIT, entity_type="source" if kind == "sources" else "register_claim")
    result = ImportResult(rows=len(frame))
    required = ("title", "source_type") if kind == "sources" else ("statement", "claim_type", "verification_status")
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise ImportRejected(f"missing column(s) {', '.join(missing)}; download the template")
    records = list(enumerate(frame.to_dict("records"), start=1))
    if kind == "claims":
        records, result.sources_created = _claim_rows_with_sources(store, actor, records, result)
    table, key_col, columns, _, normalise = _TABLES[kind]
    candidates = [(n, normalise(r)) for n, r in records]
    bad = _validate(kind, candidates)
    if kind == "claims":
        known = set(store.query_df("SELECT source_id FROM sources WHERE NOT deleted")["source_id"])
        bad += [Problem(n, "source_ref", f"unknown source {s!r}") for n, v in candidates for s in v["source_ids"]
                if s not in known]
    seen: dict[str, int] = {}
    for n, v in candidates:
        if v[key_col] in seen:
            bad.append(Problem(n, key_col, f"same key as row {seen[v[key_col]]} ({v[key_col]})"))
        elif v[key_col]:
            seen[v[key_col]] = n
    result.rejected += bad
    bad_rows = {p.row for p in bad}
    good = [(n, v) for n, v in candidates if n not in bad_rows]
    if not good:
        return result
    existing = {r[0]: (r[1], r[2]) for r in store.query(
        f"SELECT {key_col}, row_version, deleted FROM {table} WHERE list_contains(?, {key_col})",
        [[v[key_col] for _, v in good]])}
    changes = RowChanges()
    for n, v in good:
        if v[key_col] in existing and not existing[v[key_col]][1]:
            changes.updates.append({"key": v[key_col], "row_version": existing[v[key_col]][0], "values": v, "row": n})
        else:
            changes.inserts.append({"values": v, "row": n})
    counts = _save(store, actor, kind, changes)
    result.inserted, result.updated, result.unchanged = counts["inserted"], counts["updated"], counts["unchanged"]
    return result


def _claim_rows_with_sources(store, actor, records, result) -> tuple[list[tuple[int, dict]], int]:
    """Template rows name their sources by ``source_ref`` (an existing source id or reference); unknown
    references become new sources from the row's source_type and access_date."""
    sources = store.query("SELECT source_id, ref, title, deleted FROM sources")
    by_ref = {}
    for sid, ref, title, _deleted in sources:
        by_ref[sid.lower()] = sid
        for text in (ref, title):
            if text:
                by_ref.setdefault(text.strip().lower(), sid)
    new_sources: dict[str, tuple[int, dict]] = {}
    out = []
    for n, record in records:
        refs = _list(record.get("source_ref"))
        types = _list(record.get("source_type"))
        ids = []
        for i, ref in enumerate(refs):
            sid = by_ref.get(ref.lower())
            if sid is None:
                candidate = _normalise_source({"title": ref, "ref": ref,
                                               "source_type": types[i] if i < len(types) else (types[0] if types else None),
                                               "access_date": record.get("access_date")})
                sid = candidate["source_id"]
                new_sources.setdefault(sid, (n, candidate))
                by_ref[ref.lower()] = sid
            ids.append(sid)
        out.append((n, {"claim_key": record.get("claim_id") or record.get("claim_key"),
                        "statement": record.get("statement"), "claim_type": record.get("claim_type"),
                        "source_ids": ids, "verification_status": record.get("verification_status"),
                        "reviewer": record.get("reviewer"), "reviewed_on": record.get("review_date",
                                                                                     record.get("reviewed_on")),
                        "notes": record.get("notes")}))
    created = 0
    if new_sources:
        problems = _validate("sources", list(new_sources.values()))
        for p in problems:
            result.rejected.append(Problem(p.row, "source_type" if p.column == "source_type" else
                                           ("access_date" if p.column == "access_date" else p.column),
                                           f"new source: {p.message}"))
        bad_rows = {p.row for p in problems}
        good = [{"values": v, "row": n} for n, v in new_sources.values() if n not in bad_rows]
        if good:
            created = _save(store, actor, "sources", RowChanges(inserts=good))["inserted"]
        rejected_rows = {p.row for p in result.rejected}
        out = [(n, r) for n, r in out if n not in rejected_rows]
    return out, created


def export_sources(store: Store, *, role: str | None = None) -> pd.DataFrame:
    frame = list_sources(store, role=role)[list(SOURCE_COLUMNS)].copy()
    frame["restricted_to"] = frame["restricted_to"].map(lambda v: LIST_SEPARATOR.join(v) if v is not None else "")
    return frame


def export_claims(store: Store) -> pd.DataFrame:
    """The claims register in the template's columns (re-importable: claim_id is the stable key)."""
    frame = store.query_df("""
        WITH links AS (SELECT claim_key, unnest(source_ids) AS source_id, generate_subscripts(source_ids, 1) AS i
                       FROM register_claims WHERE NOT deleted)
        SELECT c.claim_key AS claim_id, c.statement, c.claim_type,
               string_agg(s.source_type, '; ' ORDER BY l.i) AS source_type,
               string_agg(l.source_id, '; ' ORDER BY l.i) AS source_ref,
               min(s.access_date) AS access_date,
               c.verification_status, c.reviewer, c.reviewed_on AS review_date, c.notes
        FROM register_claims c LEFT JOIN links l ON l.claim_key = c.claim_key
        LEFT JOIN sources s ON s.source_id = l.source_id
        WHERE NOT c.deleted
        GROUP BY ALL ORDER BY min(c.created_at), c.claim_key""")
    return frame[list(CLAIM_TEMPLATE_COLUMNS)]


def template(kind: str) -> pd.DataFrame:
    """An empty import template with one example row."""
    if kind == "sources":
        return pd.DataFrame([{"source_id": "nist-ai-rmf", "title": "NIST AI RMF 1.0",
                              "ref": "https://doi.org/10.6028/NIST.AI.100-1", "source_type": "official framework",
                              "authority_tier": 1, "publisher": "NIST", "access_date": "2026-07-01",
                              "valid_until": "", "superseded_by": "", "archive_url": "", "content_hash": "",
                              "restricted_to": "", "notes": ""}], columns=list(SOURCE_COLUMNS))
    return pd.DataFrame([{"claim_id": "", "statement": "TruthfulQA contains 817 questions across 38 categories.",
                          "claim_type": "benchmark property or number",
                          "source_type": "recognized conference proceedings",
                          "source_ref": "Lin et al., TruthfulQA, ACL 2022", "access_date": "",
                          "verification_status": "verified", "reviewer": "", "review_date": "", "notes": ""}],
                        columns=list(CLAIM_TEMPLATE_COLUMNS))


# --- minimum evidence rules (Table VIII) --------------------------------------------------------------


def current_rule_version(store: Store) -> int | None:
    return store.query_one("SELECT max(rule_version) FROM evidence_rule_versions")[0]


def rule_versions(store: Store) -> pd.DataFrame:
    return store.query_df("SELECT rule_version, created_at, created_by, reason FROM evidence_rule_versions "
                          "ORDER BY rule_version DESC")


def list_rules(store: Store, version: int | None = None) -> pd.DataFrame:
    version = version if version is not None else current_rule_version(store)
    return store.query_df("SELECT rule_version, claim_type, acceptable_source_types, handling, guidance "
                          "FROM evidence_rules WHERE rule_version = ? ORDER BY claim_type", [version])


def _rule_problems(rules: list[dict]) -> list[Problem]:
    problems = []
    seen = set()
    for n, r in enumerate(rules, start=1):
        if r["claim_type"] not in CLAIM_TYPES:
            problems.append(Problem(n, "claim_type", f"{r['claim_type']!r} is not one of: {', '.join(CLAIM_TYPES)}"))
        elif r["claim_type"] in seen:
            problems.append(Problem(n, "claim_type", f"{r['claim_type']} has two rules"))
        seen.add(r["claim_type"])
        if not r["acceptable_source_types"]:
            problems.append(Problem(n, "acceptable_source_types", "name at least one source type"))
        problems += [Problem(n, "acceptable_source_types", f"{t!r} is not a source type")
                     for t in r["acceptable_source_types"] if t not in SOURCE_TYPES]
        if not r["handling"]:
            problems.append(Problem(n, "handling", "name the required handling"))
        problems += [Problem(n, "handling", f"{h!r} is not one of: {', '.join(HANDLINGS)}")
                     for h in r["handling"] if h not in HANDLINGS]
    return problems


def save_rules(store: Store, actor: Actor, rules: list[dict], reason: str) -> int:
    """Write ``rules`` (claim_type, acceptable_source_types, handling, guidance) as a new version in force."""
    authorize(store, actor, Permission.RULES_EDIT, entity_type="evidence_rules")
    rules = [{"claim_type": _text(r.get("claim_type")), "acceptable_source_types": _list(r.get("acceptable_source_types")),
              "handling": _list(r.get("handling")), "guidance": _text(r.get("guidance"))} for r in rules]
    problems = _rule_problems(rules)
    if not (reason or "").strip():
        problems.append(Problem(None, "reason", "say why the rules change"))
    if problems:
        raise ValidationFailed(problems)

    def fn(cur) -> Change:
        previous = cur.execute("SELECT max(rule_version) FROM evidence_rule_versions").fetchone()[0]
        before = None
        if previous is not None:
            before = [dict(zip(("claim_type", "acceptable_source_types", "handling", "guidance"), r)) for r in cur.execute(
                "SELECT claim_type, acceptable_source_types, handling, guidance FROM evidence_rules "
                "WHERE rule_version = ? ORDER BY claim_type", [previous]).fetchall()]
        version = (previous or 0) + 1
        cur.execute("INSERT INTO evidence_rule_versions VALUES (?, ?, ?, ?)", [version, utc_now(), actor.name, reason.strip()])
        for r in rules:
            cur.execute("INSERT INTO evidence_rules VALUES (?, ?, ?, ?, ?)",
                        [version, r["claim_type"], r["acceptable_source_types"], r["handling"], r["guidance"]])
        return Change("evidence_rules", str(version), before, rules, result=version)

    return store.write(actor, "evidence_rules.publish", fn)


def ensure_default_rules(store: Store, actor: Actor) -> int:
    """The paper's Table VIII as rule version 1 when no rules exist yet."""
    version = current_rule_version(store)
    if version is not None:
        return version
    return save_rules(store, actor, [{"claim_type": t, "acceptable_source_types": list(a), "handling": list(h),
                                      "guidance": g} for t, a, h, g in PAPER_RULES],
                      "paper Table VIII (minimum evidence rules)")


def evaluate_rules(store: Store, version: int | None = None, *, today: date | None = None) -> pd.DataFrame:
    """Every register claim against the rules in force: compliant, or violation with the required handling.

    One SQL statement. A claim complies when it is withdrawn (not claimed / removed), has a linked,
    current (not expired, not superseded, not deleted) source of an acceptable type, or carries the
    verification status that shows the required handling was applied (e.g. hypothesis).
    """
    version = version if version is not None else current_rule_version(store)
    handling, status = zip(*HANDLING_STATUSES)
    return store.query_df("""
        WITH c AS (SELECT * FROM register_claims WHERE NOT deleted),
        r AS (SELECT * FROM evidence_rules WHERE rule_version = $version),
        hs AS (SELECT unnest($handling) AS handling, unnest($status) AS status),
        links AS (SELECT claim_key, unnest(source_ids) AS source_id FROM c),
        ok AS (
            SELECT l.claim_key,
                   string_agg(s.source_id, '; ' ORDER BY s.source_id) AS acceptable_sources
            FROM links l JOIN c ON c.claim_key = l.claim_key
            JOIN r ON r.claim_type = c.claim_type
            JOIN sources s ON s.source_id = l.source_id AND NOT s.deleted
                 AND list_contains(r.acceptable_source_types, s.source_type)
                 AND (s.valid_until IS NULL OR s.valid_until >= $today) AND s.superseded_by IS NULL
            GROUP BY l.claim_key),
        handled AS (
            SELECT DISTINCT c.claim_key FROM c JOIN r ON r.claim_type = c.claim_type
            JOIN hs ON list_contains(r.handling, hs.handling) AND hs.status = c.verification_status)
        SELECT c.claim_key, c.statement, c.claim_type, c.verification_status, c.source_ids,
               CASE WHEN list_contains($withdrawn, c.verification_status) OR ok.claim_key IS NOT NULL
                         OR handled.claim_key IS NOT NULL THEN 'compliant' ELSE 'violation' END AS outcome,
               CASE WHEN list_contains($withdrawn, c.verification_status) THEN 'withdrawn: ' || c.verification_status
                    WHEN ok.claim_key IS NOT NULL THEN 'acceptable source: ' || ok.acceptable_sources
                    WHEN handled.claim_key IS NOT NULL THEN 'handled: marked ' || c.verification_status
                    WHEN r.claim_type IS NULL THEN 'no rule for this claim type'
                    ELSE 'no acceptable source; needs one of: ' || array_to_string(r.acceptable_source_types, ', ')
               END AS reason,
               CASE WHEN list_contains($withdrawn, c.verification_status) OR ok.claim_key IS NOT NULL
                         OR handled.claim_key IS NOT NULL THEN NULL
                    ELSE array_to_string(r.handling, ' / ') END AS required_handling,
               r.guidance, $version AS rule_version
        FROM c LEFT JOIN r ON r.claim_type = c.claim_type
        LEFT JOIN ok ON ok.claim_key = c.claim_key
        LEFT JOIN handled ON handled.claim_key = c.claim_key
        ORDER BY outcome DESC, c.created_at, c.claim_key""",
        {"version": version, "handling": list(handling), "status": list(status), "today": today or date.today(),
         "withdrawn": list(WITHDRAWN_STATUSES)})


def canonical_rows(store: Store) -> dict:
    """The full content of both registers (deleted rows included) in a canonical, hashable form."""
    claims = store.query(f"SELECT {', '.join(CLAIM_COLUMNS)}, deleted, updated_by FROM register_claims ORDER BY claim_key")
    sources = store.query(f"SELECT {', '.join(SOURCE_COLUMNS)}, deleted, updated_by FROM sources ORDER BY source_id")
    return {"claims": [dict(zip(CLAIM_COLUMNS + ("deleted", "updated_by"), r)) for r in claims],
            "sources": [dict(zip(SOURCE_COLUMNS + ("deleted", "updated_by"), r)) for r in sources]}


def content_hash(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str, separators=(",", ":")).encode()).hexdigest()


def seed_paper_register(store: Store, actor: Actor, folder=None) -> dict:
    """The paper's Table VII (``data/demo/paper_register.csv``) and its references
    (``paper_sources.csv``) as the example register, plus Table VIII as rule version 1.
    Idempotent: skipped when the claims register has ever held a row."""
    from pathlib import Path

    folder = Path(folder) if folder else Path(__file__).resolve().parents[2] / "data" / "demo"
    ensure_default_rules(store, actor)
    if store.query_one("SELECT count(*) FROM register_claims")[0]:
        return {"skipped": True}
    out = {"skipped": False}
    for kind, name in (("sources", "paper_sources.csv"), ("claims", "paper_register.csv")):
        path = folder / name
        if path.is_file():
            result = import_register(store, actor, kind, read_upload(name, path.read_bytes()))
            out[kind] = result.inserted
            if result.rejected:
                raise RegisterError(f"{name}: " + "; ".join(str(p) for p in result.rejected))
    return out


FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def formula_escaped(frame: pd.DataFrame) -> pd.DataFrame:
    """Text cells that a spreadsheet would run as formulas get a leading apostrophe (read_upload undoes it)."""
    return frame.map(lambda v: "'" + v if isinstance(v, str) and v.startswith(FORMULA_PREFIXES) else v)
