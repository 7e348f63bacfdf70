"""The one canonical JSON and fingerprint: every variant's bytes pinned.

The expected texts and hashes below were computed by the code before ``hri_core.fingerprint`` existed (each
variant by the copy that used it: ``register.ingest.records.canonical_json``, ``register.db.audit.canonical_json``,
the checklist's run hash, the answer cache key's ``json.dumps``, the four ``fingerprint`` methods). Stored hashes
are compared with these bytes: a change here breaks existing databases and the audit chain.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest

from hri_core.authority import default_authority_rules
from hri_core.fingerprint import canonical_json, fingerprint, sha256_hex
from hri_core.mitigation import default_mitigation_policy
from hri_core.profile import default_profile
from hri_core.rubric import DEFAULT_RUBRIC_FILE, rubric_from_dict

ROOT = Path(__file__).resolve().parents[2]

# non-ASCII text (accents, CJK, an astral emoji, U+2028), escapes, floats json.dumps writes in every form,
# a big integer, nested and empty containers, keys out of order (one non-ASCII)
PLAIN = {"zeta": [1, 2.5, -0.0, 1e-07, 1e16, 0.1 + 0.2, True, False, None],
         "alpha": {"b": "café ☕ 日本 😀 \u2028 line\nbreak \"q\" \\ /", "a": {"y": [], "x": {}}},
         "Ünïcode-key": "ö", "int": 12345678901234567890, "neg": -3}
# and the values JSON has no type for, which the "str" variant writes as their str()
WITH_TYPES = {**PLAIN, "at": datetime(2026, 3, 1, 9, 30, 15, 123456, tzinfo=UTC),
              "local": datetime(2026, 3, 1, 9, 30, tzinfo=timezone(timedelta(hours=2))),
              "day": date(2026, 2, 28), "amount": Decimal("1.10"), "tuple": ("t", 1)}

ASCII_COMPACT = ('{"alpha":{"a":{"x":{},"y":[]},"b":"caf\\u00e9 \\u2615 \\u65e5\\u672c \\ud83d\\ude00 \\u2028 '
                 'line\\nbreak \\"q\\" \\\\ /"},"int":12345678901234567890,"neg":-3,"zeta":[1,2.5,-0.0,1e-07,'
                 '1e+16,0.30000000000000004,true,false,null],"\\u00dcn\\u00efcode-key":"\\u00f6"}')
UTF8_COMPACT_STR = ('{"alpha":{"a":{"x":{},"y":[]},"b":"café ☕ 日本 😀 \u2028 line\\nbreak \\"q\\" \\\\ /"},'
                    '"amount":"1.10","at":"2026-03-01 09:30:15.123456+00:00","day":"2026-02-28",'
                    '"int":12345678901234567890,"local":"2026-03-01 09:30:00+02:00","neg":-3,"tuple":["t",1],'
                    '"zeta":[1,2.5,-0.0,1e-07,1e+16,0.30000000000000004,true,false,null],"Ünïcode-key":"ö"}')
UTF8_SPACED = ('{"alpha": {"a": {"x": {}, "y": []}, "b": "café ☕ 日本 😀 \u2028 line\\nbreak \\"q\\" \\\\ /"}, '
               '"int": 12345678901234567890, "neg": -3, "zeta": [1, 2.5, -0.0, 1e-07, 1e+16, 0.30000000000000004, '
               'true, false, null], "Ünïcode-key": "ö"}')


def test_the_default_is_ascii_compact_sorted():
    # records.canonical_json / content_hash and the four parameter fingerprints
    assert canonical_json(PLAIN) == ASCII_COMPACT
    assert fingerprint(PLAIN) == "bc4842a61f59d8bf98b906ff66adb4420d842bce9694289ba7cebe12d81b3227"


def test_utf8_with_str_for_other_types():
    # the audit trail's before/after text
    assert canonical_json(WITH_TYPES, ensure_ascii=False, other_types="str") == UTF8_COMPACT_STR
    assert fingerprint(WITH_TYPES, ensure_ascii=False, other_types="str") == (
        "76fa655e76846e4cc718c2485266fdd611bf6acc2ef94b57aecf8e7b6bdcbcfb")


def test_ascii_with_str_for_other_types():
    # a checklist run's hash
    assert fingerprint(PLAIN, other_types="str") == fingerprint(PLAIN)
    assert fingerprint(WITH_TYPES, other_types="str") == (
        "ca3aa5c41a042bc48f6cbd71bb106eeffb204d31eafc1509048d5903149642e5")


def test_utf8_spaced():
    # the answer cache key, the derived ids of verified answers, the raw text of a revision
    assert canonical_json(PLAIN, ensure_ascii=False, compact=False) == UTF8_SPACED
    assert fingerprint(PLAIN, ensure_ascii=False, compact=False) == (
        "2e42557c1f144b40ba710cc61e1d010739344f52866200b0345ea8266435b83f")


def test_other_types_are_refused_unless_asked_for():
    for value in (datetime(2026, 1, 1, tzinfo=UTC), date(2026, 1, 1), Decimal("1.5"), {1, 2}):
        with pytest.raises(TypeError):
            canonical_json({"x": value})


def test_sha256_hex_is_sha256_of_utf8():
    assert sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert sha256_hex("ö") == "6dbd11fd012e225b28a5d94a9b432bc491344f3e92158661be2ae5ae2b8b1ad8"
    with pytest.raises(UnicodeEncodeError):
        sha256_hex("\ud800")  # a lone surrogate has no UTF-8 form, as with str.encode


def test_parameter_fingerprints_are_unchanged():
    # the shipped defaults' fingerprints: stored in every register (scoring_profiles, authority_rule_versions,
    # mitigation_policies, rubrics) and matched against
    assert default_profile().fingerprint() == "5b13084f24d849eb2a43fc5f7ce084dc8ef9b9d728880f6a9a23cf88dda8d018"
    assert default_authority_rules().fingerprint() == (
        "884338201038d97403992d24a27dc61d1b542c1b4d2b695eb262c83bdee41cf6")
    assert default_mitigation_policy().fingerprint() == (
        "f2bde3406980026226a2c15e725b50be00f903b8ba1880195122e19085911e82")
    rubric = rubric_from_dict(json.loads((ROOT / DEFAULT_RUBRIC_FILE).read_text(encoding="utf-8")))
    assert rubric.fingerprint() == "e42d1aab36d15a20a477fc08e7d24c2be89904bdbcca8ddd14676e5a44e4f1f4"


def test_a_fingerprint_is_the_hash_of_the_parameters_without_name_and_version():
    profile = default_profile()
    renamed = profile.model_copy(update={"name": "other", "version": 7})
    assert renamed.fingerprint() == profile.fingerprint()
    assert profile.fingerprint() == fingerprint(profile.model_dump(mode="json", exclude={"name", "version"}))
