"""Waiting for me: what the signed-in person may settle now, by their role and name (``register.waiting.items``):
admin requests, drafts to publish, rules versions to approve, a checklist run to sign, risk acceptances and lower-risk
label changes to approve, feedback to validate, disagreements to adjudicate. Nothing waits for its own author where
four eyes applies. Each item links to the page where it is done; the sidebar shows their count on every page."""

from __future__ import annotations

import streamlit as st

from ui.features import waiting
from ui.framework.auth import current_actor
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import escape_markdown
from ui.framework.waiting import waiting_items


def main() -> None:
    page_frame(filters=False)
    st.title("Waiting for me")
    actor = current_actor()
    found = waiting_items(actor.name, actor.role)
    if not found:
        st.success(f"Nothing waits for you ({escape_markdown(actor.role)}): no draft, sign-off, approval, feedback, "
                   "adjudication or request is yours to settle now.", icon=":material/done_all:")
        return
    things = "1 thing waits" if len(found) == 1 else f"{len(found):,} things wait"
    st.caption(f"{things} for you as {escape_markdown(actor.role)}, oldest first in each group. What you made "
               "yourself waits for a second person and is not listed here.")
    for name, group in waiting.grouped(found):
        st.subheader(f"{name} ({len(group):,})")
        for item in group[:waiting.SHOWN_PER_KIND]:
            waiting.item_row(item)
        if len(group) > waiting.SHOWN_PER_KIND:
            st.caption(f"... and {len(group) - waiting.SHOWN_PER_KIND:,} more on that page.")


run_page(main)
