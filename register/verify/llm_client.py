"""A minimal client of an OpenAI-compatible chat endpoint (``POST {url}/chat/completions``), stdlib only.

One call sends one request; a timeout, a refused connection, HTTP 429 or a 5xx answer is retried up to
``retries`` times with exponential backoff (0.5 s, 1 s, 2 s...). Every failure ends as ``LLMCallFailed``
with a ``kind`` the judge turns into an abstention: ``timeout``, ``http``, ``refusal`` (the model declined,
or its answer was filtered) or ``unparsable`` (not an OpenAI chat completion). The API key is passed in
by the caller (read from the environment at call time) and sent only as the ``Authorization`` header.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from register.errors import RegisterError

__all__ = ["ChatAnswer", "ChatClient", "LLMCallFailed"]

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
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.endpoint = url.rstrip("/") + "/chat/completions"
        self.model, self._api_key, self.timeout, self.retries, self._sleep = model, api_key, timeout, retries, sleep

    def complete(self, messages: list[dict[str, str]], *, json_answer: bool = True) -> ChatAnswer:
        """The answer to ``messages`` (temperature 0; JSON asked for unless ``json_answer`` is false), or
        ``LLMCallFailed``."""
        request: dict[str, object] = {"model": self.model, "messages": messages, "temperature": 0}
        if json_answer:
            request["response_format"] = {"type": "json_object"}
        body = json.dumps(request).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        last: LLMCallFailed | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                self._sleep(0.5 * 2 ** (attempt - 1))
            try:
                raw = self._post(body, headers)
            except LLMCallFailed as failure:
                last = LLMCallFailed(failure.kind, str(failure).split(": ", 1)[-1], attempt + 1)
                if failure.kind in ("timeout", "retry"):
                    continue
                raise last from None
            return _answer(raw, attempt + 1)
        assert last is not None
        kind = "timeout" if last.kind == "timeout" else "http"
        raise LLMCallFailed(kind, f"{str(last).split(': ', 1)[-1]} (after {self.retries + 1} attempts)",
                            self.retries + 1)

    def _post(self, body: bytes, headers: dict[str, str]) -> bytes:
        request = urllib.request.Request(self.endpoint, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as reply:  # noqa: S310 - configured URL
                return bytes(reply.read())
        except urllib.error.HTTPError as error:
            kind = "retry" if error.code in _RETRIED_STATUS else "http"
            raise LLMCallFailed(kind, f"HTTP {error.code} from the endpoint") from None
        except TimeoutError:
            raise LLMCallFailed("timeout", f"no answer within {self.timeout:g} s") from None
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                raise LLMCallFailed("timeout", f"no answer within {self.timeout:g} s") from None
            raise LLMCallFailed("retry", f"cannot reach the endpoint ({error.reason})") from None
        except (ConnectionError, OSError) as error:
            raise LLMCallFailed("retry", f"connection failed ({type(error).__name__})") from None


def _answer(raw: bytes, requests: int) -> ChatAnswer:
    """The content and token counts of a chat completion body; refusals and odd bodies fail."""
    try:
        data: Any = json.loads(raw.decode("utf-8"))
        choice = data["choices"][0]
        message = choice["message"]
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, IndexError, TypeError):
        raise LLMCallFailed("unparsable", "the endpoint's answer is not a chat completion", requests) from None
    if message.get("refusal") or choice.get("finish_reason") == "content_filter":
        raise LLMCallFailed("refusal", "the model declined to answer", requests)
    content = message.get("content")
    if not isinstance(content, str) or not content.strip():
        raise LLMCallFailed("unparsable", "the answer has no content", requests)
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return ChatAnswer(content, _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")), requests)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
