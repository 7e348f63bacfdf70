"""The compiled check of plain JSON Lines records (``register.ingest.bulk``) stores exactly what the per-record
path stores, and sends everything it does not recognise to that path.

Each test imports the same file twice -- once with the bulk check, once with every record validated one
by one (``batches.BULK_VALIDATION = False``, the path of every earlier release) -- and compares every stored
column of responses, claims and quarantine rows (the surrogate keys and import times aside), the batch
counts and the content hashes. The files are random mixes of plain records and near-misses of every kind
the per-record path treats differently: other spellings of labels, stakes and categories, times in other
notations or out of range, numbers as text, booleans as numbers, text over a limit, non-ASCII text and
escapes, duplicate keys, trailing commas, NaN, unknown keys, extensions, repeated response ids.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from hri_core.vocabulary import LABELS as LABEL_ORDER
from hri_core.vocabulary import cautious_label_set, label_set_problem
from register import SYSTEM, Store
from register.ingest import batches, bulk
from register.ingest.importer import import_path
from register.scoring.profiles import ensure_default_profile

RESPONSE_COLUMNS = ("response_id, revision, is_current, content_hash, use_case, model, created_at, question, answer, "
                    "stakes, claim_count, raw, retrieved_context::VARCHAR, gt_answer, query_ambiguous, "
                    "gt_claims::VARCHAR")
CLAIM_COLUMNS = ("response_id, revision, claim_idx, is_current, claim_id, text, labels, label_mask, dimensions, "
                 "dim_mask, criticality, source_id, span, feedback_at, feedback_count, feedback_resolved, category, "
                 "is_core, contradicted_by, entailment::VARCHAR")
QUARANTINE_COLUMNS = "source_name, location, response_id, raw, reasons::VARCHAR, status"

LABELS = ["SUPPORTED", "PARTIAL", "UNSUPPORTED", "CONTRADICTED", "OUTDATED", "OUT_OF_SCOPE", "ACCESS_GAP",
          "VALIDATED_NEGATIVE_FEEDBACK"]
TIMES = ["2026-06-01T00:00:51Z", "2026-06-01T10:00:00.5+02:00", "2026-06-01T23:59:59.123456-05:30",
         "2026-06-01T09:30:00", "2026-06-01T09:30:00+00:00", "1999-12-31T23:30:00-01:00"]
ODD_TIMES = ["2026-06-01 09:30:00", "2026-06-01", "2026-02-30T00:00:00Z", "2026-06-01T24:00:00Z",
             "2026-06-01T09:30:00.1234567Z", "0001-01-01T00:30:00+01:00", "9999-12-31T23:30:00-01:00",
             "1714550400", 1714550400, "2026-06-01t09:30:00z", " 2026-06-01T09:30:00Z", "0999-06-01T00:00:00Z"]


def plain_claim(rng: random.Random, rid: str, index: int) -> dict:
    # labels one claim may carry together (a refused set is a near-miss: ``_edit``)
    claim: dict = {"labels": [label.value for label in cautious_label_set(rng.sample(LABELS, rng.choice([1, 1, 2])))]}
    if rng.random() < 0.8:
        claim["claim_id"] = f"{rid}-{index + 1}"
    for key, values in (("text", ["The probation period is 6 months.", "Say \"yes\"\\no\n\ttab/slash", ""]),
                        ("source_id", ["hr-2026", "src/a b"]), ("span", ["A doctor's note.", "x\r\ny"]),
                        ("criticality", [1, 2, 3, 1000]), ("dimensions", [["F"], ["F", "C"], ["H", "U", "P"]]),
                        ("feedback_at", TIMES), ("feedback_count", [0, 3, 1_000_000]),
                        ("feedback_resolved", [True, False]), ("category", ["legal", "safety",
                                                                            "discrimination/bias"]),
                        ("is_core", [True, False])):
        if rng.random() < 0.5:
            claim[key] = rng.choice(values)
        elif rng.random() < 0.15 and key != "criticality":
            claim[key] = None
    return claim


def plain_record(rng: random.Random, rid: str) -> dict:
    record: dict = {"response_id": rid}
    for key, values in (("use_case", ["hr-policy", "it"]), ("model", ["rag-v4"]), ("created_at", TIMES),
                        ("question", ["Can I work abroad?", "Why \"so\"?"]),
                        ("answer", ["Yes, for 10 days.", "line one\nline two"]),
                        ("stakes", ["low", "medium", "high", "critical"]), ("gt_answer", ["The target."]),
                        ("query_ambiguous", [True, False])):
        if rng.random() < 0.6:
            record[key] = rng.choice(values)
        elif rng.random() < 0.1:
            record[key] = None
    record["claims"] = [plain_claim(rng, rid, i) for i in range(rng.choice([0, 1, 2, 3, 6]))]
    return record


def _some_claim(record: dict, rng: random.Random) -> dict:
    if not record["claims"]:
        record["claims"].append({"labels": ["SUPPORTED"]})
    return rng.choice(record["claims"])


# near-misses: each changes one thing a plain record could hold (a dict edit, or an edit of the line's text)
def _edit(rng: random.Random, record: dict) -> str | None:
    claim = _some_claim(record, rng)
    kind = rng.randrange(35)
    if kind == 0:
        claim["labels"] = [claim["labels"][0].lower()]
    elif kind == 1:
        claim["labels"] = " supported "
    elif kind == 2:
        claim["labels"] = ["SUPPORTED", "SUPPORTED"]
    elif kind == 3:
        claim["labels"] = []
    elif kind == 4:
        claim["criticality"] = rng.choice(["2", 2.0, True, None, 0, 1001, -1, 10**30])
    elif kind == 5:
        claim["feedback_at"] = rng.choice(ODD_TIMES)
    elif kind == 6:
        record["created_at"] = rng.choice(ODD_TIMES)
    elif kind == 7:
        record["stakes"] = rng.choice(["High", " low", "", "urgent"])
    elif kind == 8:
        claim["category"] = rng.choice(["Legal", "discrimination / bias", "", "astrology"])
    elif kind == 9:
        claim["is_core"] = rng.choice(["true", 1, 0, "no"])
    elif kind == 10:
        claim["feedback_count"] = rng.choice(["3", -1, 1_000_001, 2.5])
    elif kind == 11:
        claim["text"] = rng.choice(["café", "naïve 😀", 42, ["x"]])
    elif kind == 12:
        record["answer"] = rng.choice(["Ünïcode", 7, {"x": 1}])
    elif kind == 13:
        record["response_id"] = rng.choice([" " + record["response_id"], record["response_id"] + "\t", "", 12,
                                            None, "é-" + record["response_id"]])
    elif kind == 14:
        claim["claim_id"] = ""
    elif kind == 15:
        record["claims"].append(dict(claim))  # same claim id twice (when it has one)
    elif kind == 16:
        record["unknown_field"] = "kept out"
    elif kind == 17:
        claim["contradicted_by"] = "context"
        claim["labels"] = ["CONTRADICTED"]
    elif kind == 18:
        record["retrieved_context"] = [{"id": "c1", "text": "chunk"}]
    elif kind == 19:
        claim["dimensions"] = rng.choice([[], ["f"], ["F", "F"], "F,C", ["Z"]])
    elif kind == 20:
        record["_quarantine"] = {"quarantine_id": 999}
    elif kind == 21:
        record["claims"] = rng.choice([{}, "none", None, [None], [42]])
    elif kind == 22:
        claim["span"] = "x" * 60  # over the limit the test sets
    elif kind == 23:
        record["question"] = "q" * 45
    elif kind == 24:
        claim["feedback_resolved"] = rng.choice(["yes", 1])
    elif kind == 25:
        record["query_ambiguous"] = rng.choice(["false", 0])
    elif kind == 26:
        claim["entailment"] = {"target": "Entailment"}
    elif kind == 34:  # labels that contradict each other, in the canonical spelling
        claim["labels"] = rng.choice([["SUPPORTED", "UNSUPPORTED"], ["PARTIAL", "UNSUPPORTED"],
                                      ["OUTDATED", "SUPPORTED", "ACCESS_GAP"]])
    # edits of the text itself
    line = json.dumps(record)
    if kind == 27:
        return line.replace('"response_id"', '"response_id": "dup", "response_id"', 1)
    if kind == 28:
        return line.replace("]", ", ]", 1) if "]" in line else line[:-1] + ", }"
    if kind == 29:
        return line.replace('"labels"', '"weight": NaN, "labels"', 1)
    if kind == 30:
        return json.dumps(record, ensure_ascii=True).replace("e", "\\u0065", 1)
    if kind == 31:
        return line.replace("\\n", "\\b", 1) if "\\n" in line else line.replace('"', '"\\f', 3)
    if kind == 32:
        return "[" + line + "]"
    if kind == 33:
        return line[: len(line) // 2]
    return line


def random_file(path: Path, seed: int, n: int = 300) -> None:
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        rid = f"r-{rng.randrange(n // 2) if rng.random() < 0.1 else i}"  # some ids come back: revisions
        record = plain_record(rng, rid)
        lines.append(_edit(rng, record) if rng.random() < 0.4 else json.dumps(record))
        if rng.random() < 0.02:
            lines.append("   ")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def stored(store: Store) -> dict[str, list]:
    return {
        "responses": store.query(f"SELECT {RESPONSE_COLUMNS} FROM responses ORDER BY response_id, revision"),
        "claims": store.query(f"SELECT {CLAIM_COLUMNS} FROM claims ORDER BY response_id, revision, claim_idx"),
        "quarantine": store.query(f"SELECT {QUARANTINE_COLUMNS} FROM quarantine ORDER BY location, status"),
        "batches": store.query("SELECT source_name, records_total, accepted, new_responses, new_revisions, unchanged, "
                               "quarantined FROM import_batches ORDER BY batch_id"),
    }


def import_both(tmp_path: Path, monkeypatch, files: list[Path], chunk_size: int = 40) -> tuple[dict, dict, int]:
    """Import ``files`` in order into two databases, with and without the bulk check; (bulk, per-record,
    how many records the bulk check took)."""
    taken = 0
    real = bulk.stage_plain

    def counting(texts, limits, **options):
        nonlocal taken
        found = real(texts, limits, **options)
        taken += len(found.positions)
        return found

    monkeypatch.setattr(batches, "stage_plain", counting)
    results = []
    for name, on in (("bulk", True), ("per-record", False)):
        monkeypatch.setattr(batches, "BULK_VALIDATION", on)
        store = Store(tmp_path / f"{name}.duckdb")
        ensure_default_profile(store, SYSTEM)
        for file in files:
            report = import_path(store, SYSTEM, file, chunk_size=chunk_size, score=False)
            assert report.accepted + report.quarantined == report.records
        results.append(stored(store))
        store.close()
    return results[0], results[1], taken


@pytest.fixture
def small_limits(monkeypatch):
    """Text limits small enough that the random records cross them (settings are read from the environment)."""
    for name, value in (("HRI_MAX_SPAN_CHARS", "50"), ("HRI_MAX_QUESTION_CHARS", "40")):
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_random_files_are_stored_alike_with_and_without_the_bulk_check(tmp_path, monkeypatch, small_limits, seed):
    source = tmp_path / "answers.jsonl"
    random_file(source, seed)
    with_bulk, per_record, taken = import_both(tmp_path, monkeypatch, [source])
    assert taken > 100  # most plain records went the bulk way: the comparison is not of one path with itself
    assert len(with_bulk["quarantine"]) > 30  # and many near-misses were refused, by the per-record path
    for table in ("responses", "claims", "quarantine", "batches"):
        assert with_bulk[table] == per_record[table], table


def test_a_file_imported_again_in_other_spellings_is_unchanged_either_way(tmp_path, monkeypatch):
    """The content hash of the compiled check equals the per-record path's: the same records written with escapes
    and other key orders change nothing."""
    rng = random.Random(11)
    records = [plain_record(rng, f"r-{i}") for i in range(200)]
    first, again = tmp_path / "answers.jsonl", tmp_path / "answers-again.jsonl"
    first.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    respelled = (json.dumps(dict(reversed(list(r.items())))).replace('"response_id"', '"\\u0072esponse_id"')
                 for r in records)
    again.write_text("".join(line + "\n" for line in respelled), encoding="utf-8")
    with_bulk, per_record, taken = import_both(tmp_path, monkeypatch, [first, again])
    assert taken >= 200
    assert with_bulk == per_record
    assert [b[1:] for b in with_bulk["batches"]] == [(200, 200, 200, 0, 0, 0), (200, 200, 0, 0, 200, 0)]


def test_a_changed_record_is_a_new_revision_either_way(tmp_path, monkeypatch):
    rng = random.Random(5)
    records = [plain_record(rng, f"r-{i}") for i in range(60)]
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    for record in records[::3]:
        record["answer"] = "Changed."
    second.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with_bulk, per_record, _ = import_both(tmp_path, monkeypatch, [first, second])
    assert with_bulk == per_record
    assert with_bulk["batches"][1][1:] == (60, 60, 0, 20, 40, 0)


def test_the_hostile_corpus_is_stored_alike_with_and_without_the_bulk_check(tmp_path, monkeypatch):
    from tests.helpers.paths import REPO_ROOT

    files = sorted((REPO_ROOT / "tests" / "data" / "hostile").glob("*.jsonl"))
    assert len(files) > 20
    with_bulk, per_record, taken = import_both(tmp_path, monkeypatch, files, chunk_size=3)
    assert taken > 20
    assert with_bulk == per_record


def test_every_label_pair_is_refused_or_stored_alike_with_and_without_the_bulk_check(tmp_path, monkeypatch):
    """The bulk check never accepts a label set the record model refuses (issue 33: SUPPORTED + UNSUPPORTED was
    stored by the fast path); each refused record is quarantined with its claim, field and rule named."""
    pairs = [[first.value, second.value] for first in LABEL_ORDER for second in LABEL_ORDER if first != second]
    source = tmp_path / "pairs.jsonl"
    source.write_text("".join(json.dumps({"response_id": f"p-{i}", "claims": [{"labels": ["SUPPORTED"]},
                                                                              {"labels": labels}]}) + "\n"
                              for i, labels in enumerate(pairs)), encoding="utf-8")
    with_bulk, per_record, taken = import_both(tmp_path, monkeypatch, [source])
    assert with_bulk == per_record
    refused = {i for i, labels in enumerate(pairs) if label_set_problem(labels) is not None}
    assert len(refused) == 2 * (7 + 1)  # SUPPORTED with each of the 7 others, PARTIAL with UNSUPPORTED: both orders
    assert taken == len(pairs) - len(refused)
    reasons = {rid: json.loads(why) for _, _, rid, _, why, _ in with_bulk["quarantine"]}
    assert set(reasons) == {f"p-{i}" for i in refused}
    first = pairs.index(["SUPPORTED", "UNSUPPORTED"])
    assert reasons[f"p-{first}"] == [{"field": "claims[1].labels",
                                      "message": "SUPPORTED stands alone; got SUPPORTED, UNSUPPORTED"}]
