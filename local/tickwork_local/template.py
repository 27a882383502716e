"""Reads template.yaml (CloudFormation short-form tags included) and resolves intrinsics.

Physical names are decided up front from the stack name and logical ids, so any reference can
be resolved without ordering the resources.
"""

from __future__ import annotations

import json
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = ["NO_VALUE", "FunctionSpec", "RuleSpec", "Template", "load_yaml"]

ACCOUNT = "123456789012"
NO_VALUE: Any = object()  # what Ref AWS::NoValue resolves to: dropped from lists and maps


# libyaml's parser where PyYAML was built with it (the wheels are): about ten times faster.
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SafeLoader):  # type: ignore[valid-type,misc]
    """SafeLoader that turns !Ref, !GetAtt, !Sub, ... into their long JSON forms."""


def _construct(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    if suffix == "Ref":
        return {"Ref": value}
    if suffix == "GetAtt" and isinstance(value, str):
        value = value.split(".", 1)
    return {f"Fn::{suffix}": value}


_Loader.add_multi_constructor("!", _construct)


_loaded: dict[tuple[Path, int, int], bytes] = {}


def load_yaml(path: Path) -> dict[str, Any]:
    """The document, parsed once per version of the file (a stack per test reads the same
    template): each caller gets its own copy to change. The copy is unpickled from the parse
    (plain dicts, lists and scalars), several times faster than ``copy.deepcopy``, which was a
    tenth of a stack's start."""
    stat = path.stat()
    key = (path.resolve(), stat.st_mtime_ns, stat.st_size)
    if key not in _loaded:
        parsed = yaml.load(path.read_text(), Loader=_Loader)
        _loaded[key] = pickle.dumps(parsed, protocol=pickle.HIGHEST_PROTOCOL)
    document: dict[str, Any] = pickle.loads(_loaded[key])
    return document


@dataclass(frozen=True)
class RuleSpec:
    name: str
    bus: str
    pattern: dict[str, Any]


@dataclass(frozen=True)
class FunctionSpec:
    logical_id: str
    name: str
    code_dir: Path
    handler: str
    timeout: int
    environment: dict[str, str]
    memory_mb: int = 128  # Lambda's default; what GB-seconds are billed on
    rules: list[RuleSpec] = field(default_factory=list)
    schedules: list[str] = field(default_factory=list)
    http_api: bool = False  # API Gateway HTTP API routes reach it


class Template:
    def __init__(
        self,
        path: Path,
        stack_name: str = "tickwork-local",
        region: str = "us-east-1",
        parameters: dict[str, str] | None = None,
    ) -> None:
        self.path = path
        self.root = path.parent
        self.doc = load_yaml(path)
        self.stack_name = stack_name
        self.region = region
        self.parameters = {
            name: str(spec.get("Default", ""))
            for name, spec in self.doc.get("Parameters", {}).items()
        }
        self._lists = {
            name
            for name, spec in self.doc.get("Parameters", {}).items()
            if spec.get("Type") == "CommaDelimitedList"
        }
        unknown = set(parameters or {}) - set(self.parameters)
        if unknown:
            raise KeyError(f"template has no parameters {sorted(unknown)}")
        self.parameters.update({k: str(v) for k, v in (parameters or {}).items()})
        self.conditions: dict[str, bool] = {
            name: self._truth(expression)
            for name, expression in self.doc.get("Conditions", {}).items()
        }
        self.resources: dict[str, dict[str, Any]] = {
            logical: resource
            for logical, resource in self.doc["Resources"].items()
            if self.conditions.get(resource.get("Condition", ""), True)
        }
        self._refs, self._attrs = self._physical_ids()

    # --- physical ids -------------------------------------------------------------------
    def arn(self, service: str, resource: str) -> str:
        return f"arn:aws:{service}:{self.region}:{ACCOUNT}:{resource}"

    def _physical_ids(self) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
        refs: dict[str, str] = {}
        attrs: dict[tuple[str, str], str] = {}
        for logical, resource in self.resources.items():
            kind = resource["Type"]
            props = resource.get("Properties", {})
            default_name = f"{self.stack_name}-{logical}"
            if kind == "AWS::Events::EventBus":
                name = self.resolve(props.get("Name", default_name), refs_only=True)
                refs[logical] = name
                attrs[(logical, "Arn")] = self.arn("events", f"event-bus/{name}")
                attrs[(logical, "Name")] = name
            elif kind == "AWS::DynamoDB::Table":
                name = props.get("TableName", default_name)
                refs[logical] = name
                attrs[(logical, "Arn")] = self.arn("dynamodb", f"table/{name}")
                # the stream's label is the moment it was made (the emulator's, too): any
                attrs[(logical, "StreamArn")] = self.arn("dynamodb", f"table/{name}/stream/*")
            elif kind == "AWS::SQS::Queue":
                refs[logical] = f"queue:{default_name}"  # replaced by the real URL once created
                attrs[(logical, "Arn")] = self.arn("sqs", default_name)
                attrs[(logical, "QueueName")] = default_name
            elif kind == "AWS::Serverless::Function":
                name = self.resolve(props.get("FunctionName", default_name), refs_only=True)
                refs[logical] = name
                attrs[(logical, "Arn")] = self.arn("lambda", f"function:{name}")
                # The role SAM makes for it, <logical>Role (IAM ARNs name no region).
                attrs[(f"{logical}Role", "Arn")] = f"arn:aws:iam::{ACCOUNT}:role/{default_name}Role"
            elif kind == "AWS::Serverless::StateMachine":
                name = self.resolve(props.get("Name", default_name), refs_only=True)
                refs[logical] = self.arn("states", f"stateMachine:{name}")
                attrs[(logical, "Arn")] = refs[logical]
                attrs[(logical, "Name")] = name
            elif kind == "AWS::SecretsManager::Secret":
                # Ref is the ARN, whose last 6 characters AWS picks at creation; the partial
                # ARN without them names the secret just as well and is known up front.
                name = self.resolve(props.get("Name", default_name), refs_only=True)
                refs[logical] = self.arn("secretsmanager", f"secret:{name}")
                attrs[(logical, "Name")] = name
            elif kind == "AWS::SNS::Topic":
                name = self.resolve(props.get("TopicName", default_name), refs_only=True)
                refs[logical] = self.arn("sns", name)
                attrs[(logical, "TopicName")] = name
                attrs[(logical, "TopicArn")] = refs[logical]
            elif kind == "AWS::Logs::LogGroup":
                name = self.resolve(props.get("LogGroupName", default_name), refs_only=True)
                refs[logical] = name
                attrs[(logical, "Arn")] = self.arn("logs", f"log-group:{name}:*")
            else:
                refs[logical] = self.arn("cloudformation", f"{kind}/{default_name}")
        return refs, attrs

    def set_ref(self, logical: str, value: str) -> None:
        self._refs[logical] = value

    # --- intrinsics -------------------------------------------------------------------------
    def _pseudo(self) -> dict[str, str]:
        return {
            "AWS::StackName": self.stack_name,
            "AWS::Region": self.region,
            "AWS::AccountId": ACCOUNT,
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
        }

    def _ref(self, name: str, refs_only: bool) -> Any:
        if name == "AWS::NoValue":
            return NO_VALUE
        pseudo = self._pseudo()
        if name in pseudo:
            return pseudo[name]
        if name in self._lists:  # as CloudFormation: a list, [""] when empty
            return [item.strip() for item in self.parameters[name].split(",")]
        if name in self.parameters:
            return self.parameters[name]
        if refs_only:
            raise KeyError(f"{name} cannot be resolved before physical ids exist")
        return self._refs[name]

    def _truth(self, expression: dict[str, Any]) -> bool:
        """A condition: Fn::Equals, Fn::Not, Fn::And, Fn::Or and Condition references."""
        (function, args), *_ = expression.items()
        if function == "Fn::Equals":
            left, right = (self.resolve(arg, refs_only=True) for arg in args)
            return str(left) == str(right)
        if function == "Fn::Not":
            return not self._truth(args[0])
        if function == "Fn::And":
            return all(self._truth(arg) for arg in args)
        if function == "Fn::Or":
            return any(self._truth(arg) for arg in args)
        if function == "Condition":
            return self._truth(self.doc["Conditions"][args])
        raise ValueError(f"unsupported condition function {function}")

    def resolve(self, value: Any, refs_only: bool = False) -> Any:
        """A value with its intrinsic functions applied; AWS::NoValue leaves lists and maps."""
        if isinstance(value, list):
            items = [self.resolve(v, refs_only) for v in value]
            return [v for v in items if v is not NO_VALUE]
        if not isinstance(value, dict):
            return value
        if set(value) == {"Fn::If"}:
            condition, when_true, when_false = value["Fn::If"]
            chosen = when_true if self.conditions[condition] else when_false
            return self.resolve(chosen, refs_only)
        if set(value) == {"Ref"}:
            return self._ref(value["Ref"], refs_only)
        if set(value) == {"Fn::GetAtt"}:
            logical, attribute = value["Fn::GetAtt"]
            return self._attrs[(logical, attribute)]
        if set(value) == {"Fn::Sub"}:
            return self._sub(value["Fn::Sub"], refs_only)
        if set(value) == {"Fn::Join"}:
            sep, parts = value["Fn::Join"]
            return sep.join(str(p) for p in self.resolve(parts, refs_only))
        if set(value) == {"Fn::Split"}:
            sep, text = value["Fn::Split"]
            return str(self.resolve(text, refs_only)).split(sep)
        if set(value) == {"Fn::Select"}:
            index, items = value["Fn::Select"]
            return self.resolve(items, refs_only)[int(index)]
        resolved = {k: self.resolve(v, refs_only) for k, v in value.items()}
        return {k: v for k, v in resolved.items() if v is not NO_VALUE}

    def _sub(self, spec: Any, refs_only: bool) -> str:
        text, variables = (spec, {}) if isinstance(spec, str) else (spec[0], spec[1])
        out, i = [], 0
        while i < len(text):
            start = text.find("${", i)
            if start < 0:
                out.append(text[i:])
                break
            end = text.index("}", start)
            out.append(text[i:start])
            name = text[start + 2 : end]
            if name in variables:
                out.append(str(self.resolve(variables[name], refs_only)))
            elif "." in name and not name.startswith("AWS::"):
                logical, attribute = name.split(".", 1)
                out.append(self._attrs[(logical, attribute)])
            else:
                out.append(str(self._ref(name, refs_only)))
            i = end + 1
        return "".join(out)

    # --- what the stack builder needs -------------------------------------------------------
    def of_type(self, kind: str) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self.resources.items() if v["Type"] == kind}

    def functions(self) -> list[FunctionSpec]:
        globals_ = self.doc.get("Globals", {}).get("Function", {})
        specs = []
        for logical, resource in self.of_type("AWS::Serverless::Function").items():
            props = resource["Properties"]
            env = {
                **self.resolve(globals_.get("Environment", {}).get("Variables", {})),
                **self.resolve(props.get("Environment", {}).get("Variables", {})),
            }
            rules = [
                RuleSpec(
                    name=f"{self.stack_name}-{logical}-{event_name}",
                    bus=self.resolve(event["Properties"].get("EventBusName", "default")),
                    pattern=self.resolve(event["Properties"]["Pattern"]),
                )
                for event_name, event in props.get("Events", {}).items()
                if event["Type"] == "EventBridgeRule"
            ]
            specs.append(
                FunctionSpec(
                    logical_id=logical,
                    name=self._refs[logical],
                    code_dir=self.root / props["CodeUri"],
                    handler=props.get("Handler", globals_.get("Handler", "app.handler")),
                    timeout=int(props.get("Timeout", globals_.get("Timeout", 3))),
                    memory_mb=int(props.get("MemorySize", globals_.get("MemorySize", 128))),
                    environment={k: str(v) for k, v in env.items()},
                    rules=rules,
                    schedules=[
                        str(self.resolve(event["Properties"]["Schedule"]))
                        for event in props.get("Events", {}).values()
                        if event["Type"] == "Schedule"
                    ],
                    http_api=any(e["Type"] == "HttpApi" for e in props.get("Events", {}).values()),
                )
            )
        return specs

    def create_table(self, dynamodb: Any, logical: str) -> str:
        """Create the table ``logical`` with ``dynamodb`` (a boto3 client) from its own
        properties here — keys, indexes, billing, TTL, stream — and return its name."""
        props = self.resources[logical]["Properties"]
        keys = (
            "AttributeDefinitions",
            "KeySchema",
            "GlobalSecondaryIndexes",
            "LocalSecondaryIndexes",
            "BillingMode",
        )
        name = str(self.resolve({"Ref": logical}))
        stream = props.get("StreamSpecification")
        extra = (
            {"StreamSpecification": {"StreamEnabled": True, **self.resolve(stream)}}
            if stream
            else {}
        )
        dynamodb.create_table(
            TableName=name, **{k: self.resolve(props[k]) for k in keys if k in props}, **extra
        )
        ttl = props.get("TimeToLiveSpecification")
        if ttl:
            dynamodb.update_time_to_live(TableName=name, TimeToLiveSpecification=self.resolve(ttl))
        return name

    def state_machine_definition(
        self, logical: str, overrides: dict[str, Any] | None = None
    ) -> str:
        """The definition file with its DefinitionSubstitutions applied, as SAM does (with
        ``overrides`` in place of those it names)."""
        props = self.resources[logical]["Properties"]
        text: str = (self.root / props["DefinitionUri"]).read_text()
        given = self.resolve(props.get("DefinitionSubstitutions", {}))
        for key, value in {**given, **(overrides or {})}.items():
            text = text.replace("${" + key + "}", str(value))
        json.loads(text)  # a definition that no longer parses is a template bug: fail here
        return text

    def outputs(self) -> dict[str, str]:
        return {
            name: str(self.resolve(spec["Value"]))
            for name, spec in self.doc.get("Outputs", {}).items()
            if self.conditions.get(spec.get("Condition", ""), True)
        }
