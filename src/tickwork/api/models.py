"""The HTTP API's request and response bodies: the OpenAPI document is generated from these.

Request bodies for actions are the Schedule Start detail itself (``StartDetail``, the bus
contract), so the API and the bus cannot drift apart. Response models forbid extra fields:
a view that grows a field without its model fails response validation instead of passing
undocumented.
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    StrictInt,
    model_serializer,
)
from pydantic.alias_generators import to_camel
from pydantic.json_schema import SkipJsonSchema

from tickwork.domain.action import Status
from tickwork.domain.identifiers import ID_PATTERN, MAX_ID_LENGTH
from tickwork.domain.preview import MAX_COUNT
from tickwork.domain.start_fields import DEFAULT_TIMEZONE
from tickwork.domain.start_request import StartDetail, described

__all__ = [
    "ActionPage",
    "ActionSummary",
    "ActionView",
    "BulkItem",
    "BulkRequest",
    "BulkResult",
    "ChangeResult",
    "CreateAction",
    "ErrorBody",
    "FireBucket",
    "FireBuckets",
    "FireCounts",
    "FireTime",
    "HistoryEntry",
    "MoveRequest",
    "NoteRequest",
    "OccurrenceList",
    "OccurrenceRequest",
    "OccurrenceView",
    "Preview",
    "PreviewRequest",
    "Problem",
    "RetryRequest",
    "RunNowRequest",
    "Stats",
    "TransitionEntry",
    "UpdateAction",
    "request_field_names",
]


class CreateAction(StartDetail):
    """A Schedule Start detail, exactly as on the bus, with its id required.

    Give exactly one "when": at, executionTime, duration, delay, cron, rate or frequency.
    """

    id: str = described("id", ..., max_length=MAX_ID_LENGTH, pattern=f"^{ID_PATTERN.pattern}$")


class UpdateAction(StartDetail):
    """The fields of a Schedule Start detail to change; the others keep their stored value.

    Giving any "when" field replaces the stored one (and its other when fields).
    """

    id: SkipJsonSchema[str | None] = None


class PreviewRequest(BaseModel):
    """A schedule to preview: the "when" fields of a Start detail as they are (``cron``,
    ``rate``, ``at``, ``scheduleExpression``, ...), or one ``expression`` as `tickwork next`
    takes it."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, frozen=True)

    expression: str | None = Field(
        default=None,
        min_length=1,
        description='"30 * * * *", "cron(0 9 ? * MON-FRI *)", "rate(5 minutes)", '
        '"at(2030-11-20T13:00:00)", "DAILY", "1h30m" or an ISO 8601 time.',
    )
    at: str | None = described("at")
    execution_time: int | None = described("executionTime")
    duration: str | None = described("duration")
    delay: str | None = described("delay")
    cron: str | None = described("cron")
    rate: str | None = described("rate")
    frequency: str | None = described("frequency")
    schedule_expression: str | None = described("scheduleExpression")
    start_time: str | None = described("startTime")
    end_time: str | None = described("endTime")
    execution_remainder: int | None = described("executionRemainder")
    repeat: bool | None = described("repeat")
    timezone: str = described("timezone", DEFAULT_TIMEZONE)
    dst_repeated: str | None = described("dstRepeated")
    dst_missing: str | None = described("dstMissing")
    flexible_window: str | None = described("flexibleWindow")
    window_mode: str | None = described("windowMode")
    calendar: str | None = described("calendar")
    on_excluded: str | None = described("onExcluded")
    id: str | None = Field(
        default=None,
        min_length=1,
        description="With flexibleWindow: the action id whose instants to list (each "
        "occurrence's instant in its window is fixed by the id); without it, the scheduled times.",
    )
    count: int = Field(default=5, ge=1, le=MAX_COUNT, description="How many fires to list.")
    after: AwareDatetime | None = Field(
        default=None, description="List the fires strictly after this time (default: now)."
    )
    first: str | None = Field(default=None, description="A frequency's first time (ISO 8601).")


