"""AppTest of each console page on a seeded temporary database.

Expected values are computed independently in the test (plain SQL counts or hri_core), and a filter
change must change what the page shows accordingly.
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from register.console.queries import search
from register.db.sql import Params
from tests.helpers.accounts import login
from tests.helpers.paths import REPO_ROOT
from ui.framework.text import escape_markdown

APP = str(REPO_ROOT / "app.py")


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _count(store, where: str = "true", params=()):
    return store.query_one(
        "SELECT count(*) FROM responses r JOIN scores s ON s.response_id = r.response_id AND "
        f"s.revision = r.revision AND s.is_current WHERE r.is_current AND {where}", list(params))[0]


def _app(role: str = "reviewer"):
    at = AppTest.from_file(APP, default_timeout=60)
    login(at, role)
    return at


def test_overview_kpis_equal_independent_counts(seeded_db):
    total, high = _count(seeded_db), _count(seeded_db, "s.band = 'High'")
    at = _app().run()
    assert not at.exception, at.exception
    shown = _metrics(at)
    assert shown["Responses"] == f"{total:,}"
    assert shown["High → review"] == f"{high:,}"
    # four figures and the source-authority figure; the validated-feedback trend is shown on request
    assert len(at.get("plotly_chart")) == 5


def test_overview_use_case_filter_changes_the_kpis(seeded_db):
    use_case = seeded_db.query_one("SELECT use_case FROM responses WHERE use_case IS NOT NULL "
                                   "GROUP BY use_case ORDER BY count(*) DESC LIMIT 1")[0]
    expected = _count(seeded_db, "r.use_case = ?", [use_case])
    at = _app().run()
    before = _metrics(at)["Responses"]
    at.multiselect(key="flt_use_cases").set_value([use_case]).run()
    assert _metrics(at)["Responses"] == f"{expected:,}"
    assert _metrics(at)["Responses"] != before
    linked = at.query_params["uc"]  # the view can be linked
    assert (linked if isinstance(linked, list) else [linked]) == [use_case]


def test_an_older_version_is_shown_with_its_own_bands_and_weights(seeded_db):
    """Version 1's scores after a version with other band names was published: the overview lists version 1's
    bands with their counts, not the active profile's names with none."""
    from register import SYSTEM
    from register.scoring.profiles import activate, create_draft, get_profile
    from register.scoring.scorer import rescore

    by_band = dict(seeded_db.query("SELECT band, count(*) FROM scores WHERE is_current AND NOT no_claims "
                                   "GROUP BY band"))
    version = create_draft(seeded_db, SYSTEM, {"bands": [{"name": "Green", "upper": 30, "action": "release"},
                                                         {"name": "Amber", "upper": 60, "action": "caution"},
                                                         {"name": "Red", "upper": 100, "action": "block"}]})
    activate(seeded_db, SYSTEM, version, "test: other band names")
    rescore(seeded_db, SYSTEM, get_profile(seeded_db, version))
    at = _app()
    at.query_params["pv"] = "1"
    at.run()
    assert not at.exception, at.exception
    shown = _metrics(at)
    assert shown["High → review"] == f"{by_band['High']:,}" and shown["Low → release"] == f"{by_band['Low']:,}"
    assert not any(label.startswith(("Green", "Amber", "Red")) for label in shown)
    assert any("v1**" in c.value for c in at.caption)  # "bands and weights from <name> v1"
    current = _app().run()
    assert "Red → block" in _metrics(current) and "High → review" not in _metrics(current)


def test_the_band_filter_offers_the_chosen_versions_bands(seeded_db):
    """Under an older version the Band filter lists that version's bands (it listed the active profile's, none of
    which an older version's scores carry); a band the other version lacks is dropped on switching, not an error."""
    from register import SYSTEM
    from register.scoring.profiles import activate, create_draft, get_profile
    from register.scoring.scorer import rescore

    version_1_high = seeded_db.query_one(
        "SELECT count(*) FROM (SELECT response_id, arg_max(band, run_id) AS band FROM scores s JOIN responses r "
        "USING (response_id, revision) WHERE r.is_current AND s.profile_version = 1 GROUP BY response_id) "
        "WHERE band = 'High'")[0]
    assert version_1_high > 0
    version = create_draft(seeded_db, SYSTEM, {"bands": [{"name": "Green", "upper": 30, "action": "release"},
                                                         {"name": "Red", "upper": 100, "action": "block"}]})
    activate(seeded_db, SYSTEM, version, "test: other band names")
    rescore(seeded_db, SYSTEM, get_profile(seeded_db, version))
    at = _app()
    at.switch_page("pages/responses.py").run()
    assert at.multiselect(key="flt_bands").options == ["Green", "Red", "No claims"]
    at.selectbox(key="flt_profile_version").set_value(1).run()
    assert not at.exception, at.exception
    assert at.multiselect(key="flt_bands").options == [b.name for b in get_profile(seeded_db, 1).bands] + ["No claims"]
    at.multiselect(key="flt_bands").set_value(["High"]).run()
    frame = at.dataframe[0].value
    assert len(frame) == min(50, version_1_high) and set(frame["band"]) == {"High"}
    at.selectbox(key="flt_profile_version").set_value("current").run()  # High is not a band of the active version
    assert not at.exception, at.exception
    assert at.multiselect(key="flt_bands").value == [] and "band" not in at.query_params

    linked = _app()
    linked.query_params["pv"], linked.query_params["band"] = "1", "High"  # a shared link keeps its band
    linked.run()
    assert linked.multiselect(key="flt_bands").value == ["High"]
    assert _metrics(linked)["Responses"] == f"{version_1_high:,}"


