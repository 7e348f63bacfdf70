"""The RAG metrics page's tables and figure builders, as functions."""

from __future__ import annotations

from datetime import date

import pandas as pd
import pytest

from ui.features.figures import NO_DATA_TEXT, band_colors
from ui.features.rag_metrics import (
    category_figure,
    group_bars_figure,
    metric_label,
    scatter_figure,
    trend_figure,
    wide_table,
)

BANDS = ("Calm", "Watch", "Stop")  # not the paper's names: nothing is hard-coded


def _long() -> pd.DataFrame:
    return pd.DataFrame([
        ("m<1>", "ragchecker", "hallucination", 3, 12.5), ("m<1>", "ragchecker", "precision", 3, 70.0),
        ("m<1>", "factscore", "factual_precision", 9, 0.75), ("m<1>", "ragas", "faithfulness", 2, 0.5),
        ("m2", "ragchecker", "precision", 1, 50.0), ("m2", "ragchecker", "hallucination", 1, 0.0),
    ], columns=["key", "framework", "metric", "n", "value"])


@pytest.mark.parametrize("build", [
    lambda: group_bars_figure(None, ["precision"], "Model"), lambda: trend_figure(pd.DataFrame(), "recall"),
    lambda: category_figure(pd.DataFrame()), lambda: scatter_figure(None, BANDS)])
def test_empty_data_gives_the_no_data_figure(build):
    fig = build()
    assert not fig.data
    assert fig.layout.annotations[0].text == NO_DATA_TEXT


def test_wide_table_orders_metrics_as_ragchecker_and_counts_responses():
    table = wide_table(_long(), ("ragchecker", "factscore"), "Model")
    assert list(table.columns) == ["Model", "Responses", "Precision", "Hallucination",
                                   metric_label("factual_precision")]
    row = table.set_index("Model").loc["m<1>"]
    assert (row["Responses"], row["Precision"], row[metric_label("factual_precision")]) == (3, 70.0, 0.75)
    ragas = pd.concat([_long(), pd.DataFrame([("m<1>", "ragas", "answer_relevancy", 2, 0.4)],
                                             columns=_long().columns)])
    # RAGAS columns keep their names (RAGAS's faithfulness is not RAGChecker's) and go by name
    assert list(wide_table(ragas, ("ragas",), "Model").columns) == ["Model", "Responses", "answer_relevancy",
                                                                    "faithfulness"]


def test_group_bars_escape_keys_and_hold_the_values():
    fig = group_bars_figure(_long(), ["precision", "hallucination"], "Model")
    assert [t.name for t in fig.data] == ["Precision", "Hallucination"]
    assert list(fig.data[0].x) == ["m&lt;1&gt;", "m2"]
    assert list(fig.data[0].y) == [70.0, 50.0]


def test_trend_has_a_line_per_model():
    df = pd.DataFrame({"week": [date(2026, 11, 2), date(2026, 11, 9), date(2026, 11, 2)],
                       "model": ["a", "a", "<b>"], "n": [3, 4, 5], "value": [10.0, 20.0, 5.0]})
    fig = trend_figure(df, "hallucination")
    assert sorted(t.name for t in fig.data) == ["&lt;b&gt;", "a"]
    line = next(t for t in fig.data if t.name == "a")
    assert list(line.y) == [10.0, 20.0]


def test_category_bars_mark_critical_categories():
    df = pd.DataFrame({"category": ["health", "general"], "critical": [True, False], "n": [2, 3],
                       "hallucination": [40.0, 10.0]})
    bar = category_figure(df).data[0]
    assert list(bar.y) == [40.0, 10.0]
    assert bar.marker.color[0] != bar.marker.color[1]


def test_scatter_colours_by_band_marks_critical_and_escapes_ids():
    df = pd.DataFrame({"response_id": ["<img src=x>", "b"], "model": ["m", "m"], "use_case": ["u", "u"],
                       "score": [80.0, 10.0], "band": ["Stop", "Calm"], "critical": [True, False],
                       "hallucination": [0.0, 75.0], "faithfulness": [100.0, 25.0]})
    fig = scatter_figure(df, BANDS)
    assert [t.name for t in fig.data] == ["Calm", "Stop"]  # in the profile's band order
    stop = fig.data[1]
    assert stop.marker.color == band_colors(BANDS)["Stop"]
    assert list(stop.marker.symbol) == ["diamond"]
    assert stop.customdata[0][0] == "&lt;img src=x&gt;"
    assert (list(stop.x), list(stop.y)) == ([80.0], [0.0])
