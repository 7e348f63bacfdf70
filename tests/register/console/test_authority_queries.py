"""The Authority checks on the console: the responses page's column and filter, the detail's per-claim
checks, the overview's count of supported claims on stale or unauthoritative sources, and the review
queue, which takes answers whose SUPPORTED claim rests on a forbidden, stale or insufficient source."""

from __future__ import annotations

import pytest

from register.console.queries.authority import authority_overview
from register.console.queries.detail import response_detail
from register.console.queries.explorer import AUTHORITY_FILTERS, export_rows, responses_page
from register.console.queries.filters import Filters, covers_every_current
from register.console.queries.overview import kpis
from register.console.queries.queue import queue_stats
from register.console.review import record_decision, review_queue
from register.db.store import utc_now
from tests.helpers.actors import REVIEWER, enrol
from tests.helpers.authority import load_authority_register


@pytest.fixture
def register(store, tmp_path):
    enrol(store, REVIEWER)  # the register re-reads the reviewer's account on every write
    return load_authority_register(store, tmp_path)


def test_the_responses_page_shows_each_answers_authority_findings(register):
    frame, total = responses_page(register, Filters(), sort_by="response_id", descending=False)
    column = dict(zip(frame["response_id"], frame["authority"], strict=True))
    assert total == 7 and column["au-ok"] != column["au-ok"]  # NaN: every sourced claim passes
    assert column["au-stale"] == "c1: stale source, proposed OUTDATED"
    assert column["au-restricted"] == "c1: forbidden source, proposed ACCESS_GAP"
    assert column["au-weak"] == "c1: insufficient authority, proposed needs review"
    assert column["au-contra"] == "c1: stale source"
    assert "authority" in export_rows(register, Filters()).columns


@pytest.mark.parametrize("authority, expected", [
    ("any finding", {"au-stale", "au-expired", "au-restricted", "au-weak", "au-unknown", "au-contra"}),
    ("proposed label", {"au-stale", "au-expired", "au-restricted", "au-weak", "au-unknown"}),
    ("stale source", {"au-stale", "au-expired", "au-contra"}),
    ("forbidden source", {"au-restricted"}),
    ("insufficient authority", {"au-weak"}),
    ("unknown source", {"au-unknown"}),
    ("access undecided", set()),
])
def test_the_authority_filter_keeps_the_matching_answers_and_counts_them(register, authority, expected):
    frame, total = responses_page(register, Filters(), authority=authority, limit=100)
    assert set(frame["response_id"]) == expected and total == len(expected)
    searched, found = responses_page(register, Filters(), authority=authority, search="claim of au-", limit=100)
    assert set(searched["response_id"]) == expected and found == len(expected)


def test_an_unknown_authority_filter_is_refused(register):
    with pytest.raises(ValueError, match="not one of"):
        responses_page(register, Filters(), authority="'; DROP TABLE claims; --")
    assert set(AUTHORITY_FILTERS) >= {"any finding", "proposed label", "stale source"}


def test_the_detail_shows_each_claims_checks_with_their_reasons(register):
    claims = response_detail(register, "au-stale")["claims"]
    row = claims.iloc[0]
    assert row["authority"] == "stale source, proposed OUTDATED" and row["proposals"] == ["OUTDATED"]
    assert (row["allowed"], row["current"], row["authoritative"]) == (True, False, True)
    assert row["current_reason"] == "superseded by src-ok" and list(row["labels"]) == ["SUPPORTED"]


def test_the_overview_counts_supported_claims_on_stale_or_unauthoritative_sources(register):
    result = authority_overview(register, Filters())
    assert result["supported_sourced"] == 6  # au-contra is CONTRADICTED
    assert result["flagged"] == 4 and result["responses"] == 4  # stale x2, forbidden, insufficient
    counts = dict(zip(result["by_problem"]["problem"], result["by_problem"]["claims"], strict=True))
    assert counts["stale source"] == 2 and counts["unknown source"] == 1 and counts["access undecided"] == 0
    assert authority_overview(register, Filters(use_cases=("elsewhere",)))["supported_sourced"] == 0


