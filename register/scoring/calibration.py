"""Known outcomes for calibrating the HRI, with their kind; random audit samples; band suggestions.

Called by the calibration page (through ``ui`` helpers) and by scripts. An outcome says whether an answer
was bad, and what kind of knowledge says so (``OUTCOME_KINDS``):

- review decisions (view ``known_outcomes``, migrations 002 / 014): block and send back are bad, release
  and release with caution good; an escalation passes the answer on without judging it and is no
  outcome. A decision on a revision drawn into an audit sample is an *audit finding*, any other a
  *review decision*;
- validated feedback (``feedback_items``): a problem confirmed by a second person is a bad outcome of the
  revision it was reported on, a *confirmed correction*;
- CSV files of ``response_id,outcome[,kind]`` brought from incidents, audits or adjudications
  (``outcome_imports`` / ``imported_outcomes``), each row with its kind.

Each response counts once, with its most recent outcome, against a score: the score of the revision the
outcome is about (the current one for decisions and imports, the reported one for feedback, whose own
validation raised the score since). Review queues only see answers scored high, so ``draw_audit_sample``
draws a random sample of released answers (actions release and caution) for reviewers: their decisions
are outcomes across the whole score range. The ROC / PR / cost math is ``hri_core.calibration``; a band
suggestion becomes a draft profile with the calibration record attached.
"""

from __future__ import annotations

import csv
import io
import json
import secrets
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from hri_core import ScoringProfile, calibration, profile_from_dict
from hri_core.profile import RELEASED_ACTIONS  # the population of an audit sample
from register.access.permissions import Permission, authorize
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import ImportRejected, InvalidDecision
from register.scoring.profiles import active_profile, insert_profile

__all__ = ["IMPORTABLE_KINDS", "MAX_AUDIT_SAMPLE", "MAX_OUTCOME_BYTES", "OUTCOME_KINDS", "OUTCOME_VALUES",
           "RELEASED_ACTIONS", "SOURCES", "OutcomeImportReport", "audit_sample_items", "draw_audit_sample",
           "import_outcomes_csv", "latest_outcomes_select", "outcome_coverage", "outcome_pairs", "save_band_suggestion"]

MAX_OUTCOME_BYTES = 5_000_000
# what a CSV may say in its outcome column, and what it means
OUTCOME_VALUES = {"bad": "bad", "good": "good", "1": "bad", "0": "good", "true": "bad", "false": "good"}
# where outcomes come from: review decisions, validated feedback, imported files
SOURCES = ("review", "feedback", "import")
# what kind of knowledge an outcome is, in words
OUTCOME_KINDS = {
    "confirmed_correction": "Confirmed correction (validated feedback)",
    "audit_finding": "Audit finding",
    "incident": "Incident",
    "expert_adjudication": "Expert adjudication",
    "review_decision": "Review decision",
    "unspecified": "Imported before kinds were recorded",
}
# the kinds an imported file may carry (review decisions and audit findings of the queue come from the register)
IMPORTABLE_KINDS = ("incident", "audit_finding", "expert_adjudication", "confirmed_correction")
MAX_AUDIT_SAMPLE = 1_000


@dataclass(frozen=True)
class OutcomeImportReport:
    import_id: int
    rows_total: int
    accepted: int
    problems: list[dict] = field(default_factory=list)  # [{"row", "field", "message"}]

    @property
    def rejected(self) -> int:
        return len({p["row"] for p in self.problems if p["row"] is not None})


def _parse(content: bytes, source_name: str,
           kind: str | None) -> tuple[list[tuple[int, str, str, str]], list[dict], int]:
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
    kind_at = columns.index("kind") if "kind" in columns else None
    if kind_at is None and kind is None:
        raise ImportRejected(f"{source_name}: say what kind of outcomes these are: a kind column, or one kind for "
                             f"the whole file ({', '.join(IMPORTABLE_KINDS)})")
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
        row_kind = row[kind_at].strip().lower() if kind_at is not None and kind_at < len(row) else ""
        row_kind = row_kind or kind or ""
        if row_kind not in IMPORTABLE_KINDS:
            problems.append({"row": number, "field": "kind",
                             "message": f"{row_kind!r} is not an outcome kind; use one of {', '.join(IMPORTABLE_KINDS)}"
                             if row_kind else "empty, and no kind was given for the whole file"})
            ok = False
        if ok:
            rows.append((number, rid, OUTCOME_VALUES[raw], row_kind))
    return rows, problems, total


