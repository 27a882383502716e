"""Frequency presets: elapsed TEN_MINS/HOURLY, wall-clock DAILY/WEEKLY/MONTHLY."""

from __future__ import annotations

from datetime import datetime

import pytest

from tests.unit.schedule_support import NEW_YORK, fires, utc
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.schedule import Schedule


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        pytest.param(utc(2026, 11, 22, 4), utc(2026, 11, 22, 8, 35, 17), id="later-today"),
        pytest.param(utc(2026, 11, 22, 9), utc(2026, 11, 23, 8, 35, 17), id="tomorrow"),
        pytest.param(utc(2026, 11, 22, 8, 35, 17), utc(2026, 11, 22, 8, 35, 17), id="exactly-now"),
        pytest.param(utc(2024, 6, 1), utc(2025, 1, 15, 8, 35, 17), id="anchor-in-future"),
    ],
)
def test_daily_past_anchor_aligns_to_the_anchor(now: datetime, expected: datetime) -> None:
    # GIVEN a DAILY schedule whose first time was 2025-01-15T08:35:17Z
    schedule = Schedule.of_frequency("DAILY", utc(2025, 1, 15, 8, 35, 17))
    # WHEN the first fire is asked for at "now"
    # THEN it is the first anchor-aligned fire at or after now
    assert schedule.first_fire_time(now) == expected


def test_ten_minutes_is_elapsed_time_aligned_to_the_anchor() -> None:
    # GIVEN TEN_MINS from 00:00:05.25
    schedule = Schedule.of_frequency("TEN_MINS", utc(2026, 1, 1, 0, 0, 5, 250_000))
    # WHEN fires are listed from 00:31
    # THEN they keep the anchor's seconds and microseconds
    assert fires(schedule, utc(2026, 1, 1, 0, 31), 2) == [
        utc(2026, 1, 1, 0, 40, 5, 250_000),
        utc(2026, 1, 1, 0, 50, 5, 250_000),
    ]


def test_hourly_is_elapsed_time_across_fall_back() -> None:
    # GIVEN HOURLY in New York from 00:30 EDT on the fall-back day
    schedule = Schedule.of_frequency("HOURLY", utc(2026, 11, 1, 4, 30), NEW_YORK)
    # WHEN fires are listed
    # THEN every elapsed hour fires, both passes of 01:30 included
    assert fires(schedule, utc(2026, 11, 1, 4, 30), 4) == [
        utc(2026, 11, 1, 4, 30),
        utc(2026, 11, 1, 5, 30),
        utc(2026, 11, 1, 6, 30),
        utc(2026, 11, 1, 7, 30),
    ]


def test_daily_keeps_the_local_time_in_a_non_utc_zone() -> None:
    # GIVEN DAILY at 09:00 Kuala Lumpur (01:00Z)
    schedule = Schedule.of_frequency("DAILY", utc(2026, 1, 1, 1), "Asia/Kuala_Lumpur")
    # WHEN fires are listed from the anchor
    # THEN the anchor is the first fire, then 09:00 local each day
    assert fires(schedule, utc(2026, 1, 1), 3) == [
        utc(2026, 1, 1, 1),
        utc(2026, 1, 2, 1),
        utc(2026, 1, 3, 1),
    ]


def test_daily_keeps_the_wall_clock_across_spring_forward() -> None:
    # GIVEN DAILY at 09:00 New York, anchored on a winter day
    schedule = Schedule.of_frequency("DAILY", utc(2026, 3, 6, 14), NEW_YORK)
    # WHEN fires are listed across 2026-03-08
    # THEN 09:00 EST is 14:00Z and 09:00 EDT is 13:00Z
    assert fires(schedule, utc(2026, 3, 7), 3) == [
        utc(2026, 3, 7, 14),
        utc(2026, 3, 8, 13),
        utc(2026, 3, 9, 13),
    ]


