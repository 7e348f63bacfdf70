"""The scorer on Spark computes what the register's DuckDB scorer computes, to 1e-9.

One local SparkSession for the module (in a time zone other than UTC: no result may depend on it) and
one register of a few thousand random responses (the Hypothesis strategies of the SQL-versus-Python
parity test), exported once with ``export_parquet``. Each random profile is then scored by both
engines over the same data: every column of every score row, and every fired floor, must match.
Band edges get a profile of their own whose band bounds are scores that occur (rounded to 9 decimals as
``ScoringProfile.band_for`` rounds them). The round trip through the command line (``export-parquet``,
the job, ``import-scores``) closes the module; what ``import-scores`` refuses is tested without a JVM
in tests/register/scoring/test_spark_exchange.py.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from hri_core import Band, ScoringProfile, default_profile, recommended_profile
from register import SYSTEM, Store
from register.scoring.profiles import ensure_default_profile, get_profile
from register.scoring.spark_exchange import PROFILE_FILE, SPARK_SCOPE, export_parquet
from register.spark import score_job
from tests.helpers.parity import SCORE_COLUMNS, TOLERANCE, bulk_scores, fired_floors, load
from tests.helpers.strategies import AS_OF, profiles, responses

# one SparkSession for the module: under pytest-xdist its tests stay on one worker (else each starts a JVM)
pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

if shutil.which("java") is None:  # pyspark is pinned in requirements-dev.txt; the JVM is the machine's
    pytest.skip("no java on PATH: the Spark parity tests need a Java 17+ runtime", allow_module_level=True)

EXAMPLES = 20  # Hypothesis batches of 20-45 responses: about 650 responses, 2,300 claims
FLOATS = {c for c in SCORE_COLUMNS if c.startswith("s_")} | {"hri_add", "hri", "score"}


def draw_lake() -> tuple[list[dict], list[ScoringProfile]]:
    """Random responses (ids made unique across batches) and the random profiles drawn with them."""
    drawn: list[tuple[list[dict], ScoringProfile]] = []

    @settings(max_examples=EXAMPLES, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(records=responses(min_size=20, max_size=45, min_claims=0, max_claims=8), profile=profiles())
    def collect(records, profile):
        drawn.append((records, profile))

    collect()
    records = []
    for n, (batch, _) in enumerate(drawn):
        for record in batch:
            rid = f"b{n}-{record['response_id']}"
            claims = [{**c, "claim_id": f"b{n}-{c['claim_id']}"} for c in record["claims"]]
            records.append({**record, "response_id": rid, "claims": claims})
    return records, [profile for _, profile in drawn]


def chosen_profiles(drawn: list[ScoringProfile]) -> dict[str, ScoringProfile]:
    """The paper's profile (its context-contradiction dimensions differ from CONTRADICTED's; the base of the
    band-edge profile), the review-floors one (floors' minimum actions raise the band's action), random ones: the
    three with the most floors (the decisive floor), and one without floors and with a single band."""
    by_floors = sorted(drawn, key=lambda p: len(p.floors), reverse=True)
    chosen = {"paper": default_profile(), "review floors": recommended_profile()}
    chosen.update({f"random-{i}": p for i, p in enumerate(by_floors[:3])})
    chosen["no floors, one band"] = next(p for p in drawn if not p.floors).model_copy(
        update={"bands": (Band(name="All", upper=100, action="review"),)})
    return chosen


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[1]").appName("hri-spark-parity")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "1")
               .config("spark.sql.session.timeZone", "America/New_York")
               .config("spark.driver.memory", "768m")
               # small data, many short queries: a quick-starting JVM and no code generation or adaptive
               # re-planning per query keep the module's runtime modest (results are the same)
               .config("spark.driver.extraJavaOptions", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
               .config("spark.sql.codegen.wholeStage", "false").config("spark.sql.adaptive.enabled", "false")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def lake(tmp_path_factory, spark):
    """(store, profiles): a register of the random responses, exported and registered as Spark views."""
    folder = tmp_path_factory.mktemp("lake")
    records, drawn = draw_lake()
    store = Store(folder / "register.duckdb")
    ensure_default_profile(store, SYSTEM)
    load(store, records)
    summary = export_parquet(store, SYSTEM, folder / "export")
    assert summary.responses == len(records) and summary.claims == sum(len(r["claims"]) for r in records)
    yield store, folder / "export", chosen_profiles(drawn)
    store.close()


def spark_scores(spark, export: Path, profile: ScoringProfile) -> tuple[dict, dict]:
    """The job's score rows (by response id) and fired floors (by response id, in claim then rule order)."""
    score_job.register_views(spark, str(export))  # another test may have pointed the views elsewhere
    scores, floors = score_job.score_frames(spark, profile, AS_OF)
    rows = {row["response_id"]: row.asDict() for row in scores.collect()}
    fired: dict[str, list[tuple]] = {}
    for row in floors.collect():  # the SELECT orders them; collect() of one partition keeps the order
        fired.setdefault(row["response_id"], []).append(
            (row["claim_id"], row["rule_id"], row["label"], row["criticality"], row["value"]))
    return rows, fired


