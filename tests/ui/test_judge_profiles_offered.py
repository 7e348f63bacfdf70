"""Which judge profiles the Claim verification page offers: the shipped ones, the offline default first, not one
whose provenance says it was withdrawn after measuring it (docs/judges.md, "The MiniLM route")."""

from __future__ import annotations

import json

from register.verify import judge_cli
from register.verify.judge_cli import PROFILE_DIR, load_profile
from ui.features import verification


def test_the_offered_profiles_lead_with_the_offline_default_and_leave_out_the_withdrawn():
    offered = verification.judge_profiles()
    assert offered[0] == "offline-default"
    assert "offline-minilm" not in offered
    assert "withdrawn" in load_profile("offline-minilm").provenance  # still runs by name on the command line


def test_a_profile_is_offered_until_its_provenance_withdraws_it(tmp_path, monkeypatch):
    for path in PROFILE_DIR.glob("*.json"):
        (tmp_path / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    minilm = tmp_path / "offline-minilm.json"
    data = json.loads(minilm.read_text(encoding="utf-8"))
    del data["provenance"]["withdrawn"]
    minilm.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(judge_cli, "PROFILE_DIR", tmp_path)
    monkeypatch.setattr(verification, "PROFILE_DIR", tmp_path)
    assert "offline-minilm" in verification.judge_profiles()
    data["provenance"]["withdrawn"] = "measured: not worth its cost"
    minilm.write_text(json.dumps(data), encoding="utf-8")
    assert "offline-minilm" not in verification.judge_profiles()
