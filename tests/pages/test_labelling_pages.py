"""AppTest of the labelling pages on the demo set: an annotator labels blind on the workbench, a reviewer
adjudicates the disagreement and sees the new score, the agreement page shows the register's alpha, the rubric
page shows the version in force and its flags, and a viewer sees none of the writing forms."""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from register import SYSTEM, Actor
from register.ingest.importer import import_path
from register.labels import agreement, batches, workbench
from tests.helpers.accounts import ensure_account, login
from tests.helpers.console_records import write_jsonl
from tests.helpers.paths import REPO_ROOT
from ui.framework.text import escape_markdown

APP = str(REPO_ROOT / "app.py")
ANNA, BEN, RITA = Actor("test-annotator", "annotator"), Actor("ben", "annotator"), Actor("test-reviewer", "reviewer")


def _page(page: str, role: str, username: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    login(at, role, username)
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _texts(at) -> str:
    return "\n".join([str(x.value) for x in at.markdown] + [str(x.value) for x in at.info] +
                     [str(x.value) for x in at.success] + [str(x.value) for x in at.error] +
                     [str(x.value) for x in at.warning] + [str(x.value) for x in at.caption])


def _batch(store) -> tuple[int, str, list[str]]:
    for actor in (ANNA, BEN, RITA):
        ensure_account(actor.name, actor.role)
    rid = store.scalar("SELECT response_id FROM responses WHERE is_current AND claim_count = 2 ORDER BY response_id "
                       "LIMIT 1")
    batch_id = batches.create_batch(store, RITA, "page test", batches.Selection(response_ids=(rid,)),
                                    [ANNA.name, BEN.name])
    units = [u["unit_id"] for u in workbench.work_item(store, ANNA, batch_id, rid)["units"]]
    return batch_id, rid, units


def test_the_workbench_labels_one_claim_at_a_time_blind(seeded_db):
    batch_id, rid, units = _batch(seeded_db)
    workbench.save_annotation(seeded_db, BEN, batch_id, rid, units[0], labels=["OUT_OF_SCOPE"], note="bens note")
    at = _page("pages/workbench.py", "annotator")
    assert "bens note" not in _texts(at)  # another annotator's labels and notes stay hidden
    assert at.radio(key="wb_unit").value == units[0]
    form = f"wb_{batch_id}_{rid}_{units[0]}"
    assert at.multiselect(key=f"{form}_labels").value == []  # nothing preselected: neither ben's nor the import's
    at.multiselect(key=f"{form}_labels").set_value(["CONTRADICTED"])
    at.number_input(key=f"{form}_crit").set_value(3)
    at.selectbox(key=f"{form}_cat").set_value("legal")
    at.button[[b.label for b in at.button].index("Save and next")].click().run()
    assert not at.exception, at.exception
    row = seeded_db.one("SELECT labels, criticality, category FROM annotations WHERE annotator = ?", [ANNA.name])
    assert (list(row["labels"]), row["criticality"], row["category"]) == (["CONTRADICTED"], 3, "legal")
    assert at.radio(key="wb_unit").value == units[1]  # on to the next open claim


def test_adjudication_page_resolves_a_disagreement_and_shows_the_new_score(seeded_db):
    batch_id, rid, units = _batch(seeded_db)
    for actor, first in ((ANNA, ["SUPPORTED"]), (BEN, ["CONTRADICTED"])):
        workbench.save_annotation(seeded_db, actor, batch_id, rid, units[0], labels=first, criticality=3)
        workbench.save_annotation(seeded_db, actor, batch_id, rid, units[1], labels=["SUPPORTED"])
    at = _page("pages/adjudication.py", "reviewer")
    assert {m.label: m.value for m in at.metric}["Disagreements to adjudicate"] == "1"
    key = f"adj_{batch_id}_{rid}_{units[0]}"
    at.radio(key=f"{key}_rule").set_value("expert")
    at.text_area(key=f"{key}_reason").set_value("the source contradicts it")
    at.multiselect(key=f"{key}_labels").set_value(["CONTRADICTED"])
    at.number_input(key=f"{key}_crit").set_value(3)
    at.button[[b.label for b in at.button].index("Record adjudication")].click().run()
    assert not at.exception, at.exception
    score = seeded_db.one("SELECT score, band, revision FROM scores WHERE is_current AND response_id = ?", [rid])
    assert f"now scores {score['score']:.1f} ({score['band']}" in _texts(at)
    assert score["revision"] == 2


def test_the_agreement_page_shows_the_registers_alpha(seeded_db):
    batch_id, rid, units = _batch(seeded_db)
    for actor, first in ((ANNA, ["SUPPORTED"]), (BEN, ["CONTRADICTED"])):
        workbench.save_annotation(seeded_db, actor, batch_id, rid, units[0], labels=first)
        workbench.save_annotation(seeded_db, actor, batch_id, rid, units[1], labels=["PARTIAL"])
    expected = agreement.agreement_report(seeded_db, RITA, samples=10).overall["labels"]["alpha"]
    at = _page("pages/agreement.py", "viewer")
    assert {m.label: m.value for m in at.metric}["Labels alpha (nominal)"] == f"{expected:.3f}"


def test_the_rubric_page_shows_the_version_in_force(seeded_db):
    at = _page("pages/rubric.py", "admin")
    assert escape_markdown("paper-provisional") in _texts(at)
    assert at.dataframe[0].value["label"].tolist()[:2] == ["SUPPORTED", "PARTIAL"]
    assert any(e.label == "Publish a new version" for e in at.expander)


def test_a_viewer_is_not_offered_the_workbench_or_adjudication(seeded_db):
    at = AppTest.from_file(APP, default_timeout=60)
    login(at, "viewer")
    at.run()
    for page in ("pages/workbench.py", "pages/adjudication.py"):
        with pytest.raises(ValueError, match="Could not find a navigation page"):
            at.switch_page(page)


def test_the_workbench_flags_a_claim_below_its_categorys_minimum_criticality(seeded_db):
    batch_id, rid, units = _batch(seeded_db)
    workbench.save_annotation(seeded_db, ANNA, batch_id, rid, units[0], labels=["SUPPORTED"], criticality=1,
                              category="legal")
    at = _page("pages/workbench.py", "annotator")
    at.radio(key="wb_unit").set_value(units[0]).run()
    assert any("Flagged: rubric v1 asks criticality 3 or more" in w.value for w in at.warning)
    workbench.save_annotation(seeded_db, ANNA, batch_id, rid, units[0], labels=["SUPPORTED"], criticality=3,
                              category="legal")
    st.cache_data.clear()  # written here, not through the page (whose writes clear the cached reads)
    at = _page("pages/workbench.py", "annotator")
    at.radio(key="wb_unit").set_value(units[0]).run()
    assert not any("Flagged" in w.value for w in at.warning)


def test_a_reviewer_who_annotated_the_batch_is_refused_its_readings(seeded_db):
    for actor in (BEN, RITA):
        ensure_account(actor.name, actor.role)
    rid = seeded_db.scalar("SELECT response_id FROM responses WHERE is_current AND claim_count = 1 "
                           "ORDER BY response_id LIMIT 1")
    batch_id = batches.create_batch(seeded_db, RITA, "own", batches.Selection(response_ids=(rid,)),
                                    [RITA.name, BEN.name])
    (unit,) = [u["unit_id"] for u in workbench.work_item(seeded_db, BEN, batch_id, rid)["units"]]
    workbench.save_annotation(seeded_db, RITA, batch_id, rid, unit, labels=["SUPPORTED"])
    workbench.save_annotation(seeded_db, BEN, batch_id, rid, unit, labels=["UNSUPPORTED"])
    at = _page("pages/adjudication.py", "reviewer")
    assert any("second person" in e.value for e in at.error)
    assert not [b for b in at.button if b.label == "Record adjudication"]


def test_the_workbench_grid_shows_every_claim_with_only_the_annotators_own_labels(seeded_db):
    batch_id, rid, units = _batch(seeded_db)
    workbench.save_annotation(seeded_db, BEN, batch_id, rid, units[0], labels=["OUT_OF_SCOPE"], note="bens note")
    workbench.save_annotation(seeded_db, ANNA, batch_id, rid, units[1], labels=["PARTIAL"], criticality=2)
    at = _page("pages/workbench.py", "annotator")
    at.button_group(key="wb_view").set_value("Grid").run()
    assert not at.exception, at.exception
    (grid,) = at.dataframe
    frame = grid.value
    assert frame["unit_id"].tolist() == units
    assert [list(v) for v in frame["labels"]] == [[], ["PARTIAL"]]  # anna's own; never ben's
    assert "bens note" not in frame.to_string() and "OUT_OF_SCOPE" not in frame.to_string()
    at.button[[b.label for b in at.button].index("Save the grid")].click().run()
    assert "Nothing changed in the grid." in _texts(at)


def test_the_workbench_source_starts_at_the_claims_source_and_offers_the_contexts(seeded_db, tmp_path):
    for actor in (ANNA, BEN, RITA):
        ensure_account(actor.name, actor.role)
    record = {"response_id": "r-sourced", "answer": "Refunds take 14 days. Shipping is free.",
              "retrieved_context": [{"id": "k1", "text": "Refunds take 14 days.", "source_id": "policy-unregistered"},
                                    {"id": "k2", "text": "Shipping costs 5 EUR.", "source_id": "tariff-2019"}],
              "claims": [{"claim_id": "s1", "text": "Refunds take 14 days.", "labels": ["SUPPORTED"],
                          "source_id": "policy-unregistered", "span": "Refunds take 14 days."},
                         {"claim_id": "s2", "text": "Shipping is free.", "labels": ["CONTRADICTED"],
                          "criticality": 2, "source_id": "tariff-2019"}]}
    import_path(seeded_db, SYSTEM, write_jsonl(tmp_path / "sourced.jsonl", [record]))
    batch_id = batches.create_batch(seeded_db, RITA, "sources", batches.Selection(response_ids=("r-sourced",)),
                                    [ANNA.name, BEN.name])
    at = _page("pages/workbench.py", "annotator")
    at.radio(key="wb_unit").set_value("s2").run()
    picker = at.selectbox(key=f"wb_{batch_id}_r-sourced_s2_src")
    assert picker.value == "tariff-2019"  # not "(none)": a reading left alone keeps the claim's source
    assert picker.options == ["(none)", "tariff-2019", "policy-unregistered"]  # registered or not
