"""What a schedule is made of, as its helpers read it: its kind and the fields every kind may
carry (``ScheduleFields``, which ``model.Schedule`` has). Below the schedule's modules, so that
none of them imports the Schedule itself."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Protocol

from tickwork.domain.schedule.calendar import CalendarUse
from tickwork.domain.schedule.wallclock import DstPolicy
from tickwork.domain.schedule.window import FireWindow

__all__ = ["ScheduleFields", "ScheduleKind"]


class ScheduleKind(StrEnum):
    ONCE = "once"
    CRON = "cron"
    RATE = "rate"
    FREQUENCY = "frequency"


class ScheduleFields(Protocol):
    """A schedule's fields, read-only (``model.Schedule`` holds them)."""

    @property
    def kind(self) -> ScheduleKind: ...
    @property
    def expression(self) -> str | None: ...
    @property
    def anchor(self) -> datetime | None: ...
    @property
    def timezone(self) -> str: ...
    @property
    def start(self) -> datetime | None: ...
    @property
    def end(self) -> datetime | None: ...
    @property
    def max_occurrences(self) -> int | None: ...
    @property
    def dst(self) -> DstPolicy: ...
    @property
    def window(self) -> FireWindow | None: ...
    @property
    def calendar(self) -> CalendarUse | None: ...
