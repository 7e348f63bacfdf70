"""A small register for the monitors' tests, and a webhook receiver on 127.0.0.1 that records what it is sent.

The register: the Authority answers of ``tests.helpers.authority`` (use case ``helpdesk``: four of its seven answers
fail an Authority check, one legal claim is critical information), and ``TRIAGE``, answers of the use case
``triage`` whose claims are critical information or not, hallucinated or not:

* ``t1``: a legal claim SUPPORTED (critical), a claim of criticality 3 UNSUPPORTED (critical, hallucinated), a
  general claim CONTRADICTED (hallucinated, not critical);
* ``t2``: a health claim of criticality 3 CONTRADICTED (critical, hallucinated; its floor makes the answer High),
  a claim of criticality 2 OUTDATED (neither);
* ``t3``: a claim of criticality 5 PARTIAL (critical, not hallucinated);
* ``t4``: no claims.

So the critical-information claims are 5 (4 in triage, 1 in helpdesk), 2 of them hallucinated (both in triage).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from register import SYSTEM, Store
from register.ingest.importer import ImportReport, import_path
from tests.helpers.authority import load_authority_register


def _claim(cid: str, label: str, *, criticality: int = 1, category: str | None = None) -> dict:
    claim: dict[str, Any] = {"claim_id": cid, "text": f"Claim {cid}.", "labels": [label], "criticality": criticality}
    if category is not None:
        claim["category"] = category
    return claim


def triage(rid: str, claims: list[dict], *, use_case: str = "triage") -> dict:
    """An answer of ``use_case`` with ``claims``."""
    return {"response_id": rid, "use_case": use_case, "model": "m2", "created_at": "2026-04-02T09:00:00Z",
            "question": "Q?", "answer": f"The answer of {rid}.", "claims": claims}


TRIAGE = (
    triage("t1", [_claim("c1", "SUPPORTED", category="legal"), _claim("c2", "UNSUPPORTED", criticality=3),
                  _claim("c3", "CONTRADICTED", category="general")]),
    triage("t2", [_claim("c1", "CONTRADICTED", criticality=3, category="health"),
                  _claim("c2", "OUTDATED", criticality=2)]),
    triage("t3", [_claim("c1", "PARTIAL", criticality=5)]),
    triage("t4", []),
)

# a later answer of triage with one more critical hallucinated claim
MORE = triage("t5", [_claim("c1", "CONTRADICTED", category="safety")])


def import_records(store: Store, folder: Path, records, name: str) -> ImportReport:
    """Import ``records`` as SYSTEM from the JSON Lines file ``name`` in ``folder``."""
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return import_path(store, SYSTEM, path)


def load_monitor_register(store: Store, folder: Path) -> Store:
    """``store`` with the Authority register and ``TRIAGE`` imported and scored."""
    load_authority_register(store, folder)
    import_records(store, folder, TRIAGE, "triage.jsonl")
    return store


class Receiver:
    """A webhook receiver on 127.0.0.1 (a real HTTP server in a daemon thread); a context manager.

    ``replies``: what the requests get, in order (the last one repeats): a status (``{"status": 500}``), headers
    (``{"status": 302, "headers": {"Location": ...}}``) or ``{"hang": True}`` (no answer until the receiver
    stops). Every request is kept in ``requests`` (method, path, headers, the raw body)."""

    def __init__(self, replies: list[dict[str, Any]] | None = None) -> None:
        self.replies = list(replies or [{"status": 200}])
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def url(self, path: str = "/hook") -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}{path}"

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._released.set()  # a hanging handler returns
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _reply(self) -> dict[str, Any]:
        with self._lock:
            return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet test output
                return

            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver._lock:
                    receiver.requests.append({"method": self.command, "path": self.path,
                                              "headers": dict(self.headers), "body": raw})
                reply = receiver._reply()
                if reply.get("hang"):
                    receiver._released.wait(30)
                    return
                try:
                    payload = reply.get("body", b"ok")
                    self.send_response(reply.get("status", 200))
                    for name, value in reply.get("headers", {}).items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up
                    pass

            do_GET = do_POST  # noqa: N815 - a client that followed a redirect would arrive here

        return Handler
