"""API tokens: every signed-in person makes, sees and revokes their own tokens for the HTTP API (``/api/v1``).

A token acts as its account with the account's role at each request; its secret is shown once, right after it is
made. Admins see every account's tokens on the Users page. The register checks each action against the account's
current state (``register.access.api_tokens``).
"""

from __future__ import annotations

import streamlit as st

from ui.features import api_tokens
from ui.framework.auth import current_actor
from ui.framework.page import run_page
from ui.framework.shell import page_frame


def main() -> None:
    page_frame(filters=False)
    st.title("API tokens")
    api_tokens.own_tokens_section(current_actor())


run_page(main)
