"""AppTest of the foundation page: the numbers shown equal counts computed independently."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from .conftest import REPO_ROOT

APP = str(REPO_ROOT / "app.py")


def _metric(at, label_prefix):
    for metric in at.metric:
        if metric.label.startswith(label_prefix):
            return metric.value
    raise AssertionError(f"no metric starting with {label_prefix!r}: {[m.label for m in at.metric]}")


def test_page_shows_counts_equal_to_the_database(seeded_db):
    responses = seeded_db.query_one("SELECT count(*) FROM responses WHERE is_current")[0]
    claims = seeded_db.query_one("SELECT count(*) FROM claims c JOIN responses r USING (response_id, revision) "
                                 "WHERE r.is_current")[0]
    high = seeded_db.query_one("SELECT count(*) FROM scores WHERE is_current AND band = 'High'")[0]
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert _metric(at, "Responses") == f"{responses:,}"
    assert _metric(at, "Claims") == f"{claims:,}"
    assert _metric(at, "High") == f"{high:,}"
    assert responses > 50  # demo set: Table V + Factcheck-GPT (when present) + 50 synthetic


def test_table_v_response_is_listed_with_score_70_high(seeded_db):
    at = AppTest.from_file(APP, default_timeout=60).run()
    frame = at.dataframe[0].value
    row = frame[frame["response_id"] == "paper-table-v"].iloc[0]
    assert row["score"] == 70.0
    assert row["band"] == "High"
    assert row["action"] == "review"
    assert row["decisive_claim_id"] == "paper-table-v-3"
    # riskiest first
    assert list(frame["score"]) == sorted(frame["score"], reverse=True)


def test_empty_database_is_seeded_on_first_start():
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception
    assert int(_metric(at, "Responses").replace(",", "")) > 0
    assert "not built yet" in at.caption[0].value
