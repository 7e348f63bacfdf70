"""End to end in a real browser: the run command's app serves the seeded demo set."""

from __future__ import annotations

import pytest

from .conftest import screenshot

pytestmark = pytest.mark.browser


def test_foundation_page_shows_scored_demo_responses(app_server, page):
    page.goto(app_server["url"])
    page.get_by_text("Hallucination Risk Index").first.wait_for(timeout=60_000)
    page.get_by_test_id("stDataFrame").first.wait_for(timeout=60_000)
    values = page.get_by_test_id("stMetricValue").all_inner_texts()
    labels = page.get_by_test_id("stMetricLabel").all_inner_texts()
    shown = dict(zip(labels, values))
    expected = app_server["expected"]
    assert shown["Responses"] == f"{expected['responses']:,}"
    high = next(value for label, value in shown.items() if label.startswith("High"))
    assert high == f"{expected['high']:,}"
    path = screenshot(page, "foundation")
    assert path.stat().st_size > 10_000
