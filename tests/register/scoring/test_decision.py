"""The one decision per answer (issue 33) through the register: stored on every score row with its reasons, read by
the review queue, kept current when the source register, the authority rules or the requesters change, and what the
command line and the exports say."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from register import SYSTEM
from register.console.queries.filters import Filters
from register.console.review import review_queue
from register.governance.registers import RowChanges, list_sources, save_sources
from register.ingest.exporter import export_scores
from register.scoring.authority_rules import save_authority_rules, save_use_cases
from tests.helpers.authority import load_authority_register
from tests.helpers.paths import REPO_ROOT


@pytest.fixture
def register(store, tmp_path):
    return load_authority_register(store, tmp_path)


def decisions(store) -> dict[str, tuple[str, list[str]]]:
    return {rid: (decision, list(reasons)) for rid, decision, reasons in store.query(
        "SELECT response_id, decision, decision_reasons FROM current_scores")}


def queued(store) -> set[str]:
    frame, _ = review_queue(store, Filters(), limit=1000)
    return set(frame["response_id"])


def test_each_failed_check_is_a_reason_and_raises_the_decision(register):
    got = decisions(register)
    assert got["au-ok"] == ("release", ["band Low: release", "mitigation answer: every claim SUPPORTED (1 checked) "
                                        "and none failed Authority: at least release"])
    for rid, source, check, problem in (("au-stale", "src-old", "current", "stale source"),
                                        ("au-expired", "src-expiring", "current", "stale source"),
                                        ("au-restricted", "src-legal-only", "allowed", "forbidden source"),
                                        ("au-weak", "src-blog", "authoritative", "insufficient authority")):
        decision, reasons = got[rid]
        assert decision == "review", rid
        assert (f"Authority: core claim c1 (criticality 2) rests on {source}, which failed {check} ({problem}): "
                "at least review") in reasons, rid
        assert reasons[-1].startswith("mitigation escalate") and reasons[-1].endswith(": at least review"), rid
    # an unknown source is no failed check (the register is incomplete), but the mitigation reads it
    decision, reasons = got["au-unknown"]
    assert not any(r.startswith("Authority:") for r in reasons) and "unknown source" in reasons[-1]
    assert queued(register) == {rid for rid, (d, _) in got.items() if d in ("review", "block")}


def _edit_source(store, source_id: str, **values) -> None:
    row = list_sources(store).set_index("source_id").loc[source_id]
    kept = {c: row[c] for c in ("title", "ref", "source_type", "authority_tier", "publisher", "access_date",
                                "valid_until", "restricted_to", "archive_url", "content_hash", "notes",
                                "superseded_by") if c in row}
    save_sources(store, SYSTEM, RowChanges(updates=[{"key": source_id, "row_version": int(row["row_version"]),
                                                     "values": {"source_id": source_id, **kept, **values}}]))


def test_superseding_a_source_moves_its_answers_decision_and_queue_at_once(register):
    assert decisions(register)["au-ok"][0] == "release" and "au-ok" not in queued(register)
    runs = register.scalar("SELECT count(*) FROM score_runs")
    _edit_source(register, "src-ok", superseded_by="src-expiring")
    decision, reasons = decisions(register)["au-ok"]
    assert decision == "review" and "au-ok" in queued(register)
    assert any("rests on src-ok, which failed current (stale source)" in r for r in reasons)
    run = register.one("SELECT scope, responses_scored FROM score_runs ORDER BY run_id DESC LIMIT 1")
    assert register.scalar("SELECT count(*) FROM score_runs") == runs + 1
    # only the answers citing src-ok (au-ok) are decided again, and the run says why
    assert run == {"scope": "sources:src-ok", "responses_scored": 1}
    assert register.scalar("SELECT count(*) FROM audit_events WHERE action = 'scores.rescore'") >= 1
    # and back: the supersession undone releases it again
    _edit_source(register, "src-ok", superseded_by=None)
    assert decisions(register)["au-ok"][0] == "release" and "au-ok" not in queued(register)


def test_new_requesters_and_new_rules_decide_the_affected_answers_again(register):
    save_use_cases(register, SYSTEM, [{"use_case": "helpdesk", "requester_roles": ["viewer", "reviewer"]}],
                   "reviewers ask too")
    decision, reasons = decisions(register)["au-restricted"]
    assert not any("failed allowed" in r for r in reasons)
    assert register.scalar("SELECT scope FROM score_runs ORDER BY run_id DESC LIMIT 1") == "use-cases:helpdesk"
    version = save_authority_rules(register, SYSTEM, {"rules": {}, "uncategorised": {"max_tier": 5}},
                                   "any tier will do")
    assert register.scalar("SELECT scope FROM score_runs ORDER BY run_id DESC LIMIT 1") == \
        f"authority-rules:v{version}"
    assert not any("failed authoritative" in r for r in decisions(register)["au-weak"][1])


def test_exports_carry_the_decision_and_its_reasons(register, tmp_path):
    export_scores(register, tmp_path / "s.jsonl")
    rows = {r["response_id"]: r for r in map(json.loads, (tmp_path / "s.jsonl").read_text().splitlines())}
    assert rows["au-stale"]["decision"] == "review"
    assert rows["au-stale"]["decision_reasons"] == decisions(register)["au-stale"][1]
    export_scores(register, tmp_path / "s.csv")
    with (tmp_path / "s.csv").open(newline="", encoding="utf-8") as handle:
        by_id = {r["response_id"]: r for r in csv.DictReader(handle)}
    assert by_id["au-ok"]["decision_reasons"] == "; ".join(decisions(register)["au-ok"][1])


def test_the_queue_command_prints_the_review_queue_as_json(tmp_path):
    from register import Store
    from register.scoring.profiles import ensure_default_profile

    db = tmp_path / "queue.duckdb"
    store = Store(db)
    try:
        ensure_default_profile(store, SYSTEM)
        load_authority_register(store, tmp_path)
    finally:
        store.close()

    def run(*args: str) -> str:
        return subprocess.run([sys.executable, "-m", "register", "--db", str(db), *args], cwd=REPO_ROOT,
                              capture_output=True, text=True, check=True).stdout

    rows = json.loads(run("queue", "--json"))
    assert {r["response_id"] for r in rows} == {"au-stale", "au-expired", "au-restricted", "au-weak", "au-unknown",
                                                 "au-contra"}
    for row in rows:
        assert {"response_id", "decision", "decision_reasons", "score", "band", "revision", "use_case",
                "age_days"} <= set(row)
        assert row["decision"] in ("review", "block") and isinstance(row["decision_reasons"], list)
    text = run("queue")
    assert "au-stale" in text and "failed current" in text


def test_an_empty_queue_is_an_empty_json_list(tmp_path):
    db = tmp_path / "empty.duckdb"
    out = subprocess.run([sys.executable, "-m", "register", "--db", str(db), "queue", "--json"], cwd=REPO_ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []
