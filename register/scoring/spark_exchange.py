"""The register's side of scoring on Spark: export the data as Parquet, import the scores back.

``export_parquet`` writes the current responses and their claims (DuckDB ``COPY``, streamed to
Parquet files, one consistent snapshot) and the active profile as JSON: everything the Spark job
(``register/spark/score_job.py``) reads. ``import_scores`` brings the job's output back as one score
run of the profile version it was computed under, exactly as ``rescore`` stores its own: earlier
scores kept, the new rows current, the fired floors stored, one audit event. It fails closed: scores of
another profile than the register's version of that number, of a response that is no longer current
(the register changed since the export), duplicated, outside [0, 1] or with a band the profile does
not have, are refused whole, naming the first offending row. The mitigation columns and the decision are decided
here, in the register, under its active mitigation policy and against its source register as it stands
(``register.scoring.decision.apply_decision``, the code ``rescore`` runs): the job computes only what the scorer's
SQL computes.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from hri_core.models import ensure_utc
from register.access.permissions import Permission, authorize
from register.db.sql import file_literal
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import RegisterError
from register.readmodels.hub import ScoresWritten, scores_written
from register.scoring import publishes
from register.scoring.decision import apply_decision, authority_found
from register.scoring.mitigation import active_policy, apply_mitigation
from register.scoring.profiles import active_profile, get_profile
from register.scoring.scorer import DIM_COLUMNS, FAILURE_REPORT_LIMIT, RescoreSummary

__all__ = ["ExportSummary", "export_parquet", "import_scores", "PROFILE_FILE", "SPARK_SCOPE"]

PROFILE_FILE = "profile.json"  # the active profile, beside the data
SPARK_SCOPE = "spark"  # score_runs.scope of an imported run
FILE_SIZE = "256MB"  # Parquet files are cut at about this size: a cluster reads them in parallel

# What the export holds: every column the scorer reads and the descriptive ones, not the verbatim
# record (``raw``, the largest column) nor the revision hash. ``*`` keeps columns added by later
# migrations (a new scoring input reaches the job without touching this module).
_EXPORTS = {
    "responses": "SELECT * EXCLUDE (raw, content_hash) FROM responses WHERE is_current ORDER BY response_key",
    "claims": "SELECT * FROM claims WHERE is_current ORDER BY response_key, claim_idx",
}


@dataclass(frozen=True)
class ExportSummary:
    """What ``export_parquet`` wrote."""

    folder: Path
    responses: int
    claims: int
    profile_version: int


def export_parquet(store: Store, actor: Actor, folder: str | Path) -> ExportSummary:
    """Write ``folder/responses/``, ``folder/claims/`` (Parquet) and ``folder/profile.json`` (the active
    profile); audited as ``export.parquet``. ``folder`` must be new or empty: an export never mixes with
    (or deletes) other files. Needs ``Permission.RESCORE``: the export is the first half of a rescore (the
    job's scores come back through ``import_scores``), and it hands every current answer to another system."""
    authorize(store, actor, Permission.RESCORE, entity_type="export", entity_id=str(folder))  # before any use
    folder = Path(folder)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise RegisterError(f"{folder} exists and is not an empty folder: export into a new folder")
    profile = active_profile(store)
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)

    def fn(tx: Transaction) -> Change:
        counts = {}
        for table, select in _EXPORTS.items():  # one transaction: claims match their responses
            target = file_literal(folder / table)
            counts[table] = tx.execute(f"COPY ({select}) TO {target} (FORMAT parquet, FILE_SIZE_BYTES '{FILE_SIZE}')")
        (folder / PROFILE_FILE).write_text(json.dumps(profile.model_dump(mode="json"), indent=2) + "\n",
                                           encoding="utf-8")
        summary = ExportSummary(folder, counts["responses"] or 0, counts["claims"] or 0, profile.version)
        return Change("export", folder.name, None, {"format": "parquet", "folder": str(folder),
                                                    "responses": summary.responses, "claims": summary.claims,
                                                    "profile_version": profile.version}, result=summary)

    try:
        return store.write(actor, "export.parquet", fn)
    except BaseException:  # no half-written export is left behind (the audit event is rolled back too)
        for path in ([folder] if created else [folder / name for name in (*_EXPORTS, PROFILE_FILE)]):
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
        raise