def test_failed_checks_send_the_answer_to_review_unknown_sources_do_not(register):
    queue, size = review_queue(register, Filters())
    why = dict(zip(queue["response_id"], queue["why"], strict=True))
    # au-contra (CONTRADICTED, criticality 2) is queued by Table IV's review floor of a new register's version 1,
    # not by its source: an unknown or failed source alone does not send it
    assert set(why) == {"au-stale", "au-expired", "au-restricted", "au-weak", "au-contra"} and size == 5
    assert "authority" not in why["au-contra"], why["au-contra"]
    assert why["au-stale"] == "authority: c1: stale source, proposed OUTDATED"
    assert queue_stats(register)["size"] == 5 and kpis(register, Filters())["queue_size"] == 5
    record_decision(register, REVIEWER, "au-stale", 1, "release_with_caution", "the new policy says the same")
    assert "au-stale" not in set(review_queue(register, Filters())[0]["response_id"])
    assert queue_stats(register)["size"] == 4


def test_the_queue_page_and_its_size_find_the_answers_to_review_once(register, monkeypatch):
    """The page and the queue's size share one listing of the claims on sources that can fail a check (it was run
    twice: seconds each with a dated source cited by millions of claims); a page past the end still gives the size."""
    from tests.helpers.statements import recorded_statements

    with recorded_statements(monkeypatch) as statements:
        queue, size = review_queue(register, Filters(), limit=2)
    # 5: the four failed sources and au-contra's review floor (CONTRADICTED, criticality 2)
    assert len(queue) == 2 and size == 5 == queue_stats(register)["size"]
    assert len([sql for sql in statements if "FROM claims c WHERE" in sql]) == 1
    past, size = review_queue(register, Filters(), limit=2, offset=10)
    assert past.empty and size == 5 and list(past.columns) == list(queue.columns)


def test_a_dated_source_sends_to_review_only_once_an_answer_is_past_it_and_no_claim_is_read_for_it(
        store, tmp_path, monkeypatch):
    """With a dated source cited but every answer citing it given before its date, the queue takes none and nothing
    is listed for it (the checks counted from the claims' counts say none fails); an answer after the date is
    taken at once -- under a use-case filter only where that use case's claims fail -- its key read from the
    sources' answers (``claim_source_answers``), never from the claims."""
    import json

    from register import SYSTEM
    from register.governance.registers import add_row
    from register.ingest.importer import import_path
    from register.scoring.authority import flagged_counted
    from register.scoring.authority_rules import save_use_cases
    from tests.helpers.authority import SOURCES
    from tests.helpers.statements import recorded_statements

    add_row(store, SYSTEM, "sources", next(s for s in SOURCES if s["source_id"] == "src-expiring"))
    save_use_cases(store, SYSTEM, [{"use_case": "helpdesk", "requester_roles": ["viewer"]}], "requesters")

    def answer(rid: str, when: str, use_case: str) -> None:
        path = tmp_path / f"{rid}.jsonl"
        path.write_text(json.dumps({"response_id": rid, "use_case": use_case, "created_at": when, "question": "Q?",
                                    "answer": "A.", "claims": [{"claim_id": "c1", "text": "the notice period",
                                                                "labels": ["SUPPORTED"], "criticality": 2,
                                                                "source_id": "src-expiring"}]}) + "\n",
                        encoding="utf-8")
        import_path(store, SYSTEM, path)

    def listed(f: Filters) -> tuple[int, bool]:
        with recorded_statements(monkeypatch) as statements:
            size = kpis(store, f)["queue_size"]
        assert not any("FROM claims c" in sql for sql in statements), "a timed answer's claims are never read"
        return size, any("FROM claim_source_answers a" in sql for sql in statements)

    answer("before", "2026-03-31T23:59:59Z", "helpdesk")  # valid until 2026-03-31, inclusive
    assert listed(Filters()) == (0, False) and queue_stats(store)["size"] == 0
    answer("after", "2026-04-01T00:00:00Z", "hr")
    assert flagged_counted(store, utc_now()) == 1 and flagged_counted(store, utc_now(), use_cases=("helpdesk",)) == 0
    assert listed(Filters()) == (1, True)
    assert listed(Filters(use_cases=("helpdesk",))) == (0, False)
    assert listed(Filters(use_cases=("hr",))) == (1, True)
    assert list(review_queue(store, Filters())[0]["response_id"]) == ["after"]


