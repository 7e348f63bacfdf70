"""The session cookie: set and cleared by two routes of the console's server, read on every page run.

The register keeps the sessions (``register.access.web_sessions``); this module moves the cookie between it and the
browser. A Streamlit page run cannot set a response header, so after a login (or a logout) the run issues a
one-time nonce and draws an invisible frame (``show_hand_over``) whose script posts it to ``POST /auth/session``
(``POST /auth/session/end``; not ``/auth/logout``, Streamlit's own route for ``st.logout``); the route redeems the
nonce and answers with ``Set-Cookie``. Mounted by the launcher (``ui/server.py``: ``routes``); ``streamlit run
app.py`` alone has no routes, so there a login lasts as long as its tab.

The cookie ``hri_session``: the session's id and its HMAC (``register.access.session_keys``), ``HttpOnly`` (no
script of the page reads it), ``SameSite=Strict``, ``Path=/``, ``Secure`` when the request came over HTTPS, no
expiry date (it ends with the browser; the register ends the session after ``HRI_SESSION_MINUTES`` without
activity). Strict rather than Lax costs nothing here: Streamlit reads cookies from its websocket's handshake, a
request the console's own page makes (same-site) even when the page was opened from a link on another site.

Forged requests, refused three times over: a route answers only a same-origin ``Origin`` (and
``Sec-Fetch-Site``, when the browser sends it), only a JSON body (another site's form cannot send one; its script
would need a CORS preflight this server never grants), and only an unused nonce of this process (60 s). A page
run trusts the cookie only when its websocket's handshake came from the console's own origin: ``SameSite`` treats
every port of a host as the same site, so another web server on 127.0.0.1 could otherwise open the console's
websocket with the cookie.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import streamlit as st
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from register.access import session_keys, web_sessions
from register.api.errors import error_response
from register.db.store import Store
from register.errors import SessionKeyError

__all__ = ["CLEAR_PATH", "COOKIE_NAME", "SET_PATH", "cookie_session", "hand_over", "routes", "same_origin",
           "show_hand_over"]

COOKIE_NAME = "hri_session"
SET_PATH = "/auth/session"
CLEAR_PATH = "/auth/session/end"
MAX_BODY_BYTES = 1024
HAND_OVER_KEY = "hri_cookie_hand_over"  # session_state: the nonce this tab's page still has to post
_HIDDEN_KEY = "hri_session_cookie"      # the hidden container of the hand-over frame
_DEFAULT_PORTS = {"http": "80", "https": "443"}
_log = logging.getLogger(__name__)


# --- same origin ---------------------------------------------------------------------------------------


def _host_port(netloc: str, scheme: str) -> str | None:
    """``host:port`` of a ``Host`` header or an origin's authority, the scheme's default port filled in."""
    try:
        parts = urlsplit("//" + netloc.strip())
        port = parts.port
    except ValueError:
        return None
    return f"{parts.hostname}:{port or _DEFAULT_PORTS[scheme]}" if parts.hostname else None


def same_origin(origin: str | None, host: str | None, forwarded_host: str | None = None) -> bool:
    """Whether a request's ``Origin`` names the host it was sent to (``Host``, or ``X-Forwarded-Host`` behind a
    reverse proxy that rewrites ``Host``). No ``Origin`` at all is refused: every browser sends one with a POST
    and with a websocket's handshake."""
    if not origin or not host:
        return False
    parts = urlsplit(origin)
    if parts.scheme not in _DEFAULT_PORTS or not parts.netloc or parts.path not in ("", "/"):
        return False
    origin_at = _host_port(parts.netloc, parts.scheme)
    candidates = (host, (forwarded_host or "").split(",")[0])  # a proxy chain's first host is the browser's
    return origin_at is not None and any(origin_at == _host_port(c, parts.scheme) for c in candidates if c.strip())


def _request_is_ours(request: Request) -> bool:
    headers = request.headers
    if headers.get("sec-fetch-site", "same-origin") != "same-origin":
        return False
    return same_origin(headers.get("origin"), headers.get("host"), headers.get("x-forwarded-host"))


def _secure(request: Request) -> bool:
    return request.url.scheme == "https" or request.headers.get("x-forwarded-proto", "").lower() == "https"


# --- the routes ----------------------------------------------------------------------------------------


async def _nonce(request: Request) -> str | Response:
    """The posted nonce, or the error answer."""
    if not _request_is_ours(request):
        return error_response(403, "forbidden", "this request did not come from the console's own page")
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        return error_response(415, "unsupported", "the body must be JSON: {\"nonce\": \"...\"}")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            return error_response(413, "too_large", f"the body is larger than {MAX_BODY_BYTES} bytes")
    try:
        nonce = json.loads(body).get("nonce")
    except (ValueError, AttributeError):
        nonce = None
    if not isinstance(nonce, str) or not nonce:
        return error_response(422, "invalid", "the body must be JSON: {\"nonce\": \"...\"}", "nonce")
    return nonce