class NoteRequest(BaseModel):
    """Why (optional): kept on the record and shown with the action (Temporal's note)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    note: str | None = Field(default=None, max_length=500)


class RunNowRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, frozen=True)

    request_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="Your id for this request: sending it again does not fire again.",
    )


class OccurrenceRequest(BaseModel):
    """One occurrence of a recurrence, by its number or by its scheduled time (exactly one)."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, frozen=True)

    occurrence: StrictInt | None = Field(
        default=None,
        ge=1,
        description="Its number (the next is the record's occurrence; GET "
        "/actions/{id}/occurrences lists them).",
    )
    at: AwareDatetime | None = Field(
        default=None, description="Its time as the schedule has it (ISO 8601 with an offset)."
    )
    note: str | None = Field(default=None, max_length=500, description="Why: kept in the history.")


class MoveRequest(OccurrenceRequest):
    to: AwareDatetime = Field(
        description="When it fires instead: in the future, strictly between the occurrences "
        "before and after it."
    )


class BackfillRequest(BaseModel):
    """A past range of a recurrence to run now, once each occurrence (Temporal's backfill)."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, frozen=True)

    start_time: AwareDatetime = Field(
        description="The range's start (inclusive), ISO 8601 with an offset: the schedule's "
        "occurrences from here on are run.",
        examples=["2026-11-01T00:00:00Z"],
    )
    end_time: AwareDatetime = Field(
        description="The range's end (inclusive), at or before now: a backfill runs past "
        "occurrences. At most 1,000 occurrences in the range.",
        examples=["2026-11-07T23:59:59Z"],
    )
    overlap: str = Field(
        default="REFUSE",
        examples=["SKIP"],
        description="What to do with occurrences the action's own schedule had (at or after "
        "its creation): REFUSE the backfill (409, nothing runs), or SKIP them and run the "
        "others. Occurrences backfilled before are never run again, whatever this says.",
    )
    request_id: str | None = Field(
        default=None,
        max_length=500,
        description="Your id for the request, kept with the backfill while it runs.",
    )
    note: str | None = Field(default=None, max_length=500, description="Why: kept with it.")


class BackfillFire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)

    scheduled_time: str = Field(description="The occurrence's own scheduled time: its tick's.")
    manual: int = Field(description="Its number among the fires asked for by hand.")
    idempotency_key: str = Field(description="Its key: its own, never a live fire's.")


class BackfillResult(BaseModel):
    """What a backfill ran now, passed over, and left waiting."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)

    id: str
    outcome: str = Field(
        description="backfilling (some occurrences wait for a slot: each fire recorded runs "
        "the next), backfilled (every occurrence run or running), or unchanged (all of them "
        "were backfilled before, or the live schedule's)."
    )
    status: str
    occurrences: int = Field(description="The occurrences in the range.")
    launched: list[BackfillFire] = Field(description="Those started by this request.")
    already_backfilled: int = Field(description="Backfilled before: not run again.")
    overlapping: int = Field(description="The live schedule's, passed over (overlap SKIP).")
    first_overlapping: str | None = None
    remaining: int = Field(description="Waiting for a slot: they run as the others finish.")
    in_flight: int = Field(description="Backfilled fires running now.")


class CalendarView(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)

    name: str
    timezone: str
    dates: list[str]
    hours: dict[str, list[str]] | None = None
    description: str | None = None
    version: int = Field(description="Goes up with each replace.")
    updated_at: str | None = None
    sealed: bool | None = Field(
        default=None,
        description="False when its item was changed outside tickwork (its seal does not "
        "hold): no fire takes it (each keeps its record's own copy and says so); put it again "
        "to seal what it should hold.",
    )


class CalendarWritten(CalendarView):
    planned_again: list[str] = Field(
        default_factory=list,
        description="Live schedules naming it whose next fire it brought earlier: each is "
        "planned again at the first fire it allows.",
    )
    resumed: list[str] = Field(
        default_factory=list,
        description="Schedules that were held on it and that it now allows a fire: resumed.",
    )
    held: list[str] = Field(
        default_factory=list,
        description="With holdSchedules=true: live schedules it allows no fire within the "
        "search bound, held (paused on it, in attention) until it allows one.",
    )