def _parquet_files(folder: Path, name: str, *, required: bool) -> str | None:
    """The glob of a Spark output folder's Parquet files; None when it has none and may be empty. A
    folder without Spark's ``_SUCCESS`` marker is a job that did not finish: refused."""
    part = folder / name
    if not (part / "_SUCCESS").is_file():
        if required or part.exists():
            raise RegisterError(f"{part} is not a finished Spark output (no _SUCCESS file): run the job again")
        return None
    if not any(part.glob("*.parquet")):
        if required:
            raise RegisterError(f"{part} holds no Parquet file")
        return None
    return str(part / "*.parquet")


def _refuse_first(tx: Transaction, sql: str, params: dict, what: str) -> None:
    """Raise naming the first row ``sql`` returns (response_id, revision), with the count of all of them."""
    row = tx.query_one(sql, params)
    if row is not None:
        count, response_id, revision = row
        raise RegisterError(f"{count:,} imported score row(s) {what}; first: response {response_id!r} "
                            f"revision {revision}. Nothing was imported")


# what the job writes beside the dimensions (``register.spark.score_job.SCORE_COLUMNS``), stored as is
_SCORE_COLUMNS = ("hri_add", "hri", "score", "band", "action", "no_claims", "total_criticality", "floors_fired",
                  "decisive_claim_id", "decisive_rule_id", "scoring_failure", "action_floor_claim_id",
                  "action_floor_rule_id")


