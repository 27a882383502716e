"""The targets of AWS action types, named by ARN, checked when an action is created: the shape
of the ARN, its service, partition, region and account, and the size of what is sent."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from tickwork.fulfillment.base import data_problem
from tickwork.fulfillment.endpoints import PARTITION_DOMAINS

__all__ = ["MAX_MESSAGE_BYTES", "Arn", "check_size", "parse_arn"]

MAX_MESSAGE_BYTES = 256 * 1024  # SQS, SNS, EventBridge, Lambda (async) and Step Functions input
_ARN = re.compile(
    r"arn:(?P<partition>aws|aws-cn|aws-us-gov):(?P<service>[a-z0-9-]+):"
    r"(?P<region>[a-z]{2}(?:-gov)?-[a-z]+-\d):(?P<account>\d{12}):(?P<resource>.+)"
)


@dataclass(frozen=True)
class Arn:
    text: str
    partition: str
    service: str
    region: str
    account: str
    resource: str

    @property
    def domain(self) -> str:
        return PARTITION_DOMAINS[self.partition]

    @property
    def name(self) -> str:
        """The resource's own name (after "function:", "stateMachine:" or "event-bus/")."""
        return re.split(r"[:/]", self.resource, maxsplit=1)[-1]


def parse_arn(text: Any, service: str, resource: str, example: str) -> Arn:
    """``text`` as the ARN of a ``service`` resource of the kind ``resource`` names (a regex
    the resource part must match), else a refusal naming the part that is wrong."""
    fix = f"give the target's ARN, e.g. {example}"
    if not isinstance(text, str):
        raise data_problem(f"{text!r} is not an ARN", fix)
    match = _ARN.fullmatch(text.strip())
    if match is None:
        raise data_problem(
            f"{text[:100]!r} is not an ARN of the form arn:<partition>:<service>:<region>:"
            "<12-digit account>:<resource>",
            fix,
        )
    arn = Arn(text.strip(), **match.groupdict())
    if arn.service != service:
        raise data_problem(f"{text[:100]!r} is an ARN of {arn.service}, not {service}", fix)
    if not re.fullmatch(resource, arn.resource):
        raise data_problem(f"{text[:100]!r} does not name a {service} resource it can send to", fix)
    return arn


def check_size(value: Any, what: str) -> None:
    size = len(value.encode() if isinstance(value, str) else json.dumps(value).encode())
    if size > MAX_MESSAGE_BYTES:
        raise data_problem(
            f"the {what} takes {size} bytes, over the service's {MAX_MESSAGE_BYTES}-byte limit",
            "send a smaller one: store a large payload elsewhere (e.g. S3) and send its key",
        )
