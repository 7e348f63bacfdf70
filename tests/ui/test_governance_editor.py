"""``ui.framework.versioned_table.editor_changes``: a data editor's edit state (``edited_rows`` / ``added_rows`` /
``deleted_rows``, positions into the snapshot the grid was loaded with) turned into the register's
``RowChanges``.

The unit tests build snapshots with the dtypes ``register.governance.registers.list_claims`` and
``list_sources`` return (the last tests check that against a real register and save the changes there).
"""

from __future__ import annotations

import json
from datetime import date

import numpy as np
import pandas as pd
import pytest

from register import Actor, StaleEdit
from register import governance as gov
from tests.helpers.actors import enrol
from ui.framework.versioned_table import editor_changes

CLAIMS = gov.CLAIM_COLUMNS
SOURCES = gov.SOURCE_COLUMNS
EDITOR = Actor("Erin Editor", "reviewer")


def claims_snapshot() -> pd.DataFrame:
    """Three claims as the claims grid holds them (pandas text, int32 versions, arrays of source ids, NaT)."""
    frame = pd.DataFrame({
        "claim_key": ["c-1", "c-2", "c-3"],
        "statement": ["Model X has 7B parameters.", "The SLA covers weekends.", "Policy P allows exports."],
        "claim_type": ["vendor capability", "internal policy/permission", "governance framework"],
        "source_ids": [np.array(["s-1"], dtype=object), np.array([], dtype=object),
                       np.array(["s-1", "s-2"], dtype=object)],
        "verification_status": ["verified", "unverified", "verified"],
        "reviewer": ["rita", None, "rita"],
        "reviewed_on": pd.to_datetime(["2026-05-04", None, "2026-06-30"]).astype("datetime64[us]"),
        "notes": ["checked", None, "see policy"],
        "no_peer_reviewed_source": pd.array([None, True, None], dtype="boolean"),
        "source_basis": ["primary", None, None],
        "source_locators": [np.array(["p. 4"], dtype=object), None, None],
        "row_version": np.array([1, 4, 2], dtype="int32"),
        "updated_at": pd.to_datetime(["2026-07-01T10:00:00Z"] * 3).astype("datetime64[us, UTC]"),
        "updated_by": ["system"] * 3,
        "deleted": [False, False, False],
    })
    for column in ("claim_key", "statement", "claim_type", "verification_status", "reviewer", "notes", "updated_by"):
        frame[column] = frame[column].astype("str")
    return frame


def sources_snapshot() -> pd.DataFrame:
    """Two sources as the sources grid holds them (int32 tier, array of roles, dates, a missing publisher)."""
    frame = pd.DataFrame({
        "source_id": ["s-1", "s-2"],
        "title": ["Vendor model card", "Internal export policy"],
        "ref": ["https://vendor.example/card", "POL-7"],
        "source_type": ["vendor documentation", "approved internal policy / access-control record"],
        "authority_tier": np.array([3, 1], dtype="int32"),
        "publisher": ["Vendor", None],
        "access_date": pd.to_datetime(["2026-04-01", None]).astype("datetime64[us]"),
        "valid_until": pd.to_datetime([None, "2027-01-01"]).astype("datetime64[us]"),
        "superseded_by": [None, None],
        "archive_url": [None, None],
        "content_hash": [None, None],
        "restricted_to": [np.array([], dtype=object), np.array(["reviewer", "admin"], dtype=object)],
        "notes": [None, "internal"],
        "row_version": np.array([2, 1], dtype="int32"),
        "updated_at": pd.to_datetime(["2026-07-01T10:00:00Z"] * 2).astype("datetime64[us, UTC]"),
        "updated_by": ["system"] * 2,
        "deleted": [False, False],
    })
    for column in ("source_id", "title", "ref", "source_type", "publisher", "notes", "updated_by"):
        frame[column] = frame[column].astype("str")
    return frame


def changes_of(state: dict, frame: pd.DataFrame | None = None):
    return editor_changes(claims_snapshot() if frame is None else frame, state, "claim_key", CLAIMS)


