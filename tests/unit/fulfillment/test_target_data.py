"""GIVEN an AWS action type's data WHEN an action is created THEN its target is checked before
anything is written: the ARN's shape and service, the stack's partition and region, the sizes
the service takes, and whether the stack may reach it (allow-list, or a roleArn under the
stack's role path) — each refusal naming the field and the fix."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.fulfillment.registry_support import builtin_registry
from tickwork.config import Settings
from tickwork.domain.errors import InvalidActionData, ValidationFailed
from tickwork.fulfillment.access import check_access

ACCOUNT = "123456789012"
QUEUE = f"arn:aws:sqs:us-east-1:{ACCOUNT}:orders-due"
REGISTRY = builtin_registry()
SETTINGS = Settings(
    table_name="t",
    event_bus_name="b",
    state_machine_arn=f"arn:aws:states:us-east-1:{ACCOUNT}:stateMachine:tickwork-fire",
    target_arns={"sqs": (QUEUE, f"arn:aws:sqs:us-east-1:{ACCOUNT}:reports-*")},
)

GOOD = {
    "SQS_MESSAGE": {"queueArn": QUEUE, "messageBody": {"n": 1}},
    "SNS_MESSAGE": {"topicArn": f"arn:aws:sns:us-east-1:{ACCOUNT}:news", "message": "hi"},
    "EVENTBRIDGE_EVENT": {
        "eventBusArn": f"arn:aws:events:us-east-1:{ACCOUNT}:event-bus/partners",
        "detailType": "Order Due",
    },
    "LAMBDA_INVOKE": {"functionArn": f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:close:live"},
    "STEP_FUNCTIONS_EXECUTION": {
        "stateMachineArn": f"arn:aws:states:us-east-1:{ACCOUNT}:stateMachine:flow"
    },
}
ARN_FIELD = {
    "SQS_MESSAGE": "queueArn",
    "SNS_MESSAGE": "topicArn",
    "EVENTBRIDGE_EVENT": "eventBusArn",
    "LAMBDA_INVOKE": "functionArn",
    "STEP_FUNCTIONS_EXECUTION": "stateMachineArn",
}


def _refusal(action: str, data: dict[str, Any]) -> tuple[str, str, str]:
    with pytest.raises(InvalidActionData) as refused:
        REGISTRY.validate(action, data)
    (problem,) = refused.value.problems
    return problem.field, problem.problem, problem.fix


@pytest.mark.parametrize("action", sorted(GOOD))
def test_each_type_accepts_its_documented_data(action: str) -> None:
    assert REGISTRY.validate(action, GOOD[action]) is not None


@pytest.mark.parametrize("action", sorted(GOOD))
@pytest.mark.parametrize(
    "arn",
    [
        "orders-due",  # a name, not an ARN
        "arn:aws:sqs:us-east-1:1234:orders",  # the account is not 12 digits
        "arn:aws:sqs:useast1:123456789012:orders",  # no region
        "arn:aws:iam::123456789012:role/x",  # another service (and no region)
    ],
)
def test_an_arn_of_the_wrong_shape_or_service_names_the_field(action: str, arn: str) -> None:
    field, problem, fix = _refusal(action, {**GOOD[action], ARN_FIELD[action]: arn})
    assert field == f"data.{ARN_FIELD[action]}"
    assert "ARN" in problem or "arn" in problem
    assert "arn:aws:" in fix  # an example of the right form


def test_a_queue_arn_of_another_service_says_which() -> None:
    topic = f"arn:aws:sns:us-east-1:{ACCOUNT}:news"
    field, problem, _ = _refusal("SQS_MESSAGE", {**GOOD["SQS_MESSAGE"], "queueArn": topic})
    assert field == "data.queueArn" and "sns, not sqs" in problem


@pytest.mark.parametrize(
    ("action", "field", "value"),
    [
        ("SQS_MESSAGE", "messageBody", "x" * (256 * 1024 + 1)),
        ("SNS_MESSAGE", "message", {"blob": "x" * (256 * 1024)}),
        ("EVENTBRIDGE_EVENT", "detail", {"blob": "x" * (256 * 1024)}),
        ("LAMBDA_INVOKE", "payload", {"blob": "x" * (256 * 1024)}),
        ("STEP_FUNCTIONS_EXECUTION", "input", {"blob": "x" * (256 * 1024)}),
    ],
)
def test_what_is_sent_must_fit_the_services_size_limit(action: str, field: str, value: Any) -> None:
    refused_field, problem, fix = _refusal(action, {**GOOD[action], field: value})
    assert refused_field == f"data.{field}"
    assert "bytes" in problem and "smaller" in fix


@pytest.mark.parametrize(
    ("action", "field", "value"),
    [
        ("EVENTBRIDGE_EVENT", "detail", {"tickwork": 1}),
        ("LAMBDA_INVOKE", "payload", {"tickwork": 1}),
        ("STEP_FUNCTIONS_EXECUTION", "input", {"tickwork": 1}),
        ("SQS_MESSAGE", "messageAttributes", {"tickwork-idempotency-key": "mine"}),
        ("SNS_MESSAGE", "messageAttributes", {"tickwork-fire": "mine"}),
    ],
)
def test_the_fires_identity_member_is_tickworks_own(action: str, field: str, value: Any) -> None:
    refused_field, problem, _ = _refusal(action, {**GOOD[action], field: value})
    assert refused_field == f"data.{field}" and "tickwork" in problem


@pytest.mark.parametrize(
    ("action", "field"),
    [
        ("EVENTBRIDGE_EVENT", "detail"),
        ("LAMBDA_INVOKE", "payload"),
        ("STEP_FUNCTIONS_EXECUTION", "input"),
    ],
)
@pytest.mark.parametrize("value", [[1, 2], "due", 7, None])
def test_what_carries_the_identity_member_must_be_an_object(
    action: str, field: str, value: Any
) -> None:
    """The fire's identity rides in the object sent; anything else is refused at creation, with
    the fix (wrap it), never sent without the identity."""
    refused_field, problem, fix = _refusal(action, {**GOOD[action], field: value})
    assert refused_field == f"data.{field}"
    assert "JSON object" in problem and "'tickwork'" in problem
    assert "wrap" in fix


def _attributes(count: int) -> dict[str, str]:
    return {f"mine-{n}": str(n) for n in range(count)}


@pytest.mark.parametrize("action", ["SQS_MESSAGE", "SNS_MESSAGE"])
def test_a_new_action_sets_at_most_6_message_attributes_naming_the_field_and_the_fix(
    action: str,
) -> None:
    """SQS and SNS take 10 attributes on a message; tickwork sends 4 of its own."""
    assert REGISTRY.validate(action, {**GOOD[action], "messageAttributes": _attributes(6)})
    field, problem, fix = _refusal(action, {**GOOD[action], "messageAttributes": _attributes(7)})
    assert field == "data.messageAttributes"
    assert problem.startswith("has 7 message attributes, more than the 6 an action may set")
    assert "tickwork-fire" in problem and "10" in problem
    assert "at most 6" in fix and "message body" in fix


@pytest.mark.parametrize("action", ["SQS_MESSAGE", "SNS_MESSAGE"])
def test_an_action_stored_with_7_message_attributes_is_still_valid_at_its_fire(action: str) -> None:
    """Taken when tickwork sent 3 of its own, its record is read at each fire: it still fires
    (without tickwork-fire); 8 were never allowed."""
    seven = {**GOOD[action], "messageAttributes": _attributes(7)}
    assert REGISTRY.validate(action, seven, stored=True)
    eight = {**GOOD[action], "messageAttributes": _attributes(8)}
    with pytest.raises(InvalidActionData) as refused:
        REGISTRY.validate(action, eight, stored=True)
    assert refused.value.problems[0].field == "data.messageAttributes"


def test_eventbridge_refuses_a_source_of_aws() -> None:
    data = {**GOOD["EVENTBRIDGE_EVENT"], "source": "aws.s3"}
    assert _refusal("EVENTBRIDGE_EVENT", data)[0] == "data.source"


def test_unknown_fields_are_refused_by_name() -> None:
    field, _, _ = _refusal("SQS_MESSAGE", {**GOOD["SQS_MESSAGE"], "queueUrl": "https://x"})
    assert field == "data.queueUrl"


# --- may the stack reach it -----------------------------------------------------------------


def _access(action: str, data: dict[str, Any], role: str | None = None) -> None:
    check_access(REGISTRY.validate(action, data), role, SETTINGS)


def test_a_target_on_the_allow_list_or_matching_a_pattern_is_accepted() -> None:
    _access("SQS_MESSAGE", GOOD["SQS_MESSAGE"])
    reports = f"arn:aws:sqs:us-east-1:{ACCOUNT}:reports-daily"
    _access("SQS_MESSAGE", {**GOOD["SQS_MESSAGE"], "queueArn": reports})


def test_a_target_off_the_allow_list_names_the_parameter_to_add_it_to() -> None:
    other = f"arn:aws:sqs:us-east-1:{ACCOUNT}:payroll"
    with pytest.raises(ValidationFailed) as refused:
        _access("SQS_MESSAGE", {**GOOD["SQS_MESSAGE"], "queueArn": other})
    (problem,) = refused.value.problems
    assert problem.field == "data.queueArn"
    assert "SqsTargetArns" in problem.fix and "roleArn" in problem.fix


def test_a_role_under_the_stacks_path_reaches_any_target_of_the_type() -> None:
    other = f"arn:aws:sqs:us-east-1:{ACCOUNT}:payroll"
    role = f"arn:aws:iam::{ACCOUNT}:role/tickwork-targets/payroll-sender"
    _access("SQS_MESSAGE", {**GOOD["SQS_MESSAGE"], "queueArn": other}, role)


@pytest.mark.parametrize(
    ("role", "said"),
    [
        (f"arn:aws:iam::{ACCOUNT}:role/admin", "not under /tickwork-targets/"),
        (f"arn:aws:iam::{ACCOUNT}:user/tickwork-targets/x", "not an IAM role ARN"),
        ("payroll-sender", "not an IAM role ARN"),
    ],
)
def test_a_role_the_stack_may_not_assume_is_refused(role: str, said: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        _access("SQS_MESSAGE", GOOD["SQS_MESSAGE"], role)
    (problem,) = refused.value.problems
    assert problem.field == "roleArn" and said in problem.problem
    assert "/tickwork-targets/" in problem.fix


def test_a_role_on_an_action_type_without_a_target_is_refused() -> None:
    role = f"arn:aws:iam::{ACCOUNT}:role/tickwork-targets/x"
    with pytest.raises(ValidationFailed) as refused:
        check_access(REGISTRY.validate("TICK", {}), role, SETTINGS)
    assert refused.value.problems[0].field == "roleArn"


@pytest.mark.parametrize(
    "arn",
    [
        f"arn:aws:sqs:eu-west-1:{ACCOUNT}:orders-due",
        f"arn:aws-cn:sqs:cn-north-1:{ACCOUNT}:orders-due",
    ],
)
def test_a_target_outside_the_stacks_partition_and_region_is_refused(arn: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        _access("SQS_MESSAGE", {**GOOD["SQS_MESSAGE"], "queueArn": arn})
    (problem,) = refused.value.problems
    assert problem.field == "data.queueArn"
    assert "us-east-1" in problem.problem and "us-east-1" in problem.fix


def test_the_identity_member_says_which_fire_and_attempt_and_why() -> None:
    """An event's detail, a function's payload and an execution's input carry the fire: a
    backfilled or caught-up one its own past scheduled time, and each retry its attempt."""
    from datetime import UTC, datetime

    from pydantic import BaseModel

    class _Empty(BaseModel):
        pass

    from tickwork.fulfillment.base import FulfillmentRequest
    from tickwork.fulfillment.targets import with_identity

    past = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    request = FulfillmentRequest(
        action_id="report",
        action="LAMBDA_INVOKE",
        occurrence=0,
        scheduled_time=past,
        data=_Empty(),
        idempotency_key="k-1",
        attempt=3,
        trigger="BACKFILL",
    )
    assert with_identity({"n": 1}, request) == {
        "n": 1,
        "tickwork": {
            "id": "report",
            "occurrence": 0,
            "scheduledTime": "2026-01-05T09:00:00.000Z",
            "idempotencyKey": "k-1",
            "attempt": 3,
            "trigger": "BACKFILL",
        },
    }


@pytest.mark.parametrize("action", ["SQS_MESSAGE", "SNS_MESSAGE"])
def test_a_message_says_which_fire_and_attempt_in_tickwork_fire_when_it_has_room(
    action: str,
) -> None:
    """Up to 6 of the action's own, every message carries tickwork-fire (the scheduled time, a
    backfilled fire's own past one, the attempt, the trigger); an action stored with 7 sends
    them all and tickwork's identity, without tickwork-fire: never more than 10."""
    import json
    from datetime import UTC, datetime

    from tickwork.fulfillment.base import FulfillmentRequest
    from tickwork.fulfillment.messages import message_fields

    def sent(count: int) -> dict[str, str]:
        data = {**GOOD[action], "messageAttributes": _attributes(count)}
        request = FulfillmentRequest(
            action_id="report",
            action=action,
            occurrence=0,
            scheduled_time=datetime(2026, 1, 5, 9, 0, tzinfo=UTC),
            data=REGISTRY.validate(action, data, stored=True),
            idempotency_key="k-1",
            attempt=2,
            trigger="BACKFILL",
        )
        fields = message_fields("hi", _attributes(count), request, "Message")
        attributes = fields["MessageAttributes"]
        assert all(a["DataType"] == "String" for a in attributes.values())
        return {name: a["StringValue"] for name, a in attributes.items()}

    six = sent(6)
    assert len(six) == 10
    assert {k: v for k, v in six.items() if k.startswith("tickwork-")} == {
        "tickwork-idempotency-key": "k-1",
        "tickwork-action-id": "report",
        "tickwork-occurrence": "0",
        "tickwork-fire": '{"scheduledTime":"2026-01-05T09:00:00.000Z","attempt":2,'
        '"trigger":"BACKFILL"}',
    }
    assert json.loads(six["tickwork-fire"])["attempt"] == 2
    seven = sent(7)
    assert len(seven) == 10 and "tickwork-fire" not in seven
    assert _attributes(7).items() <= seven.items()
    assert seven["tickwork-occurrence"] == "0" and seven["tickwork-idempotency-key"] == "k-1"
