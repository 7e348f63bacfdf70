"""Every hash the register stores and compares later, pinned to the bytes the code made before
``hri_core.fingerprint`` replaced its copies: a response's content hash, an audit event's hash and HMAC,
a checklist run's hash, an answer cache key, the derived ids of verified answers and of register rows.

The expected values were computed by the former copies (``hashlib.sha256(json.dumps(...))`` in each module)
on the same inputs. A change breaks existing databases: content hashes stop matching (every re-import would
make a revision), the audit chain stops verifying, cached answers are asked for again.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

from hri_core.models import parse_response
from register.db import audit
from register.governance import checklist, rows
from register.ingest import records
from register.verify import llm_judge, pipeline

PLAIN = {"zeta": [1, 2.5, -0.0, 1e-07, 1e16, 0.1 + 0.2, True, False, None],
         "alpha": {"b": "café ☕ 日本 😀 \u2028 line\nbreak \"q\" \\ /", "a": {"y": [], "x": {}}},
         "Ünïcode-key": "ö", "int": 12345678901234567890, "neg": -3}
WITH_TYPES = {**PLAIN, "at": datetime(2026, 3, 1, 9, 30, 15, 123456, tzinfo=UTC),
              "local": datetime(2026, 3, 1, 9, 30, tzinfo=timezone(timedelta(hours=2))),
              "day": date(2026, 2, 28), "amount": Decimal("1.10"), "tuple": ("t", 1)}
RECORD = {"response_id": "r-ünï", "use_case": "support", "model": "m-1", "created_at": "2026-03-01T09:30:00Z",
          "question": "Wie spät ist es? 日本", "answer": "Es ist 9:30 😀 — \"genau\".", "stakes": "high",
          "claims": [{"claim_id": "c1", "text": "Café opens at 9.", "labels": ["SUPPORTED"], "criticality": 2},
                     {"claim_id": "c2", "text": "Ünsupported", "labels": ["UNSUPPORTED", "OUTDATED"],
                      "dimensions": ["F", "C"], "criticality": 3}]}
AT = datetime(2026, 3, 1, 9, 30, 15, 123456, tzinfo=UTC)


def test_response_content_hash():
    response = parse_response(RECORD)
    assert records.content_hash(response) == "9143e1f64501fc120658554066b36ce97c28de02efa542b10bcd70d02777b8ba"
    assert records.canonical_json(response.model_dump(mode="json")) == (
        '{"answer":"Es ist 9:30 \\ud83d\\ude00 \\u2014 \\"genau\\".","claims":[{"claim_id":"c1","criticality":2,'
        '"dimensions":null,"feedback_at":null,"feedback_count":null,"feedback_resolved":null,"labels":["SUPPORTED"],'
        '"source_id":null,"span":null,"text":"Caf\\u00e9 opens at 9."},{"claim_id":"c2","criticality":3,'
        '"dimensions":["F","C"],"feedback_at":null,"feedback_count":null,"feedback_resolved":null,'
        '"labels":["UNSUPPORTED","OUTDATED"],"source_id":null,"span":null,"text":"\\u00dcnsupported"}],'
        '"created_at":"2026-03-01T09:30:00Z","model":"m-1","question":"Wie sp\\u00e4t ist es? \\u65e5\\u672c",'
        '"response_id":"r-\\u00fcn\\u00ef","stakes":"high","use_case":"support"}')
    assert records.canonical_json(PLAIN) == (
        '{"alpha":{"a":{"x":{},"y":[]},"b":"caf\\u00e9 \\u2615 \\u65e5\\u672c \\ud83d\\ude00 \\u2028 line\\nbreak '
        '\\"q\\" \\\\ /"},"int":12345678901234567890,"neg":-3,"zeta":[1,2.5,-0.0,1e-07,1e+16,0.30000000000000004,'
        'true,false,null],"\\u00dcn\\u00efcode-key":"\\u00f6"}')


def test_audit_event_text_hash_and_mac():
    assert audit.canonical_json(None) is None
    assert audit.canonical_json(WITH_TYPES) == (
        '{"alpha":{"a":{"x":{},"y":[]},"b":"café ☕ 日本 😀 \u2028 line\\nbreak \\"q\\" \\\\ /"},"amount":"1.10",'
        '"at":"2026-03-01 09:30:15.123456+00:00","day":"2026-02-28","int":12345678901234567890,'
        '"local":"2026-03-01 09:30:00+02:00","neg":-3,"tuple":["t",1],"zeta":[1,2.5,-0.0,1e-07,1e+16,'
        '0.30000000000000004,true,false,null],"Ünïcode-key":"ö"}')
    before, after = audit.canonical_json({"name": "Zoë", "n": 1}), audit.canonical_json(WITH_TYPES)
    assert audit.event_hash("ab" * 32, 7, AT, "Zoë Ünïcode", "admin", "profile.publish", "profile", "3", before,
                            after) == "235dee6ca3e63a0521c7715e29aecc91e5e409e5f21091178d8a785da1f06009"
    assert audit.event_hash(audit.GENESIS_HASH, 1, AT, "a", "b", "c", "d", None, None, None) == (
        "d166515a5c3b4c6e9db2056600dc7fec890a6890a0380493c7a6a4ca8774adee")
    assert audit.event_mac(b"k" * 32, "key-1", "ab" * 32, 7, AT, "Zoë Ünïcode", "admin", "profile.publish",
                           "profile", "3", before, after) == (
        "8c2064c3655c89945688492a3900ec9c569c038074c44e5911d9964294f767d7")


def test_checklist_run_hash():
    assert checklist._content_hash(PLAIN) == "bc4842a61f59d8bf98b906ff66adb4420d842bce9694289ba7cebe12d81b3227"
    assert checklist._content_hash(WITH_TYPES) == "ca3aa5c41a042bc48f6cbd71bb106eeffb204d31eafc1509048d5903149642e5"


def test_answer_cache_key():
    messages = [{"role": "system", "content": "Réponds en JSON."}, {"role": "user", "content": '{"answer": "日本 😀"}'}]
    assert llm_judge.cache_key("gpt-ünï", "extract", "v3", messages) == (
        "1915ac258dd58b4cc4729c77016d3dce0746a3f025282f3cfb421e163b30279b")


def test_derived_ids():
    item = pipeline.parse_input(1, json.dumps({"question": "Wer? 日本", "answer": "Zoë 😀 \"q\"",
                                               "retrieved_context": ["x"]}))
    assert item.response_id == "v-7098231128fe8bf0"
    item = pipeline.parse_input(1, json.dumps({"answer": "no question", "retrieved_context": []}))
    assert item.response_id == "v-931a8dcba7b43610"
    assert rows.claim_key_for("  Ünïcode   STATEMENT\twith spaces 日本 ") == "clm-510fbef745b5"
    assert rows._source_key_for("  NIST  AI 600-1, Zoë ") == "src-4563cb51cc"
