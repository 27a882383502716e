"""The "Schedule Start" event detail: what to run, and when.

``parse_start_detail`` turns the detail into a ``StartRequest`` holding a ``Schedule``,
or refuses it with a ``ValidationFailed`` whose problems name each field and its fix.
Recurrence: cron, rate and frequency always recur (``repeat`` defaults to true for them);
at, executionTime, duration and delay are one-offs. ``frequency`` takes its first time
from ``at`` or ``executionTime``; without either it first fires one period from now.

Long for a domain module, on purpose: the Start's model and the checks that read fields
together (two "when"s, a recurrence's bounds, a window with a calendar) are one reading of one
detail, each refusal naming its field.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError
from pydantic.alias_generators import to_camel

from tickwork.domain.catch_up import (
    DEFAULT_CATCH_UP,
    DEFAULT_THRESHOLD,
    DEFAULT_WINDOW,
    CatchUp,
    CatchUpPolicy,
)
from tickwork.domain.durations import parse_duration
from tickwork.domain.errors import FieldProblem, ValidationFailed
from tickwork.domain.fire_ending import UnknownOutcomePolicy
from tickwork.domain.fire_policy import (
    MAX_EVENT_AGE,
    MAX_LOCK,
    MAX_RETRY_ATTEMPTS,
    MIN_EVENT_AGE,
    NO_POLICY,
    FirePolicy,
    OverlapPolicy,
    ResumeCatchUp,
)
from tickwork.domain.identifiers import DEFAULT_GROUP, check_group
from tickwork.domain.schedule import Frequency, Schedule, ScheduleKind
from tickwork.domain.schedule.calendar import CalendarUse, Excluded, check_calendar_name
from tickwork.domain.schedule.frequency import frequency_trigger, parse_frequency
from tickwork.domain.schedule.rate import parse_rate
from tickwork.domain.schedule.wallclock import (
    DEFAULT_DST,
    DstPolicy,
    MissingTime,
    RepeatedTime,
    load_zone,
    parse_local,
)
from tickwork.domain.schedule.window import MAX_WINDOW as MAX_FIRE_WINDOW
from tickwork.domain.schedule.window import FireWindow, WindowMode
from tickwork.domain.start_fields import (
    DEFAULT_ACTION,
    DEFAULT_TIMEZONE,
    MAX_OCCURRENCES,
    MAX_PAYLOAD_BYTES,
    MAX_ROLE_ARN_LENGTH,
    field_named,
)
from tickwork.domain.steering import FailurePolicy
from tickwork.domain.storable import storable_problems
from tickwork.domain.times import ceil_ms, iso_exact, parse_epoch_ms

__all__ = [
    "EXPRESSION_FIELD",
    "MAX_HORIZON",
    "MAX_OCCURRENCES",
    "MAX_PAYLOAD_BYTES",
    "ONE_OFF_FIELDS",
    "RECURRING_FIELDS",
    "WHEN_FIELDS",
    "StartDetail",
    "StartRequest",
    "allowed_fields",
    "check_payload_size",
    "described",
    "parse_start_detail",
]

ONE_OFF_FIELDS = ("at", "executionTime", "duration", "delay")
RECURRING_FIELDS = ("cron", "rate", "frequency")
# EventBridge Scheduler's ScheduleExpression: at(...), rate(...) or cron(...), as it is.
EXPRESSION_FIELD = "scheduleExpression"
WHEN_FIELDS = (*ONE_OFF_FIELDS, *RECURRING_FIELDS, EXPRESSION_FIELD)
_EXPRESSION_KINDS = {"at(": "at", "rate(": "rate", "cron(": "cron"}
_AT_FORM = re.compile(r"at\((.*)\)", re.IGNORECASE | re.DOTALL)
MAX_HORIZON = timedelta(days=3_653)  # ten years: a first fire further away is refused


def described(name: str, default: Any = None, *, factory: Any = None, **limits: Any) -> Any:
    """A model field of the Start field ``name``: its description and example from its one
    definition, ``default`` (or ``factory``) and pydantic ``limits`` as given."""
    spec = field_named(name)
    common = {"description": spec.text(), "examples": [spec.example], **limits}
    if factory is not None:
        return Field(default_factory=factory, **common)
    return Field(default=default, **common)


class StartDetail(BaseModel):
    """The detail as sent; field names are the event's own (camelCase). Each field's meaning,
    limits, default and example come from its one definition in ``START_FIELDS``."""

    model_config = ConfigDict(extra="forbid", frozen=True, alias_generator=to_camel)

    id: str | None = described("id", min_length=1)
    action: str = described("action", DEFAULT_ACTION, min_length=1)
    data: dict[str, Any] = described("data", factory=dict)
    metadata: dict[str, Any] = described("metadata", factory=dict)
    at: str | None = described("at")
    execution_time: StrictInt | None = described("executionTime")
    duration: str | None = described("duration")
    delay: str | None = described("delay")
    cron: str | None = described("cron")
    rate: str | None = described("rate")
    frequency: str | None = described("frequency")
    timezone: str = described("timezone", DEFAULT_TIMEZONE)
    dst_repeated: str | None = described("dstRepeated")
    dst_missing: str | None = described("dstMissing")
    flexible_window: str | None = described("flexibleWindow")
    window_mode: str | None = described("windowMode")
    calendar: str | None = described("calendar")
    on_excluded: str | None = described("onExcluded")
    repeat: StrictBool = described("repeat", False)
    execution_remainder: StrictInt | None = described("executionRemainder")
    start_time: str | None = described("startTime")
    end_time: str | None = described("endTime")
    catch_up: str | None = described("catchUp")
    catch_up_window: str | None = described("catchUpWindow")
    misfire_threshold: str | None = described("misfireThreshold")
    schedule_expression: str | None = described("scheduleExpression")
    group: str | None = described("group")
    on_failure: str | None = described("onFailure")
    on_unknown_outcome: str | None = described("onUnknownOutcome")
    lock_seconds: StrictInt | None = described("lockSeconds")
    maximum_retry_attempts: StrictInt | None = described("maximumRetryAttempts")
    maximum_event_age_seconds: StrictInt | None = described("maximumEventAgeSeconds")
    catch_up_on_resume: str | None = described("catchUpOnResume")
    overlap_policy: str | None = described("overlapPolicy")
    dead_letter_arn: str | None = described("deadLetterArn")
    role_arn: str | None = described("roleArn", min_length=1, max_length=MAX_ROLE_ARN_LENGTH)


def allowed_fields() -> tuple[str, ...]:
    """The detail's field names, as the event spells them."""
    return tuple(str(info.alias) for info in StartDetail.model_fields.values())


