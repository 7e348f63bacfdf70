"""The Audit trail page's reads: the events, their filter options, an answer's whole life, the chain's
verification and head, the four-eyes approvals. Cached with ``scope="account"``: a login or an account change
(``after_account_write``) adds events, so it clears them as well as a write to the record does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from register.access import four_eyes, second_admin
from register.console import answer_life
from register.console.exports import CsvExport
from register.db import audit
from register.db.audit import EventFilter
from ui.framework import data

events = data.cached(audit.search_events, scope="account")
answer_events = data.cached(answer_life.answer_events, scope="account")
names_answer = data.cached(answer_life.names_answer, scope="account")
options = data.cached(audit.event_options, scope="account")
chain = data.cached(audit.verify_chain, scope="account")
head = data.cached(audit.head, scope="account")
linked_approvals = data.cached(four_eyes.linked_approvals, scope="account")
sole_admin_namings = data.cached(second_admin.namings, scope="account")


def csv_writer(f: EventFilter) -> Callable[[Path], CsvExport]:
    """Writes the audit events matching ``f`` (newest first, at most 100,000) to a CSV file by DuckDB's COPY;
    the store is taken now, as a download runs the writer on a thread of its own."""
    store = data.get_store()
    return lambda path: audit.write_events_csv(store, f, path)


def answer_csv_writer(response_id: str, f: EventFilter) -> Callable[[Path], CsvExport]:
    """Writes the events of the answer ``response_id`` matching ``f`` (oldest first, with what each did to it) to a
    CSV file by DuckDB's COPY; the store is taken now, as ``csv_writer``'s."""
    store = data.get_store()
    return lambda path: answer_life.write_answer_events_csv(store, response_id, f, path)
