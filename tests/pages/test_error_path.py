"""The console's one error path: ``ui.framework.errors.show_error`` renders every kind of error,
``ui.framework.page.run_page`` runs every page.

Rendered shapes are checked on a tiny page script (AppTest) that raises what the test puts in its
session state; the pages themselves are checked by reading their source (AST).
"""

from __future__ import annotations

import ast
import logging
import re

import pytest
from streamlit.runtime.scriptrunner_utils.exceptions import RerunException, StopException
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData
from streamlit.testing.v1 import AppTest

from hri_core import FieldProblem
from hri_core.errors import ProfileError, RecordError
from register import NotFound
from register.errors import LoginFailed, Problem, ValidationFailed
from tests.helpers.paths import REPO_ROOT
from ui.framework.page import run_page
from ui.framework.text import escape_markdown

RAISING_PAGE = """
import streamlit as st

from ui.framework.page import run_page


def main():
    st.text("before")
    raise st.session_state["error"]


run_page(main)
"""
INCIDENT = re.compile(r"Something went wrong \(incident ([0-9A-F]{8})\)\. .*")


def _run_raising(error: BaseException) -> AppTest:
    at = AppTest.from_string(RAISING_PAGE, default_timeout=30)
    at.session_state["error"] = error
    return at.run()


def _everything_shown(at: AppTest) -> str:
    """Every text the page rendered, whatever the element."""
    kinds = ("text", "markdown", "caption", "code", "error", "warning", "info", "success", "exception", "json")
    return "\n".join(str(getattr(e, "value", "")) for kind in kinds for e in getattr(at, kind))


@pytest.fixture
def production(monkeypatch):
    """The console as users get it: HRI_DEBUG unset (tests/pages/conftest.py sets it for the other page tests)."""
    monkeypatch.delenv("HRI_DEBUG", raising=False)


# --- the shape of each error kind ---------------------------------------------------------------------


def test_register_error_shows_its_title_and_escaped_message(production):
    message = "response '[x](https://evil.example) :red[y]' does not exist"
    at = _run_raising(NotFound(message))
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == [f"**Not found** — {escape_markdown(message)}"]
    assert at.error[0].icon == ":material/error:"
    assert "[x](https" not in at.error[0].value and ":red[" not in at.error[0].value  # neither links nor colours
    assert [t.value for t in at.text] == ["before"]  # the page stops where the error was raised


def test_a_row_the_register_counted_on_shows_what_is_missing(production, store):
    with pytest.raises(NotFound) as raised:  # Store.row: the row a caller counts on is not there
        store.row("SELECT * FROM scoring_profiles WHERE profile_version = ?", [7], what="scoring profile version 7")
    at = _run_raising(raised.value)
    assert not at.exception, at.exception
    assert [(e.value, e.icon) for e in at.error] == [("**Not found** — scoring profile version 7 does not exist",
                                                      ":material/error:")]


def test_hri_error_lists_every_problem_with_its_field(production):
    error = ProfileError([FieldProblem("weights", "must sum to 1, got 1.1"),
                          FieldProblem("bands.0.upper", "must be at most 100")])
    at = _run_raising(error)
    assert [e.value for e in at.error] == [
        "**Invalid scoring profile** — "
        + escape_markdown("weights: must sum to 1, got 1.1; bands.0.upper: must be at most 100")]


def test_hri_error_names_its_record(production):
    at = _run_raising(RecordError([FieldProblem("claims.0.criticality", "must be >= 1")], record="r-7"))
    assert [e.value for e in at.error] == [
        "**Invalid response record** — " + escape_markdown("record r-7: claims.0.criticality: must be >= 1")]


def test_a_failed_login_says_only_one_sentence(production):
    at = _run_raising(LoginFailed())
    assert [(e.value, e.icon) for e in at.error] == [("Invalid username or password", ":material/lock:")]