@dataclass(frozen=True)
class StartRequest:
    action_id: str | None
    action: str
    data: dict[str, Any]
    metadata: dict[str, Any]
    schedule: Schedule
    detail: dict[str, Any]
    catch_up: CatchUp = DEFAULT_CATCH_UP
    group: str = DEFAULT_GROUP
    on_failure: FailurePolicy | None = None
    role_arn: str | None = None  # the execution role the target is reached with
    on_unknown_outcome: UnknownOutcomePolicy | None = None
    policy: FirePolicy = NO_POLICY  # its own lock, retry policy and dead-letter queue


def parse_start_detail(
    detail: dict[str, Any], now: datetime, grace: timedelta = timedelta(seconds=60)
) -> StartRequest:
    """The request ``detail`` asks for at ``now``; a one-off up to ``grace`` late fires now.

    A ``scheduleExpression`` is read as the at, rate or cron field its form names, and a
    refusal of it names it.
    """
    if not isinstance(detail, dict) or EXPRESSION_FIELD not in detail:
        return _parse(detail, now, grace)
    try:
        return replace(_parse(_expression_as_field(detail), now, grace), detail=detail)
    except ValidationFailed as refused:
        if not any(p.field in _EXPRESSION_KINDS.values() for p in refused.problems):
            raise
        raise ValidationFailed(
            [
                replace(p, field=EXPRESSION_FIELD) if p.field in _EXPRESSION_KINDS.values() else p
                for p in refused.problems
            ]
        ) from refused


