"""Each field of a Schedule Start, defined once: its name, type, limits, default, meaning,
example, and how the other surfaces name it.

Every surface is derived from ``START_FIELDS``: the Start model's field metadata (and so the
API's OpenAPI, whose request bodies are that model), the refusal's fix of a bad value, the CLI's
``tickwork schedule`` flags and their help, and the client's ``TickworkClient.schedule``
arguments and docstring. ``tests/unit/domain/test_start_fields.py`` fails when a surface drifts.

A text may name another field as ``{catchUp}``: each surface renders it in its own spelling
(``catchUp`` in an event, ``--catch-up`` on the command line, ``catch_up=`` in the client).

Long for a domain module, on purpose: it is a table, one entry per field, kept whole so that
each field has one home.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import Any, Literal

from tickwork.domain.catch_up import (
    DEFAULT_THRESHOLD,
    DEFAULT_WINDOW,
    MAX_THRESHOLD,
    MAX_WINDOW,
    CatchUpPolicy,
)
from tickwork.domain.fire_ending import UnknownOutcomePolicy
from tickwork.domain.fire_policy import (
    DEFAULT_EVENT_AGE,
    MAX_CATCH_UP_ON_RESUME,
    MAX_EVENT_AGE,
    MAX_LOCK,
    MAX_RETRY_ATTEMPTS,
    MIN_EVENT_AGE,
    OverlapPolicy,
    ResumeCatchUp,
)
from tickwork.domain.identifiers import DEFAULT_GROUP, GROUP_RULE, ID_RULE
from tickwork.domain.schedule.calendar import CALENDAR_NAME_RULE, Excluded
from tickwork.domain.schedule.frequency import Frequency
from tickwork.domain.schedule.wallclock import MissingTime, RepeatedTime
from tickwork.domain.schedule.window import MAX_WINDOW as MAX_FIRE_WINDOW
from tickwork.domain.schedule.window import WindowMode
from tickwork.domain.steering import FailurePolicy

__all__ = [
    "DEFAULT_ACTION",
    "DEFAULT_TIMEZONE",
    "MAX_OCCURRENCES",
    "MAX_PAYLOAD_BYTES",
    "MAX_ROLE_ARN_LENGTH",
    "START_FIELDS",
    "StartField",
    "Surface",
    "field_named",
    "render",
]

Surface = Literal["event", "cli", "client"]
JsonType = Literal["string", "integer", "boolean", "object"]

DEFAULT_ACTION = "TICK"
DEFAULT_TIMEZONE = "UTC"
MAX_PAYLOAD_BYTES = 192 * 1024  # data and metadata together: the record, the event, the input
MAX_OCCURRENCES = 1_000_000
MAX_ROLE_ARN_LENGTH = 2048
_DURATION_FORMS = '"90s", "5m", "1h30m", "2d" or ISO 8601 "PT5M"'


def _short(span: timedelta) -> str:
    """A span as the duration fields take it: "60s", "1d", "30d"."""
    seconds = int(span.total_seconds())
    if seconds < 120:
        return f"{seconds}s"
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _choices(enum: type[StrEnum]) -> tuple[str, ...]:
    return tuple(str(member) for member in enum)


@dataclass(frozen=True)
class StartField:
    """One field of a Start detail.

    ``flag``: the ``tickwork schedule`` flag that sets it, or None with ``no_flag`` saying
    which flag a user gives instead. ``argument``: the ``TickworkClient.schedule`` argument
    that sets it (``when`` for the fields a ``When`` sets). ``flag_help``: what the flag
    means when it reads otherwise than the field (``--in`` is ``delay`` counted from now).
    """

    name: str
    type: JsonType
    description: str
    example: Any
    default: str | None = None
    limits: str | None = None
    choices: tuple[str, ...] = ()
    fix: str | None = None
    flag: str | None = None
    no_flag: str | None = None
    flag_help: str | None = None
    metavar: str | None = None
    argument: str | None = None

    @property
    def attribute(self) -> str:
        """The Python name of the field (``catch_up_window``)."""
        return re.sub(r"(?<!^)(?=[A-Z])", "_", self.name).lower()

    def text(self, surface: Surface = "event") -> str:
        """The whole description on ``surface``: meaning, choices, limits and default."""
        parts = [render(self.description, surface)]
        if self.choices and surface != "cli":  # the command line lists them itself
            parts.append(f"One of {', '.join(self.choices)}.")
        if self.limits:
            parts.append(f"Limits: {render(self.limits, surface)}.")
        if self.default is not None:
            parts.append(f"Default: {render(self.default, surface)}.")
        return " ".join(parts)

    def help(self) -> str:
        """The ``tickwork schedule`` help of its flag."""
        if self.flag_help is None:
            return self.text("cli")
        parts = [render(self.flag_help, "cli")]
        if self.limits:
            parts.append(f"Limits: {render(self.limits, 'cli')}.")
        if self.default is not None:
            parts.append(f"Default: {render(self.default, 'cli')}.")
        return " ".join(parts)

    def fix_for(self) -> str:
        """What a refusal of a bad value of this field tells the user to give."""
        if self.fix is not None:
            return render(self.fix, "event")
        if self.choices:
            default = f" (default {self.default})" if self.default else ""
            return f"give {', '.join(self.choices[:-1])} or {self.choices[-1]}{default}"
        return {
            "string": "give a string",
            "integer": "give an integer",
            "boolean": "give true or false",
            "object": "give a JSON object",
        }[self.type]


START_FIELDS: tuple[StartField, ...] = (
    StartField(
        "id",
        "string",
        "The action's key, chosen by the caller: a Start with an existing id replaces that "
        "action (its next fire, unless inside the lock).",
        "invoice:42:reminder",
        default="evt-<the event's id> on the bus; required by the API",
        limits=ID_RULE,
        fix=f"use {ID_RULE}",
        flag="--id",
        argument="action_id",
    ),
    StartField(
        "action",
        "string",
        "The action type: a registered fulfillment (TICK, SEND_NOTIFICATION, HTTP_REQUEST, "
        "SQS_MESSAGE, SNS_MESSAGE, EVENTBRIDGE_EVENT, LAMBDA_INVOKE, "
        "STEP_FUNCTIONS_EXECUTION, or the stack's own).",
        "HTTP_REQUEST",
        default=DEFAULT_ACTION,
        fix="give a registered action type, such as TICK or HTTP_REQUEST",
        flag="--action",
        argument="action",
    ),
    StartField(
        "data",
        "object",
        "The action type's payload, checked against its schema and passed to every fire.",
        {"url": "https://example.com/hooks/renew", "method": "POST"},
        limits=f"{{data}} and {{metadata}} together up to {MAX_PAYLOAD_BYTES // 1024} KiB of JSON",
        flag="--data",
        metavar="JSON",
        flag_help="The action type's payload: a JSON object, @FILE to read it from a file, or "
        "- (or @-) from stdin (a shell cannot pass much over 128 KiB as an argument).",
        argument="data",
    ),
    StartField(
        "metadata",
        "object",
        "Carried as it is on every tick and lifecycle event, for the publisher's own use.",
        {"tenant": "acme"},
        limits=f"{{data}} and {{metadata}} together up to {MAX_PAYLOAD_BYTES // 1024} KiB of JSON",
        flag="--metadata",
        metavar="JSON",
        flag_help="Carried as it is on every tick and lifecycle event: a JSON object, @FILE, or "
        "- (or @-) from stdin.",
        argument="metadata",
    ),
    StartField(
        "at",
        "string",
        "When (one-off): an ISO 8601 time, or EventBridge Scheduler's at(...); read in "
        "{timezone} when it has no offset. With {frequency}: its first fire.",
        "2030-11-20T13:00:00Z",
        fix='give an ISO 8601 time such as "2030-11-20T13:00:00Z"',
        flag="--at",
        metavar="TIME",
        flag_help="One-off at this time: ISO 8601, or EventBridge Scheduler's at(...); read in "
        "--timezone when it has no offset. (With --every, give its first fire with --first.)",
        argument="when",
    ),
    StartField(
        "executionTime",
        "integer",
        "When (one-off): epoch milliseconds. With {frequency}: its first fire.",
        1921410000000,
        fix="give epoch milliseconds as an integer, such as 1921410000000",
        no_flag="--at takes the time as ISO 8601",
        argument="when",
    ),
    StartField(
        "duration",
        "string",
        f"When (one-off): this long after the Start is taken: {_DURATION_FORMS}.",
        "5m",
        limits="up to 100 years",
        no_flag="--in takes a duration",
        argument="when",
    ),
    StartField(
        "delay",
        "string",
        f"When (one-off): this long after the Start is taken, as {{duration}}: {_DURATION_FORMS}.",
        "90s",
        limits="up to 100 years",
        flag="--in",
        metavar="DURATION",
        flag_help=f"One-off after this long from now: {_DURATION_FORMS}.",
        argument="when",
    ),
    StartField(
        "cron",
        "string",
        'When (recurring): a 5-field cron "30 * * * *", or EventBridge\'s 6 fields '
        '"cron(0 9 ? * MON-FRI *)"; read in {timezone}.',
        "cron(0 9 ? * MON-FRI *)",
        flag="--cron",
        argument="when",
    ),
    StartField(
        "rate",
        "string",
        'When (recurring): a fixed interval, "rate(5 minutes)" (seconds, minutes, hours or '
        "days), counted from {startTime} when given, else from the Start.",
        "rate(5 minutes)",
        limits="up to ten years",
        flag="--rate",
        argument="when",
    ),
    StartField(
        "frequency",
        "string",
        "When (recurring): a preset, first firing at {at} or {executionTime}, else one "
        "period from now; MONTHLY keeps the day of month, clamped to the month's last day.",
        "DAILY",
        choices=_choices(Frequency),
        flag="--every",
        flag_help="A frequency preset, first firing at --first, else one period from now.",
        argument="when",
    ),
    StartField(
        "timezone",
        "string",
        "The IANA zone cron fields and local times are read in. Across a DST change a "
        "local time that does not exist is skipped and one that repeats fires once, the "
        "first time, unless {dstMissing} and {dstRepeated} say otherwise.",
        "Europe/Berlin",
        default=DEFAULT_TIMEZONE,
        fix='give an IANA zone such as "Europe/Berlin" or "UTC"',
        flag="--timezone",
        argument="timezone",
    ),
    StartField(
        "dstRepeated",
        "string",
        "Across a DST change, a local time the clocks repeat (the fall-back hour) fires at its "
        "FIRST occurrence, its LAST, or BOTH. For cron and the DAILY, WEEKLY and MONTHLY "
        "frequencies (local wall times); `tickwork next` shows the fires around the next change.",
        "BOTH",
        default=str(RepeatedTime.FIRST),
        choices=_choices(RepeatedTime),
        flag="--dst-repeated",
        argument="dst_repeated",
    ),
    StartField(
        "dstMissing",
        "string",
        "Across a DST change, a local time the clocks skip (the spring-forward gap) is SKIPped, "
        "or SHIFTed forward by the gap (02:30 fires at 03:30 when 02:00 becomes 03:00). For cron "
        "and the DAILY, WEEKLY and MONTHLY frequencies.",
        "SHIFT",
        default=str(MissingTime.SKIP),
        choices=_choices(MissingTime),
        flag="--dst-missing",
        argument="dst_missing",
    ),
    StartField(
        "flexibleWindow",
        "string",
        "A flexible window, as EventBridge Scheduler's FlexibleTimeWindow (and Temporal's "
        "jitter): each occurrence fires at an instant of its own within the window after its "
        "scheduled time, so many actions on one schedule do not all fire at once. The instant "
        "is fixed by the action's id and the occurrence's scheduled time: a replay or a retry "
        "of an occurrence fires at the same instant, `tickwork next --id` shows it. A window "
        "never carries a fire past the next occurrence's scheduled time, nor onto a moment "
        f"its {{calendar}} excludes ({_DURATION_FORMS}).",
        "15m",
        default="none: each fire at its scheduled time",
        limits=f"1s to {_short(MAX_FIRE_WINDOW)}",
        fix='give a duration such as "15m" (up to "24h"), or leave it out',
        flag="--flexible-window",
        metavar="DURATION",
        argument="flexible_window",
    ),
    StartField(
        "windowMode",
        "string",
        "Where {flexibleWindow} lies: AFTER the scheduled time (EventBridge Scheduler's, never "
        "a fire before it), or AROUND it — centred, so an occurrence may fire up to half the "
        "window BEFORE its scheduled time, which is asked for by name only. Around, a window "
        "is cut at half the gap to each neighbouring occurrence: fires keep their order. Not "
        "with a calendar.",
        "AROUND",
        default=str(WindowMode.AFTER),
        choices=_choices(WindowMode),
        flag="--window-mode",
        argument="window_mode",
    ),
    StartField(
        "calendar",
        "string",
        "The name of an exclusion calendar kept in the stack (`tickwork calendar put`, PUT "
        "/calendars/NAME): on its dates, and outside its weekly hours, no fire happens; "
        "{onExcluded} says what becomes of an occurrence it excludes. A change to the calendar "
        "applies from the next fire planned on. For a recurrence.",
        "uk-bank-holidays",
        limits=CALENDAR_NAME_RULE + "; the calendar must exist",
        fix='give the name of a calendar in the stack, such as "uk-bank-holidays"',
        flag="--calendar",
        argument="calendar",
    ),
    StartField(
        "onExcluded",
        "string",
        "An occurrence {calendar} excludes is SKIPped (it is no occurrence: the schedule goes on "
        "with the next one) or SHIFTed to the calendar's next allowed moment, unless an "
        "occurrence of the schedule comes first by then (that one stands for it).",
        "SHIFT",
        default=str(Excluded.SKIP),
        choices=_choices(Excluded),
        flag="--on-excluded",
        argument="on_excluded",
    ),
    StartField(
        "repeat",
        "boolean",
        "Whether the action recurs: true with {frequency}; cron and rate always recur. Left "
        "out, it follows the 'when'.",
        True,
        no_flag="--every, --cron and --rate recur",
        argument="when",
    ),
    StartField(
        "executionRemainder",
        "integer",
        "How many fires this Start schedules, counted from its own first fire; left out, a "
        "recurrence runs until {endTime} or a cancel.",
        5,
        limits=f"1 to {MAX_OCCURRENCES:,}",
        fix="give the total number of fires as an integer of 1 or more",
        flag="--times",
        metavar="N",
        argument="times",
    ),
    StartField(
        "startTime",
        "string",
        "No fire before this ISO 8601 time (a recurrence's bound); a rate fires first at it, "
        "as EventBridge Scheduler's StartDate.",
        "2030-01-01T00:00:00Z",
        fix='give an ISO 8601 time such as "2030-01-01T00:00:00Z"',
        flag="--start",
        metavar="TIME",
        argument="start",
    ),
    StartField(
        "endTime",
        "string",
        "No fire after this ISO 8601 time (a recurrence's bound).",
        "2030-12-31T23:59:59Z",
        fix='give a future ISO 8601 time such as "2030-12-31T23:59:59Z"',
        flag="--end",
        metavar="TIME",
        argument="end",
    ),
    StartField(
        "catchUp",
        "string",
        "Fires missed in an outage (later than {misfireThreshold}): ONCE fires the latest "
        "missed one once, late; SKIP skips them; ALL fires each one no older than "
        "{catchUpWindow}, late and in order.",
        "ALL",
        default=str(CatchUpPolicy.ONCE),
        choices=_choices(CatchUpPolicy),
        flag="--catch-up",
        argument="catch_up",
    ),
    StartField(
        "catchUpWindow",
        "string",
        f"With {{catchUp}} ALL: how old a missed fire may be and still fire ({_DURATION_FORMS}).",
        "6h",
        default=_short(DEFAULT_WINDOW),
        limits=f"{{misfireThreshold}} to {_short(MAX_WINDOW)}",
        fix='give a duration such as "6h", with "catchUp": "ALL"',
        flag="--catch-up-window",
        metavar="DURATION",
        argument="catch_up_window",
    ),
    StartField(
        "misfireThreshold",
        "string",
        f"How late a fire may run before it counts as missed, so that {{catchUp}} applies "
        f"({_DURATION_FORMS}).",
        "5m",
        default=_short(DEFAULT_THRESHOLD),
        limits=f"1s to {_short(MAX_THRESHOLD)}",
        fix='give a duration from "1s" to "1d", such as "5m"',
        flag="--misfire-threshold",
        metavar="DURATION",
        argument="misfire_threshold",
    ),
    StartField(
        "scheduleExpression",
        "string",
        'When, as EventBridge Scheduler takes it: "at(2030-11-20T13:00:00)" (read in '
        '{timezone}), "rate(5 minutes)" or "cron(0 9 ? * MON-FRI *)".',
        "cron(0 9 ? * MON-FRI *)",
        fix='give "at(2030-11-20T13:00:00)", "rate(5 minutes)" or "cron(0 9 ? * MON-FRI *)", '
        "as EventBridge Scheduler takes them",
        flag="--expression",
        argument="when",
    ),
    StartField(
        "group",
        "string",
        "A group of actions to list, count, pause and cancel together.",
        "subscription-42",
        default=DEFAULT_GROUP,
        limits=GROUP_RULE,
        fix=f"use {GROUP_RULE}",
        flag="--group",
        argument="group",
    ),
    StartField(
        "onFailure",
        "string",
        "After a fire fails past its retries: CONTINUE with the next occurrence, PAUSE the "
        "action, or STOP it (FAILED). The failed fire stays retryable by hand in every case.",
        "PAUSE",
        default="CONTINUE for a recurrence, STOP for a one-off",
        choices=_choices(FailurePolicy),
        flag="--on-failure",
        argument="on_failure",
    ),
    StartField(
        "onUnknownOutcome",
        "string",
        "A claimed fire whose execution ended without a tick or a failure report (aborted, "
        "lost in an outage) may or may not have run: FAIL records it failed, retryable by "
        "hand (at most once); RETRY runs it again with the same idempotency key (at least "
        "once).",
        "RETRY",
        default=str(UnknownOutcomePolicy.FAIL),
        choices=_choices(UnknownOutcomePolicy),
        flag="--on-unknown-outcome",
        argument="on_unknown_outcome",
    ),
    StartField(
        "lockSeconds",
        "integer",
        "How many seconds before each fire its schedule is fixed: inside them a Start or an "
        "update of a one-off is refused, of a recurrence applies after that fire. A cancel or "
        "a pause is not held by it: either wins until the fire is claimed.",
        30,
        default="the stack's LockSeconds (120)",
        limits=f"0 to {MAX_LOCK}",
        fix=f"give a whole number of seconds from 0 to {MAX_LOCK}",
        flag="--lock-seconds",
        metavar="SECONDS",
        argument="lock_seconds",
    ),
    StartField(
        "maximumRetryAttempts",
        "integer",
        "How many times a fire that failed transiently (a 5xx, a throttle, a timeout) is "
        "attempted again, with the same idempotency key and exponential backoff with full "
        "jitter (EventBridge Scheduler's RetryPolicy). 0: one attempt only.",
        20,
        default="the stack's RetryMaxAttempts (5)",
        limits=f"0 to {MAX_RETRY_ATTEMPTS}",
        fix=f"give a whole number from 0 to {MAX_RETRY_ATTEMPTS}",
        flag="--max-retries",
        metavar="N",
        argument="maximum_retry_attempts",
    ),
    StartField(
        "maximumEventAgeSeconds",
        "integer",
        "How long after its fire time a failed fire may still be attempted again; past it the "
        "fire fails, and goes to {deadLetterArn} if one is given.",
        3600,
        default=f"{DEFAULT_EVENT_AGE} (a day)",
        limits=f"{MIN_EVENT_AGE} to {MAX_EVENT_AGE}",
        fix=f"give a whole number of seconds from {MIN_EVENT_AGE} to {MAX_EVENT_AGE}",
        flag="--max-event-age",
        metavar="SECONDS",
        argument="maximum_event_age_seconds",
    ),
    StartField(
        "catchUpOnResume",
        "string",
        "The occurrences that came due while the action was paused, when it is resumed: SKIP "
        "them, run the LAST of them once, or run ALL of them (the latest "
        f"{MAX_CATCH_UP_ON_RESUME}), each a fire of its own with its own idempotency key and "
        "scheduled time (trigger CATCH_UP, never counted late).",
        "LAST",
        default=str(ResumeCatchUp.SKIP),
        choices=_choices(ResumeCatchUp),
        flag="--catch-up-on-resume",
        argument="catch_up_on_resume",
    ),
    StartField(
        "overlapPolicy",
        "string",
        "A recurrence's occurrence that comes due while the previous fire is still being "
        "attempted (retried): SKIP it (recorded SKIPPED with the reason, and announced; the "
        "fires go on after that fire ends), BUFFER_ONE (the first such occurrence runs as soon "
        "as that fire ends, the others are skipped), BUFFER_ALL (each runs, one after another) "
        "or ALLOW_ALL (each runs at its own time, beside the fire still being retried).",
        "BUFFER_ONE",
        default=str(OverlapPolicy.SKIP),
        choices=_choices(OverlapPolicy),
        flag="--overlap",
        argument="overlap_policy",
    ),
    StartField(
        "deadLetterArn",
        "string",
        "An SQS queue that receives every fire that failed past its retry policy, its age "
        "or for good, with the action, occurrence, scheduled time, attempts and last error "
        "(EventBridge Scheduler's DeadLetterConfig). The queue must be on the stack's "
        "SqsTargetArns allow-list.",
        "arn:aws:sqs:us-east-1:123456789012:billing-dlq",
        fix="give an SQS queue ARN on the stack's SqsTargetArns allow-list",
        flag="--dead-letter-arn",
        metavar="ARN",
        argument="dead_letter_arn",
    ),
    StartField(
        "roleArn",
        "string",
        "The AWS action types: an IAM role (under the stack's TargetRolePath) the fire "
        "assumes to reach its target, as an EventBridge Scheduler schedule's execution role; "
        "without one the target must be on the stack's allow-list (the *TargetArns "
        "parameters).",
        "arn:aws:iam::123456789012:role/tickwork-targets/billing",
        limits=f"up to {MAX_ROLE_ARN_LENGTH} characters",
        fix="give an IAM role ARN under the stack's TargetRolePath",
        flag="--role-arn",
        metavar="ARN",
        argument="role_arn",
    ),
)

_BY_NAME: Mapping[str, StartField] = {spec.name: spec for spec in START_FIELDS}


def field_named(name: str) -> StartField:
    """The field an event names ``name``; KeyError for any other."""
    return _BY_NAME[name]


def render(text: str, surface: Surface) -> str:
    """``text`` with each ``{field}`` in the spelling of ``surface``."""

    def spelled(found: re.Match[str]) -> str:
        spec = _BY_NAME[found[1]]
        if surface == "cli" and spec.flag:
            return spec.flag
        if surface == "client" and spec.argument and spec.argument != "when":
            return f"{spec.argument}="
        return spec.name

    return re.sub(r"\{(\w+)\}", spelled, text)
