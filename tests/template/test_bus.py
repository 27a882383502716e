"""GIVEN template.yaml WHEN its bus, rules and dead-letter queue are read THEN only the right
callers can publish, tickwork's own events never loop into a start or a stop, and undeliverable
events can reach the dead-letter queue."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from moto import mock_aws
from samtranslator.yaml_helper import yaml_parse

from tests.template.scanner import sam_expanded
from tickwork.domain.events import CONTROL, INBOUND, DetailType
from tickwork_local.stack import LocalStack
from tickwork_local.template import Template

SOURCE = {"Ref": "EventSource"}
BUS_ARN = {
    "Fn::Sub": "arn:${AWS::Partition}:events:${AWS::Region}:${AWS::AccountId}"
    ":event-bus/${AWS::StackName}"
}


@pytest.fixture(scope="module")
def template() -> Template:
    return LocalStack.from_repo().template


def _rule(template: Template, function: str, name: str | None = None) -> dict[str, Any]:
    """The function's bus rule (``name``: the one of that name, where it has more)."""
    (event,) = [
        e
        for rule, e in template.resources[function]["Properties"]["Events"].items()
        if e["Type"] == "EventBridgeRule" and (name is None or rule == name)
    ]
    return event["Properties"]


@pytest.mark.parametrize(
    ("function", "rule", "detail_types"),
    [
        ("StartFunction", "StartRule", [DetailType.START]),
        ("StartFunction", "NearMissRule", [{"anything-but": sorted(INBOUND)}]),
        ("ControlFunction", None, sorted(CONTROL)),
    ],
)
def test_start_and_control_rules_ignore_tickworks_own_source(
    template: Template, function: str, rule: str | None, detail_types: list[Any]
) -> None:
    pattern = _rule(template, function, rule)["Pattern"]
    if rule == "NearMissRule":  # every detail-type but those the stack takes
        [anything_but] = pattern["detail-type"]
        pattern = {
            **pattern,
            "detail-type": [{"anything-but": sorted(anything_but["anything-but"])}],
        }
    assert sorted(pattern["detail-type"]) == sorted(detail_types)
    assert pattern["source"] == [{"anything-but": [SOURCE]}]


def test_tick_rule_takes_only_tickworks_own_source(template: Template) -> None:
    pattern = _rule(template, "TickFunction")["Pattern"]
    assert pattern["source"] == [SOURCE]


def test_tick_rule_takes_only_the_fire_machines_events_as_its_arns_name_it(
    template: Template,
) -> None:
    """A batch records its members itself; its events are told apart by the machine their
    execution belongs to, never by a name an action id can shape. A lone fire's task records
    its fire before it puts the tick, marked ``recorded``: only the ticks of executions
    started before (put by their Emit tick state) and failure reports are left to record."""
    pattern = _rule(template, "TickFunction")["Pattern"]
    fire_executions = (
        "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:execution:"
        "${AWS::StackName}-fire:"
    )
    assert pattern["detail"] == {
        "executionArn": [{"prefix": {"Fn::Sub": fire_executions}}],
        "recorded": [{"exists": False}],
    }


def test_bus_policy_admits_only_put_events_from_this_account_or_listed_principals(
    template: Template,
) -> None:
    bus = template.resources["EventBus"]["Properties"]
    account, listed, _ = bus["Policy"]["Statement"]
    assert account == {
        "Sid": "ThisAccountPublishes",
        "Effect": "Allow",
        "Principal": {"AWS": {"Fn::Sub": "arn:${AWS::Partition}:iam::${AWS::AccountId}:root"}},
        "Action": "events:PutEvents",
        "Resource": BUS_ARN,
    }
    condition, statement, otherwise = listed["Fn::If"]
    assert condition == "HasAllowedPublishers"
    assert otherwise == {"Ref": "AWS::NoValue"}
    assert statement["Principal"] == {"AWS": {"Ref": "AllowedPublisherPrincipals"}}
    assert (statement["Effect"], statement["Action"]) == ("Allow", "events:PutEvents")
    assert statement["Resource"] == BUS_ARN
    # Another account may schedule and steer, never speak as tickwork.
    assert statement["Condition"]["ForAllValues:StringNotEquals"] == {"events:source": [SOURCE]}
    allowed = statement["Condition"]["ForAllValues:StringEquals"]["events:detail-type"]
    assert sorted(allowed) == sorted(INBOUND)


