"""GIVEN the roles SAM makes from template.yaml WHEN each function runs its paths THEN every AWS
call it makes is allowed by its own role, and its role grants nothing it does not use.

A missing permission passes every emulated test and breaks the deployed stack; an extra one is
the least-privilege failure this file exists to catch. The functions run in process against the
emulated stack (moto) while each AWS call is recorded with the function that made it, then held
against that function's role as SAM would deploy it (policy templates expanded, ARNs resolved).
Each state machine's role is held against the Task states of its definition.
"""

from __future__ import annotations

import copy
import fnmatch
import json
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import pytest
from moto import mock_aws
from samtranslator.yaml_helper import yaml_parse

from tests.conftest import load_event
from tests.template.iam import Call, RoleGrants, recording_calls, role_grants
from tests.template.scanner import sam_expanded
from tickwork import bootstrap
from tickwork.adapters.dynamodb_records import DynamoDBRecords
from tickwork.adapters.record_keys import park_shard_of
from tickwork.domain.fire import FireAttempt
from tickwork.domain.times import iso, parse_iso
from tickwork.fire.fulfill import fulfill_claimed
from tickwork.fire.proofs import with_proof
from tickwork.integrity.signature import SIGNATURE_HEADER
from tickwork_local.receiver import Receiver
from tickwork_local.stack import LocalStack, stop_execution
from tickwork_local.template import ACCOUNT, Template

LOGS_DELIVERY = {
    "logs:CreateLogDelivery",
    "logs:GetLogDelivery",
    "logs:UpdateLogDelivery",
    "logs:DeleteLogDelivery",
    "logs:ListLogDeliveries",
    "logs:PutResourcePolicy",
    "logs:DescribeResourcePolicies",
    "logs:DescribeLogGroups",
}
SCHEDULED_EVENT = {"source": "aws.events", "detail-type": "Scheduled Event", "detail": {}}
BASIC_EXECUTION = "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
MACHINES = ("FireStateMachine", "BatchStateMachine")  # roles held against their definitions
XRAY_WRITE = "arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess"


# The operator's own choices, as a deployment would name them: one target of each AWS type
# (the allow-lists), the e-mail sender, and the roles an action may run its target under.
TARGETS = {
    "SqsTargetArns": f"arn:aws:sqs:us-east-1:{ACCOUNT}:perm-orders",
    "SnsTargetArns": f"arn:aws:sns:us-east-1:{ACCOUNT}:perm-news",
    "EventBusTargetArns": f"arn:aws:events:us-east-1:{ACCOUNT}:event-bus/perm-partners",
    "LambdaTargetArns": f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:perm-handler",
    "StateMachineTargetArns": f"arn:aws:states:us-east-1:{ACCOUNT}:stateMachine:perm-flow",
}
PARAMETERS = {
    **TARGETS,
    "EmailFromAddress": "tickwork@example.com",
    "ConcurrencyLimits": "TICK=2",  # so fires take and give back a slot
    "LaunchAheadSeconds": "300",  # a batch's recurring members' next fires within reach
}
# Resources the operator names by parameter rather than the stack creating them.
OPERATORS_OWN = {
    *TARGETS.values(),
    f"arn:aws:ses:us-east-1:{ACCOUNT}:identity/tickwork@example.com",
    f"arn:aws:ses:us-east-1:{ACCOUNT}:template/*",  # EmailTemplatePrefix "" (any template)
    f"arn:aws:ssm:us-east-1:{ACCOUNT}:parameter/tickwork/templates/*",  # TextParameterPath
    "arn:aws:iam::*:role/tickwork-targets/*",  # TargetRolePath, in any account that trusts us
}


@pytest.fixture(scope="module")
def stack_template() -> Template:
    return LocalStack.from_repo(parameters=PARAMETERS).template


@pytest.fixture(scope="module")
def grants(stack_template: Template) -> dict[str, RoleGrants]:
    return role_grants(stack_template)


# --- every role, statically ---------------------------------------------------------------


def test_every_function_and_state_machine_has_its_own_role(
    stack_template: Template, grants: dict[str, RoleGrants]
) -> None:
    owners = stack_template.of_type("AWS::Serverless::Function") | stack_template.of_type(
        "AWS::Serverless::StateMachine"
    )
    assert set(grants) == set(owners)


def test_no_action_is_a_wildcard(grants: dict[str, RoleGrants]) -> None:
    wild = [
        (owner, action)
        for owner, role in grants.items()
        for grant in role.inline
        for action in grant.actions
        if "*" in action
    ]
    assert wild == []


def test_a_star_resource_only_where_aws_offers_nothing_narrower(
    grants: dict[str, RoleGrants],
) -> None:
    """Only vended log delivery for Step Functions logging takes no narrower resource."""
    starred = {
        (owner, action)
        for owner, role in grants.items()
        for grant in role.inline
        if "*" in grant.resources and not grant.excluded
        for action in grant.actions
    }
    assert starred == {(machine, action) for machine in MACHINES for action in LOGS_DELIVERY}


