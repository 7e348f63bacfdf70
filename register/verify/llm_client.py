"""A minimal client of an OpenAI-compatible chat endpoint (``POST {url}/chat/completions``) over httpx.

One call sends one request; a timeout, a refused connection, HTTP 429 or a 5xx answer is retried up to
``retries`` times with exponential backoff (0.5 s, 1 s, 2 s...). Every failure ends as ``LLMCallFailed``
with a ``kind`` the judge turns into an abstention: ``timeout``, ``http``, ``refusal`` (the model declined,
or its answer was filtered) or ``unparsable`` (not an OpenAI chat completion). The API key is passed in
by the caller (read from the environment at call time) and sent only as the ``Authorization`` header.

Limits, so that a hostile or broken endpoint cannot hold or flood the caller:

- ``timeout`` bounds each attempt *in total* (connecting, sending, and every byte of the answer), not each
  read: a server that trickles one byte at a time is cut at the deadline. The whole call, retries and the
  waits between them included, has its own deadline (``ChatClient.deadline`` seconds), fixed when it starts.
- An answer larger than ``max_bytes`` (``MAX_ANSWER_BYTES`` unless given) fails as ``http`` without being
  read whole: by its ``Content-Length`` before the body, else while streaming. Compression is not asked for,
  so the cap counts the bytes that are parsed.
- No redirect is followed, to the same origin or another: the request (and its key) goes only to the
  configured URL, and a 3xx answer fails as ``http`` naming the redirect.
- Proxies and ``.netrc`` from the environment are not used (the key goes to the endpoint and nowhere else).

The host name lookup before connecting is the one step the deadline cannot cut (the operating system's
resolver); an endpoint given as an IP address or ``localhost`` has none.
"""

from __future__ import annotations

import json
import re
import ssl
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import httpcore
import httpx

from register.errors import RegisterError

__all__ = ["MAX_ANSWER_BYTES", "ChatAnswer", "ChatClient", "LLMCallFailed"]

# A judge verdict or an extraction is a few kilobytes; a megabyte is generous and still cheap to hold and parse.
MAX_ANSWER_BYTES = 1_000_000
# Answers that are a refusal in words rather than the `refusal` field (checked only on non-JSON answers).
_REFUSAL = re.compile(r"^\s*(?:i'?m sorry|i am sorry|sorry,|i can(?:'|no)t|i cannot|i am unable|i'm unable|"
                      r"as an ai)", re.IGNORECASE)
_RETRIED_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


class LLMCallFailed(RegisterError):
    """An LLM request failed for good; ``kind`` is timeout, http, refusal or unparsable."""

    title = "LLM judge call failed"

    def __init__(self, kind: str, message: str, requests: int = 1) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.requests = requests


@dataclass(frozen=True)
class ChatAnswer:
    """The message content of a chat completion and what it cost."""

    content: str
    prompt_tokens: int
    completion_tokens: int
    requests: int


def looks_like_refusal(content: str) -> bool:
    """Whether a non-JSON answer reads as the model declining the task."""
    return bool(_REFUSAL.match(content))


