"""Small display components shared by the pages: the one error renderer, empty states, the user."""

from __future__ import annotations

import streamlit as st

from hri_core import HRIError
from register import Actor, RegisterError


def current_actor() -> Actor:
    """The logged-in user (``ui.auth``; ``page_frame()`` stops every page run before login)."""
    from ui.auth import current_actor as _logged_in

    actor = _logged_in()
    if actor is None:
        raise RuntimeError("nobody is logged in: call ui.shell.page_frame() first")
    return actor


def can(permission) -> bool:
    """Whether the logged-in user holds ``permission`` (pages show only what the role may do)."""
    from register.access.permissions import allowed

    actor = current_actor()
    return allowed(actor.role, permission)


def show_error(error: Exception) -> None:
    """The single place that renders errors on a page: a title and what to do."""
    from register.governance.registers import ValidationFailed  # imported here: ui.governance imports this module

    if isinstance(error, ValidationFailed):  # every refused row, one per line, as a table
        from ui.governance import show_problems

        show_problems(error)
    elif isinstance(error, HRIError):
        problems = "; ".join(f"{p['field'] or 'record'}: {p['message']}" for p in error.as_dict()["problems"])
        st.error(f"**{error.title}** — {problems}", icon=":material/error:")
    elif isinstance(error, RegisterError):
        st.error(f"**{error.title}** — {error}", icon=":material/error:")
    else:
        st.error(f"**Unexpected error** — {type(error).__name__}: {error}", icon=":material/error:")


def empty_state(what: str) -> None:
    """Explain what to do when there is nothing to show yet."""
    st.info(
        f"{what}\n\nImport claim-labelled answers with `python -m register import answers.jsonl` "
        "(JSON Lines, CSV or Parquet; see the README), or load the demo set with `python -m register demo`.",
        icon=":material/inbox:",
    )


MARKDOWN_SPECIAL = "\\`*_{}[]()#+-.!|<>~$:"


def escape_markdown(text: str) -> str:
    """User text shown through st.markdown is escaped so it can neither format nor link."""
    return "".join("\\" + ch if ch in MARKDOWN_SPECIAL else ch for ch in text)