def test_daily_skips_a_local_time_that_does_not_exist() -> None:
    # GIVEN DAILY at 02:30 New York, anchored 2026-03-06 (02:30 EST)
    schedule = Schedule.of_frequency("DAILY", utc(2026, 3, 6, 7, 30), NEW_YORK)
    # WHEN fires are listed from the 7th
    # THEN the 8th (02:30 does not exist) is skipped
    assert fires(schedule, utc(2026, 3, 7), 3) == [
        utc(2026, 3, 7, 7, 30),
        utc(2026, 3, 9, 6, 30),
        utc(2026, 3, 10, 6, 30),
    ]


def test_daily_fires_a_repeated_local_time_once() -> None:
    # GIVEN DAILY at 01:30 New York (01:30 happens twice on 2026-11-01)
    schedule = Schedule.of_frequency("DAILY", utc(2026, 10, 30, 5, 30), NEW_YORK)
    # WHEN fires are listed from the 31st
    # THEN the 1st fires once, at the first 01:30 (EDT, 05:30Z)
    assert fires(schedule, utc(2026, 10, 31), 3) == [
        utc(2026, 10, 31, 5, 30),
        utc(2026, 11, 1, 5, 30),
        utc(2026, 11, 2, 6, 30),
    ]


def test_weekly_keeps_weekday_and_wall_clock_across_dst() -> None:
    # GIVEN WEEKLY on Sunday 09:00 New York (14:00Z in winter)
    schedule = Schedule.of_frequency("WEEKLY", utc(2026, 3, 1, 14), NEW_YORK)
    # WHEN fires are listed after the anchor
    # THEN the next Sunday is 09:00 EDT (13:00Z)
    assert fires(schedule, utc(2026, 3, 2), 2) == [utc(2026, 3, 8, 13), utc(2026, 3, 15, 13)]


@pytest.mark.parametrize(
    ("anchor", "expected"),
    [
        pytest.param(
            utc(2026, 1, 31, 10),
            [
                utc(2026, 1, 31, 10),
                utc(2026, 2, 28, 10),
                utc(2026, 3, 31, 10),
                utc(2026, 4, 30, 10),
            ],
            id="jan-31-clamps-then-returns-to-31",
        ),
        pytest.param(
            utc(2028, 1, 31, 10),
            [utc(2028, 1, 31, 10), utc(2028, 2, 29, 10), utc(2028, 3, 31, 10)],
            id="jan-31-in-a-leap-year",
        ),
        pytest.param(
            utc(2026, 1, 30, 10),
            [utc(2026, 1, 30, 10), utc(2026, 2, 28, 10), utc(2026, 3, 30, 10)],
            id="jan-30-clamps",
        ),
        pytest.param(
            utc(2028, 2, 29, 10),
            [utc(2028, 2, 29, 10), utc(2028, 3, 29, 10), utc(2028, 4, 29, 10)],
            id="leap-day-anchor",
        ),
        pytest.param(
            utc(2026, 11, 30, 10),
            [utc(2026, 11, 30, 10), utc(2026, 12, 30, 10), utc(2027, 1, 30, 10)],
            id="across-new-year",
        ),
    ],
)
def test_monthly_is_a_calendar_month_anchored_on_the_original_day(
    anchor: datetime, expected: list[datetime]
) -> None:
    # GIVEN MONTHLY from an anchor near a month end
    schedule = Schedule.of_frequency("MONTHLY", anchor)
    # WHEN fires are listed from the anchor
    # THEN each month clamps to its last day but returns to the anchor's day
    assert fires(schedule, anchor, len(expected)) == expected


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        pytest.param(utc(2029, 2, 1), utc(2029, 2, 28, 10), id="non-leap-february-clamps"),
        pytest.param(utc(2032, 2, 1), utc(2032, 2, 29, 10), id="next-leap-february"),
        pytest.param(utc(2029, 2, 28, 10, 0, 1), utc(2029, 3, 29, 10), id="just-missed"),
    ],
)
def test_monthly_leap_day_anchor_years_later(now: datetime, expected: datetime) -> None:
    # GIVEN MONTHLY anchored on 2028-02-29
    schedule = Schedule.of_frequency("MONTHLY", utc(2028, 2, 29, 10))
    # WHEN the first fire is asked for in a later February
    # THEN a non-leap February clamps to the 28th, a leap one fires on the 29th
    assert schedule.first_fire_time(now) == expected