# --- nothing to save ------------------------------------------------------------------------------------


@pytest.mark.parametrize("state", [{}, {"edited_rows": {}, "added_rows": [], "deleted_rows": []},
                                   {"edited_rows": None, "added_rows": None, "deleted_rows": []}])
def test_an_untouched_grid_has_nothing_to_save(state):
    changes = changes_of(state)
    assert (changes.updates, changes.inserts, changes.deletes) == ([], [], [])
    assert not changes


def test_a_row_whose_edit_is_empty_is_not_an_update():
    """The editor can leave ``{pos: {}}`` behind when an edit is undone: that row is unchanged."""
    changes = changes_of({"edited_rows": {1: {}}})
    assert not changes and changes.updates == []


def test_only_the_edited_rows_are_updates():
    changes = changes_of({"edited_rows": {2: {"notes": "re-read"}}})
    assert [u["key"] for u in changes.updates] == ["c-3"]
    assert (changes.inserts, changes.deletes) == ([], [])


# --- edited rows ------------------------------------------------------------------------------------------


def test_an_edited_row_carries_its_key_loaded_version_grid_row_and_every_column():
    changes = changes_of({"edited_rows": {0: {"notes": "double-checked", "verification_status": "outdated"}}})
    assert changes.updates == [{
        "key": "c-1", "row_version": 1, "row": 1,
        "values": {"claim_key": "c-1", "statement": "Model X has 7B parameters.", "claim_type": "vendor capability",
                   "source_ids": ["s-1"], "verification_status": "outdated", "reviewer": "rita",
                   "reviewed_on": date(2026, 5, 4), "notes": "double-checked", "no_peer_reviewed_source": None,
                   "source_basis": "primary", "source_locators": ["p. 4"]},
    }]


def test_edited_values_are_passed_as_the_editor_gave_them():
    """Values typed in the grid are not interpreted here: the register normalises and validates them."""
    edits = {"reviewed_on": "2026-08-01", "source_ids": "s-2; s-1", "statement": "  padded  "}
    (update,) = changes_of({"edited_rows": {1: edits}}).updates
    assert {k: update["values"][k] for k in edits} == edits
    assert (update["key"], update["row_version"], update["row"]) == ("c-2", 4, 2)


def test_edits_of_several_rows_keep_their_own_versions_and_row_numbers():
    changes = changes_of({"edited_rows": {2: {"notes": "a"}, 0: {"notes": "b"}, 1: {"notes": "c"}}})
    assert sorted((u["key"], u["row_version"], u["row"], u["values"]["notes"]) for u in changes.updates) == [
        ("c-1", 1, 1, "b"), ("c-2", 4, 2, "c"), ("c-3", 2, 3, "a")]


def test_positions_given_as_text_are_read_as_numbers():
    """Edit state that went through JSON (the browser) has string positions."""
    as_text = changes_of({"edited_rows": {"1": {"notes": "x"}}, "deleted_rows": ["2"]})
    as_int = changes_of({"edited_rows": {1: {"notes": "x"}}, "deleted_rows": [2]})
    assert (as_text.updates, as_text.deletes) == (as_int.updates, as_int.deletes)
    assert [u["row"] for u in as_text.updates] == [2] and [d["key"] for d in as_text.deletes] == ["c-3"]


def test_an_edit_outside_the_snapshot_fails_instead_of_saving_another_row():
    with pytest.raises(IndexError):
        changes_of({"edited_rows": {3: {"notes": "where?"}}})


# --- type coercion: what goes to the register is plain Python -------------------------------------------


def test_loaded_values_become_plain_python_values():
    (update,) = changes_of({"edited_rows": {2: {"notes": "x"}}}).updates
    values = update["values"]
    assert type(update["row_version"]) is int and update["row_version"] == 2  # not numpy.int32
    assert type(values["source_ids"]) is list and values["source_ids"] == ["s-1", "s-2"]  # not an ndarray
    assert type(values["reviewed_on"]) is date and values["reviewed_on"] == date(2026, 6, 30)  # a date, no time
    assert type(update["key"]) is str and type(values["statement"]) is str


