"""Real-browser fixtures: a Streamlit server on a free port with its own database, and Chromium."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.helpers.accounts import create_accounts as _create_accounts
from tests.helpers.browser import E2E_PASSWORD, screenshot
from tests.helpers.paths import REPO_ROOT

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _chromium() -> str:
    path = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if path is None:
        pytest.skip("Chromium is not installed (the test command installs Debian's chromium package)")
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


E2E_ACCOUNTS = {"e2e-viewer": "viewer", "e2e-reviewer": "reviewer", "e2e-admin": "admin"}


def _wait_healthy(url: str, proc, log_path: Path, what: str, path: str = "/_stcore/health") -> None:
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(url + path, timeout=2).status == 200:
                return
        except OSError:
            time.sleep(0.3)
    proc.terminate()
    raise RuntimeError(f"{what} did not become healthy: " + log_path.read_text())


def create_accounts(store, accounts: dict[str, str] = E2E_ACCOUNTS, password: str = E2E_PASSWORD) -> None:
    """Local accounts with a known password (the one-time-password step done), before the server starts."""
    _create_accounts(store, accounts, password, label="E2E")


def _e2e_demo(path: Path) -> None:
    """The browser tests' template database: ``python -m register demo --synthetic 200``."""
    _register_cli("--db", str(path), "demo", "--synthetic", "200")


def _e2e_demo_with_accounts(path: Path) -> None:
    """``_e2e_demo`` with the E2E_ACCOUNTS made (each costs a password hash: once per session, not per server)."""
    from register import Store

    _e2e_demo(path)
    with contextlib.closing(Store(path)) as store:
        create_accounts(store)


def _register_cli(*args: str) -> None:
    """``python -m register ARGS`` in this process (the server is the subprocess that matters); its output is
    shown only when it fails."""
    from register.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    if code != 0:
        raise RuntimeError(f"python -m register {' '.join(args)} exited {code}:\n{out.getvalue()}{err.getvalue()}")


def server_environment(env: dict | None = None) -> dict[str, str]:
    """A server's environment: this process's without any HRI_* setting (``tests/conftest.py`` isolates every test
    from the developer's shell the same way), with no background warm-up, plus ``env``."""
    inherited = {name: value for name, value in os.environ.items() if not name.startswith("HRI_")}
    return {**inherited, "HRI_CONSOLE_WARMUP": "0", **(env or {})}


class AppServers:
    """Console servers (``ui/server.py``: app.py and its routes), each on a copy of the browser tests' template
    database in ``folder``."""

    def __init__(self, folder: Path, templates):
        self.folder = folder
        self.templates = templates
        self.procs: list = []

    def start(self, env: dict | None = None, args: tuple = (), imports: tuple = (), port: int | None = None,
              accounts: dict[str, str] = E2E_ACCOUNTS, password: str = E2E_PASSWORD, prepare=None) -> dict:
        """See ``start_app``."""
        n = len(self.procs)
        db = self.folder / f"e2e{n}.duckdb"
        if accounts == E2E_ACCOUNTS and password == E2E_PASSWORD:
            self.templates.copy("e2e-accounts", db, _e2e_demo_with_accounts)
        else:
            self.templates.copy("e2e", db, _e2e_demo)
        for path in imports:
            _register_cli("--db", str(db), "import", str(path))
        from register import Store
        from register.console import review

        with contextlib.closing(Store(db)) as accounts_store:  # first: what ``prepare`` writes, someone writes
            create_accounts(accounts_store, accounts, password)
        if prepare is not None:
            prepare(db)
        seeded = Store(db)  # count independently before the server takes the file (one writer per file)
        expected = {
            "responses": seeded.query_one("SELECT count(*) FROM responses WHERE is_current")[0],
            "high": seeded.query_one("SELECT count(*) FROM scores WHERE is_current AND band = 'High'")[0],
            "queue": review.queue_stats(seeded)["size"],
            "first_by_score": seeded.query_one(
                "SELECT response_id FROM scores WHERE is_current ORDER BY score DESC, response_id LIMIT 1")[0],
            # the demo ships drafts of its own: the next profile a test saves takes this number
            "next_profile_version": seeded.query_one("SELECT max(profile_version) + 1 FROM scoring_profiles")[0],
        }
        seeded.close()
        return {**self.serve(db, env, args, port), "expected": expected}

    def serve(self, db: Path, env: dict | None = None, args: tuple = (), port: int | None = None) -> dict:
        """Serve the console on ``db`` (a file no other process holds) by its launcher ``ui/server.py`` (app.py with
        the server's routes beside it: /api/v1, the session cookie's /auth); returns {"url", "db", "port", "log",
        "stop", "restart"}. ``restart()`` stops this server and serves ``db`` again on a new port (a new dict of these
        keys): in between the test can read the file, which DuckDB lets one process open at a time."""
        n = len(self.procs)
        port = port or _free_port()
        log_path = self.folder / f"streamlit{n}.log"
        log = open(log_path, "w")  # noqa: SIM115 -- the server's log stays open until the server stops
        proc = subprocess.Popen(
            # as `python -m register serve` runs it; Streamlit's own flags (`args`, e.g. --secrets.files) need
            # `streamlit run`, which binds its socket before the launcher sets TCP_NODELAY (ui/server.py)
            [sys.executable, "-m", "ui.server", "--port", str(port), "--address", "127.0.0.1"] if not args else
            [sys.executable, "-m", "streamlit", "run", "ui/server.py", "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
             *args],
            cwd=REPO_ROOT, env=server_environment({"HRI_DB": str(db), **(env or {})}), stdout=log,
            stderr=subprocess.STDOUT)
        self.procs.append((proc, log))
        url = f"http://127.0.0.1:{port}"
        _wait_healthy(url, proc, log_path, "streamlit")

        def stop() -> None:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=20)

        def restart() -> dict:
            stop()
            return self.serve(db, env, args)

        return {"url": url, "db": db, "port": port, "log": log_path, "stop": stop, "restart": restart}

    def stop_all(self) -> None:
        for proc, log in self.procs:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=20)
            log.close()


