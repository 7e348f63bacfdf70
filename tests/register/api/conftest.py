"""The API in this process: Starlette's TestClient over ``register.api.app.routes`` on a copy of the page tests'
demo register (``demo50-accounts``: accounts ``test-<role>``), with a personal token per role."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from register import SYSTEM
from register.access.api_tokens import create_token
from register.api.app import routes

ROLES = ("viewer", "annotator", "reviewer", "admin")


@pytest.fixture
def api(tmp_path, database_templates):
    """``api.client`` (a TestClient), ``api.store``, ``api.tokens[role]``, ``api.headers(role)``; the token of role R
    is the account ``test-R``'s."""
    store = database_templates.open("demo50-accounts", tmp_path / "api.duckdb")
    tokens = {role: create_token(store, SYSTEM, f"test-{role}").token for role in ROLES}

    class Api:
        client = TestClient(Starlette(routes=routes(lambda: store)), raise_server_exceptions=False)

        @staticmethod
        def headers(role: str) -> dict[str, str]:
            return {"Authorization": f"Bearer {tokens[role]}"}

    Api.store = store
    Api.tokens = tokens
    with Api.client:
        yield Api
    store.close()
