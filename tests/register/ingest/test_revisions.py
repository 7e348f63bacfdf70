"""Re-importing a response: changed content becomes a new revision (the old one kept, not current);
unchanged content, whatever its formatting, adds nothing (register/ingest/records.py)."""

from __future__ import annotations

import json

import pytest

from hri_core import parse_response
from register import Actor, Store
from register.db.store import Change, utc_now
from register.ingest.records import MergeCounts, content_hash, insert_responses
from tests.helpers.actors import enrol

ANALYST = Actor("Dana Analyst", "admin")

@pytest.fixture
def store(store):
    """The shared register, with accounts for this module's actors (the register re-reads them on every write)."""
    enrol(store, ANALYST)
    return store


ORIGINAL = {
    "response_id": "r-001", "use_case": "supplier-contracts", "model": "rag-v3",
    "created_at": "2026-11-01T09:30:00Z", "question": "What does the SLA cover?", "answer": "24/7 support.",
    "claims": [
        {"claim_id": "r-001-1", "text": "The SLA includes 24/7 support.", "labels": ["CONTRADICTED"],
         "dimensions": ["F", "C"], "criticality": 3, "source_id": "contract-2024-07"},
        {"claim_id": "r-001-2", "text": "The contract expires in 2026.", "labels": ["SUPPORTED"]},
    ],
}
REVISED = {
    **ORIGINAL, "answer": "Support is Mon-Fri 8:00-18:00.",
    "claims": [{"claim_id": "r-001-1b", "text": "Support hours are Mon-Fri 8:00-18:00.", "labels": ["SUPPORTED"],
                "criticality": 3, "source_id": "contract-2024-07"}],
}
OTHER = {"response_id": "r-002", "claims": [{"labels": ["UNSUPPORTED"], "criticality": 2}]}


def import_records(store: Store, records: list[dict], raws: list[str] | None = None) -> tuple[int, MergeCounts]:
    """One import batch through ``Store.write``; ``raws`` is the text as the user sent it."""
    raws = raws or [json.dumps(r) for r in records]
    parsed = [(parse_response(r), raw) for r, raw in zip(records, raws, strict=True)]

    def fn(cur) -> Change:
        batch_id = cur.scalar("SELECT nextval('seq_batch')")
        now = utc_now()
        cur.execute("INSERT INTO import_batches (batch_id, source_name, format, started_at, actor_name) "
                    "VALUES (?, 'upload.jsonl', 'jsonl', ?, ?)", [batch_id, now, ANALYST.name])
        counts = insert_responses(cur, batch_id, now, parsed)
        return Change("import_batch", str(batch_id), None, None, result=(batch_id, counts))

    return store.write(ANALYST, "import.file", fn)


def revisions(store: Store, response_id: str) -> list[tuple]:
    return store.query("SELECT revision, is_current, batch_id, answer, claim_count FROM responses "
                       "WHERE response_id = ? ORDER BY revision", [response_id])


def claims_of(store: Store, response_id: str) -> list[tuple]:
    return store.query("SELECT revision, claim_idx, claim_id, text, labels, criticality FROM claims "
                       "WHERE response_id = ? ORDER BY revision, claim_idx", [response_id])


def table_counts(store: Store) -> tuple[int, int]:
    return (store.query_one("SELECT count(*) FROM responses")[0], store.query_one("SELECT count(*) FROM claims")[0])


def test_a_first_import_creates_revision_one(store):
    batch, counts = import_records(store, [ORIGINAL, OTHER])
    assert counts == MergeCounts(new_responses=2, new_revisions=0, unchanged=0)
    assert revisions(store, "r-001") == [(1, True, batch, "24/7 support.", 2)]
    assert [c[:3] for c in claims_of(store, "r-001")] == [(1, 0, "r-001-1"), (1, 1, "r-001-2")]
    assert [c[2] for c in claims_of(store, "r-002")] == ["r-002-1"]  # id given by the model when missing
    (stored_hash,) = store.query_one("SELECT content_hash FROM responses WHERE response_id = 'r-001'")
    assert stored_hash == content_hash(parse_response(ORIGINAL))


def test_a_changed_response_becomes_revision_two_and_keeps_revision_one(store):
    first_batch, _ = import_records(store, [ORIGINAL])
    second_batch, counts = import_records(store, [REVISED])

    assert counts == MergeCounts(new_responses=0, new_revisions=1, unchanged=0)
    assert revisions(store, "r-001") == [
        (1, False, first_batch, "24/7 support.", 2),
        (2, True, second_batch, "Support is Mon-Fri 8:00-18:00.", 1),
    ]
    assert store.query("SELECT response_id, revision FROM responses WHERE is_current") == [("r-001", 2)]


