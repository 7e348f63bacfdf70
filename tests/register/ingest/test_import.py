"""The importer: formats, validation with quarantine, revisions, idempotency and quarantine resolution.

Inputs are the small text files in ``tests/data/import`` (Parquet is written from them in the test)
plus inline strings. Every import is checked against the invariant accepted + quarantined == records
and against what the database holds afterwards.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hri_core import RecordError
from register import SYSTEM, ImportRejected, RegisterError, Store
from register.ingest.importer import import_path, reimport_quarantined
from register.scoring.profiles import active_profile, ensure_default_profile
from register.scoring.scorer import rescore
from tests.helpers.paths import REPO_ROOT

DATA = REPO_ROOT / "tests" / "data" / "import"
AS_OF = datetime(2026, 12, 1, tzinfo=UTC)

RESPONSE_COLUMNS = ("response_id, revision, is_current, content_hash, use_case, model, created_at, question, answer, "
                    "stakes, claim_count")
CLAIM_COLUMNS = ("response_id, revision, claim_idx, claim_id, text, labels, label_mask, dimensions, dim_mask, "
                 "criticality, source_id, span, feedback_at, feedback_count, feedback_resolved")
SCORE_COLUMNS = ("response_id, revision, s_f, s_c, s_u, s_o, s_s, s_p, s_h, hri_add, hri, score, band, action, "
                 "no_claims, total_criticality, floors_fired, decisive_claim_id, decisive_rule_id")


def table_counts(store: Store) -> dict[str, int]:
    """Row counts of the data tables (not import_batches / audit_events, which every import appends to)."""
    tables = ("responses", "claims", "scores", "score_runs", "quarantine")
    return {t: store.query_one(f"SELECT count(*) FROM {t}")[0] for t in tables}


def quarantine_rows(store: Store, batch_id: int | None = None) -> dict[str, tuple]:
    """location -> (response_id, [fields], reasons, status) of the quarantine rows (of one batch)."""
    where, params = ("WHERE batch_id = ?", [batch_id]) if batch_id is not None else ("", [])
    rows = store.query(f"SELECT location, response_id, reasons, status FROM quarantine {where}", params)
    out = {}
    for location, rid, reasons, status in rows:
        reasons = json.loads(reasons)
        out[location] = (rid, [r["field"] for r in reasons], reasons, status)
    return out


def write_parquet(jsonl: Path, target: Path) -> None:
    """The JSON Lines responses as a typed flat Parquet table (lists, ints, timestamps, booleans)."""
    rows = []
    for line in jsonl.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        head = {k: record.get(k) for k in ("response_id", "use_case", "model", "created_at", "stakes", "question",
                                           "answer")}
        head["created_at"] = datetime.fromisoformat(head["created_at"])
        for claim in record["claims"] or [{}]:
            row = dict(head)
            row.update({k: claim.get(k) for k in ("claim_id", "text", "labels", "dimensions", "criticality",
                                                  "source_id", "span", "feedback_count", "feedback_resolved")})
            row["feedback_at"] = datetime.fromisoformat(claim["feedback_at"]) if claim.get("feedback_at") else None
            rows.append(row)
    ts = pa.timestamp("us", tz="UTC")
    schema = pa.schema([("response_id", pa.string()), ("use_case", pa.string()), ("model", pa.string()),
                        ("created_at", ts), ("stakes", pa.string()), ("question", pa.string()),
                        ("answer", pa.string()), ("claim_id", pa.string()), ("text", pa.string()),
                        ("labels", pa.list_(pa.string())), ("dimensions", pa.list_(pa.string())),
                        ("criticality", pa.int64()), ("source_id", pa.string()), ("span", pa.string()),
                        ("feedback_count", pa.int64()), ("feedback_resolved", pa.bool_()), ("feedback_at", ts)])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), target, row_group_size=4)


def assert_balanced(report) -> None:
    assert report.accepted + report.quarantined == report.records
    assert report.balanced


# --- formats ---------------------------------------------------------------------------------------


def test_jsonl_csv_and_parquet_store_identical_claims_and_scores(tmp_path):
    parquet = tmp_path / "responses.parquet"
    write_parquet(DATA / "responses.jsonl", parquet)
    stored = {}
    for path in (DATA / "responses.jsonl", DATA / "responses.csv", parquet):
        store = Store(tmp_path / f"{path.suffix[1:]}.duckdb")
        ensure_default_profile(store, SYSTEM)
        report = import_path(store, SYSTEM, path, score=False, chunk_size=2)
        assert (report.records, report.accepted, report.new_responses, report.quarantined) == (3, 3, 3, 0), path.name
        rescore(store, SYSTEM, active_profile(store), as_of=AS_OF)
        stored[path.suffix] = tuple(
            store.query(f"SELECT {cols} FROM {table} ORDER BY 1, 2{', 3' if table == 'claims' else ''}")
            for table, cols in (("responses", RESPONSE_COLUMNS), ("claims", CLAIM_COLUMNS),
                                ("scores", SCORE_COLUMNS)))
        store.close()
    assert stored[".jsonl"] == stored[".csv"] == stored[".parquet"]
    responses, claims, scores = stored[".jsonl"]
    assert [r[0] for r in responses] == ["r-001", "r-002", "r-003"]
    assert len(claims) == 9
    by_id = {row[0]: row for row in scores}
    # r-001 is the paper's Table V: HRI_add 1.92/11, the CONTRADICTED v=3 floor lifts it to 0.70 (High)
    assert by_id["r-001"][9] == pytest.approx(1.92 / 11, abs=1e-12)
    assert (by_id["r-001"][10], by_id["r-001"][12], by_id["r-001"][17]) == (pytest.approx(0.70), "High", "r-001-3")
    assert by_id["r-003"][14] is True  # no claims: flagged, not silently Low


def test_import_scores_the_batch_under_the_active_profile(store):
    report = import_path(store, SYSTEM, DATA / "responses.jsonl")
    batch = report.batches[0]
    assert batch.score_run_id is not None and batch.scored == 3
    run = store.query_one("SELECT profile_version, scope, responses_scored FROM score_runs WHERE run_id = ?",
                          [batch.score_run_id])
    assert run == (1, f"batch:{batch.batch_id}", 3)
    assert store.query_one("SELECT count(*) FROM scores WHERE is_current AND run_id = ?", [batch.score_run_id])[0] == 3


def test_responses_left_unscored_are_scored_by_the_next_scoring_import(store):
    unscored = import_path(store, SYSTEM, DATA / "responses.jsonl", score=False)
    assert store.query_one("SELECT count(*) FROM scores")[0] == 0
    again = import_path(store, SYSTEM, DATA / "responses.jsonl")  # all unchanged, yet the batch before is scored
    assert again.unchanged == 3 and again.batches[0].score_run_id is None
    assert again.batches[0].notes == [f"also scored 3 unscored responses of batch {unscored.batch_ids[0]}"]
    assert store.query_one("SELECT count(*) FROM scores WHERE is_current")[0] == 3


def test_folder_import_makes_one_batch_per_supported_file_in_name_order(store, tmp_path):
    folder = tmp_path / "drop"
    folder.mkdir()
    for name in ("responses.jsonl", "responses.csv"):
        (folder / name).write_bytes((DATA / name).read_bytes())
    (folder / "README.txt").write_text("not data")
    report = import_path(store, SYSTEM, folder)
    assert [b.source_name for b in report.batches] == ["responses.csv", "responses.jsonl"]
    assert [(b.new_responses, b.unchanged) for b in report.batches] == [(3, 0), (0, 3)]  # same content, other format
    assert report.notes == ["skipped README.txt: not a supported file type (.jsonl, .json, .csv, .parquet)"]
    assert store.query("SELECT source_name, records_total, accepted, finished_at IS NOT NULL FROM import_batches "
                       "ORDER BY batch_id") == [("responses.csv", 3, 3, True), ("responses.jsonl", 3, 3, True)]
    assert_balanced(report)


def test_chunks_are_separate_transactions_with_progress(store, tmp_path):
    source = tmp_path / "many.jsonl"
    source.write_text("".join(json.dumps({"response_id": f"m-{i}", "claims": [{"labels": ["SUPPORTED"]}]}) + "\n"
                              for i in range(23)))
    calls = []
    report = import_path(store, SYSTEM, source, chunk_size=5, progress=lambda d, t, m: calls.append((d, t, m)))
    # a call per chunk, one when the file is done, one when the search index has the new revisions
    assert [c[:2] for c in calls] == [(5, 23), (10, 23), (15, 23), (20, 23), (23, 23), (23, 23), (23, 23)]
    assert calls[-1][2] == "search index: 23 of 23 revisions indexed"
    actions = [a for (a,) in store.query("SELECT action FROM audit_events WHERE action LIKE 'import.%' ORDER BY seq")]
    assert actions == ["import.start"] + ["import.chunk"] * 5 + ["import.batch"]
    assert store.query_one("SELECT records_total, accepted, new_responses FROM import_batches") == (23, 23, 23)
    last = json.loads(store.query_one("SELECT after FROM audit_events WHERE action = 'import.batch'")[0])
    assert (last["records"], last["accepted"], last["quarantined"]) == (23, 23, 0)
    assert report.new_responses == 23


# --- bad input ---------------------------------------------------------------------------------------

# file -> (records, accepted response ids, {location: (response_id, fields)})
BAD_INPUT = {
    "malformed_json.jsonl": (3, {"ok-1", "ok-2"}, {"line 2": (None, [""])}),
    "unknown_label.jsonl": (3, {"ok-1", "ok-2"}, {"line 2": ("bad-label", ["claims[1].labels[0]"])}),
    "criticality_zero.jsonl": (2, {"ok-1"}, {"line 2": ("crit-zero", ["claims[0].criticality"])}),
    "missing_response_id.jsonl": (3, {"ok-1", "ok-2"}, {"line 2": (None, ["response_id"])}),
    "duplicate_claim_ids.jsonl": (2, {"ok-1"}, {"line 1": ("dup", ["claims[1].claim_id"])}),
    "missing_labels_column.csv": (2, set(), {"row 2": ("r-1", ["labels"]), "row 3": ("r-2", ["labels"])}),
    "wrong_types.csv": (4, {"ok-1"}, {"rows 3,4": ("typed", ["claims[1].criticality"]),
                                      "row 5": ("flag", ["claims[0].feedback_resolved"]),
                                      "row 6": (None, ["response_id"])}),
    "empty.jsonl": (0, set(), {}),
    "header_only.csv": (0, set(), {}),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUT))
def test_bad_input_is_quarantined_with_record_and_field(store, name):
    records, accepted, expected = BAD_INPUT[name]
    report = import_path(store, SYSTEM, DATA / name)
    batch_id = report.batch_ids[0]
    assert report.records == records
    assert_balanced(report)
    assert {r for (r,) in store.query("SELECT response_id FROM responses WHERE batch_id = ?", [batch_id])} == accepted
    rows = quarantine_rows(store, batch_id)
    assert {loc: (rid, fields) for loc, (rid, fields, _, _) in rows.items()} == expected
    assert all(r["message"] for _, _, reasons, _ in rows.values() for r in reasons)
    assert {(q.location, q.response_id) for q in report.quarantined_records} == \
        {(loc, rid) for loc, (rid, _) in expected.items()}
    raw = dict(store.query("SELECT location, raw FROM quarantine WHERE batch_id = ?", [batch_id]))
    if name.endswith(".jsonl"):  # the raw text is the line exactly as sent
        lines = (DATA / name).read_text(encoding="utf-8").splitlines()
        assert all(raw[loc] == lines[int(loc.split()[1]) - 1] for loc in expected)
    if records == 0:
        assert report.batches[0].notes[-1] == "empty file: 0 records"


def test_missing_column_is_a_file_level_problem_for_every_row(store):
    report = import_path(store, SYSTEM, DATA / "missing_labels_column.csv")
    assert report.accepted == 0 and report.quarantined == 2
    assert report.batches[0].notes[0] == ("file-level problem, every row is quarantined: "
                                          "labels: required column is missing from the file")


def test_pandera_reports_a_wrong_typed_csv_column_with_its_row(store):
    import_path(store, SYSTEM, DATA / "wrong_types.csv")
    reasons = {location: row[2] for location, row in quarantine_rows(store).items()}
    assert reasons == {
        "rows 3,4": [{"field": "claims[1].criticality", "message": "row 4: 'high' is not an integer >= 1"}],
        "row 5": [{"field": "claims[0].feedback_resolved", "message": "row 5: 'maybe' is not true or false"}],
        "row 6": [{"field": "response_id", "message": "row 6: a value is required"}],
    }


def test_pandera_checks_typed_parquet_columns_too(store, tmp_path):
    target = tmp_path / "typed.parquet"
    pq.write_table(pa.table({"response_id": ["p-1", "p-2", "p-2"], "labels": ["SUPPORTED", "PARTIAL", "OUTDATED"],
                             "criticality": [1.0, 2.0, 2.5]}), target)
    report = import_path(store, SYSTEM, target)
    assert (report.records, report.accepted, report.quarantined) == (2, 1, 1)
    rows = quarantine_rows(store)
    assert rows["rows 2,3"][2] == [{"field": "claims[1].criticality", "message": "row 3: 2.5 is not an integer >= 1"}]


def test_flat_rows_scattered_within_a_window_are_grouped_and_across_windows_refused(store, tmp_path):
    source = tmp_path / "scattered.csv"
    source.write_text("response_id,labels,criticality\na,SUPPORTED,1\nb,SUPPORTED,1\na,CONTRADICTED,3\n")
    grouped = import_path(store, SYSTEM, source, chunk_size=100)
    assert (grouped.records, grouped.accepted) == (2, 2)
    assert store.query_one("SELECT claim_count FROM responses WHERE response_id = 'a'")[0] == 2

    split = tmp_path / "split.csv"
    split.write_text("response_id,labels,criticality\nc,SUPPORTED,1\nd,SUPPORTED,1\nc,CONTRADICTED,3\n")
    report = import_path(store, SYSTEM, split, chunk_size=1)
    assert (report.records, report.accepted, report.quarantined) == (3, 2, 1)
    (rid, fields, reasons, _), = [v for k, v in quarantine_rows(store, report.batch_ids[0]).items() if k == "row 4"]
    assert (rid, fields) == ("c", ["response_id"]) and "keep each response's rows together" in reasons[0]["message"]


def test_a_line_or_row_that_is_not_utf8_is_quarantined_alone(store, tmp_path):
    source = tmp_path / "latin.jsonl"
    source.write_bytes(b'{"response_id": "u-1", "claims": []}\n'
                       b'{"response_id": "u-2", "claims": [], "answer": "caf\xe9"}\n')
    report = import_path(store, SYSTEM, source)
    assert (report.records, report.accepted, report.quarantined) == (2, 1, 1)
    assert quarantine_rows(store)["line 2"][2] == [{"field": "", "message": "the line is not valid UTF-8 text"}]

    table = tmp_path / "latin.csv"
    table.write_bytes("response_id,labels,text\nc-1,SUPPORTED,ok\nc-2,SUPPORTED,caf\u00e9\n".encode("latin-1"))
    report = import_path(store, SYSTEM, table)
    assert (report.records, report.accepted, report.quarantined) == (2, 1, 1)
    assert quarantine_rows(store, report.batch_ids[0])["row 3"][:2] == ("c-2", [""])
    raw = json.loads(store.query_one("SELECT raw FROM quarantine WHERE location = 'row 3'")[0])
    assert raw == [{"response_id": "c-2", "labels": "SUPPORTED", "text": "caf\ufffd"}]


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"


@pytest.mark.parametrize("name, content, expected", [
    ("picture.jsonl", PNG, "it looks like a PNG image"),
    ("table.csv", b"PAR1\x15\x04\x15\x00PAR1", "it looks like a Parquet file (rename it .parquet)"),
    ("table.parquet", b'{"response_id": "x", "claims": []}\n', "is not a Parquet file"),
    ("binary.json", b"{\x00\x01\x02}", "binary data"),
    ("notes.txt", b"hello", "unsupported file type '.txt'"),
])
def test_wrong_file_types_are_refused_before_anything_is_written(store, tmp_path, name, content, expected):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ImportRejected) as error:
        import_path(store, SYSTEM, path)
    assert name in str(error.value) and expected in str(error.value)
    assert error.value.title == "File refused"
    assert store.query_one("SELECT count(*) FROM import_batches")[0] == 0


def test_size_limit_refuses_naming_file_and_limit(store, tmp_path, monkeypatch):
    with pytest.raises(ImportRejected, match=r"responses\.jsonl is .* over the import limit of 0\.0 MB"):
        import_path(store, SYSTEM, DATA / "responses.jsonl", max_bytes=100)
    monkeypatch.setenv("HRI_IMPORT_MAX_MB", "0.001")  # 1 KiB; responses.jsonl is over 2 KiB
    with pytest.raises(ImportRejected, match="HRI_IMPORT_MAX_MB"):
        import_path(store, SYSTEM, DATA / "responses.jsonl")
    assert import_path(store, SYSTEM, DATA / "malformed_json.jsonl").records == 3  # under the limit


def test_a_refused_file_in_a_folder_stops_the_whole_folder_first(store, tmp_path):
    (tmp_path / "a.jsonl").write_bytes((DATA / "responses.jsonl").read_bytes())
    (tmp_path / "b.jsonl").write_bytes(PNG)
    with pytest.raises(ImportRejected, match="b.jsonl"):
        import_path(store, SYSTEM, tmp_path)
    assert store.query_one("SELECT count(*) FROM responses")[0] == 0


# --- revisions and idempotency -------------------------------------------------------------------------


def test_reimporting_the_same_files_adds_no_rows(store, tmp_path):
    import_path(store, SYSTEM, DATA / "responses.jsonl")
    import_path(store, SYSTEM, DATA / "wrong_types.csv")
    before = table_counts(store)
    assert before["quarantine"] == 3
    again = import_path(store, SYSTEM, DATA / "responses.jsonl")
    bad_again = import_path(store, SYSTEM, DATA / "wrong_types.csv")
    # reformatted (key order, spacing) is the same content: unchanged, not a revision
    reformatted = tmp_path / "reformatted.jsonl"
    reformatted.write_text("".join(json.dumps(json.loads(line), sort_keys=True, indent=None, separators=(",", ":"))
                                   + "\n" for line in (DATA / "responses.jsonl").read_text().splitlines()))
    third = import_path(store, SYSTEM, reformatted)
    assert (again.unchanged, again.new_responses, again.new_revisions) == (3, 0, 0)
    assert (third.unchanged, third.new_responses, third.new_revisions) == (3, 0, 0)
    assert (bad_again.unchanged, bad_again.quarantined) == (1, 3)
    assert all(b.score_run_id is None for b in again.batches + bad_again.batches + third.batches)
    assert table_counts(store) == before
    assert store.query_one("SELECT count(*) FROM import_batches")[0] == 5


def test_a_changed_response_becomes_revision_2_and_keeps_revision_1(store, tmp_path):
    first = import_path(store, SYSTEM, DATA / "responses.jsonl")
    lines = (DATA / "responses.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["claims"][0].update(labels=["CONTRADICTED"], criticality=3)
    lines[1] = json.dumps(record)
    changed = tmp_path / "responses.jsonl"
    changed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    second = import_path(store, SYSTEM, changed)
    assert (second.new_responses, second.new_revisions, second.unchanged) == (0, 1, 2)
    assert store.query("SELECT revision, is_current, batch_id FROM responses WHERE response_id = 'r-002' "
                       "ORDER BY revision") == [(1, False, first.batch_ids[0]), (2, True, second.batch_ids[0])]
    assert store.query("SELECT revision, labels FROM claims WHERE response_id = 'r-002' AND claim_idx = 0 "
                       "ORDER BY revision") == [(1, ["PARTIAL"]), (2, ["CONTRADICTED"])]
    scores = store.query("SELECT revision, is_current, hri FROM scores WHERE response_id = 'r-002' ORDER BY run_id")
    assert [(rev, cur) for rev, cur, _ in scores] == [(1, False), (2, True)]
    assert scores[1][2] == pytest.approx(0.70)  # the new CONTRADICTED v=3 claim fires the floor
    assert scores[0][2] < 0.70


@pytest.mark.parametrize("chunk_size", [1, 2, 5000])
def test_duplicate_ids_in_one_file_are_imported_in_order(store, chunk_size):
    report = import_path(store, SYSTEM, DATA / "duplicate_ids.jsonl", chunk_size=chunk_size)
    assert (report.records, report.new_responses, report.new_revisions, report.unchanged) == (4, 2, 1, 1)
    assert store.query("SELECT revision, is_current FROM responses WHERE response_id = 'twice' ORDER BY revision") \
        == [(1, False), (2, True)]
    assert store.query_one("SELECT s.revision, s.hri FROM scores s WHERE s.is_current AND response_id = 'twice'") \
        == (2, pytest.approx(0.70))


# --- quarantine resolution ---------------------------------------------------------------------------


def test_fixed_records_resolve_their_quarantine_rows(store, tmp_path):
    answers = tmp_path / "answers.jsonl"
    good = '{"response_id": "ok-1", "claims": []}'
    answers.write_text(good + "\n"
                       '{"response_id": "bad-label", "claims": [{"labels": ["HALLUCINATED"]}]}\n'
                       '{"response_id": "was-broken", "claims": [\n')
    first = import_path(store, SYSTEM, answers)
    assert quarantine_rows(store).keys() == {"line 2", "line 3"}
    assert quarantine_rows(store)["line 3"][0] is None

    other = tmp_path / "other.jsonl"  # a valid line 3 in another file resolves nothing
    other.write_text("\n".join(f'{{"response_id": "o-{i}", "claims": []}}' for i in range(3)) + "\n")
    assert import_path(store, SYSTEM, other).resolved == 0

    answers.write_text(good + "\n"
                       '{"response_id": "bad-label", "claims": [{"labels": ["UNSUPPORTED"]}]}\n'
                       '{"response_id": "was-broken", "claims": []}\n')
    second = import_path(store, SYSTEM, answers)
    assert (second.resolved, second.new_responses, second.unchanged, second.quarantined) == (2, 2, 1, 0)
    rows = store.query("SELECT location, status, resolved_batch_id, resolved_at IS NOT NULL, batch_id "
                       "FROM quarantine ORDER BY location")
    assert rows == [("line 2", "resolved", second.batch_ids[0], True, first.batch_ids[0]),
                    ("line 3", "resolved", second.batch_ids[0], True, first.batch_ids[0])]
    assert {r for (r,) in store.query("SELECT response_id FROM responses WHERE is_current")} == \
        {"ok-1", "bad-label", "was-broken", "o-0", "o-1", "o-2"}


def test_a_bad_occurrence_after_a_valid_one_stays_open_and_before_it_is_resolved(store, tmp_path):
    source = tmp_path / "order.jsonl"
    source.write_text('{"response_id": "x", "claims": [{"labels": ["NOPE"]}]}\n'
                      '{"response_id": "x", "claims": []}\n'
                      '{"response_id": "y", "claims": []}\n'
                      '{"response_id": "y", "claims": [{"labels": ["NOPE"]}]}\n')
    report = import_path(store, SYSTEM, source)
    assert (report.records, report.accepted, report.quarantined) == (4, 2, 2)
    assert dict(store.query("SELECT response_id, status FROM quarantine")) == {"x": "resolved", "y": "open"}


def test_reimport_quarantined_fixes_a_record_in_place(store):
    import_path(store, SYSTEM, DATA / "criticality_zero.jsonl")
    qid, raw = store.query_one("SELECT quarantine_id, raw FROM quarantine WHERE status = 'open'")

    still_bad = raw.replace('"criticality": 0', '"criticality": -1')
    with pytest.raises(RecordError) as error:
        reimport_quarantined(store, SYSTEM, qid, still_bad)
    assert [p["field"] for p in error.value.as_dict()["problems"]] == ["claims[0].criticality"]
    assert store.query_one("SELECT status, raw FROM quarantine WHERE quarantine_id = ?", [qid]) == ("open", still_bad)
    assert store.query_one("SELECT count(*) FROM audit_events WHERE action = 'quarantine.fix_failed'")[0] == 1

    report = reimport_quarantined(store, SYSTEM, qid, raw.replace('"criticality": 0', '"criticality": 3'))
    assert (report.accepted, report.new_responses, report.batches[0].resolved) == (1, 1, 1)
    assert store.query_one("SELECT status, resolved_batch_id FROM quarantine WHERE quarantine_id = ?", [qid]) == \
        ("resolved", report.batch_ids[0])
    assert store.query_one("SELECT c.criticality FROM claims c JOIN responses r USING (response_id, revision) "
                           "WHERE r.is_current AND r.response_id = 'crit-zero'") == (3,)
    assert store.query_one("SELECT band FROM scores WHERE is_current AND response_id = 'crit-zero'") is not None
    with pytest.raises(RegisterError, match="already resolved"):
        reimport_quarantined(store, SYSTEM, qid, raw)


def test_reimport_quarantined_accepts_the_rows_of_a_flat_record(store):
    import_path(store, SYSTEM, DATA / "missing_labels_column.csv")
    qid, raw = store.query_one("SELECT quarantine_id, raw FROM quarantine WHERE location = 'row 3'")
    rows = json.loads(raw)
    rows[0]["labels"] = "CONTRADICTED"
    report = reimport_quarantined(store, SYSTEM, qid, json.dumps(rows))
    assert report.new_responses == 1
    assert store.query_one("SELECT labels, criticality FROM claims WHERE response_id = 'r-2'") == (["CONTRADICTED"], 3)
    assert store.query_one("SELECT count(*) FROM quarantine WHERE status = 'open'")[0] == 1  # row 2 still open
