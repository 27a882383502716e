"""HTTP API (API Gateway HTTP API, payload v2) → the route for the request, as JSON."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork.api.routes import app, path_action_id
from tickwork.entry import Entry

entry = Entry()


@entry
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = event.get("requestContext", {})
    entry.correlate(path_action_id(event.get("rawPath", "")) or request.get("requestId"))
    response: dict[str, Any] = app.resolve(event, context)
    entry.count(f"api_{response['statusCode'] // 100}xx")
    return response