def test_filters_are_read_from_the_url(seeded_db):
    band_high = _count(seeded_db, "s.band = 'High'")
    at = _app()
    at.query_params["band"] = "High"
    at.run()
    assert _metrics(at)["Responses"] == f"{band_high:,}"


def test_the_decision_filter_narrows_every_page_and_is_kept_in_the_url(seeded_db):
    # the rarest decision the demo holds
    decision, n = seeded_db.query_one("SELECT decision, count(*) AS n FROM scores WHERE is_current "
                                      "GROUP BY decision ORDER BY n, decision LIMIT 1")
    assert 0 < n < _count(seeded_db)
    at = _app()
    at.query_params["decision"] = decision
    at.run()
    assert at.multiselect(key="flt_decisions").value == [decision]
    assert _metrics(at)["Responses"] == f"{n:,}"
    at.switch_page("pages/responses.py").run()
    assert not at.exception, at.exception
    frame = at.dataframe[0].value
    assert len(frame) == min(50, n) and set(frame["decision"]) == {decision}
    other = "block" if decision != "block" else "review"
    at.multiselect(key="flt_decisions").set_value([other, decision]).run()
    assert list(at.query_params["decision"]) == [other, decision]


def test_responses_page_lists_and_searches(seeded_db):
    at = _app().run()
    at.switch_page("pages/responses.py").run()
    assert not at.exception, at.exception
    frame = at.dataframe[0].value
    assert len(frame) == min(50, _count(seeded_db))
    assert list(frame["score"]) == sorted(frame["score"], reverse=True)
    # the decision a person acts on is shown beside the band, before the HRI action and the mitigation
    columns = list(frame.columns)
    assert columns[columns.index("band") + 1] == "decision" and columns.index("decision") < columns.index("action")
    assert set(frame["decision"]) <= {"release", "caution", "review", "block"} and frame["decision"].notna().all()
    at.text_input(key="responses_search").set_value("ISO 27001 certification").run()
    frame = at.dataframe[0].value
    assert "paper-table-v" in set(frame["response_id"])
    hits = seeded_db.query_one(
        "SELECT count(DISTINCT r.response_id) FROM responses r LEFT JOIN claims c USING (response_id, revision) "
        "WHERE r.is_current AND (r.question ILIKE ? OR r.answer ILIKE ? OR c.text ILIKE ?)",
        ["%ISO 27001 certification%"] * 3)[0]
    assert len(frame) == min(50, hits)
    # a letter in nearly every answer: its matches are read as a bitmap (register.console.queries.search.search_matches)
    assert search.search_matches(seeded_db, "e", Params(), bitmap=True).prepare is not None
    at.text_input(key="responses_search").set_value("E").run()
    assert not at.exception, at.exception
    hits = seeded_db.query_one(
        "SELECT count(DISTINCT r.response_id) FROM responses r LEFT JOIN claims c USING (response_id, revision) "
        "WHERE r.is_current AND (r.question ILIKE ? OR r.answer ILIKE ? OR c.text ILIKE ?)", ["%e%"] * 3)[0]
    frame = at.dataframe[0].value
    assert len(frame) == min(50, hits) and list(frame["score"]) == sorted(frame["score"], reverse=True)
    assert any(f"{hits:,} responses" in caption.value for caption in at.caption), [c.value for c in at.caption]


