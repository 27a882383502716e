"""The Schedule value: when an action fires, stored beside it as JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Protocol

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.schedule.cron import CronTrigger
from tickwork.domain.schedule.describe import describe_schedule
from tickwork.domain.schedule.frequency import frequency_trigger, parse_frequency
from tickwork.domain.schedule.interval import IntervalTrigger
from tickwork.domain.schedule.rate import parse_rate
from tickwork.domain.schedule.timestamps import format_utc, parse_utc, require_utc
from tickwork.domain.schedule.wallclock import load_zone

__all__ = ["Schedule", "ScheduleKind"]

_MICROSECOND = timedelta(microseconds=1)
_INSTANTS = ("anchor", "start", "end")


class ScheduleKind(StrEnum):
    ONCE = "once"
    CRON = "cron"
    RATE = "rate"
    FREQUENCY = "frequency"


class _Trigger(Protocol):
    def at_or_after(self, moment: datetime) -> datetime | None: ...


@dataclass(frozen=True)
class _Once:
    at: datetime

    def at_or_after(self, moment: datetime) -> datetime | None:
        return self.at if self.at >= moment else None


@dataclass(frozen=True)
class Schedule:
    """When an action fires. Every datetime in and out is aware UTC; "now" is passed in.

    ``expression`` holds the cron text, the rate text or the frequency preset;
    ``anchor`` the one-off instant, the rate's creation time or the frequency's first time.
    """

    kind: ScheduleKind
    expression: str | None = None
    anchor: datetime | None = None
    timezone: str = "UTC"
    start: datetime | None = None
    end: datetime | None = None
    max_occurrences: int | None = None
    _trigger: _Trigger = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            kind = ScheduleKind(self.kind)
        except ValueError as error:
            raise ValidationFailed.of(
                "kind",
                f"{self.kind!r} is not a schedule kind",
                f"use one of {', '.join(ScheduleKind)}",
            ) from error
        object.__setattr__(self, "kind", kind)
        for name, detail_field in (
            ("anchor", "anchor"),
            ("start", "startTime"),
            ("end", "endTime"),
        ):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, require_utc(value, detail_field))
        _check_shape(self)
        object.__setattr__(self, "_trigger", _trigger_of(self))

    @property
    def frequency(self) -> str | None:
        """The preset name of a frequency schedule (the seed schema's field), else None."""
        return self.expression if self.kind is ScheduleKind.FREQUENCY else None

    @classmethod
    def one_off(cls, at: datetime) -> Schedule:
        return cls(ScheduleKind.ONCE, anchor=at)

    @classmethod
    def of_cron(cls, expression: str, timezone: str = "UTC", **bounds: Any) -> Schedule:
        return cls(ScheduleKind.CRON, expression, timezone=timezone, **bounds)

    @classmethod
    def of_rate(cls, expression: str, anchor: datetime, **bounds: Any) -> Schedule:
        return cls(ScheduleKind.RATE, expression, anchor, **bounds)

    @classmethod
    def of_frequency(
        cls, preset: str, anchor: datetime, timezone: str = "UTC", **bounds: Any
    ) -> Schedule:
        return cls(ScheduleKind.FREQUENCY, preset, anchor, timezone, **bounds)

    def first_fire_time(self, now: datetime) -> datetime | None:
        """The first fire at or after ``now``; a one-off that is due fires at ``now``."""
        now = require_utc(now, "now")
        if isinstance(self._trigger, _Once):
            return max(self._trigger.at, now)
        return self._bounded(self._trigger.at_or_after(max(now, self.start or now)))

    def next_fire_time(self, previous: datetime, fired: int) -> datetime | None:
        """The next fire strictly after ``previous`` once ``fired`` fires have happened."""
        previous = require_utc(previous, "previous")
        if self.kind is ScheduleKind.ONCE:
            return None
        if self.max_occurrences is not None and fired >= self.max_occurrences:
            return None
        after = previous + _MICROSECOND
        return self._bounded(self._trigger.at_or_after(max(after, self.start or after)))

    def describe(self) -> str:
        return describe_schedule(self)

    def to_dict(self) -> dict[str, Any]:
        stored: dict[str, Any] = {"kind": str(self.kind), "timezone": self.timezone}
        if self.expression is not None:
            stored["expression"] = self.expression
        for name in _INSTANTS:
            value = getattr(self, name)
            if value is not None:
                stored[name] = format_utc(value)
        if self.max_occurrences is not None:
            stored["maxOccurrences"] = self.max_occurrences
        return stored

    @classmethod
    def from_dict(cls, stored: dict[str, Any]) -> Schedule:
        unknown = set(stored) - {"kind", "timezone", "expression", "maxOccurrences", *_INSTANTS}
        if unknown or "kind" not in stored:
            raise ValidationFailed.of(
                ", ".join(sorted(unknown)) or "kind",
                "is not part of a stored schedule" if unknown else "is missing",
                "store the dict that Schedule.to_dict() returns",
            )
        instants = {name: parse_utc(stored[name], name) for name in _INSTANTS if name in stored}
        return cls(
            kind=stored["kind"],
            expression=stored.get("expression"),
            timezone=stored.get("timezone", "UTC"),
            max_occurrences=stored.get("maxOccurrences"),
            **instants,
        )

    def _bounded(self, fire: datetime | None) -> datetime | None:
        if fire is None or (self.end is not None and fire > self.end):
            return None
        return fire


def _check_shape(schedule: Schedule) -> None:
    kind, count = schedule.kind, schedule.max_occurrences
    if kind is not ScheduleKind.ONCE and schedule.expression is None:
        raise ValidationFailed.of(str(kind), "is missing", f"give the {kind} expression")
    if kind is not ScheduleKind.CRON and schedule.anchor is None:
        raise ValidationFailed.of("anchor", f"a {kind} schedule needs it", "give its first time")
    if kind is ScheduleKind.CRON and schedule.anchor is not None:
        raise ValidationFailed.of("anchor", "a cron has none", "remove it")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise ValidationFailed.of(
            "executionRemainder",
            f"{count!r} is not a count of at least 1",
            "give 1 or more, or omit it",
        )
    if kind is ScheduleKind.ONCE and (schedule.start or schedule.end or (count or 1) != 1):
        raise ValidationFailed.of(
            "startTime, endTime, executionRemainder",
            "bound a recurring schedule; a one-off fires once",
            "remove them, or make the schedule recur with frequency, cron or rate",
        )
    if schedule.start and schedule.end and schedule.end < schedule.start:
        raise ValidationFailed.of(
            "endTime",
            f"{format_utc(schedule.end)} is before startTime {format_utc(schedule.start)}",
            "give an endTime after startTime",
        )


def _trigger_of(schedule: Schedule) -> _Trigger:
    """The kind's trigger; _check_shape has made sure its expression and anchor are there."""
    zone = load_zone(schedule.timezone)
    kind, expression = schedule.kind, schedule.expression or ""
    anchor = schedule.anchor or datetime.min
    if kind is ScheduleKind.ONCE:
        return _Once(anchor)
    if kind is ScheduleKind.CRON:
        return CronTrigger(expression, zone)
    if kind is ScheduleKind.RATE:
        return IntervalTrigger(anchor, parse_rate(expression), first=1)
    preset = parse_frequency(expression)
    object.__setattr__(schedule, "expression", str(preset))
    return frequency_trigger(preset, anchor, zone)
