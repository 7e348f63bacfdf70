"""``python -m register serve``: the console and the API in one process on a real database file, taking handed
commands from its start, stopped by SIGTERM with the file released (another process can open it at once)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import httpx

from register import SYSTEM, Store
from register.access.api_tokens import create_token
from register.cli.handoff import socket_path
from tests.e2e.conftest import _free_port, server_environment
from tests.helpers.paths import REPO_ROOT


def test_serve_answers_the_console_and_the_api_and_stops_cleanly_on_sigterm(tmp_path, database_templates):
    db = database_templates.copy("demo50-accounts", tmp_path / "served.duckdb")
    store = Store(db)
    token = create_token(store, SYSTEM, "test-viewer").token
    expected = store.scalar("SELECT count(*) FROM scores WHERE is_current")
    store.close()
    port = _free_port()
    log = (tmp_path / "serve.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "register", "--db", str(db), "serve", "--port", str(port)],
                            cwd=REPO_ROOT, env=server_environment({"HRI_ANCHOR_DIR": str(tmp_path / "anchors")}),
                            stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            if proc.poll() is not None:
                raise AssertionError((tmp_path / "serve.log").read_text())
            try:
                if httpx.get(f"{base}/_stcore/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            raise AssertionError((tmp_path / "serve.log").read_text())
        # no page visited, no API call made: the server opened the database at start, so a command is handed over
        deadline = time.monotonic() + 60
        while not socket_path(db).exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert socket_path(db).exists(), "the console did not open the database at start"
        users = subprocess.run([sys.executable, "-m", "register", "--db", str(db), "users", "list"], cwd=REPO_ROOT,
                               env=server_environment(), capture_output=True, text=True, timeout=120)
        assert users.returncode == 0 and "test-viewer" in users.stdout, users.stderr
        assert httpx.get(f"{base}/api/v1/health").json()["status"] == "ok"
        assert "<div id=\"root\">" in httpx.get(base).text or "streamlit" in httpx.get(base).text.lower()
        listed = httpx.get(f"{base}/api/v1/responses", headers={"Authorization": f"Bearer {token}"})
        assert listed.status_code == 200 and listed.json()["total"] == expected
        assert httpx.get(f"{base}/api/v1/responses").status_code == 401
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, (tmp_path / "serve.log").read_text()
        stopped = (tmp_path / "serve.log").read_text()
        # the background work stopped before the database closed: no thread wrote to a closed connection
        assert "Traceback" not in stopped and "already closed" not in stopped, stopped
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()
    again = Store(db)  # released: DuckDB lets one process open the file, and it is ours now
    assert again.scalar("SELECT count(*) FROM scores WHERE is_current") == expected
    again.close()


def test_the_launcher_binds_sockets_without_nagles_delay():
    """Streamlit's own bind left TCP_NODELAY off (protocol 0), so every keep-alive response after the first waited
    for the client's delayed ACK; the launcher sets it on the listening socket, which accepted ones inherit."""
    code = ("import socket, ui.server; from streamlit.web.server.starlette import starlette_server as s; "
            "sock = s._bind_socket('127.0.0.1', 0, 8); print(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=server_environment(), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-1] == "1"