def test_sms_may_publish_to_phone_numbers_and_no_topic(grants: dict[str, RoleGrants]) -> None:
    """An SNS publish to a phone number names no resource: the one NotResource statement allows
    exactly that, and excludes every topic of every account."""
    negated = [(owner, g) for owner, role in grants.items() for g in role.inline if g.excluded]
    assert [(owner, g.actions, g.excluded) for owner, g in negated] == [
        ("FulfillFunction", ("sns:Publish",), ("arn:aws:sns:*:*:*",))
    ]
    (_, sms), fulfill = negated[0], grants["FulfillFunction"]
    assert sms.allows("sns:Publish", "*")
    assert not fulfill.allows("sns:Publish", f"arn:aws:sns:eu-west-1:{'9' * 12}:anyones-topic")


def test_every_other_resource_is_this_stacks_own_or_one_the_operator_named(
    stack_template: Template, grants: dict[str, RoleGrants]
) -> None:
    prefix = f":{stack_template.region}:{ACCOUNT}:"
    foreign = [
        (owner, resource)
        for owner, role in grants.items()
        for grant in role.inline
        for resource in grant.resources
        if resource not in ("*", *OPERATORS_OWN)
        and (prefix not in resource or stack_template.stack_name not in resource)
    ]
    assert foreign == []
    named = {r for role in grants.values() for grant in role.inline for r in grant.resources}
    assert named >= OPERATORS_OWN


def test_no_target_is_reachable_when_the_operator_names_none() -> None:
    """Empty allow-lists (the defaults): the fulfill role reaches no queue, topic, bus, function
    or state machine of the user's; only roleArn actions, through their own roles."""
    template = LocalStack.from_repo(parameters=dict.fromkeys(TARGETS, "")).template
    grants = role_grants(template)["FulfillFunction"]
    user = f"arn:aws:{{}}:us-east-1:{ACCOUNT}:{{}}"
    for action, resource in (
        ("sqs:SendMessage", user.format("sqs", "orders")),
        ("sns:Publish", user.format("sns", "news")),
        ("events:PutEvents", user.format("events", "event-bus/partners")),
        ("lambda:InvokeFunction", user.format("lambda", "function:handler")),
        ("states:StartExecution", user.format("states", "stateMachine:flow")),
    ):
        assert not grants.allows(action, resource), (action, resource)
    assert grants.allows("sns:Publish", "*")  # SMS: a phone number
    own_bus = template.arn("events", f"event-bus/{template.resolve({'Ref': 'EventBus'})}")
    assert grants.allows("events:PutEvents", own_bus)


def test_managed_policies_are_only_logs_and_xray_delivery(grants: dict[str, RoleGrants]) -> None:
    """What SAM attaches by itself: function logs (AWSLambdaBasicExecutionRole) and X-Ray
    segments (AWSXrayWriteOnlyAccess, for a traced request passed through; X-Ray's write APIs
    take only "*"). The state machines trace only with Tracing=Active, not by default."""
    managed = {owner: set(role.managed) for owner, role in grants.items()}
    expected = {
        owner: set() if owner in MACHINES else {BASIC_EXECUTION, XRAY_WRITE} for owner in grants
    }
    assert managed == expected


@pytest.mark.parametrize("machine", MACHINES)
def test_state_machine_role_grants_exactly_what_its_tasks_call(
    stack_template: Template, grants: dict[str, RoleGrants], machine: str
) -> None:
    definition = json.loads(stack_template.state_machine_definition(machine))
    needed = set()
    for state in definition["States"].values():
        resource, parameters = state.get("Resource", ""), state.get("Parameters", {})
        if resource.endswith(":states:::lambda:invoke"):
            needed.add(("lambda:InvokeFunction", parameters["FunctionName"]))
        elif resource.endswith(":states:::events:putEvents"):
            for entry in parameters["Entries"]:
                bus = stack_template.arn("events", f"event-bus/{entry['EventBusName']}")
                needed.add(("events:PutEvents", bus))
        else:
            assert state["Type"] != "Task", f"teach this test the grant of {resource}"
    granted = {
        (action, resource)
        for grant in grants[machine].inline
        if "*" not in grant.resources
        for action in grant.actions
        for resource in grant.resources
    }
    assert granted == needed


# --- every function, by what its code calls ------------------------------------------------


def _envelope(detail_type: str, detail: dict[str, Any], source: str = "app.orders") -> dict:
    event = load_event("start/cron")
    event.update(
        {"id": str(uuid.uuid4()), "detail-type": detail_type, "source": source, "detail": detail}
    )
    return event


def _request(method: str, path: str, body: Any = None) -> dict[str, Any]:
    """An API Gateway HTTP API (payload 2.0) event, as the events/api files are."""
    raw_path, _, query = path.partition("?")
    parameters = dict(pair.split("=", 1) for pair in query.split("&")) if query else None
    event = copy.deepcopy(load_event("api/create-action"))
    event.update(
        {
            "rawPath": raw_path,
            "rawQueryString": query,
            "queryStringParameters": parameters,
            "body": None if body is None else json.dumps(body),
        }
    )
    event["requestContext"]["http"].update({"method": method, "path": raw_path})
    return event


