"""One boto3 client per AWS service for a container, each made at its first use.

A function's cold start then pays only for the clients its first invocation calls, and two
adapters of one service (the actions table and the slots table) share one client.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

__all__ = ["AwsClients", "OnTable"]


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


class OnTable:
    """Base of an adapter over one DynamoDB table: the table given (tests, the CLI), or the
    container's, made at the first call."""

    def __init__(
        self, table_name: str, table: Table | None = None, clients: AwsClients | None = None
    ) -> None:
        self._name = table_name
        self._given = table
        self._clients = clients or AwsClients()

    @property
    def _table(self) -> Table:
        return self._given or self._clients.table(self._name)