def _listed_overview(store, f: Filters) -> dict:
    """The overview's figures counted from the listed per-claim checks (the reference for the counted ones)."""
    from register.console.queries.filters import filtered_scores
    from register.db.sql import Params
    from register.scoring.authority import claim_checks

    p = Params()
    keys = {k for (k,) in store.query(f"SELECT response_key FROM ({filtered_scores(store, f, p)})", p.values)}
    checks = claim_checks(store)
    checks = checks[checks["response_key"].isin(keys) & checks["supported"]]
    problems = checks["problems"].explode().dropna().value_counts()
    return {"supported_sourced": len(checks), "flagged": int(checks["to_review"].sum()),
            "responses": checks.loc[checks["to_review"], "response_key"].nunique(),
            "by_problem": {k: int(v) for k, v in problems.items()}}


def _assert_review_keys_are_the_listed_ones(store) -> None:
    """The answers the queue takes for their sources (``review_keys_select``: failing groups of the counts, their
    answers read from ``claim_source_answers``) are those the checks listed claim by claim send to review, under no
    filter and under each use case."""
    from register.db.sql import Params
    from register.scoring.authority import claim_checks, review_keys_select

    checks = claim_checks(store)
    failing = checks[checks["to_review"].fillna(False).astype(bool)]
    for use_cases in ((), ("helpdesk",), ("hr", "legal")):
        p = Params()
        select = review_keys_select(store, p, use_cases=use_cases)
        keys = {k for (k,) in store.query(f"SELECT response_key FROM ({select})", p.values)}
        expected = set(failing["response_key"] if not use_cases
                       else failing.loc[failing["use_case"].isin(use_cases), "response_key"])
        assert keys == expected, use_cases


@pytest.mark.parametrize(("seed", "dated", "untimed"),
                         [(1, True, True), (2, True, True), (3, True, True), (1, False, True), (2, True, False),
                          (4, True, False)])
