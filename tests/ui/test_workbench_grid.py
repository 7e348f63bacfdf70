"""Which rows of the labelling workbench's grid changed (``ui.features.labels.grid_changes``): the readings "Save the
grid" sends, with the grid's blanks (None, NaN, empty text or list) read as the register reads them."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ui.features.labels import grid_changes

ROWS = [{"unit_id": "c1", "state": "○ open", "text": "one", "labels": [], "criticality": 1, "category": None,
         "dimensions": [], "source_id": None, "span": "", "note": ""},
        {"unit_id": "c2", "state": "✓ labelled", "text": "two", "labels": ["SUPPORTED"], "criticality": 2,
         "category": "legal", "dimensions": ["F"], "source_id": "s1", "span": "quote", "note": "n"}]


def _edited(changes: dict) -> pd.DataFrame:
    frame = pd.DataFrame(ROWS).astype(object)
    for (row, column), value in changes.items():
        frame.at[row, column] = value
    return frame


def test_an_untouched_grid_changes_nothing_even_after_the_editor_turns_blanks_into_nan():
    edited = pd.DataFrame([  # the editor hands lists back as arrays, blanks as NaN, a number column as float
        {**ROWS[0], "category": math.nan, "source_id": np.nan, "criticality": 1.0},
        {**ROWS[1], "labels": np.array(["SUPPORTED"]), "dimensions": np.array(["F"]), "criticality": 2.0}])
    assert grid_changes(pd.DataFrame(ROWS), edited) == []


def test_a_changed_row_is_sent_whole_and_only_it():
    changes = grid_changes(pd.DataFrame(ROWS), _edited({(0, "labels"): ["CONTRADICTED", " "],
                                                       (0, "criticality"): 3.0}))
    assert changes == [{"unit_id": "c1", "labels": ["CONTRADICTED"], "criticality": 3, "category": None,
                        "dimensions": None, "source_id": None, "span": None, "note": None}]


def test_an_emptied_cell_counts_as_a_change_for_the_register_to_refuse():
    changes = grid_changes(pd.DataFrame(ROWS), _edited({(1, "labels"): [], (1, "criticality"): None}))
    assert [(c["unit_id"], c["labels"], c["criticality"]) for c in changes] == [("c2", None, None)]
