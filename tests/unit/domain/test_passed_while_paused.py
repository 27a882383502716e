"""GIVEN a schedule paused from one of its occurrences WHEN a resume looks for those that came
due meanwhile THEN it finds the latest ``most`` of them, exactly the ones a walk from the
paused occurrence to now finds — without walking a long pause whole."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from tickwork.domain.backfill import passed_while_paused
from tickwork.domain.schedule import Schedule
from tickwork.domain.start_request import parse_start_detail
from tickwork.domain.times import ceil_ms

START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
WHENS = [
    {"rate": "rate(1 minute)"},
    {"rate": "rate(7 minutes)"},
    {"cron": "0 9 * * 1-5", "timezone": "Europe/Berlin"},
    {"cron": "*/15 9-17 * * *"},
    {"frequency": "DAILY", "at": "2026-03-02T09:30:00Z"},
]


def _walk(schedule: Schedule, first: datetime, now: datetime) -> list[datetime]:
    found, moment = [], first
    while moment is not None and moment <= now:
        found.append(ceil_ms(moment))
        moment = schedule.next_fire_time(moment, 0)
    return found


@settings(max_examples=60, deadline=None)
@given(
    when=st.sampled_from(WHENS),
    skip=st.integers(0, 30),
    pause=st.timedeltas(timedelta(0), timedelta(days=20)),
    most=st.sampled_from([1, 2, 5, 100]),
)
def test_the_latest_that_came_due_while_paused_are_those_a_walk_finds(
    when: dict[str, str], skip: int, pause: timedelta, most: int
) -> None:
    schedule = parse_start_detail({"id": "p", **when}, now=START).schedule
    first = schedule.first_fire_time(START)
    assert first is not None
    for _ in range(skip):  # paused at a later occurrence
        following = schedule.next_fire_time(first, 0)
        assert following is not None
        first = following
    now = first + pause
    assert passed_while_paused(schedule, first, now, most) == _walk(schedule, first, now)[-most:]
