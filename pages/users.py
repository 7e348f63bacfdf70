"""Users (admin only): add local accounts, set roles, disable, reset passwords. Every change is audited.

A new account and a reset get a one-time password, shown once here and never stored in clear; the
user must change it at the first login. The admin role is granted by two admins: one requests it
here, another approves it (``register.access.identity.request_admin`` / ``approve_admin``); an
account added with the admin role is created as a viewer with such a request. While one admin exists
(and never a second did), that admin names a second one once, flagged (``register.access.second_admin``).
The service functions refuse anyone without ``Permission.USERS_MANAGE`` whatever this page shows. Below, every
account's API tokens (``ui.features.api_tokens``): revoke any, make one for an enabled account (its secret shown
once); everyone manages their own on the API tokens page.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from register import RegisterError
from register.access import identity, second_admin
from register.access.permissions import ROLES, Permission
from ui.features import api_tokens
from ui.framework import data
from ui.framework.auth import can, current_actor
from ui.framework.components import keep_message, show_kept_messages
from ui.framework.errors import show_error
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import code_span, escape_markdown


def show_last_change() -> None:
    """The change applied on the previous run, kept on the page (a toast vanished before it was read)."""
    show_kept_messages("users")


def show_one_time_password() -> None:
    shown = st.session_state.pop("users_otp", None)  # shown on this run only, then forgotten
    if shown:
        who, password = shown
        st.success(f"One-time password of {code_span(who)} — copy it now, it is not shown again. The user must "
                   "change it at the first login.", icon=":material/key:")
        st.code(password, language=None)


def users_table() -> list[identity.User]:
    users = identity.list_users(data.get_store())
    st.dataframe(pd.DataFrame([{
        "username": u.username, "display name": u.display_name, "role": u.role,
        "kind": u.kind,
        "state": "disabled" if u.disabled else ("must change password" if u.must_change_password else "active"),
        "failed logins": u.failed_attempts, "locked until": u.locked_until, "last login": u.last_login_at,
        "updated by": u.updated_by, "version": u.row_version} for u in users]),
        hide_index=True, key="users_table")
    return users


def add_user_form(actor) -> None:
    with st.form("user_add", clear_on_submit=True):
        st.markdown("**Add a local account**")
        cols = st.columns(3)
        username = cols[0].text_input("Username", key="user_add_name", max_chars=64)
        display = cols[1].text_input("Display name", key="user_add_display", max_chars=200)
        role = cols[2].selectbox("Role", ROLES, key="user_add_role")
        submitted = st.form_submit_button("Add account", type="primary")
    if submitted:
        try:  # the admin role needs a second admin: the account starts as a viewer with a request
            password = data.account_write(identity.create_user, actor, username, "viewer" if role == "admin" else role,
                                          display)
            if role == "admin":
                data.account_write(identity.request_admin, actor, username.strip(),
                                   "requested when the account was added")
        except RegisterError as error:
            show_error(error)
            return
        st.session_state["users_otp"] = (username.strip(), password)
        st.rerun()


CHANGES = ("set role", "disable", "enable", "reset password")
PENDING = "users_pending_role"  # (username, old role, new role, row version) awaiting confirmation


def change_user_form(actor, users: list[identity.User]) -> None:
    """Change one account. Nothing is preselected (Apply with the untouched form changes nothing) and a role
    change is applied only after a confirmation that names the account, its role now and the new role."""
    if not users:
        return
    by_name = {u.username: u for u in users}
    with st.form("user_change"):
        st.markdown("**Change an account**")
        cols = st.columns(3)
        username = cols[0].selectbox("Account", list(by_name), key="user_change_name", index=None,
                                     placeholder="Choose an account")
        action = cols[1].selectbox("Change", CHANGES, key="user_change_action", index=None,
                                   placeholder="Choose a change")
        role = cols[2].selectbox("New role (for “set role”)", ROLES, key="user_change_role", index=None,
                                 placeholder="Choose a role")
        submitted = st.form_submit_button("Apply")
    if submitted:
        st.session_state.pop(PENDING, None)
        missing = [what for what, value in (("an account", username), ("a change", action)) if value is None]
        if action == "set role" and role is None:
            missing.append("the new role")
        if missing:
            st.info(f"Choose {' and '.join(missing)}: nothing was changed.", icon=":material/info:")
            return
        user = by_name[username]
        if action == "set role":
            if role == user.role:
                st.info(f"{code_span(username)} already has the role {role}: nothing was changed.",
                        icon=":material/info:")
                return
            st.session_state[PENDING] = (username, user.role, role, user.row_version)
        else:
            apply_change(actor, username, action, user.row_version)
    confirm_role_change(actor)


def confirm_role_change(actor) -> None:
    pending = st.session_state.get(PENDING)
    if pending is None:
        return
    username, old, new, version = pending
    own = " This is your own account." if username == actor.name else ""
    st.warning(f"Change the role of {code_span(username)} from **{old}** to **{new}**?{own}",
               icon=":material/manage_accounts:")
    confirm, cancel = st.columns(2)
    if cancel.button("Cancel", key="users_role_cancel"):
        st.session_state.pop(PENDING, None)
        st.rerun()
    if confirm.button(f"Change {username}'s role to {new}", key="users_role_confirm", type="primary"):
        st.session_state.pop(PENDING, None)
        apply_change(actor, username, "set role", version, role=new)


def apply_change(actor, username: str, action: str, version: int, *, role: str | None = None) -> None:
    try:  # a refusal is audited too: data.account_write clears the account reads either way
        if action == "set role":
            data.account_write(identity.set_role, actor, username, role, expected_version=version)
        elif action in ("disable", "enable"):
            data.account_write(identity.set_disabled, actor, username, action == "disable", expected_version=version)
        else:
            st.session_state["users_otp"] = (username, data.account_write(
                identity.reset_password, actor, username, expected_version=version))
    except RegisterError as error:
        show_error(error)
        return
    done = f"role {role}" if action == "set role" else action
    keep_message("users", "success", f"{code_span(username)}: {done} done.")
    st.rerun()


def admin_requests_section(actor, users: list[identity.User]) -> None:
    """Request the admin role for an account, and approve or cancel pending requests (four eyes)."""
    store = data.get_store()
    st.markdown("**Admin role requests** — a second admin approves; the requester cannot.")
    pending = identity.admin_requests(store)
    for grant in pending:
        cols = st.columns([5, 1, 1])
        cols[0].markdown(f"Make **{escape_markdown(grant['username'])}** an admin — requested by "
                         f"{escape_markdown(grant['requested_by'])} at {grant['requested_at']:%Y-%m-%d %H:%M} UTC"
                         + (f": {escape_markdown(grant['reason'])}" if grant["reason"] else ""))
        for col, label, call in ((cols[1], "Approve", identity.approve_admin),
                                 (cols[2], "Cancel", identity.cancel_admin_request)):
            if col.button(label, key=f"grant_{label.lower()}_{grant['grant_id']}"):
                try:
                    data.account_write(call, actor, grant["grant_id"])
                except RegisterError as error:
                    show_error(error)
                    return
                st.rerun()
    candidates = [u.username for u in users if u.role != "admin" and not u.disabled
                  and u.username not in {g["username"] for g in pending}]
    if not candidates:
        return
    with st.form("admin_request"):
        cols = st.columns([2, 3])
        username = cols[0].selectbox("Account", candidates, key="admin_request_name")
        reason = cols[1].text_input("Why", key="admin_request_reason", max_chars=500)
        submitted = st.form_submit_button("Request the admin role")
    if submitted:
        try:
            data.account_write(identity.request_admin, actor, username, reason)
        except RegisterError as error:
            show_error(error)
            return
        st.rerun()


def second_admin_section(actor, users: list[identity.User]) -> None:
    """While the signed-in admin is the only one (and never was there a second): name a second admin, once, with a
    reason (``register.access.second_admin``). Every admin named that way is shown, flagged, for everyone here."""
    for named in second_admin.namings(data.get_store()):
        st.warning(f"**{escape_markdown(named['username'])}** was named an admin by "
                   f"{escape_markdown(named['named_by'])} at {named['named_at']:%Y-%m-%d %H:%M} UTC **while the sole "
                   f"admin** (no second admin approved it; the account was created by "
                   f"{escape_markdown(named['created_by'] or 'unknown')}): {escape_markdown(named['reason'] or '')}",
                   icon=":material/flag:")
    if not second_admin.may_name_second_admin(data.get_store(), actor):
        return
    candidates = [u.username for u in users if u.role != "admin" and not u.disabled and u.kind == "local"
                  and u.username != actor.name]
    st.info("You are the only admin, so nobody can approve an admin request. You may name **one** second admin "
            "here without a second person: it is recorded in the audit trail as named while sole admin, and from "
            "then on the admin role needs two admins again. Add the person's account first.",
            icon=":material/person_add:")
    if not candidates:
        return
    with st.form("second_admin", enter_to_submit=False):
        cols = st.columns([2, 3])
        username = cols[0].selectbox("Account", candidates, key="second_admin_name", index=None,
                                     placeholder="Choose an account")
        reason = cols[1].text_input("Why (required)", key="second_admin_reason", max_chars=second_admin.MAX_REASON)
        submitted = st.form_submit_button("Name a second admin", type="primary")
    if submitted:
        if username is None:
            st.info("Choose an account: nothing was changed.", icon=":material/info:")
            return
        try:
            data.account_write(second_admin.name_second_admin, actor, username, reason)
        except RegisterError as error:
            show_error(error)
            return
        keep_message("users", "success", f"{code_span(username)} is now an admin, named while you were the sole "
                     "admin (recorded in the audit trail).")
        st.rerun()


def main() -> None:
    page_frame(filters=False)
    st.title("Users")
    if not can(Permission.USERS_MANAGE):
        st.info(f"Your role ({current_actor().role}) cannot manage users: it needs the admin role.",
                icon=":material/lock:")
        return
    actor = current_actor()
    st.caption("Accounts of the embedded login (local) and of company-account (oidc) and demo logins, which "
               "are added at their first login; an oidc account's role comes from config/roles.toml at each "
               "login. Disabling any account refuses its next action.")
    show_last_change()
    show_one_time_password()
    users = users_table()
    # one above the other: side by side, the change form's pickers were too narrow to read their choices
    change_user_form(actor, users)
    add_user_form(actor)
    admin_requests_section(actor, users)
    second_admin_section(actor, users)
    st.divider()
    api_tokens.all_tokens_section(actor, [u.username for u in users if not u.disabled])


run_page(main)
