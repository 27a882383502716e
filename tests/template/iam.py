"""The IAM grants of each role as SAM deploys them, and the AWS calls the function code makes.

``role_grants`` expands template.yaml with SAM's own translator (policy templates spelled out)
and resolves each statement's resources to the physical ARNs of the emulated stack.
``recording_calls`` records, per function, the IAM action and resource ARNs of every AWS call a
handler makes while the emulated stack runs it in process.
"""

from __future__ import annotations

import contextvars
import fnmatch
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import boto3
from samtranslator.yaml_helper import yaml_parse

from tests.template.scanner import sam_expanded
from tickwork import bootstrap
from tickwork_local.stack import LocalStack
from tickwork_local.template import ACCOUNT, Template

__all__ = ["Call", "Grant", "RoleGrants", "recording_calls", "role_grants"]


@dataclass(frozen=True)
class Grant:
    """One Allow statement: its actions and its resources (ARN patterns, "*" wildcards); a
    NotResource statement is resources ("*",) less its ``excluded`` patterns."""

    actions: tuple[str, ...]
    resources: tuple[str, ...]
    excluded: tuple[str, ...] = ()

    def allows(self, action: str, resource: str) -> bool:
        return (
            any(fnmatch.fnmatchcase(action.lower(), a.lower()) for a in self.actions)
            and any(fnmatch.fnmatchcase(resource, r) for r in self.resources)
            and not any(fnmatch.fnmatchcase(resource, r) for r in self.excluded)
        )


@dataclass(frozen=True)
class RoleGrants:
    inline: tuple[Grant, ...]
    managed: tuple[str, ...]  # AWS managed policy ARNs SAM attaches

    def allows(self, action: str, resource: str) -> bool:
        return any(grant.allows(action, resource) for grant in self.inline)


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _flat(value: Any) -> list[Any]:
    """A statement's resources: a list parameter (CommaDelimitedList) spreads into the list."""
    return [item for entry in _listed(value) for item in _listed(entry)]


def role_grants(template: Template) -> dict[str, RoleGrants]:
    """Logical id of each function and state machine → the grants of the role SAM makes for it."""
    expanded = sam_expanded(yaml_parse(template.path.read_text()), template.region)
    owners = {
        f"{logical}Role": logical
        for logical, resource in template.resources.items()
        if resource["Type"] in ("AWS::Serverless::Function", "AWS::Serverless::StateMachine")
    }
    roles: dict[str, RoleGrants] = {}
    for logical, resource in expanded["Resources"].items():
        if resource["Type"] != "AWS::IAM::Role":
            continue
        properties = resource["Properties"]
        grants = []
        for policy in template.resolve(properties.get("Policies", [])):  # conditions applied
            for statement in _listed(policy["PolicyDocument"]["Statement"]):
                assert statement["Effect"] == "Allow", f"{logical}: only Allow statements expected"
                actions = tuple(_listed(statement["Action"]))
                if "NotResource" in statement:
                    excluded = tuple(str(r) for r in _flat(statement["NotResource"]))
                    grants.append(Grant(actions, ("*",), excluded))
                else:
                    resources = tuple(str(r) for r in _flat(statement["Resource"]))
                    grants.append(Grant(actions, resources))
        managed = template.resolve(properties["ManagedPolicyArns"])  # conditions applied
        roles[owners[logical]] = RoleGrants(tuple(grants), tuple(str(m) for m in managed))
    return roles


@dataclass(frozen=True)
class Call:
    function: str  # logical id
    action: str  # IAM action, e.g. dynamodb:PutItem
    resources: tuple[str, ...]  # ARNs the call acts on


_TRANSACTION_ACTIONS = {
    "Put": "dynamodb:PutItem",
    "Update": "dynamodb:UpdateItem",
    "Delete": "dynamodb:DeleteItem",
    "ConditionCheck": "dynamodb:ConditionCheckItem",
}


def _iam_action(service: str, operation: str) -> str:
    if (service, operation) == ("lambda", "Invoke"):
        return "lambda:InvokeFunction"
    return f"{service}:{operation}"


def _arn(service: str, region: str, resource: str) -> str:
    if resource.startswith("arn:"):
        return resource
    return f"arn:aws:{service}:{region}:{ACCOUNT}:{resource}"