def test_a_source_row_is_converted_column_by_column():
    frame = sources_snapshot()
    (update,) = editor_changes(frame, {"edited_rows": {1: {"title": "Export policy v2"}}}, "source_id", SOURCES).updates
    values = update["values"]
    assert (update["key"], update["row_version"], update["row"]) == ("s-2", 1, 2)
    assert set(values) == set(SOURCES)
    assert type(values["authority_tier"]) is int and values["authority_tier"] == 1
    assert values["restricted_to"] == ["reviewer", "admin"] and type(values["restricted_to"]) is list
    assert values["valid_until"] == date(2027, 1, 1) and type(values["valid_until"]) is date
    assert values["title"] == "Export policy v2"


def test_missing_loaded_values_stay_missing():
    """A blank cell of the snapshot (NaT date, missing text) is not turned into a value such as "nan"."""
    (update,) = changes_of({"edited_rows": {1: {"notes": "x"}}}).updates
    values = update["values"]
    assert pd.isna(values["reviewed_on"]) and pd.isna(values["reviewer"])
    assert values["source_ids"] == []
    (source,) = editor_changes(sources_snapshot(), {"edited_rows": {1: {"notes": "y"}}}, "source_id", SOURCES).updates
    assert pd.isna(source["values"]["publisher"]) and pd.isna(source["values"]["access_date"])


# --- added rows -------------------------------------------------------------------------------------------


def test_added_rows_are_numbered_after_the_snapshot_and_blank_ones_skipped():
    added = [{"claim_key": "c-9", "statement": "New.", "claim_type": "vendor capability"},
             {"claim_key": None, "statement": "", "source_ids": []},  # an empty row the grid left behind
             {"statement": "Another.", "verification_status": "unverified"}]
    changes = changes_of({"added_rows": added})
    # row numbers are grid positions (3 loaded rows): problems found later point at the right grid row
    assert changes.inserts == [{"values": added[0], "row": 4}, {"values": added[2], "row": 6}]
    assert (changes.updates, changes.deletes) == ([], [])


def test_an_added_row_with_only_a_zero_or_false_is_not_blank():
    """0 and False are values a user typed; the register decides whether they are valid."""
    changes = editor_changes(sources_snapshot(), {"added_rows": [{"authority_tier": 0}, {"deleted": False}]},
                             "source_id", SOURCES)
    assert [i["row"] for i in changes.inserts] == [3, 4]


def test_added_values_are_copied_not_shared_with_the_editor_state():
    state = {"added_rows": [{"claim_key": "c-9", "statement": "New."}]}
    (insert,) = changes_of(state).inserts
    insert["values"]["statement"] = "changed later"
    assert state["added_rows"][0]["statement"] == "New."


# --- deleted rows -----------------------------------------------------------------------------------------


def test_deleted_rows_in_position_order_with_their_loaded_versions():
    changes = changes_of({"deleted_rows": [2, 0]})
    assert changes.deletes == [{"key": "c-1", "row_version": 1}, {"key": "c-3", "row_version": 2}]
    assert all(type(d["row_version"]) is int for d in changes.deletes)


def test_a_position_deleted_twice_is_one_delete():
    assert changes_of({"deleted_rows": [1, 1]}).deletes == [{"key": "c-2", "row_version": 4}]


def test_a_row_edited_then_deleted_is_only_deleted():
    changes = changes_of({"edited_rows": {0: {"notes": "x"}, 1: {"notes": "y"}}, "deleted_rows": [0]})
    assert [u["key"] for u in changes.updates] == ["c-2"]
    assert changes.deletes == [{"key": "c-1", "row_version": 1}]


def test_edits_additions_and_deletions_together():
    changes = changes_of({"edited_rows": {1: {"notes": "y"}}, "added_rows": [{"claim_key": "c-9", "statement": "N."}],
                          "deleted_rows": [2]})
    assert ([u["key"] for u in changes.updates], [i["row"] for i in changes.inserts],
            [d["key"] for d in changes.deletes]) == (["c-2"], [4], ["c-3"])