class Scenario:
    """Drives each function down the paths that make its AWS calls."""

    def __init__(self, stack: LocalStack) -> None:
        self.stack = stack
        self.names = {spec.logical_id: spec.name for spec in stack.functions}
        self.sfn = stack.client("stepfunctions")
        self.table = stack.client("dynamodb")

    def invoke(self, logical_id: str, event: dict[str, Any]) -> tuple[Any, str | None]:
        return self.stack.runtime.invoke(self.names[logical_id], event)

    def start(self, detail: dict[str, Any]) -> dict[str, Any]:
        result, error = self.invoke("StartFunction", _envelope("Schedule Start", detail))
        assert error is None, result
        return result

    def api(self, method: str, path: str, body: Any = None) -> int:
        result, error = self.invoke("ApiFunction", _request(method, path, body))
        assert error is None, result
        return result["statusCode"]

    def record(self, action_id: str) -> dict[str, Any]:
        name = self.stack.outputs["ActionsTableName"]
        item = self.table.get_item(
            TableName=name, Key={"id": {"S": action_id}}, ConsistentRead=True
        )
        return item["Item"]

    def named(self, action_id: str) -> str:
        """The ARN of the execution the record names (stored by machine and name)."""
        arn = self.stack.refs.read(self.record(action_id)["executionArn"]["S"])
        assert arn is not None
        return arn

    def fire_input(self, action_id: str, **changes: Any) -> dict[str, Any]:
        """The Fulfill payload of the action's current execution, as the state machine sends it."""
        arn = self.named(action_id)
        execution = self.sfn.describe_execution(executionArn=arn)
        fire = {**json.loads(execution["input"]), **changes}
        return {
            "input": fire,
            "executionName": execution["name"],
            "executionArn": arn,
            "retryCount": 0,
        }

    def manual_input(self, action_id: str) -> dict[str, Any]:
        """The Fulfill payload of the action's first manual fire (run now)."""
        item = self.record(action_id)
        number = item["manual"]["L"][0]["M"]["number"]["N"]
        machine = self.stack.outputs["StateMachineArn"]
        prefix = machine.replace(":stateMachine:", ":execution:")
        executions = self.sfn.list_executions(
            stateMachineArn=self.stack.outputs["StateMachineArn"]
        )["executions"]
        (execution,) = [e for e in executions if e["name"].endswith(f"-m{number}")]
        found = self.sfn.describe_execution(executionArn=f"{prefix}:{execution['name']}")
        return {"input": json.loads(found["input"]), "executionName": execution["name"]}

    def fulfill(self, action_id: str, **changes: Any) -> tuple[Any, str | None]:
        return self.invoke("FulfillFunction", self.fire_input(action_id, **changes))

    def fulfill_as_before(self, action_id: str) -> dict[str, Any]:
        """The tick an execution started before ticks were recorded by their task would put
        (from its Emit tick state): the fire run and claimed, not recorded. Made here with the
        stack's own code and key, as that Fulfill made it."""
        deps = bootstrap.from_environment()  # in process, the functions share one environment
        fire = FireAttempt.from_wire(self.fire_input(action_id))
        tick, _ = fulfill_claimed(fire, deps)
        return with_proof(tick, deps).to_wire()

    def tick(self, detail_type: str, detail: dict[str, Any]) -> dict[str, Any]:
        result, error = self.invoke("TickFunction", _envelope(detail_type, detail, "tickwork"))
        assert error is None, result
        return result


