"""GIVEN each AWS action type's fulfillment, with the deployed stack's clients, against the
emulated services WHEN a fire runs THEN the target receives one delivery carrying the fire's
identity, its id comes back in the result, and a refusal is classified: throttling and 5xx
retried (transient), a missing target or a denied call final (permanent), with the service's
own words.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.conftest import load_event
from tests.e2e.support import Stack
from tests.functional.target_support import ACCOUNT_ARN, Targets, fire, throttled
from tickwork.domain.errors import PermanentFulfillmentError, TransientFulfillmentError
from tickwork.fulfillment.base import FulfillmentRequest

# tickwork-fire of occurrence 3's first attempt (target_support.fire): its time, attempt, trigger
FIRE_ATTRIBUTE = '{"scheduledTime":"2026-11-23T09:00:00.000Z","attempt":1,"trigger":"SCHEDULED"}'


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
        "tickwork-fire": FIRE_ATTRIBUTE,
    }
    (kept,) = stack.local.outbox.messages("queue")  # the local stack's outbox keeps them too
    assert kept["attributes"] == attributes and kept["fire"]["trigger"] == "SCHEDULED"


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
    attributes = {k: v["Value"] for k, v in envelope["MessageAttributes"].items()}
    assert attributes == {
        "tickwork-idempotency-key": request.idempotency_key,
        "tickwork-action-id": "order:7",
        "tickwork-occurrence": "3",
        "tickwork-fire": FIRE_ATTRIBUTE,
    }


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
    assert event["detail"] == {"n": 7, "tickwork": _identity(request, attempt=1)}


def test_an_events_retried_attempt_says_it_is_2(stack: Stack, targets: Targets) -> None:
    bus = targets.bus("partners")
    queue = targets.bus_rule_queue("partners", "partner-feed")
    data = {"eventBusArn": bus, "detailType": "Order Due", "detail": {"n": 7}}

    request, _ = fire(stack, "EVENTBRIDGE_EVENT", data, attempt=2)

    (delivered,) = targets.received(queue)
    assert json.loads(delivered["Body"])["detail"]["tickwork"] == _identity(request, attempt=2)


def test_lambda_request_response_returns_the_functions_answer(
    stack: Stack, targets: Targets
) -> None:
    seen: list[dict[str, Any]] = []
    arn = targets.function("close-order", lambda event, _: seen.append(event) or {"closed": 7})

    data = {"functionArn": arn, "payload": {"n": 7}, "invocationType": "RequestResponse"}
    request, result = fire(stack, "LAMBDA_INVOKE", data)

    assert seen == [{"n": 7, "tickwork": _identity(request, attempt=1)}]
    assert result["statusCode"] == 200
    assert json.loads(result["response"]) == {"closed": 7}


def test_lambda_is_invoked_asynchronously_by_default(stack: Stack, targets: Targets) -> None:
    """As EventBridge Scheduler's Lambda target: an Event invocation, accepted with 202; its
    payload says which fire and which attempt (a retry's 2)."""
    seen: list[dict[str, Any]] = []
    arn = targets.function("close-order", lambda event, _: seen.append(event))

    data = {"functionArn": arn, "payload": {"n": 7}}
    request, result = fire(stack, "LAMBDA_INVOKE", data, attempt=2)

    assert result["statusCode"] == 202 and "response" not in result
    assert seen == [{"n": 7, "tickwork": _identity(request, attempt=2)}]


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

    request, first = fire(stack, "STEP_FUNCTIONS_EXECUTION", data, attempt=1, key=key)
    _, again = fire(stack, "STEP_FUNCTIONS_EXECUTION", data, attempt=2, key=key)

    executions = targets.executions(machine)
    assert [e["name"] for e in executions] == [key]
    assert first["executionArn"] == again["executionArn"] == executions[0]["executionArn"]
    assert again["alreadyStarted"] is True
    started = json.loads(targets.execution_input(first["executionArn"]))
    # the execution is the first attempt's: its input names that attempt
    assert started == {"order": 7, "tickwork": _identity(request, attempt=1)}


def test_a_start_throttled_then_retried_says_attempt_2_in_the_executions_input(
    stack: Stack, targets: Targets
) -> None:
    """An execution's name is the fire's key and nothing else (a retry must find it taken);
    which attempt started it is in its input."""
    machine = targets.state_machine("busy")
    key = str(uuid.uuid4())
    data = {"stateMachineArn": machine, "input": {"order": 7}}
    with (
        throttled("STEP_FUNCTIONS_EXECUTION", times=1, name="busy"),
        pytest.raises(TransientFulfillmentError, match="Throttl"),
    ):
        fire(stack, "STEP_FUNCTIONS_EXECUTION", data, key=key)

    request, started = fire(stack, "STEP_FUNCTIONS_EXECUTION", data, attempt=2, key=key)

    assert [e["name"] for e in targets.executions(machine)] == [key]
    execution_input = json.loads(targets.execution_input(started["executionArn"]))
    assert execution_input == {"order": 7, "tickwork": _identity(request, attempt=2)}


def _identity(request: FulfillmentRequest, attempt: int) -> dict[str, Any]:
    """The tickwork member of occurrence 3's attempt (target_support.fire), as a reader gets it."""
    return {
        "id": "order:7",
        "occurrence": 3,
        "scheduledTime": "2026-11-23T09:00:00.000Z",
        "idempotencyKey": request.idempotency_key,
        "attempt": attempt,
        "trigger": "SCHEDULED",
    }


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


def _sqs_target(targets: Targets) -> tuple[dict[str, Any], str]:
    arn = targets.queue("busy")
    return {"queueArn": arn, "messageBody": "x"}, arn


def _sns_target(targets: Targets) -> tuple[dict[str, Any], str]:
    topic = targets.topic("busy")
    return {"topicArn": topic, "message": "x"}, targets.subscribed_queue(topic, "busy-reader")


def _delivered_attributes(message: dict[str, Any]) -> dict[str, str]:
    """A message's attributes as its reader gets them: from the queue, or from the envelope
    of a topic's delivery to a subscribed queue."""
    if "MessageAttributes" in message:
        return {k: v["StringValue"] for k, v in message["MessageAttributes"].items()}
    envelope = json.loads(message["Body"])
    return {k: v["Value"] for k, v in envelope.get("MessageAttributes", {}).items()}


@pytest.mark.parametrize(
    ("action", "make"), [("SQS_MESSAGE", _sqs_target), ("SNS_MESSAGE", _sns_target)]
)
def test_throttling_is_a_transient_failure_then_the_next_attempt_delivers_saying_it_is_2(
    stack: Stack, targets: Targets, action: str, make: Any
) -> None:
    data, reader = make(targets)
    key = str(uuid.uuid4())
    refusal = throttled(action, times=1, name="busy")
    with refusal, pytest.raises(TransientFulfillmentError, match="Throttl"):
        fire(stack, action, data, key=key)
    _, result = fire(stack, action, data, attempt=2, key=key)
    assert result["messageId"]

    (message,) = targets.received(reader)
    attributes = _delivered_attributes(message)
    assert attributes["tickwork-idempotency-key"] == key
    assert attributes["tickwork-occurrence"] == "3"
    assert json.loads(attributes["tickwork-fire"]) == {
        "scheduledTime": "2026-11-23T09:00:00.000Z",
        "attempt": 2,
        "trigger": "SCHEDULED",
    }


@pytest.mark.parametrize(
    ("action", "make"), [("SQS_MESSAGE", _sqs_target), ("SNS_MESSAGE", _sns_target)]
)
def test_six_attributes_of_the_actions_own_and_tickworks_four_fill_a_message(
    stack: Stack, targets: Targets, action: str, make: Any
) -> None:
    """SQS and SNS take 10 attributes on a message (the emulator takes more: counted here)."""
    data, reader = make(targets)
    own = {f"mine-{n}": str(n) for n in range(6)}
    fire(stack, action, {**data, "messageAttributes": own})

    (message,) = targets.received(reader)
    attributes = _delivered_attributes(message)
    assert len(attributes) == 10
    assert own.items() <= attributes.items() and "tickwork-fire" in attributes


def test_an_action_stored_with_7_message_attributes_still_fires_without_tickwork_fire(
    stack: Stack,
    targets: Targets,
    invoke: Callable[[str, dict[str, Any]], tuple[Any, str | None]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Taken when tickwork sent 3 attributes of its own and left the action 7, its record is
    read at its fire: it fires with its 7 and tickwork's identity (10 in all), tickwork-fire left
    out. A Start with 7 now is refused, naming the field and the fix."""
    queue = targets.queue("orders-due")
    own = {f"mine-{n}": str(n) for n in range(7)}
    start = load_event("start/sqs-message")
    start["detail"] = {
        "id": "order:7:due",
        "action": "SQS_MESSAGE",
        "delay": "1s",
        "data": {"queueArn": queue, "messageBody": "due", "messageAttributes": own},
    }
    refused, _ = invoke("StartFunction", start)
    assert refused["outcome"] == "rejected"
    (problem,) = refused["problems"]
    assert problem["field"] == "data.messageAttributes"
    assert "more than the 6" in problem["problem"] and "at most 6" in problem["fix"]

    with monkeypatch.context() as older:  # the stack before tickwork-fire took the Start
        older.setattr("tickwork.fulfillment.messages.MOST_USER_ATTRIBUTES", 7)
        taken, _ = invoke("StartFunction", start)
    assert taken["outcome"] == "created"

    tick, error = invoke("FulfillFunction", _fire_of(stack, "order:7:due"))

    assert error is None and tick["outcome"] == "FIRED", tick
    (message,) = targets.received(queue)
    attributes = _delivered_attributes(message)
    assert len(attributes) == 10 and "tickwork-fire" not in attributes
    assert own.items() <= attributes.items()
    assert attributes["tickwork-idempotency-key"] == tick["idempotencyKey"]
    assert attributes["tickwork-occurrence"] == "1"


def _fire_of(stack: Stack, action_id: str) -> dict[str, Any]:
    """What the Fulfill task invokes the fulfill function with for the execution the record
    names (its input as the stack started it)."""
    arn = stack.record(action_id).execution_arn
    described = stack.local.client("stepfunctions").describe_execution(executionArn=arn)
    return {
        "input": json.loads(described["input"]),
        "executionName": described["name"],
        "executionArn": arn,
        "retryCount": 0,
    }


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
