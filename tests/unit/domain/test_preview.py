"""Previewing a schedule: one typed expression, its next fires in UTC and local time."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.unit.schedule_support import NEW_YORK, utc
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.preview import format_fire_times, next_fire_times, when_detail


def refused(call: Any, *args: Any, **options: Any) -> ValidationFailed:
    with pytest.raises(ValidationFailed) as raised:
        call(*args, **options)
    return raised.value


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        pytest.param("30 * * * *", {"cron": "30 * * * *"}, id="cron-five-fields"),
        pytest.param("0  9 * *   MON-FRI", {"cron": "0 9 * * MON-FRI"}, id="cron-day-names"),
        pytest.param(
            "cron(0 9 ? * MON-FRI *)", {"cron": "cron(0 9 ? * MON-FRI *)"}, id="cron-eventbridge"
        ),
        pytest.param("rate(5 minutes)", {"rate": "rate(5 minutes)"}, id="rate"),
        pytest.param("rate(30 seconds)", {"rate": "rate(30 seconds)"}, id="rate-seconds"),
        pytest.param("daily", {"frequency": "DAILY"}, id="frequency-lower-case"),
        pytest.param("Ten_Mins", {"frequency": "TEN_MINS"}, id="frequency-mixed-case"),
        pytest.param("MONTHLY", {"frequency": "MONTHLY"}, id="frequency-upper-case"),
        pytest.param("90s", {"duration": "90s"}, id="duration-seconds"),
        pytest.param("1h30m", {"duration": "1h30m"}, id="duration-compound"),
        pytest.param("PT5M", {"duration": "PT5M"}, id="duration-iso"),
        pytest.param("2026-05-01T09:00:00Z", {"at": "2026-05-01T09:00:00Z"}, id="iso-utc"),
        pytest.param(
            "2026-05-01T17:00:00+08:00", {"at": "2026-05-01T17:00:00+08:00"}, id="iso-offset"
        ),
        pytest.param("1767254400000", {"executionTime": 1767254400000}, id="epoch-millis"),
        pytest.param("  rate(1 hour)\n", {"rate": "rate(1 hour)"}, id="surrounding-space"),
    ],
)
def test_each_expression_form_is_detected(expression: str, expected: dict[str, Any]) -> None:
    # GIVEN an expression typed on a command line
    # WHEN its "when" is detected
    detail = when_detail(expression)
    # THEN it is the Start-detail field of that form
    assert detail == expected


@pytest.mark.parametrize(
    "expression",
    [
        pytest.param("", id="empty"),
        pytest.param("tomorrow", id="word"),
        pytest.param("every day at nine am", id="five-words"),
        pytest.param("12345", id="short-digits"),
        pytest.param("1.5h", id="fractional-duration"),
        pytest.param("rate 5 minutes", id="rate-without-parentheses"),
        pytest.param("30 * * *", id="four-cron-fields"),
    ],
)
def test_garbage_is_refused_naming_expression_with_every_form(expression: str) -> None:
    # GIVEN text that is none of the accepted forms
    # WHEN its "when" is detected
    error = refused(when_detail, expression)
    # THEN the one problem names "expression" and its fix shows one example of each form
    [problem] = error.problems
    assert problem.field == "expression"
    assert repr(expression) in problem.problem
    for example in (
        '"30 * * * *"',
        '"cron(0 9 ? * MON-FRI *)"',
        '"rate(5 minutes)"',
        '"DAILY"',
        '"1h30m"',
        '"2026-05-01T09:00:00Z"',
        "1767254400000",
    ):
        assert example in problem.fix


def test_daily_cron_skips_the_spring_forward_gap_in_new_york() -> None:
    # GIVEN "02:30 every day" in New York, whose clocks jump 02:00 -> 03:00 on 2026-03-08
    after = utc(2026, 3, 6, 12)
    # WHEN four fires are previewed
    fires = next_fire_times("30 2 * * *", after, count=4, timezone=NEW_YORK)
    # THEN March 8 has none: EST before the jump, EDT after it
    assert fires == [
        utc(2026, 3, 7, 7, 30),
        utc(2026, 3, 9, 6, 30),
        utc(2026, 3, 10, 6, 30),
        utc(2026, 3, 11, 6, 30),
    ]


def test_daily_cron_fires_once_in_the_repeated_fall_back_hour() -> None:
    # GIVEN "01:30 every day" in New York, where 01:00-02:00 happens twice on 2026-11-01
    after = utc(2026, 10, 31, 12)
    # WHEN three fires are previewed
    fires = next_fire_times("30 1 * * *", after, count=3, timezone=NEW_YORK)
    # THEN November 1 fires once, at the first (EDT) 01:30, then EST from November 2
    assert fires == [utc(2026, 11, 1, 5, 30), utc(2026, 11, 2, 6, 30), utc(2026, 11, 3, 6, 30)]


def test_rows_show_utc_and_the_local_offset_across_the_jump() -> None:
    # GIVEN "03:00 every day" in New York previewed from before the 2026-03-08 jump
    fires = next_fire_times("0 3 * * *", utc(2026, 3, 7, 12), count=2, timezone=NEW_YORK)
    # WHEN the fires are laid out as rows
    rows = format_fire_times(fires, NEW_YORK)
    # THEN each row numbers the fire and gives it in UTC and on the New York wall clock
    assert rows == [
        {
            "n": 1,
            "utc": "2026-03-08T07:00:00Z",
            "local": "2026-03-08T03:00:00-04:00",
            "zone": NEW_YORK,
        },
        {
            "n": 2,
            "utc": "2026-03-09T07:00:00Z",
            "local": "2026-03-09T03:00:00-04:00",
            "zone": NEW_YORK,
        },
    ]


def test_rows_refuse_an_unknown_zone() -> None:
    # GIVEN a zone name that is not in the IANA database
    # WHEN fires are laid out in it
    error = refused(format_fire_times, [utc(2026, 1, 1)], "Mars/Olympus_Mons")
    # THEN the refusal names the timezone
    assert [problem.field for problem in error.problems] == ["timezone"]


@pytest.mark.parametrize(
    ("expression", "step"),
    [
        pytest.param("rate(5 minutes)", timedelta(minutes=5), id="minutes"),
        pytest.param("rate(30 seconds)", timedelta(seconds=30), id="seconds"),
        pytest.param("rate(1 day)", timedelta(days=1), id="day"),
    ],
)
def test_rate_fires_one_interval_apart_from_after(expression: str, step: timedelta) -> None:
    # GIVEN a rate previewed from a moment, as if the action were created then
    after = utc(2026, 1, 1, 0, 0, 7)
    # WHEN three fires are previewed
    fires = next_fire_times(expression, after, count=3)
    # THEN the first is one interval after that moment (creation is not a fire)
    assert fires == [after + step, after + 2 * step, after + 3 * step]


def test_eventbridge_cron_with_a_year_bound_ends_early() -> None:
    # GIVEN noon on the 1st of each month, in 2026 only, previewed from mid-October 2026
    after = utc(2026, 10, 15)
    # WHEN five fires are asked for
    fires = next_fire_times("cron(0 12 1 * ? 2026)", after, count=5)
    # THEN only the two left in 2026 come back
    assert fires == [utc(2026, 11, 1, 12), utc(2026, 12, 1, 12)]


def test_monthly_frequency_from_january_31_lands_on_the_leap_day() -> None:
    # GIVEN MONTHLY first firing on Jan 31 2028, a leap year
    after = utc(2028, 1, 1)
    # WHEN four fires are previewed
    fires = next_fire_times("monthly", after, count=4, first="2028-01-31T09:00:00Z")
    # THEN February clamps to its 29th and later months keep the 31st where they have it
    assert fires == [
        utc(2028, 1, 31, 9),
        utc(2028, 2, 29, 9),
        utc(2028, 3, 31, 9),
        utc(2028, 4, 30, 9),
    ]


def test_frequency_without_a_first_time_fires_one_period_after() -> None:
    # GIVEN DAILY with no first time
    after = utc(2026, 6, 1, 8, 15)
    # WHEN two fires are previewed
    fires = next_fire_times("DAILY", after, count=2)
    # THEN the first is one day after, as a new action's would be
    assert fires == [utc(2026, 6, 2, 8, 15), utc(2026, 6, 3, 8, 15)]


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        pytest.param("90s", utc(2026, 1, 1, 0, 1, 30), id="duration"),
        pytest.param("2026-05-01T09:00:00Z", utc(2026, 5, 1, 9), id="iso"),
        pytest.param("1767254400000", utc(2026, 1, 1, 8), id="epoch-millis"),
    ],
)
def test_a_one_off_fires_once_however_many_are_asked(expression: str, expected: datetime) -> None:
    # GIVEN a one-off previewed from midnight on 2026-01-01
    # WHEN five fires are asked for
    fires = next_fire_times(expression, utc(2026, 1, 1), count=5)
    # THEN there is exactly one
    assert fires == [expected]


def test_a_one_off_in_the_past_is_refused_by_the_start_detail() -> None:
    # GIVEN an instant long before "after"
    # WHEN it is previewed
    error = refused(next_fire_times, "2020-01-01T00:00:00Z", utc(2026, 1, 1))
    # THEN the Start detail's own refusal comes through, naming "at"
    assert [problem.field for problem in error.problems] == ["at"]


def test_a_first_time_is_refused_for_anything_but_a_frequency() -> None:
    # GIVEN a cron with a first time
    # WHEN it is previewed
    error = refused(next_fire_times, "30 * * * *", utc(2026, 1, 1), first="2026-02-01T00:00:00Z")
    # THEN the refusal names "first"
    assert [problem.field for problem in error.problems] == ["first"]


def test_a_bad_cron_of_the_right_shape_is_refused_naming_cron() -> None:
    # GIVEN five fields that are not a valid cron
    # WHEN they are previewed
    error = refused(next_fire_times, "61 * * * *", utc(2026, 1, 1))
    # THEN the schedule's own refusal names "cron"
    assert [problem.field for problem in error.problems] == ["cron"]


@pytest.mark.parametrize(
    "count",
    [
        pytest.param(0, id="zero"),
        pytest.param(-1, id="negative"),
        pytest.param(101, id="over-100"),
        pytest.param(True, id="bool"),
        pytest.param(2.0, id="float"),
    ],
)
def test_count_outside_1_to_100_is_refused(count: Any) -> None:
    # GIVEN a count that is not a whole number from 1 to 100
    # WHEN fires are previewed
    error = refused(next_fire_times, "rate(5 minutes)", utc(2026, 1, 1), count=count)
    # THEN the refusal names "count"
    assert [problem.field for problem in error.problems] == ["count"]


@pytest.mark.parametrize("count", [pytest.param(1, id="one"), pytest.param(100, id="hundred")])
def test_count_at_the_bounds_is_met_exactly(count: int) -> None:
    # GIVEN an endless rate
    # WHEN the smallest and largest counts are asked for
    fires = next_fire_times("rate(1 minute)", utc(2026, 1, 1), count=count)
    # THEN exactly that many fires come back, one minute apart
    assert len(fires) == count
    assert fires[-1] == utc(2026, 1, 1) + count * timedelta(minutes=1)