def test_only_this_stacks_roles_may_use_tickworks_source(template: Template) -> None:
    """Beyond each fire's proof, the bus itself denies tickwork's source to every principal —
    of this account too — but the roles SAM makes for this stack, all tagged with its name."""
    *_, deny = template.resources["EventBus"]["Properties"]["Policy"]["Statement"]
    assert (deny["Effect"], deny["Principal"], deny["Action"]) == (
        "Deny", "*", "events:PutEvents"
    )  # fmt: skip
    assert deny["Resource"] == BUS_ARN
    assert deny["Condition"] == {
        "ForAnyValue:StringEquals": {"events:source": [SOURCE]},
        "StringNotEquals": {"aws:PrincipalTag/tickwork:stack": {"Ref": "AWS::StackName"}},
    }
    expanded = sam_expanded(yaml_parse(template.path.read_text()), template.region)
    roles = {
        logical: {tag["Key"]: tag["Value"] for tag in resource["Properties"].get("Tags", [])}
        for logical, resource in expanded["Resources"].items()
        if resource["Type"] == "AWS::IAM::Role"
    }
    assert roles and all(
        tags.get("tickwork:stack") == {"Ref": "AWS::StackName"} for tags in roles.values()
    ), roles


def test_listed_principals_default_to_none(template: Template) -> None:
    parameter = template.doc["Parameters"]["AllowedPublisherPrincipals"]
    assert (parameter["Type"], parameter["Default"]) == ("CommaDelimitedList", "")
    condition = template.doc["Conditions"]["HasAllowedPublishers"]
    assert condition == {
        "Fn::Not": [{"Fn::Equals": [{"Fn::Join": ["", {"Ref": "AllowedPublisherPrincipals"}]}, ""]}]
    }


def test_bus_rules_may_dead_letter_and_nobody_else(template: Template) -> None:
    """A DeadLetterConfig naming an existing queue gets no queue policy from SAM: without this
    one, EventBridge could not write an undeliverable event anywhere."""
    ruled = sorted(
        f"{logical}{name}"
        for logical, resource in template.of_type("AWS::Serverless::Function").items()
        for name, event in resource["Properties"].get("Events", {}).items()
        if "DeadLetterConfig" in event["Properties"]
    )
    policy = template.resources["DeliveryDeadLetterQueuePolicy"]["Properties"]
    assert policy["Queues"] == [{"Ref": "DeliveryDeadLetterQueue"}]
    (statement,) = policy["PolicyDocument"]["Statement"]
    assert statement["Principal"] == {"Service": "events.amazonaws.com"}
    assert (statement["Effect"], statement["Action"]) == ("Allow", "sqs:SendMessage")
    assert statement["Resource"] == {"Fn::GetAtt": ["DeliveryDeadLetterQueue", "Arn"]}
    sources = statement["Condition"]["ArnEquals"]["aws:SourceArn"]
    assert sorted(s["Fn::GetAtt"][0] for s in sources) == ruled
    assert all(s["Fn::GetAtt"][1] == "Arn" for s in sources)


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    with mock_aws(), LocalStack.from_repo().running() as local:
        yield local


def test_a_start_from_tickworks_own_source_never_reaches_the_start_function(
    stack: LocalStack,
) -> None:
    """The rules as built from the template, on the emulated bus."""
    start = next(f.name for f in stack.functions if f.logical_id == "StartFunction")
    ran = lambda: [i for i in stack.runtime.invocations if i.function == start]  # noqa: E731
    stack.publish("Schedule Start", {"id": "loop", "duration": "5m"}, source="tickwork")
    stack.publish("Schedule Start", {"id": "outside", "duration": "5m"}, source="app.orders")
    deadline = time.monotonic() + 10
    while not ran() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1)  # published first: had the rule matched it, it would be here by now
    assert [i.event["detail"]["id"] for i in ran()] == ["outside"]
