"""Errors of the register (the system of record). One base class; pages render them in one place."""

from __future__ import annotations


class RegisterError(Exception):
    """Base error of the register: ``title`` is a short human heading, the message says what to do."""

    title = "The request could not be completed"


class NotFound(RegisterError):
    title = "Not found"


class StaleEdit(RegisterError):
    """A row changed since it was read: the edit is refused, never silently overwritten."""

    title = "Changed by someone else"


class ImportRejected(RegisterError):
    """A whole file was refused (wrong type, too large, unreadable). Records inside it are never dropped."""

    title = "File refused"


class MigrationError(RegisterError):
    title = "Database migration failed"


class AuditChainBroken(RegisterError):
    title = "Audit trail does not verify"
