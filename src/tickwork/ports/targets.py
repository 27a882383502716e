"""Clients for the AWS action types' targets."""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["TargetClients"]


class TargetClients(Protocol):
    """boto3 clients for an action's target: the function's own credentials, or those of the
    action's ``roleArn``, assumed."""

    def client(self, service: str, role_arn: str | None = None) -> Any: ...