def run_every_path(s: Scenario) -> None:
    soon = lambda seconds: iso(datetime.now(UTC) + timedelta(seconds=seconds))  # noqa: E731

    # Start: create, replace an active action (stops its execution), reject.
    assert s.start({"id": "perm:later", "duration": "200s"})["outcome"] == "created"
    assert s.start({"id": "perm:later", "duration": "220s"})["outcome"] == "replaced"
    assert s.start({"id": "perm:bad", "cron": "not a cron"})["outcome"] == "rejected"
    # Control: cancel (stops the execution); pause (stops it), resume (starts the next fire),
    # run now (a fire of its own).
    result, _ = s.invoke("ControlFunction", _envelope("Schedule Stop", {"id": "perm:later"}))
    assert result["outcome"] == "cancelled", result
    s.start({"id": "perm:steered", "rate": "rate(10 minutes)"})
    for detail_type, outcome in (
        ("Schedule Pause", "paused"),
        ("Schedule Resume", "resumed"),
        ("Schedule Run Now", "triggered"),
    ):
        result, _ = s.invoke("ControlFunction", _envelope(detail_type, {"id": "perm:steered"}))
        assert result["outcome"] == outcome, result

    # Fulfill: two due fires (claim, concurrency slot), a far fire woken early (its next leg),
    # a missed fire under catchUp SKIP (Schedule Skipped).
    s.start({"id": "perm:once", "at": soon(1)})
    s.start(
        {
            "id": "perm:twice",
            "rate": "rate(4 minutes)",
            "startTime": soon(1),
            "executionRemainder": 2,
        }
    )  # fmt: skip  (its next fire inside the horizon)
    time.sleep(1.2)
    # Both TICK slots held by others: the fire waits for one (its wait counted), then runs.
    slots = s.stack.outputs["SlotsTableName"]
    taken = [{"slot": {"S": f"TICK#{n}"}, "holder": {"S": "other"}} for n in range(2)]
    for item in taken:
        s.table.put_item(TableName=slots, Item={**item, "expiresAt": {"N": "9999999999"}})
    assert s.fulfill("perm:once")[1] == "ConcurrencyLimited"
    for item in taken:
        s.table.delete_item(TableName=slots, Key={"slot": item["slot"]})
    once, error = s.invoke("FulfillFunction", {**s.fire_input("perm:once"), "retryCount": 1})
    assert error is None and once["outcome"] == "FIRED", once
    assert (once["attempts"], once["slotWaits"]) == (1, 1), once
    twice, error = s.fulfill("perm:twice")
    assert error is None, twice
    # A signed webhook (reads the HTTP signing key) to a local receiver.
    receiver = Receiver()
    try:
        s.start({"id": "perm:hook", "at": soon(1), "action": "HTTP_REQUEST",
                 "data": {"url": receiver.url, "method": "POST", "body": {}}})  # fmt: skip
        time.sleep(1.2)
        hooked, error = s.fulfill("perm:hook")
        assert error is None and hooked["outcome"] == "FIRED", hooked
        assert SIGNATURE_HEADER in receiver.requests[0]["headers"]
    finally:
        receiver.close()
    fire_every_target(s, soon)
    # A fire beyond LaunchAheadSeconds is parked; one whose launch moment came is launched by
    # the pump, and woken far too early (never by design) it waits on in a new leg.
    assert s.start({"id": "perm:far", "duration": "1h"})["executionArn"] is None
    assert s.start({"id": "perm:parked", "at": soon(301)})["executionArn"] is None
    time.sleep(1.2)
    pumped, error = s.invoke("PumpFunction", SCHEDULED_EVENT)
    assert error is None and pumped["launched"] == ["perm:parked"], pumped
    assert s.fulfill("perm:parked")[1] == "WaitContinued"
    fire_a_batch(s, soon)
    pump_by_shards(s, soon)
    s.start({"id": "perm:missed", "at": soon(1), "catchUp": "SKIP", "misfireThreshold": "1s"})
    time.sleep(3.2)  # missed: more than its threshold late past its planned whole second
    assert s.fulfill("perm:missed")[1] == "OccurrenceSkipped"

    # Fulfill records its fire before it puts the tick: a one-off completes (Schedule
    # Completed), a recurrence starts its next fire; the tick function has nothing to do.
    assert s.record("perm:once")["status"]["S"] == "COMPLETED"
    assert s.record("perm:twice")["status"]["S"] == "PENDING"
    assert once["recorded"] is True and twice["recorded"] is True
    assert s.tick("Schedule Tick", once)["outcome"] == "ignored"
    # The tick of an execution started before (put by its Emit tick state, not recorded):
    # the tick function records it, and starts the next fire.
    s.start({"id": "perm:old", "rate": "rate(4 minutes)", "startTime": soon(1)})
    time.sleep(1.2)
    old = s.fulfill_as_before("perm:old")
    assert s.tick("Schedule Tick", old)["status"] == "PENDING"
    # The same tick again, its next fire's execution stopped meanwhile: found its own.
    assert stop_execution(s.sfn, s.named("perm:old"), "by hand")
    assert s.tick("Schedule Tick", old)["outcome"] == "ignored"
    # A failed fire goes to its action's dead-letter queue (an allow-listed one) as recorded.
    s.stack.client("sqs").create_queue(QueueName="perm-orders")
    dead_letter = {"deadLetterArn": TARGETS["SqsTargetArns"]}
    s.start({"id": "perm:fails", "duration": "200s", **dead_letter})
    fire = s.fire_input("perm:fails")
    # As the state machine's Catch does: the fulfill step makes the report, with its proof.
    caught = {**fire["input"], "error": {"Error": "FireFailed", "Cause": "by the scenario"}}
    report, error = s.invoke(
        "FulfillFunction",
        {
            "report": caught,
            "executionName": fire["executionName"],
            "executionArn": fire["executionArn"],
        },
    )
    assert error is None and report["proof"], report
    assert s.tick("Schedule Failed", report)["status"] == "FAILED"
    # A run now's fire is recorded beside the schedule (by its Fulfill); an update asked for
    # inside the lock applies once the fire it waited for is recorded (a new, sealed
    # generation).
    manual, error = s.invoke("FulfillFunction", s.manual_input("perm:steered"))
    assert error is None and manual["trigger"] == "RUN_NOW", manual
    assert manual["recorded"] is True
    assert s.tick("Schedule Tick", manual)["outcome"] == "ignored"  # recorded already
    s.start({"id": "perm:deferred", "at": soon(1), "frequency": "DAILY"})
    time.sleep(1.2)
    assert s.start({"id": "perm:deferred", "rate": "rate(2 days)"})["outcome"] == "deferred"
    deferred, error = s.fulfill("perm:deferred")
    assert error is None and deferred["recorded"] is True, deferred
    assert s.record("perm:deferred")["status"]["S"] == "PENDING"

    # Reconciler: an action due soon whose execution was stopped by hand is restarted.
    s.start({"id": "perm:lost", "duration": "200s"})
    lost = s.named("perm:lost")
    assert stop_execution(s.sfn, lost, "lost by hand")
    # The same Start delivered again: its execution has ended, and is found its own.
    assert s.start({"id": "perm:lost", "duration": "200s"})["outcome"] == "unchanged"
    result, _ = s.invoke("ControlFunction", _envelope("Schedule Run Now", {"id": "perm:twice"}))
    assert result["outcome"] == "triggered", result  # a manual fire, run by nobody yet
    repaired, error = s.invoke("ReconcilerFunction", SCHEDULED_EVENT)
    assert error is None and "perm:lost" in repaired["restarted"], repaired
    # Count: the writes so far folded from the table's stream into the counters, once.
    folded, error = s.invoke("CountFunction", SCHEDULED_EVENT)
    assert error is None and folded["caughtUp"], folded
    # A run asked for by hand: its lag given in the event, named when it is not a number.
    folded, error = s.invoke("CountFunction", {"lagSeconds": 0})
    assert error is None and folded["waiting"] == 0, folded
    refused, error = s.invoke("CountFunction", {"lagSeconds": "soon"})
    assert error == "ValueError" and "lagSeconds" in refused["errorMessage"], refused

    # API: create, list (all and by status: indexes), stats, get, update (replaces), cancel,
    # purge, retry a failed action.
    path = f"/actions/{quote('perm:api', safe='')}"
    assert s.api("POST", "/actions", {"id": "perm:api", "duration": "200s"}) == 201
    assert s.api("GET", "/actions") == 200
    assert s.api("GET", "/actions?status=PENDING") == 200
    assert s.api("GET", "/actions?group=default") == 200
    assert s.api("GET", "/actions?prefix=perm") == 200
    assert s.api("GET", "/actions?attention=true") == 200
    assert s.api("GET", "/stats") == 200
    assert s.api("GET", "/stats?group=default") == 200
    steered = f"/actions/{quote('perm:steered', safe='')}"
    assert s.api("POST", f"{steered}/pause", {"note": "by the API"}) == 200
    assert s.api("POST", f"{steered}/resume") == 200
    assert s.api("POST", f"{steered}/run-now") == 202
    assert s.api("POST", "/bulk/pause", {"prefix": "perm:steer"}) == 200
    assert s.api("POST", "/bulk/cancel", {"prefix": "perm:steer"}) == 200
    assert s.api("GET", path) == 200
    assert s.api("PATCH", path, {"duration": "220s"}) == 200
    # the same update again, its execution stopped meanwhile: found its own
    assert stop_execution(s.sfn, s.named("perm:api"), "by hand")
    assert s.api("PATCH", path, {"duration": "220s"}) == 200
    assert s.api("DELETE", path) == 200
    assert s.api("DELETE", f"{path}?purge=true") == 204
    assert s.api("POST", f"/actions/{quote('perm:fails', safe='')}/retry") == 200
    # a calendar put: the schedules naming it found through ByCalendar and planned again
    assert s.api("PUT", "/calendars/perm", {"timezone": "UTC"}) == 201
    named = {"id": "perm:cal", "cron": "0 10 * * *", "calendar": "perm"}
    assert s.api("POST", "/actions", named) == 201
    assert s.api("PUT", "/calendars/perm", {"timezone": "UTC", "dates": ["2031-01-01"]}) == 200


