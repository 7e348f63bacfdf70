"""The frame every page renders first: the login gate, the shared sidebar filters and the current user.

Each page calls ``page_frame()`` itself (rather than the entrypoint rendering the sidebar) so the
filters are part of every page run; the widgets use the same keys on every page, so the selection
carries over when the user moves between pages.
"""

from __future__ import annotations

from register.console.queries import Filters
from ui import data
from ui.auth import require_login, sidebar_user
from ui.filters import sidebar_filters


def page_frame() -> Filters:
    """Log the visitor in (or stop at the login page), render the shared sidebar, return the filters."""
    data.seed_if_empty(data.get_store())
    actor = require_login()  # here, not in app.py: AppTest re-runs only the page file after the first run
    filters = sidebar_filters(data.filter_options())
    sidebar_user(actor)
    return filters
