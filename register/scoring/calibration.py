"""Known outcomes for calibrating the HRI: review decisions, imported outcomes, and band suggestions.

Called by the calibration page (through ``ui`` helpers) and by scripts. Outcomes come from the review
queue (view ``known_outcomes``, migration 002) and from CSV files of ``response_id,outcome`` brought
from audits, incidents or adjudications (tables ``outcome_imports`` / ``imported_outcomes``,
migration 005). Each current response counts once, with its most recent outcome, against its current
score. The ROC / PR / cost math is ``hri_core.calibration``; a band suggestion becomes a draft
profile with the calibration record attached.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field

import pandas as pd

from hri_core import calibration, profile_from_dict
from register.access.permissions import Permission, authorize
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import ImportRejected
from register.scoring.profiles import active_profile, insert_profile

__all__ = ["MAX_OUTCOME_BYTES", "OUTCOME_VALUES", "OutcomeImportReport", "import_outcomes_csv", "outcome_pairs",
           "save_band_suggestion"]

MAX_OUTCOME_BYTES = 5_000_000
# what a CSV may say in its outcome column, and what it means
OUTCOME_VALUES = {"bad": "bad", "good": "good", "1": "bad", "0": "good", "true": "bad", "false": "good"}
SOURCES = ("review", "import")


@dataclass(frozen=True)
class OutcomeImportReport:
    import_id: int
    rows_total: int
    accepted: int
    problems: list[dict] = field(default_factory=list)  # [{"row", "field", "message"}]

    @property
    def rejected(self) -> int:
        return len({p["row"] for p in self.problems if p["row"] is not None})


def _parse(content: bytes, source_name: str) -> tuple[list[tuple[int, str, str]], list[dict], int]:
    if not source_name.lower().endswith(".csv"):
        raise ImportRejected(f"{source_name}: expected a .csv file of response_id,outcome")
    if len(content) > MAX_OUTCOME_BYTES:
        raise ImportRejected(f"{source_name}: {len(content):,} bytes is larger than the limit of "
                             f"{MAX_OUTCOME_BYTES:,} bytes; split the file")
    if b"\x00" in content[:8192]:
        raise ImportRejected(f"{source_name}: this is not a text CSV file")
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ImportRejected(f"{source_name}: not UTF-8 text ({error.reason} at byte {error.start})") from error
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    columns = [c.strip().lower() for c in header or []]
    if "response_id" not in columns or "outcome" not in columns:
        raise ImportRejected(f"{source_name}: the first line must name the columns response_id and outcome, "
                             f"got {', '.join(columns) or 'nothing'}")
    rid_at, out_at = columns.index("response_id"), columns.index("outcome")
    rows, problems, total = [], [], 0
    for number, row in enumerate(reader, start=1):
        if not any(cell.strip() for cell in row):
            continue
        total += 1
        rid = row[rid_at].strip() if rid_at < len(row) else ""
        raw = row[out_at].strip().lower() if out_at < len(row) else ""
        ok = True
        if not rid:
            problems.append({"row": number, "field": "response_id", "message": "empty"})
            ok = False
        if raw not in OUTCOME_VALUES:
            problems.append({"row": number, "field": "outcome",
                             "message": f"{raw!r} is not an outcome; use bad or good (or 1 / 0)"})
            ok = False
        if ok:
            rows.append((number, rid, OUTCOME_VALUES[raw]))
    return rows, problems, total


def import_outcomes_csv(store: Store, actor: Actor, content: bytes, source_name: str) -> OutcomeImportReport:
    """Store the valid rows of a ``response_id,outcome`` CSV; report every bad row with its number.

    A whole file is refused (``ImportRejected``) only when it is not a UTF-8 CSV with those columns or
    exceeds ``MAX_OUTCOME_BYTES``; otherwise every valid row is kept, and rows naming an unknown
    response, an empty id or an unknown outcome are reported (row 1 = the first line after the header).
    """
    authorize(store, actor, Permission.IMPORT, entity_type="outcome_import")
    rows, problems, total = _parse(content, source_name)

    def fn(tx: Transaction) -> Change:
        known = {rid for (rid,) in tx.query(
            "SELECT DISTINCT response_id FROM responses WHERE response_id IN (SELECT unnest(?))",
            [[rid for _, rid, _ in rows]])} if rows else set()
        keep = [(n, rid, o) for n, rid, o in rows if rid in known]
        found = problems + [{"row": n, "field": "response_id", "message": f"no response {rid!r} in the register"}
                            for n, rid, _ in rows if rid not in known]
        found.sort(key=lambda p: (p["row"], p["field"]))
        import_id = tx.scalar("SELECT nextval('seq_outcome_import')")
        tx.execute("INSERT INTO outcome_imports VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [import_id, source_name, utc_now(), actor.name, total, len(keep),
                    len({p["row"] for p in found}), json.dumps(found)])
        if keep:
            tx.executemany("INSERT INTO imported_outcomes VALUES (?, ?, ?, ?)",
                           [[import_id, n, rid, o] for n, rid, o in keep])
        report = OutcomeImportReport(import_id, total, len(keep), found)
        return Change("outcome_import", str(import_id), None,
                      {"source_name": source_name, "rows": total, "accepted": len(keep),
                       "rejected": report.rejected}, result=report)

    return store.write(actor, "outcomes.import", fn)


def outcome_pairs(store: Store, sources: tuple[str, ...] = SOURCES) -> pd.DataFrame:
    """One row per current response with a known outcome: response_id, score, bad, source.

    The most recent outcome of a response wins (a review decision on its current revision, or an
    imported outcome); its current score is the one compared.
    """
    parts = []
    if "review" in sources:
        parts.append("SELECT k.response_id, k.outcome, 'review' AS source, k.decided_at AS seen_at "
                     "FROM known_outcomes k "
                     "JOIN responses r ON r.response_id = k.response_id AND r.revision = k.revision AND r.is_current")
    if "import" in sources:
        parts.append("SELECT o.response_id, o.outcome, 'import' AS source, i.imported_at AS seen_at "
                     "FROM imported_outcomes o JOIN outcome_imports i USING (import_id)")
    if not parts:
        return pd.DataFrame({"response_id": [], "score": [], "bad": [], "source": []})
    return store.frame(f"""
        WITH o AS ({' UNION ALL '.join(parts)}),
        latest AS (SELECT response_id, arg_max(outcome, seen_at) AS outcome, arg_max(source, seen_at) AS source
                   FROM o GROUP BY response_id)
        SELECT l.response_id, s.score, l.outcome = 'bad' AS bad, l.source
        FROM latest l JOIN scores s ON s.response_id = l.response_id AND s.is_current
        ORDER BY l.response_id""")


def save_band_suggestion(store: Store, actor: Actor, pairs, cost_miss: float, cost_review: float, *,
                         name: str | None = None) -> tuple[int, int]:
    """Suggested bands (``hri_core.calibration.suggest_bands``) over the active profile become a draft,
    with the calibration record (costs, threshold, AUC, counts) attached. Returns
    ``(profile_version, elicitation_id)``."""
    authorize(store, actor, Permission.PROFILE_EDIT, entity_type="scoring_profile")
    base = active_profile(store)
    pairs = list(pairs)
    suggestion = calibration.suggest_bands(pairs, cost_miss, cost_review, base)
    profile = profile_from_dict(suggestion, base=base)
    profile = profile.model_copy(update={"name": name or f"{base.name}+calibrated"})
    best = calibration.cost_optimal_threshold(pairs, cost_miss, cost_review)
    record = {"method": "calibration", "cost_miss": cost_miss, "cost_review": cost_review,
              "threshold": best.threshold, "best": best.best.to_dict(), "auc": calibration.roc_auc(pairs),
              "outcomes": len(pairs), "bad": sum(1 for _, b in pairs if b), "bands": suggestion["bands"],
              "date": utc_now().date().isoformat(), "based_on": base.version}

    def fn(tx: Transaction) -> Change:
        version = insert_profile(tx, profile, "draft", actor, base.version, None)
        elicitation_id = tx.scalar("SELECT nextval('seq_elicitation')")
        tx.execute("INSERT INTO elicitations VALUES (?, 'calibration', ?, ?, ?, ?)",
                   [elicitation_id, version, json.dumps({**record, "profile_version": version}), utc_now(),
                    actor.name])
        return Change("scoring_profile", str(version), None,
                      {"status": "draft", "params": profile.to_dict(), "elicitation_id": elicitation_id,
                       "method": "calibration"}, result=(version, elicitation_id))

    return store.write(actor, "profile.create_draft", fn)
