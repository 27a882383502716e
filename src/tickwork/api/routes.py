"""The HTTP API (API Gateway HTTP API, payload v2): each route parses its input, calls one use
case and returns JSON. The OpenAPI document is generated from the models (``/openapi.json``,
Swagger UI at ``/docs``); errors become JSON in ``tickwork.api.errors``.

Ids may hold ``:`` and other reserved characters, percent-encoded in the path
(``/actions/invoice%3A42``): the path segment is decoded before use. Ids cannot hold ``%``,
so decoding a segment that arrives already decoded changes nothing.
"""

from __future__ import annotations

import json
from dataclasses import replace
from http import HTTPStatus
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import unquote

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.models import OpenAPI
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.metrics import MetricUnit

from tickwork import bootstrap
from tickwork.api import errors, stats
from tickwork.api.errors import ActionStillActive
from tickwork.api.models import (
    ActionPage,
    ActionView,
    CancelResult,
    CreateAction,
    ErrorBody,
    FireBuckets,
    Preview,
    PreviewRequest,
    RetryResult,
    Stats,
    UpdateAction,
)
from tickwork.dependencies import Dependencies
from tickwork.domain.action import ACTIVE, FINISHED, Action, Status
from tickwork.domain.errors import ActionNotFound, ValidationFailed
from tickwork.domain.preview import format_fire_times, next_fire_times
from tickwork.domain.start_request import WHEN_FIELDS
from tickwork.domain.times import to_epoch_ms
from tickwork.usecases.retry import retry_action
from tickwork.usecases.start import StartCommand, start_action
from tickwork.usecases.stop import cancel_action
from tickwork.views import action_summary, action_view

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse

__all__ = ["app", "path_action_id"]

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
        return schema


app = _Resolver(
    enable_validation=True,
    # A response that does not match its model is our bug: a 500, never a 400.
    response_validation_error_http_code=HTTPStatus.INTERNAL_SERVER_ERROR,
)
app.configure_openapi(
    title="tickwork",
    version="1",
    description="Durable scheduled actions: create, list, get, update, cancel, retry and "
    "watch them. Authorised with IAM (SigV4) on AWS. Errors are JSON: "
    '{"error", "message", "problems": [{"field", "problem", "fix"}]}.',
)
app.enable_swagger(path="/docs")
errors.register(app)
metrics = Metrics()

_ERRORS = {
    400: "Invalid input: each problem names the field and the fix.",
    404: "No action has this id.",
    409: "The action's state refuses the request (see the message and fix).",
}


def _responses(
    status: int, model: type, description: str, *codes: int
) -> dict[int, OpenAPIResponse]:
    """The documented answers of a route: its success model and the errors it can give."""
    return {
        status: {
            "description": description,
            "content": {content_types.APPLICATION_JSON: {"model": model}},
        },
        **{
            code: {
                "description": _ERRORS[code],
                "content": {content_types.APPLICATION_JSON: {"model": ErrorBody}},
            }
            for code in codes
        },
    }


@app.post(
    "/actions",
    status_code=HTTPStatus.CREATED,
    summary="Create an action",
    description="The body is a Schedule Start detail, as on the bus, with its id. "
    "An existing id is refused (409): change it with PATCH.",
    responses=_responses(201, ActionView, "Created", 400, 409),
    tags=["actions"],
)
def create_action(body: CreateAction) -> ActionView:
    deps = bootstrap.from_environment()
    detail = body.model_dump(by_alias=True, exclude_unset=True)
    start_action(StartCommand(detail, create_only=True), deps)
    _count("scheduled")
    return ActionView.model_validate(action_view(_found(body.id, deps)))


@app.get(
    "/actions",
    summary="List actions",
    description="One page of actions. With status: ordered by next fire time (then id). "
    "Without: in storage order (not sorted). Pass nextCursor back as cursor for the next page.",
    responses=_responses(200, ActionPage, "A page of actions", 400),
    tags=["actions"],
)
def list_actions(
    status: Annotated[Status | None, Query(description="Only actions in this status.")] = None,
    limit: Annotated[int, Query(ge=1, le=200, description="Page size.")] = 50,
    cursor: Annotated[str | None, Query(description="nextCursor of the previous page.")] = None,
) -> ActionPage:
    repository = bootstrap.from_environment().repository
    actions, next_cursor = repository.page(status, limit, cursor)
    return ActionPage.model_validate(
        {"items": [action_summary(a) for a in actions], "nextCursor": next_cursor}
    )


@app.get(
    "/actions/<id>",
    summary="Get an action",
    description="The record, with its occurrence history and status transitions.",
    responses=_responses(200, ActionView, "The action", 404),
    tags=["actions"],
)
def get_action(id: str) -> ActionView:
    return ActionView.model_validate(action_view(_found(unquote(id), bootstrap.from_environment())))


@app.patch(
    "/actions/<id>",
    summary="Update an action",
    description="The fields given replace the stored ones; a when field (at, executionTime, "
    "duration, delay, cron, rate, frequency) replaces the stored when. The action is then "
    "replaced as a Start with the same id would: a recurrence starts counting again. Refused "
    "inside the lock before a fire (409). A finished action is scheduled again.",
    responses=_responses(200, ActionView, "The updated action", 400, 404, 409),
    tags=["actions"],
)
def update_action(id: str, body: UpdateAction) -> ActionView:
    action_id, deps = unquote(id), bootstrap.from_environment()
    changes = body.model_dump(by_alias=True, exclude_unset=True)
    if changes.pop("id", action_id) != action_id:
        raise ValidationFailed.of(
            "id", "cannot be changed", "create the action under the new id with POST /actions"
        )
    detail = _merged(_found(action_id, deps), changes)
    start_action(StartCommand(detail), deps)
    _count("scheduled")
    return ActionView.model_validate(action_view(_found(action_id, deps)))


