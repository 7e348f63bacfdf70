"""The poison pill of issue 10: one record must never stop the scoring of the others.

Two claims of criticality 2147483647 once made the SQL scorer's ``total_criticality::INTEGER`` cast fail,
and from then on every import's scoring step and every ``rescore`` failed. Now (a) such a record is
refused at the door (``MAX_CRITICALITY``), (b) the scorer's sums cannot overflow (BIGINT columns, no
32-bit cast), and (c) a response the scorer cannot score -- a record stored before the bound existed,
or any result outside [0, 1] -- fails closed: its score row says why (``scoring_failure``), carries the
worst-case numbers and the action ``review``, so it sits in the review queue, while every other
response is scored as usual; ``rescore`` and ``status`` name it by response id.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from hri_core import Claim, Label, Response, default_profile, parse_response, score_response
from hri_core.models import MAX_CRITICALITY
from register import SYSTEM
from register.console.queries.filters import Filters
from register.console.review import review_queue
from register.db.store import Change, utc_now
from register.ingest.importer import import_path
from register.ingest.records import insert_responses
from register.scoring.profiles import active_profile
from register.scoring.scorer import rescore
from tests.helpers.parity import assert_matches, bulk_scores, load

AS_OF = datetime(2026, 12, 1, tzinfo=UTC)
INT_MAX = 2_147_483_647
POISON = {"response_id": "poison", "claims": [{"labels": ["SUPPORTED"], "criticality": INT_MAX},
                                              {"labels": ["CONTRADICTED"], "criticality": INT_MAX}]}
GOOD = [{"response_id": f"good-{i}", "claims": [{"labels": ["PARTIAL"], "criticality": 2},
                                                {"labels": ["SUPPORTED"]}]} for i in range(3)]


def write_jsonl(path, records) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def store_unvalidated(store, record: dict) -> None:
    """Store a record the way an earlier version of the importer did, before criticality was bounded."""
    claims = tuple(Claim.model_construct(claim_id=f"{record['response_id']}-{i + 1}", text=None,
                                         labels=tuple(Label(x) for x in c["labels"]), dimensions=None,
                                         criticality=c["criticality"], source_id=None, span=None, feedback_at=None,
                                         feedback_count=None, feedback_resolved=None)
                   for i, c in enumerate(record["claims"]))
    response = Response.model_construct(response_id=record["response_id"], use_case=None, model=None, created_at=None,
                                        question=None, answer=None, stakes=None, claims=claims)

    def fn(tx) -> Change:
        batch = tx.scalar("SELECT nextval('seq_batch')")
        tx.execute("INSERT INTO import_batches (batch_id, source_name, format, started_at, finished_at, actor_name, "
                   "records_total, accepted, new_responses) VALUES (?, 'old.jsonl', 'jsonl', ?, ?, 'old', 1, 1, 1)",
                   [batch, utc_now(), utc_now()])
        insert_responses(tx, batch, utc_now(), [(response, json.dumps(record))])
        return Change("import_batch", str(batch), None, {})

    store.write(SYSTEM, "import.batch", fn)


def current(store) -> dict[str, tuple]:
    return {rid: tuple(rest) for rid, *rest in store.query(
        "SELECT response_id, score, band, action, scoring_failure FROM scores WHERE is_current")}


def test_the_poison_pill_is_refused_at_the_door_and_everything_else_imports_and_scores(register_cli, tmp_path):
    cli = register_cli()
    source = tmp_path / "poison.jsonl"
    write_jsonl(source, [GOOD[0], POISON, GOOD[1]])
    imported = cli("import", "--json", "--quiet", source)
    assert imported.returncode == 2, imported.stderr
    report = json.loads(imported.stdout)
    assert (report["records"], report["accepted"], report["quarantined"]) == (3, 2, 1)
    (record,) = report["quarantined_records"]
    assert (record["location"], record["response_id"]) == ("line 2", "poison")
    assert [p["field"] for p in record["problems"]] == ["claims[0].criticality", "claims[1].criticality"]
    assert all(f"{MAX_CRITICALITY:,}" in p["message"] for p in record["problems"])
    assert report["batches"][0]["scored"] == 2

    later = tmp_path / "later.jsonl"
    write_jsonl(later, [GOOD[2]])
    assert cli("import", "--quiet", later).returncode == 0
    assert cli("rescore").returncode == 0
    status = cli("status").stdout
    assert "responses: 3" in status and "current_scores: 3" in status and "scoring_failures: 0" in status


def test_a_poison_pill_already_stored_is_isolated_and_sent_to_review(store, tmp_path):
    write_jsonl(tmp_path / "good.jsonl", GOOD[:2])
    import_path(store, SYSTEM, tmp_path / "good.jsonl")
    store_unvalidated(store, POISON)

    summary = rescore(store, SYSTEM, active_profile(store), as_of=AS_OF)  # raised a conversion error before
    assert summary.responses_scored == 3
    assert summary.failed == {"poison": "claims: a criticality is outside 1 to 1,000 (stored before this bound "
                                        "existed); re-import the response with a valid criticality"}
    scores = current(store)
    assert scores["poison"][:3] == (100.0, "Critical", "review")
    assert "criticality" in scores["poison"][3]
    for rid in ("good-0", "good-1"):
        assert scores[rid][3] is None and scores[rid][2] != "review"
    total = store.query_one("SELECT total_criticality FROM scores WHERE is_current AND response_id = 'poison'")[0]
    assert total == 2 * INT_MAX  # the sum itself is exact, no 32-bit cast

    # later imports keep scoring, and the failed response waits in the review queue, saying why
    write_jsonl(tmp_path / "later.jsonl", [GOOD[2]])
    later = import_path(store, SYSTEM, tmp_path / "later.jsonl")
    assert later.batches[0].scored == 1
    queue, size = review_queue(store, Filters(), now=AS_OF)
    why = dict(zip(queue["response_id"], queue["why"], strict=True))
    assert why["poison"].startswith("decision review: band Critical: review")
    assert "scoring failed (claims: a criticality is outside" in why["poison"]


def test_rescore_and_status_name_the_failed_response(register_cli, tmp_path):
    from register.db.store import Store

    cli = register_cli()
    source = tmp_path / "good.jsonl"
    write_jsonl(source, GOOD[:1])
    assert cli("import", "--quiet", source).returncode == 0
    store = Store(cli.db)
    try:
        store_unvalidated(store, POISON)
    finally:
        store.close()
    done = cli("rescore")
    assert done.returncode == 2
    assert "2 responses scored" in done.stdout
    assert "1 response could not be scored and went to review: poison (claims: a criticality" in done.stderr
    status = cli("status").stdout
    assert "current_scores: 2" in status and "scoring_failures: 1" in status
    assert "  poison: claims: a criticality is outside 1 to 1,000" in status
    assert cli("audit", "verify").returncode == 0


def test_sql_and_python_agree_at_the_criticality_bound(store):
    records = [{"response_id": "heavy", "claims": [{"labels": ["CONTRADICTED"], "criticality": MAX_CRITICALITY}] * 1
                + [{"labels": ["SUPPORTED"], "criticality": MAX_CRITICALITY, "claim_id": f"s-{i}"} for i in range(50)]
                + [{"labels": ["UNSUPPORTED"], "criticality": 1}]}]
    load(store, records)
    row = bulk_scores(store, default_profile(), AS_OF)["heavy"]
    assert row["scoring_failure"] is None
    assert_matches(row, score_response(parse_response(records[0]), default_profile(), AS_OF))


@pytest.mark.parametrize(("column", "value", "reason"), [
    ("label_mask", 0, "no label"),
    ("label_mask", 1 << 20, "no label"),
    ("dim_mask", 1 << 12, "dimension"),
    ("criticality", 0, "criticality"),
    ("criticality", -5, "criticality"),
])
def test_stored_claims_outside_the_model_fail_closed(store, column, value, reason):
    load(store, GOOD[:2])

    def corrupt(tx) -> Change:  # a claim row no import writes (a hand edit, or a future version's label)
        tx.execute(f"UPDATE claims SET {column} = ? WHERE response_id = 'good-0' AND claim_idx = 0", [value])
        return Change("claims", "good-0", None, {column: value})

    store.write(SYSTEM, "test.corrupt", corrupt)
    rows = bulk_scores(store, default_profile(), AS_OF)
    assert reason in rows["good-0"]["scoring_failure"]
    assert (rows["good-0"]["hri"], rows["good-0"]["action"]) == (1.0, "review")
    assert rows["good-1"]["scoring_failure"] is None


def test_the_checklist_names_a_score_that_failed_closed_instead_of_crashing(store, tmp_path):
    from register.governance.checks import run_checks
    from register.governance.evidence import ensure_default_rules

    ensure_default_rules(store, SYSTEM)
    write_jsonl(tmp_path / "good.jsonl", GOOD[:2])
    import_path(store, SYSTEM, tmp_path / "good.jsonl")
    store_unvalidated(store, POISON)
    rescore(store, SYSTEM, active_profile(store), as_of=AS_OF)
    results = run_checks(store, sample=50)  # the sample takes every response, the poison one too
    (check,) = [c for c in results["checks"] if c["no"] == 7]
    assert check["status"] == "fail"
    assert [(f["entity_id"], f["reason"]) for f in check["offending"]] == [
        ("poison", "could not be scored (sent to review): claims: a criticality is outside 1 to 1,000 (stored "
                   "before this bound existed); re-import the response with a valid criticality")]


def test_an_export_says_which_scores_failed_closed(store, tmp_path):
    from register.ingest.exporter import export_scores

    write_jsonl(tmp_path / "good.jsonl", GOOD[:1])
    import_path(store, SYSTEM, tmp_path / "good.jsonl")
    store_unvalidated(store, POISON)
    rescore(store, SYSTEM, active_profile(store), as_of=AS_OF)
    export_scores(store, tmp_path / "scores.jsonl")
    rows = {r["response_id"]: r for r in map(json.loads, (tmp_path / "scores.jsonl").read_text().splitlines())}
    assert rows["good-0"]["scoring_failure"] is None
    assert rows["poison"]["scoring_failure"].startswith("claims: a criticality is outside 1 to 1,000")
