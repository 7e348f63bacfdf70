"""The OpenAPI 3.1 document of the API and its page of docs, both built from the declared operations
(``register.api.framework.Api``), so that they say what the routes do. The docs page is plain HTML served by the
API itself: no script and nothing fetched from elsewhere (the console runs offline)."""

from __future__ import annotations

import html
import re
from typing import Any

from pydantic import BaseModel

from register.api import models as m
from register.api.framework import Api, Operation, _is_list

__all__ = ["API_VERSION", "docs_page", "document"]

API_VERSION = "1.0.0"
_PATH_PARAM = re.compile(r"{([a-z_]+)}")
_REF = "#/components/schemas/{model}"
_ERRORS = {401: "no valid token (Authorization: Bearer TOKEN)", 403: "the token's account may not do this",
           404: "no such record", 409: "the record changed since it was read, or the request conflicts with it",
           413: "the body is over the size limit", 422: "the request is not valid: `error.field` names the field",
           429: "too many failed authentications from this client: wait Retry-After seconds",
           500: "unexpected error (an incident id to find in the server log)"}
_UPLOAD_TYPES = ("application/x-ndjson", "text/csv", "application/json", "application/vnd.apache.parquet")


class _Schemas:
    def __init__(self) -> None:
        self.components: dict[str, Any] = {}

    def ref(self, model: type[BaseModel]) -> dict[str, str]:
        schema = model.model_json_schema(ref_template=_REF)
        self.components.update(schema.pop("$defs", {}))
        self.components[model.__name__] = schema
        return {"$ref": _REF.format(model=model.__name__)}


def _parameters(op: Operation) -> list[dict[str, Any]]:
    params: list[dict[str, Any]] = [{"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
                                    for name in _PATH_PARAM.findall(op.path)]
    if op.query is not None:
        properties = op.query.model_json_schema(ref_template=_REF)["properties"]
        for name, info in op.query.model_fields.items():
            param: dict[str, Any] = {"name": name, "in": "query", "required": info.is_required(),
                                     "schema": properties[name]}
            if info.description:
                param["description"] = info.description
            if _is_list(info.annotation):
                param.update(style="form", explode=True)
            params.append(param)
    return params


def _operation(op: Operation, schemas: _Schemas) -> dict[str, Any]:
    description = op.description.replace("``", "`")  # the handlers' docstrings, as Markdown
    entry: dict[str, Any] = {"operationId": op.handler.__name__, "summary": op.summary, "tags": [op.tag],
                             "description": description + (f"\n\nPermission: `{op.permission}`."
                                                           if op.permission else "")}
    if params := _parameters(op):
        entry["parameters"] = params
    if op.body is not None:
        entry["requestBody"] = {"required": True, "content": {"application/json": {"schema": schemas.ref(op.body)}}}
    elif op.upload is not None:
        binary = {"type": "string", "contentMediaType": "application/octet-stream"}
        content: dict[str, Any] = {media: {"schema": binary} for media in _UPLOAD_TYPES}
        content["multipart/form-data"] = {"schema": {"type": "object", "required": ["file"],
                                                     "properties": {"file": binary}}}
        entry["requestBody"] = {"required": True, "content": content}
    responses: dict[str, Any] = {str(op.status): {"description": op.summary, "content": {
        "application/json": {"schema": schemas.ref(op.response)}}}}
    error = {"content": {"application/json": {"schema": schemas.ref(m.ErrorBody)}}}
    wanted = [422, 500] if op.public else [401, 403, 422, 429, 500]
    if _PATH_PARAM.search(op.path):
        wanted.append(404)
    if op.method in ("PUT", "POST") and not op.public:
        wanted += [409, 413]
    for status in sorted(set(wanted)):
        responses[str(status)] = {"description": _ERRORS[status], **error}
    entry["responses"] = responses
    if op.public:
        entry["security"] = []
    return entry


def document(api: Api) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``api``."""
    schemas = _Schemas()
    paths: dict[str, dict[str, Any]] = {}
    for op in api.operations:
        paths.setdefault(api.prefix + op.path, {})[op.method.lower()] = _operation(op, schemas)
    return {
        "openapi": "3.1.0",
        "info": {"title": "HRI register API", "version": API_VERSION,
                 "description": "The register's HTTP API, served by the console's process. Authenticate with a "
                                "personal API token: `Authorization: Bearer TOKEN` (`python -m register tokens "
                                "create --user NAME`, or the Users page). Errors: `{\"error\": {\"code\", "
                                "\"message\", \"field\"}}`."},
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {"schemas": dict(sorted(schemas.components.items())),
                       "securitySchemes": {"bearerToken": {"type": "http", "scheme": "bearer"}}},
        "security": [{"bearerToken": []}],
    }


def docs_page(api: Api) -> str:
    """A page of docs: every operation with its parameters, body, answers and an example call."""
    doc = document(api)
    e = html.escape
    parts = [f"<h1>HRI register API {e(API_VERSION)}</h1>", f"<p>{e(doc['info']['description'])}</p>",
             f"<p>The machine-readable document: <a href='{e(api.prefix)}/openapi.json'>openapi.json</a> "
             "(OpenAPI 3.1).</p>"]
    for path, methods in doc["paths"].items():
        for method, op in methods.items():
            parts.append(f"<section><h2><code>{e(method.upper())} {e(path)}</code></h2><p><b>{e(op['summary'])}"
                         f"</b></p><p>{e(op['description'])}</p>")
            rows = "".join(f"<tr><td><code>{e(p['name'])}</code></td><td>{e(p['in'])}</td>"
                           f"<td>{e(p.get('description', ''))}</td></tr>" for p in op.get("parameters", []))
            if rows:
                parts.append(f"<table><tr><th>parameter</th><th>in</th><th></th></tr>{rows}</table>")
            if "requestBody" in op:
                parts.append(f"<p>Body: {e(', '.join(op['requestBody']['content']))}</p>")
            answers = ", ".join(f"{code}" for code in op["responses"])
            parts.append(f"<p>Answers: {e(answers)}</p>")
            auth = "" if op.get("security") == [] else " -H 'Authorization: Bearer $HRI_TOKEN'"
            parts.append(f"<pre>curl{e(auth)} -X {e(method.upper())} http://127.0.0.1:8501{e(path)}</pre></section>")
    style = ("body{font-family:sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}"
             "section{border-top:1px solid #ccc;padding:.5rem 0}table{border-collapse:collapse}"
             "td,th{border:1px solid #ddd;padding:.2rem .5rem;text-align:left}")
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>HRI register API</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>")
