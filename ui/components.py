"""Small display components shared by the pages: empty states.

Errors are shown by ``ui.errors``, escaping is ``ui.text``, the logged-in user and its permissions are
``ui.auth``.
"""

from __future__ import annotations

import streamlit as st


def empty_state(what: str) -> None:
    """Explain what to do when there is nothing to show yet."""
    st.info(
        f"{what}\n\nImport claim-labelled answers with `python -m register import answers.jsonl` "
        "(JSON Lines, CSV or Parquet; see the README), or load the demo set with `python -m register demo`.",
        icon=":material/inbox:",
    )
