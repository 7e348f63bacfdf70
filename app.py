"""HRI governance console: entry point (``streamlit run app.py``).

Runs the selected page. Pages live in ``pages/``, one per file, and stay thin; each runs its ``main``
through ``ui.framework.page.run_page`` (one error path) and starts with ``ui.framework.shell.page_frame()``:
first-start demo seeding, the login gate and the shared filters.
"""

from __future__ import annotations

import logging
from pathlib import Path

import streamlit as st

from ui.features import intake, monitors, search_status, warmup
from ui.framework import auth, collector
from ui.framework.page import run_page, show_error_details

# the server log (the terminal of `make run`): incidents of unexpected errors, with their tracebacks
logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s")

# An error that escapes ui.framework.page.run_page (module code, a widget callback) shows no detail: its traceback
# stays in the server log (HRI_DEBUG=1 shows it, for development)
show_error_details()

# A bundled image: a ":material/...:" page icon makes the browser fetch the favicon from an outside font
# host (it fails offline). The icons of st.Page and st.error come from Streamlit's bundled font.
ICON = Path(__file__).parent / "assets" / "hri-icon.png"
st.set_page_config(page_title="HRI console", page_icon=ICON, layout="wide")

PAGES = {
    "Console": [
        st.Page("pages/overview.py", title="Overview", icon=":material/dashboard:", default=True),
        st.Page("pages/responses.py", title="Responses", icon=":material/table_rows:"),
        st.Page("pages/response_detail.py", title="Response detail", icon=":material/fact_check:",
                url_path="response"),
        st.Page("pages/review_queue.py", title="Review queue", icon=":material/rule:", url_path="review"),
        st.Page("pages/verification.py", title="Claim verification", icon=":material/verified:",
                url_path="verification"),
        st.Page("pages/feedback.py", title="Feedback", icon=":material/feedback:", url_path="feedback"),
        st.Page("pages/rag_metrics.py", title="RAG metrics", icon=":material/query_stats:", url_path="rag-metrics"),
        st.Page("pages/waiting.py", title="Waiting for me", icon=":material/inbox:", url_path="waiting"),
    ],
    "Scoring": [
        st.Page("pages/profiles.py", title="Scoring profiles", icon=":material/tune:", url_path="profiles"),
        st.Page("pages/elicitation.py", title="Weight elicitation", icon=":material/groups:",
                url_path="elicitation"),
        st.Page("pages/calibration.py", title="Calibration", icon=":material/monitoring:", url_path="calibration"),
        st.Page("pages/evidence.py", title="Evidence", icon=":material/science:", url_path="evidence"),
    ],
    "Governance": [
        st.Page("pages/sources.py", title="Source register", icon=":material/library_books:", url_path="sources"),
        st.Page("pages/claims_register.py", title="Claims register", icon=":material/checklist:", url_path="claims"),
        st.Page("pages/use_cases.py", title="Use cases", icon=":material/assignment_turned_in:", url_path="use-cases"),
        st.Page("pages/evidence_rules.py", title="Evidence rules", icon=":material/gavel:", url_path="evidence-rules"),
        st.Page("pages/checklist.py", title="Pre-submission checklist", icon=":material/task_alt:",
                url_path="checklist"),
        st.Page("pages/authority.py", title="Source authority", icon=":material/verified_user:",
                url_path="authority"),
    ],
    "Labelling": [
        st.Page("pages/workbench.py", title="Labelling workbench", icon=":material/edit_note:", url_path="workbench"),
        st.Page("pages/adjudication.py", title="Adjudication", icon=":material/balance:", url_path="adjudication"),
        st.Page("pages/agreement.py", title="Annotator agreement", icon=":material/join_inner:", url_path="agreement"),
        st.Page("pages/rubric.py", title="Labelling rubric", icon=":material/menu_book:", url_path="rubric"),
    ],
    "Admin": [
        st.Page("pages/audit.py", title="Audit trail", icon=":material/history:", url_path="audit"),
        st.Page("pages/users.py", title="Users", icon=":material/manage_accounts:", url_path="users"),
        st.Page("pages/monitors.py", title="Monitors", icon=":material/notifications_active:", url_path="monitors"),
    ],
}
# intake: uploads, the quarantine, and the inbox this process imports dropped files from
PAGES["Intake"] = [st.Page("pages/intake.py", title="Import", icon=":material/upload_file:", url_path="import")]
# every signed-in person's own API tokens (admins see every account's on the Users page)
PAGES["Account"] = [st.Page("pages/api_tokens.py", title="API tokens", icon=":material/key:", url_path="api-tokens")]


def main() -> None:
    collector.freeze_startup_objects()  # once per process: the collection after each run skips what startup loaded
    # one thread per process, before the inbox's: the search index catches up in the background (imports hand it on)
    search_status.ensure_search_indexer()
    intake.ensure_inbox_watcher()  # one thread per process, whoever is logged in (or nobody)
    monitors.ensure_monitor_worker()  # one thread per process: checks after score runs, delivers alerts
    if auth.current_role() is None:
        warmup.ensure_overview_warm()  # the first login page of a process: the Overview's reads, in the background
        # Not logged in: every page is known, so a link to /audit or /users opens that page, whose login gate
        # shows the login form, and the login's rerun lands on the page asked for; none is listed.
        st.navigation(PAGES, position="hidden").run()
        return
    # expanded: with more than ten pages Streamlit would hide the rest behind "View more"
    # pages render the sidebar (ui.framework.shell.page_frame)
    st.navigation(auth.visible_pages(PAGES), expanded=True).run()


run_page(main)
