"""The editor of a versioned table: a data grid over the table as it was read, and its save.

One component for the governance pages that edit a table in a grid, whichever way the table is versioned:

- ``RowVersions``: every row carries its own ``row_version`` (the source and claims registers). The grid holds a
  snapshot of the table taken at load time; "Save changes" sends the edits (``editor_changes``: the grid's edit
  state turned into the register's ``RowChanges``) with the versions of that snapshot, so a row changed by someone
  else meanwhile is refused ("Changed by someone else") instead of overwritten, and "Reload" takes the table
  afresh. The table's latest audited changes are listed below it ("Recent changes").
- ``TableVersions``: the whole table is versioned (the evidence rules, the use cases, the authority rules). A save
  writes every row as a new version, with the reason asked for; the newest version is in force.

Either way a refused save is shown by ``ui.framework.errors.show_error`` (every refused row of a
``ValidationFailed``) and writes nothing; a save, a reload or a write elsewhere on the page (``reload``) gives the
grid a new widget key, so it shows the table afresh without the edits it held. Widget and state keys start with
the table's ``key``: ``{key}_editor_{generation}``, ``{key}_editor_gen``, ``{key}_save``, ``{key}_reload``,
``{key}_reason``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from register import RegisterError
from register.db.audit import EventFilter, search_events
from register.governance.registers import RowChanges
from ui.framework import data
from ui.framework.components import toast_then_rerun
from ui.framework.errors import show_error
from ui.framework.text import escape_markdown

__all__ = ["RowVersions", "TableVersions", "editor_changes", "recent_changes", "reload", "versioned_table_editor"]


@dataclass(frozen=True)
class RowVersions:
    """A table whose rows carry their own version: ``save(changes)`` writes a ``RowChanges`` and returns the counts
    (``updated``, ``inserted``, ``deleted``), refusing a stale row; ``key_col`` names a row, ``columns`` are the
    values an update sends, ``audit_entity`` is the audit trail's entity type of the rows ("Recent changes")."""

    save: Callable[[RowChanges], dict]
    key_col: str
    columns: tuple[str, ...]
    audit_entity: str


@dataclass(frozen=True)
class TableVersions:
    """A table saved whole as a new version: ``save(rows, reason, **options)`` returns the new version, ``saved(v)``
    says so in a toast. ``reason`` and ``button`` label the reason field and the save button; ``options(generation)``,
    when given, renders widgets between the grid and the reason (keyed with the generation, so that they start
    afresh with the grid) and returns their values, which ``save`` takes as keywords."""

    save: Callable[..., int]
    reason: str
    button: str
    saved: Callable[[int], str]
    options: Callable[[int], dict[str, Any]] | None = None


def versioned_table_editor(key: str, frame: pd.DataFrame, versions: RowVersions | TableVersions, *,
                           column_config: dict, column_order: tuple[str, ...] | None = None,
                           read_only: str | None = None) -> None:
    """The table ``frame`` (as read now) in an editable grid with its save, ``versions`` telling how it is saved.

    ``read_only``: the table is shown, not edited, with this caption (the viewer may not edit it). A page whose
    read-only view shows something else calls this only for those who may edit.
    """
    if read_only is not None:
        st.dataframe(frame, hide_index=True, column_config=column_config, column_order=column_order, width="stretch")
        st.caption(read_only)
    elif isinstance(versions, RowVersions):
        _row_versions(key, frame, versions, column_config, column_order)
    else:
        _table_versions(key, frame, versions, column_config, column_order)
    if isinstance(versions, RowVersions):
        st.subheader("Recent changes")
        recent_changes(versions.audit_entity)


def reload(key: str) -> None:
    """Show the table ``key`` afresh on the next run, without the edits its grid holds (after a save, or a write
    elsewhere on the page that changed the table: a form, an import, a restore)."""
    st.session_state.pop(f"{key}_snapshot", None)
    st.session_state[f"{key}_editor_gen"] = st.session_state.get(f"{key}_editor_gen", 0) + 1


def _grid(key: str, frame: pd.DataFrame, column_config: dict, column_order: tuple[str, ...] | None) -> pd.DataFrame:
    gen = st.session_state.setdefault(f"{key}_editor_gen", 0)
    return st.data_editor(frame, key=f"{key}_editor_{gen}", num_rows="dynamic", hide_index=True,
                          column_config=column_config, column_order=column_order, width="stretch")


