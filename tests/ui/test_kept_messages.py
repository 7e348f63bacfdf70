"""``ui.components.keep_message``: a save's result survives the ``st.rerun()`` after it, shows once, in order,
at its own place only."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest


def _app():
    import streamlit as st

    from ui.components import has_kept_messages, keep_message, show_kept_messages

    st.caption(f"waiting: {has_kept_messages('here')}")
    show_kept_messages("here")
    if st.button("Save"):
        keep_message("here", "success", "Saved **2** claims.")
        keep_message("here", "error", "Not saved: c3 — labels: choose at least one label")
        keep_message("elsewhere", "info", "for another place")
        st.rerun()


def test_messages_kept_before_a_rerun_show_once_after_it_in_order():
    at = AppTest.from_function(_app).run()
    assert not at.success and not at.error
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert [s.value for s in at.success] == ["Saved **2** claims."]
    assert [e.value for e in at.error] == ["Not saved: c3 — labels: choose at least one label"]
    assert not at.info  # kept for another place, not shown here
    assert at.caption[0].value == "waiting: True"  # read before they were shown
    at.run()
    assert not at.success and not at.error and at.caption[0].value == "waiting: False"


def test_an_unknown_kind_is_refused():
    from ui.components import keep_message

    with pytest.raises(ValueError, match="balloon"):
        keep_message("here", "balloon", "text")
