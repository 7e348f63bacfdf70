"""Shared fixtures: every test gets its own temporary DuckDB file; nothing touches the developer's
own database (HRI_DB points into the test's temp folder) nor the audit anchors kept in the user's state folder
(XDG_STATE_HOME points beside it), no HRI_* setting of the developer's shell
leaks into a test, and Streamlit's caches never carry one test's data into the next.

Shared helpers (not fixtures) live in ``tests/helpers``.
"""

from __future__ import annotations

import gc
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import peer_data as _peer_data
from tests.helpers.stores import check_read_models

_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Remember a failed phase on the test item (``_isolated_environment`` keeps a failed test's files)."""
    report = yield
    if report.failed:
        item.stash[_FAILED] = True
    return report


def _empty(folder: Path) -> None:
    """Remove what ``folder`` holds, keeping the folder itself."""
    for entry in folder.iterdir() if folder.is_dir() else ():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


@pytest.fixture(autouse=True)
def _isolated_environment(request, tmp_path):
    """Point the app and the CLIs at a temp database for every test, with no other HRI_* setting
    (HRI_DEMO_MODE, HRI_ACTOR, HRI_ROLES_FILE, ... from the shell would change what a test sees).

    Its own ``MonkeyPatch``, not the test's ``monkeypatch``: a test that calls ``monkeypatch.undo()`` to drop its
    own patches (a stubbed function, say) must not drop these too, or its commands would write audit anchors to the
    user's real state folder, where a later run of the same path finds them."""
    patch = pytest.MonkeyPatch()
    for name in [name for name in os.environ if name.startswith("HRI_")]:
        patch.delenv(name)
    patch.setenv("HRI_DB", str(tmp_path / "hri.duckdb"))
    # the audit trail's default anchor folder (register.db.anchors) lies under the user's state folder: the test's
    # own, beside its temp folder (not inside it, where the databases are: a folder there draws a warning)
    state = tmp_path.with_name(tmp_path.name + "-state")
    patch.setenv("XDG_STATE_HOME", str(state))
    # no background warm-up of the overview (ui.features.warmup): its reads would race what a test counts and closes
    patch.setenv("HRI_CONSOLE_WARMUP", "0")
    # no background catch-up of the search index (register.readmodels.search_catchup): its slices would race what a
    # test counts and closes; the console's imports then index before their report (its tests turn it on)
    patch.setenv("HRI_SEARCH_INDEX_POLL_SECONDS", "0")
    try:
        yield
    finally:
        patch.undo()
    # A whole run copies template databases thousands of times: kept, they would fill a CI disk. A passing test's
    # files go now; its (empty) folder stays, so the next test of the same name gets a new folder, never this one's
    # path (the console's per-path state, its anchors). A failed test's files are kept for inspection.
    if not request.node.stash.get(_FAILED, False):
        _empty(tmp_path)
        shutil.rmtree(state, ignore_errors=True)


@pytest.fixture(autouse=True)
def _clear_streamlit_caches():
    """st.cache_data / st.cache_resource live in the process and survive between AppTest instances: clear
    them around every test that could have filled them (only once Streamlit is imported at all)."""
    _clear_caches()
    yield
    _clear_caches()
    # the app freezes the objects alive at its first run (ui.framework.collector, once per server process); a test
    # process runs the app many times, and what one test froze must not outlive it
    gc.unfreeze()


def _clear_caches() -> None:
    streamlit = sys.modules.get("streamlit")
    if streamlit is not None:
        streamlit.cache_data.clear()
        streamlit.cache_resource.clear()


@pytest.fixture(scope="session")
def database_templates(tmp_path_factory):
    """The session's template databases (``tests.helpers.templates``): ``database_templates.open(name, path)`` is a
    store on a fresh copy of the migrated register or of a demo set, each built once per session (per worker)."""
    from tests.helpers.templates import Templates

    return Templates(tmp_path_factory.mktemp("templates"))


# a test that asks for one of these fixtures gets ``store`` as a copy of the named template (they are ``store``
# loaded with more, and must be the very same register as ``store`` for the fixtures that build on it)
STORE_TEMPLATES = {"demo_store": "demo120",
                   "paper": "demo-defaults",  # tests/register/governance/test_checklist.py
                   "authorization_register": "authorization"}  # tests/register/access/test_authorization.py


@pytest.fixture
def store(tmp_path, request, database_templates):
    """A fresh, migrated register with the default (paper) profile active: a copy of the session's template (of a
    demo set when the test also asks for a fixture of ``STORE_TEMPLATES``). At teardown every read model is checked
    against what it is derived from."""
    template = next((t for name, t in STORE_TEMPLATES.items() if name in request.fixturenames), "migrated")
    s = database_templates.open(template, tmp_path / "register.duckdb")
    yield s
    check_read_models(s, request)
    s.close()


@pytest.fixture
def peer_data():
    """``peer_data(*parts)``: a path into ../shared/peer-data, or skip the test (saying why) when it is
    absent (``tests.helpers.paths.peer_data``)."""
    return _peer_data