def _refused() -> Response:
    return error_response(403, "forbidden", "the hand-over is unknown, used or expired: log in again", "nonce")


def routes(get_store: Callable[[], Store]) -> list[BaseRoute]:
    """``POST /auth/session`` (sets the cookie of a session just started) and ``POST /auth/session/end`` (clears it
    after the session ended); ``get_store`` returns the console's one Store."""

    async def set_cookie(request: Request) -> Response:
        nonce = await _nonce(request)
        if isinstance(nonce, Response):
            return nonce
        store = get_store()
        hand_over = web_sessions.COOKIE_NONCES.redeem(nonce, "set", store)
        if hand_over is None or hand_over.session_id is None:
            return _refused()
        session = await run_in_threadpool(web_sessions.get, store, hand_over.session_hash)
        if session is None or session.ended_at is not None:
            return _refused()
        try:
            key = await run_in_threadpool(session_keys.session_key, store.path)
        except SessionKeyError as error:
            _log.error("session cookie not set: %s", error)
            return error_response(503, "unavailable", str(error))
        response = Response(status_code=204, headers={"Cache-Control": "no-store"})
        response.set_cookie(COOKIE_NAME, session_keys.sign(key, hand_over.session_id), path="/", httponly=True,
                            samesite="strict", secure=_secure(request))
        return response

    async def clear_cookie(request: Request) -> Response:
        nonce = await _nonce(request)
        if isinstance(nonce, Response):
            return nonce
        if web_sessions.COOKIE_NONCES.redeem(nonce, "clear", get_store()) is None:
            return _refused()
        response = Response(status_code=204, headers={"Cache-Control": "no-store"})
        response.delete_cookie(COOKIE_NAME, path="/", httponly=True, samesite="strict", secure=_secure(request))
        return response

    return [Route(SET_PATH, set_cookie, methods=["POST"]), Route(CLEAR_PATH, clear_cookie, methods=["POST"])]


# --- the page's side -----------------------------------------------------------------------------------


def hand_over(store: Store, purpose: web_sessions.Purpose, digest: str, session_id: str | None = None) -> None:
    """Have this tab's next page runs post a nonce that sets (``"set"``, with the new session's id) or clears
    (``"clear"``) the cookie (``show_hand_over`` draws it)."""
    nonce = web_sessions.COOKIE_NONCES.issue(store, purpose, digest, session_id)
    st.session_state[HAND_OVER_KEY] = {"nonce": nonce, "path": SET_PATH if purpose == "set" else CLEAR_PATH}


def _script(path: str, nonce: str) -> str:
    body = json.dumps({"nonce": nonce})
    return ("<script>fetch(" + json.dumps(path) + ", {method: 'POST', credentials: 'same-origin', cache: 'no-store', "
            "headers: {'Content-Type': 'application/json'}, body: " + json.dumps(body) + "});</script>")


def show_hand_over() -> None:
    """Draw the invisible frame that posts this tab's pending nonce, while it can still be redeemed (the same frame
    on every run until then: the browser loads it once)."""
    pending: dict[str, Any] | None = st.session_state.get(HAND_OVER_KEY)
    if pending is None:
        return
    if not web_sessions.COOKIE_NONCES.pending(pending["nonce"]):
        st.session_state.pop(HAND_OVER_KEY, None)
        return
    # the block and the wrapper Streamlit puts around it: a wrapper left in the page's flex column would still take
    # a gap of its own above the page (display: none takes an element out of the flex layout)
    st.html(f"<style>.st-key-{_HIDDEN_KEY}, [data-testid='stLayoutWrapper']:has(> .st-key-{_HIDDEN_KEY}) "
            "{display: none}</style>")
    with st.container(key=_HIDDEN_KEY):
        # a frame of the page's own origin (its sandbox allows same-origin): the post carries the page's Origin and
        # its answer's Set-Cookie lands in the browser's cookie jar for the console
        st.iframe(_script(pending["path"], pending["nonce"]), height=1, alt="session cookie")


def cookie_session(store: Store) -> str | None:
    """The ``session_hash`` of the session this tab's cookie names: present in the websocket's handshake (an
    HttpOnly cookie travels with it), signed with this database's key, the handshake from the console's own
    origin. None otherwise (AppTest has no cookies)."""
    try:
        value = st.context.cookies.get(COOKIE_NAME)
        headers = st.context.headers
    except Exception:  # noqa: BLE001 - no request context (a bare run)
        return None
    if not value or not same_origin(headers.get("Origin"), headers.get("Host"), headers.get("X-Forwarded-Host")):
        return None
    try:
        key = session_keys.session_key(store.path)
    except SessionKeyError as error:
        _log.error("session cookie not read: %s", error)
        return None
    session_id = session_keys.verify(key, value)
    return None if session_id is None else web_sessions.session_hash(session_id)
