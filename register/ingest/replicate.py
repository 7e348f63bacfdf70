"""Millions of synthetic responses for benchmarks: copies of validated templates, made in SQL.

Importing millions of records through per-record validation costs a long time (docs/performance.md, "Figures
behind the code"); a benchmark at that size needs the database, not the import. ``replicate`` adds ``n``
responses, each a copy of one *template*: a current, first-revision response of an import batch that went through full
validation (``python -m register demo --synthetic N --bulk`` imports 20,000 seeded synthetic responses
through the importer and makes the rest copies of them).

A copy is the template under a new id ``<template id>~<copy number>``: the same answer, claims, labels and
times, its own ``response_key``, and the ``raw`` record and ``content_hash`` the importer would store for
that record, computed in bulk: the template's canonical JSON (``register.ingest.records.content_hash``)
and raw line are kept with a placeholder for the id, and DuckDB substitutes each copy's id and hashes
(``sha256``), so importing a copy's raw line later finds it unchanged. Copies go in one transaction per
round of templates, in an import batch of their own (format ``synthetic:copies``, audited), and are
scored under the active profile by the import's scoring step (one score run for the batch).

The statistics of the copies are those of the templates repeated: right for timing scans, joins and
rescoring at size; not a new sample (search matches every copy of a template).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa

from hri_core.models import parse_response
from register.access.permissions import Permission, authorize
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import RegisterError
from register.ingest.importer import ProgressFn
from register.ingest.records import canonical_json, content_hash
from register.readmodels import hub
from register.scoring.profiles import active_profile
from register.scoring.scorer import score_imported

__all__ = ["COPY_FORMAT", "ReplicaReport", "replicate"]

COPY_FORMAT = "synthetic:copies"
_PLACEHOLDER = "@@replica-response-id@@"  # no character JSON escapes: it stands in a JSON string as it is

_SCRATCH_R, _SCRATCH_C = "replica_template_responses", "replica_template_claims"  # dropped when done


@dataclass(frozen=True)
class ReplicaReport:
    """What ``replicate`` added: ``responses`` and ``claims`` in import batch ``batch_id``, scored in
    ``score_run_id``."""

    batch_id: int
    responses: int
    claims: int
    templates: int
    score_run_id: int | None


def _templates(store: Store, template_batch: int) -> pa.Table:
    """The batch's current first revisions with their canonical JSON and raw line, the id a placeholder;
    each checked to reproduce its stored content hash (so a copy's hash is what the importer computes)."""
    rows = store.query("SELECT response_id, raw, content_hash FROM responses WHERE batch_id = ? AND is_current "
                       "AND revision = 1 ORDER BY response_key", [template_batch])
    if not rows:
        raise RegisterError(f"import batch {template_batch} has no current first-revision response to copy")
    ids, canonical, raw = [], [], []
    for response_id, stored_raw, stored_hash in rows:
        record = json.loads(stored_raw)
        if not isinstance(record, dict) or record.get("response_id") != response_id:
            raise RegisterError(f"response {response_id}: raw: not a JSON object naming the response; it cannot "
                                "be a template")
        response = parse_response(record, record=response_id)
        if content_hash(response) != stored_hash:
            raise RegisterError(f"response {response_id}: content_hash: the stored hash is not the importer's for "
                                "its record; it cannot be a template")
        dump = canonical_json({**response.model_dump(mode="json"), "response_id": _PLACEHOLDER})
        line = json.dumps({**record, "response_id": _PLACEHOLDER}, ensure_ascii=False)
        if dump.count(_PLACEHOLDER) != 1 or line.count(_PLACEHOLDER) != 1:
            raise RegisterError(f"response {response_id}: its record holds the placeholder text; not a template")
        ids.append(response_id)
        canonical.append(dump)
        raw.append(line)
    return pa.table({"response_id": ids, "canonical": canonical, "raw_line": raw})


def _copy_round(batch_id: int, number: int, take: int) -> Callable[[Transaction], Change]:
    """One round: copy ``take`` templates (in key order) under ids ``<template id>~<number>``."""

    def write(tx: Transaction) -> Change:
        tx.execute(f"CREATE OR REPLACE TEMP TABLE _copies AS SELECT response_id AS template_id, "
                   f"response_id || $suffix AS copy_id, nextval('seq_response_key') AS copy_key "
                   f"FROM (SELECT response_id FROM {_SCRATCH_R} ORDER BY response_key LIMIT $take)",
                   {"suffix": f"~{number}", "take": take})
        with hub.revisions_written(tx, hub.RevisionsWritten("SELECT copy_id, copy_key FROM _copies")):  # all new
            tx.execute(f"""
                INSERT INTO responses
                SELECT r.* EXCLUDE (canonical, raw_line) REPLACE (
                           k.copy_id AS response_id, 1 AS revision, k.copy_key AS response_key,
                           sha256(replace(r.canonical, $placeholder, k.copy_id)) AS content_hash,
                           $batch AS batch_id, $at AS imported_at,
                           replace(r.raw_line, $placeholder, k.copy_id)::JSON AS raw)
                FROM {_SCRATCH_R} r JOIN _copies k ON r.response_id = k.template_id""",
                       {"placeholder": _PLACEHOLDER, "batch": batch_id, "at": utc_now()})
            claims = tx.scalar(f"""
                INSERT INTO claims
                SELECT c.* REPLACE (k.copy_id AS response_id, 1 AS revision, k.copy_key AS response_key)
                FROM {_SCRATCH_C} c JOIN _copies k ON c.response_id = k.template_id""")
        tx.execute("UPDATE import_batches SET records_total = records_total + $n, accepted = accepted + $n, "
                   "new_responses = new_responses + $n WHERE batch_id = $batch", {"n": take, "batch": batch_id})
        tx.execute("DROP TABLE _copies")
        return Change("import_batch", str(batch_id), None, {"round": number, "responses": take, "claims": claims},
                      result=int(claims or 0))

    return write


def _unstage(tx: Transaction) -> Change:
    for table in (_SCRATCH_R, _SCRATCH_C):  # allow-listed identifiers
        tx.execute(f"DROP TABLE IF EXISTS {table}")
    return Change("import_batch", None, None, {"scratch": "dropped"})


def replicate(store: Store, actor: Actor, template_batch: int, n: int, progress: ProgressFn | None = None,
              *, score: bool = True) -> ReplicaReport:
    """Add ``n`` copies of import batch ``template_batch``'s responses (round-robin over the templates, in
    rounds of one copy each) as one new import batch, then score it under the active profile."""
    authorize(store, actor, Permission.IMPORT, entity_type="import_batch")
    if n < 1:
        raise RegisterError(f"copies: {n} is not a positive number")
    templates = _templates(store, template_batch)
    size = templates.num_rows
    rounds = math.ceil(n / size)

    def open_batch(tx: Transaction) -> Change:
        batch_id = tx.scalar("SELECT nextval('seq_batch')")
        tx.execute("INSERT INTO import_batches (batch_id, source_name, format, started_at, actor_name) "
                   "VALUES (?, ?, ?, ?, ?)", [batch_id, f"copies of import batch {template_batch}", COPY_FORMAT,
                                               utc_now(), actor.name])
        return Change("import_batch", str(batch_id), None, {"format": COPY_FORMAT, "templates": size,
                                                             "template_batch": template_batch, "copies": n},
                      result=batch_id)

    def stage(tx: Transaction) -> Change:
        # the templates' rows, once, in scratch tables: each round then reads 20,000 rows, not the whole register
        with tx.relation("_templates", templates):
            tx.execute(f"CREATE OR REPLACE TABLE {_SCRATCH_R} AS SELECT r.*, t.canonical, t.raw_line FROM responses r "
                       "JOIN _templates t USING (response_id) WHERE r.is_current")
        tx.execute(f"CREATE OR REPLACE TABLE {_SCRATCH_C} AS SELECT * FROM claims WHERE is_current "
                   f"AND response_id IN (SELECT response_id FROM {_SCRATCH_R})")
        clash = tx.scalar(f"SELECT min(response_id) FROM responses WHERE response_id IN "
                          f"(SELECT response_id || '~1' FROM {_SCRATCH_R})")
        if clash is not None:
            raise RegisterError(f"response {clash} is already in the register: these copies were made before")
        return Change("import_batch", str(template_batch), None, {"staged_templates": size})

    added_claims = 0
    try:
        store.write(actor, "import.copies_staged", stage)  # refused here, before a batch exists, if made before
        batch_id = store.write(actor, "import.start", open_batch)
        for number in range(1, rounds + 1):
            added_claims += store.write(actor, "import.copies",
                                        _copy_round(batch_id, number, min(size, n - (number - 1) * size)))
            if progress:
                progress(min(n, number * size), n, "synthetic copies")
    finally:
        store.write(actor, "import.copies_unstaged", _unstage)

    def finish(tx: Transaction) -> Change:
        tx.execute("UPDATE import_batches SET finished_at = ? WHERE batch_id = ?", [utc_now(), batch_id])
        return Change("import_batch", str(batch_id), None, {"responses": n, "claims": added_claims})

    store.write(actor, "import.batch", finish)
    hub.revisions_committed(store, actor, progress=progress)
    run_id = None
    if score:
        if progress:
            progress(n, n, "scoring the copies")
        run_id = score_imported(store, actor, active_profile(store), batch_id=batch_id).run_id
    return ReplicaReport(batch_id, n, added_claims, size, run_id)