def test_monthly_past_anchor_aligns_to_the_original_day() -> None:
    # GIVEN MONTHLY anchored 2026-01-31 10:00Z, asked on 2026-04-15
    schedule = Schedule.of_frequency("MONTHLY", utc(2026, 1, 31, 10))
    # WHEN the first fire is computed
    # THEN it is April's last day, not the 28th carried over from February
    assert schedule.first_fire_time(utc(2026, 4, 15)) == utc(2026, 4, 30, 10)


def test_monthly_uses_the_local_day_in_the_zone() -> None:
    # GIVEN MONTHLY at 09:00 on Jan 31 Kuala Lumpur (01:00Z)
    schedule = Schedule.of_frequency("MONTHLY", utc(2026, 1, 31, 1), "Asia/Kuala_Lumpur")
    # WHEN the next fire is computed
    # THEN it is Feb 28 09:00 local
    assert schedule.next_fire_time(utc(2026, 1, 31, 1), 1) == utc(2026, 2, 28, 1)


def test_bounds_and_count_limit_the_fires() -> None:
    # GIVEN DAILY from Jan 1 09:00Z, starting Jan 10 noon, at most 3 fires, ending Jan 30
    schedule = Schedule.of_frequency(
        "DAILY",
        utc(2026, 1, 1, 9),
        start=utc(2026, 1, 10, 12),
        end=utc(2026, 1, 30),
        max_occurrences=3,
    )
    # WHEN fires are listed from Jan 1
    # THEN the first is the first fire after the start, and three fires is all
    assert fires(schedule, utc(2026, 1, 1), 4) == [
        utc(2026, 1, 11, 9),
        utc(2026, 1, 12, 9),
        utc(2026, 1, 13, 9),
        None,
    ]


def test_end_bound_is_inclusive_and_final() -> None:
    # GIVEN DAILY from Jan 1 09:00Z ending exactly at Jan 3 09:00Z
    schedule = Schedule.of_frequency("DAILY", utc(2026, 1, 1, 9), end=utc(2026, 1, 3, 9))
    # WHEN fires are listed
    # THEN the fire at the end instant happens and nothing after it
    assert fires(schedule, utc(2026, 1, 1), 4) == [
        utc(2026, 1, 1, 9),
        utc(2026, 1, 2, 9),
        utc(2026, 1, 3, 9),
        None,
    ]


def test_preset_is_case_insensitive_and_stored_canonically() -> None:
    # GIVEN a preset written in lower case
    schedule = Schedule.of_frequency("weekly", utc(2026, 1, 5, 9))
    # WHEN it is read back
    # THEN it is stored as the canonical upper-case name
    assert schedule.expression == "WEEKLY"
    assert schedule.frequency == "WEEKLY"


@pytest.mark.parametrize("preset", ["YEARLY", "EVERY_DAY", ""])
def test_unknown_preset_is_refused_listing_the_presets(preset: str) -> None:
    # GIVEN a preset tickwork does not have
    # WHEN a schedule is built from it
    with pytest.raises(ValidationFailed) as raised:
        Schedule.of_frequency(preset, utc(2026, 1, 1))
    # THEN the refusal names frequency and lists the presets
    (problem,) = raised.value.problems
    assert problem.field == "frequency"
    assert "TEN_MINS, HOURLY, DAILY, WEEKLY, MONTHLY" in problem.fix


def test_anchor_in_the_second_pass_of_a_repeated_hour_is_kept() -> None:
    # GIVEN DAILY anchored at the second 01:30 of 2026-11-01 in New York (01:30 EST, 06:30Z)
    anchor = utc(2026, 11, 1, 6, 30)
    schedule = Schedule.of_frequency("DAILY", anchor, NEW_YORK)
    # WHEN fires are listed from the anchor
    # THEN the anchor itself fires (it was asked for), then 01:30 EST each day
    assert fires(schedule, anchor, 2) == [anchor, utc(2026, 11, 2, 6, 30)]
