"""The frame every page renders first: the login gate, the shared sidebar filters, what waits for the current user
(its count, a link to the Waiting for me page) and the current user.

Each page calls ``page_frame()`` itself (rather than the entrypoint rendering the sidebar) so the
filters are part of every page run; the widgets use the same keys on every page, so the selection
carries over when the user moves between pages. Only the pages the filters change (overview,
responses, review queue) show them: elsewhere they would look like they apply and do not.
"""

from __future__ import annotations

from register.console.queries.filters import Filters
from ui.framework import data
from ui.framework.auth import require_login, sidebar_user
from ui.framework.components import show_kept_toasts
from ui.framework.filters import sidebar_filters
from ui.framework.waiting import sidebar_count


def page_frame(*, filters: bool = True) -> Filters:
    """Log the visitor in (or stop at the login page), render the shared sidebar, return the filters.

    ``filters=False`` for a page the filters do not affect: the sidebar shows no filters (the selection is
    kept for the pages that use it) and the result is ``Filters()``.
    """
    data.seed_if_empty(data.get_store())
    actor = require_login()  # here, not in app.py: AppTest re-runs only the page file after the first run
    show_kept_toasts()  # a save's confirmation, kept across the rerun after it
    sidebar_count(actor)  # what waits for this person, above the filters: one cached read, shared with its page
    selected = sidebar_filters(data.filter_options()) if filters else Filters()
    sidebar_user(actor)
    return selected
