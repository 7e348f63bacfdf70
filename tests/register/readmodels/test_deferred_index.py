"""The search index off the import's path (issue 36): an import with ``defer_index=True`` stores and scores and
leaves the index's mark where it was; the catch-up (``search_index.catch_up``, in slices of keys, each its own
transaction) reaches the head later; search is exact meanwhile -- the same results before and after the catch-up,
a text only the deferred import holds included -- and ``search_index.lag`` says how far behind the index is. The
default import still indexes before its report."""

from __future__ import annotations

import json
import math
import threading

from register import SYSTEM, Store
from register.console.queries.explorer import responses_page
from register.console.queries.filters import Filters
from register.db.store import Change
from register.ingest.importer import import_path
from register.ingest.reports import DEFERRED, INDEXED
from register.readmodels import response_ids, search_check, search_index
from tests.helpers.feedback import two_claims

# the second file's answers hold a word no answer of the first holds
NEW_WORD = "zeppelinclause"
SEARCHES = ("renewal", "ends in 2027", "2027. renewal", "e", "%", NEW_WORD, f"the {NEW_WORD}", "Tacit",
            "nowhere-at-all")


def _file(tmp_path, name: str, records: list[dict]):
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _first(n: int = 30) -> list[dict]:
    return [two_claims(f"a-{i}") for i in range(n)]


def _second(n: int = 25) -> list[dict]:
    """New answers holding ``NEW_WORD``, a revision of some first ones (tacit renewal), and a 10% answer."""
    records = [{**two_claims(f"b-{i}"), "answer": f"It ends with the {NEW_WORD} in 2027. Renewal is automatic."}
               for i in range(n)]
    records += [{**two_claims(f"a-{i}"), "answer": "It ends in 2027. Renewal is tacit."} for i in range(0, 9, 3)]
    records.append({**two_claims("c-1"), "answer": "A 10% discount ends in 2027."})
    return records


def _search_event_count(store: Store) -> int:
    return int(store.scalar("SELECT count(*) FROM audit_events WHERE action = 'search.indexed'"))


def _results(store: Store) -> dict[str, tuple[int, list[str]]]:
    """Each search's total and matched ids as the Responses page reads them (every match on one page)."""
    out = {}
    for text in SEARCHES:
        frame, total = responses_page(store, Filters(), search=text, limit=1000, sort_by="response_id",
                                      descending=False)
        out[text] = (total, frame["response_id"].tolist())
    return out


def test_a_deferred_import_stores_and_scores_and_leaves_the_mark_behind(store, tmp_path):
    assert import_path(store, SYSTEM, _file(tmp_path, "first", _first())).search_index == INDEXED
    mark = search_index.state(store).indexed_through
    assert mark == response_ids.largest_key(store)
    events = _search_event_count(store)

    report = import_path(store, SYSTEM, _file(tmp_path, "second", _second()), defer_index=True)

    assert report.search_index == DEFERRED and report.as_dict()["search_index"] == "deferred"
    assert (report.new_responses, report.new_revisions, report.quarantined) == (26, 3, 0)
    assert report.batches[0].scored == 29  # stored and scored
    state = search_index.state(store)
    assert (state.indexed_through, state.pending) == (mark, 29)  # the mark where it was
    assert _search_event_count(store) == events  # no slice indexed
    assert store.scalar("SELECT count(*) FROM current_scores") == 56
    assert search_check.check(store) == []  # what the index holds is still exact


def test_the_default_import_still_indexes_before_its_report(store, tmp_path):
    import_path(store, SYSTEM, _file(tmp_path, "first", _first()), defer_index=True)
    report = import_path(store, SYSTEM, _file(tmp_path, "second", _second()))
    assert report.search_index == INDEXED
    state = search_index.state(store)
    # the catch-up takes what the deferred import left too
    assert (state.pending, state.indexed_through) == (0, response_ids.largest_key(store))
    assert search_index.lag(store) is None


