"""``ui.framework.components.keep_message``: a save's result survives the ``st.rerun()`` after it, shows once, in order,
at its own place only."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest


def _app():
    import streamlit as st

    from ui.framework.components import has_kept_messages, keep_message, show_kept_messages

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
    from ui.framework.components import keep_message

    with pytest.raises(ValueError, match="balloon"):
        keep_message("here", "balloon", "text")


def _saving_app():
    import streamlit as st

    from ui.framework.components import show_kept_toasts, toast_then_rerun

    show_kept_toasts()
    st.caption("page")
    if st.button("Save"):
        toast_then_rerun("Source `src-a` added")


def test_a_saves_toast_is_shown_by_the_run_after_the_rerun_once():
    """The confirmation of a save is shown by the run after its rerun, once. (Sent just before ``st.rerun()``,
    as the pages did, it reached the browser only sometimes: AppTest keeps such a toast, a browser does not
    always -- tests/e2e/test_browser_console_trust.py waits for one in Chromium.)"""
    at = AppTest.from_function(_saving_app).run()
    assert not at.toast
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert [t.value for t in at.toast] == ["Source `src-a` added"]
    at.run()
    assert not at.toast  # once
