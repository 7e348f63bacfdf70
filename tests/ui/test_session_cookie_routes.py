"""The session cookie's routes (``POST /auth/session``, ``POST /auth/session/end``) under Starlette's TestClient: a
nonce becomes an HttpOnly, SameSite=Strict cookie once; a replayed, expired or foreign nonce, another origin, a form
post or an oversized body is refused; and the origin check the page run applies to the websocket's handshake."""

from __future__ import annotations

from datetime import timedelta

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from register import Actor
from register.access import session_keys, web_sessions
from register.db.store import utc_now
from tests.helpers.actors import enrol
from ui.framework import session_cookie

ALICE = Actor("alice", "reviewer")
OURS = {"Origin": "http://testserver"}  # TestClient's requests go to http://testserver


@pytest.fixture
def store(store):
    enrol(store, ALICE)
    return store


@pytest.fixture
def client(store):
    with TestClient(Starlette(routes=session_cookie.routes(lambda: store))) as client:
        yield client


def _set_nonce(store) -> tuple[web_sessions.Started, str]:
    started = web_sessions.start(store, ALICE, "local")
    return started, web_sessions.COOKIE_NONCES.issue(store, "set", started.session.session_hash, started.session_id)


def _post(client, path: str, nonce: str, headers: dict | None = None):
    return client.post(path, json={"nonce": nonce}, headers=OURS if headers is None else headers)


def test_a_nonce_becomes_an_httponly_samesite_cookie_once(client, store):
    started, nonce = _set_nonce(store)
    answer = _post(client, session_cookie.SET_PATH, nonce)
    assert answer.status_code == 204, answer.text
    cookie = answer.headers["set-cookie"]
    attributes = {part.strip().split("=")[0].lower() for part in cookie.split(";")}
    assert {"httponly", "samesite", "path"} <= attributes and "samesite=strict" in cookie.lower()
    assert "path=/" in cookie.lower() and "secure" not in attributes  # plain http: a Secure cookie would be dropped
    assert "expires" not in attributes and "max-age" not in attributes  # it ends with the browser
    assert answer.headers["cache-control"] == "no-store"
    value = cookie.split(";")[0].split("=", 1)[1].strip('"')
    assert session_keys.verify(session_keys.session_key(store.path), value) == started.session_id
    replay = _post(client, session_cookie.SET_PATH, nonce)
    assert replay.status_code == 403 and "set-cookie" not in replay.headers
    assert replay.json()["error"]["field"] == "nonce"


def test_behind_https_the_cookie_is_secure(client, store):
    _, nonce = _set_nonce(store)
    answer = _post(client, session_cookie.SET_PATH, nonce, {**OURS, "X-Forwarded-Proto": "https"})
    assert answer.status_code == 204 and "secure" in answer.headers["set-cookie"].lower()


@pytest.mark.parametrize("headers", [
    {},                                                        # no Origin at all
    {"Origin": "http://evil.example"},                         # another site
    {"Origin": "http://testserver:8080"},                      # another port of the same host: same site, not ours
    {"Origin": "null"},                                        # a sandboxed or file page
    {**OURS, "Sec-Fetch-Site": "cross-site"},                  # the browser says so
    {**OURS, "Sec-Fetch-Site": "same-site"},
], ids=["no origin", "other site", "other port", "null origin", "cross-site fetch", "same-site fetch"])
def test_a_post_from_another_origin_is_refused_and_leaves_the_nonce_unused(client, store, headers):
    _, nonce = _set_nonce(store)
    refused = _post(client, session_cookie.SET_PATH, nonce, headers)
    assert refused.status_code == 403 and "set-cookie" not in refused.headers
    assert refused.json()["error"]["code"] == "forbidden"
    assert _post(client, session_cookie.SET_PATH, nonce).status_code == 204  # the console's own page still can


def test_only_a_small_json_body_is_read(client, store):
    _, nonce = _set_nonce(store)
    form = client.post(session_cookie.SET_PATH, data={"nonce": nonce}, headers=OURS)  # what a cross-site form sends
    assert form.status_code == 415
    big = client.post(session_cookie.SET_PATH, content=b'{"nonce": "' + b"x" * 5000 + b'"}',
                      headers={**OURS, "Content-Type": "application/json"})
    assert big.status_code == 413
    for body in (b"[]", b"not json", b'{"nonce": 5}', b"{}"):
        bad = client.post(session_cookie.SET_PATH, content=body, headers={**OURS, "Content-Type": "application/json"})
        assert bad.status_code == 422 and bad.json()["error"]["field"] == "nonce", body
    assert client.get(session_cookie.SET_PATH, headers=OURS).status_code == 405
    assert _post(client, session_cookie.SET_PATH, nonce).status_code == 204


def test_a_nonce_of_an_ended_session_an_expired_one_or_a_clearing_one_sets_nothing(client, store):
    started, nonce = _set_nonce(store)
    web_sessions.end(store, ALICE, started.session.session_hash)
    assert _post(client, session_cookie.SET_PATH, nonce).status_code == 403
    started, _ = _set_nonce(store)
    stale = web_sessions.COOKIE_NONCES.issue(store, "set", started.session.session_hash, started.session_id,
                                        now=utc_now() - timedelta(seconds=61))
    assert _post(client, session_cookie.SET_PATH, stale).status_code == 403
    clearing = web_sessions.COOKIE_NONCES.issue(store, "clear", started.session.session_hash)
    assert _post(client, session_cookie.SET_PATH, clearing).status_code == 403


def test_logout_clears_the_cookie_with_a_nonce_of_its_own(client, store):
    started, nonce = _set_nonce(store)
    assert _post(client, session_cookie.SET_PATH, nonce).status_code == 204
    web_sessions.end(store, ALICE, started.session.session_hash)
    clearing = web_sessions.COOKIE_NONCES.issue(store, "clear", started.session.session_hash)
    assert _post(client, session_cookie.CLEAR_PATH, clearing, {"Origin": "http://evil.example"}).status_code == 403
    cleared = _post(client, session_cookie.CLEAR_PATH, clearing)
    assert cleared.status_code == 204
    cookie = cleared.headers["set-cookie"].lower()
    assert cookie.startswith(f"{session_cookie.COOKIE_NAME}=") and "max-age=0" in cookie and "httponly" in cookie
    assert _post(client, session_cookie.CLEAR_PATH, clearing).status_code == 403  # single use
    assert _post(client, session_cookie.CLEAR_PATH, "made-up").status_code == 403


@pytest.mark.parametrize("origin, host, forwarded, ok", [
    ("http://127.0.0.1:8501", "127.0.0.1:8501", None, True),
    ("http://LOCALHOST:8501", "localhost:8501", None, True),
    ("https://hri.example.com", "hri.example.com:443", None, True),       # the default port spelled out
    ("https://hri.example.com", "127.0.0.1:8501", "hri.example.com", True),  # behind a proxy that rewrites Host
    ("http://127.0.0.1:9999", "127.0.0.1:8501", None, False),               # another server on the same host
    ("http://127.0.0.1:8501", "127.0.0.1:8501:1", None, False),
    ("http://evil.example", "127.0.0.1:8501", "127.0.0.1:8501", False),
    (None, "127.0.0.1:8501", None, False),
    ("http://127.0.0.1:8501", None, None, False),
    ("null", "127.0.0.1:8501", None, False),
    ("ftp://127.0.0.1:8501", "127.0.0.1:8501", None, False),
    ("http://127.0.0.1:8501/path", "127.0.0.1:8501", None, False),
])
def test_same_origin(origin, host, forwarded, ok):
    assert session_cookie.same_origin(origin, host, forwarded) is ok