def _row_versions(key: str, frame: pd.DataFrame, versions: RowVersions, column_config: dict,
                  column_order: tuple[str, ...] | None) -> None:
    snap_key = f"{key}_snapshot"
    if snap_key not in st.session_state:
        st.session_state[snap_key] = frame.reset_index(drop=True)
    loaded = st.session_state[snap_key]
    _grid(key, loaded, column_config, column_order)
    left, right, _ = st.columns([1, 1, 4])
    save_clicked = left.button("Save changes", type="primary", key=f"{key}_save")
    if right.button("Reload", key=f"{key}_reload"):
        reload(key)
        st.rerun()
    if save_clicked:
        state = st.session_state.get(f"{key}_editor_{st.session_state[f'{key}_editor_gen']}") or {}
        changes = editor_changes(loaded, state, versions.key_col, versions.columns)
        if not changes:
            st.info("Nothing to save: edit a cell, add or delete a row first.")
            return
        try:
            counts = versions.save(changes)
        except RegisterError as error:  # ValidationFailed too: show_error lists every refused row
            show_error(error)
            return
        reload(key)
        st.session_state[f"{key}_saved"] = counts
        st.rerun()
    saved = st.session_state.pop(f"{key}_saved", None)
    if saved:
        st.success(f"Saved: {saved['updated']} updated, {saved['inserted']} added, {saved['deleted']} deleted "
                   "(each recorded in the audit trail below).", icon=":material/check:")


def _table_versions(key: str, frame: pd.DataFrame, versions: TableVersions, column_config: dict,
                    column_order: tuple[str, ...] | None) -> None:
    edited = _grid(key, frame, column_config, column_order)
    options = versions.options(st.session_state[f"{key}_editor_gen"]) if versions.options else {}
    reason = st.text_input(versions.reason, key=f"{key}_reason")
    if st.button(versions.button, type="primary", key=f"{key}_save"):
        try:
            version = versions.save(edited.to_dict("records"), reason, **options)
        except RegisterError as error:  # ValidationFailed too: show_error lists every row
            show_error(error)
            return
        reload(key)
        toast_then_rerun(versions.saved(version))


# --- the grid's edit state -> the register's changes -------------------------------------------------------


def _plain(value: Any) -> Any:
    if value is pd.NA:  # a missing value of a nullable (boolean) column
        return None
    if isinstance(value, pd.Timestamp):
        return value.date()
    if hasattr(value, "tolist") and not isinstance(value, str):
        return value.tolist()
    return value


def editor_changes(loaded: pd.DataFrame, state: dict, key_col: str, columns: tuple[str, ...]) -> RowChanges:
    """A data editor's ``{"edited_rows", "added_rows", "deleted_rows"}`` against the frame it was loaded
    with (positions index ``loaded``); updates carry the row version read at load time."""
    changes = RowChanges()
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


# --- the table's latest audited changes --------------------------------------------------------------------


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
    """The latest audited changes of one entity type (what a save just recorded), newest first, as a data frame
    (text shown literally: ``st.table`` would render the names, keys and values as markdown). Read fresh."""
    events = search_events(data.get_store(), EventFilter(entity_type=entity_type), limit=limit)[0]
    if events.empty:
        st.caption("No changes recorded yet.")
        return
    st.dataframe(hide_index=True, key=f"{entity_type}_recent_changes", data=pd.DataFrame({
        "when (UTC)": events["occurred_at"].dt.strftime("%Y-%m-%d %H:%M:%S"),
        "who": events["actor_name"] + " (" + events["actor_role"] + ")",
        "action": events["action"], "row": events["entity_id"],
        "change": [_change_summary(b, a) for b, a in zip(events["before"], events["after"], strict=True)],
    }))


# --- versions waiting for a second person (four eyes: register.access.version_approvals) -------------------

def pending_versions_panel(key: str, what: str, pending: list[dict], approve: Callable[[int, str], Any], *,
                           actor_name: str, may_approve: bool) -> None:
    """Each pending version of ``what`` (rows of a ``pending_*`` read: version, proposed_by), with an Approve
    form (reason required) for anyone with the permission but the person who saved it."""
    for row in pending:
        version, author = int(row["version"]), str(row["proposed_by"])
        st.warning(escape_markdown(f"{what} version {version}, saved by {author}, is pending: it takes effect when "
                                   "a second person approves it (four eyes)."), icon=":material/group:")
        if author == actor_name:
            st.caption("You saved it: a different person approves it.")
            continue
        if not may_approve:
            continue
        with st.form(f"{key}_approve_{version}", enter_to_submit=False):
            reason = st.text_input("Why you approve it (required)", key=f"{key}_approve_reason_{version}",
                                   max_chars=2000)
            go = st.form_submit_button(f"Approve version {version}")
        if go:
            try:
                approve(version, reason)
            except RegisterError as error:
                show_error(error)
            else:
                toast_then_rerun(escape_markdown(f"{what} version {version} is now in force"))
