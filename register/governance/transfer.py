"""The registers as files (sources, claims, use cases): upload, import by stable key, export, templates,
spreadsheet-safe cells.

Called by the governance pages (through ``ui.features.governance``), ``python -m register governance
import|export``, the checklist's CI gate (``checklist run --claims FILE``) and the paper register's
seeding (``register.governance.seed``). An upload is read as text cells (``read_upload``: CSV or
Excel, size and type checked); ``import_register`` writes its valid rows through the registers'
ordinary save (``register.governance.registers.save_rows``: authorized, audited, keyed by the stable
key so that re-importing updates instead of duplicating) and reports every bad row with its number
and reason. Exports are re-importable; ``formula_escaped`` guards cells a spreadsheet would run.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

import pandas as pd

from register.access.permissions import Permission, authorize
from register.db.export import escape_formulas
from register.db.store import Actor, Store
from register.errors import ImportRejected, Problem
from register.governance.registers import TABLES, RowChanges, list_sources, save_rows
from register.governance.rows import SOURCE_COLUMNS, USE_CASE_COLUMNS, list_value, normalise_source, validate
from register.governance.use_cases import list_use_cases
from register.governance.vocabulary import BENCHMARK_NUMBER, CONFERENCE, OFFICIAL_FRAMEWORK, PROPOSED, VERIFIED

__all__ = ["CLAIM_TEMPLATE_COLUMNS", "MAX_UPLOAD_BYTES", "USE_CASE_ALIASES", "ImportResult", "export_claims",
           "export_sources", "export_use_cases", "formula_escaped", "import_register", "read_upload", "template"]

# source_basis and source_locators (issue 37: Table IX items 1 and 5) may be absent: an older file still imports
CLAIM_TEMPLATE_COLUMNS = ("claim_id", "statement", "claim_type", "source_type", "source_ref", "access_date",
                          "verification_status", "reviewer", "review_date", "notes", "no_peer_reviewed_source",
                          "source_basis", "source_locators")
MAX_UPLOAD_BYTES = 5 * 1024 * 1024
LIST_SEPARATOR = ";"
# what a use-case file may call a column (the register's own names are read first)
USE_CASE_ALIASES = {
    "use_case_id": ("use_case", "id"),
    "allowed_categories": ("allowed_claim_categories", "categories"),
    "allowed_topics": ("topics",),
    "evidence_link": ("approval_evidence_link", "approval_evidence", "approval_evidence_url", "evidence_url",
                      "approval_link", "evidence"),
    "evidence_hash": ("approval_evidence_hash", "evidence_content_hash", "content_hash", "approval_hash"),
    "notes": ("note",),
}
# the columns a file must have to be imported as that register (else it is refused whole)
REQUIRED_COLUMNS = {"sources": ("title", "source_type"), "claims": ("statement", "claim_type", "verification_status"),
                    "usecases": ("use_case_id", "owner", "purpose", "status")}


@dataclass
class ImportResult:
    """What an import did: rows read, written by outcome, sources it created, and every refused row's reasons."""

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
    """Import sources, claims or use cases (``kind``) from a template-shaped frame: valid rows are written, keyed
    by the stable key (re-import updates instead of duplicating); bad rows are reported with row number and
    reason. A file without the kind's required columns is refused whole (``ImportRejected``)."""
    # the role first: a refused account learns nothing, whatever it asked for (and the refusal is audited)
    authorize(store, actor, Permission.REGISTER_EDIT, entity_type=TABLES[kind].entity if kind in TABLES else "register")
    if kind not in TABLES:
        raise ImportRejected(f"unknown register {kind!r}; one of: {', '.join(TABLES)}")
    result = ImportResult(rows=len(frame))
    if kind == "usecases":
        frame = _use_case_columns(frame)
    missing = [c for c in REQUIRED_COLUMNS[kind] if c not in frame.columns]
    if missing:
        raise ImportRejected(f"missing column(s) {', '.join(missing)}; download the template")
    records = list(enumerate(frame.to_dict("records"), start=1))
    if kind == "claims":
        records, result.sources_created = _claim_rows_with_sources(store, actor, records, result)
    table = TABLES[kind]
    candidates = [(n, table.normalise(r)) for n, r in records]
    bad = validate(kind, candidates)
    if kind == "claims":
        known = set(store.frame("SELECT source_id FROM sources WHERE NOT deleted")["source_id"])
        bad += [Problem(n, "source_ref", f"unknown source {s!r}") for n, v in candidates for s in v["source_ids"]
                if s not in known]
    seen: dict[str, int] = {}
    for n, v in candidates:
        if v[table.key] in seen:
            bad.append(Problem(n, table.key, f"same key as row {seen[v[table.key]]} ({v[table.key]})"))
        elif v[table.key]:
            seen[v[table.key]] = n
    result.rejected += bad
    bad_rows = {p.row for p in bad}
    good = [(n, v) for n, v in candidates if n not in bad_rows]
    if not good:
        return result
    existing = {key: (version, deleted) for key, version, deleted in store.query(
        f"SELECT {table.key}, row_version, deleted FROM {table.name} WHERE list_contains(?, {table.key})",
        [[v[table.key] for _, v in good]])}
    if table.guard is not None:  # what the save would refuse of one row refuses only that row
        good = _guarded(store, actor, table, good, result)
        if not good:
            return result
    changes = RowChanges()
    for n, v in good:
        key = v[table.key]
        if key in existing and not existing[key][1]:
            changes.updates.append({"key": key, "row_version": existing[key][0], "values": v, "row": n})
        else:
            changes.inserts.append({"values": v, "row": n})
    counts = save_rows(store, actor, kind, changes)
    result.inserted, result.updated, result.unchanged = counts["inserted"], counts["updated"], counts["unchanged"]
    return result


