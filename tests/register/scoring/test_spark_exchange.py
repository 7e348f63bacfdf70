"""The register's side of scoring on Spark, without a JVM: the Spark spelling of the scorer's SQL, the
Parquet export, and the checks ``import_scores`` makes before it writes anything.
(The Spark job itself runs in tests/register/spark.)"""

from __future__ import annotations

import json
import re
from datetime import timedelta

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings

from register import SYSTEM
from register.errors import PermissionDenied, RegisterError
from register.scoring.scorer import DUCKDB, SPARK, fired_floors_query, score_query
from register.scoring.spark_exchange import PROFILE_FILE, export_parquet, import_scores
from tests.helpers.actors import ANN, REVIEWER
from tests.helpers.parity import load
from tests.helpers.spark_output import job_output
from tests.helpers.strategies import AS_OF, profiles

VIEWER_ROLE = "viewer"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(profile=profiles())
def test_the_spark_spelling_uses_no_duckdb_only_construct(profile):
    """What Spark cannot parse never reaches it: DuckDB casts, $ markers, epoch_us, arg_max, //, list
    subscripts, TIMESTAMPTZ and VARCHAR types, a one-argument greatest. Both spellings bind the same values."""
    for query in (score_query, fired_floors_query):
        spark_sql, spark_params = query(profile, AS_OF, dialect=SPARK)
        duck_sql, duck_params = query(profile, AS_OF, dialect=DUCKDB)
        assert spark_params == duck_params
        assert set(re.findall(r":(p\d+)\b", spark_sql)) == set(spark_params)
        for construct in ("::", "$p", "epoch_us", "arg_max", "//", "list_position", "TIMESTAMPTZ", "VARCHAR", "["):
            assert construct not in spark_sql, construct
        for args in re.findall(r"greatest\(((?:[^()]|\([^()]*\))*)\)", spark_sql):
            assert "," in args, args
    assert score_query(profile, AS_OF) == score_query(profile, AS_OF, dialect=DUCKDB)


def test_export_writes_current_responses_claims_and_the_active_profile(store, tmp_path):
    load(store, [{"response_id": "a", "claims": [{"claim_id": "a1", "labels": ["CONTRADICTED"], "criticality": 2}]},
                 {"response_id": "b", "claims": []}])
    load(store, [{"response_id": "a", "claims": [{"claim_id": "a1", "labels": ["SUPPORTED"], "criticality": 2}]}])
    summary = export_parquet(store, ANN, tmp_path / "out")
    assert (summary.responses, summary.claims, summary.profile_version) == (2, 1, 1)
    con = duckdb.connect()
    rows = con.execute("SELECT response_id, revision, is_current FROM read_parquet(?) ORDER BY 1",
                       [str(tmp_path / "out" / "responses" / "*.parquet")]).fetchall()
    assert rows == [("a", 2, True), ("b", 1, True)]
    claims = con.execute("SELECT claim_id, revision, labels FROM read_parquet(?)",
                         [str(tmp_path / "out" / "claims" / "*.parquet")]).fetchall()
    assert claims == [("a1", 2, ["SUPPORTED"])]
    columns = [c for (c,) in con.execute("SELECT name FROM parquet_schema(?)",
                                         [str(tmp_path / "out" / "responses" / "*.parquet")]).fetchall()]
    assert "raw" not in columns and "response_key" in columns
    assert json.loads((tmp_path / "out" / PROFILE_FILE).read_text(encoding="utf-8"))["version"] == 1
    (action, actor, after), = store.query("SELECT action, actor_name, after FROM audit_events "
                                          "WHERE action = 'export.parquet'")
    assert actor == ANN.name and json.loads(after)["responses"] == 2


