"""A local OpenAI-compatible chat endpoint that replays recorded answers (a real HTTP server on 127.0.0.1).

Recordings (``tests/data/llm/recordings.json``) are tried in order; the first whose ``match`` text occurs
in the request's messages answers it, with its ``status`` (default 200) after ``delay`` seconds, and a body
that is either ``body`` (JSON: a chat completion, or any object) or ``raw`` (bytes as text). ``content``
is a shortcut for a chat completion whose message content is that text (``usage`` added from
``prompt_tokens`` / ``completion_tokens``). ``times: N`` limits a recording to its first N matches, so "503
once, then the good answer" is two recordings. No match answers 404. Every request is kept in
``server.requests`` (method, path, headers, JSON body) for the tests to read; a GET (a client that followed a
redirect) is kept and answered like a POST with no messages.

Hostile answers, for the client's limits: ``headers`` adds response headers (a ``Location`` for a redirect);
``pad: N`` appends N spaces to the body (still valid JSON: an oversized answer generated, never committed);
``no_length: true`` leaves out ``Content-Length`` (the body runs until the connection closes); ``trickle:
[seconds, count]`` sends the last ``count`` bytes of the body one at a time, ``seconds`` apart.

    with ReplayServer.from_file() as server:
        client = ChatClient(server.url, "replay-model", "test-key", timeout=2, retries=1)
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.helpers.paths import TEST_DATA

RECORDINGS = TEST_DATA / "llm" / "recordings.json"


def completion(content: str, prompt_tokens: int = 100, completion_tokens: int = 20, **message: Any) -> dict:
    """A chat completion body whose message says ``content``."""
    return {"id": "chatcmpl-replay", "object": "chat.completion", "model": "replay-model",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content, **message}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


class ReplayServer:
    """The replaying endpoint; a context manager that serves in a daemon thread."""

    def __init__(self, recordings: list[dict[str, Any]]) -> None:
        self.recordings = recordings
        self.used: dict[int, int] = {}
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        # a short poll: shutting the server down waits at most this long (tests start and stop many servers)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @classmethod
    def from_file(cls, path: Path = RECORDINGS) -> ReplayServer:
        """The server over a recordings file."""
        return cls(json.loads(path.read_text(encoding="utf-8")))

    @property
    def url(self) -> str:
        """The base URL (``http://127.0.0.1:PORT/v1``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> ReplayServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def pick(self, text: str) -> dict[str, Any] | None:
        """The recording that answers a request whose messages read ``text``."""
        with self._lock:
            for index, recording in enumerate(self.recordings):
                if recording["match"] in text and self.used.get(index, 0) < recording.get("times", 10 ** 9):
                    self.used[index] = self.used.get(index, 0) + 1
                    return recording
        return None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet test output
                return

            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    body = None
                with server._lock:
                    server.requests.append({"method": self.command, "path": self.path,
                                            "headers": dict(self.headers), "body": body})
                text = json.dumps(body.get("messages", []), ensure_ascii=False) if isinstance(body, dict) else ""
                recording = server.pick(text) if self.path.endswith("/chat/completions") else None
                if recording is None:
                    self._send(404, b'{"error": {"message": "no recording matches"}}', {})
                    return
                time.sleep(recording.get("delay", 0))
                if "raw" in recording:
                    payload = recording["raw"].encode("utf-8")
                elif "content" in recording:
                    payload = json.dumps(completion(recording["content"], recording.get("prompt_tokens", 100),
                                                    recording.get("completion_tokens", 20))).encode("utf-8")
                else:
                    payload = json.dumps(recording["body"]).encode("utf-8")
                self._send(recording.get("status", 200), payload + b" " * recording.get("pad", 0), recording)

            do_GET = do_POST  # noqa: N815 - a client that followed a redirect arrives here with a GET

            def _send(self, status: int, payload: bytes, recording: dict[str, Any]) -> None:
                pause, trickled = recording.get("trickle", (0, 0))
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    for name, value in recording.get("headers", {}).items():
                        self.send_header(name, value)
                    if not recording.get("no_length"):
                        self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload[:len(payload) - trickled])
                    for index in range(len(payload) - trickled, len(payload)):
                        self.wfile.flush()
                        time.sleep(pause)
                        self.wfile.write(payload[index:index + 1])
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                    pass

        return Handler
