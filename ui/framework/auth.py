"""The login gate and the current user, run by ``ui.framework.shell.page_frame()`` on every page.

Three ways in, in this order:

1. Company identity provider: ``st.login()`` (OIDC) when ``.streamlit/secrets.toml`` has an ``[auth]``
   section; the role comes from ``config/roles.toml`` (``register.access.identity.role_for_identity``) and a
   user it does not map is refused.
2. Local accounts in the database (the embedded default): a login form; a one-time password must be
   changed at the first login.
3. Demo mode (``HRI_DEMO_MODE=1`` only): every page shows a DEMO banner and the login page offers
   "continue as demo viewer / demo reviewer" without a password.

Every way in ends in an account of the ``users`` table (kind ``local``, ``oidc`` or ``demo``;
``register.access.identity.sign_in_external`` makes the other two at their first login), because the
register re-reads the account in every write, and in a web session the register keeps
(``register.access.web_sessions``). The session ends after ``HRI_SESSION_MINUTES`` (default 30) minutes without
any interaction in any of its tabs, at logout (in any tab), or when the account is disabled, its password reset or
its role changed (the session records the account's ``session_generation`` at login): each tab sees it at its next
run. A local or demo login survives a reload and opens in a new tab: its signed, HttpOnly cookie
(``ui.framework.session_cookie``) brings the tab back to its session; a company login comes back through the
identity provider's own cookie. Logins, failures, logouts and expiries are audited by ``register.access``.

A tab logged in without a web session (AppTest sets ``session_state`` directly) keeps the per-tab rules: idle time
counted in the tab, the account re-read on every run.
"""

from __future__ import annotations

import sys
import time

import streamlit as st

from register import SYSTEM, Actor, RegisterError
from register.access import identity, web_sessions
from register.access.permissions import Permission, allowed
from register.settings import Settings, settings
from ui.framework import data, session_cookie
from ui.framework.browser_preload import preload_chart_library
from ui.framework.errors import show_error
from ui.framework.text import escape_markdown

SESSION_KEY = "hri_auth"
COOKIE_TRIED_KEY = "hri_cookie_tried"  # the tab's handshake cookie was looked at (it never changes in a tab)
DEMO_ACTORS = {"viewer": Actor("demo-viewer", "viewer"), "reviewer": Actor("demo-reviewer", "reviewer")}
# pages that need more than reading (url_path -> permission); the rest are open to every logged-in role
PAGE_PERMISSIONS = {"users": Permission.USERS_MANAGE, "audit": Permission.AUDIT_READ,
                    "import": Permission.IMPORT, "workbench": Permission.LABEL,
                    "adjudication": Permission.ADJUDICATE, "monitors": Permission.AUDIT_READ}


def oidc_configured() -> bool:
    """Whether the company identity provider is set up (an ``[auth]`` section in the secrets)."""
    try:
        return "auth" in st.secrets
    except Exception:  # noqa: BLE001 - no secrets file at all
        return False


def _sso_logged_in() -> bool:
    try:
        return bool(st.user.is_logged_in)
    except Exception:  # noqa: BLE001 - st.user unavailable outside a session
        return False


def _sso_claims() -> dict:
    return dict(st.user.to_dict())


def sso_identity() -> tuple[str, str | None]:
    """(name, role or None) of the user logged in through the identity provider."""
    claims = _sso_claims()
    name = str(claims.get("email") or claims.get("preferred_username") or claims.get("sub") or "sso-user")
    return name, identity.role_for_identity(claims, identity.load_roles_config())


def session() -> dict | None:
    return st.session_state.get(SESSION_KEY)


def current_actor() -> Actor:
    """The logged-in user (``ui.framework.shell.page_frame()`` stops every page run before login)."""
    state = session()
    if state is None:
        raise RuntimeError("nobody is logged in: call ui.framework.shell.page_frame() first")
    return Actor(state["username"], state["role"])


def can(permission: Permission) -> bool:
    """Whether the logged-in user holds ``permission`` (pages show only what the role may do; the register
    checks again)."""
    return allowed(current_actor().role, permission)


