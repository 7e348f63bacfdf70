"""AppTest of the RAG metrics page: what it shows equals hri_core on the imported results, filters apply,
data strings are escaped, and a register without RAG results says how to import them."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from hri_core.ragmetrics import METRIC_GROUPS, ragchecker_metrics
from register import SYSTEM
from register.demo.outcomes import write_ragchecker_results
from register.ingest.importer import import_path
from register.ingest.rag_files import RagOptions
from tests.helpers.accounts import login
from tests.helpers.paths import REPO_ROOT, peer_data
from tests.helpers.rag import checked_results, ragas_table, write_json, write_ragas
from ui.features.rag_metrics import metric_label

APP = str(REPO_ROOT / "app.py")
PAGE = "pages/rag_metrics.py"


def _open(role: str = "viewer", **params):
    at = AppTest.from_file(APP, default_timeout=90)
    login(at, role)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    return at.switch_page(PAGE).run()


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _percent(value: float) -> str:
    return f"{value:.1f}%"


def _page_totals(per_query: list[dict[str, float]]) -> dict[str, float]:
    """Per metric, the mean over queries in percent to one decimal as the page computes it
    (``register.console.rag``): the exact mean (``fsum / count``, any order) with numpy's rounding.
    ``hri_core.ragmetrics.aggregate_metrics`` takes numpy's mean, whose pairwise sum depends on the order of the
    queries: over several imports there is no one order, and on a tie (18.75 exactly) the last bit decides."""
    names = [name for group in METRIC_GROUPS.values() for name in group if name in per_query[0]]
    return {name: float(np.round(math.fsum(m[name] for m in per_query) / len(per_query) * 100, 1))
            for name in names}


def _per_query(*imports: dict) -> list[tuple[bool, dict[str, float]]]:
    """(has retrieved context, hri_core's per-query metrics) of every query of ``imports``."""
    from hri_core.rag_import import ragchecker_results
    from hri_core.ragmetrics import checked_query_from_response, query_metrics

    per_query = []
    for data in imports:  # each import on its own: their query ids overlap
        context = {item["query_id"]: bool(item["retrieved_context"]) for item in data["results"]}
        per_query += [(context[r.response.response_id], query_metrics(checked_query_from_response(r.response)))
                      for r in ragchecker_results(data).records]
    return per_query


@pytest.fixture
def rag_db(seeded_db, tmp_path):
    """The demo set (with its own RAGChecker results, ``register.demo.outcomes``) plus RAGChecker results of two
    models and a RAGAS table; returns the register and the three RAGChecker imports, the demo's first."""
    demo = json.loads(write_ragchecker_results(tmp_path).read_text(encoding="utf-8"))  # the file the demo imported
    first, second = checked_results(81, queries=10, categories=True), checked_results(82, queries=6)
    import_path(seeded_db, SYSTEM, write_json(tmp_path / "alpha.json", first), rag=RagOptions(model="alpha"))
    import_path(seeded_db, SYSTEM, write_json(tmp_path / "beta.json", second), rag=RagOptions(model="beta"))
    import_path(seeded_db, SYSTEM, write_ragas(tmp_path / "ragas.csv", ragas_table(83, rows=6)))
    return seeded_db, demo, first, second


def test_page_shows_ragcheckers_metrics_as_hri_core_computes_them(rag_db):
    _, *imports = rag_db
    at = _open()
    assert not at.exception, at.exception
    shown = _metrics(at)
    # every RAGChecker answer in the register, the demo's included
    expected = _page_totals([m for _, m in _per_query(*imports)])
    for names in METRIC_GROUPS.values():
        for name in names:
            assert shown[metric_label(name)] == _percent(expected[name]), name
    assert shown["RAGChecker answers"] == str(sum(len(data["results"]) for data in imports))
    assert shown["RAGAS answers"] == "6"
    assert "faithfulness" in shown  # RAGAS means beside
    assert len(at.get("plotly_chart")) == 4  # by group, trend, categories, scatter


def test_answers_without_retrieved_context_are_shown_apart(rag_db):
    _, *imports = rag_db
    per_query = _per_query(*imports)  # every RAGChecker answer in the register, the demo's included
    without = [m for has_context, m in per_query if not has_context]
    assert without  # the fixture's random results hold some
    at = _open()
    assert not at.exception, at.exception
    shown = _metrics(at)
    with_context = _page_totals([m for has_context, m in per_query if has_context])
    assert shown["Hallucination, with context"] == _percent(with_context["hallucination"])
    assert shown["Answers without retrieved context"] == str(len(without))
    apart = _page_totals(without)
    assert shown["Precision, no context"] == _percent(apart["precision"])
    assert shown["Recall, no context"] == _percent(apart["recall"])
    assert "Unsupported and incorrect (seed 003)" in shown


def test_model_filter_changes_the_metrics(rag_db):
    *_, second = rag_db
    at = _open(model="beta")
    assert not at.exception, at.exception
    shown = _metrics(at)
    expected = ragchecker_metrics(second)
    assert shown["RAGChecker answers"] == "6"
    assert shown["Hallucination"] == _percent(expected["generator"]["hallucination"])
    assert shown["Precision"] == _percent(expected["overall"]["precision"])


def test_grouping_by_batch_lists_each_import(rag_db):
    at = _open()
    at.segmented_control(key="rag_by").set_value("batch").run()
    assert not at.exception, at.exception
    groups = set(at.dataframe[0].value["Import batch"])
    assert {"alpha.json", "beta.json"} <= {g.split(": ", 1)[1] for g in groups}


def test_peer_example_on_the_page(seeded_db):
    source = peer_data("ragchecker", "checking_outputs.json")
    import_path(seeded_db, SYSTEM, source, rag=RagOptions(model="peer"))
    reported = json.loads(source.read_text(encoding="utf-8"))["metrics"]
    at = _open(model="peer")
    shown = _metrics(at)
    for group, names in METRIC_GROUPS.items():
        for name in names:
            assert shown[metric_label(name)] == _percent(reported[group][name])


def test_data_strings_are_escaped(seeded_db, tmp_path):
    hostile = "<b>x</b> **bold** [l](javascript:alert(1))"
    rows = ragas_table(84, rows=2)
    rows[0]["hostile <i>metric</i>"] = 0.5
    rows[1]["hostile <i>metric</i>"] = 0.25
    import_path(seeded_db, SYSTEM, write_ragas(tmp_path / "h.csv", rows))
    import_path(seeded_db, SYSTEM, write_json(tmp_path / "h.json", checked_results(85, queries=4)),
                rag=RagOptions(model=hostile))
    at = _open()
    assert not at.exception, at.exception
    labels = [m.label for m in at.metric]
    assert "hostile <i>metric</i>" not in labels  # a RAGAS column name is markdown-escaped
    assert any("hostile" in label and "\\<i\\>" in label for label in labels)
    # decoded: Plotly's JSON writes "<" as a \\u escape, which would hide an unescaped tag from the test
    specs = [json.dumps(json.loads(chart.proto.spec), ensure_ascii=False) for chart in at.get("plotly_chart")]
    assert not any("<b>x</b>" in spec for spec in specs)
    assert any("&lt;b&gt;x&lt;/b&gt;" in spec for spec in specs)


def test_without_rag_results_the_page_says_how_to_import(plain_db):
    at = _open()
    assert not at.exception, at.exception
    assert any("checking_outputs.json" in info.value for info in at.info)
    assert not at.get("plotly_chart")
