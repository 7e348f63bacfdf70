"""register: the system of record of the HRI console (DuckDB).

Schema and migrations, import with quarantine, the bulk SQL scorer, profiles, audit trail. Only
``register.db.store`` imports duckdb; every write goes through a service function that takes the
acting user and appends its audit event in the same transaction.
"""

from register.errors import AuditChainBroken, ImportRejected, MigrationError, NotFound, RegisterError, StaleEdit
from register.db.store import SYSTEM, Actor, Store

__all__ = ["Actor", "AuditChainBroken", "ImportRejected", "MigrationError", "NotFound", "RegisterError",
           "SYSTEM", "StaleEdit", "Store"]