def assert_same_scores(spark, lake, profile: ScoringProfile, name: str) -> dict:
    """Spark's rows and floors equal DuckDB's, column by column; returns DuckDB's rows."""
    store, export, _ = lake
    duck = bulk_scores(store, profile, AS_OF)
    rows, fired = spark_scores(spark, export, profile)
    assert sorted(rows) == sorted(duck), name
    for rid, expected in duck.items():
        got = rows[rid]
        for column in SCORE_COLUMNS:
            if column in FLOATS:
                assert math.isclose(got[column], expected[column], rel_tol=0, abs_tol=TOLERANCE), (name, rid, column)
            else:
                assert got[column] == expected[column], (name, rid, column)
        assert (got["profile_version"], got["profile_fingerprint"]) == (profile.version, profile.fingerprint())
    assert fired == fired_floors(store, profile, AS_OF), name
    return duck


def test_spark_scores_equal_duckdb_scores_under_random_profiles(spark, lake):
    decisive = fired_rows = raised = 0
    for name, profile in lake[2].items():
        if name == "paper":
            continue  # scored in the band-edge test, under bands of its own
        duck = assert_same_scores(spark, lake, profile, name)
        decisive += sum(row["decisive_rule_id"] is not None for row in duck.values())
        fired_rows += sum(row["floors_fired"] > 0 for row in duck.values())
        raised += sum(row["action_floor_rule_id"] is not None for row in duck.values())
    # the comparison covered what it claims to: floors that fired, floors that decided the score, and
    # floors whose minimum action raised the band's action
    assert decisive > 0 and fired_rows > decisive and raised > 0


