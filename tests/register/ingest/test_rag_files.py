"""Importing RAG evaluation results: RAGChecker's checking output and RAGAS result tables, recognised by
content, stored as responses with claims, quarantined per record with reasons, and their per-response
metric inputs stored with the revision (migration 011)."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from hri_core.rag_import import ragchecker_results
from hri_core.ragmetrics import METRICS, query_metrics, ragchecker_metrics
from register import SYSTEM, Store
from register.console import rag
from register.console.queries.filters import Filters
from register.ingest.importer import import_path
from register.ingest.rag_files import RagOptions, rag_kind
from register.scoring.profiles import ensure_default_profile
from tests.helpers.paths import IMPORT_DATA, peer_data
from tests.helpers.rag import RAGAS_METRICS, checked_results, ragas_table, write_json, write_ragas


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "rag.duckdb")
    ensure_default_profile(s, SYSTEM)
    yield s
    s.close()


def _values(store: Store, framework: str) -> dict[str, dict[str, float | None]]:
    out: dict[str, dict[str, float | None]] = {}
    for rid, metric, value in store.query(
            "SELECT x.response_id, v.metric, v.value FROM rag_metric_values v JOIN rag_responses x "
            "ON x.response_key = v.response_key AND x.framework = v.framework WHERE v.framework = ?", [framework]):
        out.setdefault(rid, {})[metric] = value
    return out


def test_ragchecker_example_imports_and_the_sql_means_reproduce_its_metrics(register_cli):
    source = peer_data("ragchecker", "checking_outputs.json")
    data = json.loads(source.read_text(encoding="utf-8"))
    run = register_cli()
    result = run("import", str(source), "--json", "--quiet")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["records"], report["accepted"], report["quarantined"]) == (len(data["results"]),
                                                                              len(data["results"]), 0)
    store = Store(run.db)
    try:
        assert store.query_one("SELECT DISTINCT format FROM import_batches")[0] == "ragchecker"
        claims = store.scalar("SELECT count(*) FROM claims WHERE is_current")
        assert claims == sum(len(item["response_claims"]) for item in data["results"])
        # RAGChecker's own figures in the file, from the labels stored at import and averaged in SQL
        assert rag.summary(store, Filters())["metrics"] == data["metrics"]
        assert rag.summary(store, Filters())["metrics"] == ragchecker_metrics(data)
    finally:
        store.close()
    again = run("import", str(source), "--json", "--quiet")  # idempotent: nothing new, no second rows
    assert json.loads(again.stdout)["unchanged"] == len(data["results"])
    store = Store(run.db)
    try:
        assert store.scalar("SELECT count(*) FROM rag_responses") == len(data["results"])
    finally:
        store.close()


def test_ragchecker_per_query_values_are_hri_core_values(store, tmp_path):
    data = checked_results(seed=7, queries=15)
    path = write_json(tmp_path / "checked.json", data)
    report = import_path(store, SYSTEM, path, rag=RagOptions(id_prefix="q", model="m1"))
    assert report.accepted == 15 and report.quarantined == 0
    stored = _values(store, "ragchecker")
    for query in ragchecker_results(data).records:
        expected = query_metrics(_checked(query.response))
        assert stored[f"q{query.response.response_id}"] == expected
    assert set(next(iter(stored.values()))) == set(METRICS)


def _checked(response):
    from hri_core.ragmetrics import checked_query_from_response

    return checked_query_from_response(response)


def test_ragchecker_bad_queries_are_quarantined_by_name_and_the_rest_stored(store, tmp_path):
    data = checked_results(seed=3, queries=5)
    data["results"][1]["answer2response"] = ["Entailment"] * (len(data["results"][1]["response_claims"]) + 1)
    data["results"][3]["retrieved2response"] = "not a matrix"
    data["results"][4]["query_id"] = data["results"][0]["query_id"]  # duplicate
    path = write_json(tmp_path / "bad.json", data)
    report = import_path(store, SYSTEM, path)
    assert (report.records, report.accepted, report.quarantined) == (5, 2, 3)
    rows = store.dicts("SELECT location, reasons FROM quarantine ORDER BY quarantine_id")
    assert [r["location"] for r in rows] == ["query 2", "query 4", "query 5"]
    fields = [{reason["field"] for reason in json.loads(r["reasons"])} for r in rows]
    assert "answer2response" in fields[0]
    assert "retrieved2response" in fields[1]
    assert "query_id" in fields[2]
    raw = json.loads(store.scalar("SELECT raw FROM quarantine WHERE location = 'query 4'"))
    assert raw == data["results"][3]  # kept verbatim
    assert store.scalar("SELECT count(*) FROM rag_responses") == 2


def test_options_and_query_categories_reach_the_records(store, tmp_path):
    data = checked_results(seed=5, queries=4)
    data["results"][0]["category"] = "financial"
    data["results"][1]["category"] = "general"
    path = write_json(tmp_path / "cat.json", data)
    import_path(store, SYSTEM, path, rag=RagOptions(model="gpt-x", use_case="loans", stakes="high",
                                                    created_at="2026-11-20T08:00:00Z"))
    rows = store.dicts("SELECT response_id, model, use_case, stakes, created_at FROM responses ORDER BY response_id")
    assert {(r["model"], r["use_case"], r["stakes"]) for r in rows} == {("gpt-x", "loans", "high")}
    assert all(r["response_id"].startswith("cat:") for r in rows)
    assert {r["created_at"].isoformat()[:10] for r in rows} == {"2026-11-20"}
    flags = dict(store.query("SELECT response_id, critical FROM rag_responses"))
    has_claims = {f"cat:{q['query_id']}": bool(q["response_claims"]) for q in data["results"]}
    assert flags["cat:0"] is has_claims["cat:0"]  # financial is critical (when a claim carries it)
    assert flags["cat:1"] is False  # general is not


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_ragas_table_imports_with_its_scores(store, tmp_path, suffix):
    rows = ragas_table(seed=11, rows=8)
    rows[5]["faithfulness"] = 1.7  # not a score in [0, 1]
    path = write_ragas(tmp_path / f"ragas_eval{suffix}", rows)
    assert rag_kind(path, suffix.lstrip(".")) == "ragas"
    report = import_path(store, SYSTEM, path)
    assert (report.records, report.accepted, report.quarantined) == (8, 7, 1)
    first = 2 if suffix == ".csv" else 1
    bad = store.one("SELECT location, reasons FROM quarantine")
    assert bad["location"] == f"row {first + 5}"
    assert [r["field"] for r in json.loads(bad["reasons"])] == ["faithfulness"]
    assert store.query_one("SELECT DISTINCT format FROM import_batches")[0] == "ragas"
    stored = _values(store, "ragas")
    assert len(stored) == 7
    expected = pd.DataFrame([r for i, r in enumerate(rows) if i != 5])
    for name in RAGAS_METRICS:
        values = [v for v in expected[name] if v is not None and not (isinstance(v, float) and math.isnan(v))]
        assert rag.summary(store, Filters())["ragas_means"][name] == pytest.approx(sum(values) / len(values),
                                                                                   rel=1e-12)
    assert stored[f"ragas_eval:{first + 1}"]["answer_relevancy"] is None  # missing stays missing
    assert store.scalar("SELECT count(*) FROM rag_responses WHERE critical") == sum(
        1 for i, r in enumerate(rows) if i != 5 and r["category"] == "health")
    models = {m for (m,) in store.query("SELECT DISTINCT model FROM responses")}
    assert models == {"model-a", "model-b"}


def test_ragas_csv_row_with_missing_fields_is_quarantined(store, tmp_path):
    path = write_ragas(tmp_path / "short.csv", ragas_table(seed=2, rows=3))
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].rsplit(",", 3)[0]  # cut the last three fields of data row 2
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = import_path(store, SYSTEM, path)
    assert (report.records, report.accepted, report.quarantined) == (3, 2, 1)
    reasons = json.loads(store.scalar("SELECT reasons FROM quarantine"))
    assert any("fields but the header has" in r["message"] for r in reasons)


@pytest.mark.parametrize("name", ["responses.csv", "responses.jsonl", "malformed_json.jsonl", "header_only.csv"])
def test_interchange_files_are_not_taken_for_rag_results(name):
    path = IMPORT_DATA / name
    fmt = {".csv": "csv", ".jsonl": "jsonl"}[path.suffix]
    assert rag_kind(path, fmt) is None


def test_a_json_document_that_is_not_ragchecker_is_left_to_the_interchange_reader(store, tmp_path):
    path = tmp_path / "array.json"
    path.write_text(json.dumps([{"response_id": "a", "claims": []}], indent=2), encoding="utf-8")
    assert rag_kind(path, "jsonl") is None
    report = import_path(store, SYSTEM, path)
    assert report.batches[0].format == "jsonl"
    assert report.records == report.accepted + report.quarantined


def test_a_quarantined_query_is_resolved_by_importing_the_fixed_file_again(store, tmp_path):
    from register.errors import RegisterError
    from register.ingest.importer import reimport_quarantined

    data = checked_results(seed=13, queries=3)
    broken = json.loads(json.dumps(data))
    broken["results"][1]["answer2response"] = ["Maybe"] * len(broken["results"][1]["response_claims"]) or "Maybe"
    path = write_json(tmp_path / "fixme.json", broken)
    assert import_path(store, SYSTEM, path).quarantined == 1
    (quarantine_id,) = store.query_one("SELECT quarantine_id FROM quarantine WHERE status = 'open'")
    with pytest.raises(RegisterError, match="import the file again"):  # its text is no interchange record
        reimport_quarantined(store, SYSTEM, quarantine_id, json.dumps(data["results"][1]))
    write_json(path, data)
    report = import_path(store, SYSTEM, path)
    assert (report.accepted, report.quarantined, report.batches[0].unchanged) == (3, 0, 2)
    assert store.scalar("SELECT status FROM quarantine WHERE quarantine_id = ?", [quarantine_id]) == "resolved"
    assert store.scalar("SELECT count(*) FROM rag_responses") == 3