def import_outcomes_csv(store: Store, actor: Actor, content: bytes, source_name: str, *,
                        kind: str | None = None) -> OutcomeImportReport:
    """Store the valid rows of a ``response_id,outcome[,kind]`` CSV; report every bad row with its number.

    ``kind`` (one of ``IMPORTABLE_KINDS``) is the kind of every row whose ``kind`` cell is empty or absent;
    a file with neither is refused.

    A whole file is refused (``ImportRejected``) only when it is not a UTF-8 CSV with those columns or
    exceeds ``MAX_OUTCOME_BYTES``; otherwise every valid row is kept, and rows naming an unknown
    response, an empty id or an unknown outcome are reported (row 1 = the first line after the header).
    """
    authorize(store, actor, Permission.IMPORT, entity_type="outcome_import")
    if kind is not None and kind not in IMPORTABLE_KINDS:
        raise ImportRejected(f"{source_name}: {kind!r} is not an outcome kind; use one of "
                             f"{', '.join(IMPORTABLE_KINDS)}")
    rows, problems, total = _parse(content, source_name, kind)

    def fn(tx: Transaction) -> Change:
        known = {rid for (rid,) in tx.query(
            "SELECT DISTINCT response_id FROM responses WHERE response_id IN (SELECT unnest(?))",
            [[rid for _, rid, _, _ in rows]])} if rows else set()
        keep = [row for row in rows if row[1] in known]
        found = problems + [{"row": n, "field": "response_id", "message": f"no response {rid!r} in the register"}
                            for n, rid, _, _ in rows if rid not in known]
        found.sort(key=lambda p: (p["row"], p["field"]))
        import_id = tx.scalar("SELECT nextval('seq_outcome_import')")
        tx.execute("INSERT INTO outcome_imports VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [import_id, source_name, utc_now(), actor.name, total, len(keep),
                    len({p["row"] for p in found}), json.dumps(found)])
        if keep:
            tx.executemany("INSERT INTO imported_outcomes (import_id, row_number, response_id, outcome, kind) "
                           "VALUES (?, ?, ?, ?, ?)", [[import_id, n, rid, o, k] for n, rid, o, k in keep])
        report = OutcomeImportReport(import_id, total, len(keep), found)
        return Change("outcome_import", str(import_id), None,
                      {"source_name": source_name, "rows": total, "accepted": len(keep),
                       "rejected": report.rejected, "kinds": sorted({k for *_, k in keep})}, result=report)

    return store.write(actor, "outcomes.import", fn)


def latest_outcomes_select(sources: tuple[str, ...] = SOURCES) -> str:
    """SELECT of each response's most recent known outcome from ``sources`` (of ``SOURCES``): response_id,
    revision (the one the outcome is about), outcome ('bad' or 'good'), kind, source, seen_at. The one
    definition of which outcomes the register knows, read by ``outcome_pairs`` and by the outcome fit
    (``register.scoring.register_outcomes``). At least one source must be named."""
    parts = []
    if "review" in sources:
        parts.append("SELECT k.response_id, k.revision, k.outcome, k.kind, 'review' AS source, k.decided_at AS seen_at "
                     "FROM known_outcomes k "
                     "JOIN responses r ON r.response_id = k.response_id AND r.revision = k.revision AND r.is_current")
    if "feedback" in sources:
        parts.append("SELECT response_id, revision, 'bad' AS outcome, 'confirmed_correction' AS kind, "
                     "'feedback' AS source, validated_at AS seen_at FROM feedback_items "
                     "WHERE state IN ('validated', 'resolved')")
    if "import" in sources:
        parts.append("SELECT o.response_id, r.revision, o.outcome, coalesce(o.kind, 'unspecified') AS kind, "
                     "'import' AS source, i.imported_at AS seen_at "
                     "FROM imported_outcomes o JOIN outcome_imports i USING (import_id) "
                     "JOIN responses r ON r.response_id = o.response_id AND r.is_current")
    if not parts:
        raise ValueError(f"no outcome source among {sources!r}; name one of {', '.join(SOURCES)}")
    return (f"SELECT * FROM ({' UNION ALL '.join(parts)}) "
            "QUALIFY row_number() OVER (PARTITION BY response_id ORDER BY seen_at DESC) = 1")


def outcome_pairs(store: Store, sources: tuple[str, ...] = SOURCES) -> pd.DataFrame:
    """One row per response with a known outcome: response_id, revision, score, bad, source, kind.

    The most recent outcome of a response wins; the score is that of the revision the outcome is about
    (its latest score run): the current revision for review decisions and imports, the reported revision
    for validated feedback.
    """
    if not set(sources) & set(SOURCES):
        return pd.DataFrame({"response_id": [], "revision": [], "score": [], "bad": [], "source": [], "kind": []})
    return store.frame(f"""
        WITH latest AS ({latest_outcomes_select(sources)}),
        scored AS (SELECT l.response_id, l.revision, s.score, l.outcome = 'bad' AS bad, l.source, l.kind
                   FROM latest l JOIN scores s ON s.response_id = l.response_id AND s.revision = l.revision
                   QUALIFY row_number() OVER (PARTITION BY l.response_id ORDER BY s.run_id DESC) = 1)
        SELECT * FROM scored ORDER BY response_id""")


