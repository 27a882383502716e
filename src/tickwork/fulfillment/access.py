"""Whether the stack may reach an action's target, decided when the action is created.

As EventBridge Scheduler runs each schedule under an execution role of its own, an action may
name a ``roleArn`` that the fulfill step assumes for its target; the stack may assume only
roles under its ``TargetRolePath`` (default ``/tickwork-targets/``), which the template's
policy says too. Without one, the target must be in the stack's own allow-list for its
service (the ``*TargetArns`` parameters), which is all the fulfill function's role may reach.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from tickwork.config import TARGET_PARAMETERS, Settings
from tickwork.domain.errors import ValidationFailed

if TYPE_CHECKING:
    from pydantic import BaseModel

    from tickwork.fulfillment.targets import TargetData

__all__ = ["ROLE_ARN", "check_access", "check_dead_letter"]

ROLE_ARN = re.compile(
    r"arn:(aws|aws-cn|aws-us-gov):iam::(\d{12}):role(/[\w+=,.@/-]*/|/)([\w+=,.@-]{1,64})"
)


def check_access(data: BaseModel, role_arn: str | None, settings: Settings) -> None:
    from tickwork.fulfillment.targets import TargetData

    target = data if isinstance(data, TargetData) else None
    if target is not None:
        _check_home(target, settings)
    if role_arn is not None:
        _check_role(role_arn, settings)
        if target is None:
            raise ValidationFailed.of(
                "roleArn",
                "applies to the AWS action types (SQS_MESSAGE, SNS_MESSAGE, EVENTBRIDGE_EVENT, "
                "LAMBDA_INVOKE, STEP_FUNCTIONS_EXECUTION), not this one",
                "remove roleArn",
            )
        return
    if target is None:
        return
    arn = target.target.text
    allowed = settings.target_arns.get(target.service, ())
    if not any(fnmatchcase(arn, pattern) for pattern in allowed):
        raise ValidationFailed.of(
            f"data.{target.arn_field}",
            f"{arn} is not a target this stack may reach",
            f"add it (or a pattern) to the stack's {TARGET_PARAMETERS[target.service]} "
            "parameter, or "
            f"give a roleArn under {settings.target_role_path} that may reach it",
        )


def check_dead_letter(queue_arn: str | None, settings: Settings) -> None:
    """A dead-letter queue is a target like any other: in the stack's region, on its SQS
    allow-list (the stack's own role sends to it)."""
    if queue_arn is None:
        return
    parts = queue_arn.split(":")
    partition, region, _ = settings.home
    if region and (parts[1], parts[3]) != (partition, region):
        raise ValidationFailed.of(
            "deadLetterArn",
            f"{queue_arn} is in {parts[1]}/{parts[3]}; this stack runs in {partition}/{region}",
            f"give a queue in {region}",
        )
    allowed = settings.target_arns.get("sqs", ())
    if not any(fnmatchcase(queue_arn, pattern) for pattern in allowed):
        raise ValidationFailed.of(
            "deadLetterArn",
            f"{queue_arn} is not a queue this stack may send to",
            f"add it (or a pattern) to the stack's {TARGET_PARAMETERS['sqs']} parameter",
        )


def _check_home(target: TargetData, settings: Settings) -> None:
    """A target in the stack's own partition and region, as EventBridge Scheduler's templated
    targets are: its clients are made there (the account may differ: the target's resource
    policy, or the roleArn's, decides)."""
    arn, (partition, region, _) = target.target, settings.home
    if region and (arn.partition, arn.region) != (partition, region):
        raise ValidationFailed.of(
            f"data.{target.arn_field}",
            f"{arn.text} is in {arn.partition}/{arn.region}; this stack runs in "
            f"{partition}/{region} and reaches targets in its own region only",
            f"give a target in {region}, or deploy a tickwork stack in {arn.region}",
        )


def _check_role(role_arn: str, settings: Settings) -> None:
    match = ROLE_ARN.fullmatch(role_arn) if isinstance(role_arn, str) else None
    if match is None:
        raise ValidationFailed.of(
            "roleArn",
            f"{str(role_arn)[:100]!r} is not an IAM role ARN",
            f"give arn:aws:iam::<account>:role{settings.target_role_path}<name>",
        )
    if not match[3].startswith(settings.target_role_path):
        raise ValidationFailed.of(
            "roleArn",
            f"the role's path {match[3]} is not under {settings.target_role_path}, the only "
            "roles this stack may assume",
            f"create the role under {settings.target_role_path} (aws iam create-role "
            f"--path {settings.target_role_path} ...), trusting the stack's fulfill function",
        )