def _resources(service: str, params: dict[str, Any], region: str) -> tuple[str, ...]:
    """The ARNs IAM authorises a call against, from its parameters."""
    if service == "dynamodb" and "StreamArn" in params:  # DynamoDB Streams: the stream
        return (params["StreamArn"],)
    if service == "dynamodb" and "ShardIterator" in params:  # it names its stream first
        return (params["ShardIterator"].split("|", 1)[0],)
    if service == "dynamodb":
        tables = [params["TableName"]] if "TableName" in params else list(params["RequestItems"])
        index = f"/index/{params['IndexName']}" if params.get("IndexName") else ""
        return tuple(_arn("dynamodb", region, f"table/{t}") + index for t in tables)
    if service == "events" and "Entries" in params:
        buses = {e.get("EventBusName", "default") for e in params["Entries"]}
        named = (b if b.startswith("arn:") else f"event-bus/{b}" for b in buses)
        return tuple(sorted(_arn("events", region, bus) for bus in named))
    if service == "states":
        return (params.get("executionArn") or params["stateMachineArn"],)
    if service == "secretsmanager":
        secret = params["SecretId"]  # a name, or an ARN (partial: without AWS's suffix)
        return (
            secret
            if secret.startswith("arn:")
            else _arn("secretsmanager", region, f"secret:{secret}"),
        )
    if service == "sqs":
        return (_arn("sqs", region, params["QueueUrl"].rstrip("/").rsplit("/", 1)[-1]),)
    if service == "lambda":
        name = params["FunctionName"]
        return (_arn("lambda", region, name if name.startswith("arn:") else f"function:{name}"),)
    if service == "sns":  # a publish to a phone number (SMS) names no resource: IAM takes "*"
        return (params.get("TopicArn") or params.get("TargetArn") or "*",)
    if service == "ses" and "TemplateName" in params:  # a template read: the template
        return (_arn("ses", region, f"template/{params['TemplateName']}"),)
    if service == "ses":  # a templated e-mail: the sending identity and the template
        return (
            _arn("ses", region, f"identity/{params['Source']}"),
            _arn("ses", region, f"template/{params['Template']}"),
        )
    if service == "ssm":
        return (_arn("ssm", region, f"parameter{params['Name']}"),)
    if service == "sts":
        return (params["RoleArn"],)
    raise AssertionError(f"teach tests/template/iam.py the resource of a {service} call: {params}")


@contextmanager
def recording_calls(stack: LocalStack) -> Iterator[list[Call]]:
    """Inside: every AWS call a function makes while the stack runs it, in order.

    Enter before ``stack.running()``: clients take the session's hooks when they are built,
    and the functions build theirs at their first invocation.
    """
    calls: list[Call] = []
    # Which function this thread (or a worker thread it handed a copy of its context to, as
    # the pump does) is running.
    running: contextvars.ContextVar[str | None] = contextvars.ContextVar(
        f"tickwork-iam-running-{id(calls)}", default=None
    )
    logical_of = {spec.name: spec.logical_id for spec in stack.functions}

    def record(params: dict[str, Any], model: Any, **_: Any) -> None:
        function = running.get()
        if function is None:
            return
        service = model.service_model.signing_name
        if (service, model.name) == ("ses", "TestRenderTemplate"):
            return  # the local outbox renders what was sent, with the sender's client: not AWS
        if (service, model.name) == ("dynamodb", "TransactWriteItems"):
            # IAM authorises each item of a transaction as the single-item call it stands for.
            for entry in params["TransactItems"]:
                (kind, item), *_ = entry.items()
                action = _TRANSACTION_ACTIONS[kind]
                calls.append(Call(function, action, _resources(service, item, stack.region)))
            return
        calls.append(
            Call(
                function,
                _iam_action(service, model.name),
                _resources(service, params, stack.region),
            )
        )

    invoke = stack.runtime.invoke

    def attributed(name: str, event: dict[str, Any]) -> tuple[Any, str | None]:
        # In process the functions share one container's clients and caches (secrets read by
        # one would hide the others' reads): give each invocation a cold start, as in AWS.
        # A user's target function (LAMBDA_INVOKE) runs inside its caller's invocation, under
        # a role of its own: its calls are no function's of this stack.
        if name in logical_of:
            bootstrap.from_environment.cache_clear()
        token = running.set(logical_of.get(name))
        try:
            return invoke(name, event)
        finally:
            running.reset(token)

    events = boto3._get_default_session().events
    recorder = f"tickwork-iam-recorder-{id(calls)}"  # one per recording: two may overlap
    events.register("before-parameter-build", record, unique_id=recorder)
    stack.runtime.invoke = attributed  # type: ignore[method-assign]
    try:
        yield calls
    finally:
        stack.runtime.invoke = invoke  # type: ignore[method-assign]
        events.unregister("before-parameter-build", unique_id=recorder)
