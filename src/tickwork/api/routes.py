"""The HTTP API (API Gateway HTTP API, payload v2): the resolver with its routes, the OpenAPI
document (``/openapi.json``, Swagger UI at ``/docs``) and the dashboard (``/``).

Each route parses its input, calls one use case and returns JSON; the routes live by topic in
``action_routes`` (/actions), ``steering_routes`` (pause, resume, run now, retry, bulk) and
``schedule_routes`` (stats, preview). Errors become JSON in ``tickwork.api.errors``.

Ids may hold ``:`` and other reserved characters, percent-encoded in the path
(``/actions/invoice%3A42``): the path segment is decoded before use. Ids cannot hold ``%``,
so decoding a segment that arrives already decoded changes nothing.
"""

from __future__ import annotations

import json
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.models import OpenAPI

from tickwork.api import (
    action_routes,
    calendar_routes,
    docs_page,
    errors,
    occurrence_routes,
    rejection_routes,
    schedule_routes,
    steering_routes,
)
from tickwork.domain.json_text import loads_strict

__all__ = ["DASHBOARD_HTML", "app", "path_action_id"]

_DASHBOARD = Path(__file__).parent / "dashboard" / "index.html"
DASHBOARD_HTML = _DASHBOARD.read_text(encoding="utf-8") if _DASHBOARD.is_file() else None
_ACTION_PATH = "/actions/"


class _Resolver(APIGatewayHttpResolver):
    """Powertools documents a 422 for requests that fail the schema; this API answers those
    with a 400 (``ErrorBody``, as every refusal), so the 422 is left out of the document."""

    def get_openapi_schema(self, **kwargs: Any) -> OpenAPI:
        schema = super().get_openapi_schema(**kwargs)
        for item in (schema.paths or {}).values():
            for operation in (item.get, item.post, item.patch, item.delete):
                if operation is not None and operation.responses:
                    operation.responses.pop(422, None)
        if schema.components and schema.components.schemas:
            for unused in ("HTTPValidationError", "ValidationError"):
                schema.components.schemas.pop(unused, None)
            _document_action_data(schema.components.schemas)
        return schema


def _document_action_data(schemas: dict[str, Any]) -> None:
    """Each built-in action type's data schema as a component, and ``data`` of a create or an
    update as any one of them (the action field says which; the server checks the pair)."""
    from aws_lambda_powertools.event_handler.openapi.models import Schema

    from tickwork.domain.start_fields import field_named
    from tickwork.fulfillment.defaults import builtin_data_models

    refs, named = [], []
    for action_type, model in builtin_data_models().items():
        document = model.model_json_schema(
            by_alias=True, ref_template="#/components/schemas/{model}"
        )
        for name, definition in document.pop("$defs", {}).items():
            schemas.setdefault(name, Schema.model_validate(definition))
        said = document.get("description", "")
        document["description"] = f"The data of a {action_type} action. {said}".strip()
        schemas[model.__name__] = Schema.model_validate(document)
        refs.append({"$ref": f"#/components/schemas/{model.__name__}"})
        named.append(f"{action_type} → {model.__name__}")
    for name in ("CreateAction", "UpdateAction"):
        request = schemas.get(name)
        properties = getattr(request, "properties", None) or {}
        if "data" in properties:
            data = properties["data"].model_dump(by_alias=True, exclude_none=True)
            data.pop("additionalProperties", None)
            data["anyOf"] = refs
            data["description"] = (
                f"{field_named('data').text()} By action type: {'; '.join(named)}."
            )
            properties["data"] = Schema.model_validate(data)


app = _Resolver(
    enable_validation=True,
    # A key given twice in a body is a 400 naming it, not the last one silently winning.
    json_body_deserializer=loads_strict,
    # A response that does not match its model is our bug: a 500, never a 400.
    response_validation_error_http_code=HTTPStatus.INTERNAL_SERVER_ERROR,
)
app.configure_openapi(
    title="tickwork",
    version="1",
    description="Durable scheduled actions: create, list, get, update, cancel, pause, resume, "
    "run now, retry and watch them. Authorised with IAM (SigV4) on AWS. Errors are JSON: "
    '{"error", "message", "problems": [{"field", "problem", "fix"}]}.',
)
errors.register(app)
for module in (
    action_routes,
    steering_routes,
    occurrence_routes,
    calendar_routes,
    schedule_routes,
    rejection_routes,
    docs_page,
):
    app.include_router(module.router)


@app.get("/openapi.json", include_in_schema=False)
def openapi_document() -> Response[str]:
    return Response(HTTPStatus.OK, content_types.APPLICATION_JSON, app.get_openapi_json_schema())


@app.get("/", include_in_schema=False)
def dashboard() -> Response[str]:
    if DASHBOARD_HTML is None:
        missing = {"error": "NotFound", "message": "the dashboard is not installed", "problems": []}
        return Response(HTTPStatus.NOT_FOUND, content_types.APPLICATION_JSON, json.dumps(missing))
    return Response(HTTPStatus.OK, "text/html; charset=utf-8", DASHBOARD_HTML)


def path_action_id(path: str) -> str | None:
    """The action id in a request path (/actions/<id>[/...]), decoded; None elsewhere."""
    if not path.startswith(_ACTION_PATH):
        return None
    segment = path[len(_ACTION_PATH) :].split("/", 1)[0]
    return unquote(segment) or None
