"""What waits for the signed-in person, read once per run: ``waiting_items`` (``register.waiting.items.waiting_for``
cached per account name and role, cleared by every write as other cached reads are: a record write clears every
cached read, an account write -- an admin request, a role change -- the account-scoped ones, this among them), and
the sidebar's count (``sidebar_count``) linking to the Waiting for me page (``pages/waiting.py``)."""

from __future__ import annotations

import streamlit as st
from streamlit.errors import StreamlitAPIException

from register import Actor, RegisterError, Store
from register.waiting import items
from register.waiting.items import WaitingItem
from ui.framework import data

WAITING_PAGE = "pages/waiting.py"


@data.cached(scope="account")
def waiting_items(store: Store, name: str, role: str) -> list[WaitingItem]:
    """What waits for the account ``name`` holding ``role`` (the session's role, re-read at each run's login
    check): ``register.waiting.items.waiting_for``, which re-reads the account itself."""
    return items.waiting_for(store, Actor(name, role))


def sidebar_count(actor: Actor) -> None:
    """"Waiting for me: N" in the sidebar, a link to the Waiting for me page (the same cached read the page uses)."""
    try:
        count = len(waiting_items(actor.name, actor.role))
    except RegisterError:  # the account changed in the moment since the login check: the next run ends or updates it
        return
    label = f"Waiting for me: {count:,}"
    try:
        st.sidebar.page_link(WAITING_PAGE, label=label, icon=":material/inbox:")
    except StreamlitAPIException:  # a page run on its own (a test opening one page file) has no navigation to link to
        st.sidebar.caption(label)
