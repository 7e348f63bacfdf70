"""How one API operation is declared, and what every request goes through.

An operation is a plain function ``handler(call) -> result`` declared with ``Api.operation``: its method, path,
query model, body model and response model. That one declaration builds the Starlette route and the operation's
entry in the OpenAPI document (``register.api.openapi``), so the two never disagree.

Every request, in order: the bearer token is authenticated (``register.access.api_tokens.authenticate``: the
account's *current* role; 401 without a valid token, 429 after too many failures); the query and the JSON body
are read within their size limits (413) and validated by their pydantic models (422 naming the field); the
handler runs in a worker thread against the console's one Store, and the register's service functions check
the role (403) and audit each write under the token's account. Any error leaves as the one JSON error shape
(``register.api.errors``); an unexpected one is logged with an incident id and answered 500 without detail.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hri_core.strict_json import decode_json
from register.access.api_tokens import authenticate
from register.api.errors import ApiError, error_response, status_of
from register.db.store import Actor, Store
from register.errors import RegisterError, TokenRejected, TooManyAttempts

__all__ = ["Api", "Call", "Operation"]

log = logging.getLogger("register.api")

JSON_BODY_LIMIT = 1 << 20  # bytes of a JSON request body: every body of this API is a small object


@dataclass(frozen=True)
class Call:
    """What a handler receives: the store, the authenticated actor, the path parameters, the validated query and
    body, and (for an upload) the received file."""

    store: Store
    actor: Actor
    path: dict[str, str]
    query: Any = None
    body: Any = None
    upload: Any = None


@dataclass(frozen=True)
class Operation:
    """One declared operation (see ``Api.operation``)."""

    method: str
    path: str
    handler: Callable[[Call], Any]
    summary: str
    tag: str
    response: type[BaseModel]
    query: type[BaseModel] | None = None
    body: type[BaseModel] | None = None
    status: int = 200
    permission: str | None = None  # documented; the register's service functions enforce it
    upload: Any = None  # an upload receiver (``register.api.uploads``) for a file body
    public: bool = False  # no token needed (the health check, the OpenAPI document)
    description: str = ""


@dataclass
class Api:
    """The operations of one API version, in declaration order."""

    prefix: str
    operations: list[Operation] = field(default_factory=list)

    def operation(self, method: str, path: str, *, summary: str, tag: str, response: type[BaseModel],
                  query: type[BaseModel] | None = None, body: type[BaseModel] | None = None, status: int = 200,
                  permission: str | None = None, upload: Any = None, public: bool = False
                  ) -> Callable[[Callable[[Call], Any]], Callable[[Call], Any]]:
        """Declare ``handler`` as ``method path``; its docstring is the operation's description."""

        def declare(handler: Callable[[Call], Any]) -> Callable[[Call], Any]:
            self.operations.append(Operation(method, path, handler, summary, tag, response, query, body, status,
                                             permission, upload, public, (handler.__doc__ or "").strip()))
            return handler

        return declare

    def routes(self, get_store: Callable[[], Store]) -> list[Route]:
        """One Starlette route per path, dispatching on the method (405 with the one error shape otherwise)."""
        by_path: dict[str, list[Operation]] = {}
        for op in self.operations:
            by_path.setdefault(op.path, []).append(op)
        return [Route(path, _endpoint(ops, get_store), methods=[op.method for op in ops])
                for path, ops in by_path.items()]


def _endpoint(ops: list[Operation], get_store: Callable[[], Store]) -> Callable:
    by_method = {op.method: op for op in ops}

    async def endpoint(request: Request) -> Response:
        op = by_method.get(request.method)
        if op is None:  # Starlette answers HEAD for GET routes itself; anything else undeclared is refused here
            return error_response(405, "method_not_allowed", f"{request.method} is not allowed on this path")
        try:
            return await _serve(op, request, get_store)
        except ApiError as error:
            challenge = {"WWW-Authenticate": "Bearer"} if error.status == 401 else None
            return error_response(error.status, error.code, error.message, error.field, headers=challenge)
        except TooManyAttempts as error:
            return error_response(429, "too_many_attempts", str(error),
                                  headers={"Retry-After": str(max(1, int(error.retry_after)))})
        except TokenRejected as error:
            return error_response(401, "unauthenticated", str(error), headers={"WWW-Authenticate": "Bearer"})
        except RegisterError as error:
            status, code = status_of(error)
            return error_response(status, code, str(error), getattr(error, "field", None) or _problem_field(error))
        except Exception:  # noqa: BLE001 - one incident id, the traceback in the server log, no detail out
            incident = secrets.token_hex(4)
            log.exception("API incident %s: %s %s", incident, request.method, request.url.path)
            return error_response(500, "internal", f"unexpected error (incident {incident}, see the server log)")

    return endpoint


