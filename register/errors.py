"""Every error the register raises, in one place.

One base class, ``RegisterError``: ``title`` is a short human heading and the message says what went
wrong and what to do. Pages render them in one place (``ui.framework.errors.show_error``), the command
line in another (``register.cli.common.render_error``); neither needs to know a database library: the
store (``register.db.store``) turns DuckDB's exceptions into the database errors below.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "LOGIN_FAILED_MESSAGE", "TOKEN_REJECTED_MESSAGE", "AuditChainBroken", "AuditKeyError", "DatabaseError",
    "DatabaseInUse", "ElicitationError", "FourEyesViolation", "ImportRejected", "InvalidAccount", "InvalidAnchor",
    "InvalidDecision", "InvalidFeedback", "InvalidTokenRequest", "LabellingError", "LoginFailed", "MigrationError",
    "NotFound", "PermissionDenied", "Problem", "RegisterError", "SessionKeyError", "SignOffRefused", "StaleEdit",
    "TokenRejected", "TooManyAttempts", "ValidationFailed", "WriteConflict",
    "HandoffFailed",
]


class RegisterError(Exception):
    """Base error of the register: ``title`` is a short human heading, the message says what to do."""

    title = "The request could not be completed"


# --- records ----------------------------------------------------------------------------------------


class NotFound(RegisterError):
    """A record the request names does not exist (any more): reload, or name another one."""

    title = "Not found"


class NothingToKeep(RegisterError, ValueError):
    """A view of a profile version was asked to be kept where there is none to keep: the message says why."""

    title = "Not kept"


class StaleEdit(RegisterError):
    """A row changed since it was read: the edit is refused, never silently overwritten. Reload and redo it."""

    title = "Changed by someone else"


@dataclass(frozen=True)
class Problem:
    """One reason a row cannot be saved: where (row, column) and what is wrong with it."""

    row: int | None      # 1-based row of the edited table or uploaded file (header excluded)
    column: str | None
    message: str

    def __str__(self) -> str:
        where = f"row {self.row}" if self.row is not None else "file"
        return f"{where}, {self.column}: {self.message}" if self.column else f"{where}: {self.message}"


class ValidationFailed(RegisterError, ValueError):
    """Rows that cannot be saved; ``problems`` lists every failure (row, column, message). Nothing was written."""

    title = "Not saved: fix these rows"

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems[:20]) + (" ..." if len(problems) > 20 else ""))


class SignOffRefused(ValidationFailed):
    """A checklist sign-off refused as given: ``problems`` has one entry per refused item (``row`` is the item's
    number, ``column`` the input: decision or reason), ``items`` each item's title. The message names each item,
    its title and why, so it reads the same on a page, in a log or on the command line. Nothing was written."""

    title = "Not signed: fix these checklist items"

    def __init__(self, problems: list[Problem], items: dict[int, str]):
        self.items = items
        super().__init__(problems)
        self.args = (f"{len(problems)} checklist item{'s' if len(problems) != 1 else ''} cannot be signed as "
                     "given: " + "; ".join(self.describe(p) for p in problems),)

    def describe(self, problem: Problem) -> str:
        """One refused item as a sentence: "item 7 (its title): why"."""
        title = self.items.get(problem.row or 0)
        return f"item {problem.row}" + (f" ({title})" if title else "") + f": {problem.message}"


class ImportRejected(RegisterError):
    """A whole file was refused (wrong type, too large, unreadable). Records inside it are never dropped."""

    title = "File refused"


class InvalidDecision(RegisterError, ValueError):
    """A review decision that cannot be recorded as given; ``field`` names the input to fix."""

    title = "Decision not recorded"

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field


class InvalidFeedback(RegisterError, ValueError):
    """A feedback report, validation or resolution that cannot be recorded as given; ``field`` names the input."""

    title = "Feedback not recorded"

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field


class ElicitationError(RegisterError, ValueError):
    """Judgements, weights or a Delphi step that cannot be accepted; the message names what to change."""

    title = "Elicitation not accepted"


# --- people -----------------------------------------------------------------------------------------


class PermissionDenied(RegisterError):
    """The acting user's role may not do this (the attempt is in the audit trail): ask an admin."""

    title = "Not allowed"


