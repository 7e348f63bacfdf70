"""The answer an annotator works on: its question, answer, retrieved context and cited sources.

Shared by the labelling workbench's two kinds of work (a blind batch, and the judges' proposals), so both show
an answer the same way. Every string comes from data and is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from ui.framework.text import code_span, escape_markdown


def show_answer(item: Mapping[str, Any]) -> None:
    """``item``'s question and answer, and an expander with its context chunks and sources (when it has any)."""
    context, sources = item.get("context") or [], item.get("sources") or []
    st.markdown(f"**Question** — {escape_markdown(item['question'] or '(none)')}")
    st.markdown(f"**Answer** — {escape_markdown(item['answer'] or '(none)')}")
    with st.expander(f"Retrieved context ({len(context)} chunks) and sources ({len(sources)})",
                     expanded=bool(context)):
        for chunk in context:
            source = f" · source {code_span(chunk['source_id'])}" if chunk.get("source_id") else ""
            st.markdown(f"{code_span(chunk['id'])}{source} — {escape_markdown(chunk['text'])}")
        for source in sources:
            st.markdown(f"{code_span(source['source_id'])} {escape_markdown(source['title'] or '')} "
                        f"{escape_markdown(source['ref'] or '')}")
        if not context and not sources:
            st.caption("No retrieved context was recorded for this answer.")
