"""Real-browser fixtures: a Streamlit server on a free port with its own database, and Chromium."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "tests" / "artifacts"
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


@pytest.fixture
def app_server(tmp_path):
    """Seed a database with the CLI, then serve app.py on it; yields the base URL."""
    db = tmp_path / "e2e.duckdb"
    env = {**os.environ, "HRI_DB": str(db)}
    subprocess.run([sys.executable, "-m", "register", "--db", str(db), "demo", "--synthetic", "200"],
                   cwd=REPO_ROOT, env=env, check=True, capture_output=True)
    from register import Store

    seeded = Store(db)  # count independently before the server takes the file (one writer per file)
    from register import review


    expected = {
        "responses": seeded.query_one("SELECT count(*) FROM responses WHERE is_current")[0],
        "high": seeded.query_one("SELECT count(*) FROM scores WHERE is_current AND band = 'High'")[0],
        "queue": review.queue_stats(seeded)["size"],
        "first_by_score": seeded.query_one(
            "SELECT response_id FROM scores WHERE is_current ORDER BY score DESC, response_id LIMIT 1")[0],
    }

    seeded.close()
    port = _free_port()
    log = open(tmp_path / "streamlit.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"],
        cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                break
        except OSError:
            time.sleep(0.3)
    else:
        proc.terminate()
        raise RuntimeError("streamlit did not become healthy: " + (tmp_path / "streamlit.log").read_text())
    yield {"url": url, "db": db, "expected": expected}
    proc.terminate()
    proc.wait(timeout=20)
    log.close()


@pytest.fixture
def page():
    """A Chromium page (Playwright driving Debian's Chromium; never a downloaded browser)."""
    from playwright.sync_api import sync_playwright

    executable = _chromium()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 2000})
        pg = context.new_page()
        yield pg
        context.close()
        browser.close()


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