def _use_case_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """A use-case file's columns under the register's names (``USE_CASE_ALIASES``; a register name wins)."""
    renames = {}
    for name, aliases in USE_CASE_ALIASES.items():
        if name not in frame.columns:
            alias = next((a for a in aliases if a in frame.columns and a not in renames), None)
            if alias is not None:
                renames[alias] = name
    return frame.rename(columns=renames)


def _guarded(store: Store, actor: Actor, table, good: list[tuple[int, dict]],
             result: ImportResult) -> list[tuple[int, dict]]:
    """The rows of ``good`` that ``table.guard`` lets ``actor`` save over the rows as they are now; the others are
    rejected with the guard's reasons (the save checks again inside its transaction)."""
    assert table.guard is not None
    columns = ", ".join(table.columns)
    current = {row[table.key]: row for row in store.dicts(
        f"SELECT {columns} FROM {table.name} WHERE NOT deleted AND list_contains(?, {table.key})",
        [[v[table.key] for _, v in good]])}
    kept = []
    for n, values in good:
        before = current.get(values[table.key])
        if before is not None:
            before = {c: (list(v) if isinstance(v, (list, tuple)) else v) for c, v in before.items()}
        problems = table.guard(actor, n, before, values)
        result.rejected += problems
        if not problems:
            kept.append((n, values))
    return kept


def _claim_rows_with_sources(store, actor, records, result) -> tuple[list[tuple[int, dict]], int]:
    """Template rows name their sources by ``source_ref`` (an existing source id or reference); unknown
    references become new sources from the row's source_type and access_date."""
    by_ref = {}
    for sid, ref, title in store.query("SELECT source_id, ref, title FROM sources"):
        by_ref[sid.lower()] = sid
        for text in (ref, title):
            if text:
                by_ref.setdefault(text.strip().lower(), sid)
    new_sources: dict[str, tuple[int, dict]] = {}
    out = []
    for n, record in records:
        refs = list_value(record.get("source_ref"))
        types = list_value(record.get("source_type"))
        ids = []
        for i, ref in enumerate(refs):
            sid = by_ref.get(ref.lower())
            if sid is None:
                source_type = types[i] if i < len(types) else (types[0] if types else None)
                candidate = normalise_source({"title": ref, "ref": ref, "source_type": source_type,
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
                        "notes": record.get("notes"),
                        "no_peer_reviewed_source": record.get("no_peer_reviewed_source"),
                        "source_basis": record.get("source_basis"),
                        "source_locators": record.get("source_locators")}))
    created = 0
    if new_sources:
        problems = validate("sources", list(new_sources.values()))
        for p in problems:
            result.rejected.append(Problem(p.row, p.column, f"new source: {p.message}"))
        bad_rows = {p.row for p in problems}
        good = [{"values": v, "row": n} for n, v in new_sources.values() if n not in bad_rows]
        if good:
            created = save_rows(store, actor, "sources", RowChanges(inserts=good))["inserted"]
        rejected_rows = {p.row for p in result.rejected}
        out = [(n, r) for n, r in out if n not in rejected_rows]
    return out, created


