"""What a visitor sees when something fails below the pages: never a traceback, a file path or a process
id, but an incident id whose details are in the server log; Streamlit's own error display is off unless
HRI_DEBUG=1 (AppTest)."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys

import pytest
from streamlit import config as streamlit_config
from streamlit.testing.v1 import AppTest

from tests.helpers.paths import REPO_ROOT

APP = str(REPO_ROOT / "app.py")
INCIDENT = re.compile(r"incident ([0-9A-F]{8})")
SECRET = "/srv/hri-secret/var/hri.duckdb is open in another process (PID 4242)"

ESCAPING_PAGE = f"""
from ui.framework.page import show_error_details

show_error_details()
raise RuntimeError({SECRET!r})  # outside ui.framework.page.run_page: Streamlit's own handler shows it
"""


@pytest.fixture
def production(monkeypatch):
    monkeypatch.delenv("HRI_DEBUG", raising=False)


@pytest.fixture
def locked_database(tmp_path):
    """HRI_DB held read-write by another process, as when a command runs beside the console."""
    from register import Store

    path = os.environ["HRI_DB"]
    Store(path).close()
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time\n"
                               f"c = duckdb.connect({path!r}); print('held', flush=True); time.sleep(120)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        yield path, holder.pid
    finally:
        holder.terminate()
        holder.wait(timeout=20)


def _shown(at: AppTest) -> str:
    kinds = ("text", "markdown", "caption", "code", "error", "warning", "info", "exception", "json", "title")
    parts = [str(getattr(e, "value", "")) for kind in kinds for e in getattr(at, kind)]
    parts += ["\n".join(e.stack_trace) for e in at.exception]
    return "\n".join(parts)


def test_a_locked_database_shows_a_visitor_an_incident_id_not_its_path_or_pid(production, locked_database,
                                                                              caplog):
    path, pid = locked_database
    with caplog.at_level(logging.ERROR, logger="ui.framework.errors"):
        at = AppTest.from_file(APP, default_timeout=60).run()
    shown = _shown(at)
    assert not at.exception, at.exception
    assert len(at.error) == 1 and at.error[0].value.startswith("**Database in use** — the database is not available")
    assert path not in shown and str(pid) not in shown and "PID" not in shown and "duckdb" not in shown.lower()
    incident = INCIDENT.search(at.error[0].value).group(1)
    logged = [r for r in caplog.records if incident in r.getMessage()]
    assert logged and path in str(logged[0].exc_info[1]) and f"PID {pid}" in str(logged[0].exc_info[1])


def test_an_error_that_escapes_run_page_shows_no_detail(production):
    at = AppTest.from_string(ESCAPING_PAGE, default_timeout=30).run()
    assert len(at.exception) == 1
    assert "4242" not in _shown(at) and "/srv" not in _shown(at) and "RuntimeError" not in _shown(at)
    assert at.exception[0].stack_trace == []


def test_hri_debug_shows_the_details_for_development(monkeypatch):
    monkeypatch.setenv("HRI_DEBUG", "1")
    at = AppTest.from_string(ESCAPING_PAGE, default_timeout=30).run()
    assert "4242" in at.exception[0].message and at.exception[0].stack_trace


@pytest.mark.parametrize("debug, shown", [(None, "none"), ("1", "full")])
def test_the_console_sets_streamlits_error_details_on_every_run(seeded_db, monkeypatch, debug, shown):
    if debug is None:
        monkeypatch.delenv("HRI_DEBUG", raising=False)
    else:
        monkeypatch.setenv("HRI_DEBUG", debug)
    streamlit_config.set_option("client.showErrorDetails", "full" if shown == "none" else "none")
    AppTest.from_file(APP, default_timeout=60).run()
    assert streamlit_config.get_option("client.showErrorDetails") == shown
