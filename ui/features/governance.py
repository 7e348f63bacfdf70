"""UI helpers of the governance pages: cached reads of the registers (sources, claims, use cases), rules and
checklist runs, the release report's files, and the register pages' import / export and deleted rows (their grid is
``ui.framework.versioned_table``). No business rules: those live in ``register.governance`` (``registers``,
``transfer``, ``evidence``, ``checklist``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pandas as pd
import streamlit as st

from register import RegisterError
from register.governance import checklist, evidence, registers, report, transfer
from register.governance import use_cases as use_case_register
from ui.framework import data, exports
from ui.framework.errors import show_error
from ui.framework.versioned_table import reload

# --- cached reads ---------------------------------------------------------------------------------------

sources = data.cached(registers.list_sources)
claims = data.cached(registers.list_claims)
use_cases = data.cached(use_case_register.list_use_cases)
evaluation = data.cached(evidence.evaluate_rules)
rules = data.cached(evidence.list_rules)
rule_versions = data.cached(evidence.rule_versions)
pending_rule_versions = data.cached(evidence.pending_rule_versions)
checklist_history = data.cached(checklist.history)
run_detail = data.cached(checklist.run_detail)


def report_files(run_id: int, *, include_outcomes: bool = False) -> tuple[Callable[[], bytes], Callable[[], str]]:
    """The release report as PDF and as Markdown, each built when its download button is clicked (deferred
    data), never on a run of the page; ``include_outcomes`` adds the fit and the comparison of the register's
    outcomes (seconds of bootstrap, so only when asked)."""
    store = data.get_store()
    return (partial(report.report_pdf, store, run_id, include_outcomes=include_outcomes),
            partial(report.report_markdown, store, run_id, include_outcomes=include_outcomes))


# --- the register pages' import, export and deleted rows --------------------------------------------------


def import_export(kind: str, actor, export_frame: pd.DataFrame) -> None:
    """Downloads (CSV, Excel, template; formula-escaped) and an upload that reports bad rows by number."""
    # deferred data: the bytes are built when a button is clicked, not on every run of the page
    cols = st.columns(4)
    cols[0].download_button("Export CSV", partial(exports.to_csv_bytes, export_frame), f"{kind}-register.csv",
                            "text/csv", key=f"{kind}_csv", on_click="ignore")
    cols[1].download_button("Export Excel", partial(exports.to_excel_bytes, export_frame, sheet=kind),
                            f"{kind}-register.xlsx", exports.XLSX_MIME, key=f"{kind}_xlsx", on_click="ignore")
    template = transfer.template(kind)
    cols[2].download_button("Template (CSV)", partial(exports.to_csv_bytes, template), f"{kind}-template.csv",
                            "text/csv", key=f"{kind}_tpl", on_click="ignore")
    cols[3].download_button("Template (Excel)", partial(exports.to_excel_bytes, template, sheet=kind),
                            f"{kind}-template.xlsx", exports.XLSX_MIME, key=f"{kind}_tplx", on_click="ignore")
    upload = st.file_uploader(f"Import a {kind} register (CSV or Excel, at most "
                              f"{transfer.MAX_UPLOAD_BYTES // 1_000_000} MB)", type=["csv", "xlsx"],
                              key=f"{kind}_upload")
    kept = f"{kind}_import_result"
    if upload is not None and st.button("Import", key=f"{kind}_import"):
        try:
            result = data.write(transfer.import_register, actor, kind, transfer.read_upload(upload.name,
                                                                                       upload.getvalue()))
        except RegisterError as error:
            show_error(error)
            return
        reload(kind)
        # the page's counts and tables above were read before the import: run it again, the report kept for it
        st.session_state[kept] = result
        st.rerun()
    if (result := st.session_state.get(kept)) is not None:
        st.success(f"{result.rows} rows: {result.inserted} new, {result.updated} updated, "
                   f"{result.unchanged} unchanged, "
                   f"{result.rejected_rows} rejected" + (f"; {result.sources_created} new sources"
                                                         if result.sources_created else ""), icon=":material/upload:")
        if result.rejected:
            st.warning("Rejected rows (fix them and import the file again; the other rows were saved):")
            st.dataframe(pd.DataFrame([{"row": p.row, "column": p.column, "problem": p.message}
                                       for p in result.rejected]), hide_index=True)


def deleted_rows(kind: str, frame: pd.DataFrame, key_col: str, label_col: str, actor) -> None:
    gone = frame[frame["deleted"]]
    if gone.empty:
        st.caption("Nothing deleted.")
        return
    for key, label in zip(gone[key_col], gone[label_col], strict=True):
        left, right = st.columns([5, 1])
        left.text(f"{key}: {str(label or '')[:100]}")
        if right.button("Restore", key=f"{kind}_restore_{key}"):
            try:
                data.write(registers.restore, actor, kind, key)
            except RegisterError as error:
                show_error(error)
                return
            reload(kind)
            st.rerun()