def _expression_as_field(detail: dict[str, Any]) -> dict[str, Any]:
    expression = detail[EXPRESSION_FIELD]
    others = [name for name in WHEN_FIELDS if name in detail and name != EXPRESSION_FIELD]
    if others:
        raise ValidationFailed.of(
            ", ".join([*others, EXPRESSION_FIELD]),
            "more than one 'when' is given",
            f"keep exactly one of them: {EXPRESSION_FIELD} alone says when",
        )
    text = expression.strip() if isinstance(expression, str) else ""
    field = next(
        (f for head, f in _EXPRESSION_KINDS.items() if text.lower().startswith(head)), None
    )
    if field is None:
        raise ValidationFailed.of(
            EXPRESSION_FIELD,
            f"{str(expression)[:80]!r} is not an at(), rate() or cron() expression",
            field_named(EXPRESSION_FIELD).fix_for(),
        )
    translated = {k: v for k, v in detail.items() if k != EXPRESSION_FIELD}
    translated[field] = text
    return translated


def _parse(detail: dict[str, Any], now: datetime, grace: timedelta) -> StartRequest:
    if now.utcoffset() is None:
        raise ValueError("now must be timezone-aware")
    now = now.astimezone(UTC)
    model = _validated(detail)
    given = model.model_dump(by_alias=True, exclude_none=True)
    whens = [name for name in WHEN_FIELDS if name in given]
    problems = _when_problems(whens) + _recurrence_problems(model, whens)
    catch_up = _collect(problems, _catch_up, model)
    dst = _collect(problems, _dst_policy, model, whens)
    window = _collect(problems, _window, model)
    calendar = _collect(problems, _calendar, model)
    group = _collect(problems, check_group, model.group or DEFAULT_GROUP)
    on_failure = _collect(problems, _failure_policy, model.on_failure)
    on_unknown = _collect(problems, _unknown_outcome_policy, model.on_unknown_outcome)
    policy = _collect(problems, _fire_policy, model)
    zone = _collect(problems, load_zone, model.timezone)
    first = start = end = None
    if zone is not None:
        first = _collect(problems, _first_time, model, zone)
        start = _collect(problems, _optional_time, model.start_time, zone, "startTime")
        end = _collect(problems, _optional_time, model.end_time, zone, "endTime")
    if end is not None and end < now:
        problems.append(FieldProblem("endTime", "is in the past", "give a future endTime"))
    problems += storable_problems(model.data, "data") + storable_problems(
        model.metadata, "metadata"
    )
    if problems or zone is None or catch_up is None or group is None or policy is None:
        raise ValidationFailed(problems)
    bounds: dict[str, Any] = {
        "start": start,
        "end": end,
        "max_occurrences": model.execution_remainder,
    }
    if dst is not None and dst != DEFAULT_DST:
        bounds["dst"] = dst
    if window is not None:
        bounds["window"] = window
    if calendar is not None:
        bounds["calendar"] = calendar
    schedule = _schedule(model, whens, first, zone, now, grace, bounds)
    first_fire = schedule.first_fire_time(now)
    if first_fire is None:
        raise ValidationFailed.of(
            "endTime" if end is not None else whens[-1],
            "leaves no fire from now on",
            "give a schedule with a fire after now (check the years and endTime)",
        )
    if schedule.max_occurrences is not None and schedule.max_occurrences > MAX_OCCURRENCES:
        raise ValidationFailed.of(
            "executionRemainder",
            f"{schedule.max_occurrences} is over the limit of {MAX_OCCURRENCES:,} fires",
            f"give at most {MAX_OCCURRENCES}, or leave it out for an unbounded recurrence",
        )
    if first_fire > now + MAX_HORIZON:
        raise ValidationFailed.of(
            whens[0],
            f"first fires at {iso_exact(first_fire)}, more than 10 years ahead",
            f"give a first fire before {iso_exact(now + MAX_HORIZON)}",
        )
    return StartRequest(
        model.id,
        model.action,
        model.data,
        model.metadata,
        schedule,
        detail,
        catch_up,
        group,
        on_failure,
        model.role_arn,
        on_unknown,
        policy,
    )


