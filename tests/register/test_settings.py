"""Settings declared once (``register.settings``): types, defaults, errors naming the variable, the table in
docs/configuration.md, and that nothing else reads ``HRI_*`` variables from the environment."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from register import SYSTEM
from register.ingest.importer import import_path
from register.settings import InvalidSetting, Settings, declared, settings
from tests.helpers.paths import REPO_ROOT

ROOT = REPO_ROOT


def _settings_table() -> dict[str, tuple[str, str]]:
    """The Settings table of docs/configuration.md: variable -> (default, meaning)."""
    section = ROOT.joinpath("docs", "configuration.md").read_text().split("## Settings", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([^`]+)` \| (.+?) \| (.+?) \|$", section, re.MULTILINE)
    assert rows, "no Settings table in docs/configuration.md"
    return {name: (default, meaning) for name, default, meaning in rows}


def test_every_declared_setting_is_in_the_settings_table_and_nothing_else():
    table = _settings_table()
    assert set(table) == set(declared())
    assert len(declared()) == len(Settings.model_fields)
    assert {"HRI_DB", "HRI_PORT", "HRI_DEMO_SYNTHETIC", "HRI_ACTOR", "HRI_SESSION_MINUTES", "HRI_DEMO_MODE",
            "HRI_ROLES_FILE", "HRI_IMPORT_MAX_MB", "HRI_DEBUG"} <= set(declared())


def test_the_settings_table_states_the_declared_meaning():
    table = _settings_table()
    assert {name: table[name][1] for name in declared()} == declared()


def test_defaults(clean_environment, monkeypatch):
    monkeypatch.delenv("HRI_DB")  # tests/conftest.py points it at the test's temp folder
    current = settings()
    assert current.db == Path("var/hri.duckdb") and current.port == 8501 and current.demo_synthetic == 2000
    assert current.actor is None and current.session_minutes == 30 and current.demo_mode is False
    assert current.roles_file == ROOT / "config" / "roles.toml"
    assert current.import_max_mb == 500 and current.debug is False


@pytest.fixture
def clean_environment(monkeypatch):
    """No HRI_* variable but the test database's (tests/conftest.py)."""
    for name in list(os.environ):
        if name.upper().startswith("HRI_") and name != "HRI_DB":
            monkeypatch.delenv(name)


def test_settings_are_read_fresh_from_the_environment(clean_environment, monkeypatch):
    assert settings().session_minutes == 30
    monkeypatch.setenv("HRI_SESSION_MINUTES", "5")
    monkeypatch.setenv("HRI_DEMO_MODE", "1")
    assert (settings().session_minutes, settings().demo_mode) == (5.0, True)
    monkeypatch.delenv("HRI_SESSION_MINUTES")
    assert settings().session_minutes == 30


def test_an_empty_variable_counts_as_unset(clean_environment, monkeypatch):
    monkeypatch.setenv("HRI_ACTOR", "")
    monkeypatch.setenv("HRI_PORT", "")
    assert settings().actor is None and settings().port == 8501


@pytest.mark.parametrize(("name", "value"), [
    ("HRI_SESSION_MINUTES", "abc"), ("HRI_SESSION_MINUTES", "0"), ("HRI_PORT", "http"), ("HRI_PORT", "70000"),
    ("HRI_DEMO_SYNTHETIC", "-1"), ("HRI_DEMO_MODE", "maybe"), ("HRI_IMPORT_MAX_MB", "lots"),
    ("HRI_IMPORT_MAX_MB", "0"), ("HRI_DEBUG", "verbose"),
])
def test_a_bad_value_is_refused_naming_the_variable_and_the_value(clean_environment, monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(InvalidSetting) as raised:
        settings()
    assert str(raised.value).startswith(f"{name}={value!r} is not valid: ")
    assert raised.value.title == "Invalid setting"


def test_every_bad_variable_is_named_at_once(clean_environment, monkeypatch):
    monkeypatch.setenv("HRI_SESSION_MINUTES", "abc")
    monkeypatch.setenv("HRI_PORT", "http")
    with pytest.raises(InvalidSetting, match=r"HRI_PORT='http'.*; HRI_SESSION_MINUTES='abc'"):
        settings()


def test_the_importer_reads_its_limit_from_the_settings(store, monkeypatch, tmp_path):
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"response_id": "r-1", "claims": []}) + "\n")
    monkeypatch.setenv("HRI_IMPORT_MAX_MB", "lots")
    with pytest.raises(InvalidSetting, match="HRI_IMPORT_MAX_MB='lots'"):
        import_path(store, SYSTEM, path)
    assert store.query_one("SELECT count(*) FROM import_batches")[0] == 0  # refused before anything is written
    monkeypatch.setenv("HRI_IMPORT_MAX_MB", "1")
    assert import_path(store, SYSTEM, path).accepted == 1


# --- the command line --------------------------------------------------------------------------------


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.upper().startswith("HRI_")} | env
    return subprocess.run([sys.executable, "-m", "register", *args], cwd=ROOT, env=full, capture_output=True,
                          text=True, timeout=120, check=False)


def test_cli_prints_the_settings_without_creating_a_database(tmp_path):
    db = tmp_path / "never.duckdb"
    one = _cli("settings", "port", "HRI_DEMO_SYNTHETIC", "actor", env={"HRI_DB": str(db), "HRI_PORT": "9123"})
    assert one.returncode == 0, one.stderr
    assert one.stdout.splitlines() == ["9123", "2000", ""]
    every = _cli("settings", env={"HRI_DB": str(db)})
    assert [line.split("=", 1)[0] for line in every.stdout.splitlines()] == list(declared())
    assert f"HRI_DB={db}  # {declared()['HRI_DB']}" in every.stdout.splitlines()
    assert not db.exists()
    unknown = _cli("settings", "colour", env={"HRI_DB": str(db)})
    assert unknown.returncode == 64 and "colour" in unknown.stderr and "HRI_PORT" in unknown.stderr


