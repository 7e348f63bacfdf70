"""The API's one error shape: ``{"error": {"code", "message", "field"}}`` with the HTTP status that says what
kind of failure it is. Every refusal of the register (``register.errors``) maps to one status here, in one table."""

from __future__ import annotations

from starlette.responses import JSONResponse

from register import errors

__all__ = ["ApiError", "error_response", "status_of"]


class ApiError(Exception):
    """A refusal raised by the API layer itself (no token, a body too large, a malformed request)."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.field = status, code, message, field


# the register's refusals, most specific first (a FourEyesViolation is a PermissionDenied)
_STATUS: tuple[tuple[type[Exception], int, str], ...] = (
    (errors.PermissionDenied, 403, "forbidden"),
    (errors.NotFound, 404, "not_found"),
    (errors.StaleEdit, 409, "conflict"),
    (errors.WriteConflict, 409, "conflict"),
    (errors.ValidationFailed, 422, "invalid"),
    (errors.InvalidDecision, 422, "invalid"),
    (errors.InvalidFeedback, 422, "invalid"),
    (errors.ImportRejected, 422, "invalid"),
    (errors.InvalidTokenRequest, 422, "invalid"),
    (errors.DatabaseError, 503, "unavailable"),
    (errors.RegisterError, 400, "refused"),
)


def status_of(error: Exception) -> tuple[int, str]:
    """The HTTP status and error code of one of the register's errors (500/internal for anything else)."""
    for kind, status, code in _STATUS:
        if isinstance(error, kind):
            return status, code
    return 500, "internal"


def error_response(status: int, code: str, message: str, field: str | None = None,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    """The one JSON shape of every error answer."""
    return JSONResponse({"error": {"code": code, "message": message, "field": field}}, status_code=status,
                        headers=headers)
