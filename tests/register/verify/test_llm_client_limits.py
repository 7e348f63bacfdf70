"""The LLM client's limits against hostile endpoints (real HTTP servers on 127.0.0.1, tests/helpers/llm_server.py):
a server that trickles its answer, an oversized answer, and a redirect to another origin. Each one fails the call
closed (the judge's claim needs review, naming why), within the call's deadline, and never sends the API key to
an origin other than the configured one."""

from __future__ import annotations

import json
import socket
import time

import pytest

from register.verify.judge_cli import load_profile, main
from register.verify.llm_client import MAX_ANSWER_BYTES, ChatClient, LLMCallFailed
from register.verify.llm_judge import LLMJudge, MemoryLedger
from tests.helpers.llm_server import ReplayServer

CLAIM = "The Eiffel Tower is 330 metres tall."
EVIDENCE = ["The Eiffel Tower in Paris is 330 metres tall since 2022."]
VERDICT = ('{"results": [{"id": 0, "verdicts": ["entailment"], "best": 0, '
           '"quote": "The Eiffel Tower in Paris is 330 metres tall", "confidence": 0.93}]}')


def judge_of(server: ReplayServer, **client_options) -> LLMJudge:
    options = {"timeout": 2.0, "retries": 0, "sleep": lambda _s: None} | client_options
    return LLMJudge(load_profile("llm-default"), ChatClient(server.url, "replay-model", "test-key", **options),
                    MemoryLedger())


def test_a_good_answer_still_clears_the_claim():
    with ReplayServer([{"match": CLAIM, "content": VERDICT}]) as server:
        verdict = judge_of(server).judge(CLAIM, EVIDENCE)
    assert not verdict.abstained and verdict.label is not None and verdict.label.value == "SUPPORTED"


def test_a_trickling_server_is_cut_at_the_deadline_not_at_each_read():
    # every byte arrives well within the per-read timeout; the whole answer takes ~4 s, the deadline is 1 s
    with ReplayServer([{"match": CLAIM, "content": VERDICT, "trickle": [0.5, 8]}]) as server:
        started = time.monotonic()
        verdict = judge_of(server, timeout=1.0).judge(CLAIM, EVIDENCE)
        elapsed = time.monotonic() - started
    assert verdict.abstained and verdict.label is None
    assert verdict.reason.startswith("needs review: timeout") and "1 s" in verdict.reason
    assert elapsed < 10 * 1.0  # a generous bound, not a benchmark: the trickle alone would take ~4 s


def test_retries_stay_inside_the_calls_deadline():
    # a trickle on every attempt: each attempt is cut at `timeout`, and the whole call at its deadline
    with ReplayServer([{"match": CLAIM, "content": VERDICT, "trickle": [0.5, 8]}]) as server:
        client = ChatClient(server.url, "replay-model", "test-key", timeout=0.6, retries=2, sleep=lambda _s: None)
        started = time.monotonic()
        with pytest.raises(LLMCallFailed) as failure:
            client.complete([{"role": "user", "content": CLAIM}])
        elapsed = time.monotonic() - started
    assert failure.value.kind == "timeout" and failure.value.requests == 3
    assert client.deadline == pytest.approx(0.6 * 3 + 0.5 + 1.0)  # three attempts and the waits between them
    assert elapsed < 10 * client.deadline


def test_an_oversized_answer_fails_closed_without_being_read_whole():
    # three megabytes declared in Content-Length: refused before the body is read, at the default cap
    with ReplayServer([{"match": CLAIM, "content": VERDICT, "pad": 3 * 1024 * 1024}]) as server:
        ledger = MemoryLedger()
        judge = LLMJudge(load_profile("llm-default"),
                         ChatClient(server.url, "replay-model", "test-key", timeout=5, retries=2), ledger)
        verdict = judge.judge(CLAIM, EVIDENCE)
    assert MAX_ANSWER_BYTES < 3 * 1024 * 1024
    assert verdict.abstained and verdict.label is None
    assert "too large" in verdict.reason and ledger.answers == {}
    assert len(server.requests) == 1  # an oversized answer is not asked for again


def test_an_oversized_answer_without_a_length_is_cut_while_streaming():
    with ReplayServer([{"match": CLAIM, "content": VERDICT, "pad": 3 * 1024 * 1024, "no_length": True}]) as server:
        client = ChatClient(server.url, "replay-model", "test-key", timeout=5, retries=0, max_bytes=64 * 1024)
        with pytest.raises(LLMCallFailed, match="too large") as failure:
            client.complete([{"role": "user", "content": CLAIM}])
    assert failure.value.kind == "http" and "65536 bytes" in str(failure.value)


