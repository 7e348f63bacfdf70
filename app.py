"""HRI governance console: entry point (``streamlit run app.py``).

Opens the database (seeding the demo set on first start) and runs the selected page. Pages live in
``pages/``, one per file, and stay thin; each starts with ``ui.shell.page_frame()`` (shared filters).
"""

from __future__ import annotations

import streamlit as st

from ui import data

st.set_page_config(page_title="HRI console", page_icon=":material/policy:", layout="wide")

PAGES = {
    "Console": [
        st.Page("pages/overview.py", title="Overview", icon=":material/dashboard:", default=True),
        st.Page("pages/responses.py", title="Responses", icon=":material/table_rows:"),
        st.Page("pages/response_detail.py", title="Response detail", icon=":material/fact_check:",
                url_path="response"),
        st.Page("pages/review_queue.py", title="Review queue", icon=":material/rule:", url_path="review"),
    ],
}


def main() -> None:
    data.seed_if_empty(data.get_store())  # before any page: the first start loads the demo set
    st.navigation(PAGES).run()  # each page renders the shared sidebar itself (ui.shell.page_frame)


main()
