"""register: the system of record of the HRI console (DuckDB).

Subpackages by concern: ``db`` (the store -- the one gateway to DuckDB --, the SQL parameter builder,
migrations, the audit trail), ``access`` (identity, permissions, source access), ``scoring``
(profiles, the bulk SQL scorer, impact preview, reproduction, calibration, elicitation), ``ingest``
(import with quarantine, records, exports), ``governance`` (registers, evidence rules, checklist,
report) and ``console`` (the pages' queries, the review queue); every error is in ``errors``. Only
``register.db`` imports duckdb; every write goes through a service function that takes the acting
user and appends its audit event in the same transaction.
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
