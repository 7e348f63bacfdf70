"""One POST of an alert's JSON to a webhook over httpx, bounded, and what came of it (``post_json``).

The limits follow the LLM judge's client (``register.verify.llm_client``), so that a broken or hostile receiver
cannot hold the console's worker or a command:

- ``timeout`` bounds connecting, sending and each read; the answer's body, which nothing needs, is read only up to
  ``MAX_REPLY_BYTES`` and only until the attempt's deadline (``timeout`` after it began), so a receiver that
  never answers fails at ``timeout`` and one that trickles its answer is cut at the deadline (plus the one read
  under way).
- No redirect is followed: a 3xx answer fails naming the redirect (the alert, and its signature, go only to the
  configured URL). Proxies and ``.netrc`` from the environment are not used; compression is not asked for.

What is worth another attempt (``Outcome.retry``): no connection, a timeout, a connection dropped, HTTP 408, 425,
429 and 5xx. Any other answer outside 2xx -- a redirect, 4xx -- fails for good: the next attempt would be refused
the same way.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import httpx

__all__ = ["MAX_REPLY_BYTES", "Outcome", "post_json"]

MAX_REPLY_BYTES = 65_536  # a receiver's answer is only acknowledged; its first bytes name a failure
MAX_ERROR_CHARS = 300
_RETRIED_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class Outcome:
    """One attempt: ``delivered`` (a 2xx answer), or an ``error`` in words and whether to ``retry``;
    ``status_code`` when an HTTP answer came, ``seconds`` it took."""

    delivered: bool
    retry: bool
    status_code: int | None
    error: str | None
    seconds: float


def post_json(url: str, body: bytes, headers: dict[str, str], *, timeout: float) -> Outcome:
    """POST ``body`` (JSON) to ``url`` with ``headers``: one attempt, within the limits of the module docstring."""
    started = time.monotonic()
    deadline = started + timeout

    def done(delivered: bool, retry: bool, status: int | None, error: str | None) -> Outcome:
        return Outcome(delivered, retry, status, None if error is None else error[:MAX_ERROR_CHARS],
                       round(time.monotonic() - started, 3))

    if not url.lower().startswith(("http://", "https://")):
        return done(False, False, None, "the webhook URL must start with http:// or https://")
    sent = {"Content-Type": "application/json", "Accept-Encoding": "identity", **headers}
    try:
        with httpx.Client(follow_redirects=False, trust_env=False, timeout=httpx.Timeout(timeout)) as client, \
                client.stream("POST", url, content=body, headers=sent) as reply:
            status = reply.status_code
            # a 2xx is all that is needed: its body is not read; a failure's first bytes say why
            text = "" if 200 <= status < 400 else _read_bounded(reply, deadline)
    except httpx.TimeoutException:
        return done(False, True, None, f"no answer within {timeout:g} s")
    except (httpx.UnsupportedProtocol, httpx.InvalidURL):
        return done(False, False, None, "the webhook URL is not a valid http:// or https:// URL")
    except httpx.ConnectError as error:
        return done(False, True, None, f"cannot connect ({_reason(error)})")
    except httpx.TransportError as error:  # reset, closed early, not HTTP: worth another attempt
        return done(False, True, None, f"connection failed ({type(error).__name__})")
    if 200 <= status < 300:
        return done(True, False, status, None)
    if 300 <= status < 400:
        return done(False, False, status, f"HTTP {status}: the webhook redirects (to "
                                          f"{reply.headers.get('Location', '?')[:100]!r}), and redirects are not "
                                          "followed: configure the final URL")
    answer = f": {text}" if text else ""
    return done(False, status in _RETRIED_STATUS, status, f"HTTP {status}{answer}")


def _read_bounded(reply: httpx.Response, deadline: float) -> str:
    """The first bytes of the answer, as text for an error message: read up to ``MAX_REPLY_BYTES`` and only until
    ``deadline`` (a receiver that trickles its answer is not waited for)."""
    received = bytearray()
    for chunk in reply.iter_raw():
        received += chunk
        if len(received) >= MAX_REPLY_BYTES or time.monotonic() >= deadline:
            break
    text = bytes(received[:MAX_ERROR_CHARS]).decode("utf-8", errors="replace")
    return " ".join(text.split())


def _reason(error: Exception) -> str:
    text = str(error).strip()
    return text[:120] if text else type(error).__name__
