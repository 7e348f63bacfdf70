"""``ui.features.intake``'s pure helpers: which grid rows the user asked to re-import or discard, and the report
table."""

from __future__ import annotations

import pandas as pd

from register.ingest.reports import BatchReport, ImportReport
from ui.features.intake import DISCARD, REIMPORT, GridAction, grid_actions, reasons_text, report_frame


def _grid() -> pd.DataFrame:
    return pd.DataFrame([{"quarantine_id": qid, "action": None, "discard_reason": "", "raw": f"raw {qid}"}
                         for qid in (11, 12, 13)])


def test_only_rows_given_an_action_are_acted_on_with_their_edited_text():
    state = {"edited_rows": {"2": {"action": DISCARD, "discard_reason": "a duplicate"},
                             0: {"raw": '{"response_id": "x"}', "action": REIMPORT},
                             1: {"raw": "edited but no action"}}}
    assert grid_actions(_grid(), state) == [GridAction(11, REIMPORT, '{"response_id": "x"}', ""),
                                            GridAction(13, DISCARD, "raw 13", "a duplicate")]


def test_an_action_cleared_again_or_no_edit_at_all_does_nothing():
    assert grid_actions(_grid(), {"edited_rows": {0: {"action": None}}}) == []
    assert grid_actions(_grid(), {}) == []


def test_the_report_table_and_reasons_use_the_cli_words():
    report = ImportReport(batches=[BatchReport(7, "a.jsonl", "jsonl", records=5, accepted=3, new_responses=2,
                                               new_revisions=1, quarantined=2, resolved=1)])
    row = report_frame(report).iloc[0].to_dict()
    assert (row["batch"], row["file"], row["new"], row["revised"], row["quarantined"]) == (7, "a.jsonl", 2, 1, 2)
    assert reasons_text([{"field": "claims[0].labels", "message": "unknown"}, {"field": "", "message": "bad"}]) == \
        "claims[0].labels: unknown; bad"
