"""``routes(get_store)``: every route of ``/api/v1``, mounted by the console's launcher (``ui/server.py``)."""

from __future__ import annotations

from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Mount, Route

from register.db.store import Store

API_PREFIX = "/api/v1"


def routes(get_store: Callable[[], Store]) -> list[BaseRoute]:
    """The API's routes under ``/api/v1``; ``get_store`` returns the process's one Store (opened on first use)."""

    def health(request: Request) -> JSONResponse:
        get_store()
        return JSONResponse({"status": "ok"})

    return [Mount(API_PREFIX, routes=[Route("/health", health, methods=["GET"])])]
