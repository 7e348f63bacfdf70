"""The Response detail page through AppTest: its recomputation is cached like every read
(``ui.features.responses.reproduction``, issue 14) -- a rerun does not recompute it, and a write to the record
(``after_write``) does, so a changed stored score is never hidden behind a cached "matches" -- and its Authority lines
say each reason once."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from register.scoring import reproduce
from tests.helpers.accounts import login
from tests.helpers.feedback import import_records
from tests.helpers.paths import REPO_ROOT
from ui.framework.text import escape_markdown

APP = str(REPO_ROOT / "app.py")


def _detail(response_id: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    login(at, "reviewer")
    at.query_params["response_id"] = response_id
    at.run()
    return at.switch_page("pages/response_detail.py").run()


def test_a_rerun_reuses_the_reproduction_and_a_write_recomputes_it(seeded_db, monkeypatch):
    from ui.framework import data

    calls = []
    original = reproduce.reproduce
    monkeypatch.setattr(reproduce, "reproduce", lambda *a, **k: calls.append(a[1]) or original(*a, **k))
    at = _detail("paper-table-v")
    assert not at.exception, at.exception
    assert any("matches the stored score" in s.value for s in at.success)
    at.run()
    _detail("paper-table-v")  # another session: the same recomputation
    assert calls == ["paper-table-v"]

    # the stored score changes behind the console's back: the cached reproduction still says it matches ...
    with seeded_db.cursor() as cur:
        cur.execute("UPDATE scores SET hri = hri + 0.5 WHERE response_id = 'paper-table-v' AND is_current")
    at.run()
    assert any("matches the stored score" in s.value for s in at.success)
    # ... until a write through the console clears the cached reads: then it is recomputed and the difference shown
    data.after_write()
    at.run()
    assert not at.exception, at.exception
    assert calls == ["paper-table-v", "paper-table-v"]
    assert not any("matches the stored score" in s.value for s in at.success)
    differs = escape_markdown("hri: stored 1.2")
    assert any("Recomputation differs from the stored score" in e.value and differs in e.value for e in at.error)


UNREGISTERED = {"response_id": "memo-1", "question": "When does the supplier invoice?",
                "use_case": "supplier-contracts", "answer": "Invoices are sent monthly.",
                "claims": [{"claim_id": "memo-1-1", "text": "Invoices are sent monthly.", "labels": ["SUPPORTED"],
                            "criticality": 2, "source_id": "unregistered-memo", "span": "monthly invoicing"}]}


def test_the_detail_says_a_claims_authority_reason_once(seeded_db, tmp_path):
    """A source missing from the register fails all three checks with one sentence: the line says it once."""
    import_records(seeded_db, tmp_path, [UNREGISTERED], "memo.jsonl")
    assert not seeded_db.scalar("SELECT count(*) FROM sources WHERE source_id = 'unregistered-memo'")
    at = _detail("memo-1")
    assert not at.exception, at.exception
    missing = "is not in the source register"
    # a caption per claim, or the warning of a claim whose finding is proposed for review
    shown = [e.value for e in (*at.caption, *at.warning)]
    lines = [line for line in shown if missing in line]
    assert lines, shown
    assert all(line.count(missing) == 1 for line in lines), lines


def test_the_charts_are_drawn_only_when_their_expander_is_opened(seeded_db):
    at = _detail("paper-table-v")
    assert not at.exception, at.exception
    (charts,) = [e for e in at.expander if e.label.startswith("Charts")]
    assert not at.get("plotly_chart")  # closed: nothing computed or sent
    at.session_state["detail_charts"] = True  # the person opens it
    at.run()
    assert not at.exception, at.exception
    assert len(at.get("plotly_chart")) == 2  # the score's make-up and its history