def _dst_policy(model: StartDetail, whens: list[str]) -> DstPolicy:
    """The schedule's DST policy: for local wall times (cron, a frequency), never for a
    schedule of elapsed time (a rate, a one-off)."""
    problems: list[FieldProblem] = []
    given = [
        name
        for name, text in (("dstRepeated", model.dst_repeated), ("dstMissing", model.dst_missing))
        if text is not None
    ]
    if given and whens and not {"cron", "frequency"} & set(whens):
        raise ValidationFailed.of(
            ", ".join(given),
            f"applies to local wall times (cron, a frequency), not to {whens[0]}",
            "remove it, or use cron or a DAILY, WEEKLY or MONTHLY frequency",
        )
    repeated, missing = RepeatedTime.FIRST, MissingTime.SKIP
    for name, text, kind in (
        ("dstRepeated", model.dst_repeated, RepeatedTime),
        ("dstMissing", model.dst_missing, MissingTime),
    ):
        if text is None:
            continue
        try:
            value = kind(text.strip().upper())
        except ValueError:
            spec = field_named(name)
            problems.append(FieldProblem(name, f"{text!r} is not a policy", spec.fix_for()))
            continue
        if name == "dstRepeated":
            repeated = RepeatedTime(value)
        else:
            missing = MissingTime(value)
    if problems:
        raise ValidationFailed(problems)
    return DstPolicy(repeated, missing)


def _calendar(model: StartDetail) -> CalendarUse | None:
    """The calendar named, by name (the stack supplies its content), and the policy for what it
    excludes: an onExcluded alone is refused."""
    if model.calendar is None:
        if model.on_excluded is not None:
            raise ValidationFailed.of(
                "onExcluded",
                "says what a calendar excludes, and no calendar is given",
                "give calendar too, or remove onExcluded",
            )
        return None
    name = check_calendar_name(model.calendar, "calendar")
    policy = Excluded.SKIP
    if model.on_excluded is not None:
        policy = _choice(Excluded, model.on_excluded, "onExcluded", "a policy")
    return CalendarUse(name, policy)


def _window(model: StartDetail) -> FireWindow | None:
    """The flexible window asked for, if any."""
    if model.flexible_window is None:
        if model.window_mode is not None:
            raise ValidationFailed.of(
                "windowMode",
                "says where a flexible window lies, and no flexibleWindow is given",
                "give flexibleWindow too, or remove windowMode",
            )
        return None
    size = parse_duration(model.flexible_window, "flexibleWindow")
    if size > MAX_FIRE_WINDOW:
        raise ValidationFailed.of(
            "flexibleWindow",
            f"{model.flexible_window!r} is longer than 24h",
            field_named("flexibleWindow").fix_for(),
        )
    mode = WindowMode.AFTER
    if model.window_mode is not None:
        mode = _choice(WindowMode, model.window_mode, "windowMode", "a window mode")
    if mode is WindowMode.AROUND and model.calendar is not None:
        raise ValidationFailed.of(
            "windowMode",
            "a window around the scheduled time does not combine with a calendar",
            "use windowMode AFTER (the default) with a calendar, or remove calendar",
        )
    return FireWindow(size, around=mode is WindowMode.AROUND)