def current_role() -> str | None:
    """The role of the current visitor, also on the first run after an SSO login or a reload (for the navigation:
    a tab whose cookie names a live session is logged in here, before the page runs)."""
    state = session()
    if state is not None:
        return state["role"]
    if _sso_logged_in():
        try:
            return sso_identity()[1]
        except RegisterError:
            return None
    state = _resume_from_cookie(data.get_store())
    return None if state is None else state["role"]


def visible_pages(pages: dict) -> dict:
    """The navigation without the pages the current role may not open (they also check themselves)."""
    role = current_role()
    shown = {}
    for section, entries in pages.items():
        kept = [p for p in entries if p.url_path not in PAGE_PERMISSIONS
                or (role is not None and allowed(role, PAGE_PERMISSIONS[p.url_path]))]
        if kept:
            shown[section] = kept
    return shown


def _start(user: identity.User, method: str, must_change: bool = False) -> None:
    """Open the session of ``user``: a web session in the register (audited ``session.start``), which records the
    account's session generation so that a password reset, a role change or a disable since ends it; and, for a
    local or demo login, its cookie handed to the browser (a company login has the provider's cookie)."""
    store = data.get_store()
    started = data.account_write(web_sessions.start, user.actor, method)
    st.session_state[SESSION_KEY] = {"username": user.username, "role": user.role, "display_name": user.display_name,
                                     "method": method, "last_seen": time.time(), "must_change": must_change,
                                     "generation": started.session.session_generation,
                                     "web_session": started.session.session_hash}
    if method != "oidc":
        session_cookie.hand_over(store, "set", started.session.session_hash, started.session_id)


def _end(action: str, **details) -> None:
    """End this tab's login: its web session (a logout ends every tab of it and clears the cookie), or, for a tab
    without one, record the end as before."""
    state = st.session_state.pop(SESSION_KEY, None)
    if state is None:
        return
    actor = Actor(state["username"], state["role"])
    digest = state.get("web_session")
    if digest is None:
        data.account_write(identity.record_session_event, actor, action, method=state["method"], **details)
        return
    store = data.get_store()
    data.account_write(web_sessions.end, actor, digest)
    if state["method"] != "oidc":
        session_cookie.hand_over(store, "clear", digest)


def _resume_from_cookie(store) -> dict | None:
    """Log this tab in to the session its cookie names, once per tab (the handshake's cookies never change): a
    reload or a new tab of a live local or demo session. Not audited: the session goes on, nobody logged in."""
    if st.session_state.get(COOKIE_TRIED_KEY):
        return None
    st.session_state[COOKIE_TRIED_KEY] = True
    digest = session_cookie.cookie_session(store)
    if digest is None:
        return None
    resolved = web_sessions.resolve(store, digest)
    if resolved is not None and resolved.ended is not None:
        data.after_account_write()  # its end may have just been audited (idle, revoked)
    if resolved is None or resolved.ended is not None or resolved.user is None or resolved.session.method == "oidc":
        return None
    user = resolved.user
    web_sessions.touch(store, resolved.session)
    st.session_state[SESSION_KEY] = {"username": user.username, "role": user.role, "display_name": user.display_name,
                                     "method": resolved.session.method, "last_seen": time.time(),
                                     "must_change": user.must_change_password,
                                     "generation": resolved.session.session_generation, "web_session": digest}
    return st.session_state[SESSION_KEY]


def logout() -> None:
    """End the session (audited); an SSO session also ends at Streamlit's identity cookie."""
    state = session()
    _end("logout")
    if state is not None and state["method"] == "oidc":
        st.logout()  # redirects the browser through the provider's logout; nothing more to draw
        st.stop()
    # back to the Overview: the next login (maybe someone else's) must not land on the page this user was on,
    # which may be one the next role cannot open (a deep link is what the URL asks for, a logout is not)
    st.switch_page("pages/overview.py")


def demo_banner() -> None:
    st.warning("**DEMO** — demonstration mode: demo data and password-free demo accounts. Nothing here is a "
               "real governance decision.", icon=":material/science:")


def _bootstrap_if_no_account(store) -> None:
    """A database started without ``make run`` gets its first admin here; the password goes to the terminal."""
    password = identity.bootstrap_admin(store, SYSTEM)
    if password is not None:
        print(f"HRI console: created the first admin account 'admin'. One-time password (must be changed at "
              f"the first login): {password}", file=sys.stderr, flush=True)
        st.session_state["hri_bootstrapped"] = True


