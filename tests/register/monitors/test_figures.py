"""The monitors' figures (``register.monitors.figures``) against an independent count of the register's own tables
on a small register (``tests.helpers.monitors``), for every answer and for one use case."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from hri_core.vocabulary import CRITICAL_INFORMATION_CATEGORIES
from register import Actor
from register.console import review
from register.feedback import items as fb
from register.monitors.figures import FIGURES, critical_hallucination_counts, format_value, read_figures
from register.scoring.profiles import active_profile
from tests.helpers.actors import enrol
from tests.helpers.feedback import Clock
from tests.helpers.monitors import MORE, import_records, load_monitor_register
from tests.helpers.statements import recorded_statements

ADA = Actor("Ada Annotator", "annotator")
RITA = Actor("Rita Reviewer", "reviewer")
AS_OF = datetime(2026, 10, 31, tzinfo=UTC)


@pytest.fixture
def register(store, tmp_path):
    return load_monitor_register(store, tmp_path)


def _current_answers(store, use_case=None) -> list[dict]:
    """Current answers with their current score, by the join of the register's tables (not the read model)."""
    rows = store.dicts("SELECT r.response_key, r.use_case, s.band, s.no_claims FROM responses r "
                       "JOIN scores s ON s.response_key = r.response_key WHERE r.is_current AND s.is_current")
    return [r for r in rows if use_case is None or r["use_case"] == use_case]


def _critical_claims(store, use_case=None) -> tuple[int, int]:
    """(critical-information claims, those hallucinated) of the current answers, counted claim by claim."""
    keys = {r["response_key"] for r in _current_answers(store, use_case)}
    critical = hallucinated = 0
    for c in store.dicts("SELECT response_key, labels, criticality, category FROM claims WHERE is_current"):
        if c["response_key"] not in keys:
            continue
        if c["criticality"] >= 3 or c["category"] in CRITICAL_INFORMATION_CATEGORIES:
            critical += 1
            hallucinated += bool({"UNSUPPORTED", "CONTRADICTED"} & set(c["labels"]))
    return critical, hallucinated


def test_each_figure_equals_an_independent_count(register):
    for use_case in (None, "triage", "helpdesk"):  # every answer, and each use case (one register built)
        _figures_equal_the_counts(register, use_case)


def _figures_equal_the_counts(register, use_case):
    readings = read_figures(register, [(name, use_case) for name in FIGURES], now=AS_OF)
    answers = _current_answers(register, use_case)
    top = {b.name for b in active_profile(register).bands[-2:]}
    high = sum(1 for a in answers if not a["no_claims"] and a["band"] in top)
    assert high == {None: 1, "triage": 1, "helpdesk": 0}[use_case]  # t2, by its floor
    assert readings[("high_critical_share", use_case)].value == pytest.approx(high / len(answers))
    critical, hallucinated = _critical_claims(register, use_case)
    assert readings[("critical_hallucinated_claims", use_case)].value == hallucinated
    assert readings[("critical_hallucination_share", use_case)].value == pytest.approx(hallucinated / critical)
    # the Authority register's design: au-stale, au-expired, au-restricted and au-weak fail a check (helpdesk)
    failing = {None: 4, "helpdesk": 4, "triage": 0}[use_case]
    assert readings[("authority_failing_answers", use_case)].value == failing
    assert readings[("authority_failing_share", use_case)].value == pytest.approx(failing / len(answers))
    assert readings[("scope_s_h", use_case)].value == 0.0  # no feedback validated
    assert all(r.error is None for r in readings.values())


def test_the_small_register_is_what_the_counts_say(register):
    """The expectations of tests.helpers.monitors, by hand: 5 critical claims, 2 hallucinated, 4 in triage."""
    assert critical_hallucination_counts(register) == {"critical_claims": 5, "hallucinated": 2}
    assert critical_hallucination_counts(register, "triage") == {"critical_claims": 4, "hallucinated": 2}
    assert critical_hallucination_counts(register, "elsewhere") == {"critical_claims": 0, "hallucinated": 0}
    assert len(_current_answers(register)) == 11


def test_a_share_of_nothing_is_no_reading(register):
    readings = read_figures(register, [("high_critical_share", "elsewhere"), ("critical_hallucination_share",
                                                                              "elsewhere")])
    assert [r.value for r in readings.values()] == [None, None]
    assert format_value("high_critical_share", None) == "no reading"


def test_scope_s_h_is_the_highest_scope_by_the_papers_formula(register, monkeypatch):
    """s_H = sum_j q_j exp(-lambda dt_j) / max(1, N_reviewed): one validated item of severity 0.8, 3 days before the
    check, on a triage answer (reviewed once, by the validation)."""
    enrol(register, ADA, RITA)
    clock = Clock(AS_OF - timedelta(days=4))
    monkeypatch.setattr(fb, "utc_now", clock)
    monkeypatch.setattr(review, "utc_now", clock)
    item = fb.report_feedback(register, ADA, "t1", "wrong", 0.8, claim_id="c1")
    clock.now = AS_OF - timedelta(days=3)
    fb.validate_feedback(register, RITA, item, "review")
    decay = active_profile(register).decay_lambda
    expected = 0.8 * math.exp(-decay * 3) / 1
    readings = read_figures(register, [("scope_s_h", None), ("scope_s_h", "helpdesk")], now=AS_OF)
    worst = readings[("scope_s_h", None)]
    assert worst.value == pytest.approx(expected)
    assert (worst.detail["use_case"], worst.detail["model"], worst.detail["events"]) == ("triage", "m2", 1)
    assert readings[("scope_s_h", "helpdesk")].value == 0.0


def test_a_figure_that_fails_is_that_readings_error_only(register, monkeypatch):
    from register.monitors import figures

    def broken(*_args, **_kwargs):
        raise RuntimeError("the query broke")

    monkeypatch.setattr(figures, "authority_overview", broken)
    readings = read_figures(register, [("authority_failing_answers", None), ("critical_hallucinated_claims", None)])
    assert readings[("authority_failing_answers", None)].error == "RuntimeError: the query broke"
    assert readings[("authority_failing_answers", None)].value is None
    assert readings[("critical_hallucinated_claims", None)].value == 2


def test_the_figures_are_read_in_a_few_statements_whatever_the_number_of_answers(register, monkeypatch):
    """SQL aggregates, not a statement (or a Python loop) per answer: every figure in a bounded number of statements,
    the same with one more answer, and no statement reads the claims but the critical-information count."""
    with recorded_statements(monkeypatch) as statements:
        read_figures(register, [(name, None) for name in FIGURES], now=AS_OF)
    first = len(statements)
    import_records(register, Path(register.path).parent, [MORE], "more.jsonl")
    with recorded_statements(monkeypatch) as again:
        read_figures(register, [(name, None) for name in FIGURES], now=AS_OF)
    assert 0 < first == len(again) <= 25, (first, len(again))
