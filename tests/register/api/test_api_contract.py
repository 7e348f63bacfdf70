"""What every operation shares: the token (401), the one error shape, the size limit of a JSON body (413), the
OpenAPI 3.1 document (every route in it, every schema it names defined) and the page of docs."""

from __future__ import annotations

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