class ChatClient:
    """Sends chat requests to ``url`` (``.../v1``) for ``model``; ``sleep`` is injectable for tests."""

    def __init__(self, url: str, model: str, api_key: str | None, *, timeout: float, retries: int,
                 sleep: Callable[[float], None] = time.sleep, max_bytes: int = MAX_ANSWER_BYTES) -> None:
        self.endpoint = url.rstrip("/") + "/chat/completions"
        self.model, self._api_key, self.timeout, self.retries, self._sleep = model, api_key, timeout, retries, sleep
        self.max_bytes = max_bytes

    @property
    def deadline(self) -> float:
        """Seconds one call may take in all: every attempt at ``timeout`` and the backoff waits between them."""
        return self.timeout * (self.retries + 1) + sum(_backoff(attempt) for attempt in range(1, self.retries + 1))

    def complete(self, messages: list[dict[str, str]], *, json_answer: bool = True) -> ChatAnswer:
        """The answer to ``messages`` (temperature 0; JSON asked for unless ``json_answer`` is false), or
        ``LLMCallFailed``."""
        call_ends = time.monotonic() + self.deadline
        request: dict[str, object] = {"model": self.model, "messages": messages, "temperature": 0}
        if json_answer:
            request["response_format"] = {"type": "json_object"}
        body = json.dumps(request).encode("utf-8")
        # identity: the size cap counts the bytes that are parsed, so no compressed answer can expand past it
        headers = {"Content-Type": "application/json", "Accept-Encoding": "identity"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        last: LLMCallFailed | None = None
        attempts = 0
        for attempt in range(self.retries + 1):
            if attempt:
                wait = _backoff(attempt)
                if time.monotonic() + wait >= call_ends:
                    break  # no time left for another attempt inside the call's deadline
                self._sleep(wait)
            attempts = attempt + 1
            try:
                raw = self._post(body, headers, min(time.monotonic() + self.timeout, call_ends))
            except LLMCallFailed as failure:
                last = LLMCallFailed(failure.kind, str(failure).split(": ", 1)[-1], attempts)
                if failure.kind in ("timeout", "retry"):
                    continue
                raise last from None
            return _answer(raw, attempts)
        assert last is not None
        kind = "timeout" if last.kind == "timeout" else "http"
        tries = f"{attempts} attempts" if attempts > 1 else "1 attempt"
        raise LLMCallFailed(kind, f"{str(last).split(': ', 1)[-1]} (after {tries})", attempts)

    @cached_property
    def _ssl_context(self) -> ssl.SSLContext:
        return httpx.create_ssl_context(trust_env=False)

    def _post(self, body: bytes, headers: dict[str, str], ends: float) -> bytes:
        """The body of one 2xx answer received by ``ends`` (a ``time.monotonic`` instant), or ``LLMCallFailed``
        (kind ``retry`` for what is worth another attempt)."""
        if not self.endpoint.lower().startswith(("http://", "https://")):
            raise LLMCallFailed("http", "the endpoint URL must start with http:// or https://")
        transport = _DeadlineTransport(ends, self._ssl_context)
        # the per-operation timeout is a backstop only: the transport's deadline is what ends the attempt
        with httpx.Client(transport=transport, follow_redirects=False, trust_env=False,
                          timeout=httpx.Timeout(self.timeout)) as client:
            try:
                with client.stream("POST", self.endpoint, content=body, headers=headers) as reply:
                    return self._body(reply)
            except httpx.TimeoutException:
                raise LLMCallFailed("timeout", f"no complete answer within {self.timeout:g} s") from None
            except (httpx.UnsupportedProtocol, httpx.InvalidURL):
                raise LLMCallFailed("http", "the endpoint URL is not a valid http:// or https:// URL") from None
            except httpx.ConnectError:
                raise LLMCallFailed("retry", "cannot reach the endpoint") from None
            except httpx.TransportError as error:  # reset, closed early, not HTTP: worth another attempt
                raise LLMCallFailed("retry", f"connection failed ({type(error).__name__})") from None

    def _body(self, reply: httpx.Response) -> bytes:
        """The body of a 2xx answer, read up to ``max_bytes``; any other status fails (3xx is never followed)."""
        status = reply.status_code
        if 300 <= status < 400:
            raise LLMCallFailed("http", f"HTTP {status}: the endpoint redirects, and redirects are not followed "
                                        "(the key goes only to the configured URL)")
        if status >= 400 or status < 200:
            kind = "retry" if status in _RETRIED_STATUS else "http"
            raise LLMCallFailed(kind, f"HTTP {status} from the endpoint")
        too_large = LLMCallFailed("http", f"the answer is too large (over {self.max_bytes} bytes)")
        declared = reply.headers.get("Content-Length", "")
        if declared.isascii() and declared.isdigit() and (len(declared) > 15 or int(declared) > self.max_bytes):
            raise too_large  # refused before a byte of the body is read
        received = bytearray()
        for chunk in reply.iter_raw():
            received += chunk
            if len(received) > self.max_bytes:
                raise too_large
        return bytes(received)


def _backoff(attempt: int) -> float:
    """The wait before retry number ``attempt`` (1, 2, ...): 0.5 s, 1 s, 2 s..."""
    return 0.5 * 2 ** (attempt - 1)


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose every read and write is given only the time left before the deadline."""

    def __init__(self, stream: httpcore.NetworkStream, ends: float) -> None:
        self._stream, self._ends = stream, ends

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _time_left(self._ends, timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _time_left(self._ends, timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        left = _time_left(self._ends, timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, left), self._ends)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's socket backend with one deadline over connecting and every later read and write."""

    def __init__(self, ends: float) -> None:
        self._ends, self._sockets = ends, httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        left = _time_left(self._ends, timeout, httpcore.ConnectTimeout)
        stream = self._sockets.connect_tcp(host, port, left, local_address, socket_options)
        return _DeadlineStream(stream, self._ends)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        left = _time_left(self._ends, timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._sockets.connect_unix_socket(path, left, socket_options), self._ends)

    def sleep(self, seconds: float) -> None:
        self._sockets.sleep(seconds)


class _DeadlineTransport(httpx.HTTPTransport):
    """httpx's HTTP/1.1 transport over a connection pool whose sockets all end by one deadline."""

    def __init__(self, ends: float, ssl_context: ssl.SSLContext) -> None:
        super().__init__(verify=ssl_context, trust_env=False)
        # httpx takes no network backend of its own; httpcore's pool (httpx's engine) does, so the pool is
        # rebuilt with ours. httpx is pinned, and the trickle tests fail if this stops taking effect.
        self._pool = httpcore.ConnectionPool(ssl_context=ssl_context, max_connections=1,
                                             network_backend=_DeadlineBackend(ends))


def _time_left(ends: float, timeout: float | None, expired: type[Exception]) -> float:
    """The seconds one socket operation may block: the time left before ``ends``, never more than ``timeout``."""
    left = ends - time.monotonic()
    if left <= 0:
        raise expired("the deadline passed")
    return left if timeout is None else min(left, timeout)


def _answer(raw: bytes, requests: int) -> ChatAnswer:
    """The content and token counts of a chat completion body; refusals and odd bodies fail."""
    try:
        data: Any = json.loads(raw.decode("utf-8"))
        choice = data["choices"][0]
        message = choice["message"]
    # ValueError: bad JSON, bad UTF-8, a number past int's digit limit; RecursionError: hostile nesting
    except (ValueError, RecursionError, KeyError, IndexError, TypeError):
        raise LLMCallFailed("unparsable", "the endpoint's answer is not a chat completion", requests) from None
    if not isinstance(choice, dict) or not isinstance(message, dict):
        raise LLMCallFailed("unparsable", "the endpoint's answer is not a chat completion", requests)
    if message.get("refusal") or choice.get("finish_reason") == "content_filter":
        raise LLMCallFailed("refusal", "the model declined to answer", requests)
    content = message.get("content")
    if not isinstance(content, str) or not content.strip():
        raise LLMCallFailed("unparsable", "the answer has no content", requests)
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return ChatAnswer(content, _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")), requests)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