def _problem_field(error: RegisterError) -> str | None:
    """The column of a ``ValidationFailed``'s first problem, when it names one."""
    problems = getattr(error, "problems", None)
    return problems[0].column if problems else None


async def _serve(op: Operation, request: Request, get_store: Callable[[], Store]) -> Response:
    store = await run_in_threadpool(get_store)
    actor = await run_in_threadpool(_authenticated, op, request, store)
    if op.query is None and request.query_params:  # no parameter is ignored: a misspelt one is an error
        unknown = next(iter(request.query_params.keys()))
        raise ApiError(422, "invalid", f"unknown query parameter {unknown!r}: this operation takes none", unknown)
    query = _validated(op.query, _query_values(op.query, request), "query") if op.query else None
    body = _validated(op.body, await _json_body(request), "body") if op.body else None
    upload = await op.upload.receive(request) if op.upload is not None else None
    try:
        call = Call(store, actor, dict(request.path_params), query, body, upload)
        result = await run_in_threadpool(op.handler, call)
    finally:
        if upload is not None:
            upload.discard()
    if isinstance(result, Response):
        return result
    payload = result if isinstance(result, BaseModel) else op.response.model_validate(result)
    return JSONResponse(payload.model_dump(mode="json"), status_code=op.status)


def _authenticated(op: Operation, request: Request, store: Store) -> Actor:
    if op.public:
        return Actor("anonymous", "anonymous")
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "unauthenticated", "send a personal API token: Authorization: Bearer TOKEN "
                                               "(python -m register tokens create --user NAME)")
    client = request.client.host if request.client else "unknown"
    return authenticate(store, token.strip(), client=client)


def _is_list(annotation: Any) -> bool:
    return get_origin(annotation) in (list, tuple) or any(get_origin(a) in (list, tuple)
                                                          for a in get_args(annotation))


def _query_values(model: type[BaseModel] | None, request: Request) -> dict[str, Any]:
    """The query string as the model's input: a list field takes every value of its repeated parameter."""
    assert model is not None
    params = request.query_params
    unknown = sorted(set(params.keys()) - set(model.model_fields))
    if unknown:
        raise ApiError(422, "invalid", f"unknown query parameter {unknown[0]!r}; known: "
                                       f"{', '.join(model.model_fields) or 'none'}", unknown[0])
    values: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if name in params:
            values[name] = params.getlist(name) if _is_list(info.annotation) else params[name]
    return values


async def _json_body(request: Request) -> Any:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > JSON_BODY_LIMIT:
        raise ApiError(413, "too_large", f"the body is {int(declared):,} bytes, over the limit of "
                                         f"{JSON_BODY_LIMIT:,} for a JSON body")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > JSON_BODY_LIMIT:
            raise ApiError(413, "too_large", f"the body is over the limit of {JSON_BODY_LIMIT:,} bytes for a "
                                             "JSON body")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        raise ApiError(422, "invalid", "a JSON object body is required")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ApiError(422, "invalid", f"the body is not UTF-8 (byte {error.start})") from None
    value, problems = decode_json(text)
    if problems:
        raise ApiError(422, "invalid", f"the body is not valid JSON: {problems[0]}", problems[0].loc or None)
    return value


def _validated(model: type[BaseModel], value: Any, where: str) -> BaseModel:
    try:
        return model.model_validate(value)
    except ValidationError as error:
        problems = error.errors(include_url=False)
        first = problems[0]
        field_name = ".".join(str(part) for part in first["loc"]) or None
        message = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or where}: {e['msg']}" for e in problems[:10])
        raise ApiError(422, "invalid", f"invalid {where}: {message}", field_name) from None