def _choice[Choice: StrEnum](choices: type[Choice], text: str, field: str, what: str) -> Choice:
    """``text`` as one of ``choices`` (any case, spaces around ignored); else refused naming
    ``field`` ("'x' is not <what>") with the field's fix, which lists the choices."""
    try:
        return choices(text.strip().upper())
    except ValueError:
        raise ValidationFailed.of(
            field, f"{text!r} is not {what}", field_named(field).fix_for()
        ) from None


def _failure_policy(text: str | None) -> FailurePolicy | None:
    return None if text is None else _choice(FailurePolicy, text, "onFailure", "a failure policy")


def _unknown_outcome_policy(text: str | None) -> UnknownOutcomePolicy | None:
    if text is None:
        return None
    return _choice(UnknownOutcomePolicy, text, "onUnknownOutcome", "a policy")


_POLICY_BOUNDS = {
    "lockSeconds": (0, MAX_LOCK),
    "maximumRetryAttempts": (0, MAX_RETRY_ATTEMPTS),
    "maximumEventAgeSeconds": (MIN_EVENT_AGE, MAX_EVENT_AGE),
}


def _fire_policy(model: StartDetail) -> FirePolicy:
    """Its own lock, retry policy and dead-letter queue, each in its bounds (the queue's
    allow-list is the stack's to check: ``fire.start_record``)."""
    problems: list[FieldProblem] = []
    given = {
        "lockSeconds": model.lock_seconds,
        "maximumRetryAttempts": model.maximum_retry_attempts,
        "maximumEventAgeSeconds": model.maximum_event_age_seconds,
    }
    for name, value in given.items():
        low, high = _POLICY_BOUNDS[name]
        if value is not None and not low <= value <= high:
            problems.append(
                FieldProblem(
                    name, f"{value} is outside {low} to {high}", field_named(name).fix_for()
                )
            )
    arn = model.dead_letter_arn
    if arn is not None and not _SQS_ARN.fullmatch(arn):
        problems.append(
            FieldProblem(
                "deadLetterArn",
                f"{arn[:100]!r} is not an SQS queue ARN",
                "give arn:aws:sqs:<region>:<account>:<queue> on the stack's SqsTargetArns "
                "allow-list",
            )
        )
    on_resume = _collect(problems, _resume_catch_up, model.catch_up_on_resume)
    overlap = _collect(problems, _overlap, model.overlap_policy)
    if problems:
        raise ValidationFailed(problems)
    return FirePolicy(
        model.lock_seconds,
        model.maximum_retry_attempts,
        model.maximum_event_age_seconds,
        arn,
        on_resume,
        overlap,
    )


def _resume_catch_up(text: str | None) -> ResumeCatchUp | None:
    return None if text is None else _choice(ResumeCatchUp, text, "catchUpOnResume", "a policy")


def _overlap(text: str | None) -> OverlapPolicy | None:
    return None if text is None else _choice(OverlapPolicy, text, "overlapPolicy", "a policy")


_SQS_ARN = re.compile(r"arn:aws[\w-]*:sqs:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,80}(\.fifo)?")


def _catch_up(model: StartDetail) -> CatchUp:
    problems: list[FieldProblem] = []
    policy = CatchUpPolicy.ONCE
    if model.catch_up is not None:
        try:
            policy = CatchUpPolicy(model.catch_up.strip().upper())
        except ValueError:
            problems.append(
                FieldProblem(
                    "catchUp",
                    f"{model.catch_up!r} is not a policy",
                    field_named("catchUp").fix_for(),
                )
            )
    if model.catch_up_window is not None and policy is not CatchUpPolicy.ALL and not problems:
        problems.append(
            FieldProblem(
                "catchUpWindow",
                f"applies to catchUp ALL, not {policy}",
                'set "catchUp": "ALL", or remove catchUpWindow',
            )
        )
    threshold = _collect(problems, _optional_duration, model.misfire_threshold, "misfireThreshold")
    window = _collect(problems, _optional_duration, model.catch_up_window, "catchUpWindow")
    if problems:
        raise ValidationFailed(problems)
    return CatchUp(policy, threshold or DEFAULT_THRESHOLD, window or DEFAULT_WINDOW)