def test_a_small_answer_under_a_small_cap_still_goes_through():
    with ReplayServer([{"match": CLAIM, "content": VERDICT, "no_length": True}]) as server:
        client = ChatClient(server.url, "replay-model", "test-key", timeout=5, retries=0, max_bytes=4 * 1024)
        assert client.complete([{"role": "user", "content": CLAIM}]).content == VERDICT


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_origin_gets_neither_the_key_nor_the_request(status):
    with ReplayServer([{"match": "", "content": VERDICT}]) as other:
        moved = {"match": CLAIM, "status": status, "body": {},
                 "headers": {"Location": f"{other.url}/chat/completions"}}
        with ReplayServer([moved]) as server:
            verdict = judge_of(server).judge(CLAIM, EVIDENCE)
    assert verdict.abstained and verdict.label is None
    assert "redirect" in verdict.reason and f"HTTP {status}" in verdict.reason
    assert all("authorization" not in {name.lower() for name in r["headers"]} for r in other.requests)
    assert other.requests == []  # no redirect is followed, so nothing reaches the other origin


def test_a_redirect_within_the_same_origin_is_not_followed_either():
    with ReplayServer([]) as server:
        server.recordings.append({"match": CLAIM, "status": 307, "body": {},
                                  "headers": {"Location": f"{server.url}/other/chat/completions"}})
        verdict = judge_of(server).judge(CLAIM, EVIDENCE)
    assert verdict.abstained and "redirect" in verdict.reason
    assert [r["path"] for r in server.requests] == ["/v1/chat/completions"]


def test_an_endpoint_url_that_is_not_http_fails_closed_naming_it():
    client = ChatClient("file:///etc/passwd#", "replay-model", "test-key", timeout=1, retries=0)
    with pytest.raises(LLMCallFailed) as failure:
        client.complete([{"role": "user", "content": CLAIM}])
    assert failure.value.kind == "http" and "http" in str(failure.value)


HOSTILE_BODIES = {
    "nesting deeper than the parser's recursion limit": "[" * 100_000 + "]" * 100_000,
    "a number past int's digit limit":
        '{"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": ' + "9" * 5_000 + "}}",
    "a message that is not an object": '{"choices": [{"message": "a string, not a message"}]}',
    "a choice that is not an object": '{"choices": ["a string, not a choice"]}',
}


@pytest.mark.parametrize(("why", "raw"), HOSTILE_BODIES.items(), ids=list(HOSTILE_BODIES))
def test_a_hostile_body_fails_closed_as_unparsable(why, raw):
    with ReplayServer([{"match": CLAIM, "raw": raw}]) as server:
        verdict = judge_of(server).judge(CLAIM, EVIDENCE)
    assert verdict.abstained and verdict.label is None and "unparsable" in verdict.reason, why


@pytest.mark.parametrize("content", ["[" * 100_000, '{"results": [{"id": 0, "confidence": ' + "1" * 5_000 + "}]}"],
                         ids=["deep nesting", "a 5,000-digit number"])
def test_hostile_content_inside_a_good_completion_fails_closed(content):
    with ReplayServer([{"match": CLAIM, "content": content}]) as server:
        verdict = judge_of(server).judge(CLAIM, EVIDENCE)
    assert verdict.abstained and verdict.label is None and "unparsable: not JSON" in verdict.reason


def test_an_endpoint_that_refuses_connections_is_retried_then_fails_closed():
    with socket.socket() as probe:  # a port nothing listens on once the probe closes
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    waits: list[float] = []
    client = ChatClient(f"http://127.0.0.1:{port}/v1", "replay-model", "test-key", timeout=1, retries=2,
                        sleep=waits.append)
    with pytest.raises(LLMCallFailed, match="cannot reach the endpoint") as failure:
        client.complete([{"role": "user", "content": CLAIM}])
    assert failure.value.kind == "http" and failure.value.requests == 3 and waits == [0.5, 1.0]


def test_judge_check_fails_closed_on_a_redirect_and_a_trickle_and_keeps_the_key_home(capsys, monkeypatch, tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"id": "moved", "claim": CLAIM, "evidence": EVIDENCE}) + "\n"
                     + json.dumps({"id": "slow", "claim": "Slow: " + CLAIM, "evidence": EVIDENCE}) + "\n")
    monkeypatch.setenv("HRI_LLM_MODEL", "replay-model")
    monkeypatch.setenv("HRI_LLM_API_KEY_ENV", "REPLAY_KEY")
    monkeypatch.setenv("REPLAY_KEY", "k-123")
    monkeypatch.setenv("HRI_LLM_TIMEOUT", "1")
    monkeypatch.setenv("HRI_LLM_RETRIES", "0")
    monkeypatch.setenv("HRI_LLM_BATCH", "1")  # one request per claim: each meets its own endpoint behaviour
    with ReplayServer([{"match": "", "content": VERDICT}]) as other, ReplayServer([
            {"match": "Slow: ", "content": VERDICT, "trickle": [0.5, 8]},
            {"match": CLAIM, "status": 302, "body": {}, "headers": {"Location": f"{other.url}/chat/completions"}},
    ]) as server:
        monkeypatch.setenv("HRI_LLM_URL", server.url)
        code = main(["check", str(pairs), "--profile", "llm-default", "--reasons"])
    lines = {line["id"]: line for line in map(json.loads, capsys.readouterr().out.splitlines())}
    assert code == 0 and other.requests == []
    moved, slow = lines["moved"], lines["slow"]
    assert (moved["label"], moved["abstained"]) == (None, True) and "redirect" in moved["reason"]
    assert (slow["label"], slow["abstained"]) == (None, True) and "timeout" in slow["reason"]
