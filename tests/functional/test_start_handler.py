"""GIVEN a Schedule Start from events/ WHEN the start function handles it THEN the action is
indexed and its first execution started — or it is rejected and nothing is written."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from tickwork.domain.action import Status
from tickwork.domain.execution import name_of


def test_seed_cron_event_is_indexed_with_its_next_fire(stack, invoke, event) -> None:
    before = datetime.now(UTC)
    result, error = invoke("StartFunction", event("start/cron"))

    assert error is None and result["outcome"] == "created"
    action = stack.record("test:schedule")
    assert action.status == Status.PENDING
    assert action.execution_time is not None and action.execution_time.minute == 30
    assert timedelta(0) < action.execution_time - before <= timedelta(hours=1)
    # within LaunchAheadSeconds (15 minutes) its execution waits; further, it is parked
    if action.launch_at is None:
        named = name_of(action.execution_arn)
        assert named.startswith("test_schedule-") and named.endswith("-g1-o1")
        assert [e["name"] for e in stack.executions()] == [named]
    else:
        assert action.execution_time - action.launch_at == timedelta(minutes=15)
        assert (action.execution_arn, stack.executions()) == (None, [])


def test_seed_duration_event_fires_in_five_minutes(stack, invoke, event) -> None:
    before = datetime.now(UTC)
    result, error = invoke("StartFunction", event("start/duration-5m"))

    assert error is None and result["outcome"] == "created"
    fire = stack.record("test:duration-5m").execution_time
    assert fire is not None
    assert timedelta(minutes=5) <= fire - before <= timedelta(minutes=5, seconds=5)


def test_seed_notification_event_without_id_gets_one_from_the_event(stack, invoke, event) -> None:
    envelope = event("start/notification-daily")
    result, error = invoke("StartFunction", envelope)

    assert error is None and result["outcome"] == "created"
    action = stack.record(f"evt-{envelope['id']}")
    assert action.action == "SEND_NOTIFICATION"
    assert action.frequency == "DAILY" and action.repeat is True
    assert action.execution_remainder == 5
    # daily at the seed's time of day (08:35:17.120 UTC), the next one from now
    assert action.execution_time is not None
    assert action.execution_time.time().isoformat() == "08:35:17.120000"
    assert timedelta(0) < action.execution_time - datetime.now(UTC) <= timedelta(days=1)


@pytest.mark.parametrize(
    "name",
    [
        "start/eventbridge-cron-kuala-lumpur",
        "start/http-request-in-90s",
        "start/sqs-message",
        "start/sqs-message-fifo",
        "start/sqs-message-with-role",
        "start/sns-message",
        "start/eventbridge-event",
        "start/lambda-invoke",
        "start/step-functions-execution",
        "start/notification-email",
        "start/notification-push",
    ],
)
def test_other_start_events_are_accepted(stack, invoke, event, name) -> None:
    envelope = event(name)
    result, error = invoke("StartFunction", envelope)

    assert error is None and result["outcome"] == "created", result
    action = stack.record(result["id"])
    assert action.status == Status.PENDING
    assert action.role_arn == envelope["detail"].get("roleArn")


def test_a_flexible_window_start_fires_at_its_ids_instant_in_the_window(
    stack, invoke, event
) -> None:
    envelope = event("start/cron-flexible-window")
    result, error = invoke("StartFunction", envelope)

    assert error is None and result["outcome"] == "created", result
    action = stack.record("report:tenant-42:hourly")
    assert action.schedule.window is not None and action.execution_time is not None
    hour = action.execution_time.replace(minute=0, second=0, microsecond=0)
    assert hour <= action.execution_time < hour + timedelta(minutes=15)
    assert action.execution_time == action.fire_time_of(hour)
    assert action.origin_of(action.execution_time) == hour


@pytest.mark.parametrize(
    ("change", "field", "fix"),
    [
        ({"queueArn": "arn:aws:sqs:eu-west-1:123456789012:orders-due"}, "data.queueArn", "region"),
        ({"queueArn": "orders-due"}, "data.queueArn", "arn:aws:sqs:"),
        ({"messageBody": ""}, "data.messageBody", "body"),
        ({"delaySeconds": 901}, "data.delaySeconds", "900"),
    ],
    ids=["other-region", "not-an-arn", "empty-body", "delay-too-long"],
)
def test_a_target_refused_at_creation_names_the_field_and_writes_nothing(
    stack, invoke, event, change, field, fix
) -> None:
    envelope = event("start/sqs-message")
    envelope["detail"]["data"].update(change)

    result, error = invoke("StartFunction", envelope)

    assert error is None and result["outcome"] == "rejected", result
    (problem,) = result["problems"]
    assert problem["field"] == field and fix in problem["fix"] + problem["problem"], problem
    assert stack.records.get(envelope["detail"]["id"]) is None
    assert stack.executions() == []


def test_a_role_outside_the_stacks_role_path_is_refused(stack, invoke, event) -> None:
    envelope = event("start/sqs-message-with-role")
    envelope["detail"]["roleArn"] = "arn:aws:iam::123456789012:role/admin"

    result, _ = invoke("StartFunction", envelope)

    assert result["outcome"] == "rejected"
    assert [p["field"] for p in result["problems"]] == ["roleArn"]
    assert stack.records.get(envelope["detail"]["id"]) is None


@pytest.mark.parametrize(
    ("name", "fields"),
    [
        ("start/invalid-two-whens", {"cron", "duration"}),
        ("start/invalid-unknown-action", {"action"}),
        ("start/invalid-id-newline", {"id"}),
        ("start/invalid-group-newline", {"group"}),
        ("start/invalid-huge-rate", {"rate"}),
    ],
    ids=["two-whens", "unknown-action", "id-newline", "group-newline", "huge-rate"],
)
def test_invalid_start_is_rejected_and_nothing_is_written(
    stack, invoke, event, name, fields
) -> None:
    envelope = event(name)
    result, error = invoke("StartFunction", envelope)

    assert error is None  # a refusal is answered, not raised for EventBridge to retry
    assert result["outcome"] == "rejected"
    named = {part.strip() for p in result["problems"] for part in p["field"].split(",")}
    assert fields <= named, result["problems"]
    assert all(p["fix"] for p in result["problems"])
    assert stack.records.get(envelope["detail"]["id"]) is None
    assert stack.executions() == []
    rejected = stack.lifecycle.wait_for(lambda evs: len(evs) >= 1, timeout=2)
    assert [e["detail-type"] for e in rejected] == ["Schedule Rejected"]


def test_api_function_answers_the_events_api_files(stack, invoke, event) -> None:
    created, error = invoke("ApiFunction", event("api/create-action"))
    assert error is None and created["statusCode"] == 201, created

    got, _ = invoke("ApiFunction", event("api/get-action"))
    listed, _ = invoke("ApiFunction", event("api/list-failed-actions"))
    preview, _ = invoke("ApiFunction", event("api/preview-cron"))

    assert got["statusCode"] == 200
    assert json.loads(got["body"])["id"] == "invoice:42:downgrade"
    assert json.loads(listed["body"]) == {"items": [], "nextCursor": None}
    times = json.loads(preview["body"])["times"]
    assert [t["local"][11:] for t in times] == ["09:00:00+08:00"] * 3
