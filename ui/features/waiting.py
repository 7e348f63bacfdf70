"""The Waiting for me page's pieces: where each kind of item is done (the console's page files by their URL path),
and one item drawn with its link. The read itself is ``ui.framework.waiting.waiting_items`` (the sidebar's count
shares it)."""

from __future__ import annotations

import streamlit as st

from register.waiting.items import KINDS, WaitingItem
from ui.framework.text import escape_markdown

# the console page of each URL path an item names (app.py's PAGES), and how a link to it reads
PAGE_FILES = {"users": ("pages/users.py", "Users"), "profiles": ("pages/profiles.py", "Scoring profiles"),
              "evidence-rules": ("pages/evidence_rules.py", "Evidence rules"),
              "authority": ("pages/authority.py", "Source authority"),
              "checklist": ("pages/checklist.py", "Pre-submission checklist"),
              "review": ("pages/review_queue.py", "Review queue"), "feedback": ("pages/feedback.py", "Feedback"),
              "adjudication": ("pages/adjudication.py", "Adjudication")}
SHOWN_PER_KIND = 50  # a long list (hundreds of reports) is worked on its own page, not scrolled here


def grouped(found: list[WaitingItem]) -> list[tuple[str, list[WaitingItem]]]:
    """The items by kind, in ``KINDS`` order (``waiting_for`` returns them so), each kind's name with its items."""
    return [(KINDS[kind], [item for item in found if item.kind == kind]) for kind in KINDS
            if any(item.kind == kind for item in found)]


def item_row(item: WaitingItem) -> None:
    """One item: its title, who asked and when, a link to the page where it is done and, for an item about an answer,
    one to the answer."""
    page, page_title = PAGE_FILES[item.page]
    left, right = st.columns([4, 1], vertical_alignment="center")
    when = f" at {item.created_at:%Y-%m-%d %H:%M} UTC" if item.created_at else ""
    left.markdown(f"{escape_markdown(item.title)}  \n:gray[asked by {escape_markdown(item.asked_by)}{when}]")
    with right:
        st.page_link(page, label=f"Open {page_title}", icon=":material/open_in_new:", query_params=item.params or None)
        if item.response_id is not None:  # the answer it is about, by the deep link the response detail page reads
            st.page_link("pages/response_detail.py", label="Open the answer", icon=":material/fact_check:",
                         query_params={"response_id": item.response_id})
