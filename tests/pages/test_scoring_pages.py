"""AppTest of the scoring pages (profiles, elicitation, calibration) on a seeded temporary database.

Each test logs in as a local admin account (``login_as``, tests/pages/conftest.py); the second admin of
the four-eyes test is a second account. Expected values come from the register or hri_core, computed
in the test.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from hri_core.ahp import analyse_matrix, matrix_from_judgements
from register import Actor
from register.scoring import calibration as cal
from register.scoring import elicitation as el
from register.scoring.profiles import active_profile, create_draft, get_profile, list_profiles
from tests.helpers.actors import enrol
from tests.helpers.paths import REPO_ROOT
from ui.framework.text import escape_markdown

APP = str(REPO_ROOT / "app.py")
ANN = Actor("ann-admin", "admin")
BOB = Actor("bob-admin", "admin")


class Session:
    """Who the next ``open`` logs in as (ANN unless ``user`` is changed)."""

    def __init__(self, login_as):
        self.login_as = login_as
        self.user = ANN

    def open(self, page: str) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=60)
        self.login_as(at, self.user.role, self.user.name)
        at.run()
        at.switch_page(page).run()
        assert not at.exception, at.exception
        return at


@pytest.fixture
def acting(login_as, seeded_db):
    """The session to open pages as; ANN, BOB and rita have accounts (they also act through the API here)."""
    enrol(seeded_db, ANN, BOB, Actor("rita-reviewer", "reviewer"))
    return Session(login_as)


def _frame(at, column: str):
    """The first dataframe shown with ``column``."""
    for element in at.dataframe:
        if column in element.value.columns:
            return element.value
    raise AssertionError(f"no table with a column {column!r}")


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_editor_live_sum_normalise_and_save_a_draft(seeded_db, acting):
    at = acting.open("pages/profiles.py")
    assert _metrics(at)["Weight sum"] == "1.0000"
    at.number_input(key="pe1_w_F").set_value(0.35).run()
    assert _metrics(at)["Weight sum"] == "1.1000"
    assert any("must sum to 1" in e.value for e in at.error), [e.value for e in at.error]
    assert at.button(key="pe_save").disabled
    at.button(key="pe1_normalise").click().run()
    assert _metrics(at)["Weight sum"] == "1.0000"
    assert at.number_input(key="pe1_w_F").value == pytest.approx(0.35 / 1.1, abs=1e-6)
    at.button(key="pe_preview").click().run()
    assert not at.exception, at.exception
    current = seeded_db.query_one("SELECT count(*) FROM responses WHERE is_current")[0]
    assert _metrics(at)["Responses compared"] == f"{current:,}"
    at.button(key="pe_save").click().run()
    versions = list_profiles(seeded_db)
    assert [(v["profile_version"], v["status"], v["created_by"]) for v in versions][-1] == (2, "draft", ANN.name)
    assert get_profile(seeded_db, 2).weights["F"] == pytest.approx(0.35 / 1.1, abs=1e-5)
    assert any("Saved draft version 2" in s.value for s in at.success)


def test_the_publish_tab_offers_the_draft_just_saved_not_an_older_one(seeded_db, acting):
    older = create_draft(seeded_db, BOB, {"name": "an older draft by someone else"})
    at = acting.open("pages/profiles.py")
    assert at.selectbox(key="pp_version").value == older  # the only draft, chosen before the save
    at.number_input(key="pe1_w_F").set_value(0.35).run()
    at.button(key="pe1_normalise").click().run()
    at.button(key="pe_save").click().run()
    saved = list_profiles(seeded_db)[-1]["profile_version"]
    assert saved == older + 1
    # before the fix the selectbox kept the older draft, and "Publish" published someone else's version
    assert at.selectbox(key="pp_version").value == saved
    assert any("four eyes" in w.value for w in at.warning)  # ANN made it: she is told a second person publishes


def test_editor_names_every_problem_at_once(seeded_db, acting):
    at = acting.open("pages/profiles.py")
    at.number_input(key="pe1_w_F").set_value(0.9).run()
    at.number_input(key="pe1_half_life").set_value(0.0).run()
    errors = " ".join(e.value for e in at.error)
    assert "weights" in errors and escape_markdown("feedback_half_life_days") in errors  # messages are escaped


def test_publish_needs_a_second_person_and_rescores(seeded_db, acting):
    version = create_draft(seeded_db, ANN, {"weights": {"F": 0.4, "C": 0.1, "U": 0.2, "O": 0.1, "S": 0.05,
                                                        "P": 0.05, "H": 0.1}})
    from register.scoring.impact import impact_preview

    expected = impact_preview(seeded_db, get_profile(seeded_db, version))
    at = acting.open("pages/profiles.py")
    at.button(key="pp_preview").click().run()
    shown = _metrics(at)
    assert shown["Band changes"] == f"{expected.band_changes:,}"
    assert shown["Action changes"] == f"{expected.action_changes:,}"
    assert any("You created this draft" in w.value for w in at.warning)
    at.text_area(key="pp_reason").set_value("stricter on contradictions")
    at.button[[b.label for b in at.button].index("Publish and rescore")].click().run()
    assert any("second person" in e.value for e in at.error), [e.value for e in at.error]
    assert active_profile(seeded_db).version == 1

    acting.user = BOB
    at = acting.open("pages/profiles.py")
    at.text_area(key="pp_reason").set_value("reviewed: stricter on contradictions")
    at.button[[b.label for b in at.button].index("Publish and rescore")].click().run()
    assert not at.exception, at.exception
    current = seeded_db.query_one("SELECT count(*) FROM responses WHERE is_current")[0]
    assert any(f"rescored {current:,} responses" in s.value for s in at.success), [s.value for s in at.success]
    assert active_profile(seeded_db).version == version
    assert seeded_db.query_one("SELECT count(*) FROM scores WHERE is_current AND profile_version = ?",
                               [version])[0] == current


def test_diff_and_elicitation_record_shown_with_the_version(seeded_db, acting):
    version, _ = el.save_ahp(seeded_db, ANN, [{"expert": "Ann", "judgements": [3] * 6 + [1] * 15}])
    at = acting.open("pages/profiles.py")
    diff = _frame(at, "parameter")
    assert set(diff["parameter"]) == {f"weights.{d}" for d in "FCUOSPH"}
    assert any("Elicitation record" in e.label and "AHP by Ann" in e.label for e in at.expander)
    assert sum("AHP by Ann" in e.label for e in at.expander) == 2  # the Version tab and the publish tab
    assert version == 2


def test_ahp_page_computes_weights_and_cr_and_saves(seeded_db, acting):
    at = acting.open("pages/elicitation.py")
    at.select_slider(key="ahp_0_FC").set_value(2).run()    # F 3x C
    at.select_slider(key="ahp_0_FU").set_value(4).run()    # F 5x U
    judgements = {"F/C": 3, "F/U": 5}
    expected = analyse_matrix(matrix_from_judgements(
        [judgements.get(f"{a}/{b}", 1) for i, a in enumerate("FCUOSPH") for b in "FCUOSPH"[i + 1:]]))
    assert _metrics(at)["Consistency ratio"] == f"{expected.cr:.3f}"
    table = _frame(at, "CR")
    assert table.iloc[-1]["F"] == pytest.approx(round(expected.weights["F"], 4))
    if expected.acceptable:
        at.button(key="ahp_save").click().run()
        (record,) = el.elicitations_for(seeded_db, 2)
        assert record["record"]["cr"] == pytest.approx(expected.cr)
    else:
        assert any("Most inconsistent" in e.value for e in at.error)


def test_ahp_page_flags_inconsistency_and_names_the_judgement(seeded_db, acting):
    at = acting.open("pages/elicitation.py")
    at.select_slider(key="ahp_0_FC").set_value(8).run()    # F 9x C
    at.select_slider(key="ahp_0_CU").set_value(8).run()    # C 9x U
    at.select_slider(key="ahp_0_FU").set_value(-8).run()   # U 9x F: a cycle
    errors = " ".join(e.value for e in at.error)
    assert "inconsistent" in errors and "F vs U" in errors
    assert at.button(key="ahp_save").disabled


def test_delphi_page_submit_close_and_summary(seeded_db, acting):
    sid = el.open_session(seeded_db, ANN, "Weights 2027", [ANN.name, BOB.name], 0.05)
    el.submit_weights(seeded_db, BOB, sid, {"F": 0.3, "C": 0.2, "U": 0.1, "O": 0.1, "S": 0.1, "P": 0.1, "H": 0.1})
    at = acting.open("pages/elicitation.py")
    assert _metrics(at)["Current round"] == "1 (open)"
    assert any("Submitted so far: bob\\-admin" in c.value for c in at.caption)  # escaped markdown
    assert not any("iqr" in df.value.columns for df in at.dataframe), "no summary while the round is open"
    for d, v in {"F": 0.25, "C": 0.2, "U": 0.15, "O": 0.1, "S": 0.1, "P": 0.1, "H": 0.1}.items():
        at.number_input(key=f"dl_w_{d}").set_value(v)
    at.text_area(key="dl_rationale").set_value("contracts first")
    at.button[[b.label for b in at.button].index("Submit my weights")].click().run()
    at.button(key="dl_close").click().run()
    assert not at.exception, at.exception
    spread = _frame(at, "iqr").set_index("dimension")
    assert spread.loc["F", "median"] == pytest.approx(0.275)
    assert spread.loc["F", "iqr"] == pytest.approx(0.025)
    distances = _frame(at, "distance from median")
    assert set(distances["expert"]) == {ANN.name, BOB.name}


def test_calibration_page_shows_known_answer_and_saves_bands(seeded_db, acting):
    rows = seeded_db.query("SELECT arg_min(response_id, response_id), score FROM scores WHERE is_current AND "
                           "score > 0 GROUP BY score ORDER BY score LIMIT 4")
    (r1, s1), (r2, _), (r3, _), (r4, _) = rows
    cal.import_outcomes_csv(seeded_db, ANN, f"response_id,outcome\n{r1},good\n{r2},bad\n{r3},good\n{r4},bad\n"
                            .encode(), "known.csv", kind="incident")
    at = acting.open("pages/calibration.py")
    demo_decisions = len(cal.outcome_pairs(seeded_db, ("review",)))
    assert demo_decisions > 0  # the demo's review decisions count by default, beside the imported four
    assert _metrics(at)["Known outcomes"] == str(demo_decisions + 4)
    at.multiselect(key="cal_sources").set_value(["import"]).run()
    shown = _metrics(at)
    assert shown["Known outcomes"] == "4" and shown["Bad answers"] == "2"
    assert shown["ROC AUC"] == "0.750"
    assert shown["Suggested review threshold"] == f"{s1:g}"
    assert shown["Needless reviews"] == "1" and shown["Missed bad answers"] == "0"
    at.button(key="cal_save").click().run()
    assert any("Draft version 2" in s.value for s in at.success), [s.value for s in at.success]
    assert get_profile(seeded_db, 2).bands[1].upper == pytest.approx(s1)


def test_calibration_page_without_outcomes_explains(seeded_db, acting):
    """The demo has review decisions but no imported outcomes: with only imported ones chosen there is nothing."""
    at = acting.open("pages/calibration.py")
    at.multiselect(key="cal_sources").set_value(["import"]).run()
    assert _metrics(at)["Known outcomes"] == "0"
    assert any("both kinds" in i.value for i in at.info)


def test_a_reviewer_sees_the_profiles_but_cannot_save_or_publish(seeded_db, acting):
    create_draft(seeded_db, ANN, {"feedback_half_life_days": 14})
    acting.user = Actor("rita-reviewer", "reviewer")
    at = acting.open("pages/profiles.py")
    assert _metrics(at)["Weight sum"] == "1.0000"
    assert at.button(key="pe_save").disabled
    assert any("Only an admin" in c.value for c in at.caption)
    assert [b for b in at.button if b.label == "Publish and rescore"][0].disabled


def _version_floors(at):
    """The version view's floor table (the editor's floor table, keyed, comes first)."""
    shown = [e for e in at.dataframe if "min_action" in e.value.columns and getattr(e, "key", None) is None]
    return shown[0].value


def test_the_profiles_page_shows_minimum_actions_and_previews_the_review_floors(seeded_db, acting):
    """Issue 12: each floor's minimum action on the version view. A new register's version 1 carries Table IV's
    review floors (issue 33), so the page does not offer them again; the plain paper profile saved as a draft
    previews the answers it would move back from review to caution."""
    from hri_core import default_profile
    from hri_core.profile import REVIEW_FLOOR_IDS
    from register.scoring.impact import impact_preview

    moved = impact_preview(seeded_db, default_profile()).action_moves("review", "caution")
    assert moved > 0
    plain = create_draft(seeded_db, ANN, {"floors": [f.model_dump(mode="json") for f in default_profile().floors]})
    acting.user = BOB
    at = acting.open("pages/profiles.py")
    at.selectbox(key="pv_version").set_value(1).run()
    floors = _version_floors(at).set_index("rule_id")
    assert {rid for rid, action in floors["min_action"].items() if action == "review"} == set(REVIEW_FLOOR_IDS)
    assert not any(b.key == "rf_preview" for b in at.button)  # version 1 has them: nothing to offer
    at.selectbox(key="pp_version").set_value(plain).run()
    at.button(key="pp_preview").click().run()
    assert not at.exception, at.exception
    line = escape_markdown(f"{moved:,} review -> caution")
    assert any(line in m.value for m in at.markdown), "the action transitions line"


def test_the_mitigation_policy_tab_saves_and_publishes_a_draft_under_four_eyes(seeded_db, acting):
    from register.scoring.mitigation import active_policy, list_policies

    at = acting.open("pages/profiles.py")
    readings = _frame(at, "verdict").set_index("label")
    assert readings.loc["PARTIAL", "verdict"] == "OVERREACH" and readings.loc["UNSUPPORTED", "verdict"] == "UNLINKED"
    at.text_area(key="mp_overrides").set_value("{not json")
    at.button[[b.label for b in at.button].index("Save draft")].click().run()
    assert any("not JSON" in e.value for e in at.error)
    at.text_area(key="mp_overrides").set_value('{"non_core_unsupported_action": "revise"}')
    at.button[[b.label for b in at.button].index("Save draft")].click().run()
    assert [p["status"] for p in list_policies(seeded_db)] == ["active", "draft"]
    acting.user = BOB
    at = acting.open("pages/profiles.py")
    at.text_area(key="mp_reason").set_value("the table's 'Some claims ... but fixable' row")
    at.button[[b.label for b in at.button].index("Publish")].click().run()
    assert not at.exception, at.exception
    assert active_policy(seeded_db).version == 2
    assert active_policy(seeded_db).non_core_unsupported_action == "revise"


def test_the_impact_preview_says_how_it_was_computed(seeded_db, acting):
    """A weights-only draft over scores of one version and as-of time is previewed from the stored rows; a
    draft changing a floor is rescored in full, and the page says so with the reason."""
    from datetime import UTC, datetime

    from hri_core import default_profile
    from register import SYSTEM
    from register.scoring.scorer import rescore

    rescore(seeded_db, SYSTEM, active_profile(seeded_db), as_of=datetime(2026, 12, 1, tzinfo=UTC))
    # the review floors are version 1 now (nothing offered): the plain paper floors are the draft changing floors
    floors = create_draft(seeded_db, ANN, {"floors": [f.model_dump(mode="json") for f in default_profile().floors]})
    create_draft(seeded_db, ANN, {"weights": {"F": 0.4, "C": 0.1, "U": 0.2, "O": 0.1, "S": 0.05, "P": 0.05,
                                              "H": 0.1}})
    at = acting.open("pages/profiles.py")
    at.button(key="pp_preview").click().run()
    assert not at.exception, at.exception
    assert any("Computed from the stored dimension scores" in c.value for c in at.caption), \
        [c.value for c in at.caption]
    at.selectbox(key="pp_version").set_value(floors).run()
    at.button(key="pp_preview").click().run()
    assert any(escape_markdown("Full rescore of every response: the draft changes floors") in c.value
               for c in at.caption), [c.value for c in at.caption]


def test_an_admin_keeps_a_view_of_a_version_read_by_a_join_and_a_reviewer_cannot(seeded_db, acting, monkeypatch):
    """The version view says how the console reads each version; an admin keeps a view of one read by a join (the
    oldest kept view beyond the limit named before and dropped), a reviewer is told only an admin can."""
    from register.readmodels import version_views
    from tests.helpers.profiles import OTHER_WEIGHTS, publish_versions

    monkeypatch.setenv("HRI_KEEP_VERSION_VIEWS", "1")
    assert publish_versions(seeded_db) == [2, 3]
    draft = create_draft(seeded_db, ANN, {"weights": OTHER_WEIGHTS[0]})  # scores nothing: nothing to keep
    assert version_views.kept(seeded_db) == [2]
    overview = acting.open("pages/overview.py")
    overview.selectbox(key="flt_profile_version").set_value(1).run()
    assert any("Version 1 is read from its score rows" in c.value for c in overview.sidebar.caption)
    at = acting.open("pages/profiles.py")
    at.selectbox(key="pv_version").set_value(3).run()
    assert any("from the current scores" in c.value for c in at.caption)
    at.selectbox(key="pv_version").set_value(2).run()
    assert any("kept as a read model" in c.value for c in at.caption)
    at.selectbox(key="pv_version").set_value(1).run()
    assert any("by joining its score rows" in c.value for c in at.caption)
    assert not any("no answer is scored" in c.value for c in at.caption)
    keep_button = at.button(key="kv_keep")
    assert "drops the view of v2" in keep_button.help
    keep_button.click().run()
    assert not at.exception, at.exception
    assert "The view of v1 is kept; the view of v2 went." in [s.value for s in at.success]
    assert version_views.kept(seeded_db) == [1]
    assert any("kept as a read model" in c.value for c in at.caption)
    overview = acting.open("pages/overview.py")
    overview.selectbox(key="flt_profile_version").set_value(1).run()
    assert not any("read from its score rows" in c.value for c in overview.sidebar.caption)
    overview.selectbox(key="flt_profile_version").set_value(2).run()
    assert any("Version 2 is read from its score rows" in c.value for c in overview.sidebar.caption)

    acting.user = Actor("rita-reviewer", "reviewer")
    at = acting.open("pages/profiles.py")
    at.selectbox(key="pv_version").set_value(2).run()
    assert any("Only an admin can keep a view" in c.value for c in at.caption)
    assert not any(b.key == "kv_keep" for b in at.button)
    acting.user = ANN
    at = acting.open("pages/profiles.py")
    at.selectbox(key="pv_version").set_value(draft).run()
    assert any(f"v{draft}: no answer is scored under it." == c.value for c in at.caption)
    assert not any(b.key == "kv_keep" for b in at.button)


def test_editor_sets_the_repeated_feedback_window(seeded_db, acting):
    at = acting.open("pages/profiles.py")
    assert at.number_input(key="pe1_repeat_window").value is None  # twice the half-life
    at.number_input(key="pe1_repeat_window").set_value(14.0).run()
    at.button(key="pe_save").click().run()
    saved = get_profile(seeded_db, list_profiles(seeded_db)[-1]["profile_version"])
    assert (saved.feedback_repeat_window_days, saved.repeat_window_days) == (14.0, 14.0)


def test_a_system_draft_is_endorsed_by_one_admin_and_published_by_another(seeded_db, acting):
    from hri_core import default_profile
    from register import SYSTEM

    # a draft the system role made (the review floors are version 1 now): the plain paper floors
    version = create_draft(seeded_db, SYSTEM, {"floors": [f.model_dump(mode="json") for f in default_profile().floors]})
    at = acting.open("pages/profiles.py")
    at.selectbox(key="pp_version").set_value(version).run()
    assert any("nobody's" in w.value for w in at.warning)
    assert not any(b.key == "pp_preview" for b in at.button)  # nothing to publish until endorsed
    at.text_area(key="pp_endorse_reason").set_value("Table IV asks for review")
    at.button(key="FormSubmitter:pp_endorse_form-Endorse").click().run()
    assert not at.exception, at.exception
    assert any(f"Endorsed draft v{version}" in s.value for s in at.success)
    assert any("different admin must publish" in w.value for w in at.warning)
    acting.user = BOB
    at = acting.open("pages/profiles.py")
    at.selectbox(key="pp_version").set_value(version).run()
    at.text_area(key="pp_reason").set_value("endorsed by Ann; Table IV")
    at.button(key="FormSubmitter:pp_form-Publish and rescore").click().run()
    assert not at.exception, at.exception
    assert active_profile(seeded_db).version == version
