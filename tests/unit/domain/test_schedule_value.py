"""The Schedule value: one-offs, UTC in and out, refusals, to_dict/from_dict, describe."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from tests.unit.schedule_support import utc
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.schedule import Schedule, ScheduleKind
from tickwork.domain.schedule.calendar import CalendarUse, Excluded
from tickwork.domain.schedule.window import FireWindow

PLUS_EIGHT = timezone(timedelta(hours=8))


def test_one_off_fires_at_its_time() -> None:
    # GIVEN a one-off at 09:00Z
    schedule = Schedule.one_off(utc(2026, 5, 1, 9))
    # WHEN the first fire is asked for before it
    # THEN it is that time, and nothing follows it
    assert schedule.first_fire_time(utc(2026, 5, 1)) == utc(2026, 5, 1, 9)
    assert schedule.next_fire_time(utc(2026, 5, 1, 9), 1) is None


def test_late_one_off_fires_now() -> None:
    # GIVEN a one-off whose time has just passed
    schedule = Schedule.one_off(utc(2026, 5, 1, 9))
    # WHEN the first fire is asked for 30 seconds later
    # THEN it fires now (a late one-off is not lost)
    assert schedule.first_fire_time(utc(2026, 5, 1, 9, 0, 30)) == utc(2026, 5, 1, 9, 0, 30)


def test_datetimes_in_other_offsets_come_out_as_utc() -> None:
    # GIVEN a one-off given at 17:00+08:00 and "now" given at +08:00 too
    schedule = Schedule.one_off(datetime(2026, 5, 1, 17, tzinfo=PLUS_EIGHT))
    # WHEN it is read and evaluated
    first = schedule.first_fire_time(datetime(2026, 5, 1, 8, tzinfo=PLUS_EIGHT))
    # THEN everything is the same instant in UTC
    assert schedule.anchor == utc(2026, 5, 1, 9)
    assert schedule.anchor is not None and schedule.anchor.tzinfo is UTC
    assert first is not None and first.tzinfo is UTC


def test_naive_now_is_refused() -> None:
    # GIVEN a cron schedule
    schedule = Schedule.of_cron("30 * * * *")
    # WHEN it is asked with a naive "now"
    # THEN it is refused rather than guessed
    with pytest.raises(ValidationFailed):
        schedule.first_fire_time(datetime(2026, 1, 1))


def test_count_reached_ends_the_schedule() -> None:
    # GIVEN a cron allowed 2 fires
    schedule = Schedule.of_cron("30 * * * *", max_occurrences=2)
    # WHEN the next fire is asked after 1 and after 2 fires
    # THEN after 1 there is one more, after 2 there is none
    assert schedule.next_fire_time(utc(2026, 1, 1, 0, 30), 1) == utc(2026, 1, 1, 1, 30)
    assert schedule.next_fire_time(utc(2026, 1, 1, 1, 30), 2) is None


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        pytest.param({"kind": "weekly"}, "kind", id="unknown-kind"),
        pytest.param({"kind": "once", "anchor": datetime(2026, 1, 1)}, "anchor", id="naive-anchor"),
        pytest.param({"kind": "once"}, "anchor", id="one-off-without-time"),
        pytest.param(
            {"kind": "once", "expression": "30 * * * *", "anchor": utc(2026, 1, 1)},
            "expression",
            id="one-off-with-expression",
        ),
        pytest.param(
            {"kind": "rate", "expression": "rate(5 minutes)"}, "anchor", id="rate-without-anchor"
        ),
        pytest.param({"kind": "cron"}, "cron", id="cron-without-expression"),
        pytest.param(
            {"kind": "cron", "expression": "30 * * * *", "anchor": utc(2026, 1, 1)},
            "anchor",
            id="cron-with-anchor",
        ),
        pytest.param(
            {"kind": "cron", "expression": "30 * * * *", "timezone": "Mars/Olympus"},
            "timezone",
            id="bad-zone",
        ),
        pytest.param(
            {"kind": "cron", "expression": "30 * * * *", "max_occurrences": 0},
            "executionRemainder",
            id="zero-count",
        ),
        pytest.param(
            {
                "kind": "cron",
                "expression": "30 * * * *",
                "start": utc(2026, 2, 1),
                "end": utc(2026, 1, 1),
            },
            "endTime",
            id="end-before-start",
        ),
        pytest.param(
            {"kind": "cron", "expression": "30 * * * *", "start": datetime(2026, 2, 1)},
            "startTime",
            id="naive-start",
        ),
        pytest.param(
            {"kind": "once", "anchor": utc(2026, 1, 1), "end": utc(2026, 2, 1)},
            "startTime, endTime, executionRemainder",
            id="one-off-with-bounds",
        ),
    ],
)
def test_invalid_schedules_are_refused_naming_the_field(
    arguments: dict[str, Any], field: str
) -> None:
    # GIVEN schedule arguments that do not make a schedule
    # WHEN the schedule is built
    with pytest.raises(ValidationFailed) as raised:
        Schedule(**arguments)
    # THEN the refusal names the field and a fix
    (problem,) = raised.value.problems
    assert problem.field == field
    assert problem.fix


def test_bad_zone_refusal_suggests_an_iana_zone() -> None:
    # GIVEN a zone that is not an IANA name
    # WHEN a schedule is built with it
    with pytest.raises(ValidationFailed) as raised:
        Schedule.of_cron("30 * * * *", timezone="Kuala Lumpur")
    # THEN the fix gives an example zone
    assert "Europe/London" in raised.value.problems[0].fix


ROUND_TRIPS = [
    pytest.param(Schedule.one_off(utc(2026, 5, 1, 9, 0, 0, 123_456)), id="once-microseconds"),
    pytest.param(Schedule.of_cron("30 * * * *"), id="cron"),
    pytest.param(
        Schedule.of_cron(
            "cron(0 9 ? * MON-FRI 2026-2027)",
            timezone="Asia/Kuala_Lumpur",
            start=utc(2026, 1, 1),
            end=utc(2027, 6, 30, 23, 59, 59, 999_999),
            max_occurrences=100,
        ),
        id="eventbridge-cron-bounded",
    ),
    pytest.param(Schedule.of_rate("rate(5 minutes)", utc(2026, 1, 1, 0, 0, 0, 1)), id="rate"),
    pytest.param(
        Schedule.of_frequency(
            "MONTHLY", utc(2026, 1, 31, 14), "America/New_York", max_occurrences=12
        ),
        id="frequency-monthly",
    ),
]


@pytest.mark.parametrize("schedule", ROUND_TRIPS)
def test_to_dict_from_dict_round_trips_exactly_through_json(schedule: Schedule) -> None:
    # GIVEN a schedule
    # WHEN it is stored as JSON and read back
    stored = json.loads(json.dumps(schedule.to_dict()))
    restored = Schedule.from_dict(stored)
    # THEN it is the same schedule, stores the same dict, and fires the same
    assert restored == schedule
    assert restored.to_dict() == stored
    now = utc(2026, 3, 1)
    assert restored.first_fire_time(now) == schedule.first_fire_time(now)


def test_to_dict_is_the_documented_shape() -> None:
    # GIVEN the seed's daily schedule
    schedule = Schedule.of_frequency(
        "DAILY", utc(2025, 1, 15, 8, 35, 17, 120_000), max_occurrences=5
    )
    # WHEN it is stored
    # THEN UTC instants carry a Z and absent values are left out
    assert schedule.to_dict() == {
        "kind": "frequency",
        "expression": "DAILY",
        "anchor": "2025-01-15T08:35:17.120000Z",
        "timezone": "UTC",
        "maxOccurrences": 5,
    }


@pytest.mark.parametrize(
    ("stored", "field"),
    [
        pytest.param(
            {"kind": "cron", "expression": "30 * * * *", "colour": "red"},
            "colour",
            id="unknown-key",
        ),
        pytest.param({"expression": "30 * * * *"}, "kind", id="missing-kind"),
        pytest.param(
            {"kind": "once", "anchor": "2026-05-01T09:00:00"}, "anchor", id="naive-anchor"
        ),
        pytest.param({"kind": "once", "anchor": "tomorrow"}, "anchor", id="garbage-anchor"),
    ],
)
def test_from_dict_refuses_what_to_dict_never_writes(stored: dict[str, Any], field: str) -> None:
    # GIVEN a stored dict that Schedule.to_dict() could not have written
    # WHEN it is read
    with pytest.raises(ValidationFailed) as raised:
        Schedule.from_dict(stored)
    # THEN the refusal names the offending key
    assert raised.value.problems[0].field == field


@pytest.mark.parametrize(
    ("schedule", "text"),
    [
        pytest.param(Schedule.of_cron("30 * * * *"), "cron 30 * * * * UTC", id="cron"),
        pytest.param(
            Schedule.of_cron("cron(0 9 ? * MON-FRI *)", timezone="Asia/Kuala_Lumpur"),
            "cron(0 9 ? * MON-FRI *) Asia/Kuala_Lumpur",
            id="eventbridge-cron",
        ),
        pytest.param(
            Schedule.one_off(utc(2026, 5, 1, 9)), "once at 2026-05-01T09:00:00Z", id="once"
        ),
        pytest.param(
            Schedule.of_frequency("DAILY", utc(2026, 1, 1, 1), "Asia/Kuala_Lumpur"),
            "every day at 09:00 Asia/Kuala_Lumpur",
            id="daily",
        ),
        pytest.param(
            Schedule.of_frequency("WEEKLY", utc(2026, 1, 5, 14), "America/New_York"),
            "every Monday at 09:00 America/New_York",
            id="weekly",
        ),
        pytest.param(
            Schedule.of_frequency("MONTHLY", utc(2026, 1, 31, 9, 30)),
            "every month on day 31 (or the month's last day) at 09:30 UTC",
            id="monthly",
        ),
        pytest.param(
            Schedule.of_frequency("TEN_MINS", utc(2026, 1, 1)),
            "every 10 minutes from 2026-01-01T00:00:00Z",
            id="ten-minutes",
        ),
        pytest.param(
            Schedule.of_rate("rate(2 days)", utc(2026, 1, 1)),
            "rate(2 days) from 2026-01-01T00:00:00Z",
            id="rate",
        ),
        pytest.param(
            Schedule.of_frequency(
                "DAILY", utc(2025, 1, 15, 8, 35, 17), max_occurrences=5, end=utc(2026, 1, 1)
            ),
            "every day at 08:35:17 UTC, 5 times, until 2026-01-01T00:00:00Z",
            id="bounded",
        ),
        pytest.param(
            Schedule.of_cron("0 * * * *", window=FireWindow(timedelta(minutes=15))),
            "cron 0 * * * * UTC, each in a 15m window after its time",
            id="flexible-window",
        ),
        pytest.param(
            Schedule.of_cron("0 * * * *", window=FireWindow(timedelta(minutes=10), around=True)),
            "cron 0 * * * * UTC, each in a 10m window around its time",
            id="window-around",
        ),
        pytest.param(
            Schedule.of_cron("0 10 * * *", calendar=CalendarUse("uk", Excluded.SHIFT)),
            "cron 0 10 * * * UTC, calendar uk (times it excludes shifted)",
            id="calendar",
        ),
    ],
)
def test_describe_is_short_human_text(schedule: Schedule, text: str) -> None:
    # GIVEN a schedule
    # WHEN it is described
    # THEN the text says when it fires, in the schedule's zone
    assert schedule.describe() == text


def test_kind_accepts_plain_strings_and_compares_to_them() -> None:
    # GIVEN a schedule built with the kind as a plain string
    schedule = Schedule("cron", "30 * * * *")
    # WHEN its kind is read
    # THEN it is the enum member, equal to the string
    assert schedule.kind is ScheduleKind.CRON
    assert schedule.kind == "cron"
    assert schedule.frequency is None
