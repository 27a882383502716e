"""Errors as JSON: {"error", "message", "problems": [{"field", "problem", "fix"}]}.

Bad input is a 400 naming the field and the fix, whether tickwork refused it
(``ValidationFailed``) or the request did not match the OpenAPI schema (Powertools'
``RequestValidationError``); a missing action is a 404; a request the action's state
refuses (locked, not retryable, already exists, still active, changed meanwhile) is a 409.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)

from tickwork.api.models import request_field_names
from tickwork.domain.errors import (
    ActionConflict,
    ActionExists,
    ActionFinished,
    ActionLocked,
    ActionNotFound,
    ActionNotRetryable,
    BackfillOverlap,
    CalendarConflict,
    CalendarEndsSchedules,
    CalendarNotFound,
    FieldProblem,
    FireUnderWay,
    ManualFiresInFlight,
    NotRecurring,
    OccurrenceLocked,
    RecordAltered,
    TickworkError,
    ValidationFailed,
    field_path,
)

__all__ = ["ActionStillActive", "register"]

Reply = Response[dict[str, Any]]  # every error answer: {"error", "message", "problems"}


class ActionStillActive(TickworkError):
    """Purge of an action that may still fire."""

    def __init__(self, action_id: str, status: str) -> None:
        self.action_id = action_id
        self.status = status
        super().__init__(f"action {action_id!r} is {status}; only a finished action can be purged")


def register(app: APIGatewayHttpResolver) -> None:
    """Install the handlers that turn errors into JSON responses on ``app``."""
    handlers: dict[type[Exception], Callable[[Any], Reply]] = {
        ValidationFailed: lambda e: _reply(HTTPStatus.BAD_REQUEST, e, e.problems),
        RequestValidationError: _schema_refusal,
        RequestUnsupportedContentType: _schema_refusal,
        ActionNotFound: lambda e: _reply(
            HTTPStatus.NOT_FOUND,
            e,
            [
                FieldProblem(
                    "id",
                    "no action has this id",
                    "check the id (URL-encode reserved characters) or list them: GET /actions",
                )
            ],
        ),
        ActionExists: lambda e: _reply(
            HTTPStatus.CONFLICT,
            e,
            [
                FieldProblem(
                    "id",
                    "is taken by an existing action",
                    f"change it with PATCH /actions/{e.action_id}, or choose another id",
                )
            ],
        ),
        FireUnderWay: lambda e: _reply(
            HTTPStatus.CONFLICT,
            e,
            [
                FieldProblem(
                    "id",
                    "is a one-off whose only fire is under way (claimed): it completes as it runs",
                    "let it complete; schedule it again if needed",
                )
            ],
        ),
        ActionLocked: lambda e: _reply(
            HTTPStatus.CONFLICT,
            e,
            [
                FieldProblem(
                    "id",
                    "is a one-off inside its lock: its only fire is about to happen",
                    "let it fire, then schedule it again if needed",
                )
            ],
        ),
        OccurrenceLocked: lambda e: _reply(
            HTTPStatus.CONFLICT,
            e,
            [
                FieldProblem(
                    "occurrence",
                    f"occurrence {e.occurrence} is inside its lock: it happens as planned",
                    "skip or move a later occurrence, or let this one fire",
                )
            ],
        ),
        RecordAltered: lambda e: _reply(
            HTTPStatus.CONFLICT,
            e,
            [
                FieldProblem(
                    "id",
                    "was altered outside tickwork: its seal does not match what it holds",
                    "schedule it again from its Start detail (a Start or PATCH seals what it "
                    "is given), or cancel it",
                )
            ],
        ),
        BackfillOverlap: lambda e: _reply(
            HTTPStatus.CONFLICT,
            e,
            [
                FieldProblem(
                    "endTime",
                    f"reaches {e.count} occurrence(s) the action's own schedule had (from "
                    f"{e.live_from}), the first at {e.first}",
                    f'end the range before {e.live_from}, or give "overlap": "SKIP" to run only '
                    "the others",
                )
            ],
        ),
        CalendarNotFound: lambda e: _reply(
            HTTPStatus.NOT_FOUND,
            e,
            [
                FieldProblem(
                    "name",
                    "no calendar has this name",
                    "check the name, or list them: GET /calendars",
                )
            ],
        ),
        CalendarConflict: lambda e: _reply(
            HTTPStatus.CONFLICT,
            e,
            [FieldProblem("name", "changed while it was being written", "send it again")],
        ),
        CalendarEndsSchedules: lambda e: _reply(
            HTTPStatus.CONFLICT,
            e,
            [
                FieldProblem(
                    "dates",
                    f"would leave {len(e.action_ids)} live schedule(s) naming it with no fire "
                    f"within the search bound: {', '.join(e.action_ids[: e.SHOWN])}",
                    "let it allow some of their fires (fewer dates, wider hours), change or "
                    "cancel those schedules, or send holdSchedules=true to hold them (paused "
                    "on it, in attention) until it allows a fire",
                )
            ],
        ),
        NotRecurring: lambda e: _reply(
            HTTPStatus.CONFLICT,
            e,
            [
                FieldProblem(
                    "id",
                    "is a one-off: its only fire is the action itself",
                    f"cancel it (DELETE /actions/{e.action_id}) or change its time (PATCH)",
                )
            ],
        ),
        ActionNotRetryable: lambda e: _reply(
            HTTPStatus.CONFLICT,
            e,
            [
                FieldProblem(
                    "status",
                    "has no failed fire to retry",
                    "retry a FAILED action, or one whose history shows a FAILED fire",
                )
            ],
        ),
        ActionFinished: lambda e: _reply(
            HTTPStatus.CONFLICT,
            e,
            [
                FieldProblem(
                    "status",
                    f"is {e.status}: the action has finished",
                    "schedule it again (PATCH or a new Start); retry a FAILED one",
                )
            ],
        ),
        ManualFiresInFlight: lambda e: _reply(
            HTTPStatus.CONFLICT,
            e,
            [
                FieldProblem(
                    "id",
                    "has too many fires asked for by hand still running",
                    "wait for them to finish (GET /actions/{id} lists them), then ask again",
                )
            ],
        ),
        ActionStillActive: lambda e: _reply(
            HTTPStatus.CONFLICT,
            e,
            [
                FieldProblem(
                    "purge",
                    f"the action is {e.status}",
                    "cancel it first (DELETE without purge), then purge it",
                )
            ],
        ),
        ActionConflict: lambda e: _reply(
            HTTPStatus.CONFLICT,
            e,
            [FieldProblem("id", "changed while this request ran", "read it again and retry")],
        ),
    }
    for error_type, handler in handlers.items():
        app.exception_handler(error_type)(handler)
    app.not_found(_no_route)


def _no_route(_: Exception) -> Reply:
    return _reply(
        HTTPStatus.NOT_FOUND,
        NotFoundError("no such route"),
        [FieldProblem("path", "matches no route", "see the routes at /openapi.json or /docs")],
    )


def _reply(status: HTTPStatus, error: Exception, problems: list[FieldProblem]) -> Reply:
    return Response(
        status_code=status,
        content_type=content_types.APPLICATION_JSON,
        body={
            "error": type(error).__name__,
            "message": str(error),
            "problems": [p.as_dict() for p in problems],
        },
    )


def _schema_refusal(error: RequestValidationError) -> Reply:
    problems = [problem for item in error.errors() for problem in _problems(item)]
    return _reply(HTTPStatus.BAD_REQUEST, ValidationFailed(problems), problems)


def _problems(item: dict[str, Any]) -> list[FieldProblem]:
    """One pydantic error as field problems: where (body field, query or path parameter),
    what was wrong, and a fix built from the error's kind and limits — or, refused by a field
    type of the stack's own (``domain.wire``), its own words."""
    where, *rest = list(item.get("loc", ())) or ["body"]
    kind = item.get("type", "")
    if kind == "json_invalid":
        return [FieldProblem("body", "is not valid JSON", "send a JSON object")]
    field = field_path(rest) if rest else str(where)
    context = item.get("ctx") or {}
    if kind == "tickwork":
        inner = [FieldProblem(field + p.field, p.problem, p.fix) for p in context["problems"]]
        return inner or [FieldProblem(field, context["problem"], context["fix"])]
    return [FieldProblem(field, item.get("msg", "is invalid"), _fix(kind, field, context))]


