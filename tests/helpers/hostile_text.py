"""Hostile text for the markdown-injection tests: payloads that would load, link, run or format something if
a page rendered them as markdown, and a local HTTP server that records every request made to it.

Every payload points at the logging server, so "zero requests reached it" proves nothing loaded, whatever
the browser's network rules (``--disable-background-networking`` does not stop page requests).
"""

from __future__ import annotations

import http.server
import json
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def payloads(port: int, tag: str) -> list[str]:
    """One-line payloads naming ``tag`` (the field they were put in) in every URL they carry."""
    base = f"http://127.0.0.1:{port}/{tag}"
    return [
        f"![img]({base}/md-image.png)",
        f"[link]({base}/md-link)",
        "[js](javascript:alert(document.domain))",
        f"<img src={base}/html-img.png onerror=alert(1)>",
        "<script>alert(1)</script>",
        f"<iframe src={base}/iframe></iframe>",
        f"<svg onload=alert(1)><image href={base}/svg.png /></svg>",
        f"{base}/autolink",
        f"www.127.0.0.1.nip.io/{tag}",
        f"`` ![bt]({base}/backtick.png) ``",
        f"` ![bt1]({base}/backtick1.png) `",
        "$\\href{javascript:alert(1)}{x}$ $x^2$",
        ":red[red] :material/home: :smile:",
        "**bold** _it_ ~~s~~ # h",
    ]


def hostile(port: int, tag: str, *, multiline: bool = False) -> str:
    """Every payload of ``tag`` in one string (``multiline`` adds block markdown: reference images, headings)."""
    text = f"{tag}: " + " ".join(payloads(port, tag))
    if multiline:
        text += (f"\n\n![ref][r]\n\n[r]: http://127.0.0.1:{port}/{tag}/ref.png\n\n# heading\n===\n"
                 f"<img src=http://127.0.0.1:{port}/{tag}/block.png>\r\nend")
    return text


def hostile_id(port: int, tag: str) -> str:
    """A one-line identifier that is itself a payload (response ids, use cases, models, keys); the ``<a>`` is
    for Plotly, whose labels understand a subset of HTML."""
    return (f"{tag}-![i](http://127.0.0.1:{port}/{tag}/id.png)`x`[l](http://127.0.0.1:{port}/{tag}/l)"
            f'<a href="http://127.0.0.1:{port}/{tag}/a">a</a>')


def write_hostile_responses(path: Path, port: int) -> dict:
    """A JSONL file of one response with a payload in every text field a data file controls; returns it."""
    record = {
        "response_id": hostile_id(port, "response_id"),
        "use_case": hostile_id(port, "use_case"),
        "model": hostile_id(port, "model"),
        "created_at": "2000-06-01T10:00:00Z",  # the oldest answer: first in the review queue
        "question": hostile(port, "question", multiline=True),
        "answer": hostile(port, "answer", multiline=True),
        "claims": [
            {"claim_id": hostile_id(port, "claim_id"), "text": hostile(port, "claim"), "labels": ["CONTRADICTED"],
             "criticality": 3, "source_id": hostile_id(port, "source_id"), "span": hostile(port, "span")},
            {"text": hostile(port, "claim2"), "labels": ["SUPPORTED"], "span": hostile(port, "span2")},
        ],
    }
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return record


class _Recorder(http.server.BaseHTTPRequestHandler):
    requests: list[str]

    def _record(self) -> None:
        self.requests.append(f"{self.command} {self.path}")
        self.send_response(204)
        self.end_headers()

    do_GET = do_POST = do_HEAD = do_OPTIONS = _record  # noqa: N815 - http.server's handler names

    def log_message(self, format, *args) -> None:  # noqa: A002 - the base class's signature
        pass


@contextmanager
def logging_server() -> Iterator[dict]:
    """A local HTTP server on a free port that answers 204 and records every request: {"port", "requests"}."""
    requests: list[str] = []
    handler = type("Recorder", (_Recorder,), {"requests": requests})
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {"port": server.server_address[1], "requests": requests}
    finally:
        server.shutdown()
        server.server_close()