def import_scores(store: Store, actor: Actor, folder: str | Path) -> RescoreSummary:
    """Store the Spark job's ``folder/scores`` and ``folder/score_floors`` as one score run; its rows
    become the current scores of their responses. Needs ``Permission.RESCORE``."""
    authorize(store, actor, Permission.RESCORE, entity_type="score_run")  # before ``folder`` is used
    folder = Path(folder)
    scores_glob = _parquet_files(folder, "scores", required=True)
    floors_glob = _parquet_files(folder, "score_floors", required=False)
    src = {"scores": scores_glob}
    meta = store.query("SELECT DISTINCT profile_version, profile_fingerprint, as_of FROM read_parquet($scores)", src)
    if len(meta) != 1:
        raise RegisterError(f"{folder / 'scores'} holds {len(meta)} (profile version, fingerprint, as-of) "
                            "combinations; a score run has exactly one")
    version, fingerprint, as_of = meta[0]
    as_of = ensure_utc(as_of)  # a writer that stored a timestamp without its zone wrote UTC
    profile = get_profile(store, version)
    if profile.fingerprint() != fingerprint:
        raise RegisterError(f"the scores were computed under a profile numbered v{version} whose parameters differ "
                            f"from the register's v{version}: score with the register's profile file")
    names = (*DIM_COLUMNS.values(), *_SCORE_COLUMNS)
    columns, from_file = ", ".join(names), ", ".join(f"s.{c}" for c in names)

    def fn(tx: Transaction) -> Change:
        tx.execute("CREATE TEMP TABLE spark_scores AS SELECT * FROM read_parquet($scores)", src)
        present = {row[0] for row in tx.query("SELECT column_name FROM (DESCRIBE spark_scores)")}
        missing = [c for c in ("response_id", "revision", *DIM_COLUMNS.values(), *_SCORE_COLUMNS) if c not in present]
        if missing:
            raise RegisterError(f"{folder / 'scores'} lacks the column(s) {', '.join(missing)}: it was written by "
                                "another version of the score job; run this version's job again. Nothing was imported")
        key = "count(*) OVER (), response_id, revision"
        _refuse_first(tx, f"SELECT {key} FROM spark_scores s WHERE NOT EXISTS (SELECT 1 FROM responses r WHERE "
                          "r.is_current AND r.response_id = s.response_id AND r.revision = s.revision) "
                          "ORDER BY response_id LIMIT 1", {},
                      "score a response revision that is not current in the register (it changed since the export: "
                      "export again and rescore)")
        _refuse_first(tx, f"SELECT {key} FROM (SELECT response_id, revision FROM spark_scores GROUP BY ALL "
                          "HAVING count(*) > 1) ORDER BY response_id LIMIT 1", {}, "are duplicated")
        in_range = " AND ".join(f"{c} BETWEEN 0 AND 1" for c in (*DIM_COLUMNS.values(), "hri_add", "hri"))
        _refuse_first(tx, f"SELECT {key} FROM spark_scores WHERE NOT ({in_range} AND score BETWEEN 0 AND 100 "
                          "AND list_contains($bands, band)) IS NOT false ORDER BY response_id LIMIT 1",
                      {"bands": [b.name for b in profile.bands]},
                      "have a number outside its range or a band the profile does not have")
        run_id = tx.scalar("SELECT nextval('seq_score_run')")
        tx.execute("INSERT INTO score_runs (run_id, profile_version, as_of, started_at, actor_name, scope, "
                   "profile_fingerprint) VALUES (?, ?, ?, ?, ?, ?, ?)",
                   [run_id, version, as_of, utc_now(), actor.name, SPARK_SCOPE, fingerprint])
        # the read models follow the run (register.readmodels.hub): the current revisions it scored
        change = ScoresWritten(version, run_id, "SELECT response_key FROM scores WHERE run_id = $run", {"run": run_id})
        with scores_written(tx, change):
            tx.execute("UPDATE scores SET is_current = false WHERE is_current AND response_id IN "
                       "(SELECT response_id FROM spark_scores)")
            # each row takes its revision's integer key from the register (checked above: every row names a
            # current revision), never from the file
            count = tx.execute(
                f"INSERT INTO scores (run_id, response_id, revision, response_key, profile_version, as_of, "
                f"is_current, {columns}) SELECT $run, s.response_id, s.revision, r.response_key, s.profile_version, "
                f"s.as_of, true, {from_file} FROM spark_scores s JOIN responses r "
                "ON r.is_current AND r.response_id = s.response_id AND r.revision = s.revision "
                "ORDER BY s.response_id", {"run": run_id}) or 0
            if floors_glob is not None:
                tx.execute("INSERT INTO score_floors (run_id, response_id, revision, response_key, claim_idx, "
                           "claim_id, rule_id, label, criticality, value) SELECT $run, f.response_id, f.revision, "
                           "r.response_key, f.claim_idx, f.claim_id, f.rule_id, f.label, f.criticality, f.value "
                           "FROM read_parquet($floors) f JOIN responses r ON r.is_current "
                           "AND r.response_id = f.response_id AND r.revision = f.revision WHERE EXISTS (SELECT 1 "
                           "FROM spark_scores s WHERE s.response_id = f.response_id AND s.revision = f.revision) "
                           "ORDER BY f.response_id, f.revision, f.claim_idx", {"run": run_id, "floors": floors_glob})
            # CLAIM's Authority checks (as the register stands now, at the answers' times or the run's as-of) and
            # Mitigation step on every imported score row, under the active mitigation policy, then the decision
            # from them and the imported floors: the same code as a register score run's
            policy = active_policy(tx)
            scored = "r.response_key IN (SELECT response_key FROM scores WHERE run_id = $run)"
            with authority_found(tx, as_of, scored, {"run": run_id}) as authority:
                apply_mitigation(tx, run_id, policy, authority=authority)
                apply_decision(tx, run_id, profile, policy, authority)
            tx.execute("UPDATE score_runs SET responses_scored = ? WHERE run_id = ?", [count, run_id])
        tx.execute("DROP TABLE spark_scores")
        failed_count = tx.scalar("SELECT count(*) FROM scores WHERE run_id = ? AND scoring_failure IS NOT NULL",
                                 [run_id])
        failed = dict(tx.query("SELECT response_id, scoring_failure FROM scores WHERE run_id = ? "
                               "AND scoring_failure IS NOT NULL ORDER BY response_id LIMIT ?",
                               [run_id, FAILURE_REPORT_LIMIT])) if failed_count else {}
        summary = RescoreSummary(run_id, version, as_of, count, failed, failed_count)
        after = {"profile_version": version, "as_of": as_of.isoformat(), "scope": SPARK_SCOPE,
                 "responses_scored": count, "source": str(folder)}
        if failed_count:
            after.update(scoring_failures=failed_count, failed_responses=failed)
        # a run that scored every current response under the published version is that publish's second step
        every_one = not tx.scalar("SELECT EXISTS (SELECT 1 FROM responses r WHERE r.is_current AND r.response_key "
                                  "NOT IN (SELECT response_key FROM scores WHERE run_id = ?))", [run_id])
        if every_one and publishes.complete(tx, version, fingerprint, run_id):
            after["completes_publish_of_version"] = version
        return Change("score_run", str(run_id), None, after, result=summary)

    return store.write(actor, "scores.import", fn)
