"""What every operation shares: the token (401), the one error shape, the size limit of a JSON body (413), the
OpenAPI 3.1 document (every route in it, every schema it names defined) and the page of docs."""

from __future__ import annotations

import json

import pytest

from register import SYSTEM
from register.access.identity import set_disabled
from register.api.app import api as declared_api


def test_health_and_the_documents_need_no_token(api):
    assert api.client.get("/api/v1/health").json() == {"status": "ok", "api_version": "1.0.0"}
    assert api.client.get("/api/v1/openapi.json").status_code == 200
    docs = api.client.get("/api/v1/docs")
    assert docs.status_code == 200 and "<script" not in docs.text and "/api/v1/responses/{response_id}" in docs.text


def test_no_token_a_wrong_token_or_a_disabled_account_is_401_in_the_one_shape(api):
    for headers in ({}, {"Authorization": "Basic abc"}, {"Authorization": "Bearer hri_nope_nope"},
                    {"Authorization": f"Bearer {api.tokens['viewer']}x"}):
        answer = api.client.get("/api/v1/responses", headers=headers)
        assert answer.status_code == 401, headers
        assert set(answer.json()) == {"error"} and answer.json()["error"]["code"] == "unauthenticated"
        assert answer.headers["www-authenticate"] == "Bearer"
    set_disabled(api.store, SYSTEM, "test-viewer", True)
    assert api.client.get("/api/v1/responses", headers=api.headers("viewer")).status_code == 401


def test_an_unknown_path_and_a_wrong_method_answer_in_the_one_shape(api):
    missing = api.client.get("/api/v1/nothing-here", headers=api.headers("viewer"))
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    wrong = api.client.delete("/api/v1/responses", headers=api.headers("viewer"))
    assert wrong.status_code in (404, 405) and "error" in wrong.json()


def test_a_json_body_over_the_limit_is_413_before_it_is_read(api):
    big = b'{"text": "' + b"x" * (2 << 20) + b'"}'
    answer = api.client.post("/api/v1/feedback", content=big, headers=api.headers("viewer"))
    assert answer.status_code == 413 and answer.json()["error"]["code"] == "too_large"


def test_the_openapi_document_names_every_operation_and_defines_every_schema(api):
    doc = api.client.get("/api/v1/openapi.json").json()
    assert doc["openapi"] == "3.1.0"
    for op in declared_api().operations:
        entry = doc["paths"]["/api/v1" + op.path][op.method.lower()]
        assert str(op.status) in entry["responses"]
        if not op.public:
            assert {"401", "403", "422"} <= set(entry["responses"])
    refs = set()

    def walk(node):
        if isinstance(node, dict):
            if "$ref" in node:
                refs.add(node["$ref"].rsplit("/", 1)[1])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc)
    assert refs and refs <= set(doc["components"]["schemas"])
    needed = {("/api/v1/imports", "post"), ("/api/v1/responses", "get"), ("/api/v1/responses/{response_id}", "get"),
              ("/api/v1/queue", "get"), ("/api/v1/responses/{response_id}/decisions", "post"),
              ("/api/v1/sources/{source_id}", "get"), ("/api/v1/sources/{source_id}", "put"),
              ("/api/v1/checklist/runs", "post"), ("/api/v1/feedback", "post"), ("/api/v1/audit/verify", "get"),
              ("/api/v1/overview", "get")}
    assert needed <= {(path, method) for path, methods in doc["paths"].items() for method in methods}


# every operation that needs a token: (method, path, a request its caller may make, a request refused as invalid,
# the role just below the operation's permission or None when every account may: a viewer reads)
_RID = "__rid__"
OPERATIONS = [
    ("POST", "/imports", {"params": {"format": "jsonl"}, "content": b'{"response_id": "x1", "claims": []}\n'},
     {"params": {"format": "xml"}, "content": b"x"}, "viewer"),
    ("GET", "/responses", {}, {"params": {"limit": 0}}, None),
    ("GET", f"/responses/{_RID}", {}, {"params": {"revision": 0}}, None),
    ("GET", "/queue", {}, {"params": {"limit": 0}}, None),
    ("POST", f"/responses/{_RID}/decisions", {"json": {"revision": 1, "decision": "escalate", "reason": "r"}},
     {"json": {"revision": 1, "decision": "escalate"}}, "annotator"),
    ("GET", "/sources/__sid__", {}, {"params": {"colour": "red"}}, None),
    ("PUT", "/sources/api-table-source", {"json": {"title": "T", "ref": "https://example.org/t",
                                                   "source_type": "web page", "authority_tier": 3,
                                                   "access_date": "2026-11-30"}},
     {"json": {"authority_tier": "high"}}, "annotator"),
    ("POST", "/checklist/runs", {"json": {"record": False}}, {"json": {"record": "maybe"}}, "annotator"),
    ("POST", "/feedback", {"json": {"response_id": _RID, "text": "t", "severity": 0.2}},
     {"json": {"response_id": _RID, "text": "t", "severity": 2}}, None),
    ("GET", "/audit/verify", {}, {"params": {"colour": "red"}}, "annotator"),
    ("GET", "/overview", {}, {"params": {"profile_version": 0}}, None),
]


def _request(api, method, path, role, kwargs):
    rid = api.store.scalar("SELECT response_id FROM scores WHERE is_current AND decision = 'review' "
                           "AND response_id NOT IN (SELECT response_id FROM review_decisions) "
                           "ORDER BY response_id LIMIT 1")  # not one the demo's reviewer decided
    sid = api.store.scalar("SELECT source_id FROM sources WHERE NOT deleted AND (restricted_to IS NULL OR "
                           "len(restricted_to) = 0) ORDER BY source_id LIMIT 1")
    path = path.replace(_RID, rid).replace("__sid__", sid)
    kwargs = json.loads(json.dumps({k: v for k, v in kwargs.items() if k != "content"}).replace(_RID, rid)) | (
        {"content": kwargs["content"]} if "content" in kwargs else {})
    headers = api.headers(role) if role else {}
    return api.client.request(method, "/api/v1" + path, headers=headers, **kwargs)


def test_the_table_names_every_operation_that_needs_a_token():
    declared = {(op.method, op.path) for op in declared_api().operations if not op.public}
    assert {(method, path.replace(_RID, "{response_id}").replace("__sid__", "{source_id}").replace(
        "api-table-source", "{source_id}")) for method, path, *_ in OPERATIONS} == declared


@pytest.mark.parametrize(("method", "path", "good", "bad", "below"), OPERATIONS,
                         ids=[f"{m} {p}" for m, p, *_ in OPERATIONS])
def test_each_operation_succeeds_and_is_401_403_422_as_it_should(api, method, path, good, bad, below):
    allowed = "reviewer"  # reviewer holds every permission these need but the admin's (none here)
    success = _request(api, method, path, allowed, good)
    assert success.status_code in (200, 201), success.text
    unauthenticated = _request(api, method, path, None, good)
    assert unauthenticated.status_code == 401 and unauthenticated.json()["error"]["code"] == "unauthenticated"
    if below is not None:
        forbidden = _request(api, method, path, below, good)
        assert forbidden.status_code == 403 and forbidden.json()["error"]["code"] == "forbidden", forbidden.text
    invalid = _request(api, method, path, allowed, bad)
    assert invalid.status_code == 422 and invalid.json()["error"]["field"], invalid.text