def test_claims_of_both_revisions_are_kept(store):
    import_records(store, [ORIGINAL])
    import_records(store, [REVISED])
    assert claims_of(store, "r-001") == [
        (1, 0, "r-001-1", "The SLA includes 24/7 support.", ["CONTRADICTED"], 3),
        (1, 1, "r-001-2", "The contract expires in 2026.", ["SUPPORTED"], 1),
        (2, 0, "r-001-1b", "Support hours are Mon-Fri 8:00-18:00.", ["SUPPORTED"], 3),
    ]


def test_claims_follow_their_revision_in_and_out_of_current(store):
    """The scorer reads current claims only: a claim is current exactly when its revision is."""
    import_records(store, [ORIGINAL])
    import_records(store, [REVISED])
    rows = store.query("SELECT c.revision, c.claim_id, c.is_current, r.is_current FROM claims c "
                       "JOIN responses r USING (response_id, revision) ORDER BY c.revision, c.claim_idx")
    assert [(rev, cid, c_cur) for rev, cid, c_cur, _ in rows] == [
        (1, "r-001-1", False), (1, "r-001-2", False), (2, "r-001-1b", True)]
    assert all(c_cur == r_cur for *_, c_cur, r_cur in rows)


def test_unchanged_content_is_counted_unchanged_and_adds_no_rows(store):
    import_records(store, [ORIGINAL, OTHER])
    before = (table_counts(store), revisions(store, "r-001"), claims_of(store, "r-001"))

    _, counts = import_records(store, [ORIGINAL, OTHER])

    assert counts == MergeCounts(new_responses=0, new_revisions=0, unchanged=2)
    assert (table_counts(store), revisions(store, "r-001"), claims_of(store, "r-001")) == before


def test_formatting_and_key_order_do_not_make_a_revision(store):
    import_records(store, [ORIGINAL])
    reordered = dict(reversed(list(ORIGINAL.items())))
    reformatted = json.dumps(reordered, indent=2)
    noisy = {**reordered, "claims": [{**c, "labels": [lab.lower() + " " for lab in c["labels"]]}
                                     for c in ORIGINAL["claims"]]}  # labels are read case-insensitively

    _, counts = import_records(store, [noisy], [reformatted])

    assert counts == MergeCounts(0, 0, 1)
    assert table_counts(store) == (1, 2)
    # the raw text of revision 1 is what was first sent: an unchanged re-import does not overwrite it
    (raw,) = store.query_one("SELECT raw FROM responses WHERE response_id = 'r-001'")
    assert json.loads(raw) == ORIGINAL


def test_going_back_to_earlier_content_is_a_third_revision(store):
    import_records(store, [ORIGINAL])
    import_records(store, [REVISED])
    _, counts = import_records(store, [ORIGINAL])
    assert counts == MergeCounts(0, 1, 0)
    assert [(rev, cur) for rev, cur, *_ in revisions(store, "r-001")] == [(1, False), (2, False), (3, True)]
    hashes = dict(store.query("SELECT revision, content_hash FROM responses WHERE response_id = 'r-001'"))
    assert hashes[1] == hashes[3] != hashes[2]
    assert [c[:3] for c in claims_of(store, "r-001") if c[0] == 3] == [(3, 0, "r-001-1"), (3, 1, "r-001-2")]


def test_one_batch_mixing_new_changed_and_unchanged(store):
    import_records(store, [ORIGINAL, OTHER])
    third = {"response_id": "r-003", "claims": []}
    batch, counts = import_records(store, [REVISED, OTHER, third])
    assert counts == MergeCounts(new_responses=1, new_revisions=1, unchanged=1)
    assert store.query("SELECT response_id, revision, batch_id FROM responses WHERE is_current "
                       "ORDER BY response_id") == [("r-001", 2, batch), ("r-002", 1, batch - 1), ("r-003", 1, batch)]
    assert revisions(store, "r-003") == [(1, True, batch, None, 0)]


def test_a_failed_import_leaves_no_revision_behind(store):
    import_records(store, [ORIGINAL])
    before = (table_counts(store), revisions(store, "r-001"))
    parsed = [(parse_response(REVISED), json.dumps(REVISED))]

    def fn(cur) -> Change:
        insert_responses(cur, 99, utc_now(), parsed)
        raise RuntimeError("the rest of the file could not be read")

    with pytest.raises(RuntimeError, match="could not be read"):
        store.write(ANALYST, "import.file", fn)
    assert (table_counts(store), revisions(store, "r-001")) == before
