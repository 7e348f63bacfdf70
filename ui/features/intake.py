"""Intake in the console: uploads through the register's importer, the quarantine grid, the inbox.

An upload is written to a temporary folder under the name the user gave it (the batch's source name,
as on the command line) and imported by ``register.ingest.importer.import_path``: the same checks,
quarantine and report as ``python -m register import``. The quarantine grid is the open rows of
``register.ingest.quarantine``; each row's action (re-import its edited text, or discard it with a
reason) goes through the register, which checks the permission. The inbox watcher is one thread per
process (``ensure_inbox_watcher``, a Streamlit resource stopped when the resource is released).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import streamlit as st

from register.db.store import database_path_from_env
from register.errors import ImportRejected
from register.ingest import inbox as inbox_mod
from register.ingest.importer import FORMATS, ImportReport, ProgressFn, import_path, reimport_quarantined
from register.ingest.quarantine import discard_quarantined, quarantine_rows
from register.settings import settings
from ui.framework import data

__all__ = ["ACTIONS", "REPORT_COUNTS", "UPLOAD_TYPES", "GridAction", "apply_action", "ensure_inbox_watcher",
           "grid_actions", "import_upload", "inbox_status", "quarantine_frame", "reasons_text", "report_frame"]

UPLOAD_TYPES = [suffix.lstrip(".") for suffix in FORMATS]  # what the importer reads
REPORT_COUNTS = (("Records", "records"), ("Accepted", "accepted"), ("New", "new_responses"),
                 ("Revised", "new_revisions"), ("Unchanged", "unchanged"), ("Quarantined", "quarantined"))
REIMPORT, DISCARD = "re-import", "discard"
ACTIONS = (REIMPORT, DISCARD)  # an empty cell: leave the row as it is
# the action first: the record's text is wide and would push it out of sight
GRID_COLUMNS = ["quarantine_id", "action", "discard_reason", "source_name", "location", "response_id", "reasons", "raw"]


# --- upload ------------------------------------------------------------------------------------------


def import_upload(actor, name: str, content: bytes, progress: ProgressFn | None = None) -> ImportReport:
    """Import uploaded bytes as the file ``name`` (its base name; the register checks the permission).

    The search index is left to the console's background catch-up when it runs (``ui.features.search_status``):
    the report comes once the records are stored and scored; search finds them meanwhile."""
    safe = Path(name.replace("\\", "/")).name
    if not safe or safe.startswith("."):
        raise ImportRejected(f"{name!r} is not a file name that can be imported (it needs a name and an "
                             "extension such as .jsonl, .csv or .parquet)")
    with tempfile.TemporaryDirectory(prefix="hri-upload-") as folder:
        path = Path(folder) / safe
        path.write_bytes(content)
        return data.write(import_path, actor, path, progress=progress, defer_index=None)


def report_frame(report: ImportReport) -> pd.DataFrame:
    """One row per file (batch) of an import report, in the CLI's words."""
    return pd.DataFrame([{"batch": b.batch_id, "file": b.source_name, "format": b.format, "records": b.records,
                          "accepted": b.accepted, "new": b.new_responses, "revised": b.new_revisions,
                          "unchanged": b.unchanged, "quarantined": b.quarantined,
                          "quarantine rows resolved": b.resolved, "scored": b.scored} for b in report.batches])


def reasons_text(problems: list[dict]) -> str:
    """``field: message; field: message`` (the CLI's wording)."""
    return "; ".join((f"{p['field']}: " if p.get("field") else "") + str(p["message"]) for p in problems)


# --- the quarantine grid -----------------------------------------------------------------------------


def quarantine_frame(statuses: tuple[str, ...] = ("open",), limit: int = 500) -> pd.DataFrame:
    """The quarantine rows as the grid shows them (read fresh: the grid is a work list that changes per click)."""
    rows = quarantine_rows(data.get_store(), statuses, limit=limit)
    frame = pd.DataFrame([{**row, "reasons": reasons_text(row["reasons"]), "action": None, "discard_reason": ""}
                          for row in rows])
    if frame.empty:
        frame = pd.DataFrame(columns=[*GRID_COLUMNS, "status", "created_at", "discarded_by", "discard_reason"])
    return frame