def _optional_duration(text: str | None, field: str) -> timedelta | None:
    return None if text is None else parse_duration(text, field)


def _validated(detail: dict[str, Any]) -> StartDetail:
    if not isinstance(detail, dict):
        raise ValidationFailed.of("detail", "is not a JSON object", "send the detail as an object")
    try:
        return StartDetail.model_validate(detail)
    except ValidationError as error:
        raise ValidationFailed([_problem(item) for item in error.errors()]) from error


# Fields a newcomer gives that are another field's job: the command line's flag names (``--in``,
# ``--every``, ``--first``) and other schedulers' words. Not a spelling: difflib misses them.
_MEANT = {
    "in": ("duration", "a one-off this long after the Start, as `tickwork schedule --in` sends"),
    "every": ("frequency", "a preset, as `tickwork schedule --every` sends"),
    "first": ("at", "a frequency's first fire, as `tickwork schedule --first` sends"),
    "expression": ("scheduleExpression", "EventBridge Scheduler's at(), rate() or cron()"),
    "schedule": ("scheduleExpression", "EventBridge Scheduler's at(), rate() or cron()"),
    "payload": ("data", "what the action type takes"),
    "body": ("data", "what the action type takes"),
    "type": ("action", "the action type"),
}


def _problem(error: Any) -> FieldProblem:
    name = ".".join(str(part) for part in error["loc"]) or "detail"
    allowed = allowed_fields()
    if error["type"] == "extra_forbidden":
        if name in _MEANT:
            meant, what = _MEANT[name]
            return FieldProblem(name, "is not a known field", f"rename it to {meant!r} ({what})")
        close = difflib.get_close_matches(name, allowed, n=1)
        action = f"rename it to {close[0]!r}" if close else "remove it"
        return FieldProblem(
            name, "is not a known field", f"{action}; allowed fields: {', '.join(allowed)}"
        )
    fix = field_named(name).fix_for() if name in allowed else "give a string"
    return FieldProblem(name, error["msg"], fix)


def _when_problems(whens: list[str]) -> list[FieldProblem]:
    if not whens:
        return [
            FieldProblem(
                "when",
                f"none of {', '.join(WHEN_FIELDS)} is given",
                'give exactly one, e.g. "duration": "5m" or "cron": "30 * * * *"',
            )
        ]
    paired = len(whens) == 2 and "frequency" in whens and whens[0] in ("at", "executionTime")
    if len(whens) == 1 or paired:
        return []
    return [
        FieldProblem(
            ", ".join(whens),
            "more than one 'when' is given",
            "keep exactly one of them (frequency may be paired with at or executionTime)",
        )
    ]


def _recurrence_problems(model: StartDetail, whens: list[str]) -> list[FieldProblem]:
    problems = []
    recurring = any(name in RECURRING_FIELDS for name in whens)
    if model.repeat and whens and not recurring:
        problems.append(
            FieldProblem(
                "repeat",
                f"is true but {whens[0]} is a one-off",
                'add "frequency" (e.g. "DAILY"), or use cron or rate; or drop repeat',
            )
        )
    if "repeat" in model.model_fields_set and not model.repeat and recurring:
        problems.append(
            FieldProblem(
                "repeat",
                f"is false but {whens[-1]} always recurs",
                'remove repeat, or set "executionRemainder": 1 for a single fire',
            )
        )
    count = model.execution_remainder
    if count is not None and count < 1:
        problems.append(
            FieldProblem(
                "executionRemainder",
                f"{count} is less than 1",
                field_named("executionRemainder").fix_for(),
            )
        )
    elif count is not None and count > 1 and whens and not recurring:
        problems.append(
            FieldProblem(
                "executionRemainder",
                f"asks for {count} fires of a one-off",
                'add "frequency", or use cron or rate; or remove executionRemainder',
            )
        )
    if not recurring and whens and (model.start_time or model.end_time):
        problems.append(
            FieldProblem(
                "startTime" if model.start_time else "endTime",
                "bounds a recurring schedule, but this one is a one-off",
                "remove startTime and endTime, or use frequency, cron or rate",
            )
        )
    return problems


