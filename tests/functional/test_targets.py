"""GIVEN each AWS action type's fulfillment, with the deployed stack's clients, against the
emulated services WHEN a fire runs THEN the target receives one delivery carrying the fire's
identity, its id comes back in the result, and a refusal is classified: throttling and 5xx
retried (transient), a missing target or a denied call final (permanent), with the service's
own words.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.e2e.support import Stack
from tests.functional.target_support import ACCOUNT_ARN, Targets, fire, throttled
from tickwork.domain.errors import PermanentFulfillmentError, TransientFulfillmentError
from tickwork.fulfillment.base import FulfillmentRequest


@pytest.fixture
def targets(stack: Stack) -> Iterator[Targets]:
    yield Targets(stack.local)


def test_sqs_message_carries_the_body_and_the_fires_identity(
    stack: Stack, targets: Targets
) -> None:
    arn = targets.queue("orders-due")
    data = {"queueArn": arn, "messageBody": {"order": 7}, "messageAttributes": {"tenant": "acme"}}

    request, result = fire(stack, "SQS_MESSAGE", data)

    (message,) = targets.received(arn)
    assert message["MessageId"] == result["messageId"]
    assert json.loads(message["Body"]) == {"order": 7}
    attributes = {k: v["StringValue"] for k, v in message["MessageAttributes"].items()}
    assert attributes == {
        "tenant": "acme",
        "tickwork-idempotency-key": request.idempotency_key,
        "tickwork-action-id": "order:7",
        "tickwork-occurrence": "3",
    }


def test_a_fifo_queue_takes_one_message_from_two_attempts_of_onefire(
    stack: Stack, targets: Targets
) -> None:
    arn = targets.queue("orders-due.fifo")
    data = {"queueArn": arn, "messageBody": "due"}
    key = str(uuid.uuid4())

    fire(stack, "SQS_MESSAGE", data, attempt=1, key=key)
    fire(stack, "SQS_MESSAGE", data, attempt=2, key=key)  # the first one's answer was lost

    (message,) = targets.received(arn)
    assert message["Attributes"]["MessageGroupId"] == "order:7"  # the action's id by default
    assert message["Attributes"]["MessageDeduplicationId"] == key


def test_sns_message_reaches_the_topics_subscribers(stack: Stack, targets: Targets) -> None:
    topic = targets.topic("order-news")
    queue = targets.subscribed_queue(topic, "news-reader")

    request, result = fire(
        stack, "SNS_MESSAGE", {"topicArn": topic, "message": {"shipped": 7}, "subject": "Shipped"}
    )

    (delivered,) = targets.received(queue)
    envelope = json.loads(delivered["Body"])
    assert envelope["MessageId"] == result["messageId"]
    assert json.loads(envelope["Message"]) == {"shipped": 7}
    assert envelope["Subject"] == "Shipped"
    assert envelope["MessageAttributes"]["tickwork-idempotency-key"]["Value"] == (
        request.idempotency_key
    )


def test_eventbridge_event_lands_on_the_named_bus_with_the_fires_identity(
    stack: Stack, targets: Targets
) -> None:
    bus = targets.bus("partners")
    queue = targets.bus_rule_queue("partners", "partner-feed")

    request, result = fire(
        stack,
        "EVENTBRIDGE_EVENT",
        {"eventBusArn": bus, "detailType": "Order Due", "source": "app.orders", "detail": {"n": 7}},
    )

    (delivered,) = targets.received(queue)
    event = json.loads(delivered["Body"])
    assert event["id"] == result["eventId"]
    assert (event["detail-type"], event["source"]) == ("Order Due", "app.orders")
    assert event["detail"]["n"] == 7
    assert event["detail"]["tickwork"]["idempotencyKey"] == request.idempotency_key
    assert event["detail"]["tickwork"]["occurrence"] == 3


def test_lambda_request_response_returns_the_functions_answer(
    stack: Stack, targets: Targets
) -> None:
    seen: list[dict[str, Any]] = []
    arn = targets.function("close-order", lambda event, _: seen.append(event) or {"closed": 7})

    data = {"functionArn": arn, "payload": {"n": 7}, "invocationType": "RequestResponse"}
    request, result = fire(stack, "LAMBDA_INVOKE", data)

    assert [e["n"] for e in seen] == [7]
    assert seen[0]["tickwork"]["idempotencyKey"] == request.idempotency_key
    assert result["statusCode"] == 200
    assert json.loads(result["response"]) == {"closed": 7}


def test_lambda_is_invoked_asynchronously_by_default(stack: Stack, targets: Targets) -> None:
    """As EventBridge Scheduler's Lambda target: an Event invocation, accepted with 202."""
    seen: list[dict[str, Any]] = []
    arn = targets.function("close-order", lambda event, _: seen.append(event))

    _, result = fire(stack, "LAMBDA_INVOKE", {"functionArn": arn, "payload": {"n": 7}})

    assert result["statusCode"] == 202 and "response" not in result
    assert [e["n"] for e in seen] == [7]