def pump_by_shards(s: Scenario, soon: Any) -> None:
    """A busy pump run (more than PumpShareFires due: 5 here, as a stack deployed so) hands each
    shard of the Parked index to a worker; the worker whose shard holds more than a share
    launches one (a batch: 10 fires due together) and hands the rest to a worker of its own
    (one fire, alone). Eleven fires of one shard, parked, then moved (written as tickwork
    would) to one launch moment."""
    ids = [i for i in (f"perm:shard:{n}" for n in range(800)) if park_shard_of(i) == 0][:11]
    records = DynamoDBRecords(s.stack.outputs["ActionsTableName"], refs=s.stack.refs)
    at, now = soon(330), datetime.now(UTC)
    for action_id in ids:
        s.start({"id": action_id, "at": at})
        parked = records.get(action_id)
        assert parked is not None and parked.is_parked
        # parked due now, in the Parked index (as a refusal or a worker leaves it): marked
        due = replace(parked.parked_again(now, now), version=parked.version + 1)
        records.save(due, expected_version=parked.version)
    # the status watermarks as a new stack has none: each worker of shards 0-7 reads its
    # partition from an hour back (a run in the same batch window as the one before reads none)
    table = s.stack.outputs["ActionsTableName"]
    s.table.update_item(
        TableName=table, Key={"id": {"S": "#pump"}}, UpdateExpression="REMOVE launchedTo"
    )
    os.environ["PUMP_SHARE_FIRES"] = "5"
    bootstrap.from_environment.cache_clear()
    try:
        pumped, error = s.invoke("PumpFunction", SCHEDULED_EVENT)
    finally:
        os.environ.pop("PUMP_SHARE_FIRES")
        bootstrap.from_environment.cache_clear()
    assert error is None and "shard 0" in pumped["handed_out"], pumped
    # the workers run asynchronously: each of the 16 shards' (each reads the status partitions)
    worker = s.names["PumpWorkerFunction"]
    shards_run = lambda: {  # noqa: E731
        i.event.get("shard") for i in s.stack.runtime.invocations if i.function == worker
    }
    deadline = time.monotonic() + 60
    while not set(range(16)) <= shards_run() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert set(range(16)) <= shards_run()
    (shard_0,) = [
        i.result for i in s.stack.runtime.invocations if i.event == {"shard": 0} and i.result
    ]

    def named_now() -> set[str | None]:
        return {records.get(i).execution_arn for i in ids}  # type: ignore[union-attr]

    while None in named_now() and time.monotonic() < deadline:  # the shares' workers too
        time.sleep(0.05)
    named = named_now()
    # the batch of the first share, and each further fire alone (a share of fewer than
    # BatchMinFires): nothing unnamed
    assert None not in named and len(named) == 1 + len(shard_0["handed_out"]), (named, shard_0)


