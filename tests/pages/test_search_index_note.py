"""The Responses page while the search index catches up (issue 36): beside the search box, "Search index as of
<time>, catching up: N revisions to index", escaped; a search finds the answers the index has not reached; once it
has caught up, the line is gone."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from streamlit.testing.v1 import AppTest

from register import SYSTEM
from register.ingest.importer import import_path
from register.readmodels import search_index
from register.readmodels.search_index import IndexLag
from tests.helpers.accounts import login
from tests.helpers.feedback import two_claims
from tests.helpers.paths import REPO_ROOT
from ui.features.search_status import index_note
from ui.framework.text import escape_markdown

NEW_WORD = "zeppelinclause"


def _notes(at) -> list[str]:
    return [caption.value for caption in at.caption if "Search index as of" in caption.value]


def test_the_responses_page_says_how_far_behind_the_index_is_and_search_finds_the_rest(seeded_db, tmp_path):
    path = tmp_path / "late.jsonl"
    path.write_text("".join(json.dumps({**two_claims(f"late-{i}"), "answer": f"The {NEW_WORD} applies."}) + "\n"
                            for i in range(4)), encoding="utf-8")
    assert import_path(seeded_db, SYSTEM, path, defer_index=True).search_index == "deferred"
    lag = search_index.lag(seeded_db)
    assert lag is not None and lag.pending == 4

    at = AppTest.from_file(str(REPO_ROOT / "app.py"), default_timeout=60)
    login(at, "viewer")
    at.run()
    at.switch_page("pages/responses.py").run()
    assert not at.exception, at.exception
    assert _notes(at) == [index_note(lag)]
    assert escape_markdown(f"as of {lag.since:%Y-%m-%d %H:%M} UTC, catching up: 4 revisions to index") in _notes(at)[0]

    at.text_input(key="responses_search").set_value(NEW_WORD).run()  # exact meanwhile: the four are scanned
    assert not at.exception, at.exception
    assert sorted(at.dataframe[0].value["response_id"]) == [f"late-{i}" for i in range(4)]

    assert search_index.catch_up(seeded_db, SYSTEM) == 4
    at.text_input(key="responses_search").set_value(f" {NEW_WORD} ").run()
    assert not at.exception, at.exception
    assert _notes(at) == []
    assert sorted(at.dataframe[0].value["response_id"]) == [f"late-{i}" for i in range(4)]


def test_the_note_is_escaped_and_counts_in_words():
    since = datetime(2026, 12, 5, 17, 2, tzinfo=UTC)
    assert index_note(None) is None
    one = index_note(IndexLag(1, since, 10))
    assert one is not None and one.startswith(escape_markdown("Search index as of 2026-12-05 17:02 UTC, catching up: "
                                                              "1 revision to index."))
    many = index_note(IndexLag(12345, since, 10))
    assert many is not None and escape_markdown("12,345 revisions to index.") in many
    assert "\\(read directly meanwhile" in many  # markdown characters escaped


def test_the_console_starts_one_catch_up_and_its_uploads_leave_the_index_to_it(seeded_db, monkeypatch):
    import threading

    import streamlit as st

    from tests.helpers.accounts import open_page
    from ui.features.search_status import ensure_search_indexer

    monkeypatch.setenv("HRI_SEARCH_INDEX_POLL_SECONDS", "3600")  # woken by the writes, not by the clock
    monkeypatch.setenv("HRI_INBOX_POLL_SECONDS", "0")
    at = open_page("pages/intake.py", "annotator", timeout=120)
    open_page("pages/responses.py", "viewer")  # a second session of the same process
    indexer = ensure_search_indexer()
    assert indexer is not None and indexer.running
    assert [t for t in threading.enumerate() if t.name.startswith("hri-search-index:")] == [indexer._thread]
    content = "".join(json.dumps({**two_claims(f"up-{i}"), "answer": f"The {NEW_WORD} holds."}) + "\n"
                      for i in range(3)).encode()
    at.file_uploader(key="intake_upload").set_value(("late.jsonl", content, "application/octet-stream"))
    at.run()
    at.button(key="intake_import").click().run()
    assert not at.exception, at.exception
    assert at.session_state["intake_report"]["search_index"] == "deferred"
    assert any("search index catches up in the background" in c.value for c in at.caption)
    assert indexer.wait_caught_up(60) and search_index.lag(seeded_db) is None
    st.cache_resource.clear()  # the resource released (server shutdown, cache cleared): the thread ends
    assert not indexer.running
