"""UI helpers of the governance pages: cached reads of the registers, rules and checklist runs, the
translation of a data editor's edit state into a ``register.governance.registers.RowChanges``, and
writes that clear the read caches. No business rules: those live in ``register.governance``
(``registers``, ``transfer``, ``evidence``, ``checklist``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import Any

import pandas as pd
import streamlit as st

from register import RegisterError
from register.db.audit import EventFilter, search_events
from register.governance import checklist, evidence, registers, report, transfer
from ui.framework import data, exports
from ui.framework.errors import show_error

# --- cached reads ---------------------------------------------------------------------------------------

sources = data.cached(registers.list_sources)
claims = data.cached(registers.list_claims)
evaluation = data.cached(evidence.evaluate_rules)
rules = data.cached(evidence.list_rules)
rule_versions = data.cached(evidence.rule_versions)
checklist_history = data.cached(checklist.history)
run_detail = data.cached(checklist.run_detail)


def report_files(run_id: int) -> tuple[Callable[[], bytes], Callable[[], str]]:
    """The release report as PDF and as Markdown, each built when its download button is clicked (deferred
    data), never on a run of the page."""
    store = data.get_store()
    return partial(report.report_pdf, store, run_id), partial(report.report_markdown, store, run_id)


def audit_for(entity_type: str, limit: int = 20) -> pd.DataFrame:
    """The latest audit events of one entity type (what the save just recorded), newest first."""
    return search_events(data.get_store(), EventFilter(entity_type=entity_type), limit=limit)[0]


# --- editor state -> changes ----------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    if value is pd.NA:  # a missing value of a nullable (boolean) column
        return None
    if isinstance(value, pd.Timestamp):
        return value.date()
    if hasattr(value, "tolist") and not isinstance(value, str):
        return value.tolist()
    return value


def editor_changes(loaded: pd.DataFrame, state: dict, key_col: str, columns: tuple[str, ...]) -> registers.RowChanges:
    """A data editor's ``{"edited_rows", "added_rows", "deleted_rows"}`` against the frame it was loaded
    with (positions index ``loaded``); updates carry the row version read at load time."""
    changes = registers.RowChanges()
    deleted = set(int(i) for i in state.get("deleted_rows", []))
    for pos, edits in (state.get("edited_rows") or {}).items():
        pos = int(pos)
        if pos in deleted or not edits:
            continue
        row = loaded.iloc[pos]
        values = {c: _plain(row[c]) for c in columns}
        values.update(edits)
        changes.updates.append({"key": row[key_col], "row_version": int(row["row_version"]), "values": values,
                                "row": pos + 1})
    for n, added in enumerate(state.get("added_rows") or [], start=len(loaded) + 1):
        if any(v not in (None, "", []) for v in added.values()):
            changes.inserts.append({"values": dict(added), "row": n})
    for pos in sorted(deleted):
        row = loaded.iloc[pos]
        changes.deletes.append({"key": row[key_col], "row_version": int(row["row_version"])})
    return changes


# --- writes (each clears the caches) --------------------------------------------------------------------


def save(kind: str, actor, changes: registers.RowChanges) -> dict:
    return data.write(registers.save_sources if kind == "sources" else registers.save_claims, actor, changes)


# --- the register editor shared by the sources and claims pages ------------------------------------------


def _change_summary(before: Any, after: Any) -> str:
    b = json.loads(before) if isinstance(before, str) and before else (before or {})
    a = json.loads(after) if isinstance(after, str) and after else (after or {})
    if not isinstance(a, dict):
        return ""
    if not b:
        return "created" if "deleted" not in a else ""
    if not isinstance(b, dict):
        return ""
    parts = [f"{k}: {b.get(k)!r} → {a.get(k)!r}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    return "; ".join(parts)[:300]


def recent_changes(entity_type: str, limit: int = 10) -> None:
    """The latest audited changes of this register, as a data frame (text shown literally: ``st.table``
    would render the names, keys and values as markdown)."""
    events = audit_for(entity_type, limit)
    if events.empty:
        st.caption("No changes recorded yet.")
        return
    st.dataframe(hide_index=True, key=f"{entity_type}_recent_changes", data=pd.DataFrame({
        "when (UTC)": events["occurred_at"].dt.strftime("%Y-%m-%d %H:%M:%S"),
        "who": events["actor_name"] + " (" + events["actor_role"] + ")",
        "action": events["action"], "row": events["entity_id"],
        "change": [_change_summary(b, a) for b, a in zip(events["before"], events["after"], strict=True)],
    }))


def register_editor(kind: str, frame: pd.DataFrame, *, key_col: str, columns: tuple[str, ...],
                    column_config: dict, column_order: tuple[str, ...], actor, entity_type: str,
                    editable: bool = True) -> None:
    """An editable grid over a snapshot of the register taken at load time: saving sends the edits with
    the row versions of that snapshot, so a row changed meanwhile is refused instead of overwritten."""
    if not editable:
        st.dataframe(frame, hide_index=True, column_config=column_config, column_order=column_order, width="stretch")
        st.caption(f"Read only: your role ({actor.role}) may not edit the register.")
        return
    gen_key, snap_key = f"{kind}_editor_gen", f"{kind}_snapshot"
    gen = st.session_state.setdefault(gen_key, 0)
    if snap_key not in st.session_state:
        st.session_state[snap_key] = frame.reset_index(drop=True)
    loaded = st.session_state[snap_key]
    st.data_editor(loaded, key=f"{kind}_editor_{gen}", num_rows="dynamic", hide_index=True,
                   column_config=column_config, column_order=column_order, width="stretch")
    left, right, _ = st.columns([1, 1, 4])
    save_clicked = left.button("Save changes", type="primary", key=f"{kind}_save")
    if right.button("Reload", key=f"{kind}_reload"):
        _reset(kind)
        st.rerun()
    if save_clicked:
        state = st.session_state.get(f"{kind}_editor_{gen}") or {}
        changes = editor_changes(loaded, state, key_col, columns)
        if not changes:
            st.info("Nothing to save: edit a cell, add or delete a row first.")
            return
        try:
            counts = save(kind, actor, changes)
        except RegisterError as error:  # ValidationFailed too: show_error lists every refused row
            show_error(error)
            return
        _reset(kind)
        st.session_state[f"{kind}_saved"] = counts
        st.rerun()
    saved = st.session_state.pop(f"{kind}_saved", None)
    if saved:
        st.success(f"Saved: {saved['updated']} updated, {saved['inserted']} added, {saved['deleted']} deleted "
                   "(each recorded in the audit trail below).", icon=":material/check:")


def _reset(kind: str) -> None:
    st.session_state.pop(f"{kind}_snapshot", None)
    st.session_state[f"{kind}_editor_gen"] = st.session_state.get(f"{kind}_editor_gen", 0) + 1


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
    if upload is not None and st.button("Import", key=f"{kind}_import"):
        try:
            result = data.write(transfer.import_register, actor, kind, transfer.read_upload(upload.name,
                                                                                       upload.getvalue()))
        except RegisterError as error:
            show_error(error)
            return
        _reset(kind)
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
            _reset(kind)
            st.rerun()
