"""GIVEN EventBridge Scheduler's expression forms, a group and a failure policy in a Start
detail WHEN it is parsed THEN each is read as EventBridge Scheduler reads it, and a bad one is
refused naming its own field with a fix that is not the field's own name."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.identifiers import DEFAULT_GROUP
from tickwork.domain.preview import detail_fire_times, next_fire_times
from tickwork.domain.schedule import ScheduleKind
from tickwork.domain.start_request import parse_start_detail
from tickwork.domain.steering import FailurePolicy

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def test_at_takes_eventbridge_schedulers_one_time_form_read_in_the_timezone() -> None:
    request = parse_start_detail(
        {"at": "at(2030-11-20T13:00:00)", "timezone": "Asia/Kuala_Lumpur"}, NOW
    )
    assert request.schedule.kind is ScheduleKind.ONCE
    assert request.schedule.anchor == datetime(2030, 11, 20, 5, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("expression", "kind"),
    [
        ("at(2030-11-20T13:00:00)", ScheduleKind.ONCE),
        ("rate(5 minutes)", ScheduleKind.RATE),
        ("cron(0 9 ? * MON-FRI *)", ScheduleKind.CRON),
    ],
)
def test_schedule_expression_takes_every_eventbridge_form(expression: str, kind: str) -> None:
    request = parse_start_detail({"scheduleExpression": expression}, NOW)
    assert request.schedule.kind is kind
    assert request.detail == {"scheduleExpression": expression}  # stored as sent


@pytest.mark.parametrize(
    "detail",
    [
        {"scheduleExpression": "every day"},
        {"scheduleExpression": "cron(0 9 * * * *)"},  # neither day field is ?
        {"scheduleExpression": "rate(5 minute)"},
        {"scheduleExpression": "at(2020-01-01T00:00:00)"},  # in the past
    ],
)
def test_a_bad_schedule_expression_is_refused_by_its_own_name(detail: dict) -> None:
    with pytest.raises(ValidationFailed) as refused:
        parse_start_detail(detail, NOW)
    assert [p.field for p in refused.value.problems] == ["scheduleExpression"]


def test_a_schedule_expression_and_another_when_are_refused_together() -> None:
    with pytest.raises(ValidationFailed, match="more than one 'when'") as refused:
        parse_start_detail({"scheduleExpression": "rate(1 hour)", "cron": "0 * * * *"}, NOW)
    assert "scheduleExpression" in refused.value.problems[0].field


def test_group_and_failure_policy_are_read_with_their_defaults() -> None:
    plain = parse_start_detail({"rate": "rate(1 hour)"}, NOW)
    chosen = parse_start_detail(
        {"rate": "rate(1 hour)", "group": "subscription-42", "onFailure": "pause"}, NOW
    )
    assert (plain.group, plain.on_failure) == (DEFAULT_GROUP, None)
    assert (chosen.group, chosen.on_failure) == ("subscription-42", FailurePolicy.PAUSE)


@pytest.mark.parametrize(
    ("detail", "field"),
    [
        ({"group": "subscription 42"}, "group"),
        ({"group": "a/b"}, "group"),
        ({"group": "x" * 65}, "group"),
        ({"onFailure": "RETRY"}, "onFailure"),
    ],
)
def test_a_bad_group_or_policy_is_refused_naming_it(detail: dict, field: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        parse_start_detail({"rate": "rate(1 hour)", **detail}, NOW)
    (problem,) = refused.value.problems
    assert problem.field == field and problem.fix and field not in problem.fix.split()[:3]


def test_next_lists_fires_strictly_after_the_given_time() -> None:
    on_the_hour = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
    fires = next_fire_times("0 * * * *", on_the_hour, count=2)
    assert fires == [datetime(2026, 11, 23, 13, tzinfo=UTC), datetime(2026, 11, 23, 14, tzinfo=UTC)]


def test_a_start_details_when_fields_preview_as_they_are() -> None:
    fires = detail_fire_times(
        {"cron": "cron(0 9 ? * MON-FRI *)", "timezone": "Asia/Kuala_Lumpur"}, NOW, count=1
    )
    assert fires == [datetime(2026, 11, 24, 1, 0, tzinfo=UTC)]  # Tuesday 09:00 in KL
    assert next_fire_times("at(2030-11-20T13:00:00)", NOW, 1) == [
        datetime(2030, 11, 20, 13, tzinfo=UTC)
    ]
