"""Helpers shared by the schedule tests."""

from __future__ import annotations

from datetime import UTC, datetime

from tickwork.domain.schedule import Schedule

NEW_YORK = "America/New_York"


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def fires(schedule: Schedule, now: datetime, count: int) -> list[datetime | None]:
    """The first ``count`` fires from ``now``, None once the schedule has ended."""
    found: list[datetime | None] = [*schedule.upcoming(now, count)]
    return found + [None] * (count - len(found))
