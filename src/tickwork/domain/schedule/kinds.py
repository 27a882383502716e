"""The four kinds of schedule, what each needs, and the trigger that computes its fires."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.schedule.cron import CronTrigger
from tickwork.domain.schedule.frequency import frequency_trigger, parse_frequency
from tickwork.domain.schedule.interval import IntervalTrigger
from tickwork.domain.schedule.rate import parse_rate
from tickwork.domain.schedule.shape import ScheduleFields, ScheduleKind
from tickwork.domain.schedule.trigger import Trigger
from tickwork.domain.schedule.wallclock import DEFAULT_DST, load_zone
from tickwork.domain.times import iso_exact

__all__ = ["OnceTrigger", "ScheduleKind", "Trigger", "check_shape", "trigger_for"]


@dataclass(frozen=True)
class OnceTrigger:
    at: datetime

    def at_or_after(self, moment: datetime) -> datetime | None:
        return self.at if self.at >= moment else None


def check_shape(schedule: ScheduleFields) -> None:
    """Refuse a schedule missing what its kind needs, or bounded in a way it cannot be."""
    kind, count = schedule.kind, schedule.max_occurrences
    if kind is not ScheduleKind.ONCE and schedule.expression is None:
        raise ValidationFailed.of(str(kind), "is missing", f"give the {kind} expression")
    if kind is not ScheduleKind.CRON and schedule.anchor is None:
        raise ValidationFailed.of("anchor", f"a {kind} schedule needs it", "give its first time")
    if kind is ScheduleKind.ONCE and schedule.expression is not None:
        raise ValidationFailed.of("expression", "a one-off has none", "remove it")
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
    if schedule.dst != DEFAULT_DST and kind in (ScheduleKind.ONCE, ScheduleKind.RATE):
        raise ValidationFailed.of(
            "dstRepeated, dstMissing",
            f"a {kind} schedule counts elapsed time: no local time of it repeats or goes missing",
            "remove them, or use cron or a DAILY, WEEKLY or MONTHLY frequency",
        )
    if schedule.calendar is not None and kind is ScheduleKind.ONCE:
        raise ValidationFailed.of(
            "calendar",
            "a one-off fires once, at its time: no calendar applies to it",
            "remove calendar, and give the time it should fire",
        )
    if schedule.start and schedule.end and schedule.end < schedule.start:
        raise ValidationFailed.of(
            "endTime",
            f"{iso_exact(schedule.end)} is before startTime {iso_exact(schedule.start)}",
            "give an endTime after startTime",
        )


def trigger_for(schedule: ScheduleFields) -> tuple[Trigger, str | None]:
    """The trigger of a checked schedule, and its expression in canonical form."""
    zone = load_zone(schedule.timezone)
    kind, expression = schedule.kind, schedule.expression or ""
    anchor = schedule.anchor or datetime.min  # check_shape made sure kinds needing it have it
    if kind is ScheduleKind.ONCE:
        return OnceTrigger(anchor), schedule.expression
    if kind is ScheduleKind.CRON:
        return CronTrigger(expression, zone, schedule.dst), expression
    if kind is ScheduleKind.RATE:
        return IntervalTrigger(anchor, parse_rate(expression), first=1), expression
    preset = parse_frequency(expression)
    return frequency_trigger(preset, anchor, zone, schedule.dst), str(preset)