def fire_a_batch(s: Scenario, soon: Any) -> None:
    """Parked fires due in one second: the pump starts them as one execution of the batch
    machine; its task (invoked here as the machine would at their second) fires, records and
    announces each, and hands a transient failure over to an execution of its own; the
    reconciler asks after the batch of a fire it holds; the recurring members' next fires go on
    in a follow-on batch the task starts. Parked five minutes ahead, the fires are then moved
    (written as tickwork would) to 12 s from now, their launch moment come."""
    receiver = Receiver(failures=1)
    try:
        # recurring, to a bus no slot limits: all five fire, so their next fires go on in a
        # follow-on batch (BatchMinFires of them)
        ids = [f"perm:batch:{n}" for n in range(5)]
        event = {"eventBusArn": TARGETS["EventBusTargetArns"], "detailType": "Due", "detail": {}}
        # One start time (their next fires fall in one second), beyond the 300 s horizon by
        # 10 s: parked however slow the starts. The batch runs 12 s from now, so that their
        # next fires have come within the horizon: a follow-on batch.
        first = soon(310)
        for action_id in ids:
            s.start({"id": action_id, "rate": "rate(20 seconds)", "startTime": first,
                     "action": "EVENTBRIDGE_EVENT", "data": event})  # fmt: skip
        slotted = [f"perm:batch:slot:{n}" for n in range(3)]  # TICK: a slot each, or wait
        for action_id in slotted:
            s.start({"id": action_id, "at": soon(301)})
        ids += slotted
        s.start({"id": "perm:batch:flaky", "at": soon(301), "action": "HTTP_REQUEST",
                 "data": {"url": receiver.url, "method": "POST", "body": {}}})  # fmt: skip
        records = DynamoDBRecords(s.stack.outputs["ActionsTableName"], refs=s.stack.refs)
        second = parse_iso(soon(12)).replace(microsecond=0)
        for action_id in [*ids, "perm:batch:flaky"]:
            parked = records.get(action_id)
            assert parked is not None and parked.is_parked
            now = datetime.now(UTC)
            due = replace(  # parked due now (the Parked index): the pump names the batch
                parked.parked_again(now, now), execution_time=second, version=parked.version + 1
            )
            records.save(due, expected_version=parked.version)
        pumped, error = s.invoke("PumpFunction", SCHEDULED_EVENT)
        assert error is None and len(pumped["batches"]) == 1, pumped
        arn = s.named("perm:batch:0")
        # A fire of that batch due within the reconciler's horizon (written as tickwork would).
        member = records.get("perm:batch:0")
        assert member is not None and member.execution_time is not None
        soon_fire = member.execution_time + timedelta(seconds=60)
        records.create(replace(member, id="perm:batch:late", execution_time=soon_fire, version=1))
        execution = s.sfn.describe_execution(executionArn=arn)
        batch = {
            "batch": json.loads(execution["input"]),
            "executionName": execution["name"],
            "executionArn": arn,
            "retryCount": 0,
        }
        while datetime.now(UTC) < second:  # the batch machine's Wait ends at the second
            time.sleep(0.05)
        ran, error = s.invoke("FulfillFunction", batch)
        # (the follow-on it started stopped meanwhile: the retry finds it ended, its own)
        follow_on = s.named("perm:batch:0")
        assert follow_on != arn and stop_execution(s.sfn, follow_on, "by hand")
        # the machine's retry of the task (as after a crash): it settles the first attempt's
        # tab, and asks after the executions it handed members over to
        again, again_error = s.invoke("FulfillFunction", {**batch, "retryCount": 1})
    finally:
        receiver.close()
    assert error is None, ran
    assert again_error is None, again
    outcomes = {fire["id"]: fire for fire in ran["fires"]}
    assert outcomes.pop("perm:batch:flaky")["outcome"] == "HANDED_OFF", ran
    assert all(outcomes.pop(f"perm:batch:{n}")["outcome"] == "FIRED" for n in range(5)), ran
    # TICK=2: each member needs a slot of its own; those that found none wait in their own
    # executions, handed over
    fired = [f for f in outcomes.values() if f["outcome"] == "FIRED"]
    waiting = [f for f in outcomes.values() if f["outcome"] == "HANDED_OFF"]
    assert fired and len(fired) + len(waiting) == 3, ran
    assert all(f["reason"].startswith("ConcurrencyLimited") for f in waiting), ran
    assert ":execution:tickwork-local-batch:" in follow_on, follow_on


