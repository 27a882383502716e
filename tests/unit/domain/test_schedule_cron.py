"""Cron schedules: 5-field and EventBridge forms, evaluated on the wall clock of a zone."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.unit.schedule_support import NEW_YORK, fires, utc
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.schedule import Schedule


def test_standard_cron_fires_at_matching_minutes() -> None:
    # GIVEN the seed's 5-field cron "30 * * * *" in UTC
    schedule = Schedule.of_cron("30 * * * *")
    # WHEN fires are listed from 00:10
    # THEN it fires at half past every hour
    assert fires(schedule, utc(2026, 1, 1, 0, 10), 3) == [
        utc(2026, 1, 1, 0, 30),
        utc(2026, 1, 1, 1, 30),
        utc(2026, 1, 1, 2, 30),
    ]


def test_first_fire_includes_now_and_next_is_strictly_after() -> None:
    # GIVEN an hourly cron and "now" exactly on a fire
    schedule = Schedule.of_cron("30 * * * *")
    now = utc(2026, 1, 1, 0, 30)
    # WHEN the first and next fires are computed
    first = schedule.first_fire_time(now)
    # THEN the first is now itself and the next is an hour later
    assert first == now
    assert schedule.next_fire_time(now, 1) == utc(2026, 1, 1, 1, 30)


def test_cron_runs_on_the_wall_clock_of_a_non_utc_zone() -> None:
    # GIVEN "every day at 09:00" in Kuala Lumpur (UTC+8)
    schedule = Schedule.of_cron("0 9 * * *", timezone="Asia/Kuala_Lumpur")
    # WHEN fires are listed from midnight UTC
    # THEN they are 01:00 UTC each day, returned as aware UTC datetimes
    found = fires(schedule, utc(2026, 1, 1), 2)
    assert found == [utc(2026, 1, 1, 1), utc(2026, 1, 2, 1)]
    assert all(fire is not None and fire.tzinfo is UTC for fire in found)


def test_eventbridge_cron_with_question_mark_and_day_names() -> None:
    # GIVEN an EventBridge weekday cron, asked on Friday 2026-01-02 after 09:00
    schedule = Schedule.of_cron("cron(0 9 ? * MON-FRI *)")
    # WHEN fires are listed
    # THEN the weekend is skipped: Monday, then Tuesday
    assert fires(schedule, utc(2026, 1, 2, 10), 2) == [utc(2026, 1, 5, 9), utc(2026, 1, 6, 9)]


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        pytest.param("cron(0 9 ? * 1 *)", utc(2026, 1, 4, 9), id="eventbridge-1-is-sunday"),
        pytest.param("cron(0 9 ? * 2 *)", utc(2026, 1, 5, 9), id="eventbridge-2-is-monday"),
        pytest.param("cron(0 9 ? * 5 *)", utc(2026, 1, 1, 9), id="eventbridge-5-is-thursday"),
        pytest.param("cron(0 9 ? * 7 *)", utc(2026, 1, 3, 9), id="eventbridge-7-is-saturday"),
        pytest.param("cron(0 9 ? * SUN *)", utc(2026, 1, 4, 9), id="eventbridge-sun-name"),
        pytest.param("cron(0 9 ? * 2-3 *)", utc(2026, 1, 5, 9), id="eventbridge-range-mon-tue"),
        pytest.param("cron(0 9 ? * 1,7 *)", utc(2026, 1, 3, 9), id="eventbridge-list-weekend"),
        pytest.param("0 9 * * 0", utc(2026, 1, 4, 9), id="standard-0-is-sunday"),
        pytest.param("0 9 * * 1", utc(2026, 1, 5, 9), id="standard-1-is-monday"),
        pytest.param("0 9 * * 6", utc(2026, 1, 3, 9), id="standard-6-is-saturday"),
    ],
)
def test_day_of_week_numbering(expression: str, expected: datetime) -> None:
    # GIVEN a cron restricted to a day of the week, asked on Thursday 2026-01-01 00:00
    schedule = Schedule.of_cron(expression)
    # WHEN the first fire is computed
    # THEN EventBridge counts 1-7 = SUN-SAT and standard cron 0-6 = SUN-SAT
    assert schedule.first_fire_time(utc(2026, 1, 1)) == expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        pytest.param(
            "cron(0 9 ? * 6#3 *)",
            [utc(2026, 1, 16, 9), utc(2026, 2, 20, 9)],
            id="third-friday",
        ),
        pytest.param(
            "cron(0 9 ? * 6L *)",
            [utc(2026, 1, 30, 9), utc(2026, 2, 27, 9)],
            id="last-friday",
        ),
        pytest.param(
            "cron(0 12 L * ? *)",
            [utc(2026, 1, 31, 12), utc(2026, 2, 28, 12), utc(2026, 3, 31, 12)],
            id="last-day-of-month",
        ),
        pytest.param(
            "cron(0 9 17W * ? *)",
            [utc(2026, 1, 16, 9), utc(2026, 2, 17, 9)],
            id="nearest-weekday",
        ),
        pytest.param(
            "cron(0 0 1 1 ? 2028)",
            [utc(2028, 1, 1), None],
            id="single-year",
        ),
        pytest.param(
            "cron(0 0 1 1 ? 2027,2029)",
            [utc(2027, 1, 1), utc(2029, 1, 1), None],
            id="year-list",
        ),
        pytest.param(
            "cron(0 0 1 1 ? 2026-2030/2)",
            [utc(2026, 1, 1), utc(2028, 1, 1), utc(2030, 1, 1), None],
            id="year-range-step",
        ),
        pytest.param(
            "cron(15 10 ? JAN-FEB MON 2026)",
            [utc(2026, 1, 5, 10, 15), utc(2026, 1, 12, 10, 15)],
            id="month-names",
        ),
    ],
)
def test_eventbridge_special_characters_and_years(
    expression: str, expected: list[datetime | None]
) -> None:
    # GIVEN an EventBridge cron using #, L, W or a year field
    schedule = Schedule.of_cron(expression)
    # WHEN fires are listed from the start of 2026
    # THEN they match EventBridge's meaning, and stop after the last listed year
    assert fires(schedule, utc(2026, 1, 1), len(expected)) == expected


def test_leap_day_cron_waits_for_the_next_leap_year() -> None:
    # GIVEN a cron on February 29th
    schedule = Schedule.of_cron("0 0 29 2 *")
    # WHEN fires are listed from 2026
    # THEN the leap years 2028 and 2032 are the fires
    assert fires(schedule, utc(2026, 1, 1), 2) == [utc(2028, 2, 29), utc(2032, 2, 29)]


def test_spring_forward_skips_the_missing_local_time() -> None:
    # GIVEN 02:30 daily in New York; 2026-03-08 02:30 does not exist (02:00 -> 03:00)
    schedule = Schedule.of_cron("30 2 * * *", timezone=NEW_YORK)
    # WHEN fires are listed from 2026-03-06 noon UTC
    # THEN the 7th fires at 02:30 EST, the 8th is skipped, the 9th fires at 02:30 EDT
    assert fires(schedule, utc(2026, 3, 6, 12), 3) == [
        utc(2026, 3, 7, 7, 30),
        utc(2026, 3, 9, 6, 30),
        utc(2026, 3, 10, 6, 30),
    ]


def test_spring_forward_half_hourly_jumps_the_gap() -> None:
    # GIVEN every 30 minutes in New York from 01:00 EST on the spring-forward day
    schedule = Schedule.of_cron("*/30 * * * *", timezone=NEW_YORK)
    # WHEN fires are listed
    # THEN 02:00 and 02:30 (which do not exist) are skipped: 01:00, 01:30, 03:00 EDT
    assert fires(schedule, utc(2026, 3, 8, 6), 4) == [
        utc(2026, 3, 8, 6),
        utc(2026, 3, 8, 6, 30),
        utc(2026, 3, 8, 7),
        utc(2026, 3, 8, 7, 30),
    ]


def test_fall_back_fires_a_repeated_local_time_once() -> None:
    # GIVEN 01:30 daily in New York; on 2026-11-01 01:30 happens twice (EDT then EST)
    schedule = Schedule.of_cron("30 1 * * *", timezone=NEW_YORK)
    # WHEN fires are listed from 2026-10-31 noon UTC
    # THEN the 1st fires once, at the first 01:30 (EDT, 05:30Z), not again at 06:30Z
    assert fires(schedule, utc(2026, 10, 31, 12), 2) == [
        utc(2026, 11, 1, 5, 30),
        utc(2026, 11, 2, 6, 30),
    ]


def test_fall_back_hourly_skips_the_second_pass_of_the_hour() -> None:
    # GIVEN an hourly cron in New York on the fall-back day, from 23:30 EDT
    schedule = Schedule.of_cron("0 * * * *", timezone=NEW_YORK)
    # WHEN fires are listed
    # THEN 01:00 fires once (EDT, 05:00Z); 01:00 EST (06:00Z) does not fire
    assert fires(schedule, utc(2026, 11, 1, 3, 30), 4) == [
        utc(2026, 11, 1, 4),
        utc(2026, 11, 1, 5),
        utc(2026, 11, 1, 7),
        utc(2026, 11, 1, 8),
    ]


def test_now_inside_the_repeated_hour_does_not_fire_it_again() -> None:
    # GIVEN 01:30 daily in New York and "now" 01:10 EST, the second pass of 01:xx
    schedule = Schedule.of_cron("30 1 * * *", timezone=NEW_YORK)
    # WHEN the first fire is computed
    first = schedule.first_fire_time(utc(2026, 11, 1, 6, 10))
    # THEN 01:30 already fired at its first occurrence: the next is tomorrow
    assert first == utc(2026, 11, 2, 6, 30)


@pytest.mark.parametrize(
    "expression",
    [
        pytest.param("30 * * *", id="four-fields"),
        pytest.param("0 30 * * * *", id="six-fields-standard"),
        pytest.param("61 * * * *", id="minute-out-of-range"),
        pytest.param("0 0 30 2 *", id="february-30th-never-matches"),
        pytest.param("every hour", id="words"),
        pytest.param("cron(0 9 * * MON *)", id="eventbridge-without-question-mark"),
        pytest.param("cron(0 9 ? * ? *)", id="eventbridge-two-question-marks"),
        pytest.param("cron(0 9 ? * 8 *)", id="eventbridge-day-8"),
        pytest.param("cron(0 9 ? * 0 *)", id="eventbridge-day-0"),
        pytest.param("cron(0 9 LW * ? *)", id="eventbridge-lw-unsupported"),
        pytest.param("cron(0 9 1 1 ? 1969)", id="eventbridge-year-too-early"),
        pytest.param("cron(0 9 1 1 ? next)", id="eventbridge-year-garbage"),
        pytest.param("cron(0 9 * *)", id="eventbridge-four-fields"),
        pytest.param("cron(0 99 ? * MON *)", id="eventbridge-hour-out-of-range"),
    ],
)
def test_bad_cron_is_refused_with_an_example(expression: str) -> None:
    # GIVEN a cron expression that cannot be evaluated
    # WHEN a schedule is built from it
    with pytest.raises(ValidationFailed) as raised:
        Schedule.of_cron(expression)
    # THEN the refusal names the cron field and shows a valid example
    (problem,) = raised.value.problems
    assert problem.field == "cron"
    assert repr(expression) in problem.problem
    assert "cron(0 9 ? * MON-FRI *)" in problem.fix


def test_cron_bounded_by_start_and_end() -> None:
    # GIVEN an hourly cron that starts at 10:15 and ends at 12:30
    schedule = Schedule.of_cron(
        "0 * * * *", start=utc(2026, 1, 1, 10, 15), end=utc(2026, 1, 1, 12, 30)
    )
    # WHEN fires are listed from midnight
    # THEN nothing fires before the start and nothing after the end
    assert fires(schedule, utc(2026, 1, 1), 4) == [
        utc(2026, 1, 1, 11),
        utc(2026, 1, 1, 12),
        None,
        None,
    ]
