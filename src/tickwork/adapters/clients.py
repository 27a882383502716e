"""One boto3 client per AWS service for a container, each made at its first use.

A function's cold start then pays only for the clients its first invocation calls, and two
adapters of one service (the actions table and the slots table) share one client.
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["AwsClients"]


class AwsClients:
    def __init__(self) -> None:
        self._made: dict[str, Any] = {}
        self._lock = threading.Lock()

    def client(self, service: str) -> Any:
        return self._once(service, lambda boto3: boto3.client(service))

    def table(self, name: str) -> Any:
        """A DynamoDB Table resource (the resource, like a client, is made once)."""
        resource = self._once("dynamodb-resource", lambda boto3: boto3.resource("dynamodb"))
        return resource.Table(name)

    def _once(self, key: str, make: Any) -> Any:
        with self._lock:
            if key not in self._made:
                import boto3

                self._made[key] = make(boto3)
            return self._made[key]
