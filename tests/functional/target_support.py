"""The user's side of the AWS action types in the emulated account: targets to create, and what
they received, read back the way their owners would (a queue's messages, a machine's runs)."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any
from unittest import mock

from moto.core.exceptions import AWSError
from moto.sns.exceptions import SNSException
from moto.sns.models import SNSBackend
from moto.sqs.exceptions import SQSException
from moto.sqs.models import SQSBackend
from moto.stepfunctions.models import StepFunctionBackend

from tests.e2e.support import Stack
from tickwork.fulfillment.base import FulfillmentRequest
from tickwork_local.stack import LocalStack
from tickwork_local.template import ACCOUNT

__all__ = ["ACCOUNT_ARN", "Targets", "fire", "throttled"]

ACCOUNT_ARN = "arn:aws:{}:us-east-1:" + ACCOUNT + ":{}"


def fire(
    stack: Stack, action: str, data: dict[str, Any], attempt: int = 1, key: str | None = None
) -> tuple[FulfillmentRequest, dict[str, Any]]:
    """One attempt of occurrence 3 of "order:7", run by the deployed stack's fulfillment."""
    registry = stack.deps.registry
    request = FulfillmentRequest(
        action_id="order:7",
        action=action,
        occurrence=3,
        scheduled_time=datetime(2026, 11, 23, 9, 0, tzinfo=UTC),
        data=registry.validate(action, data),
        idempotency_key=key or str(uuid.uuid4()),
        attempt=attempt,
    )
    return request, registry.get(action).fulfill(request)


class Targets:
    def __init__(self, local: LocalStack) -> None:
        self.local = local
        self._urls: dict[str, str] = {}

    # --- targets ----------------------------------------------------------------------------
    def queue(self, name: str) -> str:
        attributes = {"FifoQueue": "true"} if name.endswith(".fifo") else {}
        url = self.local.client("sqs").create_queue(QueueName=name, Attributes=attributes)[
            "QueueUrl"
        ]
        arn = ACCOUNT_ARN.format("sqs", name)
        self._urls[arn] = url
        return arn

    def topic(self, name: str) -> str:
        attributes = {"FifoTopic": "true"} if name.endswith(".fifo") else {}
        return str(
            self.local.client("sns").create_topic(Name=name, Attributes=attributes)["TopicArn"]
        )

    def subscribed_queue(self, topic_arn: str, name: str) -> str:
        """A queue subscribed to the topic: what the topic publishes, with its attributes."""
        queue = self.queue(name)
        self.local.client("sns").subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=queue)
        return queue

    def bus(self, name: str) -> str:
        return str(self.local.client("events").create_event_bus(Name=name)["EventBusArn"])

    def bus_rule_queue(self, bus: str, name: str) -> str:
        """A queue receiving every event on the bus but AWS's own."""
        queue = self.queue(name)
        events = self.local.client("events")
        events.put_rule(
            Name=f"{name}-rule",
            EventBusName=bus,
            EventPattern=json.dumps({"source": [{"anything-but": {"prefix": "aws."}}]}),
        )
        events.put_targets(
            Rule=f"{name}-rule", EventBusName=bus, Targets=[{"Id": "queue", "Arn": queue}]
        )
        return queue

    def function(self, name: str, handler: Callable[[dict[str, Any], Any], Any]) -> str:
        return self.local.add_function(name, handler)

    def state_machine(self, name: str) -> str:
        definition = {"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}
        return str(
            self.local.client("stepfunctions").create_state_machine(
                name=name,
                definition=json.dumps(definition),
                roleArn=f"arn:aws:iam::{ACCOUNT}:role/{name}",
            )["stateMachineArn"]
        )

    # --- what they received -----------------------------------------------------------------
    def received(self, queue_arn: str, wait: float = 2.0) -> list[dict[str, Any]]:
        """Every message the queue holds (read until it has been empty for a moment)."""
        sqs = self.local.client("sqs")
        messages: list[dict[str, Any]] = []
        while True:
            batch = sqs.receive_message(
                QueueUrl=self._urls[queue_arn],
                MaxNumberOfMessages=10,
                WaitTimeSeconds=0 if messages else int(wait),
                AttributeNames=["All"],
                MessageAttributeNames=["All"],
                VisibilityTimeout=60,
            ).get("Messages", [])
            if not batch:
                return messages
            messages.extend(batch)

    def executions(self, machine_arn: str) -> list[dict[str, Any]]:
        sfn = self.local.client("stepfunctions")
        return list(sfn.list_executions(stateMachineArn=machine_arn)["executions"])

    def execution_input(self, execution_arn: str) -> str:
        sfn = self.local.client("stepfunctions")
        return str(sfn.describe_execution(executionArn=execution_arn)["input"])

    @contextmanager
    def assumed_roles(self) -> Iterator[list[str]]:
        """Inside: the role ARNs the stack assumes through STS, in order."""
        import boto3

        roles: list[str] = []

        def record(params: dict[str, Any], **_: Any) -> None:
            roles.append(params["RoleArn"])

        events = boto3._get_default_session().events
        events.register("before-parameter-build.sts.AssumeRole", record, unique_id="roles")
        try:
            yield roles
        finally:
            events.unregister("before-parameter-build.sts.AssumeRole", unique_id="roles")


class _StatesThrottled(AWSError):
    """Step Functions' throttling refusal, made as the other services' are: (code, message)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message, code)


# The emulated service call of each action type, and the code its service throttles with.
_CALLS: dict[str, tuple[type, str, type[Exception], str]] = {
    "SQS_MESSAGE": (SQSBackend, "send_message", SQSException, "RequestThrottled"),
    "SNS_MESSAGE": (SNSBackend, "publish", SNSException, "ThrottledException"),
    "STEP_FUNCTIONS_EXECUTION": (
        StepFunctionBackend,
        "start_execution",
        _StatesThrottled,
        "ThrottlingException",
    ),
}


@contextmanager
def throttled(action: str, times: int, name: str) -> Iterator[list[str]]:
    """Inside: the emulated service refuses the first ``times`` calls of the action type to the
    resource ``name`` (a queue's, a topic's or a state machine's) with its throttling error, as
    AWS does under load, then serves again; calls to anything else pass. Yields the refusals
    made."""
    owner, method, exception, code = _CALLS[action]
    original = getattr(owner, method)
    refused: list[str] = []
    lock = threading.Lock()

    def aimed(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        named = [v for v in (*args, *kwargs.values()) if isinstance(v, str)]
        return any(v == name or v.endswith(f":{name}") for v in named)

    def call(*args: Any, **kwargs: Any) -> Any:
        with lock:
            refuse = len(refused) < times and aimed(args, kwargs)
            if refuse:
                refused.append(code)
        if refuse:
            raise exception(code, "Rate exceeded")
        return original(*args, **kwargs)

    with mock.patch.object(owner, method, call):
        yield refused