def test_cli_refuses_a_bad_value_once_naming_it(tmp_path):
    proc = _cli("status", env={"HRI_DB": str(tmp_path / "x.duckdb"), "HRI_SESSION_MINUTES": "abc"})
    assert proc.returncode == 1
    assert proc.stderr.count("Invalid setting: HRI_SESSION_MINUTES='abc' is not valid") == 1
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("debug", ["", "1"])
def test_cli_shows_the_traceback_only_with_hri_debug(tmp_path, debug):
    proc = _cli("import", str(tmp_path / "missing.jsonl"), env={"HRI_DB": str(tmp_path / "x.duckdb"),
                                                                "HRI_DEBUG": debug})
    assert proc.returncode == 1
    assert proc.stderr.count(f"File refused: {tmp_path / 'missing.jsonl'}: no such file") == 1
    assert ("Traceback (most recent call last)" in proc.stderr) is (debug == "1")


def test_cli_actor_comes_from_hri_actor(tmp_path):
    db = str(tmp_path / "a.duckdb")
    assert _cli("init", env={"HRI_DB": db, "HRI_ACTOR": "ci-bot"}).returncode == 0
    from register import Store

    store = Store(db)
    try:
        actors = {a for (a,) in store.query("SELECT DISTINCT actor_name FROM audit_events")}
    finally:
        store.close()
    assert actors == {"ci-bot"}


# --- nothing else reads HRI_* variables; hri_core reads no settings ------------------------------------


SOURCES = [p for folder in ("register", "ui", "pages", "hri_core") for p in sorted((ROOT / folder).rglob("*.py"))]


def _reads_environment(path: Path) -> list[int]:
    """Lines where ``path`` reads the process environment (os.environ / os.getenv / environ[...])."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if ((isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb"))
                or (isinstance(node, ast.Name) and node.id in ("environ", "getenv"))):
            lines.append(node.lineno)
    return lines


def test_only_register_settings_reads_the_environment():
    readers = {str(p.relative_to(ROOT)): _reads_environment(p) for p in [*SOURCES, ROOT / "app.py"]}
    assert {name for name, lines in readers.items() if lines} == {"register/settings.py"}


def test_the_probe_sees_an_environment_read(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import os\nvalue = os.environ.get('HRI_DB')\n")
    assert _reads_environment(probe) == [2]


def test_hri_core_does_not_load_the_settings():
    code = "import json, sys, hri_core, hri_core.cli; print(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    modules = set(json.loads(proc.stdout))
    assert "hri_core.cli" in modules
    assert not {m for m in modules if m.split(".")[0] in ("register", "pydantic_settings")}


def test_the_memory_limit_bounds_duckdb_and_a_malformed_one_is_refused(clean_environment, monkeypatch, tmp_path):
    """Issue 14: DuckDB's buffers are bounded by HRI_MEMORY_LIMIT (default 4GB, not 80% of the machine)."""
    from register import Store

    def limit(name: str) -> str:
        store = Store(tmp_path / name)
        try:
            return store.query_one("SELECT current_setting('memory_limit')")[0]
        finally:
            store.close()

    assert settings().memory_limit == "4GB"
    assert limit("default.duckdb") == "3.7 GiB"  # DuckDB prints 4 GB (10^9) in GiB
    monkeypatch.setenv("HRI_MEMORY_LIMIT", "512MiB")
    assert limit("small.duckdb") == "512.0 MiB"
    monkeypatch.setenv("HRI_MEMORY_LIMIT", "4GB'; SET threads = 1; --")
    with pytest.raises(InvalidSetting, match="HRI_MEMORY_LIMIT"):
        Store(tmp_path / "refused.duckdb")


def test_the_console_opens_its_database_under_its_own_memory_limit(clean_environment, monkeypatch, tmp_path):
    """The console's one process serves every user: its DuckDB buffers are bounded by HRI_CONSOLE_MEMORY_LIMIT
    (default 600MB: under 1 GB resident at 10M answers), the command line's by HRI_MEMORY_LIMIT."""
    from register import Store
    from ui.framework import data

    monkeypatch.setenv("HRI_DB", str(tmp_path / "console.duckdb"))
    monkeypatch.setenv("HRI_MEMORY_LIMIT", "2GB")
    data.get_store.clear()
    try:
        store = data.get_store()
        assert store.query_one("SELECT current_setting('memory_limit')")[0] == "572.2 MiB"  # 600 MB in MiB
        store.close()
        data.get_store.clear()
        monkeypatch.setenv("HRI_CONSOLE_MEMORY_LIMIT", "256MiB")
        store = data.get_store()
        assert store.query_one("SELECT current_setting('memory_limit')")[0] == "256.0 MiB"
        store.close()
    finally:
        data.get_store.clear()
    cli = Store(tmp_path / "cli.duckdb")
    assert cli.query_one("SELECT current_setting('memory_limit')")[0] == "1.8 GiB"  # 2 GB
    cli.close()
    monkeypatch.setenv("HRI_CONSOLE_MEMORY_LIMIT", "1GB; SET threads = 1")
    with pytest.raises(InvalidSetting, match="HRI_CONSOLE_MEMORY_LIMIT"):
        settings()
    monkeypatch.delenv("HRI_CONSOLE_MEMORY_LIMIT")
    with pytest.raises(ValueError, match="not a memory size"):
        Store(tmp_path / "refused.duckdb", memory_limit="1GB'; --")
