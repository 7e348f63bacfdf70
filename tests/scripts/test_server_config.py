"""The console's Streamlit settings (``.streamlit/config.toml``) hold however it is started: it listens on
127.0.0.1 only even without ``--server.address`` (``make run`` passes it too), shows no error details and
sends no usage statistics, and does not watch its source files."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from streamlit import config as streamlit_config

from tests.helpers.paths import REPO_ROOT

LISTEN = "0A"  # the TCP state "listen" in /proc/net/tcp


@pytest.fixture
def repo_config(monkeypatch):
    """Streamlit's options as read from the repository's folder (as `streamlit run app.py` there reads them)."""
    monkeypatch.chdir(REPO_ROOT)
    streamlit_config.get_config_options(force_reparse=True)
    yield streamlit_config.get_option
    streamlit_config.get_config_options(force_reparse=True)


def test_the_config_file_pins_the_address_error_details_and_statistics(repo_config):
    assert repo_config("server.address") == "127.0.0.1"
    assert repo_config("client.showErrorDetails") == "none"  # "false" would still show tracebacks
    assert repo_config("browser.gatherUsageStats") is False
    assert repo_config("server.enableStaticServing") is False  # the icon is served as a media file
    # no watching of the sources: after every page run Streamlit walked every loaded module's path for it
    assert repo_config("server.fileWatcherType") == "none"


def _listening_addresses(port: int) -> set[str]:
    """Local addresses with a listening TCP socket on ``port`` (from /proc/net/tcp and tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, port_hex = fields[1].rsplit(":", 1)
            if int(port_hex, 16) == port and fields[3] == LISTEN:
                raw = bytes.fromhex(address)
                if len(raw) == 4:
                    found.add(socket.inet_ntop(socket.AF_INET, raw[::-1]))
                else:  # four little-endian 32-bit words
                    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
                    found.add(socket.inet_ntop(socket.AF_INET6, words))
    return found


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads the listening sockets from /proc/net (Linux)")
def test_started_without_an_address_the_console_listens_on_loopback_only(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = (tmp_path / "streamlit.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port)],
        cwd=REPO_ROOT, env={**os.environ, "HRI_DB": str(tmp_path / "hri.duckdb")}, stdout=log,
        stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2)
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, \
                    (tmp_path / "streamlit.log").read_text()
                time.sleep(0.3)
        assert _listening_addresses(port) == {"127.0.0.1"}
    finally:
        server.terminate()
        server.wait(timeout=20)
        log.close()
