"""When actions fire: the Schedule value and its triggers (once, cron, rate, frequency)."""

from __future__ import annotations

from tickwork.domain.schedule.frequency import Frequency
from tickwork.domain.schedule.kinds import ScheduleKind
from tickwork.domain.schedule.model import Schedule

__all__ = ["Frequency", "Schedule", "ScheduleKind"]
