"""The demo registers what its answers cite and the use cases they serve, so Authority and Scope find real things:
a superseded source, one past its date, restricted ones, weak tiers; a suspended use case and an overdue one."""

from __future__ import annotations

from register import SYSTEM
from register.console.queries.authority import authority_overview
from register.console.queries.filters import Filters
from register.demo import DATA_DIR, seed_demo
from register.demo.sources import SUPERSEDED, VPN_GUIDE_VALID_UNTIL, demo_source_rows
from register.demo.use_cases import OVERDUE_USE_CASE, SUSPENDED_USE_CASE
from register.governance.use_cases import list_use_cases
from register.scoring import authority


def test_every_source_the_demo_answers_cite_is_registered(demo_store):
    """Before, the demo's supported claims were nearly all on an "unknown source" (9,234 at 2,000 synthetic
    answers): the source register held only the paper's references."""
    cited = demo_store.frame("SELECT DISTINCT c.source_id FROM claims c JOIN responses r USING (response_key) "
                             "WHERE r.is_current AND c.source_id IS NOT NULL")["source_id"]
    registered = set(demo_store.frame("SELECT source_id FROM sources WHERE NOT deleted")["source_id"])
    assert len(cited) > 100 and set(cited) <= registered
    overview = authority_overview(demo_store, Filters())
    by_problem = overview["by_problem"].set_index("problem")["claims"]
    assert by_problem[authority.UNKNOWN] == 0 and overview["supported_sourced"] > 500
    assert (authority.findings(demo_store)["problem"] != authority.UNKNOWN).all()


def test_the_demo_sources_span_the_tiers_and_the_deliberate_cases(demo_store):
    rows = {r["source_id"]: r for r in demo_source_rows(DATA_DIR)}
    assert {int(r["authority_tier"]) for r in rows.values()} == {1, 2, 3, 4, 5}
    old, new = SUPERSEDED
    assert rows[old]["superseded_by"] == new and new in rows
    assert rows["it-vpn-guide-2026"]["valid_until"] == VPN_GUIDE_VALID_UNTIL
    assert {r["restricted_to"] for r in rows.values() if r.get("restricted_to")} == {"admin"}


def test_the_authority_step_finds_what_the_demo_means_it_to(demo_store):
    """Each deliberate case gives a finding on the supported claims citing it, and nothing else is flagged."""
    found = authority.findings(demo_store)
    found = found[found["check"] != "scope"]
    supported = found[found["proposed_label"].notna()]
    stale = set(supported.loc[supported["problem"] == authority.STALE, "source_id"])
    assert stale <= {SUPERSEDED[0], "it-vpn-guide-2026"} and SUPERSEDED[0] in stale
    weak = supported.loc[supported["problem"] == authority.INSUFFICIENT, "reason"]
    assert len(weak) and weak.str.contains("tier [45] is weaker").all()
    forbidden = found[found["problem"] == authority.FORBIDDEN]
    assert len(forbidden) and forbidden["reason"].str.len().gt(0).all()
    # nothing undecided: every finding is one of the demo's deliberate kinds
    assert set(found["problem"]) == {authority.STALE, authority.INSUFFICIENT, authority.FORBIDDEN}
    assert supported["problem"].isin([authority.STALE, authority.INSUFFICIENT]).all()


def test_the_use_case_register_has_four_eyes_a_suspended_and_an_overdue_use_case(demo_store):
    register = list_use_cases(demo_store).set_index("use_case_id")
    answered = set(demo_store.frame("SELECT DISTINCT use_case FROM responses")["use_case"])
    assert answered <= set(register.index)
    assert register.loc[SUSPENDED_USE_CASE, "status"] == "suspended"
    assert (register["status"] == "approved").sum() == len(answered) - 1
    approved = register[register["status"] == "approved"]
    assert (approved["owner"].str.casefold() != approved["approved_by"].str.casefold()).all()
    assert str(register.loc[OVERDUE_USE_CASE, "review_by"]) < "2026-12-01"


def test_the_scope_check_holds_the_suspended_use_cases_answers_with_the_reason(demo_store):
    found = authority.findings(demo_store)
    scope = found[found["check"] == "scope"]
    assert set(scope["problem"]) == {"use case suspended", "review date passed"}
    suspended = demo_store.frame("SELECT response_key FROM responses WHERE is_current AND use_case = ?",
                                 [SUSPENDED_USE_CASE])
    held = demo_store.frame("SELECT s.response_key, s.decision FROM scores s JOIN responses r USING (response_key) "
                            "WHERE s.is_current AND r.is_current AND r.use_case = ?", [SUSPENDED_USE_CASE])
    assert len(held) == len(suspended) == 94 and held["decision"].isin(["review", "block"]).all()
    assert scope.loc[scope["problem"] == "use case suspended", "reason"].str.contains("suspended").all()


def test_seeding_the_demo_again_writes_nothing(demo_store):
    events = demo_store.scalar("SELECT count(*) FROM audit_events")
    seed_demo(demo_store, SYSTEM, bound_profiles=False, feedback_history=False)  # as the template was seeded
    assert demo_store.scalar("SELECT count(*) FROM audit_events") == events