def _schedule(
    model: StartDetail,
    whens: list[str],
    first: datetime | None,
    zone: ZoneInfo,
    now: datetime,
    grace: timedelta,
    bounds: dict[str, Any],
) -> Schedule:
    zone_name = model.timezone
    if model.cron is not None:
        return Schedule(ScheduleKind.CRON, model.cron, timezone=zone_name, **bounds)
    if model.rate is not None:
        # Counted from its startTime when it has one (its first fire, as EventBridge
        # Scheduler's StartDate is a rate's first occurrence), else from now.
        start = bounds.get("start")
        anchor = ceil_ms(now) if start is None else start - parse_rate(model.rate)
        return Schedule(ScheduleKind.RATE, model.rate, anchor, zone_name, **bounds)
    if model.frequency is not None:
        preset = parse_frequency(model.frequency)
        # to the millisecond, as fires are: an occurrence a calendar allows is not rounded up
        # onto a moment it excludes (16:59:59.9995 fired at 17:00:00.000)
        anchor = ceil_ms(first or _one_period_later(preset, ceil_ms(now), zone))
        return Schedule(ScheduleKind.FREQUENCY, preset, anchor, zone_name, **bounds)
    if first is None:
        field = whens[0]
        first = now + parse_duration(getattr(model, field), field)
    elif first < now - grace:
        field = whens[0]
        raise ValidationFailed.of(
            field,
            f"{iso_exact(first)} is more than {grace.total_seconds():g}s in the past",
            f"give a future time, such as {iso_exact(now + timedelta(hours=1))}",
        )
    given = {name: bounds[name] for name in ("window", "calendar") if name in bounds}
    return Schedule(ScheduleKind.ONCE, anchor=first, timezone=zone_name, **given)


def _first_time(model: StartDetail, zone: ZoneInfo) -> datetime | None:
    if model.at is not None:
        wrapped = _AT_FORM.fullmatch(model.at.strip())  # EventBridge Scheduler's one-time form
        return parse_local(wrapped[1] if wrapped else model.at, zone, "at")
    if model.execution_time is not None:
        return parse_epoch_ms(model.execution_time, "executionTime")
    return None


def _one_period_later(preset: Frequency, now: datetime, zone: ZoneInfo) -> datetime:
    """The first fire of a frequency with no first time: one period after ``now``."""
    fire = frequency_trigger(preset, now, zone).at_or_after(now + timedelta(microseconds=1))
    return fire or now


def _optional_time(text: str | None, zone: ZoneInfo, field: str) -> datetime | None:
    return None if text is None else parse_local(text, zone, field)


def _collect[T](problems: list[FieldProblem], parse: Callable[..., T], *args: Any) -> T | None:
    """``parse(*args)``, or None with its problems added to ``problems``."""
    try:
        return parse(*args)
    except ValidationFailed as error:
        problems.extend(error.problems)
        return None


def check_payload_size(request: StartRequest) -> None:
    """``data`` and ``metadata`` fit what a record, an event and an execution input carry."""
    size = len(
        json.dumps({"data": request.data, "metadata": request.metadata}, default=str).encode()
    )
    if size > MAX_PAYLOAD_BYTES:
        raise ValidationFailed.of(
            "data",
            f"data and metadata take {size} bytes, over the {MAX_PAYLOAD_BYTES}-byte limit",
            "store large payloads elsewhere (e.g. S3) and schedule a reference to them",
        )