class CalendarDeleted(BaseModel):
    name: str
    outcome: str = Field(description="deleted")


class CalendarList(BaseModel):
    calendars: list[CalendarView]


class RetryRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    occurrence: int | None = Field(
        default=None, ge=0, description="Which failed fire to run again (default: the latest)."
    )


class BulkRequest(BaseModel):
    """Actions by group and/or id prefix; one page of them per call, in id order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    group: str | None = Field(default=None, description="Only this group.")
    prefix: str | None = Field(default=None, description="Only ids that start with this.")
    note: str | None = Field(default=None, max_length=500, description="Why (pause, resume).")
    limit: int = Field(default=100, ge=1, le=200, description="At most this many per call.")
    cursor: str | None = Field(default=None, description="nextCursor of the previous call.")


def request_field_names() -> tuple[str, ...]:
    """Every field a request body may hold, as sent: for "did you mean" on unknown fields."""
    names = {
        str(info.alias or name)
        for model in (CreateAction, PreviewRequest, NoteRequest, RunNowRequest, BulkRequest)
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
    outcome: str = Field(description="FIRED, FAILED, NO_ACTION, or SKIPPED (not run: see reason).")
    reason: str | None = Field(
        default=None,
        description="Why nothing ran (SKIPPED, NO_ACTION): 'skipped by request: <note>', "
        "'missed; catch-up SKIP', 'excluded by calendar NAME', ...; for a moved occurrence, "
        "'moved by request[: note]'.",
    )
    moved_to: str | None = Field(
        default=None,
        description="A moved occurrence: when it fired instead of its scheduledTime (its "
        "lateMs counts from this).",
    )
    error: str | None = None
    late_ms: int | None = Field(default=None, description="How late it ran, in milliseconds.")
    trigger: str = Field(description="SCHEDULED, or RUN_NOW / RETRY: a fire an operator asked for.")
    manual: int = Field(description="The number of the manual fire it was (0: scheduled).")
    execution: str | None = Field(
        default=None,
        description="The execution that ran it: its own (named after the action), or the batch "
        "of fires due in the same second it ran in (b-<second>-<members>).",
    )


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
    retry_count: int = Field(description="Automatic retries of the last fire (attempts - 1).")
    manual_retries: int = Field(
        description="Retries asked for by hand (POST /actions/{id}/retry) among the fires its "
        "history keeps."
    )
    last_error: str | None
    last_outcome: str | None = Field(
        default=None,
        description="The last fire's outcome (FIRED, FAILED, NO_ACTION, SKIPPED); null before "
        "the first.",
    )
    last_fired_at: str | None = Field(
        default=None, description="When the last fire ran, ISO 8601 UTC; null before the first."
    )
    group: str
    needs_attention: bool = Field(
        description="A fire failed past its retries and has not been retried by hand yet, "
        "the fire it is at was found missed (missedFire) and has not happened yet, it is held "
        "by its calendar (heldByCalendar), or a fire found its calendar changed outside "
        "tickwork (calendarTampered)."
    )
    pause_note: str | None = Field(description="Why it is paused.")
    held_by_calendar: str | None = Field(
        default=None,
        description="Paused because this calendar allows none of its fires within the search "
        "bound (it was not ended on the calendar's account); it resumes by itself once the "
        "calendar allows a fire again.",
    )
    deferred: str | None = Field(
        description="A change that waits for the imminent fire and applies once it is "
        "recorded: an UPDATE asked for inside the lock, or a CANCEL or PAUSE of a recurrence "
        "whose fire was already claimed (under way)."
    )


class ActionView(ActionSummary):
    data: dict[str, Any]
    metadata: dict[str, Any]
    timezone: str
    schedule_spec: dict[str, Any] = Field(
        description="The schedule as stored: kind (once, cron, rate, frequency), expression, "
        "anchor (a one-off's time, a rate's start, a frequency's first fire), timezone, start, "
        "end and maxOccurrences; instants in ISO 8601 UTC."
    )
    repeat: bool
    frequency: str | None
    catch_up: dict[str, Any] = Field(
        description="What happens to fires missed in an outage: policy ONCE, SKIP or ALL, the "
        "misfire threshold in seconds and, for ALL, the window."
    )
    on_failure: str = Field(description="CONTINUE, PAUSE or STOP after a failed fire.")
    on_unknown_outcome: str = Field(
        description="FAIL or RETRY: what a claimed fire whose execution ended without a tick or "
        "a failure report becomes."
    )
    role_arn: str | None = Field(
        default=None, description="The role the target is reached with (AWS action types)."
    )
    lock_seconds: int | None = Field(
        default=None,
        description="Its own lock: how many seconds before a fire its schedule is fixed; null "
        "for the stack's LockSeconds.",
    )
    maximum_retry_attempts: int | None = Field(
        default=None,
        description="Its own retry policy's attempts after the first (0 to 185); null for the "
        "stack's RetryMaxAttempts.",
    )
    maximum_event_age_seconds: int = Field(
        default=86_400,
        description="How long after its fire time a failed fire may still be attempted again.",
    )
    dead_letter_arn: str | None = Field(
        default=None,
        description="The SQS queue every fire that failed for good is sent to; null for none.",
    )
    catch_up_on_resume: str = Field(
        default="SKIP",
        description="What a resume does with the occurrences that came due while paused: "
        "SKIP, LAST (run once) or ALL (each, the latest 100).",
    )
    overlap_policy: str = Field(
        default="SKIP",
        description="What happens to an occurrence that comes due while the previous fire is "
        "still being attempted: SKIP, BUFFER_ONE, BUFFER_ALL or ALLOW_ALL.",
    )
    retrying: dict[str, Any] | None = Field(
        default=None,
        description="While a fire is being retried: occurrence, attemptsMade, attemptsLeft "
        "(what its retry policy still allows), deadline (no attempt starts after it) and "
        "lastError; null otherwise.",
    )
    paused_at: str | None
    idempotency_key: str | None = Field(
        description="The next scheduled fire's idempotency key (the same on every attempt)."
    )
    manual_fires: list[dict[str, Any]] = Field(
        description="Fires asked for by hand (run now, retry) still running."
    )
    failed_fires: list[dict[str, Any]] = Field(
        description="Failed fires waiting for a retry by hand (POST /actions/{id}/retry)."
    )
    calendar_tampered: dict[str, Any] | None = Field(
        default=None,
        description="A fire found the calendar it names changed outside tickwork (its seal did "
        "not hold: calendar, notedAt) and kept the record's own sealed copy: it needs attention "
        "until a fire reads the calendar sealed again (put it again to seal it).",
    )
    missed_fire: dict[str, Any] | None = Field(
        default=None,
        description="The fire the action is at, found not happened by its time plus "
        "MissedGraceSeconds (occurrence, scheduledTime, notedAt): it needs attention until "
        "that fire happens.",
    )
    occurrence_changes: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Coming occurrences skipped or moved by request: scheduledTime, firesAt "
        "(a move's time; null when skipped), skipped, requestedAt, note "
        "(POST /actions/{id}/occurrences/skip, /move, /restore).",
    )
    backfill: dict[str, Any] | None = Field(
        default=None,
        description="The backfill still running (POST /actions/{id}/backfill): startTime, "
        "endTime, overlap, requestedAt, note; null when none waits.",
    )
    backfilled: list[dict[str, Any]] = Field(
        default_factory=list,
        description="The spans of past scheduled times backfilled (first, last): an "
        "occurrence in one never runs again.",
    )
    generation: int
    version: int
    execution_arn: str | None = Field(
        description="The execution waiting for the next fire; null while the fire is parked "
        "(one parked beyond the horizon stays so once the pump started its execution, until "
        "that execution claims it: the execution is named for the action in the console)."
    )
    launch_at: str | None = Field(
        description="While the next fire is parked (further away than LaunchAheadSeconds), "
        "when the pump starts its execution (once past, it has started it, or will at its "
        "next run); null otherwise."
    )
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


class _Sparse(_Response):
    """A response whose fields that do not apply are left out rather than null."""

    # No return annotation: pydantic then documents the model's own fields, not a dict.
    @model_serializer(mode="wrap")
    def _without_nulls(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        return {key: value for key, value in handler(self).items() if value is not None}


class ChangeResult(_Sparse):
    """What a cancel, pause, resume, run now or retry did."""

    id: str
    outcome: str = Field(
        description="cancelled, paused, resumed, completed (resumed past its end), triggered, "
        "retried, skipped, moved, restored (a skip or move undone), unchanged, or deferred "
        "(inside the lock: it applies after the imminent fire)."
    )
    status: Status
    execution_time: str | None = None
    occurrence: int | None = None
    manual: int | None = None
    trigger: str | None = None
    idempotency_key: str | None = None
    execution_arn: str | None = None
    note: str | None = None
    change: str | None = None
    applies_after: dict[str, Any] | None = None
    message: str | None = None
    scheduled_time: str | None = Field(
        default=None, description="A skip or move: the occurrence's time as its schedule has it."
    )
    fires_at: str | None = Field(
        default=None, description="A move (or an undone skip): when that occurrence now fires."
    )


class OccurrenceView(_Sparse):
    occurrence: int
    scheduled_time: str = Field(description="Its time as the schedule has it.")
    fires_at: str | None = Field(
        default=None, description="When it fires: its moved time if moved; left out if skipped."
    )
    skipped: bool = False
    moved: bool = False
    note: str | None = None


class OccurrenceList(_Response):
    id: str
    status: Status
    occurrences: list[OccurrenceView]


class BulkItem(_Sparse):
    id: str
    outcome: str
    status: str | None = None
    error: str | None = Field(default=None, description="Why this one was refused.")


class BulkResult(_Response):
    matched: int = Field(description="Actions in this page.")
    results: list[BulkItem]
    next_cursor: str | None = Field(description="Pass as cursor to go on; null when done.")


class FireCounts(_Response):
    fired: int = Field(description="Occurrences that fired (on time or late).")
    late: int = Field(description="Of those fired, how many more than 1 s after their time.")
    failed: int = Field(description="Occurrences that failed after their retries.")


class Stats(_Response):
    by_status: dict[str, int]
    needs_attention: int = Field(
        description="Actions with a failed fire waiting for a retry, or a missed fire that has "
        "not happened yet."
    )
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


class AroundDstChange(_Response):
    change: str = Field(description="When the zone's UTC offset next changes.")
    before: list[FireTime] = Field(description="The last fires before it (up to 3).")
    after: list[FireTime] = Field(description="The first fires after it (up to 3).")


class Preview(_Sparse):
    times: list[FireTime]
    around_dst_change: AroundDstChange | None = Field(
        default=None,
        description="A cron or a frequency in a zone with DST: its fires around the zone's next "
        "change, as dstRepeated and dstMissing make them.",
    )


class Problem(_Response):
    field: str
    problem: str
    fix: str


class ErrorBody(_Response):
    error: str = Field(description="What happened, by name (e.g. ValidationFailed).")
    message: str
    problems: list[Problem] = Field(default_factory=list)


class RejectionEntry(_Response):
    """One refusal, as its Schedule Rejected event said it."""

    number: int = Field(description="1, 2, ... in the order its sender's refusals were kept.")
    at: str = Field(description="When it was refused, ISO 8601 UTC.")
    detail_type: str = Field(description="Schedule Rejected.")
    id: str | None = Field(default=None, description="The action id the request named.")
    request: str = Field(
        description="What was refused: Schedule Start, Schedule Stop, Pause, Resume, Run Now, "
        "Schedule Tick or Failed (a report), or deferred update (a change that waited)."
    )
    event_id: str | None = Field(default=None, description="The refused event's id.")
    reason: str = Field(description="The error's name, e.g. InvalidStartRequest.")
    message: str
    problems: list[Problem] = Field(default_factory=list)
    signature: str | None = Field(
        default=None, description="Why a signature was refused (signed events only)."
    )
    source: str | None = Field(
        default=None, description="The sender's EventBridge source (events on the bus)."
    )


class Rejections(_Response):
    rejections: list[RejectionEntry]