def login_page(cfg: Settings) -> None:
    """What a visitor who is not logged in sees (then the page stops)."""
    st.title("HRI console — log in")
    if st.session_state.get("hri_bootstrapped"):
        st.info("No account existed: an admin account **admin** was created. Its one-time password was printed "
                "in the terminal where the console runs.", icon=":material/key:")
    if (note := st.session_state.pop("hri_auth_note", None)):
        st.info(note, icon=":material/schedule:")
    if oidc_configured():
        if st.button("Log in with your company account", type="primary", icon=":material/badge:",
                     key="login_sso"):
            st.login()
        st.caption("Or with a local account:")
    with st.form("login", enter_to_submit=True, clear_on_submit=True):  # the password never stays in state
        username = st.text_input("Username", key="login_username", autocomplete="username")
        password = st.text_input("Password", type="password", key="login_password",
                                 autocomplete="current-password")
        submitted = st.form_submit_button("Log in", type="primary")
    if submitted:
        try:
            user = data.account_write(identity.authenticate, username, password)  # a failure is audited too
        except identity.LoginFailed as error:
            show_error(error)
        else:
            _start(user, "local", user.must_change_password)
            st.rerun()
    if cfg.demo_mode:
        st.divider()
        st.caption("Demo mode: look around without an account.")
        cols = st.columns(2)
        for col, role in zip(cols, DEMO_ACTORS, strict=True):
            if col.button(f"Continue as demo {role}", key=f"login_demo_{role}"):
                actor = DEMO_ACTORS[role]
                try:
                    user = data.account_write(identity.sign_in_external, actor.name, actor.role, kind="demo",
                                              display_name=f"Demo {role}")
                except RegisterError as error:
                    show_error(error)
                    return
                _start(user, "demo")
                st.rerun()
    preload_chart_library()  # the browser loads the chart and table libraries while the password is typed


def password_change_page() -> None:
    state = session()
    st.title("Choose a new password")
    st.info("You logged in with a one-time password. Choose your own password to continue "
            f"(at least {identity.MIN_PASSWORD_LENGTH} characters and not easy to guess: a few uncommon words "
            "make a strong one).", icon=":material/key:")
    with st.form("password_change", clear_on_submit=True):
        old = st.text_input("Current (one-time) password", type="password", key="pw_old",
                            autocomplete="current-password")
        new = st.text_input("New password", type="password", key="pw_new", autocomplete="new-password")
        repeat = st.text_input("Repeat the new password", type="password", key="pw_repeat",
                               autocomplete="new-password")
        submitted = st.form_submit_button("Change password", type="primary")
    if submitted:
        if new != repeat:
            st.error("The two new passwords differ.")
            return
        try:
            data.account_write(identity.change_own_password, Actor(state["username"], state["role"]), old, new)
        except RegisterError as error:
            show_error(error)
            return
        state["must_change"] = False
        st.rerun()


def _refresh_account(store, state: dict) -> bool:
    """Re-read the account each run: disabled, its password reset since the login (or a demo account outside demo
    mode) -> the session ends; a new role applies now."""
    user = identity.get_user(store, state["username"])
    ended = identity.session_ended(user, state.get("generation"))
    if ended is None and user is not None and user.kind == "demo" and not settings().demo_mode:
        ended = "account disabled or removed"
    if ended is not None:
        _end("session.revoked", reason=ended)
        st.session_state["hri_auth_note"] = _revoked_note(user)
        return False
    state["role"], state["display_name"] = user.role, user.display_name
    state["must_change"] = state.get("must_change", False) and user.must_change_password
    return True


def _revoked_note(user: identity.User | None) -> str:
    if user is None or user.disabled or user.kind == "demo":
        return "Your session ended: the account is disabled."
    return "Your session ended: the account's password was reset or its role changed. Log in again."