def test_refused_save_lists_every_row_as_a_table(production):
    problems = [Problem(2, "statement", "required"), Problem(5, "reviewed_on", "not a date: '*x*'")]
    at = _run_raising(ValidationFailed(problems))
    assert [e.value for e in at.error] == ["**Not saved: fix these rows** — 2 problem(s); nothing was saved."]
    rows = at.dataframe[0].value.to_dict("records")
    assert rows == [{"row": 2, "column": "statement", "problem": "required"},
                    {"row": 5, "column": "reviewed_on", "problem": "not a date: '*x*'"}]


# --- unexpected errors: an incident id on the page, the traceback in the server log ----------------------


def test_unexpected_error_shows_only_an_incident_id_and_logs_the_traceback(production, caplog):
    secret = f"{REPO_ROOT / 'register' / 'db' / 'store.py'} leaked a password"
    caplog.set_level(logging.ERROR, logger="ui.framework.errors")
    at = _run_raising(KeyError(secret))
    assert not at.exception, at.exception
    assert len(at.error) == 1
    match = INCIDENT.fullmatch(at.error[0].value)
    assert match, at.error[0].value
    shown = _everything_shown(at)
    for leak in ("leaked a password", str(REPO_ROOT), "store.py", "Traceback", "KeyError", 'File "'):
        assert leak not in shown
    incident = match.group(1)
    records = [r for r in caplog.records if incident in r.getMessage()]
    assert len(records) == 1 and records[0].levelno == logging.ERROR
    assert records[0].exc_info[0] is KeyError
    logged = caplog.text
    assert "Traceback (most recent call last)" in logged and "leaked a password" in logged
    assert 'raise st.session_state["error"]' in logged  # the frame that raised, in full


def test_each_incident_gets_its_own_id(production, caplog):
    caplog.set_level(logging.ERROR, logger="ui.framework.errors")
    ids = {INCIDENT.fullmatch(_run_raising(RuntimeError("boom")).error[0].value).group(1) for _ in range(3)}
    assert len(ids) == 3


def test_debug_mode_logs_the_incident_and_re_raises(monkeypatch, caplog):
    monkeypatch.setenv("HRI_DEBUG", "1")
    caplog.set_level(logging.ERROR, logger="ui.framework.errors")
    at = _run_raising(RuntimeError("boom in development"))
    assert [e.value for e in at.exception] and "boom in development" in at.exception[0].value
    assert not [e for e in at.error if "Something went wrong" in e.value]
    assert any("incident" in r.getMessage() and r.exc_info[0] is RuntimeError for r in caplog.records)


def test_expected_errors_are_shown_even_in_debug_mode(monkeypatch):
    monkeypatch.setenv("HRI_DEBUG", "1")
    at = _run_raising(NotFound("response 'r-1' does not exist"))
    assert not at.exception and len(at.error) == 1 and at.error[0].value.startswith("**Not found** — ")