def fire_every_target(s: Scenario, soon: Any) -> None:
    """One fire of each AWS action type to the operator's targets, one through an action's own
    role (roleArn: sts:AssumeRole), and a notification on each channel (SES, SNS, SSM)."""
    s.stack.client("sqs").create_queue(QueueName="perm-orders")
    s.stack.client("sns").create_topic(Name="perm-news")
    s.stack.client("events").create_event_bus(Name="perm-partners")
    s.stack.add_function("perm-handler", lambda event, context: {"ok": True})
    s.stack.client("stepfunctions").create_state_machine(
        name="perm-flow",
        definition=json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}),
        roleArn=f"arn:aws:iam::{ACCOUNT}:role/perm-flow",
    )
    s.stack.client("ses").create_template(
        Template={"TemplateName": "WELCOME", "SubjectPart": "Hi", "TextPart": "Hi {{name}}"}
    )
    s.stack.client("ssm").put_parameter(
        Name="/tickwork/templates/WELCOME", Value="Hi {{name}}", Type="String"
    )
    targets = {
        "SQS_MESSAGE": {"queueArn": TARGETS["SqsTargetArns"], "messageBody": {"n": 1}},
        "SNS_MESSAGE": {"topicArn": TARGETS["SnsTargetArns"], "message": "hello"},
        "EVENTBRIDGE_EVENT": {
            "eventBusArn": TARGETS["EventBusTargetArns"],
            "detailType": "Order Due",
            "detail": {"n": 1},
        },
        "LAMBDA_INVOKE": {"functionArn": TARGETS["LambdaTargetArns"], "payload": {"n": 1}},
        "STEP_FUNCTIONS_EXECUTION": {"stateMachineArn": TARGETS["StateMachineTargetArns"]},
    }
    notifications = {
        "email": {"notificationType": "EMAIL", "email": "ada@example.com"},
        "sms": {"notificationType": "SMS", "mobile": "+15555550100"},
        "push": {"notificationType": "PUSH", "userId": "ada"},
    }
    actions = {f"perm:{kind.lower()}": (kind, data) for kind, data in targets.items()}
    for channel, data in notifications.items():
        data = {**data, "templateType": "WELCOME", "name": "Ada"}
        actions[f"perm:{channel}"] = ("SEND_NOTIFICATION", data)
    # An SQS message through an action's own role (any queue: the role, not the stack, decides).
    actions["perm:role"] = ("SQS_MESSAGE", {**targets["SQS_MESSAGE"]})
    # A notification created through the API: its data checked against the text and e-mail.
    for channel in ("sms", "email"):
        data = {**notifications[channel], "templateType": "WELCOME", "name": "Ada"}
        body = {"id": f"perm:api:{channel}", "delay": "1h", "action": "SEND_NOTIFICATION"}
        assert s.api("POST", "/actions", {**body, "data": data}) == 201
    for action_id, (kind, data) in actions.items():
        role = {"roleArn": f"arn:aws:iam::{ACCOUNT}:role/tickwork-targets/perm"}
        detail = {"id": action_id, "at": soon(1), "action": kind, "data": data}
        outcome = s.start({**detail, **(role if action_id == "perm:role" else {})})["outcome"]
        assert outcome == "created", (action_id, outcome)
    time.sleep(1.2)
    for action_id in actions:
        fired, error = s.fulfill(action_id)
        assert error is None and fired["outcome"] == "FIRED", (action_id, fired)


@pytest.fixture(scope="module")
def calls() -> Iterator[list[Call]]:
    with mock_aws():
        stack = LocalStack.from_repo(parameters=PARAMETERS)
        with recording_calls(stack) as recorded, stack.running():
            run_every_path(Scenario(stack))
            yield list(recorded)


def test_every_function_ran(calls: list[Call], grants: dict[str, RoleGrants]) -> None:
    functions = {owner for owner in grants if owner not in MACHINES}
    assert {call.function for call in calls} == functions


def test_every_call_a_function_makes_is_allowed_by_its_role(
    calls: list[Call], grants: dict[str, RoleGrants]
) -> None:
    denied = sorted(
        {
            f"{call.function}: {call.action} on {resource}"
            for call in calls
            for resource in call.resources
            if not grants[call.function].allows(call.action, resource)
        }
    )
    assert denied == [], "grant these in the function's Policies in template.yaml:\n" + "\n".join(
        denied
    )


# Grants whose path the scenario cannot reach in an emulator that runs no executions, and why
# the code needs them: on the table, and on an allow-listed target.
UNREACHED_TARGETS = {
    ("ReconcilerFunction", "sqs:SendMessage"): (
        "a failure the reconciler records (a lost report, an outcome unknown under FAIL) is "
        "sent to the action's dead-letter queue; here executions never end so"
    ),
}
_LEGACY_TAB = (
    "a write over a record that still carries the changes of a batch's tab the release "
    "before left open settles them in a transaction with the counters' ADDs; no record of "
    "this release carries any"
)
UNREACHED = {
    ("ReconcilerFunction", "dynamodb:UpdateItem"): (
        "settling a batch's tab the release before left open (the tab item and the counters' "
        "ADDs, one transaction); no tab of this release is ever left open"
    ),
    ("ControlFunction", "dynamodb:UpdateItem"): _LEGACY_TAB,
    ("TickFunction", "dynamodb:UpdateItem"): _LEGACY_TAB,
}


