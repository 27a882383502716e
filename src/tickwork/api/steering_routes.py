"""Steering a live schedule: pause, resume, run now and retry one action; pause, resume and
cancel a group or id prefix a page at a time."""

from __future__ import annotations

from http import HTTPStatus
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import Response, content_types

from tickwork import bootstrap
from tickwork.answers import ChangeAnswer, Done
from tickwork.api.documented import count, deferred, new_router, responses
from tickwork.api.models import (
    BulkRequest,
    BulkResult,
    ChangeResult,
    NoteRequest,
    RetryRequest,
    RunNowRequest,
)
from tickwork.domain.selection import Selection
from tickwork.steering.bulk import bulk_change
from tickwork.steering.pause import pause_action, resume_action
from tickwork.steering.retry import retry_action
from tickwork.steering.run_now import run_now

__all__ = ["router"]

router = new_router()


@router.post(
    "/actions/<id>/pause",
    summary="Pause an action",
    description="A paused action does not fire, and shows as PAUSED with the note. Inside the "
    "lock before a fire, a recurrence pauses once that fire is recorded (202); a one-off is "
    "refused (409). A finished action is refused (409).",
    responses={
        **responses(200, ChangeResult, "Paused", 400, 404, 409),
        **deferred(ChangeResult, "paused"),
    },
    tags=["steering"],
)
def pause(id: str, body: NoteRequest | None = None) -> Response[ChangeResult]:
    result = pause_action(unquote(id), body.note if body else None, bootstrap.from_environment())
    count(f"pause_{result.outcome}")
    return _changed(result)


@router.post(
    "/actions/<id>/resume",
    summary="Resume a paused action",
    description="Its next fire is computed from now; fires missed while it was paused are not "
    "caught up (a one-off whose time passed completes, recorded SKIPPED).",
    responses=responses(200, ChangeResult, "Resumed", 400, 404, 409),
    tags=["steering"],
)
def resume(id: str, body: NoteRequest | None = None) -> ChangeResult:
    result = resume_action(unquote(id), body.note if body else None, bootstrap.from_environment())
    count(f"resume_{result.outcome}")
    return ChangeResult.model_validate(result.to_wire())


@router.post(
    "/actions/<id>/run-now",
    summary="Fire an action once, now",
    description="One extra fire at once through the same state machine, recorded as RUN_NOW, "
    "without moving the schedule (Temporal's trigger). A one-off fires now instead of at its "
    "time. Give requestId to make a repeated request harmless.",
    responses=responses(202, ChangeResult, "Fired now", 400, 404, 409),
    status_code=HTTPStatus.ACCEPTED,
    tags=["steering"],
)
def trigger(id: str, body: RunNowRequest | None = None) -> ChangeResult:
    result = run_now(unquote(id), bootstrap.from_environment(), body.request_id if body else None)
    count("run_now")
    return ChangeResult.model_validate(result.to_wire())


@router.post(
    "/actions/<id>/retry",
    summary="Retry a failed fire",
    description="A FAILED action runs its failed occurrence again now and resumes its "
    "schedule. An action that went on or paused after a failure runs the failed fire again "
    "beside its schedule (trigger RETRY, the same idempotency key). Give occurrence to pick "
    "one of its failed fires (default: the latest).",
    responses=responses(200, ChangeResult, "Retried", 400, 404, 409),
    tags=["steering"],
)
def retry(id: str, body: RetryRequest | None = None) -> ChangeResult:
    result = retry_action(
        unquote(id), bootstrap.from_environment(), body.occurrence if body else None
    )
    count("retried")
    return ChangeResult.model_validate(result.to_wire())


def _bulk(operation: str, body: BulkRequest) -> BulkResult:
    selection = Selection(group=body.group, prefix=body.prefix or None)
    deps = bootstrap.from_environment()
    result = bulk_change(operation, selection, deps, body.note, body.limit, body.cursor)
    count(f"bulk_{operation}")
    return BulkResult.model_validate(result.to_wire())


@router.post(
    "/bulk/pause",
    summary="Pause a group or id prefix, a page at a time",
    description="Each action is paused as POST /actions/{id}/pause would; pass nextCursor "
    "back until it is null.",
    responses=responses(200, BulkResult, "One page changed", 400),
    tags=["steering"],
)
def bulk_pause(body: BulkRequest) -> BulkResult:
    return _bulk("pause", body)


@router.post(
    "/bulk/resume",
    summary="Resume a group or id prefix, a page at a time",
    description="Each paused action is resumed as POST /actions/{id}/resume would.",
    responses=responses(200, BulkResult, "One page changed", 400),
    tags=["steering"],
)
def bulk_resume(body: BulkRequest) -> BulkResult:
    return _bulk("resume", body)


@router.post(
    "/bulk/cancel",
    summary="Cancel a group or id prefix, a page at a time",
    description="Each action is cancelled as DELETE /actions/{id} would.",
    responses=responses(200, BulkResult, "One page changed", 400),
    tags=["steering"],
)
def bulk_cancel(body: BulkRequest) -> BulkResult:
    return _bulk("cancel", body)


def _changed(result: ChangeAnswer) -> Response[ChangeResult]:
    status = HTTPStatus.ACCEPTED if result.outcome is Done.DEFERRED else HTTPStatus.OK
    answer = ChangeResult.model_validate(result.to_wire())
    return Response(status, content_types.APPLICATION_JSON, answer)
