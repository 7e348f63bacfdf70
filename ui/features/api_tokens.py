"""Personal API tokens on the console: every signed-in person makes, sees and revokes their own (the API tokens
page); an admin sees and revokes every account's and makes one for any enabled account (the Users page).

A token's secret is shown once, on the run right after it was made, with Streamlit's copy button, then forgotten
(``register.access.api_tokens`` keeps only its hash). The register checks who may do what against the account's
current state; these sections only offer what the role may do. Tables show text literally (``st.dataframe``);
every data-controlled string in markdown goes through ``ui.framework.text``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from register import Actor, RegisterError
from register.access import api_tokens
from register.settings import settings
from ui.framework import data
from ui.framework.components import keep_message, show_kept_messages
from ui.framework.errors import show_error
from ui.framework.text import code_span, escape_markdown

NEW_TOKEN = "api_token_new"  # (token_id, username, name, secret): shown on the next run only
PLACE = "api_tokens"          # where kept messages show


def show_new_token() -> None:
    """The token made on the previous run, once: the secret is dropped from the session as it is shown."""
    shown = st.session_state.pop(NEW_TOKEN, None)
    if not shown:
        return
    token_id, username, name, secret = shown
    label = f" ({escape_markdown(name)})" if name else ""
    st.success(f"API token {code_span(token_id)}{label} for {code_span(username)} — copy it now with the copy "
               "button at the right of the box: it is not stored and is not shown again. Send it as "
               "`Authorization: Bearer TOKEN`.", icon=":material/key:")
    st.code(secret, language=None)


def tokens_table(tokens: list[dict[str, Any]], *, key: str, owners: bool) -> None:
    """The tokens (never a secret): id, owner (``owners``), name, status, expiry, last use, revocation."""
    if not tokens:
        st.caption("No API tokens yet.")
        return
    rows = [{"token id": t["token_id"], **({"owner": t["username"]} if owners else {}), "name": t["name"] or "",
             "status": t["status"], "expires": t["expires_at"], "last used": t["last_used_at"],
             "created": t["created_at"], "created by": t["created_by"], "revoked by": t["revoked_by"] or ""}
            for t in tokens]
    st.dataframe(pd.DataFrame(rows), hide_index=True, key=key)


def create_form(actor: Actor, *, key: str, accounts: list[str] | None = None) -> None:
    """Make a token: for oneself, or (``accounts``: an admin's choice) for one of the named enabled accounts."""
    current = settings()
    with st.form(key, clear_on_submit=True):
        st.markdown("**Make an API token**")
        cols = st.columns([2, 3, 1] if accounts else [3, 1])
        # nothing preselected: a token made for the wrong account would act as that account
        username = (cols.pop(0).selectbox("Account", accounts, key=f"{key}_account", index=None,
                                          placeholder="Choose an account")
                    if accounts else actor.name)
        name = cols[0].text_input("What it is for", key=f"{key}_name", max_chars=api_tokens.MAX_NAME_CHARS,
                                  placeholder="e.g. nightly import")
        days = cols[1].number_input("Expires in days", min_value=1, max_value=current.token_max_days,
                                    value=min(current.token_default_days, current.token_max_days), step=1,
                                    key=f"{key}_days")
        submitted = st.form_submit_button("Make token", type="primary")
    if not submitted:
        return
    if username is None:
        st.info("Choose an account: no token was made.", icon=":material/info:")
        return
    try:
        issued = data.account_write(api_tokens.create_token, actor, username, expires_days=int(days), name=name)
    except RegisterError as error:
        show_error(error)
        return
    st.session_state[NEW_TOKEN] = (issued.token_id, issued.username, issued.name, issued.token)
    st.rerun()


def revoke_form(actor: Actor, tokens: list[dict[str, Any]], *, key: str, owners: bool) -> None:
    """Revoke one of the listed tokens that is still active or expired (a revoked one is done)."""
    revocable = {t["token_id"]: t for t in tokens if t["status"] != "revoked"}
    if not revocable:
        return

    def label(token_id: str) -> str:
        token = revocable[token_id]
        parts = [token_id, token["name"] or "", f"of {token['username']}" if owners else "", token["status"]]
        return " · ".join(part for part in parts if part)

    with st.form(key):
        st.markdown("**Revoke an API token** — it fails from the next request on.")
        token_id = st.selectbox("Token", list(revocable), format_func=label, key=f"{key}_token", index=None,
                                placeholder="Choose a token")
        submitted = st.form_submit_button("Revoke token")
    if not submitted:
        return
    if token_id is None:
        st.info("Choose a token: nothing was revoked.", icon=":material/info:")
        return
    try:
        data.account_write(api_tokens.revoke_token, actor, token_id)
    except RegisterError as error:
        show_error(error)
        return
    owner = revocable[token_id]["username"]
    keep_message(PLACE, "success", f"API token {code_span(token_id)} of {code_span(owner)} revoked.")
    st.rerun()


def own_tokens_section(actor: Actor) -> None:
    """The signed-in person's tokens: list, make (the secret shown once), revoke."""
    st.caption("A token lets a program use the HTTP API (`/api/v1`) as you, with your role at each request: send "
               "it as `Authorization: Bearer TOKEN`. It stops working when it expires, when you revoke it, and when "
               "your account is disabled or its password reset.")
    show_kept_messages(PLACE)
    show_new_token()
    tokens = api_tokens.list_tokens(data.get_store(), actor, actor.name)
    tokens_table(tokens, key="own_api_tokens", owners=False)
    create_form(actor, key="own_token_create")
    revoke_form(actor, tokens, key="own_token_revoke", owners=False)


def all_tokens_section(actor: Actor, accounts: list[str]) -> None:
    """An admin's view: every account's tokens, revoke any, make one for any enabled account (``accounts``)."""
    st.markdown("**API tokens** of every account — each acts with its account's role at each request.")
    show_kept_messages(PLACE)
    show_new_token()
    tokens = api_tokens.list_tokens(data.get_store(), actor)
    tokens_table(tokens, key="all_api_tokens", owners=True)
    create_form(actor, key="admin_token_create", accounts=accounts)
    revoke_form(actor, tokens, key="admin_token_revoke", owners=True)