def _fix(kind: str, field: str, ctx: dict[str, Any] | None) -> str:
    limits = ctx or {}
    if kind == "extra_forbidden":
        # Never "rename it to" its own name: a field of another body is no fix here.
        names = [name for name in request_field_names() if name != field]
        close = difflib.get_close_matches(field, names, n=1)
        return f"rename it to {close[0]!r}" if close else "remove it (see /openapi.json)"
    if kind == "missing":
        return "send a JSON object" if field == "body" else f"add {field}"
    if kind in ("enum", "literal_error"):
        return f"use one of {limits.get('expected', 'the values in /openapi.json')}"
    if "ge" in limits or "le" in limits or "gt" in limits or "lt" in limits:
        bounds = ", ".join(f"{op} {limits[op]}" for op in ("ge", "gt", "le", "lt") if op in limits)
        return f"give a number {bounds}"
    if kind == "string_pattern_mismatch":
        return f"match {limits.get('pattern')}"
    if kind == "string_too_long":
        return f"use at most {limits.get('max_length')} characters"
    if kind == "string_too_short":
        return "give a non-empty value"
    if kind == "unsupported_content_type":
        return "send Content-Type: application/json"
    return _FIXES_BY_KIND.get(kind, "see the request schema at /openapi.json")


_FIXES_BY_KIND = {
    "int_type": "give a whole number",
    "int_parsing": "give a whole number",
    "int_from_float": "give a whole number",
    "bool_type": "give true or false",
    "bool_parsing": "give true or false",
    "string_type": "give a string",
    "dict_type": "give a JSON object",
    "model_type": "give a JSON object",
    "model_attributes_type": "give a JSON object",
    "timezone_aware": 'give a time with a zone, e.g. "2026-05-01T09:00:00Z"',
    "datetime_type": 'give an ISO 8601 time, e.g. "2026-05-01T09:00:00Z"',
    "datetime_parsing": 'give an ISO 8601 time, e.g. "2026-05-01T09:00:00Z"',
    "datetime_from_date_parsing": 'give an ISO 8601 time, e.g. "2026-05-01T09:00:00Z"',
}
