"""The HTTP API's request and response bodies: the OpenAPI document is generated from these.

Request bodies for actions are the Schedule Start detail itself (``StartDetail``, the bus
contract), so the API and the bus cannot drift apart. Response models forbid extra fields:
a view that grows a field without its model fails response validation instead of passing
undocumented.
"""

from __future__ import annotations

from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from pydantic.json_schema import SkipJsonSchema

from tickwork.domain.action import Status
from tickwork.domain.preview import MAX_COUNT
from tickwork.domain.start_request import StartDetail
from tickwork.usecases.start import ID_PATTERN, MAX_ID_LENGTH

__all__ = [
    "ActionPage",
    "ActionSummary",
    "ActionView",
    "CancelResult",
    "CreateAction",
    "ErrorBody",
    "FireBucket",
    "FireBuckets",
    "FireCounts",
    "FireTime",
    "HistoryEntry",
    "Preview",
    "PreviewRequest",
    "Problem",
    "RetryResult",
    "Stats",
    "TransitionEntry",
    "UpdateAction",
    "request_field_names",
]

_START_FIELDS = {
    "id": "The action's id: unique, chosen by the caller (e.g. invoice:42:downgrade).",
    "action": "The action type: a registered fulfillment (TICK, HTTP_REQUEST, ...).",
    "data": "The action type's payload, checked against its schema.",
    "metadata": "Passed through to every tick as is.",
    "at": "When (one-off): an ISO 8601 time; local to timezone when it has no offset. "
    "With frequency: the first time.",
    "executionTime": "When (one-off): epoch milliseconds. With frequency: the first time.",
    "duration": 'When (one-off): after this long, e.g. "90s", "5m", "1h30m", "2d", "PT5M".',
    "delay": "Same as duration.",
    "cron": 'When (recurring): 5-field cron "30 * * * *" or EventBridge "cron(0 9 ? * MON-FRI *)".',
    "rate": 'When (recurring): "rate(5 minutes)".',
    "frequency": "When (recurring): TEN_MINS, HOURLY, DAILY, WEEKLY or MONTHLY.",
    "timezone": "IANA zone for cron and local times.",
    "repeat": "Recurring schedules repeat; with executionRemainder it bounds the count.",
    "executionRemainder": "Total number of fires.",
    "startTime": "No fire before this ISO 8601 time.",
    "endTime": "No fire after this ISO 8601 time.",
}


def _describe_start_fields(schema: dict[str, Any]) -> None:
    for name, prop in schema.get("properties", {}).items():
        if name in _START_FIELDS:
            prop.setdefault("description", _START_FIELDS[name])


class CreateAction(StartDetail):
    """A Schedule Start detail, exactly as on the bus, with its id required.

    Give exactly one "when": at, executionTime, duration, delay, cron, rate or frequency.
    """

    model_config = ConfigDict(json_schema_extra=_describe_start_fields)

    id: str = Field(min_length=1, max_length=MAX_ID_LENGTH, pattern=ID_PATTERN.pattern)


class UpdateAction(StartDetail):
    """The fields of a Schedule Start detail to change; the others keep their stored value.

    Giving any "when" field replaces the stored one (and its other when fields).
    """

    model_config = ConfigDict(json_schema_extra=_describe_start_fields)

    id: SkipJsonSchema[str | None] = None


class PreviewRequest(BaseModel):
    """A schedule expression as `tickwork next` takes it."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, frozen=True)

    expression: str = Field(
        min_length=1,
        description='"30 * * * *", "cron(0 9 ? * MON-FRI *)", "rate(5 minutes)", "DAILY", '
        '"1h30m" or an ISO 8601 time.',
    )
    timezone: str = Field(default="UTC", description="IANA zone of cron and local times.")
    count: int = Field(default=5, ge=1, le=MAX_COUNT, description="How many fires to list.")
    after: AwareDatetime | None = Field(
        default=None, description="List fires from this time on (default: now)."
    )
    first: str | None = Field(default=None, description="A frequency's first time (ISO 8601).")


def request_field_names() -> tuple[str, ...]:
    """Every field a request body may hold, as sent: for "did you mean" on unknown fields."""
    names = {
        str(info.alias or name)
        for model in (CreateAction, PreviewRequest)
        for name, info in model.model_fields.items()
    }
    return tuple(sorted(names))


class _Response(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)


class HistoryEntry(_Response):
    occurrence: int
    scheduled_time: str
    actual_time: str
    attempts: int
    outcome: str = Field(
        description="FIRED, FAILED, NO_ACTION, or SKIPPED (missed; the catch-up policy said so)."
    )
    error: str | None = None
    late_ms: int | None = Field(default=None, description="How late it ran, in milliseconds.")


class TransitionEntry(_Response):
    at: str
    from_: str | None = Field(alias="from")
    to: str
    reason: str


class ActionSummary(_Response):
    id: str
    action: str
    status: Status
    execution_time: str | None = Field(description="The next (or current) fire, ISO 8601 UTC.")
    occurrence: int
    execution_remainder: int | None = Field(description="Fires left; null when unbounded.")
    schedule: str = Field(description="The schedule in words.")
    retry_count: int
    last_error: str | None


class ActionView(ActionSummary):
    data: dict[str, Any]
    metadata: dict[str, Any]
    timezone: str
    repeat: bool
    frequency: str | None
    catch_up: dict[str, Any] = Field(
        description="What happens to fires missed in an outage: policy ONCE, SKIP or ALL, the "
        "misfire threshold in seconds and, for ALL, the window."
    )
    generation: int
    version: int
    execution_arn: str | None
    last_result: dict[str, Any] | None
    created_at: str
    updated_at: str
    history: list[HistoryEntry] = Field(description="The latest occurrences, oldest first.")
    transitions: list[TransitionEntry]


class ActionPage(_Response):
    items: list[ActionSummary]
    next_cursor: str | None = Field(
        description="Pass as cursor for the next page; null at the end."
    )


class CancelResult(_Response):
    id: str
    outcome: str = Field(description="cancelled, or unchanged when it had already finished.")
    status: Status


class RetryResult(_Response):
    id: str
    outcome: str
    status: Status
    occurrence: int
    execution_time: str


class FireCounts(_Response):
    fired: int = Field(description="Occurrences that fired (on time or late).")
    late: int = Field(description="Of those fired, how many more than 1 s after their time.")
    failed: int = Field(description="Occurrences that failed after their retries.")


class Stats(_Response):
    by_status: dict[str, int]
    last_hour: FireCounts
    last_day: FireCounts


class FireBucket(_Response):
    start: str
    on_time: int
    late: int
    failed: int


class FireBuckets(_Response):
    buckets: list[FireBucket]


class FireTime(_Response):
    n: int
    utc: str
    local: str
    zone: str


class Preview(_Response):
    times: list[FireTime]


class Problem(_Response):
    field: str
    problem: str
    fix: str


class ErrorBody(_Response):
    error: str = Field(description="What happened, by name (e.g. ValidationFailed).")
    message: str
    problems: list[Problem] = Field(default_factory=list)
