"""The validated-feedback helpers of the UI: the s_H trend figure and the as-of window end (pure functions)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pandas as pd

from ui.features.feedback import scope_label, scope_trend_figure, window_end
from ui.features.figures import NO_DATA_TEXT


def _trend() -> pd.DataFrame:
    ends = [datetime(2026, 10, 14, tzinfo=UTC), datetime(2026, 10, 21, tzinfo=UTC)]
    return pd.DataFrame({"end_at": ends * 2, "use_case": ["contracts", "contracts", "<b>hr</b>", "<b>hr</b>"],
                         "model": ["rag-v3", "rag-v3", None, None], "events": [0, 2, 1, 1],
                         "n_reviewed": [0, 2, 1, 1], "s_h": [0.0, 0.71, 0.3, 0.28]})


def test_one_line_per_scope_with_its_values_and_names_escaped():
    fig = scope_trend_figure(_trend(), 30)
    assert [t.name for t in fig.data] == ["&lt;b&gt;hr&lt;/b&gt; / —", "contracts / rag-v3"]
    assert list(fig.data[1].y) == [0.0, 0.71] and list(fig.data[0].y) == [0.3, 0.28]
    assert "<b>hr" not in fig.data[0].hovertemplate
    assert "30-day window" in fig.layout.title.text and tuple(fig.layout.yaxis.range) == (0, 1)


def test_no_scopes_give_the_no_data_figure():
    fig = scope_trend_figure(_trend().iloc[0:0], 7)
    assert fig.layout.annotations[0].text == NO_DATA_TEXT and not fig.data


def test_a_window_as_of_a_day_ends_at_the_midnight_after_it():
    assert window_end(date(2026, 12, 31)) == datetime(2027, 1, 1, tzinfo=UTC)
    assert scope_label(None, "m") == "— / m"