class FourEyesViolation(PermissionDenied):
    """The author of a change tried to approve it: a second person must approve it (four eyes)."""

    title = "Needs a second person"


LOGIN_FAILED_MESSAGE = "Invalid username or password"


class LoginFailed(RegisterError):
    """Any failed login. The message never says which part was wrong."""

    title = "Login failed"

    def __init__(self) -> None:
        super().__init__(LOGIN_FAILED_MESSAGE)


class InvalidAccount(RegisterError, ValueError):
    """A username, role or password that cannot be accepted (says which and why)."""

    title = "Invalid account data"


# --- API tokens (register.access.api_tokens) ---------------------------------------------------------

TOKEN_REJECTED_MESSAGE = "No valid API token: send a current token as Authorization: Bearer TOKEN"


class TokenRejected(RegisterError):
    """A presented API token that does not authenticate. The message never says which part was wrong (unknown,
    malformed, wrong secret, expired, revoked, disabled account): the audit trail records that."""

    title = "Not authenticated"

    def __init__(self) -> None:
        super().__init__(TOKEN_REJECTED_MESSAGE)


class TooManyAttempts(TokenRejected):
    """Too many failed authentications from one client: refused without saying why for ``retry_after`` seconds."""

    title = "Too many attempts"

    def __init__(self, retry_after: int) -> None:
        RegisterError.__init__(self, f"too many failed authentications from this client: try again in {retry_after} s")
        self.retry_after = retry_after


class InvalidTokenRequest(RegisterError, ValueError):
    """A token that cannot be created or revoked as asked; ``field`` names the input (username, expires_days, name,
    token_id) and the message says why."""

    title = "API token not changed"

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field


# --- the database -----------------------------------------------------------------------------------


class MigrationError(RegisterError):
    """A numbered migration is misnamed, was edited after it landed, or failed: nothing of it was applied."""

    title = "Database migration failed"


class AuditChainBroken(RegisterError):
    """The audit trail's hash chain does not verify: an event was edited, deleted or reordered."""

    title = "Audit trail does not verify"


class AuditKeyError(RegisterError):
    """The audit trail's signing key is missing, unreadable or unsafe: nothing can be written (every write
    appends a signed audit event) and signed events cannot be verified until the keyring is restored."""

    title = "Audit key unavailable"


class SessionKeyError(RegisterError):
    """The key that signs the console's session cookie (``<db>.session-key``) is unsafe or unreadable: logins still
    work, but do not survive a reload until it is fixed (the message says how)."""

    title = "Session key unavailable"


class InvalidAnchor(RegisterError, ValueError):
    """An audit anchor (a file or a sign-off) that cannot be read as one; the message names what is wrong."""

    title = "Invalid audit anchor"


class DatabaseError(RegisterError):
    """The database refused an operation; a write was rolled back whole (nothing of it was saved)."""

    title = "Database error"


class DatabaseInUse(DatabaseError):
    """Another process holds the database file (DuckDB allows one read-write process per file)."""

    title = "Database in use"


class HandoffFailed(DatabaseInUse):
    """The running console holds the database and did not carry out a command handed to it (``register.cli.handoff``):
    it refused it, or its process ended before the command did. The message says which and what to do."""

    title = "Not carried out by the console"


class WriteConflict(DatabaseError):
    """Another transaction changed the same rows at the same moment; the write was rolled back (try again)."""

    title = "Changed at the same time"


# --- labelling (register.labels) ---------------------------------------------------------------------


class LabellingError(RegisterError):
    """A labelling request that cannot be carried out (a batch, an annotation or an adjudication): the
    message names the record and the field."""

    title = "Labels not saved"


# --- monitors (register.monitors) --------------------------------------------------------------------


class InvalidMonitor(RegisterError, ValueError):
    """A monitor or webhook that cannot be saved as given: the message names it and ``field``, the input to fix."""

    title = "Monitor not saved"

    def __init__(self, name: str, field: str, message: str):
        super().__init__(f"{name}: {field}: {message}")
        self.name = name
        self.field = field
