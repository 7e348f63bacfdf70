"""The console's own first start (``ui.framework.data.seed_if_empty``) loads the demo set like ``make run`` does,
with ``HRI_DEMO_SYNTHETIC`` synthetic responses."""

from __future__ import annotations

import os

import pytest
from streamlit.testing.v1 import AppTest

from register import Store
from tests.helpers.accounts import login
from tests.helpers.paths import REPO_ROOT


@pytest.mark.parametrize("synthetic", [0, 7])
def test_first_start_adds_hri_demo_synthetic_responses(monkeypatch, synthetic):
    monkeypatch.setenv("HRI_DEMO_SYNTHETIC", str(synthetic))
    at = AppTest.from_file(str(REPO_ROOT / "app.py"), default_timeout=120)
    login(at, "viewer")  # creates the account; the database has no response yet
    at.run()
    assert not at.exception, at.exception
    store = Store(os.environ["HRI_DB"])
    try:
        batches = store.query("SELECT source_name, new_responses FROM import_batches ORDER BY batch_id")
        current = store.query_one("SELECT count(*) FROM responses WHERE is_current")[0]
    finally:
        store.close()
    generated = [(name, new) for name, new in batches if name.startswith("synthetic-")]
    assert generated == ([(f"synthetic-{synthetic}.jsonl", synthetic)] if synthetic else [])
    assert current == sum(new for _, new in batches)
    assert {m.label: m.value for m in at.metric}["Responses"] == f"{current:,}"