@dataclass(frozen=True)
class GridAction:
    """What the user asked for one quarantine row: re-import (with the text as edited) or discard (why)."""

    quarantine_id: int
    action: str
    raw: str
    reason: str


def grid_actions(frame: pd.DataFrame, state: dict) -> list[GridAction]:
    """The rows of the grid given an action, from ``st.data_editor``'s state (``edited_rows``)."""
    actions = []
    for index, edits in sorted((state or {}).get("edited_rows", {}).items(), key=lambda item: int(item[0])):
        row = frame.iloc[int(index)]
        action = edits.get("action", row["action"]) or ""
        if action not in (REIMPORT, DISCARD):
            continue
        actions.append(GridAction(int(row["quarantine_id"]), action, str(edits.get("raw", row["raw"])),
                                  str(edits.get("discard_reason", row["discard_reason"]) or "")))
    return actions


def apply_action(actor, action: GridAction) -> ImportReport | None:
    """Carry out one grid action through the register (which checks the permission); the caches are cleared."""
    if action.action == REIMPORT:
        return data.write(reimport_quarantined, actor, action.quarantine_id, action.raw)
    data.write(discard_quarantined, actor, action.quarantine_id, action.reason)
    return None


# --- the inbox ---------------------------------------------------------------------------------------


def _release(watcher: inbox_mod.InboxWatcher | None) -> None:
    if watcher is not None:
        watcher.stop()


@st.cache_resource(show_spinner=False, on_release=_release)
def _watcher(database: str, folder: str, poll_seconds: float) -> inbox_mod.InboxWatcher:
    """The inbox watcher: a thread, not a read (hence not ``data.cached``), whose imports clear the caches.

    One per process and (database, folder, interval): Streamlit computes a resource once however many sessions ask
    at the same moment, and ``start_watcher`` holds its own lock besides; a released resource stops its thread."""
    return inbox_mod.start_watcher(data.get_store(), Path(folder), poll_seconds=poll_seconds,
                                   on_import=lambda _result: data.after_write())


def ensure_inbox_watcher() -> inbox_mod.InboxWatcher | None:
    """Start this process's inbox watcher if it is not running (``HRI_INBOX_POLL_SECONDS=0``: none)."""
    poll = settings().inbox_poll_seconds
    if poll <= 0:
        return None
    database = database_path_from_env().resolve()
    watcher = _watcher(str(database), str(inbox_mod.inbox_for(database).resolve()), poll)
    if not watcher.running:  # stopped (e.g. by a test): start again
        watcher.start()
    return watcher


def stop_inbox_watcher() -> None:
    """Stop this process's inbox watcher if it runs (the server's shutdown: before the database closes)."""
    poll = settings().inbox_poll_seconds
    if poll > 0:
        database = database_path_from_env().resolve()
        watcher = _watcher(str(database), str(inbox_mod.inbox_for(database).resolve()), poll)
        if watcher.running:
            watcher.stop()


def inbox_status(limit: int = 20) -> dict:
    """The inbox folder, whether a watcher looks into it, the files waiting and the latest reports."""
    root = inbox_mod.inbox_for(database_path_from_env())
    folder = inbox_mod.Inbox(root)
    latest = []
    for path in reversed(folder.reports()[-limit:]):
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        meta = report.get("inbox", {})
        error = report.get("error")
        latest.append({"file": meta.get("file"), "outcome": meta.get("outcome"), "finished": meta.get("finished_at"),
                       "records": report.get("records"), "accepted": report.get("accepted"),
                       "quarantined": report.get("quarantined"),
                       "error": f"{error['title']}: {error['message']}" if error else "",
                       "moved to": meta.get("moved_to")})
    return {"root": root, "heartbeat": inbox_mod.watcher_alive(root),
            "waiting": [p.name for p in folder.waiting()], "latest": pd.DataFrame(latest)}