def test_a_bad_setting_on_a_page_names_the_variable(production, monkeypatch, seeded_db):
    monkeypatch.setenv("HRI_SESSION_MINUTES", "abc")
    at = AppTest.from_file(str(REPO_ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception, at.exception
    assert len(at.error) == 1
    assert at.error[0].value.startswith("**Invalid setting** — ")
    assert escape_markdown("HRI_SESSION_MINUTES='abc'") in at.error[0].value


# --- Streamlit's control flow passes through run_page -------------------------------------------------


def test_st_stop_inside_main_still_stops_the_page(production):
    at = AppTest.from_string("""
import streamlit as st
from ui.framework.page import run_page

def main():
    st.text("before")
    st.stop()
    st.text("after")

run_page(main)
""", default_timeout=30).run()
    assert [t.value for t in at.text] == ["before"]
    assert not at.error and not at.exception


def test_st_rerun_inside_main_still_reruns_the_page(production):
    at = AppTest.from_string("""
import streamlit as st
from ui.framework.page import run_page

def main():
    st.session_state["runs"] = st.session_state.get("runs", 0) + 1
    if st.session_state["runs"] == 1:
        st.rerun()
    st.text(f"run {st.session_state['runs']}")

run_page(main)
""", default_timeout=30).run()
    assert at.session_state["runs"] == 2
    assert [t.value for t in at.text] == ["run 2"]
    assert not at.error and not at.exception


def test_st_switch_page_inside_main_still_switches(production, tmp_path):
    (tmp_path / "pages").mkdir()
    (tmp_path / "home.py").write_text("""
import streamlit as st
from ui.framework.page import run_page

def main():
    if st.button("go", key="go"):
        st.switch_page("pages/other.py")
    st.text("home")

run_page(main)
""")
    (tmp_path / "pages" / "other.py").write_text("import streamlit as st\n\nst.text('other page')\n")
    at = AppTest.from_file(str(tmp_path / "home.py"), default_timeout=30).run()
    at.button(key="go").click().run()
    assert [t.value for t in at.text] == ["other page"]
    assert not at.error and not at.exception


@pytest.mark.parametrize("control", [StopException(), RerunException(RerunData())], ids=["stop", "rerun"])
def test_control_flow_exceptions_propagate_untouched(production, control):
    def main():
        raise control

    with pytest.raises(type(control)) as raised:
        run_page(main)
    assert raised.value is control


# --- every page runs through run_page ---------------------------------------------------------------


PAGES = sorted((REPO_ROOT / "pages").glob("*.py"))


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name]


def test_every_page_of_the_navigation_is_a_file_in_pages():
    listed = set(re.findall(r'st\.Page\("(pages/[a-z_]+\.py)"', (REPO_ROOT / "app.py").read_text()))
    assert listed == {f"pages/{p.name}" for p in PAGES} and len(PAGES) == 27


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_page_runs_its_main_through_run_page(page):
    tree = ast.parse(page.read_text(), filename=str(page))
    imports = {(n.module, a.name) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    assert ("ui.framework.page", "run_page") in imports
    last = tree.body[-1]
    assert isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
    assert ast.unparse(last.value) == "run_page(main)"  # the page's last statement
    assert len(_calls(tree, "run_page")) == 1
    assert _calls(tree, "main") == []  # main is never called directly
    for node in ast.walk(tree):
        if isinstance(node, ast.Try):  # a try around one action is fine; around the page's main it is not
            inside = ast.Module(body=node.body, type_ignores=[])
            assert not _calls(inside, "main") and not _calls(inside, "run_page"), f"{page.name}:{node.lineno}"


# --- the ui package: no import cycle, no function-level imports -------------------------------------------


UI_FILES = sorted((REPO_ROOT / "ui").rglob("*.py"))


def _module(path) -> str:
    """``ui/framework/data.py`` -> ``ui.framework.data``; a package's ``__init__.py`` -> the package."""
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


UI_MODULES = {_module(p) for p in UI_FILES}


def _ui_imports(path) -> set[str]:
    """The ui modules ``path`` imports (``from ui.framework import data`` -> ui.framework.data; ``from .figures``
    in ui/features -> ui.features.figures)."""
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            if module == "ui" or module.startswith("ui."):
                named = {f"{module}.{a.name}" for a in node.names} & UI_MODULES
                found |= named or {module}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("ui.")}
    return found


def test_ui_modules_import_each_other_without_a_cycle():
    graph = {_module(p): _ui_imports(p) for p in UI_FILES}
    # the error helper is usable from every other ui module
    assert graph["ui.framework.errors"] <= {"ui.framework.text"}
    assert graph["ui.framework.text"] == set()

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt}))
                   for nxt in graph.get(start, ()))

    assert [m for m in graph if reaches(m, m, {m})] == []


@pytest.mark.parametrize("path", [*UI_FILES, *PAGES, REPO_ROOT / "app.py"], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_function_level_imports(path):
    tree = ast.parse(path.read_text())
    if path == REPO_ROOT / "ui" / "server.py":
        # the launcher runs before Streamlit's runtime exists: it imports the UI's cached reads on first use, or
        # their caches would bind to a storage other than the one `st.cache_data.clear()` clears
        assert [n.lineno for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                and (n.module or "").startswith("ui.") and n.col_offset == 0] == []
        return
    nested = [f"{path.name}:{inner.lineno}" for node in ast.walk(tree)
              if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
              for inner in ast.walk(node) if isinstance(inner, (ast.Import, ast.ImportFrom))]
    assert nested == []
