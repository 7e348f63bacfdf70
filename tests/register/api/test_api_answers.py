"""The answers' operations against the register read independently: the list and its paging, one answer, the queue,
a decision (with its audit event under the token's account), the overview's figures."""

from __future__ import annotations

import argparse
import json

import pytest

from register import SYSTEM
from register.access.identity import set_role
from register.cli.scoring import cmd_queue


def _current_count(store, where: str = "true", params=()) -> int:
    return store.scalar(f"SELECT count(*) FROM scores WHERE is_current AND {where}", list(params))


def test_responses_total_and_every_page_by_cursor(api):
    store = api.store
    expected = {r[0] for r in store.query("SELECT response_id FROM scores WHERE is_current AND band = 'High' "
                                          "AND NOT no_claims")}
    assert expected, "the demo set has High answers"
    seen, cursor, pages = [], None, 0
    while True:
        params = {"band": "High", "limit": 7, **({"cursor": cursor} if cursor else {})}
        answer = api.client.get("/api/v1/responses", params=params, headers=api.headers("viewer"))
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["total"] == len(expected)
        assert all(item["band"] == "High" for item in body["items"])
        seen += [item["response_id"] for item in body["items"]]
        pages += 1
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == len(expected) and set(seen) == expected
    assert pages == -(-len(expected) // 7)


def test_a_cursor_with_other_filters_and_bad_parameters_are_422_naming_the_field(api):
    first = api.client.get("/api/v1/responses", params={"limit": 2}, headers=api.headers("viewer")).json()
    assert first["next_cursor"]
    cases = [({"limit": 2, "band": "Low", "cursor": first["next_cursor"]}, "cursor"),
             ({"cursor": "not-a-cursor"}, "cursor"), ({"limit": 0}, "limit"), ({"limit": 501}, "limit"),
             ({"sort": "question; DROP TABLE scores"}, "sort"), ({"colour": "red"}, "colour"),
             ({"date_from": "yesterday"}, "date_from"), ({"decision": "maybe"}, "decision.0")]
    for params, field in cases:
        answer = api.client.get("/api/v1/responses", params=params, headers=api.headers("viewer"))
        assert answer.status_code == 422, (params, answer.text)
        assert answer.json()["error"]["field"] == field, (params, answer.json())
        assert answer.json()["error"]["code"] == "invalid"


def test_the_decision_filter_selects_the_answers_decided_so(api):
    expected = _current_count(api.store, "decision = 'block'")
    body = api.client.get("/api/v1/responses", params={"decision": "block", "limit": 500},
                          headers=api.headers("viewer")).json()
    assert body["total"] == expected
    assert {item["decision"] for item in body["items"]} <= {"block"}


def test_one_answer_carries_its_score_decision_reasons_and_claims(api):
    store = api.store
    row = store.one("SELECT response_id, revision, band, decision, decision_reasons, action, score FROM scores "
                    "WHERE is_current AND decision = 'review' AND NOT no_claims ORDER BY response_id LIMIT 1")
    claims = store.scalar("SELECT count(*) FROM claims c JOIN responses r USING (response_key) "
                          "WHERE r.response_id = ? AND r.is_current", [row["response_id"]])
    answer = api.client.get(f"/api/v1/responses/{row['response_id']}", headers=api.headers("viewer"))
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["response_id"], body["revision"], body["is_current"]) == (row["response_id"], row["revision"], True)
    score = body["score"]
    assert (score["band"], score["decision"], score["action"]) == (row["band"], row["decision"], row["action"])
    assert score["decision_reasons"] == list(row["decision_reasons"]) and score["decision_reasons"]
    assert score["score"] == pytest.approx(row["score"])
    assert len(body["claims"]) == claims > 0
    assert all("labels" in c and "source_id" in c and "authority" in c for c in body["claims"])


def test_an_unknown_answer_or_revision_is_404(api):
    missing = api.client.get("/api/v1/responses/no-such-answer", headers=api.headers("viewer"))
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    rid = api.store.scalar("SELECT response_id FROM scores WHERE is_current ORDER BY response_id LIMIT 1")
    old = api.client.get(f"/api/v1/responses/{rid}", params={"revision": 99}, headers=api.headers("viewer"))
    assert old.status_code == 404 and "revision 99" in old.json()["error"]["message"]