def export_sources(store: Store, *, role: str | None = None) -> pd.DataFrame:
    """The source register in its import columns (lists joined with ``;``; re-importable)."""
    frame = list_sources(store, role=role)[list(SOURCE_COLUMNS)].copy()
    frame["restricted_to"] = frame["restricted_to"].map(lambda v: LIST_SEPARATOR.join(v) if v is not None else "")
    return frame


def export_use_cases(store: Store) -> pd.DataFrame:
    """The use-case register in its import columns (lists joined with ``;``, dates as YYYY-MM-DD; re-importable)."""
    frame = list_use_cases(store)[list(USE_CASE_COLUMNS)].copy()
    for column in ("allowed_categories", "allowed_topics", "requester_roles"):
        frame[column] = frame[column].map(lambda v: LIST_SEPARATOR.join(v) if v is not None else "")
    frame["review_by"] = frame["review_by"].map(lambda d: "" if d is None or d != d else str(d)[:10])
    return frame


def export_claims(store: Store) -> pd.DataFrame:
    """The claims register in the template's columns (re-importable: claim_id is the stable key)."""
    frame = store.frame("""
        WITH links AS (SELECT claim_key, unnest(source_ids) AS source_id, generate_subscripts(source_ids, 1) AS i
                       FROM register_claims WHERE NOT deleted)
        SELECT c.claim_key AS claim_id, c.statement, c.claim_type,
               string_agg(s.source_type, '; ' ORDER BY l.i) AS source_type,
               string_agg(l.source_id, '; ' ORDER BY l.i) AS source_ref,
               min(s.access_date) AS access_date,
               c.verification_status, c.reviewer, c.reviewed_on AS review_date, c.notes,
               CASE c.no_peer_reviewed_source WHEN true THEN 'yes' WHEN false THEN 'no' END AS no_peer_reviewed_source,
               c.source_basis, array_to_string(c.source_locators, ' | ') AS source_locators
        FROM register_claims c LEFT JOIN links l ON l.claim_key = c.claim_key
        LEFT JOIN sources s ON s.source_id = l.source_id
        WHERE NOT c.deleted
        GROUP BY ALL ORDER BY min(c.created_at), c.claim_key""")
    return frame[list(CLAIM_TEMPLATE_COLUMNS)]


def template(kind: str) -> pd.DataFrame:
    """An empty import template with one example row."""
    if kind == "usecases":
        return pd.DataFrame([{"use_case_id": "supplier-contracts", "owner": "Procurement lead",
                              "purpose": "Answer staff questions about supplier contract terms from the contract store",
                              "status": PROPOSED, "allowed_categories": "contractual;legal",
                              "allowed_topics": "service levels;termination",
                              "requester_roles": "buyer;contract-manager",
                              "approved_by": "", "evidence_link": "", "evidence_hash": "", "review_by": "",
                              "notes": ""}], columns=list(USE_CASE_COLUMNS))
    if kind == "sources":
        return pd.DataFrame([{"source_id": "nist-ai-rmf", "title": "NIST AI RMF 1.0",
                              "ref": "https://doi.org/10.6028/NIST.AI.100-1", "source_type": OFFICIAL_FRAMEWORK,
                              "authority_tier": 1, "publisher": "NIST", "access_date": "2026-07-01",
                              "valid_until": "", "superseded_by": "", "archive_url": "", "content_hash": "",
                              "restricted_to": "", "notes": ""}], columns=list(SOURCE_COLUMNS))
    return pd.DataFrame([{"claim_id": "", "statement": "TruthfulQA contains 817 questions across 38 categories.",
                          "claim_type": BENCHMARK_NUMBER, "source_type": CONFERENCE,
                          "source_ref": "Lin et al., TruthfulQA, ACL 2022", "access_date": "",
                          "verification_status": VERIFIED, "reviewer": "", "review_date": "", "notes": "",
                          "no_peer_reviewed_source": ""}],
                        columns=list(CLAIM_TEMPLATE_COLUMNS))


def formula_escaped(frame: pd.DataFrame) -> pd.DataFrame:
    """Text cells that a spreadsheet would run as formulas get a leading apostrophe (read_upload undoes it)."""
    return escape_formulas(frame)
