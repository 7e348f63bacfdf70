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
register re-reads the account in every write. Sessions end after ``HRI_SESSION_MINUTES`` (default 30)
minutes without any interaction, at logout, or when the account is disabled or its password reset (the session
records the account's ``session_generation`` at login); a role change applies at the next interaction. Logins,
failures, logouts and expiries are audited by ``register.access.identity``.
"""

from __future__ import annotations

import sys
import time

import streamlit as st

from register import SYSTEM, Actor, RegisterError
from register.access import identity
from register.access.permissions import Permission, allowed
from register.settings import Settings, settings
from ui.framework import data
from ui.framework.browser_preload import preload_chart_library
from ui.framework.errors import show_error
from ui.framework.text import escape_markdown

SESSION_KEY = "hri_auth"
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
    """The role of the current visitor, also on the first run after an SSO login (for the navigation)."""
    state = session()
    if state is not None:
        return state["role"]
    if _sso_logged_in():
        try:
            return sso_identity()[1]
        except RegisterError:
            return None
    return None


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
    """Open the session of ``user``; it records the account's session generation, so that a password reset (or a
    disable) since ends it (``identity.session_ended``)."""
    st.session_state[SESSION_KEY] = {"username": user.username, "role": user.role, "display_name": user.display_name,
                                     "method": method, "last_seen": time.time(), "must_change": must_change,
                                     "generation": user.session_generation}


def _end(action: str, **details) -> None:
    state = st.session_state.pop(SESSION_KEY, None)
    if state is not None:
        data.account_write(identity.record_session_event, Actor(state["username"], state["role"]), action,
                           method=state["method"], **details)


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
        st.session_state["hri_auth_note"] = ("Your session ended: the account is disabled."
                                             if user is None or user.disabled or user.kind == "demo" else
                                             "Your session ended: the account's password was reset. Log in again.")
        return False
    state["role"], state["display_name"] = user.role, user.display_name
    state["must_change"] = state.get("must_change", False) and user.must_change_password
    return True


def require_login() -> Actor:
    """Return the logged-in user, or render the login (or password change) page and stop the run."""
    cfg = settings()
    store = data.get_store()
    if cfg.demo_mode:
        demo_banner()
    state = session()
    if state is not None and time.time() - state["last_seen"] > cfg.session_minutes * 60:
        method = state["method"]
        _end("session.expired", idle_minutes=cfg.session_minutes)
        st.session_state["hri_auth_note"] = (f"Your session expired after {cfg.session_minutes:g} minutes without "
                                             "activity. Please log in again.")
        if method == "oidc" and _sso_logged_in():
            st.logout()
        state = None
    if state is not None and not _refresh_account(store, state):
        state = None  # re-read before the company login below: a disabled oidc account is refused there
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
