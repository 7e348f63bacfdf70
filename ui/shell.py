"""The frame every page renders first: the shared sidebar filters and the current user.

Each page calls ``page_frame()`` itself (rather than the entrypoint rendering the sidebar) so the
filters are part of every page run; the widgets use the same keys on every page, so the selection
carries over when the user moves between pages.
"""

from __future__ import annotations

import streamlit as st

from register.queries import Filters
from ui import data
from ui.components import current_actor
from ui.filters import sidebar_filters


def page_frame() -> Filters:
    """Render the shared sidebar and return the filter selection."""
    data.seed_if_empty(data.get_store())
    filters = sidebar_filters(data.filter_options())
    with st.sidebar:
        actor = current_actor()
        st.caption(f"Signed in as **{actor.name}** ({actor.role}). Login and roles are not built yet: "
                   "every visitor acts as this local user.")
    return filters
