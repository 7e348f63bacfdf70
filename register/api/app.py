"""``routes(get_store)``: every route of ``/api/v1``, mounted by the console's launcher (``ui/server.py``).

The operations are declared by ``register.api.answers`` and ``register.api.governance`` on one ``Api``; the
health check, the OpenAPI document and the docs page are public (no token), everything else needs one.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route

from register.api import answers, governance
from register.api import models as m
from register.api.errors import error_response
from register.api.framework import Api, Call
from register.api.openapi import API_VERSION, docs_page, document
from register.db.store import Store

__all__ = ["API_PREFIX", "api", "routes"]

API_PREFIX = "/api/v1"


@cache
def api() -> Api:
    """The API's operations, declared once."""
    declared = Api(API_PREFIX)

    @declared.operation("GET", "/health", summary="Whether the API and its database answer", tag="meta",
                        response=m.Health, public=True)
    def health(call: Call) -> m.Health:
        """Opens nothing new: the console's Store answers a trivial read."""
        call.store.scalar("SELECT 1")
        return m.Health(status="ok", api_version=API_VERSION)

    answers.add_operations(declared)
    governance.add_operations(declared)
    return declared


def routes(get_store: Callable[[], Store]) -> list[BaseRoute]:
    """The API's routes under ``/api/v1``; ``get_store`` returns the process's one Store (opened on first use)."""
    declared = api()

    def openapi(_request: Request) -> Response:
        return JSONResponse(document(declared))

    def docs(_request: Request) -> Response:
        return HTMLResponse(docs_page(declared), headers={"Content-Security-Policy": "default-src 'none'; "
                                                                                     "style-src 'unsafe-inline'"})

    def unknown(request: Request) -> Response:
        return error_response(404, "not_found", f"no API operation at {request.url.path}")

    return [Mount(API_PREFIX, routes=[Route("/openapi.json", openapi, methods=["GET"]),
                                      Route("/docs", docs, methods=["GET"]),
                                      *declared.routes(get_store),
                                      Route("/{rest:path}", unknown, methods=["GET", "POST", "PUT", "DELETE",
                                                                             "PATCH"])])]