def test_lag_says_how_many_revisions_wait_and_since_when(store, tmp_path):
    import_path(store, SYSTEM, _file(tmp_path, "first", _first()))
    assert search_index.lag(store) is None
    import_path(store, SYSTEM, _file(tmp_path, "second", _second()), defer_index=True)
    lag = search_index.lag(store)
    assert lag is not None
    first_new = store.scalar("SELECT min(imported_at) FROM responses WHERE batch_id = (SELECT max(batch_id) "
                             "FROM import_batches)")
    assert (lag.pending, lag.since, lag.indexed_through) == (29, first_new, 30)
    search_index.catch_up(store, SYSTEM)
    assert search_index.lag(store) is None


def test_the_catch_up_reaches_the_head_in_slices_of_their_own(store, tmp_path):
    import_path(store, SYSTEM, _file(tmp_path, "first", _first()))
    low = search_index.state(store).indexed_through
    import_path(store, SYSTEM, _file(tmp_path, "second", _second()), defer_index=True)
    high = response_ids.largest_key(store)
    events = _search_event_count(store)

    assert search_index.catch_up(store, SYSTEM, slice_keys=4) == 29

    assert _search_event_count(store) == events + math.ceil((high - low) / 4)  # one transaction per slice of keys
    marks = [json.loads(after)["indexed_through"] for (after,) in store.query(
        "SELECT after FROM audit_events WHERE action = 'search.indexed' ORDER BY seq")][-math.ceil((high - low) / 4):]
    assert marks == [min(high, low + 4 * k) for k in range(1, len(marks) + 1)]
    assert search_index.state(store).indexed_through == high
    assert search_check.check(store) == []


def test_another_writer_commits_between_two_slices_of_a_catch_up(store, tmp_path):
    import_path(store, SYSTEM, _file(tmp_path, "first", _first()), defer_index=True)
    asked = []

    def other_writer() -> None:  # another thread: the write lock must be free between two slices
        store.write(SYSTEM, "test.between_slices", lambda tx: Change("test", None, None, {"slice": len(asked)}))

    def stopping() -> bool:
        asked.append(1)
        if len(asked) == 2:  # after the first slice has committed
            writer = threading.Thread(target=other_writer)
            writer.start()
            writer.join(30)
            assert not writer.is_alive(), "the other writer waited for the catch-up's lock"
        return False

    assert search_index.catch_up(store, SYSTEM, slice_keys=10, stopping=stopping) == 30
    actions = [a for (a,) in store.query("SELECT action FROM audit_events WHERE action IN "
                                         "('search.indexed', 'test.between_slices') ORDER BY seq")]
    assert actions == ["search.indexed", "test.between_slices", "search.indexed", "search.indexed"]


def test_stopping_ends_the_catch_up_between_slices_with_the_index_exact(store, tmp_path):
    import_path(store, SYSTEM, _file(tmp_path, "first", _first()), defer_index=True)
    calls = []

    def stopping() -> bool:
        calls.append(1)
        return len(calls) > 2  # two slices, then stop

    assert search_index.catch_up(store, SYSTEM, slice_keys=7, stopping=stopping) == 14
    assert search_index.state(store).indexed_through == 14 and search_check.check(store) == []
    assert search_index.catch_up(store, SYSTEM, slice_keys=7) == 16  # the rest, another time


def test_search_finds_the_same_before_and_after_the_catch_up(store, tmp_path):
    import_path(store, SYSTEM, _file(tmp_path, "first", _first()))
    import_path(store, SYSTEM, _file(tmp_path, "second", _second()), defer_index=True)
    assert search_index.state(store).pending == 29

    behind = _results(store)

    search_index.catch_up(store, SYSTEM, slice_keys=8)
    assert search_index.state(store).pending == 0
    assert _results(store) == behind
    # and they are the answers the texts hold: the new word only in the deferred import's answers
    assert behind[NEW_WORD] == (25, sorted(f"b-{i}" for i in range(25)))
    assert behind[f"the {NEW_WORD}"][0] == 25
    assert behind["Tacit"][0] == 3 and behind["%"] == (1, ["c-1"])
    assert behind["renewal"][0] == 56 and behind["nowhere-at-all"] == (0, [])
    current = int(store.scalar("SELECT count(*) FROM current_scores"))
    assert behind["e"][0] == current  # every answer has an e: the bitmap read, over keys above the mark too