def _check_web_session(store, state: dict) -> bool:
    """Whether the web session this tab is logged in to goes on (then the account's name and role are brought up to
    date and its activity recorded); else the tab is logged out, with a note saying why. The session's end was
    audited where it happened (a logout) or by ``web_sessions.resolve`` (idle, revoked)."""
    resolved = web_sessions.resolve(store, state["web_session"])
    if resolved is not None and resolved.ended is None and resolved.user is not None:
        user = resolved.user
        state["role"], state["display_name"] = user.role, user.display_name
        state["must_change"] = state.get("must_change", False) and user.must_change_password
        web_sessions.touch(store, resolved.session)
        return True
    st.session_state.pop(SESSION_KEY, None)
    data.after_account_write()  # the end may have just been audited (idle, revoked): the audit trail's reads
    ended_by = resolved.session.end_action if resolved is not None else None
    if ended_by == "logout":
        note = "You logged out (in another tab or window). Log in again to continue."
    elif ended_by == "session.expired":
        note = (f"Your session expired after {settings().session_minutes:g} minutes without activity. Please log "
                "in again.")
    else:
        note = _revoked_note(resolved.user if resolved is not None else None)
    st.session_state["hri_auth_note"] = note
    if state["method"] == "oidc" and ended_by in ("logout", "session.expired") and _sso_logged_in():
        st.logout()  # the provider's cookie would log the tab straight back in
    return False


def require_login() -> Actor:
    """Return the logged-in user, or render the login (or password change) page and stop the run."""
    cfg = settings()
    store = data.get_store()
    if cfg.demo_mode:
        demo_banner()
    session_cookie.show_hand_over()  # a login's or logout's cookie, set or cleared by the browser's next request
    state = session()
    if state is not None and state.get("web_session") is not None and not _check_web_session(store, state):
        st.rerun()  # from the top: the navigation of this run was drawn for the login that just ended
    elif state is not None and time.time() - state["last_seen"] > cfg.session_minutes * 60:
        method = state["method"]
        _end("session.expired", idle_minutes=cfg.session_minutes)
        st.session_state["hri_auth_note"] = (f"Your session expired after {cfg.session_minutes:g} minutes without "
                                             "activity. Please log in again.")
        if method == "oidc" and _sso_logged_in():
            st.logout()
        state = None
    if state is not None and state.get("web_session") is None and not _refresh_account(store, state):
        state = None  # re-read before the company login below: a disabled oidc account is refused there
    if state is None and not _sso_logged_in():
        state = _resume_from_cookie(store)  # a reload or a new tab of a live session
    if state is None and _sso_logged_in():
        name, role = sso_identity()
        if role is None:
            st.title("HRI console")
            st.error(f"Your company account **{escape_markdown(name)}** has no role in this console. Ask an "
                     "administrator to add you to config/roles.toml.", icon=":material/block:")
            if st.button("Log out", key="sso_refused_logout"):
                st.logout()
            st.stop()
        if st.session_state.get("hri_sso_refused") != name:
            try:
                user = data.account_write(identity.sign_in_external, name, role, kind="oidc",
                                          display_name=str(st.user.get("name") or name))
            except RegisterError:
                st.session_state["hri_sso_refused"] = name  # refused once (audited): not again on every rerun
            else:
                _start(user, "oidc")
        if session() is None:
            st.title("HRI console")
            st.error(f"Your company account **{escape_markdown(name)}** cannot use this console: it is disabled "
                     "here, or its name belongs to a local account. Ask an administrator.", icon=":material/block:")
            if st.button("Log out", key="sso_refused_logout_disabled"):
                st.session_state.pop("hri_sso_refused", None)
                st.logout()
            st.stop()
        state = session()
    if state is None:
        _bootstrap_if_no_account(store)
        login_page(cfg)
        st.stop()
    if state.get("must_change"):
        password_change_page()
        st.stop()
    state["last_seen"] = time.time()
    return Actor(state["username"], state["role"])


def sidebar_user(actor: Actor) -> None:
    """Who is logged in, the session rule, and the logout button (in the sidebar)."""
    state = session() or {}
    cfg = settings()
    with st.sidebar:
        st.divider()
        st.caption(f"Logged in as **{escape_markdown(state.get('display_name') or actor.name)}** ({actor.role}"
                   f"{', demo' if state.get('method') == 'demo' else ''}). Idle sessions end after "
                   f"{cfg.session_minutes:g} min.")
        if st.button("Log out", key="logout", icon=":material/logout:"):
            logout()
