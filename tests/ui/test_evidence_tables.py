"""The Evidence page's tables draw every float at 4 decimals (a fitted weight of 6e-18 showed as a cut-off row of
digits), leaving text and integer columns, and the values themselves, as they are."""

from __future__ import annotations

import pandas as pd

from ui.features.evidence import four_decimals, weights_table

FIT = {"weights": {"F": 0.8162, "C": 6e-18, "U": 0.1838, "O": 0.0, "S": 0.0, "P": 0.0, "H": 0.0},
       "intervals": {"F": [0.7597, 0.9058], "C": [0.0, 1e-17]},
       "baseline": {"weights": {"F": 0.25, "C": 0.2, "U": 0.15, "O": 0.1, "S": 0.1, "P": 0.1, "H": 0.1}}}


def test_float_columns_are_drawn_at_four_decimals_and_others_untouched():
    table = weights_table(FIT)
    config = four_decimals(table)
    assert set(config) == {"fitted", "low", "high", "active"}
    assert all(column["type_config"]["format"] == "%.4f" for column in config.values())
    assert table.loc[table["dimension"] == "C", "fitted"].item() == 6e-18  # the value is kept, only drawn shorter
    assert four_decimals(pd.DataFrame({"model": ["max"], "answers": [60]})) == {}
