"""The release report can include the weights fitted to the register's outcomes and the aggregation models compared,
with their intervals (an option, off by default); too few outcomes are said with their counts."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from register import Actor
from register.governance import checklist as chk
from register.governance import report
from register.governance.report_outcomes import REPORT_RESAMPLES, interval
from register.scoring.register_outcomes import compare_from_register, fit_from_register, register_outcomes
from tests.helpers.actors import enrol
from tests.helpers.outcomes import import_scored_outcomes

ANN = Actor("ann", "reviewer")
HEADING = "## Learning from outcomes (HRI paper, sections VI and IX)"


@pytest.fixture
def demo_store(store):
    """The ``store`` fixture loaded with the demo set (a copy of its template: ``tests/conftest.py``)."""
    return store


@pytest.fixture
def run(demo_store):
    enrol(demo_store, ANN)
    return chk.record_run(demo_store, ANN)


def test_the_report_leaves_the_fit_out_unless_asked_and_says_when_outcomes_are_too_few(store):
    """A register without outcomes (the demo has its review decisions: a fresh register here)."""
    enrol(store, ANN)
    run = chk.record_run(store, ANN)
    assert HEADING not in report.report_markdown(store, run)
    md = report.report_markdown(store, run, include_outcomes=True)
    assert HEADING in md
    assert "The register holds 0 answer(s) with a known outcome and a usable score; a fit needs at least 20 " \
           "(20 more)." in md


def test_the_report_includes_the_fit_and_the_comparison_with_intervals(demo_store, run, tmp_path):
    import_scored_outcomes(demo_store, 60)
    data = register_outcomes(demo_store)
    fit = fit_from_register(demo_store, resamples=REPORT_RESAMPLES).to_dict()
    rows = compare_from_register(demo_store, resamples=REPORT_RESAMPLES)
    md = report.report_markdown(demo_store, run, include_outcomes=True)
    assert HEADING in md and f"data sha256 {data.data_hash[:16]}" in md
    for letter, weight in fit["weights"].items():
        assert f"| {letter} | {weight:.3f} | {interval(fit['intervals'][letter])} | " in md
    assert f"| fitted weights | {fit['cv']['fitted']['auc']:.3f} | {interval(fit['cv']['fitted']['auc_interval'])} |" \
        in md
    for row in rows:
        assert f"| {row['model']} | {row['auc']:.3f} | {interval(row['auc_interval'])} |" in md
    assert f"python -m register evidence fit-weights --resamples {REPORT_RESAMPLES}" in md
    pdf = report.report_pdf(demo_store, run, include_outcomes=True)
    assert pdf.startswith(b"%PDF")
    if Path("/usr/bin/pdftotext").exists():
        path = tmp_path / "report.pdf"
        path.write_bytes(pdf)
        text = subprocess.run(["pdftotext", str(path), "-"], check=True, capture_output=True, text=True).stdout
        assert "Learning from outcomes" in text and f"fitted {fit['weights']['F']:.3f}" in text