@pytest.fixture
def start_app(tmp_path, database_templates):
    """``start_app(env=None, args=(), imports=(), port=None, accounts=E2E_ACCOUNTS, password=E2E_PASSWORD,
    prepare=None)``: a copy of the template database (``python -m register demo --synthetic 200``, run once per
    session) plus ``imports`` (by the CLI in this process), the accounts, then ``prepare(db_path)`` for anything else
    a test needs written first, then serve app.py on it with this test's HRI_* settings (e.g. HRI_DEMO_MODE) and
    ``env``; returns {"url", "db", "expected", "port", "log", "stop", "restart"} (``stop()`` frees the database file
    early; ``restart()`` serves it again and returns the new server's keys, see ``AppServers.serve``).
    Stopped at teardown."""
    servers = AppServers(tmp_path, database_templates)

    def start(env: dict | None = None, **kwargs) -> dict:
        # the test's HRI_* settings (its own HRI_DB aside: the server's database is the copy made for it)
        settings = {name: value for name, value in os.environ.items() if name.startswith("HRI_") and name != "HRI_DB"}
        return servers.start(env={**settings, **(env or {})}, **kwargs)

    yield start
    servers.stop_all()


@pytest.fixture
def app_server(start_app):
    """The console on a seeded database with the E2E_ACCOUNTS, for this test alone (it may stop the server to read
    the record: DuckDB lets one process open the file); yields {"url", "db", "expected", "stop", ...}."""
    return start_app()


@pytest.fixture(scope="module")
def shared_app_server(tmp_path_factory, database_templates):
    """``app_server`` shared by the tests of one module (one server start, not one per test), for tests that leave
    the server running and whose writes do not change what the module's other tests read."""
    servers = AppServers(tmp_path_factory.mktemp("shared-app"), database_templates)
    yield servers.start()
    servers.stop_all()


def pytest_collection_modifyitems(items):
    """Each browser-test module's tests on one xdist worker (``--dist loadgroup``): a module's shared server starts
    once."""
    for item in items:
        if item.get_closest_marker("browser") is not None:
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))


@pytest.fixture
def oidc_provider(tmp_path):
    """A local OpenID Connect provider (PyPI ``oidc-provider-mock``) with predefined users; yields its URL."""
    users = [{"sub": "carol", "email": "carol@example.com", "email_verified": True, "name": "Carol Admin"},
             {"sub": "dan", "email": "dan@example.com", "email_verified": True, "name": "Dan Viewer"},
             {"sub": "eve", "email": "eve@elsewhere.invalid", "email_verified": True, "name": "Eve Unknown"}]
    port = _free_port()
    log_path = tmp_path / "oidc.log"
    log = open(log_path, "w")  # noqa: SIM115 -- the provider's log stays open until it stops
    args = [sys.executable, "-m", "oidc_provider_mock", "--port", str(port)]
    for user in users:
        args += ["--user-claims", json.dumps(user)]
    proc = subprocess.Popen(args, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    _wait_healthy(url, proc, log_path, "oidc-provider-mock", "/.well-known/openid-configuration")
    yield url
    proc.terminate()
    proc.wait(timeout=20)
    log.close()


@pytest.fixture
def sso_app_server(start_app, oidc_provider, tmp_path):
    """The console with st.login configured against the local provider (secrets file in tmp_path, never
    in the repository) and a roles file mapping carol -> admin, example.com -> viewer."""
    port = _free_port()
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(
        "[auth]\n"
        f'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
        f'cookie_secret = "{os.urandom(16).hex()}"\n'
        'client_id = "hri-console-e2e"\n'
        'client_secret = "e2e-client-secret"\n'
        f'server_metadata_url = "{oidc_provider}/.well-known/openid-configuration"\n')
    roles = tmp_path / "roles.toml"
    roles.write_text('[emails]\n"carol@example.com" = "admin"\n[domains]\n"example.com" = "viewer"\n')
    server = start_app(env={"HRI_ROLES_FILE": str(roles)}, args=("--secrets.files", str(secrets)), port=port)
    return {**server, "oidc": oidc_provider}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item, so ``page`` can tell at teardown whether the test failed."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture(scope="session")
def chromium_browser():
    """One Chromium per test session (per xdist worker): Playwright driving Debian's Chromium, never a downloaded
    browser. Each test gets a context of its own (``page``): no cookie, storage or cache is shared between tests."""
    from playwright.sync_api import sync_playwright

    executable = _chromium()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(request, chromium_browser):
    """A Chromium page in a fresh browser context. When the test fails, the page as it was is saved as
    tests/artifacts/FAILED-<test>.png, to be looked at."""
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 2000})
    pg = context.new_page()
    yield pg
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        with contextlib.suppress(Exception):  # a page that cannot be captured must not hide the failure
            screenshot(pg, f"FAILED-{request.node.name}")
    context.close()
