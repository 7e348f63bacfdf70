"""The benchmarks' statement timer: each statement counted once, in the step its text names; nothing left patched."""

from __future__ import annotations

import sys
from pathlib import Path

from register.db.store import Cursor

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from statement_times import StatementTimes  # noqa: E402


def test_every_way_of_running_a_statement_is_counted_once_in_its_step(store):
    times = StatementTimes([("profiles", ("scoring_profiles",)), ("sources", ("FROM sources",))])
    with times.timing():
        store.query("SELECT count(*) FROM scoring_profiles")  # _run, then a fetch
        store.scalar("SELECT count(*) FROM scoring_profiles WHERE profile_version > ?", [0])
        with store.cursor() as cur:
            cur.arrow("SELECT source_id FROM sources")  # arrow fetches by itself
            cur.execute("SELECT 42")
    steps = {step.name: step for step in times.rows()}
    assert steps["profiles"].statements == 2
    assert steps["sources"].statements == 1
    assert steps["other SQL"].statements >= 1  # SELECT 42 (and the cursor's own SET TimeZone, a _raw call, is not)
    assert list(steps)[-1] == "Python (outside SQL)"
    assert all(step.wall > 0 for name, step in steps.items() if name != "Python (outside SQL)")


def test_the_cursor_is_as_it_was_after_the_block_even_when_it_fails(store):
    before = (Cursor._run, Cursor._fetch, Cursor.arrow)
    times = StatementTimes([])
    try:
        with times.timing():
            store.query("SELECT 1")
            raise RuntimeError("stopped")
    except RuntimeError:
        pass
    assert (Cursor._run, Cursor._fetch, Cursor.arrow) == before
    assert not hasattr(Cursor, "_step_of")
    assert times.rows()[0].statements == 1  # counted before it stopped