def outcome_coverage(frame: pd.DataFrame, profile: ScoringProfile) -> pd.DataFrame:
    """How many outcomes of each kind fall in each band of ``profile`` (what a calibration rests on).

    One row per kind present (then ``all``), one column per band named ``"<band> (lower-upper]"``, then
    ``outcomes`` and ``bad``. Scores are banded like ``ScoringProfile.band_for`` (inclusive upper bounds
    at 9 decimals).
    """
    uppers = np.array([b.upper for b in profile.bands], dtype=float)
    lowers = [0.0, *uppers[:-1]]
    names = [f"{b.name} ({lo:g}-{b.upper:g}]" for b, lo in zip(profile.bands, lowers, strict=True)]
    if frame.empty:
        return pd.DataFrame(columns=["kind", *names, "outcomes", "bad"])
    at = np.minimum(np.searchsorted(uppers, frame["score"].astype(float).round(9).to_numpy(), side="left"),
                    len(uppers) - 1)
    banded = pd.DataFrame({"kind": frame["kind"].to_numpy(), "band": np.array(names)[at],
                           "bad": frame["bad"].astype(bool).to_numpy()})
    table = pd.crosstab(banded["kind"], banded["band"]).reindex(columns=names, fill_value=0)
    table["outcomes"] = table[names].sum(axis=1)
    table["bad"] = banded.groupby("kind")["bad"].sum().reindex(table.index).astype(int)
    order = [k for k in OUTCOME_KINDS if k in table.index]
    table = table.loc[order]
    table.loc["all"] = table.sum(axis=0)
    return table.reset_index().rename(columns={"index": "kind"}).rename_axis(columns=None)


def draw_audit_sample(store: Store, actor: Actor, size: int, *, seed: int | None = None) -> int:
    """Draw a random sample of released answers for review; returns the sample id.

    The population: current responses whose current score's action is released (``RELEASED_ACTIONS``),
    with claims, scored without failure, not decided and not in an earlier sample. ``size`` of them are
    drawn uniformly (ordered by a hash of the response id and ``seed``; a random seed unless given, and
    recorded, so a draw can be repeated). Reviewers' decisions on them are audit findings.
    """
    authorize(store, actor, Permission.REVIEW_DECIDE, entity_type="audit_sample")
    if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= MAX_AUDIT_SAMPLE:
        raise InvalidDecision("size", f"must be a whole number from 1 to {MAX_AUDIT_SAMPLE:,}, got {size!r}")
    seed = secrets.randbits(31) if seed is None else int(seed)
    population_sql = """
        FROM scores s
        WHERE s.is_current AND list_contains(?, s.action) AND NOT s.no_claims AND s.scoring_failure IS NULL
          AND NOT EXISTS (SELECT 1 FROM review_decisions d WHERE d.response_id = s.response_id
                          AND d.revision = s.revision)
          AND NOT EXISTS (SELECT 1 FROM audit_sample_items a WHERE a.response_id = s.response_id
                          AND a.revision = s.revision)"""

    def fn(tx: Transaction) -> Change:
        population = tx.scalar(f"SELECT count(*) {population_sql}", [list(RELEASED_ACTIONS)])
        sample_id = tx.scalar("SELECT nextval('seq_audit_sample')")
        tx.execute("INSERT INTO audit_samples VALUES (?, ?, ?, ?, ?, ?, ?)",
                   [sample_id, utc_now(), actor.name, list(RELEASED_ACTIONS), size, population, seed])
        drawn = tx.execute(
            f"INSERT INTO audit_sample_items SELECT ?, s.response_id, s.revision, s.score, s.band, s.action "
            f"{population_sql} ORDER BY hash(s.response_id || '|' || ?::VARCHAR), s.response_id LIMIT ?",
            [sample_id, list(RELEASED_ACTIONS), str(seed), size])
        return Change("audit_sample", str(sample_id), None,
                      {"requested": size, "drawn": drawn, "population": population, "seed": seed,
                       "actions": list(RELEASED_ACTIONS)}, result=sample_id)

    return store.write(actor, "calibration.audit_sample", fn)


def audit_sample_items(store: Store, *, undecided_only: bool = False) -> pd.DataFrame:
    """Sampled answers, newest sample first: sample_id, response_id, revision, score, band, action (when drawn),
    decision / decided_by (None until reviewed), current (whether the sampled revision is still current)."""
    return store.frame(f"""
        SELECT a.sample_id, a.response_id, a.revision, a.score, a.band, a.action, d.decision, d.decided_by,
               coalesce(r.is_current, false) AS current
        FROM audit_sample_items a
        LEFT JOIN review_decisions d ON d.response_id = a.response_id AND d.revision = a.revision
        LEFT JOIN responses r ON r.response_id = a.response_id AND r.revision = a.revision
        {"WHERE d.decision IS NULL" if undecided_only else ""}
        ORDER BY a.sample_id DESC, a.score DESC, a.response_id""")


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