def test_export_refuses_a_folder_that_holds_files(store, tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(RegisterError, match="not an empty folder"):
        export_parquet(store, SYSTEM, tmp_path / "out")
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["notes.txt"]
    assert store.scalar("SELECT count(*) FROM audit_events WHERE action = 'export.parquet'") == 0


def test_export_and_import_need_the_rescore_permission(store, tmp_path):
    from register import Actor

    for command in (import_scores, export_parquet):
        with pytest.raises(PermissionDenied):
            command(store, Actor("Vera Viewer", VIEWER_ROLE), tmp_path / "out")
        with pytest.raises(PermissionDenied):
            command(store, REVIEWER, tmp_path / "out")
    assert store.scalar("SELECT count(*) FROM audit_events WHERE action = 'denied'") == 4
    assert not (tmp_path / "out").exists()


def test_import_refuses_an_unfinished_job_output(store, tmp_path):
    (tmp_path / "scores").mkdir()
    (tmp_path / "scores" / "part-0.parquet").write_bytes(b"half")
    with pytest.raises(RegisterError, match="not a finished Spark output"):
        import_scores(store, SYSTEM, tmp_path)
    assert store.scalar("SELECT count(*) FROM score_runs") == 0


# --- import_scores on an output shaped like the job's (written here by DuckDB: no JVM) ---------------

RECORD = {"response_id": "r-1", "claims": [{"claim_id": "c-1", "labels": ["CONTRADICTED"], "criticality": 3}]}


def test_import_stores_the_job_output_as_a_score_run(store, tmp_path):
    from register.scoring.profiles import active_profile

    load(store, [RECORD])
    job_output(store, active_profile(store), tmp_path / "scored")
    summary = import_scores(store, SYSTEM, tmp_path / "scored")
    assert (summary.responses_scored, summary.profile_version, summary.as_of) == (1, 1, AS_OF)
    assert store.query("SELECT run_id, hri, band, decisive_rule_id, is_current FROM scores") == [
        (summary.run_id, pytest.approx(0.7), "High", "contradicted-high", True)]
    assert store.query("SELECT run_id, claim_id, rule_id FROM score_floors") == [
        (summary.run_id, "c-1", "contradicted-high")]
    assert store.scalar("SELECT scope FROM score_runs") == "spark"
    assert store.scalar("SELECT count(*) FROM audit_events WHERE action = 'scores.import'") == 1


def test_import_refuses_scores_of_another_profile_or_of_a_changed_register(store, tmp_path):
    """Scores computed under parameters other than the register's version of that number, or of a
    response revised after the export, are refused whole: no score run, no score row."""
    from register.scoring.profiles import active_profile

    load(store, [RECORD])
    profile = active_profile(store)
    job_output(store, profile, tmp_path / "other", fingerprint="0" * 64)
    job_output(store, profile, tmp_path / "scored")
    with pytest.raises(RegisterError, match="whose parameters differ from the register's v1"):
        import_scores(store, SYSTEM, tmp_path / "other")
    load(store, [{**RECORD, "claims": [{**RECORD["claims"][0], "criticality": 4}]}])  # revision 2
    with pytest.raises(RegisterError, match=r"not current in the register.*'r-1' revision 1"):
        import_scores(store, SYSTEM, tmp_path / "scored")
    assert store.query("SELECT (SELECT count(*) FROM score_runs), (SELECT count(*) FROM scores)") == [(0, 0)]


def test_a_failed_export_leaves_no_files_and_no_audit_event(store, tmp_path, monkeypatch):
    from register.scoring import spark_exchange

    load(store, [RECORD])
    monkeypatch.setitem(spark_exchange._EXPORTS, "claims", "SELECT * FROM no_such_table")
    with pytest.raises(RegisterError):
        export_parquet(store, SYSTEM, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert store.scalar("SELECT count(*) FROM audit_events WHERE action = 'export.parquet'") == 0


def test_an_imported_run_stores_what_a_rescore_stores_floor_actions_and_mitigation_included(store, tmp_path):
    """The job's rows carry the floors' minimum actions (``action_floor_*``); ``import_scores`` decides the
    mitigation columns in the register: the imported rows equal a rescore's under the same profile and time,
    column for column."""
    from register.scoring.profiles import ensure_review_floors_profile, get_profile
    from register.scoring.scorer import rescore

    medium = {"response_id": "r-2", "claims": [{"claim_id": "c-2", "labels": ["CONTRADICTED"], "criticality": 2}]}
    # validated negative feedback dated after the job's as-of time: decided in the register, at least review
    late = {"response_id": "r-4", "stakes": "low", "claims": [
        {"claim_id": "c-4", "labels": ["VALIDATED_NEGATIVE_FEEDBACK"], "feedback_count": 1, "feedback_resolved": True,
         "feedback_at": (AS_OF + timedelta(days=1)).isoformat()}]}
    load(store, [RECORD, medium, {"response_id": "r-3", "claims": []}, late])
    profile = get_profile(store, ensure_review_floors_profile(store, ANN))  # a floor's min_action: review
    job_output(store, profile, tmp_path / "scored")
    imported = import_scores(store, ANN, tmp_path / "scored")
    rescored = rescore(store, ANN, profile, as_of=AS_OF)
    # the lens columns: a Spark job's rows leave them NULL (migration 055: every step, no human review), a rescore's
    # name the steps it ran
    lens = ("lens_version", "claim_steps", "human_review")
    columns = ", ".join(c for (c,) in store.query("SELECT column_name FROM (DESCRIBE scores)")
                        if c not in ("run_id", "is_current", *lens))
    assert store.query("SELECT DISTINCT lens_version, claim_steps, human_review FROM scores WHERE run_id = ?",
                       [imported.run_id]) == [(None, None, None)]

    def rows(run_id: int) -> list[tuple]:
        return store.query(f"SELECT {columns} FROM scores WHERE run_id = ? ORDER BY response_id", [run_id])

    assert len(rows(imported.run_id)) == 4 and rows(imported.run_id) == rows(rescored.run_id)
    action, decision, reasons = store.query("SELECT action, decision, decision_reasons FROM scores WHERE run_id = ? "
                                            "AND response_id = 'r-4'", [imported.run_id])[0]
    assert (action, decision) == ("release", "review")
    assert "claim c-4 carries validated negative feedback dated after the as-of time: at least review" in reasons

    def floors(run_id: int) -> list[tuple]:  # every column, the revision's integer key included
        return store.query("SELECT * EXCLUDE (run_id) FROM score_floors WHERE run_id = ? ORDER BY ALL", [run_id])

    assert floors(imported.run_id) and floors(imported.run_id) == floors(rescored.run_id)
    assert store.query("SELECT band, action, action_floor_claim_id, action_floor_rule_id FROM scores "
                       "WHERE run_id = ? AND response_id = 'r-2'", [imported.run_id]) == [
        ("Medium", "review", "c-2", "contradicted-medium")]
    assert store.scalar("SELECT count(*) FROM scores WHERE run_id = ? AND mitigation_action IS NOT NULL "
                        "AND mitigation_policy_version IS NOT NULL", [imported.run_id]) == 4


def test_import_refuses_an_output_without_the_floor_action_columns(store, tmp_path):
    """An output of an older job (no ``action_floor_*`` columns) is refused naming them, nothing written."""
    from register.scoring.profiles import active_profile

    load(store, [RECORD])
    job_output(store, active_profile(store), tmp_path / "scored")
    part = str(tmp_path / "scored" / "scores" / "part-00000.parquet")
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT * EXCLUDE (action_floor_claim_id, action_floor_rule_id) FROM read_parquet(?)",
                [part])
    con.execute(f"COPY t TO '{part}' (FORMAT parquet)")
    with pytest.raises(RegisterError, match="lacks the column.*action_floor_claim_id, action_floor_rule_id"):
        import_scores(store, SYSTEM, tmp_path / "scored")
    assert store.query("SELECT (SELECT count(*) FROM score_runs), (SELECT count(*) FROM scores)") == [(0, 0)]


def test_an_imported_run_holds_the_answers_the_scope_check_holds_as_a_rescore_does(store, tmp_path):
    """The Scope check decides the Spark job's rows at import, as a score run of the register decides them: an
    answer of a suspended use case and one of a use case the register does not know (while it approves one) are
    decided review, with the same sentences, the approved one's answer left to its band."""
    from register.governance.registers import add_row
    from register.scoring.profiles import active_profile
    from register.scoring.scorer import rescore

    fine = [{"claim_id": "c", "labels": ["SUPPORTED"], "criticality": 1}]
    load(store, [{"response_id": rid, "use_case": uc, "claims": fine}
                 for rid, uc in (("r-ok", "helpdesk"), ("r-held", "drafts"), ("r-unknown", "elsewhere"))])
    add_row(store, SYSTEM, "usecases", {"use_case_id": "helpdesk", "owner": "Olga", "purpose": "help",
                                        "status": "approved", "approved_by": "Abe", "review_by": "2099-01-01"})
    add_row(store, SYSTEM, "usecases", {"use_case_id": "drafts", "owner": "Olga", "purpose": "drafts",
                                        "status": "suspended"})
    profile = active_profile(store)
    job_output(store, profile, tmp_path / "scored")
    imported = import_scores(store, ANN, tmp_path / "scored")
    rescored = rescore(store, ANN, profile, as_of=AS_OF)

    def decided(run_id: int) -> dict:
        return {rid: (d, list(r)) for rid, d, r in store.query(
            "SELECT response_id, decision, decision_reasons FROM scores WHERE run_id = ?", [run_id])}

    assert decided(imported.run_id) == decided(rescored.run_id)
    got = decided(imported.run_id)
    assert got["r-ok"][0] == "release"
    assert got["r-held"][0] == "review" and "Scope: use case drafts is suspended: at least review" in got["r-held"][1]
    assert got["r-unknown"][0] == "review"
