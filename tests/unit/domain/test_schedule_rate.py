"""Rate schedules: EventBridge rate syntax, fixed elapsed intervals from the creation time (or
from the startTime, the first fire, when given)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.unit.schedule_support import utc
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.schedule import Schedule
from tickwork.domain.schedule.rate import parse_rate
from tickwork.domain.start_request import parse_start_detail


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("rate(5 minutes)", timedelta(minutes=5), id="minutes"),
        pytest.param("rate(1 minute)", timedelta(minutes=1), id="one-minute"),
        pytest.param("rate(1 hour)", timedelta(hours=1), id="one-hour"),
        pytest.param("rate(12 hours)", timedelta(hours=12), id="hours"),
        pytest.param("rate(2 days)", timedelta(days=2), id="days"),
        pytest.param("rate(1 day)", timedelta(days=1), id="one-day"),
        pytest.param("rate(2 seconds)", timedelta(seconds=2), id="seconds-tickwork-extension"),
        pytest.param(" rate( 10  Minutes ) ", timedelta(minutes=10), id="spacing-and-case"),
    ],
)
def test_parses_eventbridge_rates(text: str, expected: timedelta) -> None:
    # GIVEN an EventBridge rate expression
    # WHEN it is parsed
    # THEN its interval is returned
    assert parse_rate(text) == expected


@pytest.mark.parametrize(
    ("text", "fix_words"),
    [
        pytest.param("rate(1 minutes)", "rate(1 minute)", id="plural-for-one"),
        pytest.param("rate(5 minute)", "rate(5 minutes)", id="singular-for-many"),
        pytest.param("rate(0 minutes)", "rate(5 minutes)", id="zero"),
        pytest.param("rate(-5 minutes)", "rate(5 minutes)", id="negative"),
        pytest.param("rate(1 seconds)", "rate(1 second)", id="plural-second-for-one"),
        pytest.param("rate(2 weeks)", "second(s), minute(s), hour(s) or day(s)", id="weeks-unit"),
        pytest.param("5 minutes", "rate(5 minutes)", id="no-rate-wrapper"),
        pytest.param("rate(five minutes)", "rate(5 minutes)", id="word-number"),
    ],
)
def test_refuses_bad_rates_with_a_fix(text: str, fix_words: str) -> None:
    # GIVEN a rate EventBridge would not accept
    # WHEN it is parsed
    with pytest.raises(ValidationFailed) as raised:
        parse_rate(text)
    # THEN the refusal names the rate field and shows a correct expression
    (problem,) = raised.value.problems
    assert problem.field == "rate"
    assert fix_words in problem.fix


def test_fires_at_whole_intervals_after_the_creation_time() -> None:
    # GIVEN a 5-minute rate created at a time with microseconds
    created = utc(2026, 1, 1, 0, 0, 0, 500_000)
    schedule = Schedule.of_rate("rate(5 minutes)", created)
    # WHEN the first fire is asked for at the creation time
    first = schedule.first_fire_time(created)
    # THEN the creation time itself is not a fire: the first is one interval later
    assert first == created + timedelta(minutes=5)
    # AND the next ones follow at whole intervals
    second = schedule.next_fire_time(first, 1)
    assert second == created + timedelta(minutes=10)
    assert schedule.next_fire_time(second, 2) == created + timedelta(minutes=15)


def test_first_fire_after_a_gap_stays_aligned_to_the_anchor() -> None:
    # GIVEN a 5-minute rate created at 00:00:00.5
    created = utc(2026, 1, 1, 0, 0, 0, 500_000)
    schedule = Schedule.of_rate("rate(5 minutes)", created)
    # WHEN the first fire is asked for 7 minutes later
    first = schedule.first_fire_time(created + timedelta(minutes=7))
    # THEN it is the 10-minute mark, not 7 minutes + 5
    assert first == utc(2026, 1, 1, 0, 10, 0, 500_000)


def test_next_fire_is_strictly_after_the_previous_even_off_grid() -> None:
    # GIVEN an hourly rate and a previous fire time recorded slightly late (rounded up)
    created = utc(2026, 1, 1)
    schedule = Schedule.of_rate("rate(1 hour)", created)
    # WHEN the next fire is computed from 01:00:00.000999
    following = schedule.next_fire_time(utc(2026, 1, 1, 1, 0, 0, 999), 1)
    # THEN it is 02:00, the next whole interval
    assert following == utc(2026, 1, 1, 2)


def test_daily_rate_is_elapsed_time_across_dst() -> None:
    # GIVEN a one-day rate in New York created the day before clocks spring forward
    created = utc(2026, 3, 7, 14)  # 09:00 EST
    schedule = Schedule.of_rate("rate(1 day)", created, timezone="America/New_York")
    # WHEN the first fire is computed
    first = schedule.first_fire_time(created)
    # THEN it is exactly 24 hours later (10:00 EDT), not 09:00 wall clock
    assert first == utc(2026, 3, 8, 14)


def test_a_rate_with_a_start_time_first_fires_at_it_as_eventbridge_scheduler_does() -> None:
    # GIVEN a rate with a startTime, created at a moment of its own (the ms differ)
    now = utc(2026, 3, 7, 12, 0, 0, 437_000)
    detail = {"rate": "rate(11 seconds)", "startTime": "2026-03-07T12:00:30Z", "repeat": True}
    request = parse_start_detail({"id": "r", **detail}, now)

    # WHEN its fires are computed THEN the first is the startTime, then every 11 seconds
    first = request.schedule.first_fire_time(now)
    assert first == utc(2026, 3, 7, 12, 0, 30)
    assert request.schedule.next_fire_time(first, 1) == utc(2026, 3, 7, 12, 0, 41)

    # AND without one it counts from its creation, as before
    bare = parse_start_detail({"id": "r", "rate": "rate(11 seconds)"}, now)
    assert bare.schedule.first_fire_time(now) == now + timedelta(seconds=11)
