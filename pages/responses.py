"""Responses: the scored responses under the shared filters, searched, sorted and paged in DuckDB."""

from __future__ import annotations

import streamlit as st

from register.console import exports
from register.console.queries.explorer import AUTHORITY_FILTERS, EXPORT_LIMIT
from register.console.queries.filters import Filters
from register.settings import settings
from ui.features import responses, search_status
from ui.framework import data
from ui.framework.components import empty_state
from ui.framework.exports import XLSX_MIME, discard, file_reader, prepare_export
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import escape_markdown

PAGE_SIZE = 50
SORTS = {"score": "HRI score", "created_at": "Created", "response_id": "Response id", "use_case": "Use case",
         "model": "Model", "hri_add": "Additive HRI"}
COLUMNS = {
    "response_id": st.column_config.TextColumn("Response"),
    "revision": st.column_config.NumberColumn("Rev."),
    "use_case": st.column_config.TextColumn("Use case"),
    "model": st.column_config.TextColumn("Model"),
    "created_at": st.column_config.DatetimeColumn("Created", format="YYYY-MM-DD HH:mm"),
    "score": st.column_config.ProgressColumn("HRI score", min_value=0, max_value=100, format="%.1f"),
    "band": st.column_config.TextColumn("Band"),
    "decision": st.column_config.TextColumn(
        "Decision", help="What to do with the answer: the most severe of the band's action, the floors, Authority and "
                         "the mitigation"),
    "action": st.column_config.TextColumn("HRI action", help="The band's action (paper Table VI), raised by floors"),
    "mitigation_action": st.column_config.TextColumn(
        "Mitigation", help="CLAIM's Mitigation step (seed 004): answer, revise, ask, abstain or escalate"),
    "mitigation_reason": st.column_config.TextColumn("Why (mitigation)", width="large"),
    "hri_add": st.column_config.NumberColumn("HRI add.", format="%.4f"),
    "hri": st.column_config.NumberColumn("HRI*", format="%.4f"),
    "floors_fired": st.column_config.NumberColumn("Floors"),
    "decisive_claim_id": st.column_config.TextColumn("Floor set by claim"),
    "no_claims": st.column_config.CheckboxColumn("No claims"),
    "claim_count": st.column_config.NumberColumn("Claims"),
    "profile_version": st.column_config.NumberColumn("Profile v."),
    "as_of": st.column_config.DatetimeColumn("Scored as of", format="YYYY-MM-DD HH:mm"),
    "authority": st.column_config.TextColumn(
        "Authority", width="large",
        help="Sources that fail CLAIM's Authority checks, per claim, with the label proposed for a SUPPORTED claim "
             "(never applied: a reviewer decides)"),
}
ALL_AUTHORITY = "all"


def no_match(f, search: str | None, authority: str | None = None) -> None:
    """Nothing to list: say why (the search, the filters, or an empty register) and what to do."""
    if authority is not None and not search:
        st.info(f"No responses with “{escape_markdown(authority)}” under these filters.",
                icon=":material/verified_user:")
    elif search:
        st.info(f"No responses match the search “{escape_markdown(search)}” under these filters. Try other "
                "words, or clear the search.", icon=":material/search_off:")
    elif f != Filters():
        st.info("No responses match these filters. Widen them in the sidebar.", icon=":material/filter_alt_off:")
    else:
        empty_state("There are no scored responses yet.")


def main() -> None:
    f = page_frame()
    st.title("Responses")
    top = st.columns([3, 2, 2, 1, 1])
    search = top[0].text_input("Search question, answer and claims", key="responses_search",
                               placeholder="e.g. ISO 27001").strip() or None
    with top[0]:
        search_status.show_index_note()  # while the index catches up: "search index as of <time>"
    sort_by = top[1].selectbox("Sort by", list(SORTS), format_func=SORTS.get, key="responses_sort")
    picked = top[2].selectbox("Authority", [ALL_AUTHORITY, *AUTHORITY_FILTERS], key="responses_authority",
                              help="Keep the answers whose sources fail an Authority check")
    authority = None if picked == ALL_AUTHORITY else picked
    descending = top[3].toggle("Descending", value=True, key="responses_desc")
    view = (f, search, sort_by, descending, authority)
    if st.session_state.get("responses_view") != view:  # a new search, filter or order starts at page 1
        st.session_state["responses_view"] = view
        st.session_state["responses_page"] = 1
    page = top[4].number_input("Page", min_value=1, step=1, key="responses_page")
    frame, total = responses.responses_page(f, search=search, sort_by=sort_by, descending=descending, limit=PAGE_SIZE,
                                       offset=PAGE_SIZE * (page - 1), authority=authority)
    pages = max(1, -(-total // PAGE_SIZE))
    if total and page > pages:
        st.warning(f"There are only {pages} page(s) for this view; showing none. Go back to page {pages}.")
    if not total:
        no_match(f, search, authority)
        return
    st.caption(f"{total:,} responses · page {page} of {pages} · select a row to open its detail")
    event = st.dataframe(frame, hide_index=True, column_config=COLUMNS, on_select="rerun",
                         selection_mode="single-row", key="responses_table")
    selected = event.selection.rows if event and event.selection else []
    if selected:
        st.switch_page("pages/response_detail.py",
                       query_params={"response_id": str(frame.iloc[selected[0]]["response_id"])})
    export_buttons(f, search, authority, total)


def export_buttons(f, search: str | None, authority: str | None, total: int) -> None:
    """Prepare the view's export once (DuckDB writes the file); later runs only offer that file.

    The session keeps the file's place and the view it shows, never the rows: a rerun of this page (any
    click anywhere) costs nothing here, and a download reads the file when it is clicked.
    """
    limit = settings().excel_max_rows
    left, middle, right, _ = st.columns([1, 1, 1, 3])  # Prepare | CSV | Excel, side by side
    view = (f, search, authority)
    with left:
        if st.button("Prepare export", help=f"Export the current filtered view (up to {EXPORT_LIMIT:,} rows; "
                                            f"also as Excel up to {limit:,} rows)"):
            with st.spinner("Preparing the export..."):
                prepare_export(st.session_state, "responses_export", view, "hri-responses",
                               # not cached: it writes a file; the page keeps the file, never the rows
                               lambda path: exports.write_csv(data.get_store(), f, path, search=search,
                                                              authority=authority, frame_up_to=limit))
    prepared = st.session_state.get("responses_export")
    if prepared is None or prepared.view != view:  # never offer an export of another view
        return
    if not prepared.available():
        discard(st.session_state.pop("responses_export"))
        st.info("The prepared export is gone (prepared too long ago): prepare it again.",
                icon=":material/history:")
        return
    if total > prepared.rows:
        st.caption(f"The export holds the {prepared.rows:,} highest-scoring of the view's {total:,} responses: "
                   "narrow the filters to export the rest.")
    middle.download_button("Download CSV", file_reader(prepared.csv), "hri-responses.csv", "text/csv",
                         on_click="ignore", key="responses_csv")
    if prepared.excel is not None:
        right.download_button("Download Excel", file_reader(prepared.excel), "hri-responses.xlsx", XLSX_MIME,
                              on_click="ignore", key="responses_xlsx")
    elif limit == 0:
        st.caption("Excel exports are turned off (HRI_EXCEL_MAX_ROWS=0); the CSV opens in Excel too.")
    else:
        st.caption(f"No Excel file: this export has {prepared.rows:,} rows and Excel is offered up to {limit:,} "
                   "(HRI_EXCEL_MAX_ROWS), as a larger workbook takes the console, shared by every user, too long to "
                   "build. The CSV holds them all and opens in Excel too.")


run_page(main)