def test_every_grant_of_a_function_is_used(
    stack_template: Template, calls: list[Call], grants: dict[str, RoleGrants]
) -> None:
    """Each (action, resource) a function's statements grant is one its code calls; but the
    dead letters of a failed asynchronous invocation, which Lambda sends with the role."""
    dead_letters = {
        (logical, "sqs:SendMessage", stack_template.resolve(props["DeadLetterQueue"]["TargetArn"]))
        for logical, resource in stack_template.of_type("AWS::Serverless::Function").items()
        if "DeadLetterQueue" in (props := resource["Properties"])
    }
    used = {(call.function, call.action, resource) for call in calls for resource in call.resources}
    used |= {
        (function, action, resource)
        for (function, action), _why in UNREACHED.items()
        for resource in {r for c in calls for r in c.resources if r.endswith("-ActionsTable")}
    }
    used |= {
        (function, action, TARGETS["SqsTargetArns"])
        for (function, action), _why in UNREACHED_TARGETS.items()
    }
    unused = sorted(
        f"{owner}: {action} on {pattern}"
        for owner, role in grants.items()
        if owner not in MACHINES
        for grant in role.inline
        for action in grant.actions
        for pattern in grant.resources
        if (owner, action, pattern) not in dead_letters
        and not any(
            (function, called) == (owner, action) and fnmatch.fnmatchcase(resource, pattern)
            for function, called, resource in used
        )
    )
    assert unused == [], "no path of the code calls these: drop them from template.yaml:\n" + (
        "\n".join(unused)
    )


def test_every_http_api_route_requires_iam_signatures(stack_template: Template) -> None:
    """The deployed API: each route SAM generates is authorised with AWS_IAM (SigV4), so a
    request without AWS credentials is refused by API Gateway before the function runs."""
    expanded = sam_expanded(yaml_parse(stack_template.path.read_text()), stack_template.region)
    apis = [r for r in expanded["Resources"].values() if r["Type"] == "AWS::ApiGatewayV2::Api"]
    (api,) = apis
    operations = [
        (path, method, operation)
        for path, item in api["Properties"]["Body"]["paths"].items()
        for method, operation in item.items()
    ]
    assert {path for path, _, _ in operations} == {"/", "/{proxy+}"}
    for path, method, operation in operations:
        assert operation.get("security") == [{"AWS_IAM": []}], (path, method, operation)


# --- with signed events required -----------------------------------------------------------


def test_signed_events_are_checked_and_spent_with_the_grants_their_functions_have() -> None:
    """RequireSignedStarts=true adds the signing key and the signatures table: the Start and
    Control functions' calls on the signed path are granted, and those grants are used."""
    from tickwork.integrity.signed_events import sign_event

    with mock_aws():
        # A stack of its own name: the module's stack lives beside it in the same emulator.
        stack = LocalStack.from_repo(
            parameters={"RequireSignedStarts": "true"}, stack_name="tickwork-signed"
        )
        grants = role_grants(stack.template)
        with recording_calls(stack) as recorded, stack.running():
            s = Scenario(stack)
            secrets = stack.client("secretsmanager")
            key_arn = stack.outputs["StartSigningKeyArn"]
            key = secrets.get_secret_value(SecretId=key_arn)["SecretString"].encode()
            detail = {"id": "perm:signed", "rate": "rate(10 minutes)"}
            started = s.start(sign_event(key, "Schedule Start", detail, int(time.time())))
            assert started["outcome"] == "created"
            for kind, outcome in (("Schedule Pause", "paused"), ("Schedule Stop", "cancelled")):
                signed = sign_event(key, kind, {"id": "perm:signed"}, int(time.time()))
                result, _ = s.invoke("ControlFunction", _envelope(kind, signed))
                assert result["outcome"] == outcome, result
            calls = list(recorded)
    signing = {
        (call.function, call.action, resource)
        for call in calls
        for resource in call.resources
        if "Signatures" in resource or "StartSigningKey" in resource
    }
    table = stack.template.resolve({"Fn::GetAtt": ["SignaturesTable", "Arn"]})
    assert {(f, a) for f, a, _ in signing} >= {
        ("StartFunction", "dynamodb:PutItem"),
        ("ControlFunction", "dynamodb:PutItem"),
        ("ControlFunction", "secretsmanager:GetSecretValue"),
    }
    denied = [
        f"{call.function}: {call.action} on {resource}"
        for call in calls
        for resource in call.resources
        if not grants[call.function].allows(call.action, resource)
    ]
    assert denied == []
    assert grants["ControlFunction"].allows("dynamodb:PutItem", table)
    assert not grants["TickFunction"].allows("dynamodb:PutItem", table)
