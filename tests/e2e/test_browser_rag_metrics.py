"""The RAG metrics page in Chromium on imported RAGChecker results (two models, two weeks, critical and
other questions, beside the demo's own) and a RAGAS table: the figures RAGChecker would print, its charts drawn,
a screenshot."""

from __future__ import annotations

import json

import pytest

from hri_core.ragmetrics import ragchecker_metrics
from register.demo.outcomes import write_ragchecker_results
from tests.helpers.browser import browser_login, screenshot, wait_metric
from tests.helpers.rag import checked_results, ragas_table, write_json, write_ragas

pytestmark = pytest.mark.browser


def test_rag_metrics_page_on_ragchecker_and_ragas_imports(start_app, page, tmp_path):
    weeks = ("2026-11-10T09:00:00Z", "2026-11-18T09:00:00Z")
    models = ("assistant-a", "assistant-b")
    batches = [(checked_results(91 + i, queries=7, categories=True), weeks[i % 2], models[i // 2]) for i in range(4)]
    files = [(write_json(tmp_path / f"rag_{i}.json", data), created_at, model)
             for i, (data, created_at, model) in enumerate(batches)]
    ragas = write_ragas(tmp_path / "ragas_eval.csv", ragas_table(93, rows=10))

    def prepare(db):
        from register import SYSTEM, Store
        from register.ingest.importer import import_path
        from register.ingest.rag_files import RagOptions

        store = Store(db)
        try:
            for path, created_at, model in files:
                report = import_path(store, SYSTEM, path, rag=RagOptions(model=model, use_case="benefits desk",
                                                                         created_at=created_at))
                assert report.quarantined == 0
            assert import_path(store, SYSTEM, ragas).quarantined == 0
        finally:
            store.close()

    app = start_app(prepare=prepare)
    browser_login(page, app["url"], "e2e-viewer")
    page.get_by_role("link", name="RAG metrics").click(timeout=30_000)
    page.get_by_role("heading", name="RAG metrics").first.wait_for(timeout=60_000)
    # beside these imports, the demo's own RAGChecker results (register.demo.outcomes): every answer is counted
    demo = json.loads(write_ragchecker_results(tmp_path).read_text(encoding="utf-8"))["results"]
    results = [q for data, _, _ in batches for q in data["results"]] + demo
    expected = ragchecker_metrics({"results": results})
    wait_metric(page, "RAGChecker answers", f"{len(results)}", timeout=60_000)
    wait_metric(page, "RAGAS answers", "10")
    wait_metric(page, "Hallucination", f"{expected['generator']['hallucination']:.1f}%")
    wait_metric(page, "F1", f"{expected['overall']['f1']:.1f}%")
    page.set_viewport_size({"width": 1400, "height": 4400})  # the whole page in one screenshot
    page.locator(".js-plotly-plot").nth(3).wait_for(timeout=60_000)  # by group, trend, categories, scatter
    assert page.locator(".js-plotly-plot").count() == 4
    page.get_by_text("HRI score against hallucination, per response").first.wait_for(timeout=30_000)
    screenshot(page, "rag-metrics")
