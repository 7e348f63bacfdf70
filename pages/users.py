"""Users (admin only): add local accounts, set roles, disable, reset passwords. Every change is audited.

A new account and a reset get a one-time password, shown once here and never stored in clear; the
user must change it at the first login. The service functions refuse anyone without
``Permission.USERS_MANAGE`` whatever this page shows.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from register import RegisterError
from register.access import identity
from register.access.permissions import ROLES, Permission
from ui import data
from ui.auth import can, current_actor
from ui.errors import show_error
from ui.page import run_page
from ui.shell import page_frame


def show_one_time_password() -> None:
    shown = st.session_state.pop("users_otp", None)  # shown on this run only, then forgotten
    if shown:
        who, password = shown
        st.success(f"One-time password of **{who}** — copy it now, it is not shown again. The user must change it "
                   "at the first login.", icon=":material/key:")
        st.code(password, language=None)


def users_table() -> list[identity.User]:
    users = identity.list_users(data.get_store())
    st.dataframe(pd.DataFrame([{
        "username": u.username, "display name": u.display_name, "role": u.role,
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
        try:
            password = identity.create_user(data.get_store(), actor, username, role, display)
        except RegisterError as error:
            show_error(error)
            return
        data.after_write()
        st.session_state["users_otp"] = (username.strip(), password)
        st.rerun()


def change_user_form(actor, users: list[identity.User]) -> None:
    if not users:
        return
    with st.form("user_change"):
        st.markdown("**Change an account**")
        cols = st.columns(3)
        names = [u.username for u in users]
        username = cols[0].selectbox("Account", names, key="user_change_name")
        action = cols[1].selectbox("Change", ["set role", "disable", "enable", "reset password"],
                                   key="user_change_action")
        role = cols[2].selectbox("New role (for “set role”)", ROLES, key="user_change_role")
        submitted = st.form_submit_button("Apply")
    if submitted:
        store = data.get_store()
        version = next(u.row_version for u in users if u.username == username)
        try:
            if action == "set role":
                identity.set_role(store, actor, username, role, expected_version=version)
            elif action in ("disable", "enable"):
                identity.set_disabled(store, actor, username, action == "disable", expected_version=version)
            else:
                st.session_state["users_otp"] = (username, identity.reset_password(
                    store, actor, username, expected_version=version))
        except RegisterError as error:
            show_error(error)
            return
        data.after_write()
        st.toast(f"{username}: {action} done", icon=":material/check:")
        st.rerun()


def main() -> None:
    page_frame()
    st.title("Users")
    if not can(Permission.USERS_MANAGE):
        st.info(f"Your role ({current_actor().role}) cannot manage users: it needs the admin role.",
                icon=":material/lock:")
        return
    actor = current_actor()
    st.caption("Local accounts of the embedded login. Company-account (SSO) users get their role from "
               "config/roles.toml and are not listed here.")
    show_one_time_password()
    users = users_table()
    left, right = st.columns(2)
    with left:
        add_user_form(actor)
    with right:
        change_user_form(actor, users)


run_page(main)
