"""Escaping: the one helper every user- or data-controlled string goes through before markdown.

Streamlit renders ``st.markdown``, ``st.caption``, ``st.info``, ``st.error``, ... bodies and many labels
as markdown, so text from users or data (names, ids, statements, error messages that quote input)
could otherwise format, link or colour itself (``[x](javascript:...)``, ``:red[...]``, raw HTML).
Tables (``st.dataframe``, ``st.table``) and ``st.text`` show text literally and need no escaping.
"""

from __future__ import annotations

MARKDOWN_SPECIAL = "\\`*_{}[]()#+-.!|<>~$:"


def escape_markdown(text: str) -> str:
    """``text`` with every markdown-significant character backslash-escaped: shown as typed, never formatted."""
    return "".join("\\" + ch if ch in MARKDOWN_SPECIAL else ch for ch in str(text))
