"""``ui.framework.versioned_table``: the grid of a versioned table and its save, on a tiny page (AppTest) whose
save functions record what they are given (``SAVED``) or refuse (``REFUSE``).

The governance pages that use it are tested in tests/pages (test_governance_pages.py, test_authority_pages.py);
the edit state -> ``RowChanges`` translation in test_governance_editor.py.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from register import StaleEdit

SAVED: list = []
REFUSE: list[BaseException] = []

ROWS_PAGE = """
import pandas as pd
from tests.ui import test_versioned_table as t
from ui.framework.versioned_table import RowVersions, versioned_table_editor

def save(changes):
    if t.REFUSE:
        raise t.REFUSE[0]
    t.SAVED.append(changes)
    return {"updated": len(changes.updates), "inserted": len(changes.inserts), "deleted": len(changes.deletes)}

frame = pd.DataFrame({"key": ["a", "b"], "title": ["Alpha", "Beta"], "row_version": [1, 3]})
versioned_table_editor("things", frame, RowVersions(save=save, key_col="key", columns=("key", "title"),
                                                    audit_entity="thing"),
                       column_config={"title": "Title"}, read_only=t.READ_ONLY[0] if t.READ_ONLY else None)
"""

TABLE_PAGE = """
import pandas as pd
import streamlit as st
from tests.ui import test_versioned_table as t
from ui.framework.components import show_kept_toasts
from ui.framework.versioned_table import TableVersions, versioned_table_editor

show_kept_toasts()  # what page_frame does first: the toast a save kept across its rerun

def save(rows, reason, *, strict):
    if t.REFUSE:
        raise t.REFUSE[0]
    t.SAVED.append((rows, reason, strict))
    return 7

versioned_table_editor("limits", pd.DataFrame({"name": ["x"], "limit": [3]}), TableVersions(
    save=save, reason="Why?", button="Save as a new version", saved=lambda v: f"Version {v} is in force",
    options=lambda generation: {"strict": st.toggle("Strict", key=f"limits_strict_{generation}")}),
    column_config={"limit": "Limit"})
"""

READ_ONLY: list[str] = []


@pytest.fixture(autouse=True)
def _fresh():
    SAVED.clear(), REFUSE.clear(), READ_ONLY.clear()


def _texts(at: AppTest) -> str:
    return " ".join(e.value for kind in ("success", "info", "error", "caption", "subheader") for e in at.get(kind))


def _edit(at: AppTest, key: str, edits: dict) -> None:
    at.session_state[f"{key}_editor_{at.session_state[f'{key}_editor_gen']}"] = {
        "edited_rows": edits, "added_rows": [], "deleted_rows": []}


def test_a_row_edit_is_saved_with_the_version_it_was_read_at_and_the_grid_reloads():
    at = AppTest.from_string(ROWS_PAGE, default_timeout=60).run()
    assert not at.exception, at.exception
    _edit(at, "things", {1: {"title": "Beta 2"}})
    at.button(key="things_save").click().run()
    assert not at.exception, at.exception
    (changes,) = SAVED
    assert changes.updates == [{"key": "b", "row_version": 3, "values": {"key": "b", "title": "Beta 2"}, "row": 2}]
    assert "Saved: 1 updated, 0 added, 0 deleted" in _texts(at)
    assert at.session_state["things_editor_gen"] == 1  # a new grid: the saved edit is not sent again
    assert "Recent changes" in _texts(at) and "No changes recorded yet." in _texts(at)


def test_a_stale_row_is_refused_and_the_edits_stay_until_reload():
    at = AppTest.from_string(ROWS_PAGE, default_timeout=60).run()
    REFUSE.append(StaleEdit("thing b was changed by someone else: reload and redo the edit"))
    _edit(at, "things", {1: {"title": "Mine"}})
    at.button(key="things_save").click().run()
    assert [e.value for e in at.error][0].startswith("**Changed by someone else**")
    assert at.session_state["things_editor_gen"] == 0
    at.button(key="things_reload").click().run()
    assert at.session_state["things_editor_gen"] == 1


def test_nothing_edited_saves_nothing():
    at = AppTest.from_string(ROWS_PAGE, default_timeout=60).run()
    at.button(key="things_save").click().run()
    assert SAVED == [] and "Nothing to save" in _texts(at)


def test_read_only_shows_the_table_and_its_changes_without_the_buttons():
    READ_ONLY.append("Read only: your role (viewer) may not edit the register.")
    at = AppTest.from_string(ROWS_PAGE, default_timeout=60).run()
    assert not at.exception, at.exception
    assert not at.button and len(at.dataframe) == 1
    assert "Read only: your role (viewer) may not edit the register." in _texts(at) and "Recent changes" in _texts(at)


def test_a_whole_table_is_saved_as_a_new_version_with_its_reason_and_options():
    at = AppTest.from_string(TABLE_PAGE, default_timeout=60).run()
    assert not at.exception, at.exception
    _edit(at, "limits", {0: {"limit": 5}})
    at.toggle(key="limits_strict_0").set_value(True)
    at.text_input(key="limits_reason").input("tighter")
    at.button(key="limits_save").click().run()
    assert not at.exception, at.exception
    assert SAVED == [([{"name": "x", "limit": 5}], "tighter", True)]
    assert [t.value for t in at.toast] == ["Version 7 is in force"]
    assert at.session_state["limits_editor_gen"] == 1 and at.toggle(key="limits_strict_1").value is False


def test_a_refused_table_version_writes_nothing_and_keeps_the_grid():
    at = AppTest.from_string(TABLE_PAGE, default_timeout=60).run()
    REFUSE.append(StaleEdit("refused"))
    at.button(key="limits_save").click().run()
    assert SAVED == [] and at.error and at.session_state["limits_editor_gen"] == 0
