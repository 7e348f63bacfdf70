"""The governance and intake operations: imports (raw body, multipart, refused, too large), a source read and
changed (with its row version), the checklist as a CI gate, feedback and the audit trail's verification."""

from __future__ import annotations

import json
from pathlib import Path

from register.governance.checks import run_checks

DATA = Path(__file__).parents[2] / "data" / "import"


def _import(api, content: bytes, role: str = "annotator", **params):
    return api.client.post("/api/v1/imports", content=content, params=params, headers=api.headers(role))


def test_a_jsonl_body_imports_with_the_command_lines_report(api):
    content = (DATA / "intake_mixed.jsonl").read_bytes()
    answer = _import(api, content, format="jsonl", filename="nightly run.jsonl")
    assert answer.status_code == 200, answer.text
    report = answer.json()
    lines = [line for line in content.decode().splitlines() if line.strip()]
    assert report["records"] == len(lines) == report["accepted"] + report["quarantined"]
    assert report["quarantined"] >= 1 and report["balanced"] is True
    broken = [q for q in report["quarantined_records"] if q["response_id"] == "intake-broken" or "3" in q["location"]]
    assert broken and broken[0]["problems"], report["quarantined_records"]
    batch = report["batches"][0]
    assert batch["source_name"] == "nightly-run.jsonl"  # a safe version of the name given
    assert api.store.scalar("SELECT count(*) FROM responses WHERE response_id = 'intake-1' AND is_current") == 1
    assert api.store.scalar("SELECT count(*) FROM scores s JOIN responses r USING (response_key) "
                            "WHERE r.response_id = 'intake-1' AND s.is_current") == 1
    assert api.store.scalar("SELECT count(*) FROM audit_events WHERE actor_name = 'test-annotator' "
                            "AND action LIKE 'import%'") >= 1


def test_a_multipart_csv_upload_and_the_format_from_the_content_type(api):
    csv = (DATA / "intake_mixed.csv").read_bytes()
    answer = api.client.post("/api/v1/imports", files={"file": ("intake.csv", csv, "text/csv")},
                             headers=api.headers("annotator"))
    assert answer.status_code == 200, answer.text
    report = answer.json()
    assert report["batches"][0]["format"] == "csv" and report["batches"][0]["source_name"] == "intake.csv"
    assert report["records"] == report["accepted"] + report["quarantined"] and report["accepted"] >= 1
    assert api.store.scalar("SELECT count(*) FROM responses WHERE response_id = 'intake-c1' AND is_current") == 1
    typed = api.client.post("/api/v1/imports", content=b'{"response_id": "typed-1", "claims": []}\n',
                            headers={**api.headers("annotator"), "Content-Type": "application/x-ndjson"})
    assert typed.status_code == 200 and typed.json()["accepted"] == 1


def test_imports_refused_whole_write_nothing(api, monkeypatch):
    before = api.store.scalar("SELECT count(*) FROM responses")
    unknown = _import(api, b"a,b\n1,2\n")
    assert unknown.status_code == 422 and unknown.json()["error"]["field"] == "format"
    binary = _import(api, b"\x89PNG\r\n\x1a\n" + bytes(100), format="jsonl")
    assert binary.status_code == 422 and binary.json()["error"]["code"] == "invalid"
    monkeypatch.setenv("HRI_IMPORT_MAX_MB", "0.001")  # 1,048 bytes
    large = _import(api, b'{"response_id": "x", "claims": []}\n' * 100, format="jsonl")
    assert large.status_code == 413 and large.json()["error"]["code"] == "too_large"
    viewer = _import(api, b'{"response_id": "v", "claims": []}\n', role="viewer", format="jsonl")
    assert viewer.status_code == 403
    assert api.store.scalar("SELECT count(*) FROM responses") == before


def test_a_source_is_read_changed_with_its_version_and_stale_changes_are_409(api):
    source_id = api.store.scalar("SELECT source_id FROM sources WHERE NOT deleted AND (restricted_to IS NULL OR "
                                 "len(restricted_to) = 0) ORDER BY source_id LIMIT 1")
    url = f"/api/v1/sources/{source_id}"
    read = api.client.get(url, headers=api.headers("viewer"))
    assert read.status_code == 200, read.text
    row = read.json()
    change = {k: row[k] for k in ("title", "ref", "source_type", "authority_tier", "publisher", "access_date",
                                  "valid_until", "superseded_by", "archive_url", "content_hash", "restricted_to",
                                  "notes")}
    change["title"] = "Renamed over the API"
    no_version = api.client.put(url, json=change, headers=api.headers("reviewer"))
    assert no_version.status_code == 409 and no_version.json()["error"]["field"] == "row_version"
    saved = api.client.put(url, json={**change, "row_version": row["row_version"]}, headers=api.headers("reviewer"))
    assert saved.status_code == 200, saved.text
    assert saved.json()["title"] == "Renamed over the API" and saved.json()["row_version"] == row["row_version"] + 1
    assert saved.json()["updated_by"] == "test-reviewer"
    stale = api.client.put(url, json={**change, "row_version": row["row_version"]}, headers=api.headers("reviewer"))
    assert stale.status_code == 409
    viewer = api.client.put(url, json={**change, "row_version": row["row_version"] + 1},
                            headers=api.headers("viewer"))
    assert viewer.status_code == 403


