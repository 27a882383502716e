"""/actions: create, list, get, update, cancel or purge."""

from __future__ import annotations

from http import HTTPStatus
from typing import Annotated, Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Query

from tickwork import bootstrap
from tickwork.answers import Done
from tickwork.api.documented import count, deferred, found, new_router, responses
from tickwork.api.errors import ActionStillActive
from tickwork.api.models import (
    ActionPage,
    ActionView,
    ChangeResult,
    CreateAction,
    UpdateAction,
)
from tickwork.domain.action import ACTIVE, FINISHED, Action, Status
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.selection import Selection
from tickwork.domain.start_request import WHEN_FIELDS
from tickwork.domain.times import to_epoch_ms
from tickwork.steering.start import StartCommand, start_action
from tickwork.steering.stop import cancel_action
from tickwork.views import action_summary, action_view

__all__ = ["router"]

router = new_router()


@router.post(
    "/actions",
    status_code=HTTPStatus.CREATED,
    summary="Create an action",
    description="The body is a Schedule Start detail, as on the bus, with its id. "
    "An existing id is refused (409): change it with PATCH.",
    responses=responses(201, ActionView, "Created", 400, 409),
    tags=["actions"],
)
def create_action(body: CreateAction) -> ActionView:
    deps = bootstrap.from_environment()
    detail = body.model_dump(by_alias=True, exclude_unset=True)
    start_action(StartCommand(detail, create_only=True), deps)
    count("scheduled")
    return ActionView.model_validate(
        action_view(found(body.id, deps), deps.settings.retry_max_attempts)
    )


@router.get(
    "/actions",
    summary="List actions",
    description="One page of actions. With group or prefix: in id order (a status filter "
    "applies within). With attention=true: those with a failed fire waiting for a retry or "
    "a missed fire, in id order. With status alone: by next fire time (then id). With "
    "nothing: storage order. Pass nextCursor back as cursor for the next page.",
    responses=responses(200, ActionPage, "A page of actions", 400),
    tags=["actions"],
)
def list_actions(
    status: Annotated[Status | None, Query(description="Only actions in this status.")] = None,
    group: Annotated[str | None, Query(description="Only actions of this group.")] = None,
    prefix: Annotated[str | None, Query(description="Only ids that start with this.")] = None,
    attention: Annotated[
        bool, Query(description="Only actions with a failed fire waiting for a retry.")
    ] = False,
    limit: Annotated[int, Query(ge=1, le=200, description="Page size.")] = 50,
    cursor: Annotated[str | None, Query(description="nextCursor of the previous page.")] = None,
) -> ActionPage:
    selection = Selection(status, group, prefix or None, attention)
    actions, next_cursor = bootstrap.from_environment().queries.page(selection, limit, cursor)
    return ActionPage.model_validate(
        {"items": [action_summary(a) for a in actions], "nextCursor": next_cursor}
    )


@router.get(
    "/actions/<id>",
    summary="Get an action",
    description="The record, with its occurrence history and status transitions. An id of the "
    "stack's own items (starting with '#') is refused (400): it is never an action's.",
    responses=responses(200, ActionView, "The action", 400, 404),
    tags=["actions"],
)
def get_action(id: str) -> ActionView:
    deps = bootstrap.from_environment()
    view = action_view(found(unquote(id), deps), deps.settings.retry_max_attempts)
    return ActionView.model_validate(view)


@router.patch(
    "/actions/<id>",
    summary="Update an action",
    description="The fields given replace the stored ones; a when field (at, executionTime, "
    "duration, delay, cron, rate, frequency, scheduleExpression) replaces the stored when. "
    "The action is then replaced as a Start with the same id would: a recurrence starts "
    "counting again, a paused one stays paused. Inside the lock before a fire, a recurrence's "
    "update waits for that fire and applies after it (202, `deferred` in the answer); a "
    "one-off's is refused (409). A finished action is scheduled again.",
    responses={
        **responses(200, ActionView, "The updated action", 400, 404, 409),
        **deferred(ActionView, "it applies"),
    },
    tags=["actions"],
)
def update_action(id: str, body: UpdateAction) -> Response[ActionView]:
    action_id, deps = unquote(id), bootstrap.from_environment()
    changes = body.model_dump(by_alias=True, exclude_unset=True)
    if changes.pop("id", action_id) != action_id:
        raise ValidationFailed.of(
            "id", "cannot be changed", "create the action under the new id with POST /actions"
        )
    detail = _merged(found(action_id, deps), changes)
    result = start_action(StartCommand(detail), deps)
    count("deferred" if result.outcome == "deferred" else "scheduled")
    view = ActionView.model_validate(
        action_view(found(action_id, deps), deps.settings.retry_max_attempts)
    )
    status = HTTPStatus.ACCEPTED if result.outcome == "deferred" else HTTPStatus.OK
    return Response(status, content_types.APPLICATION_JSON, view)


@router.delete(
    "/actions/<id>",
    summary="Cancel (or purge) an action",
    description="Cancels the action (200). Inside the lock before a fire, a recurrence is "
    "cancelled once that fire is recorded (202, outcome deferred); a one-off is refused (409). "
    "With purge=true, deletes a finished record (COMPLETED, FAILED, NO_ACTION, CANCELLED) for "
    "good (204); a live one is refused.",
    responses={
        **responses(200, ChangeResult, "Cancelled (or already finished)", 400, 404, 409),
        **deferred(ChangeResult, "cancelled"),
        204: {"description": "Purged"},
    },
    tags=["actions"],
)
def delete_action(
    id: str,
    purge: Annotated[bool, Query(description="Delete a finished record.")] = False,
) -> Response[ChangeResult | None]:
    action_id, deps = unquote(id), bootstrap.from_environment()
    if not purge:
        result = cancel_action(action_id, deps)
        if result.outcome in (Done.CANCELLED, Done.DEFERRED):
            count("cancelled")
        status = HTTPStatus.ACCEPTED if result.outcome is Done.DEFERRED else HTTPStatus.OK
        answer = ChangeResult.model_validate(result.to_wire())
        return Response(status, content_types.APPLICATION_JSON, answer)
    action = found(action_id, deps)
    if action.status not in FINISHED:
        raise ActionStillActive(action_id, str(action.status))
    deps.records.delete(action_id)
    count("purged")
    return Response(HTTPStatus.NO_CONTENT)


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
