"""GIVEN the stack from template.yaml and the user's targets in the emulated account WHEN an
action of each AWS type fires through the real state machine THEN each target receives one
delivery; a target that does not exist fails the fire once, finally, without retries; and a
throttled one is retried with backoff, then delivered once."""

from __future__ import annotations

import json
from typing import Any

from moto.ses.models import ses_backends

from tests.conftest import load_event
from tests.e2e.support import Stack, in_seconds
from tests.functional.target_support import ACCOUNT_ARN, Targets, throttled
from tickwork.domain.action import Status
from tickwork_local.template import ACCOUNT

TYPES = [
    "sqs-message",
    "sqs-message-fifo",
    "sqs-message-with-role",
    "sns-message",
    "eventbridge-event",
    "lambda-invoke",
    "step-functions-execution",
    "notification-email",
    "notification-push",
]


def _detail(name: str) -> dict[str, Any]:
    """The events/start file's detail, due in two seconds."""
    detail = dict(load_event(f"start/{name}")["detail"])
    detail.pop("delay", None)
    return {**detail, "at": in_seconds(2)}


def test_each_action_type_delivers_once_through_the_state_machine(stack: Stack) -> None:
    # GIVEN the targets the events/start files name, as their owners would create them
    targets = Targets(stack.local)
    orders = targets.queue("orders-due")
    fifo = targets.queue("orders-due.fifo")
    news = targets.subscribed_queue(targets.topic("order-news"), "news-reader")
    targets.bus("partners")
    partners = targets.bus_rule_queue("partners", "partner-feed")
    invoked: list[dict[str, Any]] = []
    targets.function("close-order", lambda event, _: invoked.append(event) or {"closed": True})
    workflow = targets.state_machine("order-workflow")
    push = targets.subscribed_queue(stack.local.outputs["PushTopicArn"], "mobile-backend")
    stack.local.client("ses").create_template(
        Template={"TemplateName": "ORDER_READY", "SubjectPart": "Ready", "TextPart": "{{name}}"}
    )
    stack.local.client("ssm").put_parameter(
        Name="/tickwork/templates/ORDER_READY", Value="{{name}}, it is ready", Type="String"
    )

    # WHEN one action of each fires
    details = {name: _detail(name) for name in TYPES}
    for detail in details.values():
        stack.start(detail)
    for detail in details.values():
        stack.wait_record(detail["id"], lambda a: a.status == Status.COMPLETED, timeout=30)
    stack.local.wait_idle()

    # THEN each target holds one delivery, and each tick carries the delivery's id
    ticks = {d["id"]: stack.ticks_for(d["id"], count=1, timeout=2) for d in details.values()}
    assert all(len(t) == 1 and t[0]["attempts"] == 1 for t in ticks.values()), ticks
    bodies = sorted(m["Body"] for m in targets.received(orders))
    assert bodies == sorted([json.dumps({"order": 7, "event": "payment-due"}), "order 7 is due"])
    (fifo_message,) = targets.received(fifo)
    assert fifo_message["Attributes"]["MessageGroupId"] == "order-7"
    (published,) = targets.received(news)
    assert json.loads(published["Body"])["MessageId"] == _result(ticks, "sns-message")["messageId"]
    (event,) = targets.received(partners)
    assert json.loads(event["Body"])["id"] == _result(ticks, "eventbridge-event")["eventId"]
    assert [e["order"] for e in invoked] == [7]
    (execution,) = targets.executions(workflow)
    assert execution["executionArn"] == _result(ticks, "step-functions-execution")["executionArn"]
    (email,) = ses_backends[ACCOUNT]["us-east-1"].sent_messages
    assert (email.template, email.destinations) == (
        "ORDER_READY",
        {"ToAddresses": ["ada@example.com"]},
    )
    (pushed,) = targets.received(push)
    assert json.loads(pushed["Body"])["Message"] == "Ada, it is ready"


def _result(ticks: dict[str, list[dict[str, Any]]], name: str) -> dict[str, Any]:
    result: dict[str, Any] = ticks[_detail(name)["id"]][0]["result"]
    return result


def test_a_target_that_does_not_exist_fails_the_fire_once_without_retries(stack: Stack) -> None:
    # GIVEN actions whose targets were never created (deleted since, say)
    missing = {
        "gone:queue": ("SQS_MESSAGE", {"queueArn": ACCOUNT_ARN.format("sqs", "gone"),
                                       "messageBody": "x"}),
        "gone:function": ("LAMBDA_INVOKE",
                          {"functionArn": ACCOUNT_ARN.format("lambda", "function:gone")}),
        "gone:machine": ("STEP_FUNCTIONS_EXECUTION",
                         {"stateMachineArn": ACCOUNT_ARN.format("states", "stateMachine:gone")}),
    }  # fmt: skip
    for action_id, (kind, data) in missing.items():
        stack.start({"id": action_id, "at": in_seconds(2), "action": kind, "data": data})

    # WHEN they fire
    failed = {
        action_id: stack.wait_record(action_id, lambda a: a.status == Status.FAILED, timeout=20)
        for action_id in missing
    }
    stack.local.wait_idle()

    # THEN each failed at its first attempt, with the service's own words, and emitted no tick
    for action_id, action in failed.items():
        assert action.history[-1].attempts == 1, action
        assert "PermanentFulfillmentError" in (action.last_error or ""), action.last_error
        assert stack.ticks_for(action_id) == []
    assert "NonExistentQueue" in (failed["gone:queue"].last_error or "")
    assert "gone" in (failed["gone:function"].last_error or "")


def test_a_throttled_target_is_retried_then_delivered_once(stack: Stack) -> None:
    # GIVEN a queue whose service throttles the first two sends
    targets = Targets(stack.local)
    queue = targets.queue("busy")
    data = {"queueArn": queue, "messageBody": "due"}

    with throttled("SQS_MESSAGE", times=2, name="busy") as refused:
        # WHEN the action fires
        stack.start({"id": "busy:1", "at": in_seconds(2), "action": "SQS_MESSAGE", "data": data})
        action = stack.wait_record("busy:1", lambda a: a.status == Status.COMPLETED, timeout=20)
        stack.local.wait_idle()

    # THEN the state machine retried it twice and the queue holds one message
    assert len(refused) == 2
    (tick,) = stack.ticks_for("busy:1", count=1, timeout=2)
    assert tick["attempts"] == 3
    assert [m["Body"] for m in targets.received(queue)] == ["due"]
    assert action.history[-1].attempts == 3