def test_detail_of_table_v_shows_70_high_review_and_names_claim_3(seeded_db):
    at = _app()
    at.query_params["response_id"] = "paper-table-v"
    at.run()
    at.switch_page("pages/response_detail.py").run()
    assert not at.exception, at.exception
    shown = _metrics(at)
    assert (shown["HRI score"], shown["Band"], shown["HRI action"]) == ("70.0", "High", "review")
    # the decision a person acts on, and why: at least the band's action, its reasons listed from the stored row
    stored = seeded_db.query_one("SELECT decision, decision_reasons FROM current_scores "
                                 "WHERE response_id = 'paper-table-v'")
    assert shown["Decision"] == stored[0] and stored[0] in ("review", "block")
    why = " ".join(m.value for m in at.markdown)
    assert "Why this decision" in why and escape_markdown(stored[1][0]) in why
    explanation = " ".join(i.value for i in at.info)
    assert escape_markdown("claim 3 (criticality 3) is CONTRADICTED") in explanation  # escaped: it quotes data
    assert escape_markdown("0.70 safety floor") in explanation
    assert any("matches the stored score" in s.value for s in at.success)
    claims = at.dataframe[0].value
    assert list(claims["claim_id"])[2] == "paper-table-v-3"


def test_detail_of_unknown_response_shows_one_error(seeded_db):
    at = _app()
    at.query_params["response_id"] = "does-not-exist"
    at.run()
    at.switch_page("pages/response_detail.py").run()
    assert len(at.error) == 1 and escape_markdown("does-not-exist") in at.error[0].value  # escaped: user input


def test_review_decision_leaves_the_queue_and_is_audited(seeded_db):
    at = _app().run()
    at.switch_page("pages/review_queue.py").run()
    assert not at.exception, at.exception
    in_queue = int(_metrics(at)["In queue"].replace(",", ""))
    pick = at.selectbox(key="queue_pick").value
    at.radio(key="review_decision_choice").set_value("block")
    at.text_area(key="review_reason").input("Contradicts the signed contract; needs a fix.")
    at.button[0].click()  # the form's submit button
    at.run()
    assert not at.exception, at.exception
    assert int(_metrics(at)["In queue"].replace(",", "")) == in_queue - 1
    assert pick not in list(at.dataframe[0].value["response_id"]) or in_queue - 1 > 25
    event = seeded_db.query_one("SELECT actor_name, actor_role, after FROM audit_events "
                                "WHERE action = 'review.decide' ORDER BY seq DESC LIMIT 1")
    assert event[0] == "test-reviewer" and event[1] == "reviewer"
    assert f'"response_id":"{pick}"' in event[2] and '"decision":"block"' in event[2]


def test_review_decision_without_reason_is_refused(seeded_db):
    at = _app().run()
    at.switch_page("pages/review_queue.py").run()
    before = _metrics(at)["In queue"]
    at.text_area(key="review_reason").input("   ")
    at.button[0].click()
    at.run()
    assert len(at.error) == 1 and "reason" in at.error[0].value.lower()
    assert _metrics(at)["In queue"] == before


def test_empty_database_is_seeded_on_first_start():
    at = AppTest.from_file(APP, default_timeout=120)
    login(at, "viewer")
    at.run()
    assert not at.exception, at.exception
    assert int(_metrics(at)["Responses"].replace(",", "")) > 2000  # Table V + demo files + 2,000 synthetic
    assert any("Logged in as" in c.value and "(viewer" in c.value for c in at.sidebar.caption)


def test_mitigation_shown_beside_band_and_action_on_the_list_and_the_detail(seeded_db):
    """Issue 12: CLAIM's Mitigation action and its one sentence, as stored with the score."""
    stored = dict(seeded_db.query(
        "SELECT response_id, mitigation_action FROM scores WHERE is_current"))
    at = _app().run()
    at.switch_page("pages/responses.py").run()
    frame = at.dataframe[0].value
    assert list(frame.columns[:11])[6:11] == ["band", "decision", "action", "mitigation_action", "mitigation_reason"]
    assert {rid: action for rid, action in zip(frame["response_id"], frame["mitigation_action"], strict=True)} == {
        rid: stored[rid] for rid in frame["response_id"]}
    assert set(frame["mitigation_action"]) <= {"answer", "revise", "ask", "abstain", "escalate"}
    at = _app()
    at.query_params["response_id"] = "paper-table-v"
    at.run()
    at.switch_page("pages/response_detail.py").run()
    assert not at.exception, at.exception
    reason = seeded_db.scalar("SELECT mitigation_reason FROM scores WHERE is_current AND response_id = ?",
                              ["paper-table-v"])
    assert _metrics(at)["Mitigation"] == stored["paper-table-v"]
    assert any(escape_markdown(reason) in c.value for c in at.caption), [c.value for c in at.caption]