# --- against a real register ------------------------------------------------------------------------------


@pytest.fixture
def register_grid(store):
    """The claims and sources of a register, read as the grids read them (``list_*`` then a fresh index)."""
    enrol(store, EDITOR, Actor("Sam Second", "reviewer"))
    gov.save_sources(store, EDITOR, gov.RowChanges(inserts=[
        {"values": {k: v for k, v in row.items() if k in SOURCES}}
        for row in sources_snapshot().astype(object).where(sources_snapshot().notna(), None).to_dict("records")]))
    gov.save_claims(store, EDITOR, gov.RowChanges(inserts=[
        {"values": {k: v for k, v in row.items() if k in CLAIMS}}
        for row in claims_snapshot().astype(object).where(claims_snapshot().notna(), None).to_dict("records")]))
    return store


def _claims(store) -> pd.DataFrame:
    return gov.list_claims(store).reset_index(drop=True)


def test_the_unit_snapshots_have_the_registers_dtypes(register_grid):
    assert dict(_claims(register_grid).dtypes) == dict(claims_snapshot().dtypes)
    assert dict(gov.list_sources(register_grid).reset_index(drop=True).dtypes) == dict(sources_snapshot().dtypes)


def test_a_saved_edit_changes_only_the_edited_cell(register_grid):
    loaded = _claims(register_grid)
    pos = int(loaded.index[loaded["claim_key"] == "c-3"][0])
    counts = gov.save_claims(register_grid, EDITOR, editor_changes(loaded, {"edited_rows": {pos: {"notes": "re-read"}}},
                                                                   "claim_key", CLAIMS))
    assert counts == {"updated": 1, "inserted": 0, "deleted": 0, "unchanged": 0}
    after = _claims(register_grid)
    before_row, after_row = loaded.iloc[pos], after.iloc[pos]
    assert after_row["notes"] == "re-read" and after_row["row_version"] == before_row["row_version"] + 1
    for column in CLAIMS:
        if column != "notes":
            assert str(after_row[column]) == str(before_row[column]), column
    old, new = (json.loads(text) for text in register_grid.query_one(
        "SELECT before, after FROM audit_events WHERE action = 'register_claim.update'"))
    assert {k for k in old.keys() | new.keys() if old.get(k) != new.get(k)} == {"notes"}  # audited: that cell only


def test_an_edit_back_to_the_loaded_value_is_unchanged_and_writes_nothing(register_grid):
    """The loaded values of every column (dates, lists, blanks) convert back to exactly what is stored."""
    loaded = _claims(register_grid)
    edits = {pos: {"notes": loaded.iloc[pos]["notes"] if pd.notna(loaded.iloc[pos]["notes"]) else None}
             for pos in range(len(loaded))}
    events = register_grid.query_one("SELECT count(*) FROM audit_events")[0]
    counts = gov.save_claims(register_grid, EDITOR, editor_changes(loaded, {"edited_rows": edits}, "claim_key", CLAIMS))
    assert counts == {"updated": 0, "inserted": 0, "deleted": 0, "unchanged": 3}
    assert register_grid.query_one("SELECT count(*) FROM audit_events WHERE action = 'register_claim.update'")[0] == 0
    assert register_grid.query_one("SELECT count(*) FROM audit_events")[0] == events + 1  # the save event only


def test_changes_from_an_old_snapshot_are_refused_as_stale(register_grid):
    """The versions carried are those read at load time: a row saved meanwhile is not overwritten."""
    loaded = _claims(register_grid)
    first = editor_changes(loaded, {"edited_rows": {0: {"notes": "first"}}}, "claim_key", CLAIMS)
    second = editor_changes(loaded, {"edited_rows": {0: {"notes": "second"}}}, "claim_key", CLAIMS)
    gov.save_claims(register_grid, EDITOR, first)
    with pytest.raises(StaleEdit):
        gov.save_claims(register_grid, Actor("Sam Second", "reviewer"), second)
    assert _claims(register_grid).iloc[0]["notes"] == "first"