def test_spark_bands_equal_duckdb_bands_at_the_band_edges(spark, lake):
    """Bounds that scores sit exactly on (inclusive: the score belongs to the lower band)."""
    store, _, chosen = lake
    base = chosen["paper"]  # a random profile may put every score at 0 or 100
    scores = sorted({round(row["score"], 9) for row in bulk_scores(store, base, AS_OF).values()} - {0.0, 100.0})
    assert len(scores) >= 3
    uppers = [scores[len(scores) // 4], scores[len(scores) // 2], scores[3 * len(scores) // 4], 100.0]
    edges = base.model_copy(update={"bands": tuple(
        Band(name=f"edge-{i}", upper=upper, action=action)
        for i, (upper, action) in enumerate(zip(uppers, ("release", "caution", "review", "block"), strict=True)))})
    duck = assert_same_scores(spark, lake, edges, "band edges")
    on_edge = [row for row in duck.values() if round(row["score"], 9) in uppers[:3]]
    assert on_edge and all(row["band"] == f"edge-{uppers.index(round(row['score'], 9))}" for row in on_edge)


# --- the command-line round trip --------------------------------------------------------------------


def test_export_score_on_spark_and_import_round_trip(spark, lake, tmp_path, register_cli):
    """export-parquet -> the job -> import-scores stores the same rows as a local rescore, audited."""
    source = lake[0]
    records = [{"response_id": rid, "claims": []} for rid in ("empty-1", "empty-2")]
    cli = register_cli()
    data = tmp_path / "records.jsonl"
    # an import refuses feedback later than itself (the strategies draw some after AS_OF, and after today too)
    sample = source.dicts("SELECT raw FROM responses r WHERE is_current AND NOT EXISTS (SELECT 1 FROM claims c "
                          "WHERE c.response_key = r.response_key AND c.feedback_at > now()) "
                          "ORDER BY response_key LIMIT 300")
    data.write_text("".join(json.dumps(json.loads(r["raw"])) + "\n" for r in sample)
                    + "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert cli("import", str(data), "--no-score", "--quiet").returncode == 0
    # the Scope check decides the imported rows as a rescore does: one use case approved, one suspended, it-support
    # unknown to the register
    from register.governance.registers import add_row
    registered = Store(cli.db)
    try:
        add_row(registered, SYSTEM, "usecases", {"use_case_id": "supplier-contracts", "owner": "Olga", "purpose": "p",
                                                 "status": "approved", "approved_by": "Abe", "review_by": "2099-01-01"})
        add_row(registered, SYSTEM, "usecases", {"use_case_id": "hr-policy", "owner": "Olga", "purpose": "p",
                                                 "status": "suspended"})
    finally:
        registered.close()
    result = cli("export-parquet", str(tmp_path / "export"))
    assert result.returncode == 0, result.stderr
    assert "302 responses" in result.stdout
    profile = score_job.read_profile((tmp_path / "export" / PROFILE_FILE).read_text(encoding="utf-8"))

    score_job.run(spark, str(tmp_path / "export"), profile, AS_OF, str(tmp_path / "scored"))
    result = cli("import-scores", str(tmp_path / "scored"))
    assert result.returncode == 0, result.stderr
    assert f"302 responses scored on Spark under profile v1 as of {AS_OF.isoformat()}" in result.stdout

    store = Store(cli.db)
    try:
        (run_id, version, as_of, scope, scored), = store.query(
            "SELECT run_id, profile_version, as_of, scope, responses_scored FROM score_runs")
        assert (version, as_of, scope, scored) == (1, AS_OF, SPARK_SCOPE, 302)
        imported = bulk_scores_of_run(store, run_id)
        expected = bulk_scores(store, get_profile(store, 1), AS_OF)
        assert imported.keys() == expected.keys()
        for rid, row in expected.items():
            for column in SCORE_COLUMNS:
                same = (math.isclose(imported[rid][column], row[column], abs_tol=TOLERANCE) if column in FLOATS
                        else imported[rid][column] == row[column])
                assert same, (rid, column)
        floors = store.query("SELECT response_id, claim_id, rule_id, label, criticality, value FROM score_floors "
                             "WHERE run_id = ? ORDER BY response_id, claim_idx", [run_id])
        assert floors and sorted(floors) == sorted(
            (rid, *f) for rid, fs in fired_floors(store, get_profile(store, 1), AS_OF).items() for f in fs)
        # the mitigation columns are decided by import-scores, in the register, on every imported row
        assert store.scalar("SELECT count(*) FROM scores WHERE run_id = ? AND mitigation_action IS NOT NULL "
                            "AND mitigation_policy_version IS NOT NULL", [run_id]) == 302
        actions = [a for (a,) in store.query("SELECT action FROM audit_events ORDER BY seq")]
        assert actions[-2:] == ["export.parquet", "scores.import"]
        # the decision of every imported row, and its reasons, are the ones a local rescore at the same time
        # stores: decided at import by the code the register's score run runs
        from register.scoring.scorer import rescore
        on_spark = decided_of_run(store, run_id)
        local = rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF).run_id
        assert len(on_spark) == 302 and on_spark == decided_of_run(store, local)
        assert {d for d, *_ in on_spark.values()} >= {"review"}
        assert any(r.startswith("Scope: use case hr-policy is suspended") for _, rs, _ in on_spark.values() for r in rs)
        assert any(r.startswith("Scope: use case it-support is not") for _, rs, _ in on_spark.values() for r in rs)
    finally:
        store.close()


def decided_of_run(store: Store, run_id: int) -> dict:
    return {rid: (decision, list(reasons), action) for rid, decision, reasons, action in store.query(
        "SELECT response_id, decision, decision_reasons, mitigation_action FROM scores WHERE run_id = ?", [run_id])}


def bulk_scores_of_run(store: Store, run_id: int) -> dict:
    rows = store.query(f"SELECT {', '.join(SCORE_COLUMNS)} FROM scores WHERE run_id = ? AND is_current", [run_id])
    return {row[0]: dict(zip(SCORE_COLUMNS, row, strict=True)) for row in rows}