@app.delete(
    "/actions/<id>",
    summary="Cancel (or purge) an action",
    description="Cancels the action before its lock (200). With purge=true, deletes a finished "
    "record (COMPLETED, FAILED, NO_ACTION, CANCELLED) for good (204); an active one is refused.",
    responses={
        **_responses(200, CancelResult, "Cancelled (or already finished)", 400, 404, 409),
        204: {"description": "Purged"},
    },
    tags=["actions"],
)
def delete_action(
    id: str,
    purge: Annotated[bool, Query(description="Delete a finished record.")] = False,
) -> Response[CancelResult | None]:
    action_id, deps = unquote(id), bootstrap.from_environment()
    if not purge:
        result = cancel_action(action_id, deps)
        if result["outcome"] == "cancelled":
            _count("cancelled")
        return Response(
            HTTPStatus.OK, content_types.APPLICATION_JSON, CancelResult.model_validate(result)
        )
    action = _found(action_id, deps)
    if action.status not in FINISHED:
        raise ActionStillActive(action_id, str(action.status))
    deps.repository.delete(action_id)
    _count("purged")
    return Response(HTTPStatus.NO_CONTENT)


@app.post(
    "/actions/<id>/retry",
    summary="Retry a failed action",
    description="Runs the failed occurrence again now and resumes its schedule. FAILED only.",
    responses=_responses(200, RetryResult, "Retried", 404, 409),
    tags=["actions"],
)
def retry(id: str) -> RetryResult:
    result = retry_action(unquote(id), bootstrap.from_environment())
    _count("retried")
    return RetryResult.model_validate(result)


@app.get(
    "/stats",
    summary="Counts by status, and fires over the last hour and day",
    description="Fires are counted from the records' occurrence history by a table scan: "
    "late = fired more than 1 s after its time (a part of fired).",
    responses=_responses(200, Stats, "Counts"),
    tags=["stats"],
)
def get_stats() -> Stats:
    deps = bootstrap.from_environment()
    counts = stats.fire_counts(stats.all_actions(deps.repository), deps.clock.now())
    return Stats.model_validate({"byStatus": deps.repository.count_by_status(), **counts})


@app.get(
    "/stats/fires",
    summary="Recent fires in time buckets (on time, late, failed)",
    description="From the records' occurrence history (a table scan), by when each happened.",
    responses=_responses(200, FireBuckets, "Buckets, oldest first", 400),
    tags=["stats"],
)
def get_fires(
    minutes: Annotated[int, Query(ge=1, le=10_080, description="How far back.")] = 120,
    bucket: Annotated[int, Query(ge=1, le=1_440, description="Bucket size in minutes.")] = 5,
) -> FireBuckets:
    deps = bootstrap.from_environment()
    buckets = stats.fire_buckets(
        stats.all_actions(deps.repository), deps.clock.now(), minutes, bucket
    )
    return FireBuckets.model_validate(buckets)


@app.post(
    "/preview",
    summary="The next fire times of a schedule expression",
    description="Same as `tickwork next`: each fire in UTC and in the zone's local time.",
    responses=_responses(200, Preview, "Fire times", 400),
    tags=["schedules"],
)
def preview(body: PreviewRequest) -> Preview:
    after = body.after or bootstrap.from_environment().clock.now()
    try:
        times = next_fire_times(body.expression, after, body.count, body.timezone, body.first)
    except ValidationFailed as refused:  # the schedule knows a frequency's first time as "at"
        problems = [replace(p, field="first") if p.field == "at" else p for p in refused.problems]
        raise ValidationFailed(problems) from refused
    return Preview.model_validate({"times": format_fire_times(times, body.timezone)})


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


def _found(action_id: str, deps: Dependencies) -> Action:
    action = deps.repository.get(action_id)
    if action is None:
        raise ActionNotFound(action_id)
    return action


def _merged(current: Action, changes: dict[str, Any]) -> dict[str, Any]:
    """The stored Start detail with ``changes`` over it; a new when drops the old one.

    A relative one-off (duration/delay) that is not being changed keeps its fire time: it is
    pinned to the time it was computed to, so changing only data does not postpone it.
    """
    detail = dict(current.request or _request_of(current))
    if any(name in changes for name in WHEN_FIELDS):
        detail = {k: v for k, v in detail.items() if k not in WHEN_FIELDS}
    elif current.status in ACTIVE and current.execution_time is not None:
        for relative in ("duration", "delay"):
            if detail.pop(relative, None) is not None:
                detail["executionTime"] = to_epoch_ms(current.execution_time)
    return {**detail, **changes, "id": current.id}


def _request_of(action: Action) -> dict[str, Any]:
    """What can be rebuilt of a Start detail for a record stored without one."""
    return {
        "id": action.id,
        "action": action.action,
        "data": action.data,
        "metadata": action.metadata,
        "timezone": action.schedule.timezone,
    }


def _count(name: str) -> None:
    metrics.add_metric(name=name, unit=MetricUnit.Count, value=1)