def test_a_functions_own_error_is_final_and_named(stack: Stack, targets: Targets) -> None:
    def refuses(event: dict[str, Any], _: Any) -> None:
        raise ValueError("order 7 is already closed")

    arn = targets.function("close-order", refuses)

    data = {"functionArn": arn, "invocationType": "RequestResponse"}
    with pytest.raises(PermanentFulfillmentError, match="ValueError: order 7 is already closed"):
        fire(stack, "LAMBDA_INVOKE", data)


def test_a_function_that_reports_throttling_is_retried(stack: Stack, targets: Targets) -> None:
    class TooManyRequestsException(Exception):
        pass

    def busy(event: dict[str, Any], _: Any) -> None:
        raise TooManyRequestsException("downstream is busy")

    arn = targets.function("close-order", busy)

    data = {"functionArn": arn, "invocationType": "RequestResponse"}
    with pytest.raises(TransientFulfillmentError, match="TooManyRequestsException"):
        fire(stack, "LAMBDA_INVOKE", data)


def test_step_functions_execution_is_named_by_the_fire_and_started_once(
    stack: Stack, targets: Targets
) -> None:
    machine = targets.state_machine("order-workflow")
    key = str(uuid.uuid4())
    data = {"stateMachineArn": machine, "input": {"order": 7}}

    _, first = fire(stack, "STEP_FUNCTIONS_EXECUTION", data, attempt=1, key=key)
    _, again = fire(stack, "STEP_FUNCTIONS_EXECUTION", data, attempt=2, key=key)

    executions = targets.executions(machine)
    assert [e["name"] for e in executions] == [key]
    assert first["executionArn"] == again["executionArn"] == executions[0]["executionArn"]
    assert again["alreadyStarted"] is True
    started = json.loads(targets.execution_input(first["executionArn"]))
    assert started["order"] == 7 and started["tickwork"]["idempotencyKey"] == key


MISSING = {
    "SQS_MESSAGE": ({"queueArn": ACCOUNT_ARN.format("sqs", "gone"), "messageBody": "x"}, "queue"),
    "SNS_MESSAGE": ({"topicArn": ACCOUNT_ARN.format("sns", "gone"), "message": "x"}, "NotFound"),
    "EVENTBRIDGE_EVENT": (
        {"eventBusArn": ACCOUNT_ARN.format("events", "event-bus/gone"), "detailType": "X"},
        "gone",
    ),
    "LAMBDA_INVOKE": ({"functionArn": ACCOUNT_ARN.format("lambda", "function:gone")}, "gone"),
    "STEP_FUNCTIONS_EXECUTION": (
        {"stateMachineArn": ACCOUNT_ARN.format("states", "stateMachine:gone")},
        "gone",
    ),
}


@pytest.mark.parametrize("action", sorted(MISSING))
def test_a_target_that_does_not_exist_is_a_final_failure_in_the_services_words(
    stack: Stack, action: str
) -> None:
    data, named = MISSING[action]
    with pytest.raises(PermanentFulfillmentError) as failure:
        fire(stack, action, data)
    assert named in str(failure.value), failure.value


@pytest.mark.parametrize(
    ("action", "make"),
    [
        ("SQS_MESSAGE", lambda t: {"queueArn": t.queue("busy"), "messageBody": "x"}),
        ("SNS_MESSAGE", lambda t: {"topicArn": t.topic("busy"), "message": "x"}),
    ],
)
def test_throttling_is_a_transient_failure_then_the_next_attempt_delivers(
    stack: Stack, targets: Targets, action: str, make: Any
) -> None:
    data = make(targets)
    refusal = throttled(action, times=1, name="busy")
    with refusal, pytest.raises(TransientFulfillmentError, match="Throttl"):
        fire(stack, action, data)
    _, result = fire(stack, action, data, attempt=2)
    assert result["messageId"]


def test_an_action_with_a_role_runs_its_target_under_that_role(
    stack: Stack, targets: Targets
) -> None:
    arn = targets.queue("orders-due")
    role = f"arn:aws:iam::{ACCOUNT_ARN.split(':')[4]}:role/tickwork-targets/orders-sender"
    registry = stack.deps.registry
    request = FulfillmentRequest(
        action_id="order:7",
        action="SQS_MESSAGE",
        occurrence=1,
        scheduled_time=datetime(2026, 11, 23, 9, 0, tzinfo=UTC),
        data=registry.validate("SQS_MESSAGE", {"queueArn": arn, "messageBody": "due"}),
        idempotency_key=str(uuid.uuid4()),
        role_arn=role,
    )

    with targets.assumed_roles() as assumed:
        registry.get("SQS_MESSAGE").fulfill(request)

    assert assumed == [role]
    assert [m["Body"] for m in targets.received(arn)] == ["due"]