def test_the_counted_overview_equals_the_checks_listed_claim_by_claim(store, tmp_path, monkeypatch, seed, dated,
                                                                      untimed):
    """Counting the checks over their distinct inputs (source, category, labels, use case, and the answer's time
    for a dated source) gives the same figures as listing every claim's checks, under filters too. When the counts
    stand for every current answer, no claim is joined to the answers unless a dated source is cited by an answer
    without a creation time (``untimed``: some answers have none and are checked at their score's as-of time):
    the restricted source's use case and the dated source's answer day come from the counts too."""
    import json
    import random
    from datetime import UTC, datetime

    from register import SYSTEM
    from register.governance.registers import add_row
    from register.ingest.importer import import_path
    from register.scoring.authority import flagged_counted
    from register.scoring.authority_rules import save_use_cases
    from register.scoring.profiles import activate, active_profile, create_draft, get_profile
    from register.scoring.scorer import rescore
    from tests.helpers.authority import SOURCES
    from tests.helpers.statements import recorded_statements

    rng = random.Random(seed)
    for source in SOURCES:
        add_row(store, SYSTEM, "sources", source if dated else {k: v for k, v in source.items() if k != "valid_until"})
    save_use_cases(store, SYSTEM, [{"use_case": "helpdesk", "requester_roles": ["viewer"]}], "requesters")
    source_ids = [s["source_id"] for s in SOURCES] + ["src-missing", None]
    labels = [["SUPPORTED"], ["SUPPORTED", "OUTDATED"], ["SUPPORTED", "ACCESS_GAP"], ["CONTRADICTED"],
              ["UNSUPPORTED"]]
    records = []
    for i in range(60):
        claims = [{"claim_id": f"c{j}", "text": f"claim {j} of r{i}", "labels": rng.choice(labels), "criticality": 2,
                   "source_id": rng.choice(source_ids), "category": rng.choice([None, "legal", "medical"])}
                  for j in range(rng.randint(1, 4))]
        record = {"response_id": f"r{i}", "use_case": rng.choice(["helpdesk", "hr", "legal"]),
                  "model": rng.choice(["m1", "m2"]), "question": "Q?", "answer": "A.",
                  "claims": [{k: v for k, v in c.items() if v is not None} for c in claims]}
        # either side of src-expiring's bound (valid until 2026-03-31, inclusive), in UTC and in another offset
        when = rng.choice(["2026-03-30T10:00:00Z", "2026-03-31T23:59:59Z", "2026-04-01T00:00:00Z",
                           "2026-03-31T21:30:00-03:00", "2026-04-01T01:30:00+02:00", *([None] if untimed else [])])
        if when:
            record["created_at"] = when
        records.append(record)
    if untimed:  # at least one answer without a creation time cites the dated source
        records[0].pop("created_at", None)
        records[0]["claims"].append({"claim_id": "cx", "text": "on the expiring source", "labels": ["SUPPORTED"],
                                     "criticality": 2, "source_id": "src-expiring"})
    path = tmp_path / "random.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    import_path(store, SYSTEM, path)
    # scored before src-expiring's valid-until date: an answer without a creation time is judged at its score's
    # as-of time (not expired), not now (expired)
    rescore(store, SYSTEM, active_profile(store), as_of=datetime(2026, 3, 1, tzinfo=UTC))
    # no filter, use cases and models (read from the counts), and filters the counts cannot stand for
    for f in (Filters(), Filters(use_cases=("helpdesk",)), Filters(models=("m2",)), Filters(profile_version=1),
              Filters(bands=("Low",)), Filters(use_cases=("helpdesk", "legal"), models=("m1",)),
              Filters(use_cases=("hr",), bands=("Low", "Medium"))):
        with recorded_statements(monkeypatch) as statements:
            counted = authority_overview(store, f)
        joined = [sql for sql in statements if "FROM claims c JOIN" in sql]
        # the answers with a failed check read their times from the filtered set, not the responses and scores
        assert not [sql for sql in statements if "JOIN responses r" in sql], f
        # the counts stand for every current answer under no filter, use cases, models and version 1 (the only
        # version yet, over every answer), not under a band
        if not f.bands:
            assert bool(joined) == (dated and untimed), f
        elif dated:
            assert joined, f
        listed = _listed_overview(store, f)
        if not f.bands and not f.models and f.profile_version is None:  # every current answer of its use cases
            assert flagged_counted(store, utc_now(), use_cases=f.use_cases) == listed["flagged"], f
        by_problem = {k: v for k, v in zip(counted["by_problem"]["problem"], counted["by_problem"]["claims"],
                                           strict=True) if v}
        assert (counted["supported_sourced"], counted["flagged"], counted["responses"], by_problem) == \
            (listed["supported_sourced"], listed["flagged"], listed["responses"], listed["by_problem"]), f
    assert _listed_overview(store, Filters())["flagged"] > 0  # the data exercise the failing checks
    _assert_review_keys_are_the_listed_ones(store)
    # an older profile version over every current answer is the same set (the counts stand in); with a band chosen
    # under it, or once an answer has no score under it, it is not
    second = create_draft(store, SYSTEM, {"bands": [{"name": "Low", "upper": 5, "action": "release"},
                                                    {"name": "Medium", "upper": 50, "action": "caution"},
                                                    {"name": "High", "upper": 75, "action": "review"},
                                                    {"name": "Critical", "upper": 100, "action": "block"}]})
    activate(store, SYSTEM, second, "test: a second version")
    rescore(store, SYSTEM, get_profile(store, second), as_of=datetime(2026, 3, 1, tzinfo=UTC))
    late = [{**r, "response_id": f"late{i}"} for i, r in enumerate(records[:15])]
    for f in (Filters(profile_version=1), Filters(profile_version=1, bands=("Low",)),
              Filters(profile_version=1, use_cases=("helpdesk",)), "import", Filters(profile_version=1),
              Filters(profile_version=second), Filters(profile_version=1, models=("m1",))):
        if f == "import":  # newer than version 1's run: scored under the second version only
            path.write_text("".join(json.dumps(r) + "\n" for r in late), encoding="utf-8")
            import_path(store, SYSTEM, path)
            assert not covers_every_current(store, 1)
            continue
        counted, listed = authority_overview(store, f), _listed_overview(store, f)
        by_problem = {k: v for k, v in zip(counted["by_problem"]["problem"], counted["by_problem"]["claims"],
                                           strict=True) if v}
        assert (counted["supported_sourced"], counted["flagged"], counted["responses"], by_problem) == \
            (listed["supported_sourced"], listed["flagged"], listed["responses"], listed["by_problem"]), f
    # Filters() over every current response counts the claims on undated, unrestricted sources without joining the
    # responses; once some current responses are not scored (not in the view) they must be left out again
    unscored = [{**r, "response_id": f"u{i}"} for i, r in enumerate(records[:20])]
    path.write_text("".join(json.dumps(r) + "\n" for r in unscored), encoding="utf-8")
    import_path(store, SYSTEM, path, score=False)
    for f in (Filters(), Filters(use_cases=("helpdesk",))):
        counted, listed = authority_overview(store, f), _listed_overview(store, f)
        assert (counted["supported_sourced"], counted["flagged"]) == (listed["supported_sourced"],
                                                                      listed["flagged"]), f
    _assert_review_keys_are_the_listed_ones(store)
    # revisions: a third of the answers again with other labels, sources and times (their old claims' answers go)
    revised = [{**r, "created_at": rng.choice(["2026-03-30T10:00:00Z", "2026-04-02T08:00:00Z"]),
                "claims": [{**c, "labels": rng.choice(labels), "source_id": rng.choice(source_ids[:-1])}
                           for c in r["claims"]]} for r in records[::3]]
    path.write_text("".join(json.dumps(r) + "\n" for r in revised), encoding="utf-8")
    import_path(store, SYSTEM, path)
    assert store.scalar("SELECT count(*) FROM responses WHERE revision > 1") > 0
    _assert_review_keys_are_the_listed_ones(store)


