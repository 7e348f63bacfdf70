"""``judge check`` / ``judge eval`` (register.verify.judge_cli): the line contract, bad lines, exit codes,
and the offline default's conformance on the Factcheck-GPT test split (when the peer data is present)."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys

import pytest

from register.verify import judge_cli
from register.verify.judge_cli import main
from tests.helpers.paths import PEER_DATA, REPO_ROOT, peer_data

ROOT = REPO_ROOT
DATA = ROOT / "tests" / "data" / "judge"
PAIRS = DATA / "pairs.jsonl"
BAD = DATA / "bad_pairs.jsonl"
LABELS = {"SUPPORTED", "PARTIAL", "UNSUPPORTED", "CONTRADICTED", None}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_prints_one_contract_line_per_pair_in_order(capsys):
    code, out, err = run(capsys, "check", str(PAIRS))
    assert code == 0 and err == ""
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["id"] for line in lines] == ["same", "unrelated", "wrong-year", "no-evidence", "42"]
    for line in lines:
        assert set(line) == {"id", "label", "confidence", "abstained"}
        assert line["label"] in LABELS and 0.0 <= line["confidence"] <= 1.0
        assert line["abstained"] == (line["label"] is None)
    verdicts = {line["id"]: line["label"] for line in lines}
    assert verdicts["same"] == "SUPPORTED" and verdicts["42"] == "SUPPORTED"
    assert verdicts["unrelated"] == "UNSUPPORTED"
    assert verdicts["wrong-year"] != "SUPPORTED"  # 1975 is not in the evidence
    assert verdicts["no-evidence"] is None


def test_check_with_reasons_names_the_passage_and_the_profile(capsys):
    code, out, _err = run(capsys, "check", "--reasons", str(PAIRS))
    first = json.loads(out.splitlines()[0])
    assert code == 0 and first["evidence_index"] == 1 and first["profile"] == "offline-default@2"
    assert "in passage 2" in first["reason"]


def test_bad_lines_are_reported_with_line_and_field_and_skipped(capsys):
    code, out, err = run(capsys, "eval", str(BAD))
    assert code == 2
    for expected in ("line 2: malformed JSON", "line 3: expected a JSON object, got an array", "line 4: id: required",
                     "line 5: evidence: required: a list of strings", "line 6: evidence[1]: must be a string, got int",
                     "line 7: label: required: one of SUPPORTED", "line 8: label: one of SUPPORTED",
                     "line 9: id: duplicate of line 1", "line 11: category: must be a string",
                     "9 line(s) skipped"):
        assert expected in err, expected
    report = json.loads(out)
    assert report["n"] == 2 and report["bad_lines"] == 9  # lines 1 and 12; line 10 is blank


def test_check_ignores_gold_labels_so_one_file_serves_both(capsys):
    code, out, err = run(capsys, "check", str(BAD))
    assert code == 2 and "7 line(s) skipped" in err
    lines = [json.loads(line) for line in out.splitlines()]
    # every line whose id can be read is answered, in order; a bad one fails closed ("needs review")
    assert [line["id"] for line in lines] == ["good-1", "string-evidence", "bad-item", "no-label", "odd-label",
                                              "good-2", "good-3"]
    bad = {line["id"]: line for line in lines if line["id"] in ("string-evidence", "bad-item", "good-2")}
    assert all(line["abstained"] and line["label"] is None for line in bad.values())


def test_eval_reports_the_metrics_consistently_with_check(capsys):
    _code, checked, _err = run(capsys, "check", str(PAIRS))
    verdicts = {json.loads(line)["id"]: json.loads(line)["label"] for line in checked.splitlines()}
    code, out, err = run(capsys, "eval", str(PAIRS))
    assert code == 0 and err == ""
    report = json.loads(out)
    for key in ("accuracy", "macro_f1", "macro_f1_3way", "confusion", "coverage", "false_clearance",
                "false_clearance_by_label", "false_clearance_by_category", "supported_recall", "calibration_error"):
        assert key in report
    gold = {json.loads(line)["id"]: json.loads(line)["label"].upper() for line in PAIRS.read_text().splitlines()}
    gold = {str(k): v for k, v in gold.items()}
    assert report["accuracy"] == pytest.approx(sum(verdicts[i] == gold[i] for i in gold) / len(gold), abs=1e-4)
    answered = sum(v is not None for v in verdicts.values())
    assert report["coverage"]["count"] == answered and report["coverage"]["total"] == 5
    negatives = [i for i in gold if gold[i] != "SUPPORTED"]
    assert report["false_clearance"]["total"] == len(negatives)
    assert report["false_clearance"]["count"] == sum(verdicts[i] == "SUPPORTED" for i in negatives)
    assert set(report["false_clearance_by_category"]) == {"number", "text"}
    assert report["confusion"]["CONTRADICTED"]["CONTRADICTED"] == 0  # the offline judge never says it


def test_standard_input_is_read_with_a_dash(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(PAIRS.read_text(encoding="utf-8")))
    code, out, _err = run(capsys, "check", "-")
    assert code == 0 and len(out.splitlines()) == 5


@pytest.mark.parametrize(("argv", "message"), [
    (["check", "missing.jsonl"], "cannot read missing.jsonl"),
    (["check", str(PAIRS), "--profile", "no-such-profile"], "no judge profile 'no-such-profile'"),
])
def test_unusable_input_or_profile_fails_with_exit_1(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 1 and out == "" and message in err


def test_an_invalid_profile_file_names_its_fields(capsys, tmp_path):
    profile = tmp_path / "p.json"
    profile.write_text(json.dumps({"name": "p", "version": 1, "backend": "offline-lexical", "thresholds": {}}))
    code, _out, err = run(capsys, "eval", str(PAIRS), "--profile", str(profile))
    assert code == 1 and "weights.supported: missing" in err and "thresholds.abstain: missing" in err


def test_an_unknown_backend_fails_closed(capsys, tmp_path):
    profile = tmp_path / "p.json"
    profile.write_text(json.dumps({"name": "oracle-x", "version": 1, "backend": "oracle"}))
    code, _out, err = run(capsys, "check", str(PAIRS), "--profile", str(profile))
    assert code == 1 and "backend 'oracle'" in err


def test_the_minilm_profile_refuses_to_run_without_its_encoder(capsys, monkeypatch, tmp_path):
    if not (ROOT / "data" / "judge_profiles" / "offline-minilm.json").exists():
        pytest.skip("no MiniLM profile shipped")
    monkeypatch.setenv("HRI_MINILM_MODEL", str(tmp_path / "absent.onnx"))
    code, out, err = run(capsys, "check", str(PAIRS), "--profile", "offline-minilm")
    assert code == 1 and out == "" and ("not found" in err or "needed" in err)


def test_usage_errors_exit_64(capsys):
    with pytest.raises(SystemExit) as info:
        main(["judge", "grade", str(PAIRS)])
    assert info.value.code == 64


def test_add_subparser_wires_into_a_parent_cli(capsys):
    parser = argparse.ArgumentParser()
    judge_cli.add_subparser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["judge", "check", str(PAIRS)])
    assert args.needs_store is False
    assert args.func(None, args) == 0
    assert len(capsys.readouterr().out.splitlines()) == 5


def test_module_runs_as_a_script():
    done = subprocess.run([sys.executable, "-m", "register.verify.judge_cli", "check", str(PAIRS)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 5


# --- conformance on real data -----------------------------------------------------------------------------

# Supported-recall floor at the shipped threshold. A judge that clears pairs at random at 5% false
# clearance also clears ~5% of the supported ones; 0.15 is three times that, and below the lower end
# of the 95% interval of the dev figure the threshold was chosen at (0.208, 69/332: 0.168-0.255).
SUPPORTED_RECALL_FLOOR = 0.15
MAX_FALSE_CLEARANCE = 0.05


def test_offline_default_conforms_on_the_factcheck_gpt_test_split(capsys, tmp_path):
    peer_data("factcheck-gpt", "subtask3_claim_evidence_stance.jsonl")
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from make_judge_pairs import factcheck_split, write_jsonl
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    split = factcheck_split(PEER_DATA)
    test_ids = {p["group"] for p in split["test"]}
    assert test_ids.isdisjoint({p["group"] for p in split["dev"]})  # no answer, so no claim, on both sides
    assert {p["claim"] for p in split["test"]}.isdisjoint({p["claim"] for p in split["dev"]})
    pairs = tmp_path / "test.jsonl"
    write_jsonl(pairs, split["test"])
    code, out, _err = run(capsys, "eval", str(pairs))
    report = json.loads(out)
    assert code == 0 and report["n"] == len(split["test"]) == 1515
    assert report["false_clearance"]["value"] <= MAX_FALSE_CLEARANCE
    assert report["supported_recall"]["value"] >= SUPPORTED_RECALL_FLOOR
    assert all(row["CONTRADICTED"] == 0 for row in report["confusion"].values())
    assert 0.0 < report["coverage"]["value"] <= 1.0


def test_the_shipped_lexical_profile_is_what_the_fit_on_dev_gives():
    peer_data("factcheck-gpt", "subtask3_claim_evidence_stance.jsonl")
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from fit_judge_profile import DEFAULT_ABSTAIN, features_of, fit_profile
        from make_judge_pairs import factcheck_split, pool_by_claim
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    dev = factcheck_split(PEER_DATA)["dev"]
    claims = pool_by_claim(dev)
    fitted = fit_profile(dev, features_of(dev, None), claims, features_of(claims, None), "lexical", DEFAULT_ABSTAIN)
    shipped = judge_cli.load_profile("offline-default")
    assert fitted.key == shipped.key
    assert fitted.thresholds == pytest.approx(shipped.thresholds, abs=1e-5)
    for model, weights in shipped.weights.items():
        assert fitted.weights[model] == pytest.approx(weights, abs=1e-5)


def test_a_line_with_a_repeated_key_is_refused_not_read_last_key_wins(capsys, tmp_path):
    """Pairs are read as strictly as every import: a repeated "label" would silently change the gold label."""
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"id": "p1", "claim": "The fee is 2%.", "evidence": ["The fee is 2%."], '
                    '"label": "SUPPORTED", "label": "CONTRADICTED"}\n'
                    '{"id": "p2", "claim": "x", "evidence": ["y"], "label": NaN}\n')
    code, out, err = run(capsys, "eval", str(path))
    assert code == 2
    assert "line 1: label: duplicate key 'label'" in err, err
    assert "line 2: label: NaN is not a JSON value" in err, err  # the field named (issue 34)