def test_the_queue_is_the_command_lines_queue(api, capsys):
    body = api.client.get("/api/v1/queue", params={"limit": 500}, headers=api.headers("viewer")).json()
    assert cmd_queue(api.store, argparse.Namespace(json=True)) == 0  # `python -m register queue --json`
    cli = json.loads(capsys.readouterr().out)
    assert body["total"] == len(cli) > 0
    fields = ("response_id", "revision", "use_case", "decision", "decision_reasons", "band", "action")
    assert [{k: i[k] for k in fields} for i in body["items"]] == [{k: i[k] for k in fields} for i in cli][:500]


def test_a_reviewers_decision_is_recorded_and_audited_under_the_tokens_account(api):
    store = api.store
    rid, revision = store.query_one("SELECT response_id, revision FROM scores WHERE is_current AND decision = "
                                    "'review' AND response_id NOT IN (SELECT response_id FROM review_decisions) "
                                    "ORDER BY response_id LIMIT 1")  # not one the demo's reviewer decided
    body = {"revision": revision, "decision": "send_back", "reason": "the cited rate is not in the source"}
    answer = api.client.post(f"/api/v1/responses/{rid}/decisions", json=body, headers=api.headers("reviewer"))
    assert answer.status_code == 201, answer.text
    assert answer.json()["decision_id"] == store.scalar(
        "SELECT decision_id FROM review_decisions WHERE response_id = ? AND decided_by = 'test-reviewer'", [rid])
    assert store.scalar("SELECT count(*) FROM audit_events WHERE action = 'review.decide' "
                        "AND actor_name = 'test-reviewer' AND entity_id = ?", [rid]) == 1
    again = api.client.post(f"/api/v1/responses/{rid}/decisions", json=body, headers=api.headers("reviewer"))
    assert again.status_code == 409 and again.json()["error"]["code"] == "conflict"


def test_decisions_refused_by_role_and_by_field(api):
    store = api.store
    rid, revision = store.query_one("SELECT response_id, revision FROM scores WHERE is_current AND decision = "
                                    "'review' AND response_id NOT IN (SELECT response_id FROM review_decisions) "
                                    "ORDER BY response_id LIMIT 1")  # not one the demo's reviewer decided
    url = f"/api/v1/responses/{rid}/decisions"
    good = {"revision": revision, "decision": "send_back", "reason": "why"}
    viewer = api.client.post(url, json=good, headers=api.headers("viewer"))
    assert viewer.status_code == 403 and viewer.json()["error"]["code"] == "forbidden"
    assert store.scalar("SELECT count(*) FROM audit_events WHERE action = 'denied' AND actor_name = 'test-viewer'") >= 1
    for body, field in (({**good, "decision": "approve"}, "decision"), ({**good, "reason": ""}, "reason"),
                        ({k: v for k, v in good.items() if k != "reason"}, "reason"),
                        ({**good, "revision": 0}, "revision"), ({**good, "extra": 1}, "extra")):
        answer = api.client.post(url, json=body, headers=api.headers("reviewer"))
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["field"] == field
    not_json = api.client.post(url, content=b"{'revision': 1", headers=api.headers("reviewer"))
    assert not_json.status_code == 422
    assert store.scalar("SELECT count(*) FROM review_decisions WHERE response_id = ?", [rid]) == 0


def test_a_role_change_applies_to_the_next_call(api):
    rid, revision = api.store.query_one("SELECT response_id, revision FROM scores WHERE is_current AND decision = "
                                        "'review' AND response_id NOT IN (SELECT response_id FROM review_decisions) "
                                        "ORDER BY response_id LIMIT 1")  # not one the demo's reviewer decided
    set_role(api.store, SYSTEM, "test-reviewer", "viewer")
    answer = api.client.post(f"/api/v1/responses/{rid}/decisions", headers=api.headers("reviewer"),
                             json={"revision": revision, "decision": "send_back", "reason": "why"})
    assert answer.status_code == 403


def test_the_overview_counts_what_the_register_holds(api):
    body = api.client.get("/api/v1/overview", headers=api.headers("viewer")).json()
    assert body["responses"] == _current_count(api.store)
    assert sum(body["band_counts"].values()) == body["responses"]
    filtered = api.client.get("/api/v1/overview", params={"band": "High"}, headers=api.headers("viewer")).json()
    assert filtered["responses"] == _current_count(api.store, "band = 'High' AND NOT no_claims")
