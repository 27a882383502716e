"""When actions fire: the Schedule value and its triggers (once, cron, rate, frequency)."""

from __future__ import annotations

from tickwork.domain.schedule.frequency import Frequency
from tickwork.domain.schedule.model import Schedule
from tickwork.domain.schedule.shape import ScheduleKind

__all__ = ["Frequency", "Schedule", "ScheduleKind"]