def test_the_queue_reads_no_claim_until_a_source_that_can_fail_is_cited_and_sees_the_first_at_once(store, tmp_path):
    """The review keys skip the scan of every claim while no cited source can fail a check (the sources cited are
    kept per database and read again when a claim is added): a new answer on a stale source, and a cited source
    superseded, each reach the queue at once."""
    import json

    from register import SYSTEM
    from register.db.sql import Params
    from register.governance.registers import add_row
    from register.ingest.importer import import_path
    from register.scoring.authority import review_keys_select
    from tests.helpers.authority import RECORDS, SOURCES
    from tests.register.scoring.test_authority import supersede

    def queued() -> set[str]:
        return set(review_queue(store, Filters(), limit=100)[0]["response_id"])

    def load(name: str, records) -> None:
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        import_path(store, SYSTEM, path)

    for source in SOURCES:  # src-old (superseded), src-expiring, src-legal-only and src-blog can fail a check
        add_row(store, SYSTEM, "sources", source)
    by_id = {r["response_id"]: r for r in RECORDS}
    load("ok.jsonl", [by_id["au-ok"]])  # cites src-ok only
    assert "claims" not in review_keys_select(store, Params())
    assert queued() == set() and kpis(store, Filters())["queue_size"] == 0

    load("stale.jsonl", [by_id["au-stale"]])  # the first claim on a source that can fail
    assert "claims" in review_keys_select(store, Params())
    assert queued() == {"au-stale"} and kpis(store, Filters())["queue_size"] == 1

    supersede(store, "src-ok", "src-old")  # the source cited since the start can fail now
    assert queued() == {"au-stale", "au-ok"} and queue_stats(store)["size"] == 2
