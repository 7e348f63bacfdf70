"""AppTest of the Evidence page: every panel renders on the demo set with its figures, the numbers are the register
functions', downloads and command lines are offered, the disagreeing answers link to their detail, data strings are
escaped; the two outcome panels show the fit and the comparison of the register's outcomes (cached per the data's
hash), say how many outcomes there are and are needed when too few, and offer the fit as a draft to profile editors
only."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from hri_core.aggregations import MODELS
from register import SYSTEM
from register.console.queries.filters import Filters
from register.evidence.correlation import dimension_correlation
from register.evidence.criticality import criticality_sensitivity
from register.evidence.rag_agreement import rag_agreement
from register.ingest.importer import import_path
from register.ingest.rag_files import RagOptions
from register.scoring.profiles import profile_meta
from register.scoring.register_outcomes import fit_from_register, register_outcomes
from tests.helpers.accounts import login
from tests.helpers.outcomes import import_scored_outcomes
from tests.helpers.paths import REPO_ROOT
from tests.helpers.rag import checked_results, write_json
from ui.features.evidence import PAGE_RESAMPLES

APP = str(REPO_ROOT / "app.py")
PAGE = "pages/evidence.py"
HOSTILE_USE_CASE = "**loud** <b>x</b> [link](https://example.com)"


def _open(role: str = "viewer"):
    at = AppTest.from_file(APP, default_timeout=120)
    login(at, role)
    at.run()
    return at.switch_page(PAGE).run()


@pytest.fixture
def evidence_db(seeded_db, tmp_path):
    """The demo set plus RAGChecker results, one batch under a use case full of markup."""
    import_path(seeded_db, SYSTEM, write_json(tmp_path / "alpha.json", checked_results(91, queries=24)),
                rag=RagOptions(model="alpha", use_case=HOSTILE_USE_CASE))
    return seeded_db


def _texts(at) -> str:
    return "\n".join([*(m.value for m in at.markdown), *(c.value for c in at.caption), *(i.value for i in at.info)])


def test_every_panel_shows_the_registers_figures(evidence_db):
    at = _open()
    assert not at.exception, at.exception
    headers = [h.value for h in at.subheader if h.value != "Filters"]  # the sidebar's
    assert headers == ["Weights fitted from outcomes", "Aggregation models compared", "Correlation among dimensions",
                       "Criticality sensitivity", "Feedback loops over time", "HRI against RAG metrics"]
    texts = _texts(at)
    # the demo's review decisions (its Factcheck-GPT answers, register.demo) are enough for a fit: both outcome
    # panels show it on them (the "too few" state: test_too_few_outcomes_say_how_many_are_needed)
    outcomes = register_outcomes(evidence_db)
    assert outcomes.shortfall() is None
    assert f"{outcomes.n:,} answers with a known outcome" in texts
    assert f"same {outcomes.n:,} outcomes" in texts
    corr = dimension_correlation(evidence_db, Filters())
    assert f"of the {corr.answers:,} current answer(s) with claims" in texts
    crit = criticality_sensitivity(evidence_db, Filters(), flatten=True)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Answers rescored"] == f"{crit.answers:,}"
    assert metrics["Band changes"] == f"{crit.band_changes:,}"
    rag = rag_agreement(evidence_db, Filters())
    assert rag.answers > 0 and f"over {rag.answers:,} answer(s) with claims" in texts
    assert "python -m register evidence correlation --method pearson" in texts
    assert "python -m register evidence rag-agreement" in texts
    assert "No validated feedback has been resolved" in texts  # the demo set has none: said, not hidden
    downloads = at.get("download_button")
    assert len(downloads) >= 7
    links = [link for link in at.get("page_link") if "response_id" in str(link.proto)]
    assert len(links) == min(10, len(rag.disagreements))


def test_too_few_outcomes_say_how_many_are_needed(plain_db):
    at = _open()
    assert not at.exception, at.exception
    texts = _texts(at)
    assert "fit-weights OUTCOMES.jsonl" in texts and "compare-aggregations OUTCOMES.jsonl" in texts
    # a register without outcomes: how many there are and how many are needed, in both outcome panels
    assert register_outcomes(plain_db).n == 0
    assert texts.count("The register holds 0 answer(s) with a known outcome and a usable score; a fit needs at "
                       "least 20 (20 more).") == 2


def test_data_strings_are_escaped(evidence_db):
    at = _open()
    assert not at.exception, at.exception
    # a selectbox draws its options as plain text: the hostile use case is shown as written, not as markup, and
    # not with the backslashes a markdown escape would leave in sight
    shown = list(at.selectbox(key="evidence_loop_scope").options)
    hostile = [text for text in shown if "loud" in text]
    assert hostile == [f"{HOSTILE_USE_CASE} / alpha"]
    assert "\\" not in hostile[0]


def test_spearman_and_a_shift_rerun_the_panels(evidence_db):
    at = _open()
    at.segmented_control(key="evidence_corr_method").set_value("spearman").run()
    assert not at.exception, at.exception
    assert "correlation --method spearman" in _texts(at)
    at.segmented_control(key="evidence_crit_how").set_value("shift").run()
    assert "Choose a shift for at least one category." in _texts(at)
    at.number_input(key="evidence_crit_shift_10").set_value(2).run()  # claims without a category, +2
    assert not at.exception, at.exception
    expected = criticality_sensitivity(evidence_db, Filters(), shifts={"(none)": 2})
    assert {m.label: m.value for m in at.metric}["Band changes"] == f"{expected.band_changes:,}"
    assert "--shift '(none)=+2'" in _texts(at)



@pytest.fixture
def outcome_db(seeded_db):
    """The demo set (with its own review decisions, ``register.demo``) plus 60 imported outcomes."""
    import_scored_outcomes(seeded_db, 60)
    return seeded_db


def test_the_outcome_panels_show_the_registers_fit_and_comparison(outcome_db, monkeypatch):
    from register.scoring import register_outcomes as reads

    fits = []
    real = reads.fit_from_register
    monkeypatch.setattr(reads, "fit_from_register", lambda *a, **k: fits.append(1) or real(*a, **k))
    at = _open()
    assert not at.exception, at.exception
    data = register_outcomes(outcome_db)
    expected = fit_from_register(outcome_db, data_hash=data.data_hash, resamples=PAGE_RESAMPLES).to_dict()
    weights, cv, compared = (frame.value for frame in at.dataframe[:3])  # the outcome panels come first
    assert list(weights["dimension"]) == list("FCUOSPH")
    assert weights["fitted"].tolist() == pytest.approx(list(expected["weights"].values()), abs=1e-12)
    assert weights["low"].tolist() == pytest.approx([i[0] for i in expected["intervals"].values()], abs=1e-12)
    assert cv["AUC"].tolist()[:2] == pytest.approx([expected["cv"]["fitted"]["auc"],
                                                    expected["cv"]["baseline"]["auc"]], abs=1e-12)
    assert list(compared["model"]) == list(MODELS) and "AUC low" in compared.columns
    texts = _texts(at)
    # the 60 imported and the demo's review decisions, an answer counted once (its latest outcome)
    assert data.n > 60 and f"{data.n:,} answers with a known outcome" in texts and data.data_hash[:16] in texts
    assert f"python -m register evidence fit-weights --resamples {PAGE_RESAMPLES}" in texts
    assert f"python -m register evidence compare-aggregations --resamples {PAGE_RESAMPLES}" in texts
    assert "profiles draft-from-fit --from-register" in texts
    keys = {button.key for button in at.get("download_button")}
    assert {"evidence_fit_csv", "evidence_fit_cv_csv", "evidence_compare_csv"} <= keys
    assert at.button(key="evidence_fit_offer").disabled  # a viewer may not offer it
    assert len(fits) == 1
    at.segmented_control(key="evidence_corr_method").set_value("spearman").run()  # a rerun does not fit again
    assert not at.exception and len(fits) == 1


def test_only_a_profile_editor_may_offer_the_fit_as_a_draft(outcome_db):
    at = _open("annotator")
    assert at.button(key="evidence_fit_offer").disabled
    assert "Only a profile editor may offer the fit as a draft profile." in _texts(at)
    before = outcome_db.scalar("SELECT count(*) FROM scoring_profiles")
    at = _open("admin")
    assert not at.button(key="evidence_fit_offer").disabled
    at.button(key="evidence_fit_offer").click().run()
    assert not at.exception, at.exception
    assert outcome_db.scalar("SELECT count(*) FROM scoring_profiles") == before + 1
    version = outcome_db.scalar("SELECT max(profile_version) FROM scoring_profiles")
    assert profile_meta(outcome_db, version)["status"] == "draft"
    assert any(f"Draft profile version {version}" in s.value for s in at.success)


def test_the_kind_picker_fits_on_the_kinds_chosen_and_says_so(outcome_db):
    every = register_outcomes(outcome_db)
    assert {"incident", "review_decision"} <= set(every.kind_counts())  # the imported ones and the demo's
    at = _open("admin")
    picker = at.multiselect(key="evidence_kinds")
    assert set(picker.options) == set(every.kind_counts()) and picker.value == []  # none picked: every kind
    picker.set_value(["incident"]).run()
    assert not at.exception, at.exception
    incidents = register_outcomes(outcome_db, ("incident",))
    assert incidents.n < every.n
    expected = fit_from_register(outcome_db, ("incident",), data_hash=incidents.data_hash,
                                 resamples=PAGE_RESAMPLES).to_dict()
    weights = at.dataframe[0].value
    assert weights["fitted"].tolist() == pytest.approx(list(expected["weights"].values()), abs=1e-12)
    texts = _texts(at)
    assert f"{incidents.n:,} answers with a known outcome" in texts
    assert f"fit-weights --kind incident --resamples {PAGE_RESAMPLES}" in texts
    assert f"compare-aggregations --kind incident --resamples {PAGE_RESAMPLES}" in texts
    assert "draft-from-fit --from-register --kind incident" in texts
    at.button(key="evidence_fit_offer").click().run()  # the draft holds the kind the page showed
    assert not at.exception, at.exception
    record = json.loads(outcome_db.scalar("SELECT record FROM elicitations ORDER BY elicitation_id DESC LIMIT 1"))
    assert set(record["data"]["kinds"]) == {"incident"} and record["data"]["kinds_requested"] == ["incident"]
