"""register: the system of record of the HRI console (DuckDB).

Subpackages by concern: ``db`` (the store -- the one gateway to DuckDB --, the SQL parameter builder,
migrations, the audit trail), ``access`` (identity, permissions, four eyes, source access), ``readmodels``
(the tables kept for the console's reads, and the hub its writers call), ``scoring`` (profiles, the bulk SQL
scorer, mitigation, Authority, impact preview, reproduction, calibration, elicitation), ``ingest`` (import with
quarantine, records, revisions, exports), ``labels`` (rubric, batches, workbench, adjudication, agreement),
``governance`` (registers, evidence rules, checklist, report), ``verify`` (judges, the verification pipeline,
proposals), ``console`` (the pages' queries, the review queue), ``feedback`` (validated feedback), ``spark``
(the Spark scoring job) and ``cli`` (``python -m register``); every setting is in ``settings`` and every error
in ``errors``. Only ``register.db`` imports duckdb; every write goes through a service function that takes the
acting user and appends its audit event in the same transaction. The map: docs/architecture.md.
"""

from register.db.store import SYSTEM, Actor, Store
from register.errors import AuditChainBroken, ImportRejected, MigrationError, NotFound, RegisterError, StaleEdit

__all__ = [
           "SYSTEM",
           "Actor",
           "AuditChainBroken",
           "ImportRejected",
           "MigrationError",
           "NotFound",
           "RegisterError",
           "StaleEdit",
           "Store",
]
