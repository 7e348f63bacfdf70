"""The one place a page shows an error, whatever its kind.

- ``LoginFailed``: only its one sentence ("Invalid username or password"), never which part was wrong.
- ``ValidationFailed`` (a refused register save): its title, then every refused row as a table; on a
  one-record form (``show_form_error``) each problem under the label of its field instead.
- ``hri_core.HRIError``: its title and every problem as ``field: message``.
- ``RegisterError``: its title and its message (what happened, what to do).
- ``DatabaseError`` other than a write conflict (the file is in use, cannot be opened, refused a
  statement): its message names files, process ids or SQL, which are the operator's business, not a
  visitor's: logged server-side under an incident id, the page shows its title and the incident id.
- Anything else is a defect, not the user's to fix: its full traceback is logged server-side under a
  short incident id and the page shows only "Something went wrong (incident ID)", never the exception,
  a traceback or a file path.

Messages quote user input (ids, names, values), so they are escaped (``ui.framework.text``) before rendering.
Imports nothing from the other ``ui`` modules except ``ui.framework.text``, so every one of them can use it.
"""

from __future__ import annotations

import logging
import secrets

import pandas as pd
import streamlit as st

from hri_core import HRIError
from register.errors import DatabaseError, LoginFailed, RegisterError, ValidationFailed, WriteConflict
from ui.framework.text import escape_markdown

EXPECTED = (RegisterError, HRIError)  # errors whose message is written for the user
ICON = ":material/error:"
log = logging.getLogger(__name__)


def show_error(error: BaseException) -> None:
    """Render ``error`` on the page: a title and what to do (an incident id for unexpected errors)."""
    if isinstance(error, LoginFailed):
        st.error(escape_markdown(str(error)), icon=":material/lock:")
    elif isinstance(error, ValidationFailed):
        st.error(f"**{error.title}** — {len(error.problems)} problem(s); nothing was saved.", icon=ICON)
        st.dataframe(pd.DataFrame([{"row": p.row, "column": p.column, "problem": p.message}
                                   for p in error.problems]), hide_index=True)
    elif isinstance(error, HRIError):
        problems = "; ".join(f"{p.loc or 'record'}: {p.message}" for p in error.problems)
        where = f"record {error.record}: " if error.record else ""
        st.error(f"**{error.title}** — {escape_markdown(where + problems)}", icon=ICON)
    elif isinstance(error, DatabaseError) and not isinstance(error, WriteConflict):
        incident = log_incident(error)
        st.error(f"**{error.title}** — the database is not available for this request (incident {incident}). "
                 "Please try again later, or report the incident id to your administrator: the details are in "
                 "the server log.", icon=ICON)
    elif isinstance(error, RegisterError):
        st.error(f"**{error.title}** — {escape_markdown(str(error))}", icon=ICON)
    else:
        show_incident(log_incident(error))


def show_form_error(error: BaseException, labels: dict[str, str]) -> None:
    """Render an error of a one-record form: a refused save names each field by its label on the form
    (``labels``: column -> label), never "row 1 · access_date"; anything else goes to ``show_error``."""
    if not isinstance(error, ValidationFailed):
        show_error(error)
        return
    lines = "\n".join(f"- **{escape_markdown(labels.get(p.column or '', p.column or 'Form'))}**: "
                      f"{escape_markdown(p.message)}" for p in error.problems)
    st.error(f"**Not saved** — fix {'this field' if len(error.problems) == 1 else 'these fields'}; what you "
             f"typed is kept:\n\n{lines}", icon=ICON)


def log_incident(error: BaseException) -> str:
    """Log ``error`` with its full traceback under a new incident id (server side only); return the id."""
    incident = secrets.token_hex(4).upper()
    log.error("incident %s: unexpected %s", incident, type(error).__name__, exc_info=error)
    return incident


def show_incident(incident: str) -> None:
    """What the user sees of an unexpected error: the incident id to quote, nothing of its details."""
    st.error(f"Something went wrong (incident {incident}). Please report the incident id to your "
             "administrator: the details are in the server log.", icon=ICON)
