"""Writing validated responses and claims: revisions instead of silent overwrites.

``insert_responses`` takes a chunk of validated ``hri_core.Response`` records (with the raw text the
user sent) and stores them set-based inside the import's write transaction: the chunk is staged as
Arrow tables (readable in SQL for the duration of the merge, ``Transaction.relation``) and merged
with a handful of SQL statements. A response whose canonical content is unchanged is left alone
(re-importing a file is idempotent); a changed one becomes a new revision and the old revision stops
being current. The read models follow in the same transaction (``register.readmodels.hub.revisions_written``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

import pyarrow as pa

from hri_core import Response
from hri_core import fingerprint as fingerprints
from hri_core.models import CLAIM_EXTENSIONS, RESPONSE_EXTENSIONS
from hri_core.vocabulary import dimension_mask, label_mask
from register.db.store import Transaction
from register.readmodels.hub import RevisionsWritten, revisions_written


def content_hash(response: Response) -> str:
    """SHA-256 of the canonical validated record: formatting and key order do not create revisions."""
    return _hash_of(response.model_dump(mode="json"))


def canonical_json(dump: dict) -> str:
    """The text ``content_hash`` hashes: the record's JSON dump with sorted keys and no spaces, non-ASCII text
    escaped (``hri_core.fingerprint.canonical_json``'s defaults)."""
    return fingerprints.canonical_json(dump)


def _hash_of(dump: dict) -> str:
    return fingerprints.fingerprint(dump)


def _json_or_none(value: object) -> str | None:
    """An extension's JSON text for a JSON column (None when the record left it out)."""
    return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class MergeCounts:
    new_responses: int
    new_revisions: int
    unchanged: int


_TS = pa.timestamp("us", tz="UTC")
# the interchange format's extensions (hri_core.models' RESPONSE_EXTENSIONS and CLAIM_EXTENSIONS) are stored
# since migration 009; JSON ones as JSON text. The staged columns (``stage``; ``register.ingest.bulk`` stages plain
# records to the very same)
RESPONSE_SCHEMA = pa.schema([
    ("response_id", pa.string()), ("content_hash", pa.string()), ("use_case", pa.string()), ("model", pa.string()),
    ("created_at", _TS), ("question", pa.string()), ("answer", pa.string()), ("stakes", pa.string()),
    ("claim_count", pa.int32()), ("raw", pa.string()), ("retrieved_context", pa.string()), ("gt_answer", pa.string()),
    ("query_ambiguous", pa.bool_()), ("gt_claims", pa.string())])
CLAIM_SCHEMA = pa.schema([
    ("response_id", pa.string()), ("claim_idx", pa.int32()), ("claim_id", pa.string()), ("text", pa.string()),
    ("labels", pa.list_(pa.string())), ("label_mask", pa.int32()), ("dimensions", pa.list_(pa.string())),
    ("dim_mask", pa.int32()), ("criticality", pa.int32()), ("source_id", pa.string()), ("span", pa.string()),
    ("feedback_at", _TS), ("feedback_count", pa.int32()), ("feedback_resolved", pa.bool_()), ("category", pa.string()),
    ("is_core", pa.bool_()), ("contradicted_by", pa.string()), ("entailment", pa.string())])


def stage(responses: list[tuple[Response, str]]) -> tuple[pa.Table, pa.Table]:
    """Validated responses (with their raw text) as the Arrow tables ``merge_staged`` takes: responses and claims.

    ``register.ingest.bulk`` stages plain JSON Lines records to the very same columns."""
    r_cols: dict[str, list] = {k: [] for k in (
        "response_id", "content_hash", "use_case", "model", "created_at", "question", "answer", "stakes",
        "claim_count", "raw", *RESPONSE_EXTENSIONS)}
    c_cols: dict[str, list] = {k: [] for k in (
        "response_id", "claim_idx", "claim_id", "text", "labels", "label_mask", "dimensions", "dim_mask",
        "criticality", "source_id", "span", "feedback_at", "feedback_count", "feedback_resolved",
        *CLAIM_EXTENSIONS)}
    for response, raw in responses:
        rid = response.response_id
        # one dump per record serves the content hash and the JSON extensions (nested: kept as JSON)
        dump = response.model_dump(mode="json")
        for key, value in (("response_id", rid), ("content_hash", _hash_of(dump)),
                           ("use_case", response.use_case), ("model", response.model),
                           ("created_at", response.created_at), ("question", response.question),
                           ("answer", response.answer), ("stakes", response.stakes),
                           ("claim_count", len(response.claims)), ("raw", raw),
                           ("retrieved_context", _json_or_none(dump.get("retrieved_context"))),
                           ("gt_answer", response.gt_answer), ("query_ambiguous", response.query_ambiguous),
                           ("gt_claims", _json_or_none(dump.get("gt_claims")))):
            r_cols[key].append(value)
        claim_dumps = dump["claims"]
        for idx, claim in enumerate(response.claims):
            dims = None if claim.dimensions is None else [d.value for d in claim.dimensions]
            for key, entry in (("response_id", rid), ("claim_idx", idx), ("claim_id", claim.claim_id),
                               ("text", claim.text), ("labels", [lab.value for lab in claim.labels]),
                               ("label_mask", label_mask(claim.labels)), ("dimensions", dims),
                               ("dim_mask", None if dims is None else dimension_mask(dims)),
                               ("criticality", claim.criticality), ("source_id", claim.source_id),
                               ("span", claim.span), ("feedback_at", claim.feedback_at),
                               ("feedback_count", claim.feedback_count),
                               ("feedback_resolved", claim.feedback_resolved),
                               ("category", claim.category), ("is_core", claim.is_core),
                               ("contradicted_by", claim.contradicted_by),
                               ("entailment", _json_or_none(claim_dumps[idx].get("entailment")))):
                c_cols[key].append(entry)
    return pa.table(r_cols, schema=RESPONSE_SCHEMA), pa.table(c_cols, schema=CLAIM_SCHEMA)


def insert_responses(tx: Transaction, batch_id: int, imported_at: datetime,
                     responses: list[tuple[Response, str]]) -> MergeCounts:
    """Merge a chunk of validated responses (unique ids within the chunk) into the register, inside the
    caller's write transaction."""
    if not responses:
        return MergeCounts(0, 0, 0)
    return merge_staged(tx, batch_id, imported_at, *stage(responses))


def merge_staged(tx: Transaction, batch_id: int, imported_at: datetime, staged_r: pa.Table,
                 staged_c: pa.Table) -> MergeCounts:
    """Merge staged responses and claims (``stage``'s columns; unique response ids) into the register, inside
    the caller's write transaction: new, new revision (the old one stops being current) or unchanged."""
    if not staged_r.num_rows:
        return MergeCounts(0, 0, 0)
    with tx.relation("_staged_r", staged_r), tx.relation("_staged_c", staged_c):
        # the stored revisions of the chunk's ids, found in one pass over the responses: the current one and the
        # highest revision number both come from it (two joins with the whole table were most of what made a chunk
        # dearer as the register grew; docs/performance.md)
        tx.execute("""
            CREATE OR REPLACE TEMP TABLE _stored AS
            SELECT response_id, revision, is_current, content_hash, response_key FROM responses
            WHERE response_id IN (SELECT response_id FROM _staged_r)
        """)
        tx.execute("""
            CREATE OR REPLACE TEMP TABLE _plan AS
            SELECT s.response_id, s.content_hash,
                   cur.revision AS current_revision,
                   CASE WHEN cur.revision IS NULL THEN 'new'
                        WHEN cur.content_hash = s.content_hash THEN 'unchanged'
                        ELSE 'revised' END AS outcome,
                   coalesce(mx.max_revision, 0) + 1 AS next_revision,
                   nextval('seq_response_key') AS response_key, cur.response_key AS current_key
            FROM _staged_r s
            LEFT JOIN _stored cur ON cur.response_id = s.response_id AND cur.is_current
            LEFT JOIN (SELECT response_id, max(revision) AS max_revision FROM _stored GROUP BY response_id) mx
                   ON mx.response_id = s.response_id
        """)
        tx.execute("DROP TABLE _stored")
        revised = tx.query("SELECT count(*) FROM _plan WHERE outcome = 'revised'")[0][0]
        # the new revisions; a revised response's current revision (and its claims) stops being current
        change = RevisionsWritten("SELECT response_id, response_key FROM _plan WHERE outcome <> 'unchanged'",
                                  "SELECT current_key FROM _plan WHERE outcome = 'revised'" if revised else None)
        with revisions_written(tx, change):
            for table in ("responses", "claims"):  # allow-listed identifiers
                tx.execute(f"""
                    UPDATE {table} SET is_current = false
                    WHERE is_current AND response_id IN (SELECT response_id FROM _plan WHERE outcome = 'revised')
                """)
            tx.execute("""
                INSERT INTO responses (response_id, revision, response_key, is_current, content_hash, batch_id,
                                       imported_at, use_case, model, created_at, question, answer, stakes,
                                       claim_count, raw, retrieved_context, gt_answer, query_ambiguous, gt_claims)
                SELECT s.response_id, p.next_revision, p.response_key, true, s.content_hash, $batch, $at, s.use_case,
                       s.model, s.created_at, s.question, s.answer, s.stakes, s.claim_count, s.raw,
                       s.retrieved_context::JSON, s.gt_answer, s.query_ambiguous, s.gt_claims::JSON
                FROM _staged_r s JOIN _plan p USING (response_id) WHERE p.outcome <> 'unchanged'
            """, {"batch": batch_id, "at": imported_at})
            tx.execute("""
                INSERT INTO claims (response_id, revision, response_key, claim_idx, is_current, claim_id, text,
                                    labels, label_mask, dimensions, dim_mask, criticality, source_id, span,
                                    feedback_at, feedback_count, feedback_resolved, category, is_core,
                                    contradicted_by, entailment)
                SELECT c.response_id, p.next_revision, p.response_key, c.claim_idx, true, c.claim_id, c.text,
                       c.labels, c.label_mask, c.dimensions, c.dim_mask, c.criticality, c.source_id, c.span,
                       c.feedback_at, c.feedback_count, c.feedback_resolved, c.category, c.is_core,
                       c.contradicted_by, c.entailment::JSON
                FROM _staged_c c JOIN _plan p USING (response_id) WHERE p.outcome <> 'unchanged'
            """)
        counts = dict(tx.query("SELECT outcome, count(*) FROM _plan GROUP BY outcome"))
        tx.execute("DROP TABLE _plan")
    return MergeCounts(counts.get("new", 0), counts.get("revised", 0), counts.get("unchanged", 0))