def test_a_new_source_is_created_and_a_bad_field_is_422(api):
    url = "/api/v1/sources/api-new-source"
    body = {"title": "A regulator's circular", "ref": "https://example.org/circular-7",
            "source_type": "official framework", "authority_tier": 1, "publisher": "Regulator",
            "access_date": "2026-11-30"}
    created = api.client.put(url, json=body, headers=api.headers("reviewer"))
    assert created.status_code == 200, created.text
    assert api.client.get(url, headers=api.headers("viewer")).json()["title"] == "A regulator's circular"
    bad = api.client.put("/api/v1/sources/api-bad", json={**body, "authority_tier": 9},
                         headers=api.headers("reviewer"))
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "authority_tier", bad.text
    assert api.client.get("/api/v1/sources/api-bad", headers=api.headers("viewer")).status_code == 404


def test_the_checklist_over_http_is_the_gate_the_command_line_runs(api):
    expected = run_checks(api.store)["summary"]["failed_checks"]
    answer = api.client.post("/api/v1/checklist/runs", json={}, headers=api.headers("reviewer"))
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["failed_checks"] == expected and body["passed"] is (not expected)
    assert body["run_id"] == api.store.scalar("SELECT max(run_id) FROM checklist_runs")
    unrecorded = api.client.post("/api/v1/checklist/runs", json={"record": False}, headers=api.headers("reviewer"))
    assert unrecorded.json()["run_id"] is None
    assert api.client.post("/api/v1/checklist/runs", json={}, headers=api.headers("viewer")).status_code == 403


def test_feedback_is_reported_under_the_tokens_account(api):
    rid = api.store.scalar("SELECT response_id FROM scores WHERE is_current ORDER BY response_id LIMIT 1")
    answer = api.client.post("/api/v1/feedback", json={"response_id": rid, "text": "wrong date", "severity": 0.5},
                             headers=api.headers("viewer"))
    assert answer.status_code == 201, answer.text
    row = api.store.one("SELECT response_id, reported_by, state FROM feedback_items WHERE feedback_id = ?",
                        [answer.json()["feedback_id"]])
    assert row == {"response_id": rid, "reported_by": "test-viewer", "state": "reported"}
    for body, status, field in (({"response_id": rid, "text": "x", "severity": 2}, 422, "severity"),
                                ({"response_id": rid, "text": "x", "severity": 0.1, "claim_id": "nope"}, 422,
                                 "claim_id"),
                                ({"response_id": "no-such", "text": "x", "severity": 0.1}, 404, None)):
        refused = api.client.post("/api/v1/feedback", json=body, headers=api.headers("viewer"))
        assert refused.status_code == status, refused.text
        assert refused.json()["error"]["field"] == field


def test_the_audit_trail_verifies_over_http_for_a_reviewer_only(api):
    answer = api.client.get("/api/v1/audit/verify", headers=api.headers("reviewer"))
    assert answer.status_code == 200, answer.text
    assert answer.json()["ok"] is True
    assert answer.json()["events"] == api.store.scalar("SELECT count(*) FROM audit_events")
    assert api.client.get("/api/v1/audit/verify", headers=api.headers("viewer")).status_code == 403
    json.dumps(answer.json())


def test_an_import_leaves_the_index_to_the_consoles_background_catch_up(api):
    from register.readmodels import search_catchup, search_index

    before = _import(api, b'{"response_id": "first-1", "claims": []}\n', format="jsonl")
    assert before.json()["search_index"] == "indexed"  # no background catch-up running: indexed before the report
    indexer = search_catchup.start_indexer(api.store, poll_seconds=3600)
    try:
        assert indexer.wait_caught_up(60)
        answer = _import(api, (DATA / "intake_mixed.jsonl").read_bytes(), format="jsonl")
        assert answer.status_code == 200, answer.text
        assert answer.json()["search_index"] == "deferred"  # the report came first; the thread indexes
        assert indexer.wait_caught_up(60) and search_index.lag(api.store) is None
    finally:
        indexer.stop()
