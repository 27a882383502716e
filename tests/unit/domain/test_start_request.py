"""The Schedule Start detail: the seed shapes, every 'when', and each refusal."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.unit.schedule_support import utc
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.schedule import ScheduleKind
from tickwork.domain.start_request import (
    WHEN_FIELDS,
    StartRequest,
    allowed_fields,
    parse_start_detail,
)

NOW = datetime(2026, 11, 22, 4, 0, tzinfo=UTC)
SEED_NOTIFICATION = {
    "action": "SEND_NOTIFICATION",
    "executionTime": 1736930117120,
    "repeat": True,
    "frequency": "DAILY",
    "executionRemainder": 5,
    "data": {
        "mobile": "60123456789",
        "subject": "Test",
        "name": "Joojo",
        "templateType": "USER_LATE_PAYMENT_NOTIFICATION",
        "notificationType": "SMS",
    },
}


def parse(detail: dict[str, Any], **options: Any) -> StartRequest:
    return parse_start_detail(detail, NOW, **options)


def refused(detail: Any) -> ValidationFailed:
    with pytest.raises(ValidationFailed) as raised:
        parse(detail)
    return raised.value


def test_seed_cron_shape_is_accepted() -> None:
    # GIVEN the seed's cron detail
    detail = {"id": "test:schedule", "cron": "30 * * * *"}
    # WHEN it is parsed
    request = parse(detail)
    # THEN it is a recurring UTC cron of the default TICK action
    assert request.action_id == "test:schedule"
    assert request.action == "TICK"
    assert (request.data, request.metadata) == ({}, {})
    assert request.schedule.kind is ScheduleKind.CRON
    assert request.schedule.expression == "30 * * * *"
    assert request.schedule.first_fire_time(NOW) == utc(2026, 11, 22, 4, 30)
    assert request.detail == detail


def test_seed_duration_shape_is_accepted() -> None:
    # GIVEN the seed's duration detail
    request = parse({"id": "test:duration-5m", "duration": "5m"})
    # WHEN it is parsed
    # THEN it is a one-off five minutes from now
    assert request.action_id == "test:duration-5m"
    assert request.schedule.kind is ScheduleKind.ONCE
    assert request.schedule.first_fire_time(NOW) == NOW + timedelta(minutes=5)
    assert request.schedule.next_fire_time(NOW + timedelta(minutes=5), 1) is None


def test_seed_notification_shape_is_accepted() -> None:
    # GIVEN the seed's daily notification, first time 2025-01-15T08:35:17.120Z (long past)
    # WHEN it is parsed
    request = parse(SEED_NOTIFICATION)
    # THEN it is DAILY from that anchor, 5 fires, with its data, and no id of its own
    schedule = request.schedule
    assert request.action_id is None
    assert request.action == "SEND_NOTIFICATION"
    assert request.data == SEED_NOTIFICATION["data"]
    assert schedule.kind is ScheduleKind.FREQUENCY
    assert schedule.frequency == "DAILY"
    assert schedule.anchor == utc(2025, 1, 15, 8, 35, 17, 120_000)
    assert schedule.max_occurrences == 5
    # AND the first fire is today at the anchor's time of day
    assert schedule.first_fire_time(NOW) == utc(2026, 11, 22, 8, 35, 17, 120_000)


@pytest.mark.parametrize(
    ("detail", "first"),
    [
        pytest.param({"at": "2026-12-01T09:00:00Z"}, utc(2026, 12, 1, 9), id="at-utc"),
        pytest.param(
            {"at": "2026-12-01T09:00:00+08:00", "timezone": "America/New_York"},
            utc(2026, 12, 1, 1),
            id="at-offset-wins-over-zone",
        ),
        pytest.param(
            {"at": "2026-12-01T09:00:00", "timezone": "Asia/Kuala_Lumpur"},
            utc(2026, 12, 1, 1),
            id="at-naive-read-in-zone",
        ),
        pytest.param(
            {"at": "2027-11-07T01:30:00", "timezone": "America/New_York"},
            utc(2027, 11, 7, 5, 30),
            id="at-naive-repeated-takes-first-pass",
        ),
        pytest.param({"executionTime": 1796115600000}, utc(2026, 12, 1, 9), id="execution-time"),
        pytest.param({"delay": "90s"}, NOW + timedelta(seconds=90), id="delay"),
        pytest.param({"duration": "PT1H30M"}, NOW + timedelta(minutes=90), id="duration-iso"),
        pytest.param({"at": "2026-11-22T03:59:30Z"}, NOW, id="within-grace-fires-now"),
        pytest.param(
            {"rate": "rate(5 minutes)"}, NOW + timedelta(minutes=5), id="rate-anchored-at-now"
        ),
        pytest.param({"frequency": "DAILY"}, utc(2026, 11, 23, 4), id="daily-one-period-later"),
        pytest.param(
            {"frequency": "TEN_MINS"}, utc(2026, 11, 22, 4, 10), id="ten-mins-one-period-later"
        ),
        pytest.param({"frequency": "MONTHLY"}, utc(2026, 12, 22, 4), id="monthly-one-period-later"),
        pytest.param(
            {"frequency": "daily", "at": "2026-11-25T09:00:00", "timezone": "Asia/Kuala_Lumpur"},
            utc(2026, 11, 25, 1),
            id="frequency-with-local-at",
        ),
        pytest.param(
            {"cron": "cron(0 9 ? * MON-FRI *)", "timezone": "Asia/Kuala_Lumpur"},
            utc(2026, 11, 23, 1),
            id="eventbridge-cron-in-zone",
        ),
        pytest.param(
            {
                "cron": "0 * * * *",
                "startTime": "2026-11-23T00:00:00",
                "timezone": "Asia/Kuala_Lumpur",
            },
            utc(2026, 11, 22, 16),
            id="cron-naive-start-read-in-zone",
        ),
    ],
)
def test_each_when_gives_its_first_fire(detail: dict[str, Any], first: datetime) -> None:
    # GIVEN a detail using one way of saying when
    # WHEN it is parsed at NOW
    request = parse(detail)
    # THEN its first fire is as expected (a repeated local time resolves to its first pass)
    assert request.schedule.first_fire_time(NOW) == first


def test_one_off_inside_a_wider_grace_is_accepted() -> None:
    # GIVEN an "at" two minutes ago and a five-minute grace
    detail = {"at": "2026-11-22T03:58:00Z"}
    # WHEN it is parsed
    request = parse(detail, grace=timedelta(minutes=5))
    # THEN it fires now
    assert request.schedule.first_fire_time(NOW) == NOW


def test_recurrence_bounds_are_carried_into_the_schedule() -> None:
    # GIVEN a cron with a count and a window
    detail = {
        "cron": "30 * * * *",
        "repeat": True,
        "executionRemainder": 3,
        "startTime": "2026-11-23T00:00:00Z",
        "endTime": "2026-12-01T00:00:00Z",
        "metadata": {"source": "billing"},
    }
    # WHEN it is parsed
    request = parse(detail)
    # THEN the schedule holds them
    schedule = request.schedule
    assert (schedule.max_occurrences, schedule.start, schedule.end) == (
        3,
        utc(2026, 11, 23),
        utc(2026, 12, 1),
    )
    assert request.metadata == {"source": "billing"}
    assert schedule.first_fire_time(NOW) == utc(2026, 11, 23, 0, 30)


@pytest.mark.parametrize(
    ("detail", "field", "fix_words"),
    [
        pytest.param(
            {"duration": "5m", "colour": "red"}, "colour", "allowed fields", id="unknown-field"
        ),
        pytest.param(
            {"exectionTime": 1796115600000},
            "exectionTime",
            "rename it to 'executionTime'",
            id="typo-field",
        ),
        pytest.param(
            {"at": "2026-12-01T09:00:00Z", "cron": "30 * * * *"},
            "at, cron",
            "exactly one",
            id="at-and-cron",
        ),
        pytest.param(
            {"duration": "5m", "delay": "5m"},
            "duration, delay",
            "exactly one",
            id="duration-and-delay",
        ),
        pytest.param(
            {"frequency": "DAILY", "at": "2026-12-01T09:00:00Z", "executionTime": 1796115600000},
            "at, executionTime, frequency",
            "exactly one",
            id="frequency-with-two-first-times",
        ),
        pytest.param(
            {"cron": "30 * * * *", "rate": "rate(1 hour)"},
            "cron, rate",
            "exactly one",
            id="cron-and-rate",
        ),
        pytest.param({"id": "x"}, "when", "exactly one", id="no-when"),
        pytest.param(
            {"duration": "5m", "repeat": True}, "repeat", "frequency", id="repeat-one-off"
        ),
        pytest.param(
            {"cron": "30 * * * *", "repeat": False},
            "repeat",
            "executionRemainder",
            id="repeat-false-cron",
        ),
        pytest.param({"at": "2026-11-22T03:58:59Z"}, "at", "future time", id="at-beyond-grace"),
        pytest.param(
            {"executionTime": 1736930117120},
            "executionTime",
            "future time",
            id="execution-time-past",
        ),
        pytest.param(
            {"executionTime": 1767254400}, "executionTime", "milliseconds", id="epoch-seconds"
        ),
        pytest.param(
            {"executionTime": "1796115600000"},
            "executionTime",
            "milliseconds",
            id="execution-time-string",
        ),
        pytest.param({"at": "next tuesday"}, "at", "ISO 8601", id="at-unparseable"),
        pytest.param(
            {"at": "2026-03-08T02:30:00", "timezone": "America/New_York"},
            "at",
            "daylight-saving gap",
            id="at-in-dst-gap",
        ),
        pytest.param(
            {"cron": "30 * * * *", "timezone": "Mars/Olympus"},
            "timezone",
            "Europe/London",
            id="bad-zone",
        ),
        pytest.param({"cron": "30 * * *"}, "cron", "cron(0 9 ? * MON-FRI *)", id="bad-cron"),
        pytest.param(
            {"cron": "cron(0 0 1 1 ? 2020)"}, "cron", "after now", id="cron-only-in-the-past"
        ),
        pytest.param({"rate": "rate(1 minutes)"}, "rate", "rate(1 minute)", id="bad-rate"),
        pytest.param({"frequency": "YEARLY"}, "frequency", "MONTHLY", id="bad-frequency"),
        pytest.param({"duration": "0s"}, "duration", "longer than zero", id="zero-duration"),
        pytest.param({"delay": "soon"}, "delay", "5m", id="garbage-delay"),
        pytest.param(
            {"cron": "30 * * * *", "executionRemainder": 0},
            "executionRemainder",
            "1 or more",
            id="zero-count",
        ),
        pytest.param(
            {"duration": "5m", "executionRemainder": 3},
            "executionRemainder",
            "frequency",
            id="count-one-off",
        ),
        pytest.param(
            {
                "cron": "30 * * * *",
                "startTime": "2026-12-02T00:00:00Z",
                "endTime": "2026-12-01T00:00:00Z",
            },
            "endTime",
            "after startTime",
            id="end-before-start",
        ),
        pytest.param(
            {"cron": "30 * * * *", "endTime": "2026-11-21T00:00:00Z"},
            "endTime",
            "future",
            id="end-in-past",
        ),
        pytest.param(
            {"cron": "30 * * * *", "startTime": "soon"}, "startTime", "ISO 8601", id="bad-start"
        ),
        pytest.param(
            {"at": "2026-12-01T09:00:00Z", "endTime": "2026-12-02T00:00:00Z"},
            "endTime",
            "frequency",
            id="bounds-on-one-off",
        ),
        pytest.param(
            {"duration": "5m", "repeat": "yes"}, "repeat", "true or false", id="repeat-not-bool"
        ),
        pytest.param(
            {"duration": "5m", "data": ["a"]}, "data", "JSON object", id="data-not-object"
        ),
        pytest.param({"id": "", "duration": "5m"}, "id", "1-200 characters", id="empty-id"),
        pytest.param(["duration", "5m"], "detail", "object", id="detail-not-object"),
    ],
)
def test_refusals_name_the_field_and_the_fix(detail: Any, field: str, fix_words: str) -> None:
    # GIVEN a detail that breaks one rule
    # WHEN it is parsed
    error = refused(detail)
    # THEN the one problem names the field, and its fix says what to do
    (problem,) = error.problems
    assert problem.field == field
    assert fix_words in problem.fix
    assert str(error).startswith(f"{field}:")


def test_unknown_field_refusal_lists_every_allowed_field() -> None:
    # GIVEN a detail with a field the model does not have
    # WHEN it is parsed
    error = refused({"duration": "5m", "priority": 1})
    # THEN the fix lists the allowed fields by their event names
    fix = error.problems[0].fix
    assert all(name in fix for name in allowed_fields())


def test_no_when_names_all_when_fields() -> None:
    # GIVEN a detail without any 'when'
    # WHEN it is parsed
    error = refused({"action": "TICK"})
    # THEN the problem names every field that could have said when
    assert all(name in error.problems[0].problem for name in WHEN_FIELDS)


def test_several_problems_are_reported_together() -> None:
    # GIVEN a detail with a one-off repeat, a bad zone and a zero count
    detail = {"duration": "5m", "repeat": True, "timezone": "Nowhere/City", "executionRemainder": 0}
    # WHEN it is parsed
    error = refused(detail)
    # THEN each problem is reported, each naming its field
    assert {problem.field for problem in error.problems} == {
        "repeat",
        "timezone",
        "executionRemainder",
    }


def test_time_problems_are_reported_with_when_problems() -> None:
    # GIVEN two whens, an unreadable at and an unreadable endTime
    detail = {"at": "later", "cron": "30 * * * *", "endTime": "never"}
    # WHEN it is parsed
    error = refused(detail)
    # THEN all three are named in one refusal
    assert {problem.field for problem in error.problems} == {"at, cron", "at", "endTime"}


def test_several_type_problems_are_reported_together() -> None:
    # GIVEN a detail with two fields of the wrong type and one unknown field
    detail = {"executionTime": "soon", "executionRemainder": "five", "colour": "red"}
    # WHEN it is parsed
    error = refused(detail)
    # THEN all three are named
    assert {problem.field for problem in error.problems} == {
        "executionTime",
        "executionRemainder",
        "colour",
    }


def test_allowed_fields_are_the_event_names() -> None:
    # GIVEN the start detail model
    # WHEN its allowed fields are listed
    names = allowed_fields()
    # THEN they are the camelCase names the event uses
    assert set(names) == {
        "id", "action", "data", "metadata", "at", "executionTime", "duration", "delay",
        "cron", "rate", "frequency", "timezone", "dstRepeated", "dstMissing",
        "flexibleWindow", "windowMode", "calendar", "onExcluded", "repeat",
        "executionRemainder",
        "startTime", "endTime", "catchUp", "catchUpWindow", "misfireThreshold",
        "scheduleExpression", "group", "onFailure", "onUnknownOutcome", "lockSeconds",
        "maximumRetryAttempts", "maximumEventAgeSeconds", "deadLetterArn", "catchUpOnResume",
        "overlapPolicy",
        "roleArn",
    }  # fmt: skip


def test_naive_now_is_a_programming_error() -> None:
    # GIVEN a naive "now"
    # WHEN a detail is parsed with it
    # THEN it is refused as a bug in the caller, not a validation problem
    with pytest.raises(ValueError, match="timezone-aware"):
        parse_start_detail({"duration": "5m"}, datetime(2026, 1, 1))
