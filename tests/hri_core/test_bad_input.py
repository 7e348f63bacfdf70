"""Bad input lives in ``tests/data/bad_input``; each file is checked for structured errors, not prose.

Every file mixes valid and invalid records. Through the library, each invalid record must raise an
``HRIError`` whose ``as_dict()`` names the record and the field path; through the CLI, every valid
record must still be scored (stdout), every invalid one reported on stderr with its line and field,
and nothing may be lost: scored + invalid == records in the file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from hri_core import HRIError, ProfileError, RecordError, parse_response, profile_from_dict
from hri_core.cli import load_profile_file
from hri_core.readers import iter_csv, iter_jsonl
from tests.helpers.paths import REPO_ROOT

DATA = REPO_ROOT / "tests" / "data" / "bad_input"
AS_OF = "2026-12-01T00:00:00Z"


@dataclass(frozen=True)
class Expected:
    """What a bad-input file must produce: the ids scored, and per location (record, field paths)."""

    valid: tuple[str, ...]
    invalid: dict[str, tuple[str | None, tuple[str, ...]]] = field(default_factory=dict)
    records: int = 0  # records in the file, counted by hand


EXPECTED: dict[str, Expected] = {
    "malformed_json.jsonl": Expected(
        valid=("ok-1", "ok-2"), invalid={"line 2": ("line 2", ("",))}, records=3),
    "unknown_label.jsonl": Expected(
        valid=("ok-1", "ok-2"), invalid={"line 2": ("response_id=bad-label", ("claims[1].labels[0]",))}, records=3),
    "criticality_zero.jsonl": Expected(
        valid=("ok-1", "ok-2"), invalid={"line 3": ("response_id=crit-zero", ("claims[0].criticality",))}, records=3),
    "criticality_boolean.jsonl": Expected(
        valid=("ok-1",), invalid={"line 1": ("response_id=crit-bool", ("claims[0].criticality",))}, records=2),
    "missing_response_id.jsonl": Expected(
        valid=("ok-1", "ok-2"), invalid={"line 2": (None, ("response_id",))}, records=3),
    "duplicate_claim_ids.jsonl": Expected(
        valid=("ok-1", "ok-2"), invalid={"line 1": ("response_id=dup", ("claims[1].claim_id",))}, records=3),
    "missing_labels_column.csv": Expected(
        valid=(), invalid={"row 2": ("row 2", ("labels",)), "row 3": ("row 3", ("labels",))}, records=2),
    "csv_unknown_label.csv": Expected(
        valid=("r-1", "r-3"), invalid={"row 3": ("response_id=r-2", ("claims[0].labels[0]",))}, records=3),
    "empty.jsonl": Expected(valid=(), records=0),
    "empty.csv": Expected(valid=(), records=0),
}
PROFILE_FILES = {"weights_sum_0_9.json": ("weights",)}


def read_records(path: Path):
    """(location, Response | HRIError) for every record of a file, the way the CLI and importer read it."""
    with path.open(encoding="utf-8", newline="") as handle:
        if path.suffix == ".csv":
            items = [(("row " if len(rows) == 1 else "rows ") + ",".join(map(str, rows)), rec)
                     for rows, _raw, rec in iter_csv(handle)]
        else:
            items = [(f"line {line}", rec) for line, _raw, rec in iter_jsonl(handle)]
    out = []
    for where, record in items:
        if isinstance(record, HRIError):
            out.append((where, record))
            continue
        try:
            out.append((where, parse_response(record)))
        except HRIError as error:
            out.append((where, error))
    return out


def test_every_bad_input_file_has_an_expectation():
    on_disk = {p.name for p in DATA.iterdir() if p.is_file()}
    assert on_disk == set(EXPECTED) | set(PROFILE_FILES)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_input_structured_errors(name):
    expected = EXPECTED[name]
    results = read_records(DATA / name)
    errors = {where: r for where, r in results if isinstance(r, HRIError)}
    valid = tuple(r.response_id for _, r in results if not isinstance(r, HRIError))
    assert valid == expected.valid
    assert set(errors) == set(expected.invalid)
    for where, error in errors.items():
        shape = error.as_dict()
        assert isinstance(error, RecordError)
        assert set(shape) == {"error", "title", "record", "problems"}
        assert shape["error"] == "RecordError"
        record, fields = expected.invalid[where]
        assert shape["record"] == record
        assert tuple(p["field"] for p in shape["problems"]) == fields
        assert all(set(p) == {"field", "message"} and p["message"] for p in shape["problems"])
    assert len(valid) + len(errors) == expected.records


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if n.endswith(".jsonl")))
def test_record_count_of_jsonl_files_is_their_non_blank_lines(name):
    lines = [line for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(lines) == EXPECTED[name].records


STDERR_LINE = re.compile(r"^(?P<path>[^:]+):(?P<where>(?:line|rows?) [\d,]+)(?: \(response_id=[^)]*\))?: "
                         r"(?P<field>\S+): (?P<message>.+)$")
SUMMARY = re.compile(r"^scored (\d+) response\(s\), (\d+) invalid record\(s\)$", re.MULTILINE)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_input_through_the_cli(name, hri_core_cli):
    expected = EXPECTED[name]
    rel = f"tests/data/bad_input/{name}"
    proc = hri_core_cli("score", rel, "--as-of", AS_OF)

    scored = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert tuple(out["response_id"] for out in scored) == expected.valid
    assert all(0.0 <= out["hri"] <= 1.0 for out in scored)

    reported: dict[str, list[str]] = {}
    for line in proc.stderr.splitlines():
        match = STDERR_LINE.match(line)
        if match:
            assert match["path"] == rel
            reported.setdefault(match["where"], []).append(match["field"])
    want = {where: [f or "(record)" for f in fields] for where, (_rec, fields) in expected.invalid.items()}
    assert reported == want

    summary = SUMMARY.findall(proc.stderr)
    assert len(summary) == 1
    n_scored, n_invalid = map(int, summary[0])
    assert (n_scored, n_invalid) == (len(expected.valid), len(expected.invalid))
    assert n_scored + n_invalid == expected.records  # nothing lost
    assert proc.returncode == (2 if expected.invalid else 0)


@pytest.mark.parametrize("name", sorted(PROFILE_FILES))
def test_bad_profile_file_structured_error(name):
    with pytest.raises(ProfileError) as caught:
        profile_from_dict(json.loads((DATA / name).read_text(encoding="utf-8")))
    shape = caught.value.as_dict()
    assert shape["error"] == "ProfileError"
    assert tuple(p["field"] for p in shape["problems"]) == PROFILE_FILES[name]
    # the CLI's loader raises the same structured error
    with pytest.raises(ProfileError) as via_cli:
        load_profile_file(str(DATA / name))
    assert via_cli.value.as_dict() == shape


@pytest.mark.parametrize("name", sorted(PROFILE_FILES))
def test_bad_profile_file_through_the_cli(name, hri_core_cli):
    rel = f"tests/data/bad_input/{name}"
    proc = hri_core_cli("score", "data/table_v_supplier_contract.jsonl", "--profile", rel,
                        "--as-of", AS_OF)
    # an invalid profile cannot score anything: usage error, nothing on stdout, every problem on stderr
    assert proc.returncode == 64
    assert proc.stdout == ""
    fields = [line.split(": ")[1] for line in proc.stderr.splitlines() if line.startswith(rel + ": ")]
    assert tuple(fields) == PROFILE_FILES[name]


def test_malformed_profile_json_is_a_profile_error(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"weights": {"F": 0.3,', encoding="utf-8")
    with pytest.raises(ProfileError) as caught:
        load_profile_file(str(path))
    assert caught.value.as_dict()["error"] == "ProfileError"
    assert caught.value.problems[0].loc == ""


def test_caller_supplied_record_name_wins():
    with pytest.raises(RecordError) as caught:
        parse_response({"response_id": "r", "claims": [{"labels": []}]}, record="line 7")
    shape = caught.value.as_dict()
    assert shape["record"] == "line 7"
    assert [p["field"] for p in shape["problems"]] == ["claims[0].labels"]


@pytest.mark.parametrize(
    ("record", "fields"),
    [
        ([1, 2], ("",)),
        ({"response_id": "r"}, ("claims",)),
        ({"response_id": "", "claims": []}, ("response_id",)),
        ({"response_id": "r", "claims": [{"criticality": 2}]}, ("claims[0].labels",)),
        ({"response_id": "r", "claims": [{"labels": ["SUPPORTED"], "criticality": 1.5}]}, ("claims[0].criticality",)),
        ({"response_id": "r", "claims": [{"labels": ["SUPPORTED"], "dimensions": []}]}, ("claims[0].dimensions",)),
        ({"response_id": "r", "claims": [{"labels": ["SUPPORTED"], "dimensions": ["X"]}]},
         ("claims[0].dimensions[0]",)),
        ({"response_id": "r", "claims": [{"labels": ["SUPPORTED"], "feedback_count": -1}]},
         ("claims[0].feedback_count",)),
        ({"response_id": "r", "claims": [{"labels": ["SUPPORTED"], "feedback_at": "yesterday"}]},
         ("claims[0].feedback_at",)),
        # several problems in one record are all named
        ({"response_id": "r", "claims": [{"labels": ["NOPE"], "criticality": 0}, {"labels": ["SUPPORTED"],
                                                                                 "criticality": True}]},
         ("claims[0].labels[0]", "claims[0].criticality", "claims[1].criticality")),
    ],
)
def test_record_errors_name_their_fields(record, fields):
    with pytest.raises(RecordError) as caught:
        parse_response(record)
    assert tuple(p["field"] for p in caught.value.as_dict()["problems"]) == fields
