"""AppTest of the label pickers (issue 33, item 5): every label multiselect of the labelling pages is the one
component that selects exactly what the person chose (prefix matching, no "Select N matches" bulk action, which
Enter used to take), and the workbench saves exactly the chosen labels or refuses a contradictory set by name.

The keyboard itself (typing SUPPORTED, pressing Enter) is driven in Chromium:
``tests/e2e/test_browser_label_picker.py``.
"""

from __future__ import annotations

from streamlit.proto.SelectWidgetFilterMode_pb2 import SelectWidgetFilterMode

from register.labels import workbench
from tests.pages.test_labelling_pages import ANNA, BEN, _batch, _page, _texts
from ui.framework.text import escape_markdown


def _exact(picker) -> None:
    assert picker.proto.filter_mode == SelectWidgetFilterMode.FILTER_MODE_PREFIX
    assert picker.proto.select_all == 0  # no bulk action: Enter takes the first match alone


def test_the_workbench_picker_selects_and_saves_exactly_the_chosen_label(seeded_db):
    batch_id, rid, units = _batch(seeded_db)
    at = _page("pages/workbench.py", "annotator")
    form = f"wb_{batch_id}_{rid}_{units[0]}"
    picker = at.multiselect(key=f"{form}_labels")
    _exact(picker)
    picker.set_value(["SUPPORTED"])
    at.button[[b.label for b in at.button].index("Save and next")].click().run()
    assert not at.exception, at.exception
    row = seeded_db.one("SELECT labels FROM annotations WHERE annotator = ? AND unit_id = ?", [ANNA.name, units[0]])
    assert list(row["labels"]) == ["SUPPORTED"]


def test_the_workbench_refuses_a_contradictory_set_by_name_and_saves_nothing(seeded_db):
    batch_id, rid, units = _batch(seeded_db)
    at = _page("pages/workbench.py", "annotator")
    form = f"wb_{batch_id}_{rid}_{units[0]}"
    at.multiselect(key=f"{form}_labels").set_value(["SUPPORTED", "UNSUPPORTED"])
    at.button[[b.label for b in at.button].index("Save and next")].click().run()
    assert not at.exception, at.exception
    refusal = f"claim {units[0]}: labels: SUPPORTED stands alone; got SUPPORTED, UNSUPPORTED"
    assert escape_markdown(refusal) in _texts(at)
    assert seeded_db.scalar("SELECT count(*) FROM annotations WHERE annotator = ? AND state = 'labelled'",
                            [ANNA.name]) == 0


def test_the_adjudication_picker_is_the_same_component(seeded_db):
    batch_id, rid, units = _batch(seeded_db)
    for actor, first in ((ANNA, ["SUPPORTED"]), (BEN, ["CONTRADICTED"])):
        workbench.save_annotation(seeded_db, actor, batch_id, rid, units[0], labels=first, criticality=3)
        workbench.save_annotation(seeded_db, actor, batch_id, rid, units[1], labels=["SUPPORTED"])
    at = _page("pages/adjudication.py", "reviewer")
    _exact(at.multiselect(key=f"adj_{batch_id}_{rid}_{units[0]}_labels"))
